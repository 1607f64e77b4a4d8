package org.lakecdc.io.mssqlcdc.fake;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.lakecdc.io.mssqlcdc.client.CaptureInstance;
import org.lakecdc.io.mssqlcdc.client.CdcClient;
import org.lakecdc.io.mssqlcdc.client.CdcException;
import org.lakecdc.io.mssqlcdc.client.ChangeQuery;
import org.lakecdc.io.mssqlcdc.client.ChangeRow;
import org.lakecdc.io.mssqlcdc.client.CloseableIterator;
import org.lakecdc.io.mssqlcdc.client.Commit;
import org.lakecdc.io.mssqlcdc.client.DdlChange;
import org.lakecdc.io.mssqlcdc.client.IsolationLevel;
import org.lakecdc.io.mssqlcdc.client.TableQuery;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.io.mssqlcdc.schema.CapturedColumn;

/**
 * Exports a database's CDC history, read through any {@link CdcClient} (the T-SQL client on a real
 * SQL Server, or the simulator's reader), into a new directory in the simulator's format
 * (docs/fake-format.md), for offline replay: point a job's {@code --fakePath} at it, or replay it
 * step by step into a simulator database with {@link FakeReplay}.
 *
 * <p>What is written, for the capture instances asked for and every other instance of their tables
 * ({@link CdcClient#captureInstances}):
 *
 * <ul>
 *   <li>{@code cdc.lsn_time_mapping}: every commit (idle entries and other tables' commits
 *       included) with {@code fromLsn <= start_lsn <= toLsn}, found one {@link
 *       CdcClient#nthCommitAfter} call per commit; {@code tran_end_time} is the client's UTC commit
 *       time, and {@code server.json}'s {@code time_zone} is {@code UTC}, so every commit reads
 *       back at the same instant (the server's zone and its daylight-saving repeats are not kept;
 *       {@code tran_begin_time} and {@code tran_id}, which the client does not read, are left out).
 *   <li>{@code cdc.change_tables}: each instance with {@code start_lsn} = the later of its {@code
 *       sys.fn_cdc_get_min_lsn} and {@code fromLsn} (a range that starts later reads as a cleanup
 *       did), its {@code create_date} as the server reports it (server-local), its key columns; the
 *       captured columns of {@code sys.sp_cdc_get_captured_columns}.
 *   <li>{@code cdc.ddl_history}: the DDL of {@code sys.sp_cdc_get_ddl_history} with {@code fromLsn
 *       <= ddl_lsn <= toLsn}, {@code ddl_time} = the commit time of the last commit at or before it
 *       (the client does not read {@code ddl_time}).
 *   <li>each change table: every row with {@code __$start_lsn} in the range and at or after the
 *       instance's min LSN, with {@code __$command_id}, in the change table's order.
 *   <li>{@code sys.tables}, {@code sys.columns}: per table, the columns its instances capture (the
 *       newest instance's type; key columns from the instance's unique index), with SQL Server's
 *       default collation {@code SQL_Latin1_General_CP1_CI_AS} (the client does not read
 *       collations). Columns no instance captures are not exported.
 *   <li>{@code <schema>.<table>.jsonl} (with {@code tableRows}): the table's current rows as the
 *       client reads them now (the table after every commit so far, not as of {@code toLsn}), in
 *       the simulator's key order. A table the client cannot read (no {@code SELECT} permission) is
 *       exported without rows and named in {@link Summary#tablesWithoutRows()}.
 * </ul>
 *
 * <p>The directory is written whole: into the hidden sibling {@code .<name>.exporting}, renamed
 * into place when complete; a failed export leaves nothing at {@code directory}. Rows are never all
 * held in memory except a table's current rows, which are sorted before they are written.
 */
public final class FakeExport {
  private FakeExport() {}

  /**
   * What an export wrote.
   *
   * @param directory the export's directory
   * @param captureInstances the instances exported, by table (oldest first), in the order asked
   * @param tables the source tables, {@code schema.table}
   * @param firstCommit the first commit exported, if any
   * @param lastCommit the last commit exported, if any
   * @param commits rows of {@code cdc.lsn_time_mapping} written
   * @param changeRows change rows written, all instances together
   * @param ddlRows rows of {@code cdc.ddl_history} written, all instances together
   * @param tableRows source rows written, all tables together
   * @param tablesWithoutRows tables whose rows the client could not read (or {@code tableRows} was
   *     false)
   */
  public record Summary(
      Path directory,
      List<String> captureInstances,
      List<String> tables,
      Optional<Commit> firstCommit,
      Optional<Commit> lastCommit,
      long commits,
      long changeRows,
      long ddlRows,
      long tableRows,
      List<String> tablesWithoutRows) {
    public Summary {
      captureInstances = List.copyOf(captureInstances);
      tables = List.copyOf(tables);
      tablesWithoutRows = List.copyOf(tablesWithoutRows);
    }
  }

  /**
   * Exports the history of {@code captureInstances} (and the other instances of their tables) with
   * commit LSNs in {@code [fromLsn, toLsn]} into {@code directory}.
   *
   * @param client the source; not closed here
   * @param captureInstances at least one capture instance name
   * @param fromLsn first LSN exported (inclusive); empty for the lowest min LSN of the instances
   * @param toLsn last LSN exported (inclusive); empty for {@code sys.fn_cdc_get_max_lsn()}
   * @param tableRows whether to export the tables' current rows
   * @param directory a new or empty directory
   * @return what was written
   * @throws IllegalArgumentException when {@code directory} is a file or a non-empty directory,
   *     {@code captureInstances} is empty, or {@code fromLsn} is after {@code toLsn}
   * @throws org.lakecdc.io.mssqlcdc.client.CaptureInstanceNotFoundError for an unknown instance
   * @throws CdcException when the source fails or holds a value the simulator cannot store
   * @throws UncheckedIOException when the directory cannot be written
   */
  public static Summary export(
      CdcClient client,
      List<String> captureInstances,
      Optional<Lsn> fromLsn,
      Optional<Lsn> toLsn,
      boolean tableRows,
      Path directory) {
    if (captureInstances.isEmpty()) {
      throw new IllegalArgumentException("Name at least one capture instance to export");
    }
    requireNewOrEmpty(directory);
    Map<String, CaptureInstance> instances = new LinkedHashMap<>();
    for (String name : captureInstances) {
      for (CaptureInstance i : client.captureInstances(name.strip())) {
        instances.putIfAbsent(i.name().toLowerCase(Locale.ROOT), i);
      }
    }
    Lsn from = fromLsn.orElseGet(() -> lowestMinLsn(client, instances.values()));
    Optional<Lsn> max = client.maxLsn();
    Lsn to = toLsn.orElse(max.orElse(Lsn.ZERO));
    if (from.isAfter(to)) {
      throw new IllegalArgumentException(
          "The first LSN " + from + " is after the last LSN " + to + ": nothing to export");
    }
    Path parent = directory.toAbsolutePath().getParent();
    Path staging = parent.resolve("." + directory.getFileName() + ".exporting");
    deleteRecursively(staging);
    try {
      Files.createDirectories(staging);
      Summary summary = write(client, instances, from, to, tableRows, staging, directory);
      if (Files.isDirectory(directory)) {
        Files.delete(directory);
      }
      Files.move(staging, directory, StandardCopyOption.ATOMIC_MOVE);
      return summary;
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot write " + directory + ": " + e.getMessage(), e);
    } finally {
      deleteRecursively(staging);
    }
  }

  private static Summary write(
      CdcClient client,
      Map<String, CaptureInstance> instances,
      Lsn from,
      Lsn to,
      boolean tableRows,
      Path dir,
      Path directory)
      throws IOException {
    // cdc.lsn_time_mapping: every commit in [from, to], one call each.
    List<Commit> commits = new ArrayList<>();
    Lsn previous = client.decrementLsn(from);
    for (Optional<Commit> next = client.nthCommitAfter(previous, 1);
        next.isPresent() && !next.get().lsn().isAfter(to);
        next = client.nthCommitAfter(previous, 1)) {
      if (next.get().lsn().isBefore(from) || !next.get().lsn().isAfter(previous)) {
        break;
      }
      commits.add(next.get());
      previous = next.get().lsn();
    }
    Lsn last = commits.isEmpty() ? from : commits.get(commits.size() - 1).lsn();

    // Capture instances, their columns, DDL and change rows.
    Catalog catalog = new Catalog();
    Map<String, Catalog.Table> tables = new LinkedHashMap<>();
    Map<String, List<CapturedColumn>> captured = new LinkedHashMap<>();
    for (CaptureInstance i : instances.values()) {
      captured.put(i.name(), client.capturedColumns(i.name()));
      Catalog.Table t =
          tables.computeIfAbsent(
              Catalog.key(i.sourceSchema(), i.sourceTable()),
              k -> new Catalog.Table(i.sourceSchema(), i.sourceTable()));
      for (CapturedColumn c : captured.get(i.name())) {
        int keyOrdinal = indexOf(i.keyColumns(), c.name()) + 1;
        Catalog.Column existing = t.column(c.name());
        Catalog.Column column =
            new Catalog.Column(
                existing == null ? c.name() : existing.name(),
                existing == null ? t.maxColumnIdUsed + 1 : existing.columnId(),
                c.type(),
                c.computed(),
                keyOrdinal,
                Collation.of(c.name(), c.type(), null));
        if (existing == null) {
          t.maxColumnIdUsed++;
          t.columns.add(column);
        } else {
          t.columns.set(t.columns.indexOf(existing), column);
        }
      }
    }
    long changeRows = 0;
    long ddlRows = 0;
    List<JsonNode> ddl = new ArrayList<>();
    Lsn lastDdl = last;
    for (CaptureInstance i : instances.values()) {
      Catalog.Table t = tables.get(Catalog.key(i.sourceSchema(), i.sourceTable()));
      Catalog.Instance instance = new Catalog.Instance(i.name(), t.schema, t.name);
      Lsn minLsn = client.minLsn(i.name());
      instance.startLsn = Lsn.max(minLsn, from);
      instance.createDate = i.createDate().orElse(null);
      instance.supportsNetChanges = true;
      instance.indexName = "PK_" + t.name;
      List<String> names = new ArrayList<>();
      for (CapturedColumn c : captured.get(i.name())) {
        instance.columns.add(
            new Catalog.Captured(
                c.name(), t.column(c.name()).columnId(), c.ordinal(), c.type(), c.computed()));
        names.add(c.name());
      }
      int ordinal = 0;
      for (String key : i.keyColumns()) {
        Catalog.Column k = t.column(key);
        instance.indexColumns.add(
            new Catalog.IndexColumn(key, ++ordinal, k == null ? 0 : k.columnId()));
      }
      catalog.instances.put(instance.name, instance);
      for (DdlChange d : client.ddlHistory(i.name(), client.decrementLsn(from), to)) {
        DdlCommand effect = DdlCommand.parse(d.command());
        boolean captures = effect.column() != null && instance.column(effect.column()) != null;
        LocalDateTime time =
            d.commitTime()
                .or(
                    () ->
                        commits.isEmpty()
                            ? Optional.empty()
                            : Optional.of(commits.get(0).commitTime()))
                .map(FakeExport::utcLocal)
                .orElse(
                    instance.createDate == null
                        ? LocalDateTime.of(1900, 1, 1, 0, 0)
                        : instance.createDate);
        ddl.add(
            Catalog.ddlJson(
                new Catalog.DdlRow(
                    i.name(),
                    t.schema,
                    t.name,
                    d.lsn(),
                    d.command(),
                    time,
                    effect.kind() == DdlCommand.Kind.ALTER_COLUMN && captures)));
        lastDdl = Lsn.max(lastDdl, d.lsn());
        ddlRows++;
      }
      changeRows += writeChangeTable(client, instance, names, instance.startLsn, to, dir);
    }
    ddl.sort(Comparator.comparing((JsonNode n) -> Lsn.parse(n.get("ddl_lsn").asText())));

    // Source tables and their rows.
    List<String> withoutRows = new ArrayList<>();
    long rows = 0;
    for (Catalog.Table t : tables.values()) {
      catalog.tables.put(Catalog.key(t.schema, t.name), t);
      if (!tableRows) {
        withoutRows.add(t.qualified());
        continue;
      }
      TreeMap<KeyTuple, List<Object>> sorted;
      try {
        sorted = readRows(client, t);
      } catch (CdcException e) {
        withoutRows.add(t.qualified());
        continue;
      }
      rows += sorted.size();
      try (Writer out =
          Files.newBufferedWriter(dir.resolve(FakeFormat.sourceTableFile(t.schema, t.name)))) {
        for (List<Object> row : sorted.values()) {
          ObjectNode n = FakeFormat.object();
          for (int k = 0; k < t.columns.size(); k++) {
            Catalog.Column c = t.columns.get(k);
            n.set(c.name(), SqlValues.toJson(c.type(), row.get(k)));
          }
          out.write(FakeFormat.line(n));
          out.write('\n');
        }
      }
    }

    catalog.server.timeZone = java.time.ZoneId.of("UTC");
    catalog.server.nextLsn =
        Lsn.fromBigInteger(Lsn.max(last, lastDdl).toBigInteger().add(FakeSqlServer.LSN_STEP));
    catalog.server.clock = commits.isEmpty() ? null : commits.get(commits.size() - 1).commitTime();
    writeLines(dir.resolve(FakeFormat.SERVER), List.of(catalog.serverJson()));
    writeLines(dir.resolve(FakeFormat.SYS_TABLES), catalog.sysTables());
    writeLines(dir.resolve(FakeFormat.SYS_COLUMNS), catalog.sysColumns());
    writeLines(dir.resolve(FakeFormat.CHANGE_TABLES), catalog.changeTables());
    writeLines(dir.resolve(FakeFormat.CAPTURED_COLUMNS), catalog.capturedColumns());
    writeLines(dir.resolve(FakeFormat.INDEX_COLUMNS), catalog.indexColumns());
    writeLines(dir.resolve(FakeFormat.DDL_HISTORY), ddl);
    List<JsonNode> mapping = new ArrayList<>();
    for (Commit c : commits) {
      ObjectNode n = FakeFormat.object();
      n.put("start_lsn", c.lsn().toString());
      n.put("tran_end_time", FakeFormat.formatLocal(utcLocal(c.commitTime())));
      mapping.add(n);
    }
    writeLines(dir.resolve(FakeFormat.LSN_TIME_MAPPING), mapping);
    return new Summary(
        directory,
        instances.values().stream().map(CaptureInstance::name).toList(),
        tables.values().stream().map(Catalog.Table::qualified).toList(),
        commits.isEmpty() ? Optional.empty() : Optional.of(commits.get(0)),
        commits.isEmpty() ? Optional.empty() : Optional.of(commits.get(commits.size() - 1)),
        commits.size(),
        changeRows,
        ddlRows,
        rows,
        withoutRows);
  }

  /** Writes the change rows of one instance in {@code [from, to]}; returns how many. */
  private static long writeChangeTable(
      CdcClient client, Catalog.Instance instance, List<String> names, Lsn from, Lsn to, Path dir)
      throws IOException {
    long count = 0;
    if (from.isAfter(to)) {
      Files.writeString(dir.resolve(FakeFormat.changeTableFile(instance.name)), "");
      return 0;
    }
    try (Writer out =
            Files.newBufferedWriter(dir.resolve(FakeFormat.changeTableFile(instance.name)));
        CloseableIterator<ChangeRow> rows =
            client.readChanges(new ChangeQuery(instance.name, from, to, names, true))) {
      while (rows.hasNext()) {
        ChangeRow row = rows.next();
        ObjectNode n = FakeFormat.object();
        n.put(FakeFormat.START_LSN, row.startLsn().toString());
        n.put(FakeFormat.SEQVAL, row.seqval().toString());
        n.put(FakeFormat.OPERATION, row.operation());
        if (row.commandId() != null) {
          n.put(FakeFormat.COMMAND_ID, row.commandId());
        }
        for (int k = 0; k < instance.columns.size(); k++) {
          Catalog.Captured c = instance.columns.get(k);
          n.set(
              c.name(),
              json(instance.name, row.startLsn(), c.name(), c.type(), row.values().get(k)));
        }
        out.write(FakeFormat.line(n));
        out.write('\n');
        count++;
      }
    }
    return count;
  }

  /** A reader value as the format stores it, or a {@link CdcException} naming where it was. */
  private static JsonNode json(
      String instance,
      Lsn lsn,
      String column,
      org.lakecdc.io.mssqlcdc.schema.SqlServerType type,
      Object value) {
    try {
      return SqlValues.toJson(type, SqlValues.normalize(column, type, value));
    } catch (IllegalArgumentException e) {
      throw new CdcException(
          "Cannot export the change row of " + instance + " at " + lsn + ": " + e.getMessage(), e);
    }
  }

  /**
   * The table's current rows, keyed and ordered as the simulator orders them, values in the stored
   * form.
   */
  private static TreeMap<KeyTuple, List<Object>> readRows(CdcClient client, Catalog.Table t) {
    List<String> columns = t.columns.stream().map(Catalog.Column::name).toList();
    List<String> keys = t.keyColumns().stream().map(Catalog.Column::name).toList();
    TreeMap<KeyTuple, List<Object>> sorted = new TreeMap<>();
    try (CloseableIterator<List<Object>> rows =
        client.readTable(
            new TableQuery(
                t.schema,
                t.name,
                columns,
                keys,
                Optional.empty(),
                Optional.empty(),
                IsolationLevel.READ_COMMITTED))) {
      while (rows.hasNext()) {
        List<Object> values = rows.next();
        List<Object> stored = new ArrayList<>();
        List<Object> key = new ArrayList<>();
        for (int k = 0; k < t.columns.size(); k++) {
          Catalog.Column c = t.columns.get(k);
          Object v;
          try {
            v = c.computed() ? null : SqlValues.normalize(c.name(), c.type(), values.get(k));
          } catch (IllegalArgumentException e) {
            throw new IllegalStateException(
                "Cannot export a row of " + t.qualified() + ": " + e.getMessage(), e);
          }
          stored.add(v);
        }
        for (Catalog.Column k : t.keyColumns()) {
          key.add(stored.get(t.columns.indexOf(k)));
        }
        KeyTuple tuple = KeyTuple.of(t.keyColumns(), key);
        if (sorted.put(tuple, stored) != null) {
          throw new IllegalStateException(
              "Cannot export the rows of "
                  + t.qualified()
                  + ": two rows have keys equal under the simulator's collation "
                  + Collation.DEFAULT_NAME
                  + " "
                  + tuple);
        }
      }
    }
    return sorted;
  }

  private static Lsn lowestMinLsn(CdcClient client, Iterable<CaptureInstance> instances) {
    Lsn lowest = null;
    for (CaptureInstance i : instances) {
      Lsn min = client.minLsn(i.name());
      lowest = lowest == null ? min : Lsn.min(lowest, min);
    }
    return lowest == null ? Lsn.ZERO : lowest;
  }

  private static int indexOf(List<String> names, String name) {
    for (int k = 0; k < names.size(); k++) {
      if (names.get(k).equalsIgnoreCase(name)) {
        return k;
      }
    }
    return -1;
  }

  /** A UTC instant as a local date-time on the export's clock (UTC). */
  private static LocalDateTime utcLocal(Instant utc) {
    return LocalDateTime.ofInstant(utc, ZoneOffset.UTC);
  }

  private static void writeLines(Path file, List<JsonNode> nodes) throws IOException {
    try (Writer out = Files.newBufferedWriter(file)) {
      for (String line : FakeFormat.lines(nodes)) {
        out.write(line);
        out.write('\n');
      }
    }
  }

  /**
   * Refuses a file or a non-empty directory: an export or an import never writes over anything.
   *
   * @param directory the directory to write
   * @throws IllegalArgumentException {@code <directory> is a file, not a directory}, or {@code
   *     <directory> is not empty: give a new or empty directory}
   * @throws UncheckedIOException when the directory cannot be listed
   */
  public static void requireNewOrEmpty(Path directory) {
    if (Files.exists(directory) && !Files.isDirectory(directory)) {
      throw new IllegalArgumentException(directory + " is a file, not a directory");
    }
    if (Files.isDirectory(directory)) {
      try (Stream<Path> entries = Files.list(directory)) {
        if (entries.findAny().isPresent()) {
          throw new IllegalArgumentException(
              directory + " is not empty: give a new or empty directory");
        }
      } catch (IOException e) {
        throw new UncheckedIOException("Cannot list " + directory + ": " + e.getMessage(), e);
      }
    }
  }

  private static void deleteRecursively(Path path) {
    if (!Files.exists(path)) {
      return;
    }
    try (Stream<Path> walk = Files.walk(path)) {
      for (Path p : (Iterable<Path>) walk.sorted(Comparator.reverseOrder())::iterator) {
        Files.deleteIfExists(p);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot delete " + path + ": " + e.getMessage(), e);
    }
  }
}
