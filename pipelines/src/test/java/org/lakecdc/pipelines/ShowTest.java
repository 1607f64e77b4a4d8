package org.lakecdc.pipelines;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.beam.sdk.schemas.Schema;
import org.apache.beam.sdk.values.Row;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.io.mssqlcdc.schema.MetadataColumns;
import org.lakecdc.transforms.delta.DeltaColumn;

/**
 * {@link Show} on the tables of a real job run: a bronze table's first rows by the bronze order key
 * (also when the stored order differs), other tables in stored order, and the bad-option lines.
 */
@Timeout(300)
class ShowTest {
  @TempDir Path dir;

  private static StatusTest.Output show(String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int code;
    try (PrintStream o = new PrintStream(out, true, StandardCharsets.UTF_8);
        PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8)) {
      code = Show.run(args, o, e);
    }
    return new StatusTest.Output(
        code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  /**
   * The history run, then a bronze row appended last whose LSN is before every change: the stored
   * order is no longer the bronze order.
   */
  private JobFixture runWithALateEarlyRow() {
    JobFixture f = JobFixture.history(dir);
    f.run();
    Schema schema = DeltaColumn.toBeamSchema(f.tables.describe(f.bronze).columns());
    Map<String, Object> values = new HashMap<>();
    values.put(MetadataColumns.CAPTURE_INSTANCE, JobFixture.CI);
    values.put(MetadataColumns.START_LSN, "0x00000029000000000001");
    values.put(MetadataColumns.SEQVAL, "0x00000029000000000002");
    values.put(MetadataColumns.OPERATION, 2);
    values.put(MetadataColumns.COMMAND_ID, 1);
    values.put(MetadataColumns.COMMIT_TS, LocalDateTime.of(2026, 9, 28, 13, 0));
    values.put("order_id", 7);
    values.put("status", "late");
    List<Object> ordered = new ArrayList<>();
    for (Schema.Field field : schema.getFields()) {
      ordered.add(values.get(field.getName()));
    }
    f.tables.append(
        f.bronze,
        schema,
        List.of(Row.withSchema(schema).addValues(ordered).build()),
        null,
        0,
        Map.of());
    return f;
  }

  @Test
  void bronzeRowsComeInBronzeOrderUpToTheLimitAsJsonLines() throws Exception {
    JobFixture f = runWithALateEarlyRow();
    StatusTest.Output shown = show("--table=" + f.bronze, "--limit=4", "--json");
    assertEquals(0, shown.code(), shown.err());
    ObjectMapper json = new ObjectMapper();
    List<String> keys = new ArrayList<>();
    for (String line : shown.lines()) {
      JsonNode row = json.readTree(line);
      keys.add(
          row.get("_start_lsn").asText()
              + "/"
              + row.get("_seqval").asText()
              + "/"
              + row.get("_operation").asInt()
              + "/"
              + row.get("order_id").asInt()
              + "/"
              + row.get("_batch_id").asText());
    }
    assertEquals(
        List.of(
            "0x00000029000000000001/0x00000029000000000002/2/7/null",
            "0x0000002A000001000001/0x0000002A000001000002/2/0/0",
            "0x0000002A000001000001/0x0000002A000001000003/2/1/0",
            "0x0000002A000001000001/0x0000002A000001000004/2/2/0"),
        keys);
    assertEquals(
        f.bronzeChanges().subList(0, 4),
        keys,
        "the same rows as every bronze row sorted by the fixture's oracle");

    java.nio.file.Path file = f.dir.resolve("rows.jsonl");
    StatusTest.Output toFile =
        show("--table=" + f.bronze, "--limit=4", "--json", "--output=" + file);
    assertEquals(0, toFile.code(), toFile.err());
    assertEquals("", toFile.out(), "nothing on standard output");
    assertEquals(
        shown.out(), java.nio.file.Files.readString(file), "--output holds what stdout would");
    StatusTest.Output unwritable =
        show("--table=" + f.bronze, "--output=" + f.dir.resolve("no/such/dir/rows.jsonl"));
    assertEquals(2, unwritable.code());
    assertEquals(
        "error: --output "
            + f.dir.resolve("no/such/dir/rows.jsonl")
            + " cannot be written: "
            + f.dir.resolve("no/such/dir/rows.jsonl"),
        unwritable.err().strip());
  }

  @Test
  void textHasAHeaderAndReadableValues() {
    JobFixture f = runWithALateEarlyRow();
    StatusTest.Output shown = show("--table=" + f.bronze, "--limit=2");
    assertEquals(0, shown.code(), shown.err());
    assertEquals(
        List.of(
            f.bronze
                + " (bronze): the first 2 rows by _start_lsn, _command_id, _seqval, _operation",
            "_capture_instance  _start_lsn              _seqval                 _operation  _command_id"
                + "  _commit_ts            order_id  status  amount  updated_at  _batch_id  _snapshot"
                + "  _chunk",
            "dbo_orders         0x00000029000000000001  0x00000029000000000002  2           1     "
                + "       2026-09-28T13:00:00Z  7         late    NULL    NULL        NULL       NULL "
                + "      NULL",
            "dbo_orders         0x0000002A000001000001  0x0000002A000001000002  2           1     "
                + "       2026-09-28T13:50:00Z  0         new     0.00    NULL        0          NULL "
                + "      NULL"),
        shown.lines());
  }

  /** The header counts rows as the rest of the output does: thousands separated by commas. */
  @Test
  void theHeaderCountsThousandsWithCommas() {
    JobFixture f = JobFixture.history(dir);
    f.run();
    Schema schema = DeltaColumn.toBeamSchema(f.tables.describe(f.bronze).columns());
    List<Row> rows = new ArrayList<>();
    for (int i = 0; i < 1_200; i++) {
      Map<String, Object> values = new HashMap<>();
      values.put(MetadataColumns.CAPTURE_INSTANCE, JobFixture.CI);
      values.put(MetadataColumns.START_LSN, String.format("0x0000002B%012X", i + 1));
      values.put(MetadataColumns.SEQVAL, String.format("0x0000002B%012X", i + 2));
      values.put(MetadataColumns.OPERATION, 2);
      values.put(MetadataColumns.COMMAND_ID, 1);
      values.put(MetadataColumns.COMMIT_TS, LocalDateTime.of(2026, 9, 28, 16, 0));
      values.put("order_id", 100 + i);
      values.put("status", "new");
      List<Object> ordered = new ArrayList<>();
      for (Schema.Field field : schema.getFields()) {
        ordered.add(values.get(field.getName()));
      }
      rows.add(Row.withSchema(schema).addValues(ordered).build());
    }
    f.tables.append(f.bronze, schema, rows, null, 0, Map.of());
    StatusTest.Output shown = show("--table=" + f.bronze, "--limit=1000");
    assertEquals(0, shown.code(), shown.err());
    assertEquals(1_002, shown.lines().size());
    assertEquals(
        f.bronze
            + " (bronze): the first 1,000 rows by _start_lsn, _command_id, _seqval, _operation",
        shown.lines().get(0));
  }

  @Test
  void otherTablesShowTheirFirstRowsInStoredOrder() {
    JobFixture f = JobFixture.history(dir);
    f.run();
    StatusTest.Output shown = show("--table=" + f.control, "--limit=1");
    assertEquals(0, shown.code(), shown.err());
    List<String> lines = shown.lines();
    assertEquals(3, lines.size(), shown.out());
    assertEquals(f.control + " (control): the first row in stored order", lines.get(0));
    assertEquals(
        List.of(
            "table_name",
            "finalized_until",
            "end_lsn",
            "end_commit_ts",
            "updated_at",
            "applied_lsn",
            "snapshot_lsn",
            "open_snapshot_lsn",
            "snapshot_wave",
            "lost_periods"),
        List.of(lines.get(1).split(" +")));
    List<String> cells = List.of(lines.get(2).split(" +"));
    String name = f.bronze.length() <= 40 ? f.bronze : f.bronze.substring(0, 37) + "...";
    assertEquals(
        List.of(name, "2026-09-28T15:00:00Z", "0x0000002A0000010000A1", "2026-09-28T15:55:00Z"),
        cells.subList(0, 4));
    assertTrue(
        cells.get(4).matches("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d(\\.\\d+)?Z"),
        "updated_at in ISO-8601 UTC: " + cells.get(4));
    assertEquals(List.of("NULL", "NULL", "NULL", "NULL", "NULL"), cells.subList(5, 10));
  }

  @Test
  void factsShowTheirOldestRowsFirstByWrittenAtAppIdAndBatch() {
    JobFixture f = JobFixture.history(dir);
    f.run();
    StatusTest.Output shown = show("--table=" + f.facts, "--limit=2");
    assertEquals(0, shown.code(), shown.err());
    List<String> lines = shown.lines();
    assertEquals(4, lines.size(), shown.out());
    assertEquals(
        f.facts + " (facts): the first 2 rows by written_at, app_id, batch_id", lines.get(0));
    List<String> firstCells = new ArrayList<>();
    for (String line : lines.subList(2, 4)) {
      List<String> cells = List.of(line.split(" +"));
      firstCells.add(cells.get(0) + " " + cells.get(1) + " " + cells.get(2));
    }
    assertEquals(List.of("dbo_orders 0 12", "dbo_orders 1 12"), firstCells);
  }

  @Test
  void badOptionsAreOneLineNamingTheOption() {
    String missing = dir.resolve("nowhere").toString();
    StatusTest.Output noOption = show("--limit=3");
    assertEquals(2, noOption.code());
    assertEquals(
        "error: --table is required: the path or URI of the Delta table to print\n",
        noOption.err());
    StatusTest.Output noTable = show("--table=" + missing);
    assertEquals(2, noTable.code());
    assertEquals(
        "error: --table "
            + missing
            + " holds no Delta table (no _delta_log with a commit): give the path or URI of a table"
            + " the job wrote\n",
        noTable.err());
    StatusTest.Output zero = show("--table=" + missing, "--limit=0");
    assertEquals(2, zero.code());
    assertEquals("error: --limit must be a positive integer, not '0'\n", zero.err());
    StatusTest.Output text = show("--table=" + missing, "--limit=ten");
    assertEquals(2, text.code());
    assertEquals("error: --limit must be a positive integer, not 'ten'\n", text.err());
    assertEquals("", text.out());
  }
}
