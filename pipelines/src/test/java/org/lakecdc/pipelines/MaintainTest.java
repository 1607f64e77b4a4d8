package org.lakecdc.pipelines;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.beam.sdk.schemas.Schema;
import org.apache.beam.sdk.values.Row;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.io.mssqlcdc.schema.OutputType;
import org.lakecdc.transforms.delta.CommitResult;
import org.lakecdc.transforms.delta.DeltaColumn;
import org.lakecdc.transforms.delta.DeltaTables;
import org.lakecdc.transforms.delta.TableDefinition;
import org.lakecdc.transforms.delta.TableKind;
import org.lakecdc.transforms.facts.FactsTable;
import org.lakecdc.transforms.history.HistoryTable;

/**
 * {@link Maintain}: vacuum of the files a killed run left in bronze, compaction then vacuum of
 * facts, exact counts printed, and bad options refused with one line, exit code 2, nothing written
 * (docs/status.md "maintain").
 */
class MaintainTest {
  @TempDir Path dir;

  private final DeltaTables tables = DeltaTables.create();

  private static final List<DeltaColumn> COLUMNS =
      List.of(DeltaColumn.nullable("id", OutputType.INT, null));
  private static final Schema SCHEMA = DeltaColumn.toBeamSchema(COLUMNS);

  private StatusTest.Output maintain(Clock clock, String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int code;
    try (PrintStream o = new PrintStream(out, true, StandardCharsets.UTF_8);
        PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8)) {
      code = Maintain.run(args, o, e, clock);
    }
    return new StatusTest.Output(
        code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  /** Two hours from now: files written by the test are older than a one-hour retention. */
  private static Clock later() {
    return Clock.offset(Clock.system(ZoneOffset.UTC), Duration.ofHours(2));
  }

  private static List<Row> ids(int... ids) {
    List<Row> rows = new ArrayList<>();
    for (int id : ids) {
      rows.add(Row.withSchema(SCHEMA).addValue(id).build());
    }
    return rows;
  }

  private static List<Path> parquetFiles(String table) throws IOException {
    try (Stream<Path> files = Files.list(Path.of(table))) {
      return files.filter(p -> p.toString().endsWith(".parquet")).sorted().toList();
    }
  }

  /** A bronze table with two committed batches and three files a killed run wrote, uncommitted. */
  private String bronzeWithOrphans(List<Path> orphans) throws IOException {
    String bronze = dir.resolve("delta/dbo_orders").toString();
    tables.createIfAbsent(bronze, TableDefinition.of(TableKind.BRONZE, COLUMNS));
    tables.append(bronze, SCHEMA, ids(1, 2), "dbo_orders", 0, Map.of());
    tables.append(bronze, SCHEMA, ids(3), "dbo_orders", 1, Map.of());
    List<Path> committed = parquetFiles(bronze);
    tables.writeDataFiles(bronze, SCHEMA, ids(4, 5));
    tables.writeDataFiles(bronze, SCHEMA, ids(6));
    tables.writeDataFiles(bronze, SCHEMA, ids(7, 8, 9));
    for (Path file : parquetFiles(bronze)) {
      if (!committed.contains(file)) {
        orphans.add(file);
      }
    }
    assertEquals(3, orphans.size());
    return bronze;
  }

  private static long bytes(List<Path> files) throws IOException {
    long total = 0;
    for (Path file : files) {
      total += Files.size(file);
    }
    return total;
  }

  @Test
  void vacuumDeletesTheFilesAKilledRunLeftInBronzeWithExactCounts() throws IOException {
    List<Path> orphans = new ArrayList<>();
    String bronze = bronzeWithOrphans(orphans);
    long orphanBytes = bytes(orphans);
    long version = tables.version(bronze);

    // Within the default retention (168 h) nothing is old enough to go.
    StatusTest.Output kept =
        maintain(Clock.systemUTC(), "--table=" + bronze, "--maintenance=vacuum");
    assertEquals(0, kept.code(), kept.err());
    assertEquals(
        List.of("Vacuum of " + bronze + ": 0 files deleted (0 bytes), 5 kept; retention 168 h"),
        kept.lines());

    StatusTest.Output dry =
        maintain(
            later(), "--table=" + bronze, "--maintenance=vacuum", "--retentionHours=1", "--dryRun");
    assertEquals(0, dry.code(), dry.err());
    assertEquals(
        List.of(
            String.format(
                "Vacuum of %s (dry run): 3 files to delete (%,d bytes), 2 kept; retention 1 h",
                bronze, orphanBytes)),
        dry.lines());
    assertEquals(5, parquetFiles(bronze).size());

    StatusTest.Output vacuumed =
        maintain(later(), "--table=" + bronze, "--maintenance=vacuum", "--retentionHours=1");
    assertEquals(0, vacuumed.code(), vacuumed.err());
    assertEquals(
        List.of(
            String.format(
                "Vacuum of %s: 3 files deleted (%,d bytes), 2 kept; retention 1 h",
                bronze, orphanBytes)),
        vacuumed.lines());
    assertEquals(2, parquetFiles(bronze).size());
    for (Path orphan : orphans) {
      assertFalse(Files.exists(orphan), orphan.toString());
    }
    // The committed rows and the log are untouched.
    assertEquals(version, tables.version(bronze));
    assertEquals(
        List.of(1, 2, 3),
        tables.scan(bronze).stream().map(r -> (Integer) r.get("id")).sorted().toList());
  }

  @Test
  void compactThenVacuumLeavesFactsOneFileWithTheSameRowsAndReplaysStillSkipped()
      throws IOException {
    String facts = dir.resolve("delta/facts").toString();
    tables.createIfAbsent(facts, FactsTable.definition());
    for (long id = 0; id < 12; id++) {
      Row row =
          FactsTable.row()
              .set(FactsTable.APP_ID, "dbo_orders")
              .set(FactsTable.BATCH_ID, id)
              .set(FactsTable.ROWS, 100 + id)
              .build();
      tables.append(facts, FactsTable.SCHEMA, List.of(row), "dbo_orders", id, Map.of());
    }
    List<Path> batchFiles = parquetFiles(facts);
    assertEquals(12, batchFiles.size());
    long batchBytes = bytes(batchFiles);

    StatusTest.Output done =
        maintain(later(), "--table=" + facts, "--maintenance=vacuum,compact", "--retentionHours=1");

    assertEquals(0, done.code(), done.err());
    assertEquals(
        List.of(
            "Compaction of "
                + facts
                + ": 12 small files into 1 (12 rows), version 14; 1 data"
                + " file now",
            String.format(
                "Vacuum of %s: 12 files deleted (%,d bytes), 1 kept; retention 1 h",
                facts, batchBytes)),
        done.lines());
    assertEquals(1, parquetFiles(facts).size());
    assertEquals(
        List.of(100L, 101L, 102L, 103L, 104L, 105L, 106L, 107L, 108L, 109L, 110L, 111L),
        tables.scan(facts).stream().map(r -> (Long) r.get(FactsTable.ROWS)).toList());
    Row replay = FactsTable.row().set(FactsTable.APP_ID, "dbo_orders").build();
    assertEquals(
        CommitResult.Status.ALREADY_COMMITTED,
        DeltaTables.create()
            .append(facts, FactsTable.SCHEMA, List.of(replay), "dbo_orders", 11, Map.of())
            .status());

    StatusTest.Output again =
        maintain(later(), "--table=" + facts, "--maintenance=compact", "--retentionHours=1");
    assertEquals(
        List.of("Compaction of " + facts + ": nothing to compact (1 data file)"), again.lines());
  }

  /**
   * A history's small files of closed versions and of current ones are compacted each kind on its
   * own, as {@code ApplyChanges --history --maintenance=compact} does: the small-file compaction of
   * bronze, facts and control would pack all four into one file of both kinds.
   */
  @Test
  void compactOfAHistoryKeepsClosedAndCurrentVersionsInFilesApart() {
    String history = dir.resolve("delta/history").toString();
    Schema schema =
        HistoryTable.schema(
            DeltaColumn.toBeamSchema(
                List.of(
                    DeltaColumn.nullable("id", OutputType.INT, null),
                    DeltaColumn.nullable("name", OutputType.STRING, null))));
    tables.createIfAbsent(
        history,
        HistoryTable.definition(
            schema, dir.resolve("delta/bronze").toString(), Set.of("dbo_t"), List.of()));
    LocalDateTime t = LocalDateTime.of(2026, 11, 1, 8, 30);
    int[][] files = {{1, 2}, {3, 4}, {5}, {6}};
    for (int f = 0; f < files.length; f++) {
      boolean closed = f % 2 == 0;
      List<Row> rows = new ArrayList<>();
      for (int id : files[f]) {
        Map<String, Object> values = new HashMap<>();
        values.put("id", id);
        values.put("name", "n" + id);
        values.put(HistoryTable.VALID_FROM_LSN, "0000002a000000100001");
        values.put(HistoryTable.VALID_FROM_TS, t);
        values.put(HistoryTable.VALID_TO_LSN, closed ? "0000002a000000200001" : null);
        values.put(HistoryTable.VALID_TO_TS, closed ? t.plusMinutes(1) : null);
        values.put(HistoryTable.DELETED, false);
        rows.add(Row.withSchema(schema).withFieldValues(values).build());
      }
      tables.append(history, schema, rows, null, 0, Map.of());
    }
    assertEquals(
        List.of(
            HistoryTable.FileKind.CLOSED,
            HistoryTable.FileKind.CLOSED,
            HistoryTable.FileKind.CURRENT,
            HistoryTable.FileKind.CURRENT),
        tables.dataFileDetails(history).stream().map(HistoryTable::fileKind).sorted().toList());

    StatusTest.Output done = maintain(later(), "--table=" + history, "--maintenance=compact");

    assertEquals(0, done.code(), done.err());
    assertEquals(
        List.of(
            "Compaction of "
                + history
                + ": 4 small files into 2 (6 rows), version 6; 2 data files now"),
        done.lines());
    assertEquals(
        Set.of(HistoryTable.FileKind.CLOSED, HistoryTable.FileKind.CURRENT),
        tables.dataFileDetails(history).stream()
            .map(HistoryTable::fileKind)
            .collect(Collectors.toSet()));
    assertEquals(2, tables.dataFileDetails(history).size());
    assertEquals(
        List.of(1, 2, 3, 4, 5, 6),
        tables.scan(history).stream().map(r -> (Integer) r.get("id")).sorted().toList());
  }

  @Test
  void jsonToAFileGivesOneObjectPerTableAndMaintenance() throws IOException {
    String facts = dir.resolve("delta/facts").toString();
    tables.createIfAbsent(facts, FactsTable.definition());
    for (long id = 0; id < 3; id++) {
      Row row = FactsTable.row().set(FactsTable.APP_ID, "a").set(FactsTable.BATCH_ID, id).build();
      tables.append(facts, FactsTable.SCHEMA, List.of(row), "a", id, Map.of());
    }
    long batchBytes = bytes(parquetFiles(facts));
    Path json = dir.resolve("maintain.json");

    StatusTest.Output done =
        maintain(
            later(),
            "--table=" + facts,
            "--maintenance=compact,vacuum",
            "--retentionHours=1",
            "--json",
            "--output=" + json);

    assertEquals(0, done.code(), done.err());
    assertEquals("", done.out());
    assertEquals(
        List.of(
            "{\"table\":\""
                + facts
                + "\",\"maintenance\":\"compact\",\"committed\":true,\"version\":5,"
                + "\"files_removed\":3,\"files_added\":1,\"rows\":3,\"files_after\":1}",
            "{\"table\":\""
                + facts
                + "\",\"maintenance\":\"vacuum\",\"dry_run\":false,\"files_deleted\":3,"
                + "\"bytes\":"
                + batchBytes
                + ",\"files_kept\":1,\"retention_hours\":1}"),
        Files.readAllLines(json));
  }

  @Test
  void badOptionsAreOneLineExitCode2AndNothingWritten() throws IOException {
    List<Path> orphans = new ArrayList<>();
    String bronze = bronzeWithOrphans(orphans);
    long version = tables.version(bronze);
    Path log = dir.resolve("delta/lakecdc.log");

    StatusTest.Output zero =
        maintain(later(), "--table=" + bronze, "--maintenance=vacuum", "--retentionHours=0");
    assertEquals(2, zero.code());
    assertEquals("", zero.out());
    assertEquals(
        "error: --retentionHours must be a whole number of hours, at least 1 (a shorter retention"
            + " can delete the files of a write in flight), not '0'\n",
        zero.err());

    StatusTest.Output word = maintain(later(), "--table=" + bronze, "--maintenance=defrag");
    assertEquals(2, word.code());
    assertEquals(
        "error: --maintenance must be vacuum, compact or compact,vacuum, not 'defrag'\n",
        word.err());

    StatusTest.Output none = maintain(later(), "--table=" + bronze);
    assertEquals(2, none.code());
    assertEquals(
        "error: --maintenance is required: vacuum, compact or compact,vacuum\n", none.err());

    String missing = dir.resolve("delta/nothing").toString();
    StatusTest.Output absent =
        maintain(later(), "--table=" + bronze + "," + missing, "--maintenance=compact,vacuum");
    assertEquals(2, absent.code());
    assertEquals(
        "error: --table "
            + missing
            + " holds no Delta table (no _delta_log with a commit): give the path or URI of a"
            + " table the job wrote\n",
        absent.err());

    assertEquals(5, parquetFiles(bronze).size());
    assertEquals(version, tables.version(bronze));
    assertFalse(Files.exists(log), "no log file for a refused run");
    assertFalse(Files.exists(Path.of(missing)));
  }
}
