package org.lakecdc.io.mssqlcdc.fake;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Predicate;
import org.apache.beam.sdk.util.Sleeper;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.io.mssqlcdc.schema.SqlServerType;
import org.lakecdc.io.mssqlcdc.time.CommitTimeConverter;

/**
 * The writer side of the SQL Server CDC simulator: builds a database's CDC history in a directory
 * that {@link FileBackedCdcClient} reads as a {@link org.lakecdc.io.mssqlcdc.client.CdcClient}. The
 * directory mirrors SQL Server's CDC objects, one JSON Lines file per object, described in
 * docs/fake-format.md (format version 1).
 *
 * <p>Typical use:
 *
 * <pre>{@code
 * FakeSqlServer db = FakeSqlServer.open(dir);
 * db.createTable("dbo.orders",
 *     List.of(ColumnDefinition.of("order_id", "int"), ColumnDefinition.of("status", "varchar(20)")),
 *     List.of("order_id"));
 * String ci = db.enableCdc("dbo.orders");                       // "dbo_orders"
 * Lsn l0 = db.transaction(Instant.parse("2026-09-28T13:50:00Z"))
 *     .insert("dbo.orders", Map.of("order_id", 1, "status", "new"))
 *     .commit();                                                 // 0x0000002A000001000001
 * CdcClient client = db.clientFactory().open();
 * }</pre>
 *
 * <p><b>What it reproduces</b> (docs/fake-format.md; the columns as docs/tables.md "Bronze" gives
 * them):
 *
 * <ul>
 *   <li>LSNs: the first is {@code 0x0000002A000001000001}; every commit, idle entry and DDL
 *       statement takes the next, {@code 0x10} higher. Re-opening a directory continues the
 *       sequence.
 *   <li>Change rows: {@code __$seqval} = commit LSN + n, n the 1-based position of the change in
 *       the transaction, an update's after-image (operation 4) reusing its before-image's
 *       (operation 3) n; {@code __$command_id} = n + k, k the instance's index among its table's
 *       instances (0 older, 1 newer). An update is an operation-3 and an operation-4 row with the
 *       same start LSN and seqval; an update of a key column is a delete (1) of the old key and an
 *       insert (2) of the new (an update to a key equal under the collation, {@code 'n'} to {@code
 *       'N'} under {@code _CI_}, is an update of the same row: 3 and 4); an update whose captured
 *       before and after images are equal writes no row in that instance.
 *   <li>Values CDC does not store: computed columns are NULL in every change row; {@code text},
 *       {@code ntext} and {@code image} are NULL in operations 1 and 3; {@code varchar(max)},
 *       {@code nvarchar(max)} and {@code varbinary(max)} are NULL in operation 3 unless the update
 *       set the column. Captured columns follow their source column by {@code column_id}: after a
 *       {@code DROP COLUMN} they read NULL.
 *   <li>{@code cdc.lsn_time_mapping}: one row per transaction that wrote at least one change row (a
 *       transaction that changes only uncaptured columns or untracked tables takes an LSN and no
 *       row), one per idle entry (no change rows, {@code tran_id} 0x00…), none for DDL.
 *   <li>Keys: compared as SQL Server compares them, character columns under their collation ({@link
 *       ColumnDefinition#collate}; default {@code SQL_Latin1_General_CP1_CI_AS}): {@code
 *       _CI}/{@code _CS}, {@code _AI}/{@code _AS}, {@code _BIN}/{@code _BIN2}, trailing spaces
 *       never counting. A row whose key equals an existing row's key under the collation ({@code
 *       'N'} after {@code 'n'}, {@code 'ab '} after {@code 'ab'}) is refused with SQL Server's
 *       error 2627 text; a statement's key finds the row whose key equals it under the collation;
 *       source rows are kept and written in that order, NULL first. Values are stored as given.
 *   <li>Instances: at most two per table; a newer instance's start LSN S is the next LSN to be
 *       issued when it is enabled, and from S every commit is in both. Cleanup moves the instance's
 *       low watermark ({@code cdc.change_tables.start_lsn}) first, then deletes its change rows
 *       below it, then the mapping rows below the lowest low watermark of every instance of the
 *       database.
 * </ul>
 *
 * <p><b>Files and concurrency.</b> Every file is written whole to a temporary file and renamed over
 * the old one ({@link FileReplacer}), retried a bounded number of times when refused. A transaction
 * writes its change tables and source tables first and {@code cdc.lsn_time_mapping} last: the
 * mapping row is the commit point, and a reader that joins the mapping never sees half a
 * transaction. Outside {@link #bulk()} every operation is written at once; inside, state is kept in
 * memory and each changed file is written once when the bulk closes. A source table is never held
 * whole (unless its file is small, {@link SourceRows}): its rows are read from its file by key,
 * only the rows changed since it was written are kept in memory, and {@link #loadRowsInKeyOrder}
 * loads a table a row at a time. One writer per directory; not thread-safe. Readers may run in
 * other threads and processes.
 *
 * <p><b>Errors.</b> Invalid requests (unknown tables or columns, duplicate keys, values that do not
 * fit a type, a third capture instance) raise {@link IllegalArgumentException} before anything
 * changes; an operation that does not fit the table's state raises {@link IllegalStateException};
 * I/O failures raise {@link UncheckedIOException}.
 */
public final class FakeSqlServer {
  private static final String FIRST_LSN_TEXT = "0x0000002A000001000001";

  /** The first LSN a new fake issues: {@code 0x0000002A000001000001}. */
  public static final Lsn FIRST_LSN = Lsn.parse(FIRST_LSN_TEXT);

  /** The distance between two issued LSNs: {@code 0x10}. */
  public static final BigInteger LSN_STEP = BigInteger.valueOf(0x10);

  /** SQL Server's limit of capture instances per source table. */
  public static final int MAX_CAPTURE_INSTANCES_PER_TABLE = 2;

  private static final Set<String> RESERVED_SCHEMAS = Set.of("cdc", "sys");

  private final Path directory;
  private final AtomicFiles files;
  private final Catalog catalog;

  /** The machine's clock: the time of what is written without a time, and the readers' pace. */
  private final Clock machineClock;

  private CommitTimeConverter clock;

  /**
   * Source rows by lower-case qualified table name, opened on first use: each table's file and the
   * rows changed since it was written ({@link SourceRows}).
   */
  private final Map<String, SourceRows> rows = new HashMap<>();

  private boolean serverDirty;
  private boolean tablesDirty;
  private boolean instancesDirty;
  private final Set<String> dirtySourceTables = new LinkedHashSet<>();
  private final Map<String, LogFile> logs = new LinkedHashMap<>();
  private int bulkDepth;

  private FakeSqlServer(
      Path directory, FileReplacer replacer, Catalog catalog, Clock machineClock) {
    this.directory = directory;
    this.files = new AtomicFiles(replacer, Sleeper.DEFAULT);
    this.catalog = catalog;
    this.machineClock = machineClock;
    this.clock = CommitTimeConverter.named(catalog.server.timeZone);
  }

  /**
   * Opens the fake server in {@code directory}, creating the directory and an empty server (zone
   * UTC, next LSN {@code 0x0000002A000001000001}) when it holds none. Re-opening continues the LSN
   * sequence where the last writer left it.
   *
   * @throws UncheckedIOException when the directory cannot be created or written
   * @param directory the server's directory
   * @return the writer
   * @throws org.lakecdc.io.mssqlcdc.client.CdcException when its files are malformed or of a newer
   *     format version
   */
  public static FakeSqlServer open(Path directory) {
    return open(directory, FileReplacer.atomicMove(), Clock.systemUTC());
  }

  /**
   * Like {@link #open(Path)}, on the machine's clock {@code clock} instead of the system clock: a
   * {@link #transaction()} commits at its time, so do an {@link #enableCdc} and a {@link #ddl}
   * given no time when nothing was written before, and the readers of {@link #clientFactory()} tell
   * the simulated server's time by it. Tests give a clock they move by hand, so that a commit a
   * second later needs no sleep.
   *
   * @param directory the server's directory
   * @param clock the machine's clock; {@link Clock#systemUTC()} by default
   * @return the writer
   */
  public static FakeSqlServer open(Path directory, Clock clock) {
    return open(directory, FileReplacer.atomicMove(), clock);
  }

  /**
   * Like {@link #open(Path)}, with the operation that swaps a finished temporary file in (scenario
   * C272 injects one that refuses).
   *
   * @param directory the server's directory
   * @param replacer swaps each finished temporary file in; {@link FileReplacer#atomicMove()} by
   *     default
   * @return the writer
   */
  public static FakeSqlServer open(Path directory, FileReplacer replacer) {
    return open(directory, replacer, Clock.systemUTC());
  }

  /**
   * Like {@link #open(Path, FileReplacer)}, on the machine's clock {@code clock} (see {@link
   * #open(Path, Clock)}).
   *
   * @param directory the server's directory
   * @param replacer swaps each finished temporary file in
   * @param clock the machine's clock
   * @return the writer
   */
  public static FakeSqlServer open(Path directory, FileReplacer replacer, Clock clock) {
    Objects.requireNonNull(directory, "directory");
    Objects.requireNonNull(replacer, "replacer");
    Objects.requireNonNull(clock, "clock");
    try {
      Files.createDirectories(directory);
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot create " + directory, e);
    }
    if (!Catalog.exists(directory)) {
      FakeSqlServer db = new FakeSqlServer(directory, replacer, new Catalog(), clock);
      db.serverDirty = true;
      db.flush();
      return db;
    }
    FakeSqlServer db = new FakeSqlServer(directory, replacer, Catalog.load(directory), clock);
    db.continueLsnSequence();
    return db;
  }

  /** Makes sure the next LSN is past every LSN already in the mapping and the DDL history. */
  private void continueLsnSequence() {
    Lsn last = null;
    for (JsonNode n : FakeFormat.readAll(directory.resolve(FakeFormat.LSN_TIME_MAPPING))) {
      Lsn l = FakeFormat.lsn(n, "start_lsn", FakeFormat.LSN_TIME_MAPPING);
      last = last == null ? l : Lsn.max(last, l);
    }
    for (JsonNode n : FakeFormat.readAll(directory.resolve(FakeFormat.DDL_HISTORY))) {
      Lsn l = FakeFormat.lsn(n, "ddl_lsn", FakeFormat.DDL_HISTORY);
      last = last == null ? l : Lsn.max(last, l);
    }
    requireNoCommitInProgress();
    if (last != null && !catalog.server.nextLsn.isAfter(last)) {
      catalog.server.nextLsn = Lsn.fromBigInteger(last.toBigInteger().add(LSN_STEP));
      serverDirty = true;
      flushUnlessBulk();
    }
  }

  /**
   * Refuses a directory whose change tables hold rows after the mapping's last commit: with one
   * writer per directory, such rows are a commit whose writer stopped before its mapping row (the
   * commit point). Writing on would give later commits higher LSNs and leave those rows below the
   * mapping's last LSN without a mapping row, which no SQL Server holds.
   */
  private void requireNoCommitInProgress() {
    Lsn lastMapped = null;
    for (JsonNode n : FakeFormat.readAll(directory.resolve(FakeFormat.LSN_TIME_MAPPING))) {
      Lsn l = FakeFormat.lsn(n, "start_lsn", FakeFormat.LSN_TIME_MAPPING);
      lastMapped = lastMapped == null ? l : Lsn.max(lastMapped, l);
    }
    for (String instance : catalog.instances.keySet()) {
      Path file = directory.resolve(FakeFormat.changeTableFile(instance));
      try (FakeFormat.JsonLines lines = FakeFormat.JsonLines.open(file)) {
        for (JsonNode n = lines.next(); n != null; n = lines.next()) {
          Lsn start = FakeFormat.lsn(n, FakeFormat.START_LSN, lines.where());
          if (lastMapped == null || start.isAfter(lastMapped)) {
            throw new org.lakecdc.io.mssqlcdc.client.CdcException(
                directory.resolve(lines.where())
                    + ": change row at __$start_lsn "
                    + start
                    + " after the last commit of "
                    + FakeFormat.LSN_TIME_MAPPING
                    + " ("
                    + (lastMapped == null ? "none" : lastMapped)
                    + "): a writer stopped part-way through a commit, and writing on would leave"
                    + " the row without its mapping row; restore the directory from a complete"
                    + " copy, or delete it and rebuild it");
          }
        }
      }
    }
  }

  /**
   * Writes the files of {@code complete}, a whole copy of a fake server's directory that a writer
   * changed, over {@code directory}, in the order of the writing rules ({@code server.json}, {@code
   * sys.*}, the capture instances, the change tables, the source tables, {@code cdc.ddl_history},
   * any other file, and {@code cdc.lsn_time_mapping.jsonl} last), each file whole and renamed in
   * atomically. Readers of {@code directory} see the new commits only once the mapping is in, as
   * with any commit. Idempotent: a copy interrupted by a crash is finished by running it again with
   * the same {@code complete}. Files and subdirectories whose names start with {@code .} are not
   * copied, except that a source table's current key index ({@code .<schema>.<table>.jsonl.keys})
   * is given to its copy, stamped with the copy's version; files of {@code directory} absent from
   * {@code complete} are left as they are.
   *
   * @param complete the changed copy (not modified)
   * @param directory the fake server's directory to bring to the copy's state
   * @throws UncheckedIOException when a file cannot be read or written
   */
  public static void copyOver(Path complete, Path directory) {
    copyOver(complete, directory, FileReplacer.atomicMove());
  }

  /**
   * Like {@link #copyOver(Path, Path)}, with the operation that swaps each finished file in (a test
   * injects one that fails, as a crash would stop the copy).
   *
   * @param complete the changed copy (not modified)
   * @param directory the fake server's directory to bring to the copy's state
   * @param replacer swaps each finished temporary file in
   * @throws UncheckedIOException when a file cannot be read or written
   */
  public static void copyOver(Path complete, Path directory, FileReplacer replacer) {
    List<Path> sources;
    try (var listing = Files.list(complete)) {
      sources =
          listing
              .filter(Files::isRegularFile)
              .filter(f -> !f.getFileName().toString().startsWith("."))
              .sorted(
                  java.util.Comparator.comparingInt(
                          (Path f) -> copyRank(f.getFileName().toString()))
                      .thenComparing(f -> f.getFileName().toString()))
              .toList();
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot list " + complete + ": " + e.getMessage(), e);
    }
    AtomicFiles files = new AtomicFiles(replacer, Sleeper.DEFAULT);
    for (Path source : sources) {
      Path target = directory.resolve(source.getFileName().toString());
      files.write(
          target,
          out -> {
            try (java.io.Reader in =
                Files.newBufferedReader(source, java.nio.charset.StandardCharsets.UTF_8)) {
              in.transferTo(out);
            }
          });
      if (copyRank(source.getFileName().toString()) == SOURCE_TABLE_RANK) {
        SourceTableIndex.Sidecar.copy(source, target);
      }
    }
  }

  /** {@link #copyRank} of a source table's file. */
  private static final int SOURCE_TABLE_RANK = 4;

  /** The position of a file in {@link #copyOver}'s order. */
  private static int copyRank(String name) {
    if (name.equals(FakeFormat.SERVER)) {
      return 0;
    } else if (name.equals(FakeFormat.SYS_TABLES) || name.equals(FakeFormat.SYS_COLUMNS)) {
      return 1;
    } else if (name.equals(FakeFormat.CHANGE_TABLES)
        || name.equals(FakeFormat.CAPTURED_COLUMNS)
        || name.equals(FakeFormat.INDEX_COLUMNS)) {
      return 2;
    } else if (name.equals(FakeFormat.DDL_HISTORY)) {
      return 5;
    } else if (name.equals(FakeFormat.LSN_TIME_MAPPING)) {
      return 7;
    } else if (name.startsWith("cdc.") && name.endsWith("_CT.jsonl")) {
      return 3;
    } else if (name.endsWith(".jsonl")) {
      return SOURCE_TABLE_RANK;
    }
    return 6;
  }

  /**
   * The directory this server lives in.
   *
   * @return the directory
   */
  public Path directory() {
    return directory;
  }

  /**
   * A serializable factory of readers of this directory, on this writer's machine clock (see {@link
   * FakeCdcClientFactory#FakeCdcClientFactory(String, java.time.Clock)}).
   *
   * @return the factory
   */
  public FakeCdcClientFactory clientFactory() {
    return FakeCdcClientFactory.of(directory, machineClock);
  }

  /**
   * Opens a reader of this directory; the caller closes it.
   *
   * @return the reader
   */
  public FileBackedCdcClient openClient() {
    return new FileBackedCdcClient(directory);
  }

  // ---- server ---------------------------------------------------------------------------------

  /**
   * Sets the server's time zone ({@code CURRENT_TIMEZONE_ID()}): later commit times are stored as
   * local times of this zone. Times already stored stay as they were written, as they would on a
   * server whose zone changed.
   *
   * @param zone an IANA zone id, e.g. {@code America/Sao_Paulo}
   * @return this server
   */
  public FakeSqlServer timeZone(ZoneId zone) {
    Objects.requireNonNull(zone, "zone");
    catalog.server.timeZone = zone;
    clock = CommitTimeConverter.named(zone);
    serverDirty = true;
    flushUnlessBulk();
    return this;
  }

  /**
   * The server's time zone.
   *
   * @return the zone; UTC unless set
   */
  public ZoneId timeZone() {
    return catalog.server.timeZone;
  }

  /**
   * The LSN the next commit, idle entry or DDL statement will take.
   *
   * @return the next LSN
   */
  public Lsn nextLsn() {
    return catalog.server.nextLsn;
  }

  // ---- tables ---------------------------------------------------------------------------------

  /**
   * {@code CREATE TABLE} with a primary key: an empty source table.
   *
   * @param table {@code schema.table} or {@code table} (schema {@code dbo}); names are matched
   *     ignoring case afterwards
   * @param columns the columns in order ({@code column_id} 1, 2, …); character columns compare
   *     under their collation ({@link ColumnDefinition#collate}, {@code
   *     SQL_Latin1_General_CP1_CI_AS} unless declared)
   * @param keyColumns the primary key columns, in key order; not computed
   * @return this server
   * @throws IllegalArgumentException when the table exists, a name is invalid or repeated, a type
   *     is unknown to the fake, or a key column is missing or computed
   */
  public FakeSqlServer createTable(
      String table, List<ColumnDefinition> columns, List<String> keyColumns) {
    String[] name = splitTableName(table);
    String schema = checkIdentifier(name[0], "schema");
    String tableName = checkIdentifier(name[1], "table");
    if (RESERVED_SCHEMAS.contains(schema.toLowerCase(Locale.ROOT))) {
      throw new IllegalArgumentException("Source tables cannot live in schema '" + schema + "'");
    }
    if (catalog.tables.containsKey(Catalog.key(schema, tableName))) {
      throw new IllegalArgumentException(
          "There is already an object named '" + schema + "." + tableName + "' in the database");
    }
    if (columns.isEmpty()) {
      throw new IllegalArgumentException("A table needs at least one column");
    }
    if (keyColumns.isEmpty()) {
      throw new IllegalArgumentException(
          "The fake models keyed tables only: give " + schema + "." + tableName + " key columns");
    }
    Catalog.Table t = new Catalog.Table(schema, tableName);
    Set<String> seen = new HashSet<>();
    for (ColumnDefinition c : columns) {
      checkIdentifier(c.name(), "column");
      SqlValues.family(c.type());
      if (!seen.add(c.name().toLowerCase(Locale.ROOT))) {
        throw new IllegalArgumentException(
            "Column names in each table must be unique. Column name '"
                + c.name()
                + "' in table '"
                + t.qualified()
                + "' is specified more than once");
      }
    }
    Map<String, Integer> keyOrdinals = new HashMap<>();
    for (String k : keyColumns) {
      ColumnDefinition c =
          columns.stream()
              .filter(d -> d.name().equalsIgnoreCase(k))
              .findFirst()
              .orElseThrow(
                  () ->
                      new IllegalArgumentException(
                          "Key column '" + k + "' is not a column of " + t.qualified()));
      if (c.computed()) {
        throw new IllegalArgumentException(
            "Key column '" + k + "' of " + t.qualified() + " is computed");
      }
      if (keyOrdinals.putIfAbsent(c.name().toLowerCase(Locale.ROOT), keyOrdinals.size() + 1)
          != null) {
        throw new IllegalArgumentException("Key column '" + k + "' is listed twice");
      }
    }
    for (ColumnDefinition c : columns) {
      t.maxColumnIdUsed++;
      t.columns.add(
          new Catalog.Column(
              c.name(),
              t.maxColumnIdUsed,
              c.type(),
              c.computed(),
              keyOrdinals.getOrDefault(c.name().toLowerCase(Locale.ROOT), 0),
              Collation.of(c.name(), c.type(), c.collation())));
    }
    catalog.tables.put(Catalog.key(schema, tableName), t);
    rows.put(
        Catalog.key(schema, tableName),
        SourceRows.created(directory.resolve(FakeFormat.sourceTableFile(schema, tableName)), t));
    tablesDirty = true;
    dirtySourceTables.add(Catalog.key(schema, tableName));
    flushUnlessBulk();
    return this;
  }

  /**
   * Loads rows into a table that CDC does not track yet (rows that exist before capture starts): no
   * change rows, no mapping rows, no LSN.
   *
   * @param table the table, as for {@link #createTable}
   * @param newRows rows by column name (ignoring case); absent columns are NULL; values as {@link
   *     Transaction#insert} takes them
   * @return this server
   * @throws IllegalStateException when the table already has a capture instance (write through
   *     {@link #transaction} instead, so CDC captures it)
   * @throws IllegalArgumentException for an unknown table or column, a computed column, a value
   *     that does not fit its type, or a duplicate key (nothing is loaded)
   */
  public FakeSqlServer loadRows(String table, List<? extends Map<String, ?>> newRows) {
    Catalog.Table t = table(table);
    requireUntracked(t);
    SourceRows current = rowsOf(t);
    TreeMap<KeyTuple, Map<String, Object>> loaded = new TreeMap<>();
    for (Map<String, ?> row : newRows) {
      Map<String, Object> full = fullRow(t, row);
      KeyTuple key = keyOf(t, full);
      if (current.get(key) != null || loaded.put(key, full) != null) {
        throw duplicateKey(t, key);
      }
    }
    loaded.forEach(current::put);
    dirtySourceTables.add(Catalog.key(t.schema, t.name));
    flushUnlessBulk();
    return this;
  }

  /** Refuses a load into a table that a capture instance tracks (CDC would miss the rows). */
  private void requireUntracked(Catalog.Table t) {
    List<Catalog.Instance> instances = catalog.instancesOf(t);
    if (!instances.isEmpty()) {
      throw new IllegalStateException(
          t.qualified()
              + " is tracked by capture instance '"
              + instances.get(0).name
              + "': write through transaction(...) so CDC captures the rows");
    }
  }

  /**
   * Loads rows into an empty table that CDC does not track yet, as {@link #loadRows(String, List)}
   * does, streaming: each row is written to the table's file as it comes, so a table of any size
   * loads in the memory of a row (the file is written at once, in a {@link #bulk()} too: CDC does
   * not track the table, so no reader orders it against a commit).
   *
   * @param table the table, as for {@link #createTable}
   * @param newRows rows by column name (ignoring case), in strictly increasing key order (as the
   *     table's key compares them); absent columns are NULL; values as {@link Transaction#insert}
   *     takes them
   * @return the number of rows loaded
   * @throws IllegalStateException when the table already has a capture instance or rows
   * @throws IllegalArgumentException for an unknown table or column, a computed column, a value
   *     that does not fit its type, a duplicate key or a row whose key is not after the one before
   *     it (nothing is loaded)
   */
  public long loadRowsInKeyOrder(String table, Iterable<? extends Map<String, ?>> newRows) {
    Catalog.Table t = table(table);
    requireUntracked(t);
    SourceRows current = rowsOf(t);
    if (!current.isEmpty()) {
      throw new IllegalStateException(
          t.qualified() + " has rows already: load rows in key order into an empty table only");
    }
    Iterator<? extends Map<String, ?>> given = newRows.iterator();
    long[] count = {0};
    Iterator<Map<String, Object>> full =
        new Iterator<>() {
          @Override
          public boolean hasNext() {
            return given.hasNext();
          }

          @Override
          public Map<String, Object> next() {
            count[0]++;
            return fullRow(t, given.next());
          }
        };
    SourceRows.Written[] written = {null};
    files.write(
        directory.resolve(FakeFormat.sourceTableFile(t.schema, t.name)),
        out -> written[0] = current.writeTo(out, full, r -> keyOf(t, r), k -> duplicateKey(t, k)));
    current.written(written[0]);
    dirtySourceTables.remove(Catalog.key(t.schema, t.name));
    return count[0];
  }

  /**
   * The row of {@code key} in the source table now, by column name, as {@link #rows} gives rows.
   *
   * @param table {@code schema.table} or {@code table} (schema {@code dbo}), ignoring case
   * @param key the key values in key column order
   * @return the row, or null when the table has no row with that key
   * @throws IllegalArgumentException for an unknown table or a key of the wrong size or types
   */
  public Map<String, Object> row(String table, List<?> key) {
    Catalog.Table t = table(table);
    Map<String, Object> row = rowsOf(t).get(keyTuple(t, new ArrayList<>(key)));
    return row == null ? null : readerRow(t, row);
  }

  /**
   * Visits the source table's rows in key order from {@code fromKey} on (inclusive), each as {@link
   * #rows} gives it, while {@code visitor} returns true; reads the table's file a row at a time.
   *
   * @param table {@code schema.table} or {@code table} (schema {@code dbo}), ignoring case
   * @param fromKey the key values to start at, in key column order; null: from the first row
   * @param visitor takes each row; false stops the visit
   * @throws IllegalArgumentException for an unknown table or a key of the wrong size or types
   */
  public void scanRows(
      String table, List<?> fromKey, java.util.function.Predicate<Map<String, Object>> visitor) {
    Catalog.Table t = table(table);
    KeyTuple lower = fromKey == null ? null : keyTuple(t, new ArrayList<>(fromKey));
    rowsOf(t).scan(lower, (key, row) -> visitor.test(readerRow(t, row)));
  }

  /** The rows held in memory for every table opened (for tests: the writer's bound). */
  int rowsHeld() {
    int held = 0;
    for (SourceRows r : rows.values()) {
      held += r.rowsHeld();
    }
    return held;
  }

  /**
   * Whether the database has the table.
   *
   * @param table {@code schema.table} or {@code table} (schema {@code dbo}), ignoring case
   * @return true when it exists
   */
  public boolean hasTable(String table) {
    try {
      table(table);
      return true;
    } catch (IllegalArgumentException e) {
      return false;
    }
  }

  /**
   * The source table's current rows in key order (NULL keys first, character keys under their
   * columns' collations), by column name, as a reader returns values ({@link
   * org.lakecdc.io.mssqlcdc.client.ChangeRow} types). For tests: "the table now".
   *
   * @param table {@code schema.table} or {@code table} (schema {@code dbo}), ignoring case
   * @return the rows, each a map of every live column in column order
   * @throws IllegalArgumentException for an unknown table
   */
  public List<Map<String, Object>> rows(String table) {
    Catalog.Table t = table(table);
    List<Map<String, Object>> out = new ArrayList<>();
    rowsOf(t).scan(null, (key, row) -> out.add(readerRow(t, row)));
    return out;
  }

  /** A stored row as the reader returns it: every live column in column order, unmodifiable. */
  private static Map<String, Object> readerRow(Catalog.Table t, Map<String, Object> row) {
    Map<String, Object> copy = new LinkedHashMap<>();
    for (Catalog.Column c : t.columns) {
      copy.put(c.name(), SqlValues.readerValue(row.get(c.name())));
    }
    return Collections.unmodifiableMap(copy);
  }

  // ---- capture instances ----------------------------------------------------------------------

  /**
   * {@code sys.sp_cdc_enable_table} with the defaults: capture instance {@code <schema>_<table>},
   * every column captured.
   *
   * @param table {@code schema.table} or {@code table} (schema {@code dbo}), ignoring case
   * @return the capture instance name
   * @throws IllegalArgumentException as {@link #enableCdc(String, CaptureOptions)}
   */
  public String enableCdc(String table) {
    return enableCdc(table, CaptureOptions.defaults());
  }

  /**
   * {@code sys.sp_cdc_enable_table}: a capture instance on a table. Its start LSN S ({@code
   * cdc.change_tables.start_lsn}) is the next LSN to be issued; from S every commit of the table is
   * in this instance (and in an older one, if the table has one). The second instance of a table is
   * how a column added later reaches CDC.
   *
   * @param table {@code schema.table} or {@code table} (schema {@code dbo}), ignoring case
   * @param options name, captured columns and creation time
   * @return the capture instance name
   * @throws IllegalArgumentException "A table can have at most two capture instances" for a third;
   *     for a name already in use (ignoring case), an invalid name, an unknown column, or a column
   *     list without the key columns
   */
  public String enableCdc(String table, CaptureOptions options) {
    Catalog.Table t = table(table);
    if (catalog.instancesOf(t).size() >= MAX_CAPTURE_INSTANCES_PER_TABLE) {
      throw new IllegalArgumentException("A table can have at most two capture instances");
    }
    String name = options.name().orElse(t.schema + "_" + t.name);
    checkIdentifier(name, "capture instance");
    if (name.length() > 100) {
      throw new IllegalArgumentException("A capture instance name has at most 100 characters");
    }
    for (String existing : catalog.instances.keySet()) {
      if (existing.equalsIgnoreCase(name)) {
        throw new IllegalArgumentException(
            "Capture instance '" + existing + "' already exists; choose another name");
      }
    }
    List<Catalog.Column> captured = new ArrayList<>();
    if (options.capturedColumns().isPresent()) {
      Set<Integer> ids = new HashSet<>();
      for (String columnName : options.capturedColumns().get()) {
        Catalog.Column c = t.column(columnName);
        if (c == null) {
          throw new IllegalArgumentException(
              "Column '" + columnName + "' is not a column of " + t.qualified());
        }
        ids.add(c.columnId());
      }
      for (Catalog.Column key : t.keyColumns()) {
        if (!ids.contains(key.columnId())) {
          throw new IllegalArgumentException(
              "The captured column list must include the key column '" + key.name() + "'");
        }
      }
      for (Catalog.Column c : t.columns) {
        if (ids.contains(c.columnId())) {
          captured.add(c);
        }
      }
    } else {
      captured.addAll(t.columns);
    }
    Catalog.Instance instance = new Catalog.Instance(name, t.schema, t.name);
    instance.startLsn = catalog.server.nextLsn;
    instance.createDate = createDate(t, options);
    instance.supportsNetChanges = true;
    instance.indexName = "PK_" + t.name;
    int ordinal = 0;
    for (Catalog.Column c : captured) {
      instance.columns.add(
          new Catalog.Captured(c.name(), c.columnId(), ++ordinal, c.type(), c.computed()));
    }
    int indexOrdinal = 0;
    for (Catalog.Column key : t.keyColumns()) {
      instance.indexColumns.add(
          new Catalog.IndexColumn(key.name(), ++indexOrdinal, key.columnId()));
    }
    catalog.instances.put(name, instance);
    instancesDirty = true;
    log(FakeFormat.changeTableFile(name)).truncate();
    flushUnlessBulk();
    return name;
  }

  /**
   * The capture instances of the database ({@code cdc.change_tables}), in creation order.
   *
   * @return the instance names; empty before the first {@link #enableCdc}
   */
  public List<String> captureInstances() {
    return List.copyOf(catalog.instances.keySet());
  }

  private LocalDateTime createDate(Catalog.Table t, CaptureOptions options) {
    if (options.createTime().isPresent()) {
      advanceClock(options.createTime().get());
      return clock.toServerLocal(options.createTime().get());
    }
    LocalDateTime now = clock.toServerLocal(now());
    for (Catalog.Instance older : catalog.instancesOf(t)) {
      if (older.createDate != null && older.createDate.isAfter(now)) {
        now = older.createDate;
      }
    }
    return now;
  }

  /**
   * {@code sys.sp_cdc_disable_table}: drops a capture instance with its change table and DDL
   * history. Mapping rows stay until a cleanup.
   *
   * @param captureInstance the instance, exact name first, then ignoring case
   * @throws IllegalArgumentException when no such instance exists
   */
  public void disableCdc(String captureInstance) {
    Catalog.Instance instance = instance(captureInstance);
    catalog.instances.remove(instance.name);
    instancesDirty = true;
    log(FakeFormat.changeTableFile(instance.name)).truncate();
    log(FakeFormat.DDL_HISTORY)
        .remove(n -> instance.name.equals(n.path("capture_instance").asText()));
    flushUnlessBulk();
  }

  /**
   * {@code sys.sp_cdc_cleanup_change_table}: moves the instance's low watermark ({@code
   * fn_cdc_get_min_lsn}, {@code cdc.change_tables.start_lsn}) to {@code lowWatermark}, then deletes
   * its change rows below it, then deletes the {@code cdc.lsn_time_mapping} rows below the lowest
   * low watermark of every instance of the database (scenario C276: another instance keeps them).
   *
   * @param captureInstance the instance, exact name first, then ignoring case
   * @param lowWatermark the new low watermark; not below the current one
   * @throws IllegalArgumentException for an unknown instance, or a low watermark below the current
   *     one
   */
  public void cleanup(String captureInstance, Lsn lowWatermark) {
    Objects.requireNonNull(lowWatermark, "lowWatermark");
    Catalog.Instance instance = instance(captureInstance);
    if (lowWatermark.isBefore(instance.startLsn)) {
      throw new IllegalArgumentException(
          "Low watermark "
              + lowWatermark
              + " is below the current low watermark "
              + instance.startLsn
              + " of capture instance '"
              + instance.name
              + "'");
    }
    instance.startLsn = lowWatermark;
    instancesDirty = true;
    log(FakeFormat.changeTableFile(instance.name))
        .remove(n -> Lsn.parse(n.path(FakeFormat.START_LSN).asText()).isBefore(lowWatermark));
    Lsn lowest = lowWatermark;
    for (Catalog.Instance i : catalog.instances.values()) {
      lowest = Lsn.min(lowest, i.startLsn);
    }
    Lsn keepFrom = lowest;
    log(FakeFormat.LSN_TIME_MAPPING)
        .remove(n -> Lsn.parse(n.path("start_lsn").asText()).isBefore(keepFrom));
    flushUnlessBulk();
  }

  // ---- history --------------------------------------------------------------------------------

  /**
   * Starts a transaction committed at {@code commitTime}. Add statements, then {@link
   * Transaction#commit()}.
   *
   * @param commitTime the commit time, UTC; stored as {@code tran_end_time} on the server's clock,
   *     milliseconds kept
   * @return the transaction to add statements to
   */
  public Transaction transaction(Instant commitTime) {
    return new Transaction(Objects.requireNonNull(commitTime, "commitTime"));
  }

  /**
   * Starts a transaction committed at the machine clock's current time (milliseconds kept), as an
   * application's transaction on a server commits "now": {@link Clock#systemUTC()}, or the clock
   * given to {@link #open(Path, Clock)}.
   *
   * @return the transaction to add statements to
   */
  public Transaction transaction() {
    return transaction(machineClock.instant().truncatedTo(ChronoUnit.MILLIS));
  }

  /**
   * An idle ("dummy") entry, as capture writes on a quiet database: a {@code cdc.lsn_time_mapping}
   * row with {@code tran_id} 0x00… and no change rows.
   *
   * @param at the entry's time, UTC
   * @return its LSN
   */
  public Lsn idle(Instant at) {
    Objects.requireNonNull(at, "at");
    Lsn lsn = takeLsn();
    LocalDateTime local = clock.toServerLocal(at);
    appendMapping(new Catalog.MappingRow(lsn, local, local, FakeFormat.ZERO_TRAN_ID));
    advanceClock(at);
    flushUnlessBulk();
    return lsn;
  }

  /**
   * A DDL statement on a table at the server's current time; see {@link #ddl(String, String,
   * Instant)}.
   *
   * @param table {@code schema.table} or {@code table} (schema {@code dbo}), ignoring case
   * @param command the DDL text, e.g. {@code ALTER TABLE dbo.orders ADD note varchar(100)}
   * @return the DDL's LSN
   */
  public Lsn ddl(String table, String command) {
    return ddl(table, command, null);
  }

  /**
   * A DDL statement on a table: takes the next LSN but writes no {@code cdc.lsn_time_mapping} row,
   * and appends {@code (ddl_lsn, ddl_command, ddl_time)} to {@code cdc.ddl_history} of every
   * capture instance of the table. The command's effect on the columns is recognised from its text:
   *
   * <ul>
   *   <li>{@code ADD <column> <type> [COLLATE <name>]}: a new source column with a new {@code
   *       column_id}; no instance captures it (a newer instance can). A character column without
   *       {@code COLLATE} gets {@code SQL_Latin1_General_CP1_CI_AS}.
   *   <li>{@code DROP COLUMN <column>}: the column leaves the source table and its stored rows; it
   *       stays captured and reads NULL from now on.
   *   <li>{@code ALTER COLUMN <column> <type> [COLLATE <name>]}: the column's type changes in the
   *       source table and in every instance capturing it ({@code required_column_update} = 1);
   *       stored rows are converted. As on SQL Server, a character type without {@code COLLATE}
   *       takes the default collation, not the column's old one.
   * </ul>
   *
   * Other commands are only recorded.
   *
   * @param table {@code schema.table} or {@code table} (schema {@code dbo}), ignoring case
   * @param command the DDL text
   * @param at the statement's time (UTC), or null for the server's current time
   * @return the DDL's LSN
   * @throws IllegalArgumentException for an unknown table, adding an existing column, dropping or
   *     altering a missing or key column, a type the fake does not know, a {@code COLLATE} the fake
   *     does not understand or on a type without collation, or stored values that do not convert
   */
  public Lsn ddl(String table, String command, Instant at) {
    Catalog.Table t = table(table);
    Objects.requireNonNull(command, "command");
    DdlCommand effect = DdlCommand.parse(command);
    Catalog.Column column = effect.column() == null ? null : t.column(effect.column());
    // The rows as they are before the statement (their columns change with it).
    SourceRows tableRows = rowsOf(t);
    switch (effect.kind()) {
      case ADD_COLUMN:
        if (column != null) {
          throw new IllegalArgumentException(
              "Column names in each table must be unique. Column name '"
                  + effect.column()
                  + "' in table '"
                  + t.qualified()
                  + "' is specified more than once");
        }
        checkIdentifier(effect.column(), "column");
        SqlValues.family(effect.type());
        Collation.of(effect.column(), effect.type(), effect.collation());
        break;
      case DROP_COLUMN:
      case ALTER_COLUMN:
        if (column == null) {
          throw new IllegalArgumentException(
              "'" + effect.column() + "' is not a column of " + t.qualified());
        }
        if (column.keyOrdinal() > 0) {
          throw new IllegalArgumentException(
              "Key column '" + column.name() + "' cannot be dropped or altered");
        }
        if (t.columns.size() == 1 && effect.kind() == DdlCommand.Kind.DROP_COLUMN) {
          throw new IllegalArgumentException("Cannot drop the last column of " + t.qualified());
        }
        if (effect.kind() == DdlCommand.Kind.ALTER_COLUMN) {
          SqlValues.family(effect.type());
          Collation.of(column.name(), effect.type(), effect.collation());
          convertColumn(t, column, effect.type());
        }
        break;
      default:
        break;
    }
    Instant when = at == null ? now() : at;
    Lsn lsn = takeLsn();
    LocalDateTime local = clock.toServerLocal(when);
    for (Catalog.Instance i : catalog.instancesOf(t)) {
      boolean captures =
          column != null && i.columns.stream().anyMatch(c -> c.columnId() == column.columnId());
      appendDdl(
          new Catalog.DdlRow(
              i.name,
              t.schema,
              t.name,
              lsn,
              command,
              local,
              effect.kind() == DdlCommand.Kind.ALTER_COLUMN && captures));
    }
    applyDdl(t, effect, column);
    tableRows.columnsChanged();
    advanceClock(when);
    flushUnlessBulk();
    return lsn;
  }

  /**
   * {@code ALTER TABLE <table> ADD <column> <type>} through {@link #ddl(String, String)}.
   *
   * @param table {@code schema.table} or {@code table} (schema {@code dbo}), ignoring case
   * @param column the new column's name
   * @param type its type
   * @return the DDL's LSN
   */
  public Lsn addColumn(String table, String column, SqlServerType type) {
    return ddl(table, DdlCommand.text(table(table), DdlCommand.Kind.ADD_COLUMN, column, type));
  }

  /**
   * {@code ALTER TABLE <table> DROP COLUMN <column>} through {@link #ddl(String, String)}.
   *
   * @param table {@code schema.table} or {@code table} (schema {@code dbo}), ignoring case
   * @param column the column to drop; not a key column
   * @return the DDL's LSN
   */
  public Lsn dropColumn(String table, String column) {
    return ddl(table, DdlCommand.text(table(table), DdlCommand.Kind.DROP_COLUMN, column, null));
  }

  /**
   * {@code ALTER TABLE <table> ALTER COLUMN <column> <type>} through {@link #ddl(String, String)}.
   *
   * @param table {@code schema.table} or {@code table} (schema {@code dbo}), ignoring case
   * @param column the column to alter; not a key column
   * @param newType its new type
   * @return the DDL's LSN
   */
  public Lsn alterColumn(String table, String column, SqlServerType newType) {
    return ddl(table, DdlCommand.text(table(table), DdlCommand.Kind.ALTER_COLUMN, column, newType));
  }

  /**
   * Checks that every stored value of {@code column} converts to {@code type} (a row at a time; the
   * rows take the new type when they are read, {@link SourceRows#columnsChanged}).
   */
  private void convertColumn(Catalog.Table t, Catalog.Column column, SqlServerType type) {
    rowsOf(t)
        .scan(
            null,
            (key, row) -> {
              Object v = row.get(column.name());
              SqlValues.normalize(column.name(), type, v == null ? null : SqlValues.readerValue(v));
              return true;
            });
  }

  private void applyDdl(Catalog.Table t, DdlCommand effect, Catalog.Column column) {
    String tableKey = Catalog.key(t.schema, t.name);
    switch (effect.kind()) {
      case ADD_COLUMN:
        t.maxColumnIdUsed++;
        t.columns.add(
            new Catalog.Column(
                effect.column(),
                t.maxColumnIdUsed,
                effect.type(),
                false,
                0,
                Collation.of(effect.column(), effect.type(), effect.collation())));
        tablesDirty = true;
        break;
      case DROP_COLUMN:
        t.columns.remove(column);
        tablesDirty = true;
        dirtySourceTables.add(tableKey);
        break;
      case ALTER_COLUMN:
        t.columns.set(
            t.columns.indexOf(column),
            new Catalog.Column(
                column.name(),
                column.columnId(),
                effect.type(),
                column.computed(),
                column.keyOrdinal(),
                Collation.of(column.name(), effect.type(), effect.collation())));
        for (Catalog.Instance i : catalog.instancesOf(t)) {
          for (int k = 0; k < i.columns.size(); k++) {
            Catalog.Captured c = i.columns.get(k);
            if (c.columnId() == column.columnId()) {
              i.columns.set(
                  k,
                  new Catalog.Captured(
                      c.name(), c.columnId(), c.ordinal(), effect.type(), c.computed()));
              instancesDirty = true;
            }
          }
        }
        tablesDirty = true;
        dirtySourceTables.add(tableKey);
        break;
      default:
        break;
    }
  }

  // ---- bulk -----------------------------------------------------------------------------------

  /**
   * Starts bulk mode: until the returned handle closes, operations change memory only, and each
   * changed file is written once at the close (in the commit-safe order: change tables and source
   * tables before {@code cdc.lsn_time_mapping}). Use it for large histories (a TPC-H load and a
   * thousand transactions take seconds). Bulks nest; the outermost close writes.
   *
   * @return the open bulk, to close (try-with-resources)
   */
  public Bulk bulk() {
    bulkDepth++;
    return new Bulk();
  }

  /** An open bulk; {@link #close()} writes what changed. */
  public final class Bulk implements AutoCloseable {
    private boolean closed;

    private Bulk() {}

    /**
     * Ends this bulk; the outermost writes every changed file once.
     *
     * @throws UncheckedIOException when a file cannot be written
     */
    @Override
    public void close() {
      if (closed) {
        return;
      }
      closed = true;
      bulkDepth--;
      flushUnlessBulk();
    }
  }

  // ---- transactions ---------------------------------------------------------------------------

  /**
   * One transaction: inserts, updates and deletes by key, in statement order, committed together at
   * one LSN. Nothing is written or changed before {@link #commit()}; a statement that fails there
   * leaves the server as it was. Values are Java values by SQL Server type, as {@link
   * org.lakecdc.io.mssqlcdc.client.ChangeRow} lists them; text is also accepted for numbers, dates
   * and times, {@link java.time.LocalTime} for {@code time}, and {@link java.time.OffsetDateTime}
   * or {@link Instant} for {@code datetimeoffset}.
   */
  public final class Transaction {
    private final Instant commitTime;
    private final List<Statement> statements = new ArrayList<>();
    private boolean committed;

    private Transaction(Instant commitTime) {
      this.commitTime = commitTime;
    }

    /**
     * {@code INSERT}: a row by column name (ignoring case); absent columns are NULL.
     *
     * @param table {@code schema.table} or {@code table}
     * @param row values by column name; not computed columns
     * @return this transaction
     */
    public Transaction insert(String table, Map<String, ?> row) {
      statements.add(new Statement(2, table, null, nonNullKeys(row)));
      return this;
    }

    /**
     * {@code UPDATE ... SET <changes> WHERE <key> = <key values>}. Changing a key column is
     * recorded as a delete of the old key and an insert of the new, as SQL Server's CDC records it.
     *
     * @param table {@code schema.table} or {@code table}
     * @param key the key values in key column order
     * @param changes new values by column name (ignoring case)
     * @return this transaction
     */
    public Transaction update(String table, List<?> key, Map<String, ?> changes) {
      statements.add(new Statement(4, table, new ArrayList<>(key), new LinkedHashMap<>(changes)));
      return this;
    }

    /**
     * {@code DELETE ... WHERE <key> = <key values>}.
     *
     * @param table {@code schema.table} or {@code table}
     * @param key the key values in key column order
     * @return this transaction
     */
    public Transaction delete(String table, List<?> key) {
      statements.add(new Statement(1, table, new ArrayList<>(key), null));
      return this;
    }

    /**
     * Commits: takes the next LSN, writes the change rows of every capture instance of the tables
     * touched, updates the source tables, and writes the {@code cdc.lsn_time_mapping} row last
     * (only when some instance got a change row).
     *
     * @return the commit LSN
     * @throws IllegalStateException when already committed or empty
     * @throws IllegalArgumentException for an unknown table or column, a computed column, a value
     *     that does not fit, a duplicate key or a key with no row; nothing is changed then
     */
    public Lsn commit() {
      if (committed) {
        throw new IllegalStateException("This transaction is already committed");
      }
      if (statements.isEmpty()) {
        throw new IllegalStateException(
            "A transaction needs at least one statement; use idle(at) for an entry without"
                + " changes");
      }
      Lsn lsn = FakeSqlServer.this.commit(commitTime, statements);
      committed = true;
      return lsn;
    }
  }

  private static Map<String, ?> nonNullKeys(Map<String, ?> row) {
    Map<String, Object> copy = new LinkedHashMap<>();
    for (Map.Entry<String, ?> e : row.entrySet()) {
      copy.put(Objects.requireNonNull(e.getKey(), "column name"), e.getValue());
    }
    return copy;
  }

  /** A statement: op 2 insert (values), 4 update (key, values), 1 delete (key). */
  private record Statement(int op, String table, List<Object> key, Map<String, ?> values) {}

  /** A change row before capture: operation, table, full row image, columns the update set. */
  private record Change(int op, Catalog.Table table, Map<String, Object> image, Set<String> set) {}

  private static final Map<String, Object> DELETED = Collections.emptyMap();

  private Lsn commit(Instant at, List<Statement> statements) {
    Map<String, Map<KeyTuple, Map<String, Object>>> overlay = new HashMap<>();
    List<Change> changes = new ArrayList<>();
    for (Statement s : statements) {
      Catalog.Table t = table(s.table());
      Map<KeyTuple, Map<String, Object>> tableOverlay =
          overlay.computeIfAbsent(Catalog.key(t.schema, t.name), k -> new HashMap<>());
      if (s.op() == 2) {
        Map<String, Object> row = fullRow(t, s.values());
        KeyTuple key = keyOf(t, row);
        if (lookup(t, tableOverlay, key) != null) {
          throw duplicateKey(t, key);
        }
        tableOverlay.put(key, row);
        changes.add(new Change(2, t, row, Set.of()));
        continue;
      }
      KeyTuple key = keyTuple(t, s.key());
      Map<String, Object> current = lookup(t, tableOverlay, key);
      if (current == null) {
        throw new IllegalArgumentException("No row with key " + key + " in " + t.qualified());
      }
      if (s.op() == 1) {
        tableOverlay.put(key, DELETED);
        changes.add(new Change(1, t, current, Set.of()));
        continue;
      }
      Map<String, Object> after = new LinkedHashMap<>(current);
      Set<String> set = new HashSet<>();
      for (Map.Entry<String, ?> e : s.values().entrySet()) {
        Catalog.Column c = writableColumn(t, e.getKey());
        after.put(c.name(), SqlValues.normalize(c.name(), c.type(), e.getValue()));
        set.add(c.name());
      }
      KeyTuple newKey = keyOf(t, after);
      if (newKey.equals(key)) {
        tableOverlay.put(key, after);
        changes.add(new Change(3, t, current, set));
        changes.add(new Change(4, t, after, set));
      } else {
        if (lookup(t, tableOverlay, newKey) != null) {
          throw duplicateKey(t, newKey);
        }
        tableOverlay.put(key, DELETED);
        tableOverlay.put(newKey, after);
        changes.add(new Change(1, t, current, Set.of()));
        changes.add(new Change(2, t, after, Set.of()));
      }
    }

    Lsn lsn = takeLsn();
    BigInteger base = lsn.toBigInteger();
    boolean wroteChangeRows = false;
    int[] position = new int[changes.size()];
    for (int i = 0; i < changes.size(); i++) {
      boolean afterImage = changes.get(i).op() == 4 && i > 0 && changes.get(i - 1).op() == 3;
      position[i] = afterImage ? position[i - 1] : i + 1;
    }
    for (int i = 0; i < changes.size(); i++) {
      Change change = changes.get(i);
      List<Catalog.Instance> instances = catalog.instancesOf(change.table());
      for (int k = 0; k < instances.size(); k++) {
        Catalog.Instance instance = instances.get(k);
        if (change.op() == 3) {
          Change next = changes.get(i + 1);
          if (capturedImagesEqual(instance, change.table(), change.image(), next.image())) {
            continue;
          }
        } else if (change.op() == 4 && i > 0 && changes.get(i - 1).op() == 3) {
          Change before = changes.get(i - 1);
          if (capturedImagesEqual(instance, change.table(), before.image(), change.image())) {
            continue;
          }
        }
        int n = position[i];
        ObjectNode row = FakeFormat.object();
        row.put(FakeFormat.START_LSN, lsn.toString());
        row.put(FakeFormat.SEQVAL, Lsn.fromBigInteger(base.add(BigInteger.valueOf(n))).toString());
        row.put(FakeFormat.OPERATION, change.op());
        row.put(FakeFormat.COMMAND_ID, n + k);
        for (Catalog.Captured c : instance.columns) {
          row.set(c.name(), SqlValues.toJson(c.type(), storedValue(change, c)));
        }
        log(FakeFormat.changeTableFile(instance.name)).append(FakeFormat.line(row));
        wroteChangeRows = true;
      }
    }
    for (Map.Entry<String, Map<KeyTuple, Map<String, Object>>> e : overlay.entrySet()) {
      if (e.getValue().isEmpty()) {
        continue;
      }
      SourceRows tableRows = rows.get(e.getKey());
      for (Map.Entry<KeyTuple, Map<String, Object>> change : e.getValue().entrySet()) {
        if (change.getValue() == DELETED) {
          tableRows.remove(change.getKey());
        } else {
          tableRows.put(change.getKey(), change.getValue());
        }
      }
      dirtySourceTables.add(e.getKey());
    }
    if (wroteChangeRows) {
      LocalDateTime local = clock.toServerLocal(at);
      String tranId = Lsn.fromBigInteger(base.shiftRight(4)).toString();
      appendMapping(new Catalog.MappingRow(lsn, local, local, tranId));
    }
    advanceClock(at);
    flushUnlessBulk();
    return lsn;
  }

  /** The value CDC stores for a captured column in a change row (docs/tables.md "Bronze"). */
  private static Object storedValue(Change change, Catalog.Captured c) {
    if (c.computed()) {
      return null;
    }
    Catalog.Column live = change.table().columnById(c.columnId());
    if (live == null) {
      return null;
    }
    if (SqlValues.isLegacyLob(c.type()) && (change.op() == 1 || change.op() == 3)) {
      return null;
    }
    if (SqlValues.isMaxLob(c.type()) && change.op() == 3 && !change.set().contains(live.name())) {
      return null;
    }
    Object v = change.image().get(live.name());
    if (v != null && !live.type().equals(c.type())) {
      v = SqlValues.normalize(c.name(), c.type(), SqlValues.readerValue(v));
    }
    return v;
  }

  private static boolean capturedImagesEqual(
      Catalog.Instance instance,
      Catalog.Table table,
      Map<String, Object> before,
      Map<String, Object> after) {
    for (Catalog.Captured c : instance.columns) {
      if (c.computed()) {
        continue;
      }
      Catalog.Column live = table.columnById(c.columnId());
      if (live != null && !SqlValues.same(before.get(live.name()), after.get(live.name()))) {
        return false;
      }
    }
    return true;
  }

  private Map<String, Object> lookup(
      Catalog.Table t, Map<KeyTuple, Map<String, Object>> tableOverlay, KeyTuple key) {
    Map<String, Object> row = tableOverlay.get(key);
    if (row != null) {
      return row == DELETED ? null : row;
    }
    return rowsOf(t).get(key);
  }

  // ---- rows and names -------------------------------------------------------------------------

  /** A full stored row: every live column in column order, absent ones NULL. */
  private Map<String, Object> fullRow(Catalog.Table t, Map<String, ?> values) {
    Map<String, Object> given = new HashMap<>();
    for (Map.Entry<String, ?> e : values.entrySet()) {
      Catalog.Column c = writableColumn(t, e.getKey());
      if (given.containsKey(c.name())) {
        throw new IllegalArgumentException(
            "Column '" + c.name() + "' is given twice (names ignore case)");
      }
      given.put(c.name(), SqlValues.normalize(c.name(), c.type(), e.getValue()));
    }
    Map<String, Object> row = new LinkedHashMap<>();
    for (Catalog.Column c : t.columns) {
      row.put(c.name(), given.get(c.name()));
    }
    return row;
  }

  private static Catalog.Column writableColumn(Catalog.Table t, String name) {
    Catalog.Column c = t.column(name);
    if (c == null) {
      throw new IllegalArgumentException(
          "Invalid column name '" + name + "' in table '" + t.qualified() + "'");
    }
    if (c.computed()) {
      throw new IllegalArgumentException(
          "The column '" + c.name() + "' cannot be modified because it is a computed column");
    }
    return c;
  }

  private static KeyTuple keyOf(Catalog.Table t, Map<String, Object> row) {
    List<Catalog.Column> keyColumns = t.keyColumns();
    List<Object> values = new ArrayList<>();
    for (Catalog.Column k : keyColumns) {
      values.add(row.get(k.name()));
    }
    return KeyTuple.of(keyColumns, values);
  }

  private static KeyTuple keyTuple(Catalog.Table t, List<Object> key) {
    List<Catalog.Column> keyColumns = t.keyColumns();
    if (key.size() != keyColumns.size()) {
      throw new IllegalArgumentException(
          t.qualified()
              + " has "
              + keyColumns.size()
              + " key column(s) "
              + keyColumns.stream().map(Catalog.Column::name).toList()
              + ", got "
              + key.size()
              + " key value(s)");
    }
    List<Object> values = new ArrayList<>();
    for (int i = 0; i < key.size(); i++) {
      Catalog.Column c = keyColumns.get(i);
      values.add(SqlValues.normalize(c.name(), c.type(), key.get(i)));
    }
    return KeyTuple.of(keyColumns, values);
  }

  private static IllegalArgumentException duplicateKey(Catalog.Table t, KeyTuple key) {
    return new IllegalArgumentException(
        "Violation of PRIMARY KEY constraint 'PK_"
            + t.name
            + "'. Cannot insert duplicate key in object '"
            + t.qualified()
            + "'. The duplicate key value is "
            + key
            + ".");
  }

  private SourceRows rowsOf(Catalog.Table t) {
    return rows.computeIfAbsent(
        Catalog.key(t.schema, t.name),
        k -> SourceRows.onDisk(directory.resolve(FakeFormat.sourceTableFile(t.schema, t.name)), t));
  }

  /** A JSON field by name, exact first, then ignoring case. */
  static JsonNode field(JsonNode row, String name) {
    JsonNode v = row.get(name);
    if (v != null) {
      return v;
    }
    for (java.util.Iterator<Map.Entry<String, JsonNode>> it = row.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> e = it.next();
      if (e.getKey().equalsIgnoreCase(name)) {
        return e.getValue();
      }
    }
    return null;
  }

  private Catalog.Table table(String table) {
    Objects.requireNonNull(table, "table");
    String[] name = splitTableName(table);
    Catalog.Table t = catalog.tables.get(Catalog.key(name[0], name[1]));
    if (t == null) {
      throw new IllegalArgumentException(
          "Invalid object name '"
              + table
              + "'; the fake has tables "
              + catalog.tables.values().stream().map(Catalog.Table::qualified).toList());
    }
    return t;
  }

  private Catalog.Instance instance(String name) {
    Objects.requireNonNull(name, "captureInstance");
    Catalog.Instance exact = catalog.instances.get(name);
    if (exact != null) {
      return exact;
    }
    List<Catalog.Instance> matches = new ArrayList<>();
    for (Catalog.Instance i : catalog.instances.values()) {
      if (i.name.equalsIgnoreCase(name)) {
        matches.add(i);
      }
    }
    if (matches.size() == 1) {
      return matches.get(0);
    }
    throw new IllegalArgumentException(
        "Capture instance '"
            + name
            + "' not found; the fake has "
            + new ArrayList<>(catalog.instances.keySet()));
  }

  /** {@code schema.table} → [schema, table]; {@code table} → [dbo, table]; brackets removed. */
  private static String[] splitTableName(String table) {
    String text = table.strip();
    int dot = text.startsWith("[") ? text.indexOf("].") + 1 : text.indexOf('.');
    if (dot <= 0) {
      return new String[] {"dbo", DdlCommand.unquote(text)};
    }
    return new String[] {
      DdlCommand.unquote(text.substring(0, dot)), DdlCommand.unquote(text.substring(dot + 1))
    };
  }

  private static String checkIdentifier(String name, String what) {
    if (name == null || name.isBlank()) {
      throw new IllegalArgumentException("A " + what + " name cannot be empty");
    }
    for (char ch : name.toCharArray()) {
      if (ch < 0x20 || "/\\:*?\"<>|".indexOf(ch) >= 0) {
        throw new IllegalArgumentException(
            "The fake cannot store " + what + " name '" + name + "' (character '" + ch + "')");
      }
    }
    if (!what.equals("capture instance") && !what.equals("column") && name.contains(".")) {
      throw new IllegalArgumentException(
          "The fake cannot store " + what + " name '" + name + "' (it contains a dot)");
    }
    return name;
  }

  // ---- LSNs, clock, files ---------------------------------------------------------------------

  private Lsn takeLsn() {
    Lsn lsn = catalog.server.nextLsn;
    catalog.server.nextLsn = Lsn.fromBigInteger(lsn.toBigInteger().add(LSN_STEP));
    serverDirty = true;
    return lsn;
  }

  private Instant now() {
    return catalog.server.clock != null ? catalog.server.clock : machineClock.instant();
  }

  private void advanceClock(Instant at) {
    if (catalog.server.clock == null || at.isAfter(catalog.server.clock)) {
      catalog.server.clock = at;
      serverDirty = true;
    }
  }

  private void appendMapping(Catalog.MappingRow row) {
    log(FakeFormat.LSN_TIME_MAPPING).append(FakeFormat.line(Catalog.mappingJson(row)));
  }

  private void appendDdl(Catalog.DdlRow row) {
    log(FakeFormat.DDL_HISTORY).append(FakeFormat.line(Catalog.ddlJson(row)));
  }

  private LogFile log(String fileName) {
    return logs.computeIfAbsent(fileName, LogFile::new);
  }

  private void flushUnlessBulk() {
    if (bulkDepth == 0) {
      flush();
    }
  }

  /**
   * Writes every changed file, in the order that keeps readers consistent: the server, the tables,
   * the capture instances (a cleanup's new low watermark before its deletions), the change tables,
   * the source tables, the DDL history, and {@code cdc.lsn_time_mapping} last.
   */
  private void flush() {
    if (serverDirty) {
      files.write(
          directory.resolve(FakeFormat.SERVER),
          out -> out.write(FakeFormat.line(catalog.serverJson()) + "\n"));
      serverDirty = false;
    }
    if (tablesDirty) {
      writeLines(FakeFormat.SYS_TABLES, catalog.sysTables());
      writeLines(FakeFormat.SYS_COLUMNS, catalog.sysColumns());
      tablesDirty = false;
    }
    if (instancesDirty) {
      writeLines(FakeFormat.CHANGE_TABLES, catalog.changeTables());
      writeLines(FakeFormat.CAPTURED_COLUMNS, catalog.capturedColumns());
      writeLines(FakeFormat.INDEX_COLUMNS, catalog.indexColumns());
      instancesDirty = false;
    }
    for (LogFile log : new ArrayList<>(logs.values())) {
      if (!log.fileName.equals(FakeFormat.LSN_TIME_MAPPING)
          && !log.fileName.equals(FakeFormat.DDL_HISTORY)) {
        flushLog(log);
      }
    }
    for (String key : new ArrayList<>(dirtySourceTables)) {
      Catalog.Table t = catalog.tables.get(key);
      SourceRows tableRows = rowsOf(t);
      SourceRows.Written[] written = {null};
      files.write(
          directory.resolve(FakeFormat.sourceTableFile(t.schema, t.name)),
          out -> written[0] = tableRows.writeTo(out));
      tableRows.written(written[0]);
      dirtySourceTables.remove(key);
    }
    if (logs.containsKey(FakeFormat.DDL_HISTORY)) {
      flushLog(logs.get(FakeFormat.DDL_HISTORY));
    }
    if (logs.containsKey(FakeFormat.LSN_TIME_MAPPING)) {
      flushLog(logs.get(FakeFormat.LSN_TIME_MAPPING));
    }
  }

  private void writeLines(String fileName, List<JsonNode> nodes) {
    files.write(
        directory.resolve(fileName),
        out -> {
          for (String line : FakeFormat.lines(nodes)) {
            out.write(line);
            out.write('\n');
          }
        });
  }

  private void flushLog(LogFile log) {
    Path path = directory.resolve(log.fileName);
    if (log.truncate && log.pending.isEmpty()) {
      try {
        Files.deleteIfExists(path);
      } catch (IOException e) {
        throw new UncheckedIOException("Cannot delete " + path, e);
      }
    } else if (log.truncate) {
      files.write(
          path,
          out -> {
            for (String line : log.pending) {
              out.write(line);
              out.write('\n');
            }
          });
    } else if (log.removals.isEmpty()) {
      if (log.pending.isEmpty()) {
        logs.remove(log.fileName);
        return;
      }
      files.append(path, log.pending);
    } else {
      files.write(
          path,
          out -> {
            try (FakeFormat.JsonLines lines = FakeFormat.JsonLines.open(path)) {
              for (JsonNode n = lines.next(); n != null; n = lines.next()) {
                if (!log.removes(n)) {
                  out.write(lines.lastLine());
                  out.write('\n');
                }
              }
            }
            for (String line : log.pending) {
              out.write(line);
              out.write('\n');
            }
          });
    }
    logs.remove(log.fileName);
  }

  /**
   * Pending changes of an append-only file ({@code cdc.lsn_time_mapping}, {@code cdc.ddl_history},
   * a change table): lines to append, rows to remove from what is on disk, or a restart from empty.
   */
  private static final class LogFile {
    final String fileName;
    final List<String> pending = new ArrayList<>();
    final List<Predicate<JsonNode>> removals = new ArrayList<>();
    boolean truncate;

    LogFile(String fileName) {
      this.fileName = fileName;
    }

    void append(String line) {
      pending.add(line);
    }

    /** Starts the file over (a dropped or re-created change table). */
    void truncate() {
      truncate = true;
      pending.clear();
      removals.clear();
    }

    /** Removes the rows that match, on disk and among the lines not written yet. */
    void remove(Predicate<JsonNode> removal) {
      pending.removeIf(
          line -> {
            try {
              return removal.test(FakeFormat.MAPPER.readTree(line));
            } catch (IOException e) {
              throw new UncheckedIOException(e);
            }
          });
      if (!truncate) {
        removals.add(removal);
      }
    }

    boolean removes(JsonNode row) {
      for (Predicate<JsonNode> r : removals) {
        if (r.test(row)) {
          return true;
        }
      }
      return false;
    }
  }
}
