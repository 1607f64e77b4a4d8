package org.lakecdc.io.mssqlcdc.fake;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.function.BiFunction;
import java.util.function.Consumer;
import org.lakecdc.io.mssqlcdc.client.CaptureInstance;
import org.lakecdc.io.mssqlcdc.client.CaptureInstanceNotFoundError;
import org.lakecdc.io.mssqlcdc.client.CdcClient;
import org.lakecdc.io.mssqlcdc.client.CdcException;
import org.lakecdc.io.mssqlcdc.client.ChangeQuery;
import org.lakecdc.io.mssqlcdc.client.ChangeRow;
import org.lakecdc.io.mssqlcdc.client.CloseableIterator;
import org.lakecdc.io.mssqlcdc.client.Commit;
import org.lakecdc.io.mssqlcdc.client.DdlChange;
import org.lakecdc.io.mssqlcdc.client.IsolationLevel;
import org.lakecdc.io.mssqlcdc.client.KeyBucket;
import org.lakecdc.io.mssqlcdc.client.LookAheadIterator;
import org.lakecdc.io.mssqlcdc.client.SplitPoint;
import org.lakecdc.io.mssqlcdc.client.SqlIdentifiers;
import org.lakecdc.io.mssqlcdc.client.TableQuery;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.io.mssqlcdc.schema.CapturedColumn;
import org.lakecdc.io.mssqlcdc.time.CommitTimeConverter;

/**
 * The reader side of the SQL Server CDC simulator: a {@link CdcClient} over a directory that {@link
 * FakeSqlServer} writes (format: docs/fake-format.md). It answers as SQL Server's CDC functions and
 * tables do (SQL Server documentation, "Change Data Capture Functions (Transact-SQL)"):
 *
 * <ul>
 *   <li>{@code maxLsn}: the last {@code cdc.lsn_time_mapping} row. {@code minLsn}: the instance's
 *       {@code cdc.change_tables.start_lsn}, which cleanup moves.
 *   <li>{@code commit(lsn)}: only a mapping row's own LSN (like {@code fn_cdc_map_lsn_to_time} on
 *       commit LSNs; scenario C268); a DDL LSN or any LSN between rows has none.
 *   <li>Commit times: the whole mapping, in LSN order, is converted from the server's zone ({@code
 *       server.json: time_zone}) with {@link CommitTimeConverter}, so the fall-back hour reads
 *       right and {@link Commit#commitTime()} equals {@link ChangeRow#commitTime()}.
 *   <li>{@code lastCommitLsnAtOrBefore(instant)}: like {@code fn_cdc_map_time_to_lsn('largest less
 *       than or equal', ...)}, comparing the stored server-local {@code tran_end_time} with the
 *       instant's server-clock reading, with the T-SQL client's fall-back rule.
 *   <li>{@code readChanges}: streams {@code cdc.<ci>_CT.jsonl} one line at a time from the range's
 *       first commit (or an earlier line a scan from the start would refuse), keeping rows whose
 *       commit has a mapping row. A row after the mapping's last LSN is a commit in progress (the
 *       writer writes the mapping row last) and is invisible, as on SQL Server; a row below the
 *       mapping's last LSN without a mapping row exists on no SQL Server (a writer stopped part-way
 *       through) and raises {@link CdcException} naming the file, line and LSN.
 * </ul>
 *
 * <p>Every call sees what a writer committed before it: files are parsed once per version and kept
 * for every client of the JVM ({@link ReaderCache}, checked against each file's identity, size and
 * modification time at every call), and change tables are indexed by start LSN ({@link
 * ChangeTableIndex}), so {@code readChanges} starts at its range and an append is parsed once
 * (docs/fake-format.md, "How the reader keeps up with writers"). Capture instance names match
 * exactly first, then ignoring case; an unknown one raises {@link CaptureInstanceNotFoundError},
 * and one the T-SQL client could not inline ({@link SqlIdentifiers#captureInstance}) raises {@link
 * IllegalArgumentException} as that client does. Malformed files raise {@link CdcException} naming
 * file and line. Not thread-safe (one client per thread, as the interface says); closing is
 * idempotent and any call after it raises {@link IllegalStateException}.
 */
public final class FileBackedCdcClient implements CdcClient {
  private final Path directory;
  private final Clock machineClock;
  private boolean closed;

  /**
   * Opens a reader of a fake server's directory.
   *
   * @param directory the directory {@link FakeSqlServer} writes
   * @throws CdcException when the directory holds no fake server ({@code server.json})
   */
  public FileBackedCdcClient(Path directory) {
    this(directory, Clock.systemUTC());
  }

  /**
   * Like {@link #FileBackedCdcClient(Path)}, with the machine's clock that {@link #currentTime}
   * runs on.
   */
  FileBackedCdcClient(Path directory, Clock machineClock) {
    this.machineClock = Objects.requireNonNull(machineClock, "machineClock");
    this.directory = Objects.requireNonNull(directory, "directory");
    if (!Catalog.exists(directory)) {
      throw new CdcException(
          "No fake SQL Server in " + directory + " (" + FakeFormat.SERVER + " is missing)");
    }
  }

  /**
   * The directory this client reads.
   *
   * @return the directory
   */
  public Path directory() {
    return directory;
  }

  /**
   * {@inheritDoc}
   *
   * <p>The simulated server's clock: {@code server.json}'s {@code clock_utc} (the time of the last
   * event written) run on at the machine's pace since the file was last written (its modification
   * time), never before {@code clock_utc}. A history written just now reads as "now", one written a
   * day ago as a day old, wherever in time its commits lie. Empty when {@code server.json} has no
   * {@code clock_utc}.
   */
  @Override
  public Optional<Instant> currentTime() {
    ensureOpen();
    ReaderCache.ServerFile server = ReaderCache.server(directory);
    Instant clock = server.server().clock;
    if (clock == null) {
      return Optional.empty();
    }
    if (server.stamp().absent()) {
      throw new UncheckedIOException(
          new IOException("Cannot read " + directory.resolve(FakeFormat.SERVER)));
    }
    Instant written = server.stamp().modified().toInstant();
    Duration since = Duration.between(written, machineClock.instant());
    return Optional.of(since.isNegative() ? clock : clock.plus(since));
  }

  @Override
  public Optional<Lsn> maxLsn() {
    return Optional.ofNullable(mapping().maxLsn());
  }

  /**
   * {@inheritDoc}
   *
   * <p>The name matches exactly first, then ignoring case; a low watermark of {@code 0x00…} counts
   * as a missing instance (scenario C073).
   */
  @Override
  public Lsn minLsn(String captureInstance) {
    Catalog catalog = catalog();
    Catalog.Instance instance = resolve(catalog, captureInstance);
    if (instance.startLsn.isZero()) {
      throw notFound(catalog, captureInstance);
    }
    return instance.startLsn;
  }

  /** {@inheritDoc} The value plus one ({@link Lsn#increment()}). */
  @Override
  public Lsn incrementLsn(Lsn lsn) {
    ensureOpen();
    return lsn.increment();
  }

  /** {@inheritDoc} The value minus one, clamped at ZERO ({@link Lsn#decrement()}). */
  @Override
  public Lsn decrementLsn(Lsn lsn) {
    ensureOpen();
    return lsn.decrement();
  }

  @Override
  public Optional<Commit> commit(Lsn lsn) {
    Objects.requireNonNull(lsn, "lsn");
    ReaderCache.Timeline timeline = timeline();
    int i = timeline.firstAtOrAfter(lsn);
    return i < timeline.commits.size() && timeline.commits.get(i).lsn().equals(lsn)
        ? Optional.of(timeline.commits.get(i))
        : Optional.empty();
  }

  @Override
  public Optional<Commit> lastCommitAtOrBefore(Lsn lsn) {
    return lastAtOrBefore(timeline(), lsn);
  }

  private static Optional<Commit> lastAtOrBefore(ReaderCache.Timeline timeline, Lsn lsn) {
    int after = timeline.firstAfter(lsn);
    return after == 0 ? Optional.empty() : Optional.of(timeline.commits.get(after - 1));
  }

  /**
   * {@inheritDoc}
   *
   * <p>The simulator keeps {@code tran_end_time} on the server's clock ({@code server.json:
   * time_zone}) as SQL Server does, so it answers as {@code sys.fn_cdc_map_time_to_lsn} does: the
   * largest {@code start_lsn} whose {@code tran_end_time} is at or before the server-clock time
   * {@link CommitTimeConverter#serverTimeAtOrBefore(Instant)} gives, the Java twin of the T-SQL
   * client's expression (whole seconds, and the earlier reading before a fall-back). On a UTC
   * server that is the plain comparison of UTC commit times with the instant's second.
   */
  @Override
  public Optional<Lsn> lastCommitLsnAtOrBefore(Instant utc) {
    ensureOpen();
    LocalDateTime at =
        ReaderCache.converter(ReaderCache.server(directory).server().timeZone)
            .serverTimeAtOrBefore(utc);
    Lsn found = null;
    for (Catalog.MappingRow row : mapping().rows) {
      if (!row.tranEndTime().isAfter(at)) {
        found = found == null ? row.startLsn() : Lsn.max(found, row.startLsn());
      }
    }
    return Optional.ofNullable(found);
  }

  /**
   * {@inheritDoc}
   *
   * @throws IllegalArgumentException when {@code n < 1}
   */
  @Override
  public Optional<Commit> nthCommitAfter(Lsn lsn, int n) {
    if (n < 1) {
      throw new IllegalArgumentException("n must be at least 1, got " + n);
    }
    ReaderCache.Timeline timeline = timeline();
    List<Commit> commits = timeline.commits;
    int first = timeline.firstAfter(lsn);
    if (first == commits.size()) {
      return Optional.empty();
    }
    return Optional.of(commits.get((int) Math.min((long) first + n - 1, commits.size() - 1)));
  }

  @Override
  public long commitCount(Lsn afterLsn, Lsn upToLsn) {
    if (!upToLsn.isAfter(afterLsn)) {
      return 0;
    }
    ReaderCache.Timeline timeline = timeline();
    return Math.max(0, timeline.firstAfter(upToLsn) - timeline.firstAfter(afterLsn));
  }

  /**
   * {@inheritDoc}
   *
   * <p>A name that no instance has any more but that is its table's default name {@code
   * <schema>_<table>} (ignoring case) still resolves to that table, whose newest instance is last
   * (docs/sql-server.md "Switching to a new capture instance": SQL Server users follow a disabled
   * default instance to its table). CaptureInstance.startLsn is the instance's current low
   * watermark.
   */
  @Override
  public List<CaptureInstance> captureInstances(String captureInstance) {
    Catalog catalog = catalog();
    String schema;
    String table;
    Catalog.Instance named = find(catalog, captureInstance);
    if (named != null) {
      schema = named.schema;
      table = named.table;
    } else {
      Catalog.Instance byDefaultName = null;
      for (Catalog.Instance i : catalog.instances.values()) {
        if ((i.schema + "_" + i.table).equalsIgnoreCase(captureInstance)) {
          byDefaultName = i;
          break;
        }
      }
      if (byDefaultName == null) {
        throw notFound(catalog, captureInstance);
      }
      schema = byDefaultName.schema;
      table = byDefaultName.table;
    }
    List<Catalog.Instance> instances = new ArrayList<>();
    for (Catalog.Instance i : catalog.instances.values()) {
      if (i.schema.equalsIgnoreCase(schema) && i.table.equalsIgnoreCase(table)) {
        instances.add(i);
      }
    }
    instances.sort(Catalog.OLDEST_FIRST);
    List<CaptureInstance> out = new ArrayList<>();
    for (Catalog.Instance i : instances) {
      List<String> keys = new ArrayList<>();
      for (Catalog.IndexColumn c : i.indexColumns) {
        keys.add(c.name());
      }
      out.add(
          new CaptureInstance(
              i.name,
              i.schema,
              i.table,
              Optional.of(i.startLsn),
              Optional.ofNullable(i.createDate),
              keys));
    }
    return out;
  }

  @Override
  public List<CapturedColumn> capturedColumns(String captureInstance) {
    Catalog.Instance instance = resolve(catalog(), captureInstance);
    List<CapturedColumn> out = new ArrayList<>();
    for (Catalog.Captured c : instance.columns) {
      out.add(new CapturedColumn(c.name(), c.ordinal(), c.type(), c.computed()));
    }
    return out;
  }

  /**
   * {@inheritDoc}
   *
   * @throws CaptureInstanceNotFoundError when the instance does not exist
   */
  @Override
  public List<DdlChange> ddlHistory(String captureInstance, Lsn afterLsn, Lsn upToLsn) {
    Catalog.Instance instance = resolve(catalog(), captureInstance);
    List<Catalog.DdlRow> rows = new ArrayList<>();
    for (Catalog.DdlRow row : ReaderCache.ddlRows(directory)) {
      if (row.captureInstance().equals(instance.name)
          && row.ddlLsn().isAfter(afterLsn)
          && !row.ddlLsn().isAfter(upToLsn)) {
        rows.add(row);
      }
    }
    if (rows.isEmpty()) {
      return List.of();
    }
    rows.sort(Comparator.comparing(Catalog.DdlRow::ddlLsn));
    ReaderCache.Timeline timeline = timeline();
    List<DdlChange> out = new ArrayList<>();
    for (Catalog.DdlRow row : rows) {
      out.add(
          new DdlChange(
              instance.name,
              row.ddlLsn(),
              lastAtOrBefore(timeline, row.ddlLsn()).map(Commit::commitTime),
              row.ddlCommand()));
    }
    return out;
  }

  /**
   * {@inheritDoc}
   *
   * <p>Reads {@code cdc.<ci>_CT.jsonl} line by line and stops past {@code toLsn}. The file must be
   * sorted by {@code (__$start_lsn, __$command_id, __$seqval, __$operation)}, as the writer writes
   * it; a row out of that order raises {@link CdcException}. Requested columns match captured
   * columns ignoring case.
   *
   * @throws CaptureInstanceNotFoundError when the instance does not exist
   */
  @Override
  public CloseableIterator<ChangeRow> readChanges(ChangeQuery query) {
    Catalog.Instance instance = resolve(catalog(), query.captureInstance());
    ReaderCache.Mapping mapping = mapping();
    ReaderCache.Timeline timeline = timeline(mapping);
    Map<Lsn, Instant> times = timeline.times;
    Lsn maxMappedLsn = timeline.maxLsn();
    List<Catalog.Captured> columns = new ArrayList<>();
    for (String name : query.columns()) {
      columns.add(instance.column(name));
    }
    Path file = directory.resolve(FakeFormat.changeTableFile(instance.name));
    ReaderCache.Opened opened = ReaderCache.changeTableFrom(file, query.fromLsn());
    long[] start = {0, 0};
    ChangeTableIndex index = opened.index();
    if (index != null) {
      // Start at the first commit the scan from the file's start would act on: the first at or
      // after fromLsn, or an earlier one it would refuse (unmapped below the mapping's end).
      int g =
          Math.min(
              index.firstAtOrAfter(query.fromLsn()), index.firstBad(mapping, times, maxMappedLsn));
      start = index.seekBefore(g);
    }
    ChangeLines lines = new ChangeLines(file, opened.channel(), start[0], (int) start[1]);
    return new ChangeTableReader(
        lines,
        query,
        columns,
        times,
        (lsn, where) -> {
          if (maxMappedLsn != null && lsn.isBefore(maxMappedLsn)) {
            throw new CdcException(inProgressMessage(where, lsn, maxMappedLsn));
          }
        });
  }

  /**
   * Accepts a change row whose {@code __$start_lsn} has no mapping row only when it lies after the
   * mapping's last LSN: a commit in progress (its writer writes the mapping row last), which SQL
   * Server would not show yet either. Below the last mapped LSN such a row can only be left by a
   * writer that stopped part-way through (SQL Server never holds one: every change row's start LSN
   * is a commit LSN in {@code cdc.lsn_time_mapping}), and it is refused.
   *
   * @throws CdcException naming the file and line, the LSN, the mapping's last LSN and the fix
   */
  private void requireInProgress(Lsn start, Lsn maxMapped, FakeFormat.JsonLines lines) {
    if (maxMapped != null && start.isBefore(maxMapped)) {
      throw new CdcException(inProgressMessage(lines.where(), start, maxMapped));
    }
  }

  private String inProgressMessage(String where, Lsn start, Lsn maxMapped) {
    return directory.resolve(where)
        + ": change row at __$start_lsn "
        + start
        + " has no row in "
        + FakeFormat.LSN_TIME_MAPPING
        + ", which goes on to "
        + maxMapped
        + " (SQL Server never holds such a row; a writer stopped part-way through): restore"
        + " the directory from a complete copy, or delete it and rebuild it (the demo"
        + " database is rebuilt when its directory is absent)";
  }

  /**
   * {@inheritDoc}
   *
   * <p>The rows are those {@link #readChanges} would return for {@code [fromLsn, toLsn]} (a change
   * table row always has its mapping row in SQL Server). With R rows, n' = clamp(n, 1, R) tiles;
   * the first R mod n' tiles hold one row more. Each tile gives (its last row's start LSN, that
   * plus one, its row count). No rows: an empty list.
   *
   * @throws CaptureInstanceNotFoundError when the instance does not exist
   */
  @Override
  public List<SplitPoint> splitPoints(String captureInstance, Lsn fromLsn, Lsn toLsn, int n) {
    Catalog.Instance instance = resolve(catalog(), captureInstance);
    ReaderCache.Mapping mapping = mapping();
    ReaderCache.Timeline timeline = timeline(mapping);
    Map<Lsn, Instant> times = timeline.times;
    Lsn maxMapped = timeline.maxLsn();
    List<Lsn> groupLsns = new ArrayList<>();
    List<Long> groupRows = new ArrayList<>();
    long total = 0;
    Path file = directory.resolve(FakeFormat.changeTableFile(instance.name));
    boolean indexed;
    try (ReaderCache.Opened opened = ReaderCache.changeTable(file)) {
      ChangeTableIndex index = opened.index();
      int last = index == null ? 0 : index.firstAfter(toLsn);
      // The index answers when it holds every line a scan would read: up to the first commit
      // after toLsn, or the whole file.
      indexed = index != null && (last < index.groups() || index.complete());
      if (indexed) {
        int bad = index.firstBad(mapping, times, maxMapped);
        if (bad < last) {
          throw new CdcException(
              inProgressMessage(
                  file.getFileName() + ":" + index.firstLine(bad), index.lsn(bad), maxMapped));
        }
        for (int g = index.firstAtOrAfter(fromLsn); g < last; g++) {
          if (times.containsKey(index.lsn(g))) {
            groupLsns.add(index.lsn(g));
            groupRows.add(index.rows(g));
            total += index.rows(g);
          }
        }
      }
    }
    if (!indexed) {
      total = scanGroups(file, fromLsn, toLsn, times, maxMapped, groupLsns, groupRows);
    }
    return tiles(groupLsns, groupRows, total, n);
  }

  /** Reads the groups of rows per start LSN of {@code [fromLsn, toLsn]} from the file's start. */
  private long scanGroups(
      Path file,
      Lsn fromLsn,
      Lsn toLsn,
      Map<Lsn, Instant> times,
      Lsn maxMapped,
      List<Lsn> groupLsns,
      List<Long> groupRows) {
    long total = 0;
    try (FakeFormat.JsonLines lines = FakeFormat.JsonLines.open(file)) {
      for (JsonNode node = lines.next(); node != null; node = lines.next()) {
        Lsn start = FakeFormat.lsn(node, FakeFormat.START_LSN, lines.where());
        if (start.isAfter(toLsn)) {
          break;
        }
        if (!times.containsKey(start)) {
          requireInProgress(start, maxMapped, lines);
          continue;
        }
        if (start.isBefore(fromLsn)) {
          continue;
        }
        int last = groupLsns.size() - 1;
        if (last >= 0 && groupLsns.get(last).equals(start)) {
          groupRows.set(last, groupRows.get(last) + 1);
        } else {
          groupLsns.add(start);
          groupRows.add(1L);
        }
        total++;
      }
    }
    return total;
  }

  /** NTILE(n) over rows grouped by start LSN: see {@link #splitPoints}. */
  private static List<SplitPoint> tiles(
      List<Lsn> groupLsns, List<Long> groupRows, long total, int n) {
    if (total == 0) {
      return List.of();
    }
    long tiles = Math.max(1, Math.min(n, total));
    long size = total / tiles;
    long extra = total % tiles;
    List<SplitPoint> out = new ArrayList<>();
    int group = 0;
    long leftInGroup = groupRows.get(0);
    for (long t = 0; t < tiles; t++) {
      long rows = size + (t < extra ? 1 : 0);
      long need = rows;
      while (need > leftInGroup) {
        need -= leftInGroup;
        group++;
        leftInGroup = groupRows.get(group);
      }
      leftInGroup -= need;
      Lsn bound = groupLsns.get(group);
      out.add(new SplitPoint(bound, bound.increment(), rows));
      if (leftInGroup == 0 && group + 1 < groupLsns.size()) {
        group++;
        leftInGroup = groupRows.get(group);
      }
    }
    return out;
  }

  /**
   * {@inheritDoc}
   *
   * <p>Exact for a directory the writer wrote: the rows of {@code cdc.<ci>_CT.jsonl} whose {@code
   * __$start_lsn} lies in the interval and at or before the last {@code cdc.lsn_time_mapping} row
   * (later rows are commits in progress, which {@link #readChanges} does not show either), answered
   * from the change table's index ({@link ChangeTableIndex}) by two binary searches once the index
   * is up to date. Lines the index could not take (a malformed line and what follows it) do not
   * count; {@link #readChanges} raises their errors.
   */
  @Override
  public long estimatedChangeRows(String captureInstance, Lsn fromLsn, Lsn toLsn) {
    Catalog.Instance instance = resolve(catalog(), captureInstance);
    Lsn maxMapped = mapping().maxLsn();
    if (maxMapped == null || fromLsn.isAfter(toLsn)) {
      return 0;
    }
    Lsn last = Lsn.min(toLsn, maxMapped);
    try (ReaderCache.Opened opened =
        ReaderCache.changeTable(directory.resolve(FakeFormat.changeTableFile(instance.name)))) {
      ChangeTableIndex index = opened.index();
      if (index == null) {
        return 0;
      }
      int from = index.firstAtOrAfter(fromLsn);
      int to = index.firstAfter(last);
      return from < to ? index.rowsBetween(from, to) : 0;
    }
  }

  /**
   * {@inheritDoc}
   *
   * <p>Reads {@code <schema>.<table>.jsonl}; table and column names match ignoring case. Keys are
   * compared as SQL Server compares them ({@code KeyTuple}): NULL first, character values under
   * their column's collation ({@code sys.columns.collation_name}; case- and accent-insensitive as
   * the name says, trailing spaces never counting), so a bound {@code 'N'} equals a stored {@code
   * 'n'} under {@code _CI_}. Values are returned as stored. When the range is over the table's own
   * key, rows stream in file order (the writer keeps the file in key order under the collations,
   * and a file out of that order, or holding one key twice, fails naming its line), and a range
   * with a lower bound starts at the file's key index ({@link SourceTableIndex}: one entry every
   * {@value SourceTableIndex#EVERY} rows, built once per file version), as SQL Server seeks the
   * clustered index, instead of parsing every line before it; over other columns they are sorted in
   * memory, rows with equal keys in file order. Computed columns read NULL. The isolation level has
   * no effect: the fake's files only ever hold committed rows.
   *
   * @throws CdcException for an unknown table or key column
   */
  @Override
  public CloseableIterator<List<Object>> readTable(TableQuery query) {
    Catalog catalog = catalog();
    Catalog.Table table = catalog.tables.get(Catalog.key(query.schema(), query.table()));
    if (table == null) {
      throw new CdcException(
          "Invalid object name '"
              + query.schema()
              + "."
              + query.table()
              + "' (fake "
              + directory
              + ")");
    }
    List<Catalog.Column> columns = new ArrayList<>();
    for (String name : query.columns()) {
      columns.add(table.column(name));
    }
    List<Catalog.Column> keys = new ArrayList<>();
    for (String name : query.keyColumns()) {
      Catalog.Column c = table.column(name);
      if (c == null) {
        throw new CdcException(
            "Invalid column name '" + name + "' in table '" + table.qualified() + "'");
      }
      keys.add(c);
    }
    KeyTuple lower = query.lowerInclusive().map(v -> bound(keys, v)).orElse(null);
    KeyTuple upper = query.upperExclusive().map(v -> bound(keys, v)).orElse(null);
    boolean fileOrder = keys.equals(table.keyColumns());
    Path file = directory.resolve(FakeFormat.sourceTableFile(table.schema, table.name));
    FakeFormat.JsonLines opened;
    SourceTableIndex.Recorder recording = null;
    if (fileOrder && lower != null) {
      // A range over the table's key starts near its lower bound, as SQL Server seeks the
      // clustered index: lines before it are checked once per file version by the index.
      SourceTableIndex.Seek seek = SourceTableIndex.open(file, keys, keyOf(keys), lower);
      opened = FakeFormat.JsonLines.open(file, seek.channel(), seek.offset(), seek.linesBefore());
    } else if (fileOrder && upper == null) {
      // A read of every line (a chunked snapshot's planning, a whole read) records the index on
      // its way, so the range reads after it need not parse the file again.
      SourceTableIndex.Version version = SourceTableIndex.openVersion(file);
      recording = SourceTableIndex.recorder(file, keys, version.stamp());
      opened = FakeFormat.JsonLines.open(file, version.channel(), 0, 0);
      if (recording != null) {
        opened.countingBytes();
      }
    } else {
      opened = FakeFormat.JsonLines.open(file);
    }
    FakeFormat.JsonLines lines = opened;
    SourceTableIndex.Recorder recorder = recording;
    BiFunction<JsonNode, String, KeyTuple> keyOfLine = keyOf(keys);
    LineIterator<Map.Entry<KeyTuple, List<Object>>> matching =
        new LineIterator<>(lines) {
          private KeyTuple previous;

          @Override
          Map.Entry<KeyTuple, List<Object>> parse(JsonNode n) {
            String where = lines.where();
            KeyTuple key = keyOfLine.apply(n, where);
            if (fileOrder) {
              if (previous != null && key.compareTo(previous) <= 0) {
                throw new CdcException(
                    where
                        + ": source rows must be sorted by their key, each key once, comparing"
                        + " character keys under their columns' collations (docs/fake-format.md)");
              }
              previous = key;
              if (recorder != null) {
                recorder.row(key, lines.lineStart(), lines.lineNumber() - 1);
              }
              if (upper != null && key.compareTo(upper) >= 0) {
                finish();
                return null;
              }
            }
            if ((lower != null && key.compareTo(lower) < 0)
                || (upper != null && key.compareTo(upper) >= 0)) {
              return null;
            }
            List<Object> values = new ArrayList<>(columns.size());
            for (Catalog.Column c : columns) {
              values.add(c == null ? null : SqlValues.readerValue(stored(n, c, where)));
            }
            return Map.entry(key, Collections.unmodifiableList(values));
          }

          @Override
          void atEnd() {
            if (recorder != null) {
              recorder.end(lines.bytes());
            }
          }
        };
    if (fileOrder) {
      return map(matching, Map.Entry::getValue);
    }
    TreeMap<KeyTuple, List<List<Object>>> sorted = new TreeMap<>();
    try (matching) {
      while (matching.hasNext()) {
        Map.Entry<KeyTuple, List<Object>> e = matching.next();
        sorted.computeIfAbsent(e.getKey(), k -> new ArrayList<>()).add(e.getValue());
      }
    }
    List<List<Object>> out = new ArrayList<>();
    sorted.values().forEach(out::addAll);
    Iterator<List<Object>> it = out.iterator();
    return new CloseableIterator<>() {
      @Override
      public boolean hasNext() {
        return it.hasNext();
      }

      @Override
      public List<Object> next() {
        return it.next();
      }

      @Override
      public void close() {}
    };
  }

  /**
   * {@inheritDoc}
   *
   * <p>Reads the key columns of every row in key order through {@link #readTable} (so keys compare
   * as there: NULL first, character keys under their columns' collations) and picks the first key
   * of each tile after the first. The simulator holds the key tuples in memory; SQL Server computes
   * the tiles itself.
   */
  @Override
  public List<List<Object>> keyTiles(
      String schema, String table, List<String> keyColumns, int n, IsolationLevel isolation) {
    if (n < 1) {
      throw new IllegalArgumentException("n must be at least 1, got " + n);
    }
    if (keyColumns.isEmpty()) {
      throw new IllegalArgumentException(
          "Key tiles of " + schema + "." + table + " need at least one key column");
    }
    List<List<Object>> keys = new ArrayList<>();
    try (CloseableIterator<List<Object>> rows = keyStream(schema, table, keyColumns, isolation)) {
      rows.forEachRemaining(keys::add);
    }
    int tiles = Math.min(n, keys.size());
    if (tiles <= 1) {
      return List.of();
    }
    int size = keys.size() / tiles;
    int extra = keys.size() % tiles;
    List<List<Object>> out = new ArrayList<>(tiles - 1);
    for (int t = 1; t < tiles; t++) {
      out.add(keys.get(t * size + Math.min(t, extra)));
    }
    return Collections.unmodifiableList(out);
  }

  // ---- chunk planning (docs/behaviour.md §6.8): all through readTable's key stream, so keys
  // compare as there --

  /**
   * {@inheritDoc}
   *
   * <p>Streams the column's values in key order through {@link #readTable} (NULL first, strings as
   * {@link #readTable} compares them) and takes the first and last non-NULL value; when the column
   * is the table's one key column and a complete key index of the file's current version is cached
   * ({@link SourceTableIndex}, recorded by such a read or loaded from the writer's sidecar), its
   * first and last key, unless the first is NULL.
   */
  @Override
  public Optional<List<Object>> keyRange(
      String schema, String table, String keyColumn, IsolationLevel isolation) {
    KeyIndex indexed = keyIndex(schema, table, keyColumn);
    if (indexed != null) {
      KeyTuple first = indexed.index().firstKey();
      KeyTuple last = indexed.index().lastKey();
      if (first == null) {
        return Optional.empty();
      }
      Object lo = first.values().get(0);
      if (lo != null) {
        // SQL Server seeks the key's index for MIN and MAX; the simulator's index of the version
        // knows its first and last key (no NULL among them: NULL sorts first).
        return Optional.of(
            Arrays.asList(SqlValues.readerValue(lo), SqlValues.readerValue(last.values().get(0))));
      }
    }
    Object[] range = new Object[2];
    Consumer<Object> widen =
        v -> {
          if (range[0] == null) {
            range[0] = v;
          }
          range[1] = v;
        };
    forEachKeyValue(schema, table, keyColumn, isolation, widen);
    return range[0] == null ? Optional.empty() : Optional.of(Arrays.asList(range[0], range[1]));
  }

  /**
   * {@inheritDoc} The last key tuple of {@link #readTable}'s key order; when {@code keyColumns} are
   * the table's key columns in order and a complete key index of the file's current version is
   * cached or beside the file ({@link SourceTableIndex}), its last key, without reading the table.
   */
  @Override
  public Optional<List<Object>> keyMax(
      String schema, String table, List<String> keyColumns, IsolationLevel isolation) {
    requireKeys(schema, table, keyColumns);
    KeyIndex indexed = keyIndex(schema, table, keyColumns);
    if (indexed != null) {
      // SQL Server seeks the clustered index's last row; the simulator's index knows it.
      KeyTuple last = indexed.index().lastKey();
      return last == null ? Optional.empty() : Optional.of(readerValues(last));
    }
    List<Object> last = null;
    try (CloseableIterator<List<Object>> keys = keyStream(schema, table, keyColumns, isolation)) {
      while (keys.hasNext()) {
        last = keys.next();
      }
    }
    return Optional.ofNullable(last);
  }

  /**
   * {@inheritDoc}
   *
   * <p>Reads the range's keys in order through {@link #readTable} and skips n of them; when {@code
   * keyColumns} are the table's key columns in order and a complete key index of the file's current
   * version is cached or beside the file ({@link SourceTableIndex}), seeks instead, as SQL Server's
   * {@code OFFSET n ROWS} over the clustered index: the rows below each bound and the key n rows
   * after the lower one, each from the index entry before it (at most {@value
   * SourceTableIndex#EVERY} lines parsed for each).
   *
   * @throws IllegalArgumentException when {@code n < 0} or {@code keyColumns} is empty
   */
  @Override
  public Optional<List<Object>> keyBound(
      String schema,
      String table,
      List<String> keyColumns,
      Optional<List<Object>> lowerInclusive,
      Optional<List<Object>> upperExclusive,
      long n,
      IsolationLevel isolation) {
    if (n < 0) {
      throw new IllegalArgumentException("n must be at least 0, got " + n);
    }
    requireKeys(schema, table, keyColumns);
    Optional<Optional<List<Object>>> seeked =
        keyBoundFromIndex(schema, table, keyColumns, lowerInclusive, upperExclusive, n);
    if (seeked.isPresent()) {
      return seeked.get();
    }
    try (CloseableIterator<List<Object>> keys =
        readTable(
            new TableQuery(
                schema,
                table,
                keyColumns,
                keyColumns,
                lowerInclusive,
                upperExclusive,
                isolation))) {
      for (long skipped = 0; keys.hasNext(); skipped++) {
        List<Object> key = keys.next();
        if (skipped == n) {
          return Optional.of(key);
        }
      }
    }
    return Optional.empty();
  }

  /**
   * {@inheritDoc}
   *
   * <p>Streams the column's values through {@link #readTable} and counts them per {@code
   * Math.floorDiv(value, width)}; over the table's one integer key column with a complete key index
   * of the file's current version cached, and at most one slice per 512 rows, counts each slice
   * from the index instead (the rows below its end less the rows below its start, at most 256 lines
   * parsed for each).
   *
   * @throws IllegalArgumentException when {@code width < 1}
   * @throws CdcException when the column holds values that are not integers
   */
  @Override
  public SortedMap<Long, Long> keySlices(
      String schema,
      String table,
      String keyColumn,
      long width,
      long low,
      long high,
      IsolationLevel isolation) {
    requireWidth(width);
    SortedMap<Long, Long> fromIndex =
        keySlicesFromIndex(schema, table, keyColumn, width, low, high);
    if (fromIndex != null) {
      return fromIndex;
    }
    TreeMap<Long, Long> slices = new TreeMap<>();
    Consumer<Object> count =
        v -> {
          if (!(v instanceof Short || v instanceof Integer || v instanceof Long)) {
            throw new CdcException(
                keyColumnName(schema, table, keyColumn)
                    + " is not an integer column; slices need one");
          }
          long k = ((Number) v).longValue();
          if (k >= low && k <= high) {
            slices.merge(Math.floorDiv(k, width), 1L, Long::sum);
          }
        };
    forEachKeyValue(schema, table, keyColumn, isolation, count);
    return Collections.unmodifiableSortedMap(slices);
  }

  /**
   * {@inheritDoc}
   *
   * <p>Streams the column's values through {@link #readTable} and adds each ordinal (the integer; a
   * {@code LocalDate}'s epoch day) to its bucket {@code Math.floorDiv(ordinal, width)}.
   *
   * @throws IllegalArgumentException when {@code width < 1} or the column holds values that are
   *     neither integers nor dates
   */
  @Override
  public SortedMap<Long, KeyBucket> keyBuckets(
      String schema, String table, String keyColumn, long width, IsolationLevel isolation) {
    requireWidth(width);
    TreeMap<Long, KeyBucket> buckets = new TreeMap<>();
    Consumer<Object> add =
        v -> {
          long ordinal;
          if (v instanceof Short || v instanceof Integer || v instanceof Long) {
            ordinal = ((Number) v).longValue();
          } else if (v instanceof java.time.LocalDate d) {
            ordinal = d.toEpochDay();
          } else {
            throw new IllegalArgumentException(
                keyColumnName(schema, table, keyColumn)
                    + " holds "
                    + v.getClass().getSimpleName()
                    + " values; buckets need tinyint, smallint, int, bigint or date");
          }
          buckets.merge(
              Math.floorDiv(ordinal, width), KeyBucket.EMPTY.plus(ordinal), KeyBucket::plus);
        };
    forEachKeyValue(schema, table, keyColumn, isolation, add);
    return Collections.unmodifiableSortedMap(buckets);
  }

  /** {@inheritDoc} The rows {@link #readTable} streams, counted. */
  @Override
  public long rowCount(String schema, String table, IsolationLevel isolation) {
    return rowEstimate(schema, table);
  }

  /**
   * {@inheritDoc}
   *
   * <p>The simulator's estimate is exact: the number of rows of the table's file, counted by a read
   * of every row, or taken from a complete key index of the file's current version when one is
   * cached or the writer wrote one beside the file ({@link SourceTableIndex.Sidecar}).
   *
   * @throws CdcException for an unknown table
   */
  @Override
  public long rowEstimate(String schema, String table) {
    Catalog.Table t = catalog().tables.get(Catalog.key(schema, table));
    if (t == null) {
      throw new CdcException(
          "Invalid object name '" + schema + "." + table + "' (fake " + directory + ")");
    }
    SourceTableIndex index =
        t.keyColumns().isEmpty()
            ? null
            : SourceTableIndex.current(
                directory.resolve(FakeFormat.sourceTableFile(t.schema, t.name)),
                t.keyColumns(),
                keyOf(t.keyColumns()));
    if (index != null) {
      // SQL Server's estimate comes from the partition's metadata; the simulator's index of the
      // version counted its rows when it was taken.
      return index.rows();
    }
    List<String> keys = new ArrayList<>();
    for (Catalog.Column c : t.keyColumns()) {
      keys.add(c.name());
    }
    long rows = 0;
    try (CloseableIterator<List<Object>> it =
        readTable(
            new TableQuery(
                schema,
                table,
                List.of(),
                keys,
                Optional.empty(),
                Optional.empty(),
                IsolationLevel.READ_COMMITTED))) {
      while (it.hasNext()) {
        it.next();
        rows++;
      }
    }
    return rows;
  }

  /** The key tuples of the whole table in key order, as {@link #readTable} reads them. */
  private CloseableIterator<List<Object>> keyStream(
      String schema, String table, List<String> keyColumns, IsolationLevel isolation) {
    return readTable(
        new TableQuery(
            schema, table, keyColumns, keyColumns, Optional.empty(), Optional.empty(), isolation));
  }

  /** A complete key index of a table's current file version, and the table's key columns. */
  private record KeyIndex(Path file, List<Catalog.Column> keys, SourceTableIndex index) {}

  /**
   * The complete index of the current version of {@code schema.table}'s file ({@link
   * SourceTableIndex#current}), when {@code keyColumn} is the table's one key column (so that the
   * index's order is the column's); else null, and the queries read the table.
   */
  private KeyIndex keyIndex(String schema, String table, String keyColumn) {
    return keyIndex(schema, table, List.of(keyColumn));
  }

  /**
   * The complete index of the current version of {@code schema.table}'s file ({@link
   * SourceTableIndex#current}), when {@code keyColumns} are the table's key columns in key order
   * (so that the index's order is theirs); else null, and the queries read the table.
   */
  private KeyIndex keyIndex(String schema, String table, List<String> keyColumns) {
    Catalog.Table t = catalog().tables.get(Catalog.key(schema, table));
    if (t == null || t.keyColumns().size() != keyColumns.size()) {
      return null;
    }
    for (int i = 0; i < keyColumns.size(); i++) {
      if (!t.keyColumns().get(i).name().equalsIgnoreCase(keyColumns.get(i))) {
        return null;
      }
    }
    Path file = directory.resolve(FakeFormat.sourceTableFile(t.schema, t.name));
    SourceTableIndex index = SourceTableIndex.current(file, t.keyColumns(), keyOf(t.keyColumns()));
    return index == null ? null : new KeyIndex(file, t.keyColumns(), index);
  }

  /** A key tuple's values as {@link #readTable} returns them. */
  private static List<Object> readerValues(KeyTuple key) {
    List<Object> values = new ArrayList<>(key.values().size());
    for (Object v : key.values()) {
      values.add(SqlValues.readerValue(v));
    }
    return values;
  }

  /**
   * {@link #keyBound} from the table's key index: the rows below the lower bound (0 without one)
   * plus n is the row whose key is the answer, unless it is at or past the rows below the upper
   * bound (the version's rows without one). Empty (the caller reads the table) when no complete
   * index of the current version is cached or beside the file, or {@code keyColumns} are not the
   * table's key in order.
   */
  private Optional<Optional<List<Object>>> keyBoundFromIndex(
      String schema,
      String table,
      List<String> keyColumns,
      Optional<List<Object>> lowerInclusive,
      Optional<List<Object>> upperExclusive,
      long n) {
    KeyIndex indexed = keyIndex(schema, table, keyColumns);
    if (indexed == null) {
      return Optional.empty();
    }
    SourceTableIndex index = indexed.index();
    List<Catalog.Column> keys = indexed.keys();
    SourceTableIndex.Version version = SourceTableIndex.openVersion(indexed.file());
    if (version.channel() == null) {
      return Optional.empty();
    }
    try (java.nio.channels.FileChannel channel = version.channel()) {
      if (!index.stamp.equals(version.stamp())) {
        return Optional.empty();
      }
      BiFunction<JsonNode, String, KeyTuple> keyOf = keyOf(keys);
      long first =
          lowerInclusive.isPresent()
              ? index.rowsBelow(indexed.file(), channel, bound(keys, lowerInclusive.get()), keyOf)
              : 0;
      long end =
          upperExclusive.isPresent()
              ? index.rowsBelow(indexed.file(), channel, bound(keys, upperExclusive.get()), keyOf)
              : index.rows();
      if (n >= end - first) {
        return Optional.of(Optional.empty());
      }
      KeyTuple key = index.keyAt(indexed.file(), channel, first + n, keyOf);
      return Optional.of(key == null ? Optional.empty() : Optional.of(readerValues(key)));
    } catch (IOException | IllegalArgumentException e) {
      // A bound the key's types refuse, a file that cannot be read now: read the table as the
      // query would, which raises what there is to raise.
      return Optional.empty();
    }
  }

  /**
   * {@link #keySlices} from the table's key index, as a {@code GROUP BY} over a seek of the key's
   * index: each slice's rows are the rows below its end less the rows below its start, each found
   * from the index entry before it by parsing at most {@value SourceTableIndex#EVERY} lines. Null
   * (the caller reads the table) when no complete index of the current version is cached, the key
   * is not one integer column, or the slices are so many that reading the table costs less.
   */
  private SortedMap<Long, Long> keySlicesFromIndex(
      String schema, String table, String keyColumn, long width, long low, long high) {
    KeyIndex indexed = keyIndex(schema, table, keyColumn);
    if (indexed == null || low > high || high == Long.MAX_VALUE) {
      return null;
    }
    SourceTableIndex index = indexed.index();
    long firstSlice = Math.floorDiv(low, width);
    long lastSlice = Math.floorDiv(high, width);
    long slices = lastSlice - firstSlice + 1;
    if (slices <= 0 || slices > index.rows() / (2L * SourceTableIndex.EVERY)) {
      return null;
    }
    String type = indexed.keys().get(0).type().name();
    if (!Set.of("tinyint", "smallint", "int", "bigint").contains(type)) {
      return null;
    }
    SourceTableIndex.Version version = SourceTableIndex.openVersion(indexed.file());
    if (version.channel() == null) {
      return null;
    }
    try (java.nio.channels.FileChannel channel = version.channel()) {
      if (!index.stamp.equals(version.stamp())) {
        return null;
      }
      List<Catalog.Column> keys = indexed.keys();
      BiFunction<JsonNode, String, KeyTuple> keyOf =
          (n, where) -> KeyTuple.of(keys, Arrays.asList(stored(n, keys.get(0), where)));
      TreeMap<Long, Long> out = new TreeMap<>();
      long below = index.rowsBelow(indexed.file(), channel, bound(keys, List.of(low)), keyOf);
      for (long slice = firstSlice; slice <= lastSlice; slice++) {
        long end = Math.min(high, Math.multiplyExact(slice + 1, width) - 1);
        long belowNext =
            index.rowsBelow(indexed.file(), channel, bound(keys, List.of(end + 1)), keyOf);
        if (belowNext > below) {
          out.put(slice, belowNext - below);
        }
        below = belowNext;
      }
      return Collections.unmodifiableSortedMap(out);
    } catch (IOException | ArithmeticException | IllegalArgumentException e) {
      // A bound outside the column's type, a file that cannot be read now: read the table as the
      // query would, which raises what there is to raise.
      return null;
    }
  }

  /**
   * Calls {@code action} with each non-NULL value of one key column over the whole table, in key
   * order, as {@link #readTable} reads them.
   */
  private void forEachKeyValue(
      String schema,
      String table,
      String keyColumn,
      IsolationLevel isolation,
      Consumer<Object> action) {
    try (CloseableIterator<List<Object>> keys =
        keyStream(schema, table, List.of(keyColumn), isolation)) {
      while (keys.hasNext()) {
        Object v = keys.next().get(0);
        if (v != null) {
          action.accept(v);
        }
      }
    }
  }

  /** {@code Key column '<keyColumn>' of <schema>.<table>}, for messages. */
  private static String keyColumnName(String schema, String table, String keyColumn) {
    return "Key column '" + keyColumn + "' of " + schema + "." + table;
  }

  private static void requireWidth(long width) {
    if (width < 1) {
      throw new IllegalArgumentException("width must be at least 1, got " + width);
    }
  }

  private static void requireKeys(String schema, String table, List<String> keyColumns) {
    if (keyColumns.isEmpty()) {
      throw new IllegalArgumentException(
          "Key queries of " + schema + "." + table + " need at least one key column");
    }
  }

  private static KeyTuple bound(List<Catalog.Column> keys, List<Object> values) {
    if (values.size() != keys.size()) {
      throw new IllegalArgumentException(
          "A key bound needs " + keys.size() + " value(s), got " + values.size());
    }
    List<Object> stored = new ArrayList<>();
    for (int i = 0; i < keys.size(); i++) {
      Catalog.Column k = keys.get(i);
      stored.add(SqlValues.normalize(k.name(), k.type(), values.get(i)));
    }
    return KeyTuple.of(keys, stored);
  }

  /**
   * The reader's key of a parsed line under {@code keys}, given the line's {@code <file>:<line>}:
   * each key column's stored value, a value the reader refuses raising a {@link CdcException} that
   * names the line.
   */
  private static BiFunction<JsonNode, String, KeyTuple> keyOf(List<Catalog.Column> keys) {
    return (n, where) -> {
      List<Object> keyValues = new ArrayList<>(keys.size());
      for (Catalog.Column k : keys) {
        keyValues.add(stored(n, k, where));
      }
      return KeyTuple.of(keys, keyValues);
    };
  }

  private static Object stored(JsonNode row, Catalog.Column c, String where) {
    if (c.computed()) {
      return null;
    }
    try {
      return SqlValues.fromJson(c.name(), c.type(), FakeSqlServer.field(row, c.name()));
    } catch (IllegalArgumentException e) {
      throw new CdcException(where + ": " + e.getMessage(), e);
    }
  }

  /** Closes the client; later calls raise {@link IllegalStateException}. */
  @Override
  public void close() {
    closed = true;
  }

  // ---- helpers --------------------------------------------------------------------------------

  private void ensureOpen() {
    if (closed) {
      throw new IllegalStateException("This FileBackedCdcClient is closed");
    }
  }

  private Catalog catalog() {
    ensureOpen();
    return ReaderCache.catalog(directory);
  }

  private ReaderCache.Mapping mapping() {
    ensureOpen();
    return ReaderCache.mapping(directory);
  }

  /** The mapping in LSN order, converted to UTC as one sequence (the fall-back rule needs it). */
  private ReaderCache.Timeline timeline() {
    return timeline(mapping());
  }

  private ReaderCache.Timeline timeline(ReaderCache.Mapping mapping) {
    return mapping.timeline(ReaderCache.server(directory).server().timeZone);
  }

  /** Exact name, then the one name equal ignoring case; null when none. */
  private static Catalog.Instance find(Catalog catalog, String name) {
    Objects.requireNonNull(name, "captureInstance");
    // The T-SQL client refuses a name it could not inline safely before asking SQL Server; the
    // simulator refuses the same names the same way, so both sides of CdcClient agree.
    SqlIdentifiers.captureInstance(name);
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
    if (matches.size() > 1) {
      throw new CdcException(
          "Capture instance '"
              + name
              + "' matches "
              + matches.stream().map(i -> "'" + i.name + "'").toList()
              + " ignoring case; use the exact name");
    }
    return matches.isEmpty() ? null : matches.get(0);
  }

  private static Catalog.Instance resolve(Catalog catalog, String name) {
    Catalog.Instance instance = find(catalog, name);
    if (instance == null) {
      throw notFound(catalog, name);
    }
    return instance;
  }

  private static CaptureInstanceNotFoundError notFound(Catalog catalog, String name) {
    return new CaptureInstanceNotFoundError(name, new ArrayList<>(catalog.instances.keySet()));
  }

  private static <A, B> CloseableIterator<B> map(
      CloseableIterator<A> source, java.util.function.Function<A, B> f) {
    return new CloseableIterator<>() {
      @Override
      public boolean hasNext() {
        return source.hasNext();
      }

      @Override
      public B next() {
        return f.apply(source.next());
      }

      @Override
      public void close() {
        source.close();
      }
    };
  }

  /**
   * Streams the objects of a JSON Lines file through {@link #parse}, which returns null to skip a
   * line and may {@code finish()} early. Closes the file at the end and on {@link #close()}.
   */
  private abstract static class LineIterator<T> extends LookAheadIterator<T> {
    private final FakeFormat.JsonLines lines;

    LineIterator(FakeFormat.JsonLines lines) {
      this.lines = lines;
    }

    abstract T parse(JsonNode node);

    /** Called once when the file's last line has been read (not after an early finish). */
    void atEnd() {}

    @Override
    protected T computeNext() {
      JsonNode node = lines.next();
      if (node == null) {
        atEnd();
        finish();
        return null;
      }
      return parse(node);
    }

    @Override
    protected void release() {
      lines.close();
    }
  }
}
