package org.lakecdc.pipelines;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.lakecdc.pipelines.JobFixture.ORDERS;
import static org.lakecdc.pipelines.JobFixture.at;
import static org.lakecdc.pipelines.JobFixture.order;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import org.apache.beam.sdk.values.Row;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.transforms.facts.FactsTable;
import org.lakecdc.transforms.snapshot.ChunkedSnapshotFacts;

/**
 * {@link Status} on the tables of real job runs (the {@link JobFixture} history on the simulator):
 * position, rows today under a fixed clock, the verdict, the lag against the source, failures and
 * snapshots, in text and JSON; and the one-line errors of bad options.
 */
@Timeout(300)
class StatusTest {
  @TempDir Path dir;

  /** What a command printed and returned. */
  record Output(int code, String out, String err) {
    List<String> lines() {
      return out.lines().toList();
    }
  }

  private Output status(Clock clock, String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int code;
    try (PrintStream o = new PrintStream(out, true, StandardCharsets.UTF_8);
        PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8)) {
      code = Status.run(args, o, e, clock, dir.resolve("no-demo-source"));
    }
    return new Output(
        code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  private static Clock clockAt(Instant instant) {
    return Clock.fixed(instant, ZoneOffset.UTC);
  }

  /** The written_at of the facts batch row {@code batchId} of the job's app id. */
  private static Instant writtenAt(JobFixture f, long batchId) {
    for (Row r : f.tables.scan(f.facts, FactsTable.SCHEMA)) {
      if (r.getString(FactsTable.EVENT) == null && r.getInt64(FactsTable.BATCH_ID) == batchId) {
        return r.getLogicalTypeValue(FactsTable.WRITTEN_AT, LocalDateTime.class)
            .toInstant(ZoneOffset.UTC);
      }
    }
    throw new AssertionError("no batch row " + batchId);
  }

  private static void appendFacts(JobFixture f, Row... rows) {
    f.tables.append(f.facts, FactsTable.SCHEMA, List.of(rows), null, 0, Map.of());
  }

  private static Row failure(JobFixture f, String lsn, Instant writtenAt, String detail) {
    return FactsTable.row()
        .set(FactsTable.APP_ID, JobFixture.CI)
        .set(FactsTable.EVENT, FactsTable.EVENT_TABLE_FAILED)
        .set(FactsTable.ROWS, 0L)
        .set(FactsTable.END_LSN, lsn)
        .set(FactsTable.DETAIL, detail)
        .set(FactsTable.TARGET, f.bronze)
        .set(FactsTable.WRITTEN_AT, writtenAt)
        .build();
  }

  @Test
  void textShowsPositionRowsTodayVerdictLagAgainstTheSourceAndAFailureAfterTheLastBatch()
      throws Exception {
    JobFixture f = JobFixture.history(dir);
    f.run();
    // The source goes on after the run: its newest commit is 75 minutes after the position.
    f.db.transaction(at(200)).insert(ORDERS, order(1000, "new", "10.00")).commit();
    appendFacts(
        f,
        failure(
            f,
            "0x0000002A0000010000A1",
            Instant.parse("2030-01-01T00:00:00Z"),
            "DataLossError: changes after 0x0000002A0000010000A1 were cleaned up"));
    Instant lastWritten = writtenAt(f, 2);
    // The three batches of the run are written on the day of the last one (a run of seconds).
    Output status =
        status(
            clockAt(lastWritten),
            "--factsTable=" + f.facts,
            "--controlTable=" + f.control,
            "--fakePath=" + dir.resolve("source"));

    assertEquals(0, status.code(), status.err());
    assertEquals("", status.err());
    assertEquals(
        List.of(
            "1 table in " + f.facts + ", read at " + lastWritten.truncatedTo(ChronoUnit.MILLIS),
            "Source: newest commit 0x0000002A0000010000B1 at 2026-09-28T17:10:00Z",
            "",
            f.bronze,
            "  app id            dbo_orders",
            "  capture instance  dbo_orders",
            "  position          0x0000002A0000010000A1 committed at 2026-09-28T15:55:00Z",
            "  last batch        2, written at " + lastWritten,
            "  rows today        28",
            "  finalized_until   2026-09-28T15:00:00Z (hour)",
            "  lag               4500 s behind the source's newest commit",
            "  failure           at 0x0000002A0000010000A1, written at 2030-01-01T00:00:00Z:"
                + " DataLossError: changes after 0x0000002A0000010000A1 were cleaned up",
            "  bootstrap         none",
            "  snapshot          no open snapshot"),
        status.lines());

    Output nextDay =
        status(
            clockAt(lastWritten.plusSeconds(86_400)),
            "--factsTable=" + f.facts,
            "--controlTable=" + f.control);
    assertTrue(nextDay.lines().contains("  rows today        0"), nextDay.out());

    Output json =
        status(
            clockAt(lastWritten),
            "--factsTable=" + f.facts,
            "--controlTable=" + f.control,
            "--fakePath=" + dir.resolve("source"),
            "--json");
    JsonNode root = new ObjectMapper().readTree(json.out());
    assertEquals("0x0000002A0000010000B1", root.get("source").get("max_lsn").asText());
    assertEquals("2026-09-28T17:10:00Z", root.get("source").get("max_commit_ts").asText());
    JsonNode t = root.get("tables").get(0);
    assertEquals(28, t.get("rows_today").asLong());
    assertEquals("[\"hour\"]", t.get("granularity").toString());
    assertEquals(4500, t.get("lag_seconds").asLong());
    assertEquals("source", t.get("lag_basis").asText());
    JsonNode failure = t.get("failure");
    assertEquals("DataLossError", failure.get("error_class").asText());
    assertEquals(
        "changes after 0x0000002A0000010000A1 were cleaned up", failure.get("message").asText());
    assertEquals("0x0000002A0000010000A1", failure.get("end_lsn").asText());
    assertEquals("2030-01-01T00:00:00Z", failure.get("written_at").asText());
  }

  @Test
  void jsonHasTheBootstrapAnOpenSnapshotAndNoFailureWrittenBeforeTheLastBatch() throws Exception {
    JobFixture f = JobFixture.history(dir);
    f.run(f.config().toBuilder().bootstrap(true).build());
    f.db.transaction(at(130)).insert(ORDERS, order(1000, "new", "10.00")).commit();
    f.run(f.config().toBuilder().bootstrap(true).build());
    appendFacts(
        f,
        failure(f, "0x0000002A0000010000A1", Instant.parse("2020-01-01T00:00:00Z"), "boom"),
        FactsTable.row()
            .set(FactsTable.APP_ID, JobFixture.CI)
            .set(FactsTable.EVENT, Status.EVENT_SNAPSHOT_OPEN)
            .set(FactsTable.ROWS, 0L)
            .set(FactsTable.MIN_LSN, "0x0000002A0000010000B1")
            .set(FactsTable.MAX_LSN, "0x0000002A0000010000B1")
            .set(FactsTable.END_LSN, "0x0000002A0000010000B1")
            .set(FactsTable.TARGET, f.bronze)
            .set(FactsTable.WRITTEN_AT, Instant.parse("2030-01-02T03:04:05Z"))
            .build());
    Output status =
        status(
            clockAt(Instant.parse("2030-01-02T12:00:00Z")),
            "--factsTable=" + f.facts,
            "--controlTable=" + f.control,
            "--json");
    assertEquals(0, status.code(), status.err());
    JsonNode root = new ObjectMapper().readTree(status.out());
    assertEquals(f.facts, root.get("facts_table").asText());
    assertEquals("2030-01-02T12:00:00Z", root.get("read_at").asText());
    assertTrue(root.get("source").get("max_lsn").isNull());
    assertEquals(1, root.get("tables").size());
    JsonNode t = root.get("tables").get(0);
    assertEquals(f.bronze, t.get("target").asText());
    assertTrue(t.get("target_exists").asBoolean());
    assertEquals("dbo_orders", t.get("app_id").asText());
    assertEquals("dbo_orders", t.get("capture_instance").asText());
    assertEquals("0x0000002A0000010000B1", t.get("position").get("end_lsn").asText());
    assertEquals("2026-09-28T16:00:00Z", t.get("position").get("end_commit_ts").asText());
    assertEquals(0, t.get("last_batch").get("batch_id").asLong());
    assertEquals(0, t.get("rows_today").asLong(), "no batch was written on 2030-01-02");
    assertEquals("2026-09-28T16:00:00Z", t.get("finalized_until").asText());
    assertEquals("[\"minute\",\"hour\"]", t.get("granularity").toString());
    assertEquals(0, t.get("lag_seconds").asInt());
    assertEquals("last_batch", t.get("lag_basis").asText());
    assertTrue(t.get("failure").isNull(), "the failure was written before the last batch");
    assertEquals(24, t.get("bootstrap").get("rows").asLong());
    assertEquals("0x0000002A0000010000A1", t.get("bootstrap").get("snapshot_lsn").asText());
    assertEquals("0x0000002A0000010000B1", t.get("open_snapshot").get("snapshot_lsn").asText());
    assertEquals("2030-01-02T03:04:05Z", t.get("open_snapshot").get("written_at").asText());
    assertEquals("full", t.get("open_snapshot").get("mode").asText(), "a row without detail");
    assertEquals("bootstrap", t.get("open_snapshot").get("kind").asText());
    assertTrue(t.get("open_snapshot").get("chunks").isNull());
    assertTrue(t.get("bootstrap").get("chunks").isNull(), "a whole snapshot");
  }

  @Test
  void rowsTodayCountsTheBatchesWrittenOnTheClocksUtcDayAndTheLagFallsBackToTheLastBatch() {
    JobFixture f = new JobFixture(dir);
    f.tables.createIfAbsent(f.facts, FactsTable.definition());
    String target = dir.resolve("delta/never_written").toString();
    Object[][] batches = {
      {0L, 5L, "2026-11-30T23:59:59.999Z"},
      {1L, 7L, "2026-12-01T00:00:00Z"},
      {2L, 11L, "2026-12-01T23:59:59.999Z"},
      {3L, 13L, "2026-12-02T00:00:00Z"},
    };
    for (Object[] b : batches) {
      appendFacts(
          f,
          FactsTable.row()
              .set(FactsTable.APP_ID, "manual")
              .set(FactsTable.BATCH_ID, b[0])
              .set(FactsTable.ROWS, b[1])
              .set(FactsTable.END_LSN, "0x0000002A0000010000" + b[0] + "1")
              .set(FactsTable.END_COMMIT_TS, Instant.parse("2026-12-01T10:00:00Z"))
              .set(FactsTable.SOURCE_MAX_COMMIT_TS, Instant.parse("2026-12-01T10:02:30.5Z"))
              .set(FactsTable.TARGET, target)
              .set(FactsTable.WRITTEN_AT, Instant.parse((String) b[2]))
              .build());
    }
    // A table that failed before its first batch, its failure naming no target.
    appendFacts(
        f,
        FactsTable.row()
            .set(FactsTable.APP_ID, "broken")
            .set(FactsTable.EVENT, FactsTable.EVENT_TABLE_FAILED)
            .set(FactsTable.DETAIL, "UnknownCaptureInstance")
            .set(FactsTable.WRITTEN_AT, Instant.parse("2026-12-01T09:00:00Z"))
            .build());
    Output status =
        status(
            clockAt(Instant.parse("2026-12-01T12:00:00Z")),
            "--factsTable=" + f.facts,
            "--controlTable=" + f.control);
    assertEquals(0, status.code(), status.err());
    assertEquals(
        List.of(
            "2 tables in " + f.facts + ", read at 2026-12-01T12:00:00Z",
            "Source: none given; each lag is the last batch's (source_max_commit_ts -"
                + " end_commit_ts)",
            "",
            "(no target recorded)",
            "  app id            broken",
            "  capture instance  unknown",
            "  position          none",
            "  last batch        none",
            "  rows today        0",
            "  finalized_until   none yet",
            "  lag               unknown",
            "  failure           at an unknown LSN, written at 2026-12-01T09:00:00Z:"
                + " UnknownCaptureInstance",
            "  bootstrap         none",
            "  snapshot          no open snapshot",
            "",
            target + "  (no Delta table there)",
            "  app id            manual",
            "  capture instance  unknown",
            "  position          0x0000002A000001000031 committed at 2026-12-01T10:00:00Z",
            "  last batch        3, written at 2026-12-02T00:00:00Z",
            "  rows today        18",
            "  finalized_until   none yet",
            "  lag               150.5 s behind the source at the last batch",
            "  failure           none",
            "  bootstrap         none",
            "  snapshot          no open snapshot"),
        status.lines());
  }

  private static final Instant OPENED = Instant.parse("2030-01-02T03:00:00Z");

  private static ChunkedSnapshotFacts.Open open(
      String appId, String target, String s, String mode, String kind, int generation) {
    return new ChunkedSnapshotFacts.Open(
        appId,
        target,
        Lsn.parse(s),
        Instant.parse("2026-09-28T16:00:00Z"),
        mode,
        kind,
        generation,
        List.of("order_id"),
        mode.equals(ChunkedSnapshotFacts.MODE_CHUNKED)
            ? "{\"kind\":\"int\",\"lo\":0,\"hi\":7,\"rows\":8}"
            : null,
        null,
        null,
        OPENED);
  }

  private static ChunkedSnapshotFacts.Plan plan(String appId, String target, String s) {
    return new ChunkedSnapshotFacts.Plan(
        appId,
        target,
        Lsn.parse(s),
        "int",
        List.of("order_id"),
        2,
        2,
        "[[0,null,2],[1,2,4],[2,4,6],[3,6,8]]",
        OPENED.plusSeconds(30),
        15);
  }

  private static Row chunk(
      String appId, String target, String s, int index, long rows, String written) {
    String[] bounds = {"null", "2", "4", "6", "8"};
    return new ChunkedSnapshotFacts.ChunkFact(
            appId,
            target,
            Lsn.parse(s),
            index,
            index / 2,
            bounds[index],
            bounds[index + 1],
            index == 3,
            rows,
            Lsn.parse("0x0000002A0000010000C1"),
            Instant.parse("2026-09-28T16:05:00Z"),
            null,
            null,
            Instant.parse(written).minusSeconds(5),
            5000L,
            0.25)
        .toRow(Instant.parse(written));
  }

  @Test
  void openChunkedSnapshotsShowTheirChunksWavesAndRowsAndACompletedOneShowsAsTheBootstrap()
      throws Exception {
    JobFixture f = new JobFixture(dir);
    f.tables.createIfAbsent(f.facts, FactsTable.definition());
    String target = dir.resolve("delta/dbo_orders_chunked").toString();
    String s = "0x0000002A0000010000B1";
    String c = ChunkedSnapshotFacts.MODE_CHUNKED;
    String full = ChunkedSnapshotFacts.MODE_FULL;
    String boot = ChunkedSnapshotFacts.KIND_BOOTSTRAP;
    ChunkedSnapshotFacts.Open done = open("done", target, s, c, boot, 0);
    ChunkedSnapshotFacts.Open superseded = open("fam", target, s, c, boot, 0);
    ChunkedSnapshotFacts.Open resnapshot =
        open("fam.g1", target, "0x0000002A0000010000D1", full, "resnapshot", 1);
    appendFacts(
        f,
        // "chunked": planned, chunks 0, 1 and 2 in (chunk 1 recorded twice counts once).
        open("chunked", target, s, c, boot, 0).toRow(OPENED),
        plan("chunked", target, s).toRow(OPENED.plusSeconds(45)),
        chunk("chunked", target, s, 0, 2, "2030-01-02T03:01:00Z"),
        chunk("chunked", target, s, 1, 2, "2030-01-02T03:02:00Z"),
        chunk("chunked", target, s, 1, 2, "2030-01-02T03:02:30Z"),
        chunk("chunked", target, s, 2, 1, "2030-01-02T03:03:00Z"),
        // "done": every chunk in and the completion row.
        done.toRow(OPENED),
        plan("done", target, s).toRow(OPENED.plusSeconds(45)),
        chunk("done", target, s, 0, 2, "2030-01-02T03:01:00Z"),
        chunk("done", target, s, 1, 2, "2030-01-02T03:02:00Z"),
        chunk("done", target, s, 2, 2, "2030-01-02T03:03:00Z"),
        chunk("done", target, s, 3, 1, "2030-01-02T03:04:00Z"),
        ChunkedSnapshotFacts.completionRow(
            done, 7, 4, Lsn.parse("0x0000002A0000010000C1"), Instant.parse("2030-01-02T03:05:00Z")),
        // "fam": a chunked open its next generation's full re-snapshot (at a higher S) completes.
        superseded.toRow(OPENED),
        ChunkedSnapshotFacts.completionRow(
            resnapshot,
            8,
            0,
            Lsn.parse("0x0000002A0000010000D1"),
            Instant.parse("2030-01-02T04:00:00Z")),
        // "full": a whole bootstrap's open, not yet completed.
        open("full", target, s, full, boot, 0).toRow(OPENED),
        // "unplanned": opened, its first wave not run yet.
        open("unplanned", target, s, c, boot, 0).toRow(OPENED));
    Output status =
        status(
            clockAt(Instant.parse("2030-01-02T12:00:00Z")),
            "--factsTable=" + f.facts,
            "--controlTable=" + f.control);
    assertEquals(0, status.code(), status.err());
    List<String> common =
        List.of(
            "  capture instance  unknown",
            "  position          none",
            "  last batch        none",
            "  rows today        0",
            "  finalized_until   none yet",
            "  lag               unknown",
            "  failure           none");
    List<String> expected = new java.util.ArrayList<>();
    expected.add("6 tables in " + f.facts + ", read at 2030-01-02T12:00:00Z");
    expected.add(
        "Source: none given; each lag is the last batch's (source_max_commit_ts - end_commit_ts)");
    Object[][] tables = {
      {
        "chunked",
        "  bootstrap         none",
        "  snapshot          chunked bootstrap open at S " + s + ", generation 0, since " + OPENED,
        "  chunks            3 of 4 done, 1 of 2 waves (2 chunks each), 5 rows, newest chunk at"
            + " 2030-01-02T03:03:00Z"
      },
      {
        "done",
        "  bootstrap         7 rows at S " + s + " in 4 chunks, written at 2030-01-02T03:05:00Z",
        "  snapshot          no open snapshot"
      },
      {"fam", "  bootstrap         none", "  snapshot          no open snapshot"},
      // Only its completion row: a resnapshot, not a bootstrap.
      {"fam.g1", "  bootstrap         none", "  snapshot          no open snapshot"},
      {
        "full",
        "  bootstrap         none",
        "  snapshot          full bootstrap open at S " + s + ", generation 0, since " + OPENED
      },
      {
        "unplanned",
        "  bootstrap         none",
        "  snapshot          chunked bootstrap open at S " + s + ", generation 0, since " + OPENED,
        "  chunks            not planned yet"
      },
    };
    for (Object[] t : tables) {
      expected.add("");
      expected.add(target + "  (no Delta table there)");
      expected.add("  app id            " + t[0]);
      expected.addAll(common);
      for (int i = 1; i < t.length; i++) {
        expected.add((String) t[i]);
      }
    }
    assertEquals(expected, status.lines());

    Output json =
        status(
            clockAt(Instant.parse("2030-01-02T12:00:00Z")),
            "--factsTable=" + f.facts,
            "--controlTable=" + f.control,
            "--json");
    assertEquals(0, json.code(), json.err());
    JsonNode root = new ObjectMapper().readTree(json.out());
    JsonNode t = root.get("tables");
    assertEquals(6, t.size());
    assertEquals(
        "{\"mode\":\"chunked\",\"kind\":\"bootstrap\",\"snapshot_lsn\":\""
            + s
            + "\",\"generation\":0,\"written_at\":\"2030-01-02T03:00:00Z\",\"chunks\":"
            + "{\"planned\":4,\"done\":3,\"chunks_per_wave\":2,\"chunk_rows\":2,"
            + "\"waves_planned\":2,\"waves_done\":1,\"rows\":5,"
            + "\"newest_chunk_at\":\"2030-01-02T03:03:00Z\"}}",
        t.get(0).get("open_snapshot").toString());
    assertTrue(t.get(0).get("bootstrap").isNull());
    assertEquals(
        "{\"rows\":7,\"snapshot_lsn\":\""
            + s
            + "\",\"written_at\":\"2030-01-02T03:05:00Z\",\"chunks\":4}",
        t.get(1).get("bootstrap").toString());
    assertTrue(t.get(1).get("open_snapshot").isNull());
    assertTrue(t.get(2).get("open_snapshot").isNull(), "fam: completed by fam.g1's resnapshot");
    assertEquals("fam.g1", t.get(3).get("app_id").asText());
    assertEquals(
        "{\"mode\":\"full\",\"kind\":\"bootstrap\",\"snapshot_lsn\":\""
            + s
            + "\",\"generation\":0,\"written_at\":\"2030-01-02T03:00:00Z\",\"chunks\":null}",
        t.get(4).get("open_snapshot").toString());
    assertEquals(
        "{\"planned\":null,\"done\":0,\"chunks_per_wave\":null,\"chunk_rows\":null,"
            + "\"waves_planned\":null,\"waves_done\":null,\"rows\":0,\"newest_chunk_at\":null}",
        t.get(5).get("open_snapshot").get("chunks").toString());
  }

  @Test
  void badOptionsAreOneLineNamingTheOption() {
    JobFixture f = JobFixture.history(dir);
    f.run();
    String missing = dir.resolve("nowhere").toString();
    Output noTable = status(Clock.systemUTC(), "--factsTable=" + missing);
    assertEquals(2, noTable.code());
    assertEquals("", noTable.out());
    assertEquals(
        "error: --factsTable "
            + missing
            + " holds no Delta table (no _delta_log with a commit): give the path or URI of a table"
            + " the job wrote\n",
        noTable.err());

    Output bronze = status(Clock.systemUTC(), "--factsTable=" + f.bronze);
    assertEquals(2, bronze.code());
    assertEquals(
        "error: --factsTable "
            + f.bronze
            + " is a bronze table, not a facts table: give the facts table the job wrote\n",
        bronze.err());

    Output noSource = status(Clock.systemUTC(), "--factsTable=" + f.facts, "--fakePath=" + missing);
    assertEquals(2, noSource.code());
    assertEquals(
        "error: --fakePath "
            + missing
            + " holds no simulator database (no server.json; docs/fake-format.md describes the"
            + " directory): give the job's --fakePath, or leave it out\n",
        noSource.err());

    Output both =
        status(
            Clock.systemUTC(),
            "--fakePath=" + dir.resolve("source"),
            "--connectionUrl=jdbc:sqlserver://localhost:1433");
    assertEquals(2, both.code());
    assertEquals(
        "error: --fakePath is for the simulator and --connectionUrl for a real SQL Server: pass"
            + " one of them, not both\n",
        both.err());

    Output unknown = status(Clock.systemUTC(), "--factsTabel=" + f.facts);
    assertEquals(2, unknown.code());
    assertEquals(
        "error: Unknown option --factsTabel; did you mean --factsTable? (docs/status.md lists the"
            + " options)\n",
        unknown.err());

    Output wrongType = status(Clock.systemUTC(), "--json=maybe");
    assertEquals(2, wrongType.code());
    assertEquals("error: --json must be true or false, not 'maybe'\n", wrongType.err());
  }
}
