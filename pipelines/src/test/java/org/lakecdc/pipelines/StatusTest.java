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
import org.lakecdc.io.mssqlcdc.read.DataLossPolicy;
import org.lakecdc.pipelines.targets.JobConfig;
import org.lakecdc.transforms.facts.FactsTable;
import org.lakecdc.transforms.finalization.ControlTable;
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
    // The facts rows are written by hand: an empty control table (no verdicts).
    f.tables.createIfAbsent(f.control, ControlTable.definition());
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
        open("fam.g1", target, "0x0000002A0000010000D1", c, "resnapshot", 1);
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
        // "fam": a chunked open its next generation's re-snapshot (at a higher S) completes; one
        // table with the generation "fam.g1".
        superseded.toRow(OPENED),
        ChunkedSnapshotFacts.completionRow(
            resnapshot,
            8,
            2,
            Lsn.parse("0x0000002A0000010000D1"),
            Instant.parse("2030-01-02T04:00:00Z")),
        // "full": a whole bootstrap's open, not yet completed.
        open("full", target, s, full, boot, 0).toRow(OPENED),
        // "unplanned": opened, its first wave not run yet.
        open("unplanned", target, s, c, boot, 0).toRow(OPENED));
    // The facts rows are written by hand: an empty control table (no verdicts).
    f.tables.createIfAbsent(f.control, ControlTable.definition());
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
    expected.add("5 tables in " + f.facts + ", read at 2030-01-02T12:00:00Z");
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
      {
        "fam",
        "  bootstrap         none",
        "  snapshot          no open snapshot",
        "  resnapshots       1, the newest: generation 1, chunked in 2 chunks, 8 rows at S"
            + " 0x0000002A0000010000D1, written at 2030-01-02T04:00:00Z"
      },
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
      if (t[0].equals("fam")) {
        expected.add("  generation        1 (app id fam.g1)");
      }
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
    assertEquals(5, t.size());
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
    assertEquals("fam", t.get(2).get("app_id").asText());
    assertEquals(1, t.get(2).get("generation").asInt());
    assertEquals("fam.g1", t.get(2).get("generation_app_id").asText());
    assertEquals(
        "{\"count\":1,\"newest\":{\"generation\":1,\"app_id\":\"fam.g1\",\"mode\":\"chunked\","
            + "\"snapshot_lsn\":\"0x0000002A0000010000D1\",\"rows\":8,\"chunks\":2,"
            + "\"written_at\":\"2030-01-02T04:00:00Z\",\"lost_from_ts\":null,\"lost_to_ts\":null},"
            + "\"failed\":null}",
        t.get(2).get("resnapshots").toString());
    assertEquals(
        "{\"mode\":\"full\",\"kind\":\"bootstrap\",\"snapshot_lsn\":\""
            + s
            + "\",\"generation\":0,\"written_at\":\"2030-01-02T03:00:00Z\",\"chunks\":null}",
        t.get(3).get("open_snapshot").toString());
    assertEquals(
        "{\"planned\":null,\"done\":0,\"chunks_per_wave\":null,\"chunk_rows\":null,"
            + "\"waves_planned\":null,\"waves_done\":null,\"rows\":0,\"newest_chunk_at\":null}",
        t.get(4).get("open_snapshot").get("chunks").toString());
  }

  /** The written_at of the facts event row {@code event} (the only one) of {@code appId}. */
  private static Instant eventWrittenAt(JobFixture f, String appId, String event) {
    for (Row r : f.tables.scan(f.facts, FactsTable.SCHEMA)) {
      if (event.equals(r.getString(FactsTable.EVENT))
          && appId.equals(r.getString(FactsTable.APP_ID))) {
        return r.getLogicalTypeValue(FactsTable.WRITTEN_AT, LocalDateTime.class)
            .toInstant(ZoneOffset.UTC);
      }
    }
    throw new AssertionError("no " + event + " row of " + appId);
  }

  /** The written_at of batch {@code batchId} of {@code appId}. */
  private static Instant batchWrittenAt(JobFixture f, String appId, long batchId) {
    for (Row r : f.tables.scan(f.facts, FactsTable.SCHEMA)) {
      if (r.getString(FactsTable.EVENT) == null
          && appId.equals(r.getString(FactsTable.APP_ID))
          && r.getInt64(FactsTable.BATCH_ID) == batchId) {
        return r.getLogicalTypeValue(FactsTable.WRITTEN_AT, LocalDateTime.class)
            .toInstant(ZoneOffset.UTC);
      }
    }
    throw new AssertionError("no batch " + batchId + " of " + appId);
  }

  /** Orders 0, 1 and 2 inserted at T0, T0+1 and T0+2 minutes. */
  private static JobFixture threeOrders(Path dir) {
    JobFixture f = new JobFixture(dir);
    f.db.enableCdc(ORDERS);
    for (int i = 0; i < 3; i++) {
      f.db.transaction(at(i)).insert(ORDERS, order(i, "new", i + ".00")).commit();
    }
    return f;
  }

  private static JobConfig onDataLoss(JobFixture f, DataLossPolicy policy) {
    return JobConfig.builder(f.db.clientFactory(), JobFixture.CI, f.bronze, f.facts, f.control)
        .bootstrap(false)
        .onDataLoss(policy)
        .build();
  }

  @Test
  void aTargetReSnapshottedIntoGenerationOneIsOneTableWithItsGenerationReSnapshotAndLostPeriod()
      throws Exception {
    JobFixture f = threeOrders(dir);
    JobConfig config = onDataLoss(f, DataLossPolicy.RESNAPSHOT);
    f.run(config);
    // Order 3 is committed, then CDC cleanup purges it before the stream read it.
    f.db.transaction(at(3)).insert(ORDERS, order(3, "new", "3.00")).commit();
    f.db.cleanup(JobFixture.CI, f.db.idle(at(4)));
    // A run with --onDataLoss=fail stopped generation 0 (its failure is after its last batch).
    appendFacts(
        f,
        failure(
            f,
            "0x0000002A000001000021",
            batchWrittenAt(f, "dbo_orders", 0).plusSeconds(1),
            "DataLossError: changes after 0x0000002A000001000021 were cleaned up"));
    f.run(config);
    Instant resnapshotAt = eventWrittenAt(f, "dbo_orders.g1", "resnapshot");
    String[] args = {
      "--factsTable=" + f.facts,
      "--controlTable=" + f.control,
      "--fakePath=" + dir.resolve("source")
    };
    Output status = status(clockAt(resnapshotAt), args);
    assertEquals(0, status.code(), status.err());
    assertEquals(
        List.of(
            "1 table in " + f.facts + ", read at " + resnapshotAt.truncatedTo(ChronoUnit.MILLIS),
            "Source: newest commit 0x0000002A000001000041 at 2026-09-28T13:54:00Z",
            "",
            f.bronze,
            "  app id            dbo_orders",
            "  generation        1 (app id dbo_orders.g1)",
            "  capture instance  dbo_orders",
            "  position          0x0000002A000001000041 committed at 2026-09-28T13:54:00Z",
            "  last batch        none",
            "  rows today        0",
            "  finalized_until   2026-09-28T13:00:00Z (hour)",
            "  lag               0 s behind the source's newest commit",
            "  failure           none",
            "  bootstrap         none",
            "  snapshot          no open snapshot",
            "  resnapshots       1, the newest: generation 1, whole, 4 rows at S"
                + " 0x0000002A000001000041, written at "
                + resnapshotAt
                + ", lost 2026-09-28T13:52:00Z to 2026-09-28T13:54:00Z",
            "  lost periods      2026-09-28T13:00Z to 2026-09-28T14:00Z (no verdict covers them)"),
        status.lines());

    // Generation 1 streams on: its batch ids start at 0 again.
    f.db.transaction(at(5)).update(ORDERS, List.of(0), Map.of("status", "paid")).commit();
    f.run(config);
    Instant batchAt = batchWrittenAt(f, "dbo_orders.g1", 0);
    Output next = status(clockAt(batchAt), args);
    assertEquals(0, next.code(), next.err());
    List<String> lines = next.lines();
    assertEquals(
        List.of(
            "  generation        1 (app id dbo_orders.g1)",
            "  capture instance  dbo_orders",
            "  position          0x0000002A000001000051 committed at 2026-09-28T13:55:00Z",
            "  last batch        0, written at " + batchAt,
            // The update's before and after images; generation 0's batch of 3 rows is not counted.
            "  rows today        2"),
        lines.subList(5, 10));

    Output json = status(clockAt(batchAt), args[0], args[1], args[2], "--json");
    assertEquals(0, json.code(), json.err());
    JsonNode t = new ObjectMapper().readTree(json.out()).get("tables");
    assertEquals(1, t.size(), "one table across the generations");
    assertEquals("dbo_orders", t.get(0).get("app_id").asText());
    assertEquals(1, t.get(0).get("generation").asInt());
    assertEquals("dbo_orders.g1", t.get(0).get("generation_app_id").asText());
    assertTrue(t.get(0).get("failure").isNull(), "generation 0's failure was recovered");
    assertEquals(
        "{\"count\":1,\"newest\":{\"generation\":1,\"app_id\":\"dbo_orders.g1\","
            + "\"mode\":\"full\",\"snapshot_lsn\":\"0x0000002A000001000041\",\"rows\":4,"
            + "\"chunks\":null,\"written_at\":\""
            + resnapshotAt
            + "\",\"lost_from_ts\":\"2026-09-28T13:52:00Z\","
            + "\"lost_to_ts\":\"2026-09-28T13:54:00Z\"},\"failed\":null}",
        t.get(0).get("resnapshots").toString());
    assertEquals("{\"count\":0,\"newest\":null}", t.get(0).get("data_skipped").toString());
    assertEquals(
        "[{\"from\":\"2026-09-28T13:00:00Z\",\"to\":\"2026-09-28T14:00:00Z\"}]",
        t.get(0).get("lost_periods").toString());
  }

  @Test
  void aGapSkippedWithOnDataLossSkipShowsWithTheLostPeriodNoVerdictCovers() throws Exception {
    JobFixture f = threeOrders(dir);
    JobConfig skip = onDataLoss(f, DataLossPolicy.SKIP);
    f.run(skip);
    f.db.transaction(at(70)).insert(ORDERS, order(3, "new", "3.00")).commit();
    Lsn min = f.db.transaction(at(130)).insert(ORDERS, order(4, "new", "4.00")).commit();
    f.db.transaction(at(250)).insert(ORDERS, order(5, "new", "5.00")).commit();
    f.db.cleanup(JobFixture.CI, min);
    f.run(skip);
    Instant skippedAt = eventWrittenAt(f, "dbo_orders", "data_skipped");
    Instant batchAt = batchWrittenAt(f, "dbo_orders", 1);
    String[] args = {"--factsTable=" + f.facts, "--controlTable=" + f.control};
    Output status = status(clockAt(batchAt), args);
    assertEquals(0, status.code(), status.err());
    assertEquals(
        List.of(
            f.bronze,
            "  app id            dbo_orders",
            "  capture instance  dbo_orders",
            "  position          0x0000002A000001000051 committed at 2026-09-28T18:00:00Z",
            "  last batch        1, written at " + batchAt,
            "  rows today        5",
            "  finalized_until   2026-09-28T18:00:00Z (minute or hour)",
            "  lag               0 s behind the source at the last batch",
            "  failure           none",
            "  bootstrap         none",
            "  snapshot          no open snapshot",
            "  data skipped      1 gap, the newest: batch 1, lost 2026-09-28T13:52:00Z to"
                + " 2026-09-28T16:00:00Z (certain), written at "
                + skippedAt,
            "  lost periods      2026-09-28T13:00Z to 2026-09-28T17:00Z (no verdict covers them)"),
        status.lines().subList(3, status.lines().size()));

    Output json = status(clockAt(batchAt), args[0], args[1], "--json");
    assertEquals(0, json.code(), json.err());
    JsonNode t = new ObjectMapper().readTree(json.out()).get("tables").get(0);
    assertEquals(0, t.get("generation").asInt());
    assertEquals("dbo_orders", t.get("generation_app_id").asText());
    assertEquals("{\"count\":0,\"newest\":null,\"failed\":null}", t.get("resnapshots").toString());
    assertEquals(
        "{\"count\":1,\"newest\":{\"generation\":0,\"app_id\":\"dbo_orders\",\"batch_id\":1,"
            + "\"capture_instance\":\"dbo_orders\",\"from\":\"0x0000002A000001000022\","
            + "\"to\":\""
            + min
            + "\",\"lost_from_ts\":\"2026-09-28T13:52:00Z\","
            + "\"lost_to_ts\":\"2026-09-28T16:00:00Z\",\"certain\":true,\"reason\":null,"
            + "\"written_at\":\""
            + skippedAt
            + "\"}}",
        t.get("data_skipped").toString());
    assertEquals(
        "[{\"from\":\"2026-09-28T13:00:00Z\",\"to\":\"2026-09-28T17:00:00Z\"}]",
        t.get("lost_periods").toString());
  }

  private static Row batch(String appId, String target, long batchId, long rows, String written) {
    return FactsTable.row()
        .set(FactsTable.APP_ID, appId)
        .set(FactsTable.BATCH_ID, batchId)
        .set(FactsTable.ROWS, rows)
        .set(FactsTable.END_LSN, "0x0000002A00000100" + (10 + batchId) + "E1")
        .set(FactsTable.END_COMMIT_TS, Instant.parse("2026-09-28T16:00:00Z").plusSeconds(batchId))
        .set(FactsTable.TARGET, target)
        .set(FactsTable.WRITTEN_AT, Instant.parse(written))
        .build();
  }

  @Test
  void theNewestGenerationsBatchesAndGapShowWithAFailedAttemptAfterTheNewestReSnapshot()
      throws Exception {
    JobFixture f = new JobFixture(dir);
    f.tables.createIfAbsent(f.facts, FactsTable.definition());
    String target = dir.resolve("delta/lossy").toString();
    String s1 = "0x0000002A0000010000D1";
    Lsn from = Lsn.parse("0x0000002A000001001012");
    Lsn to = Lsn.parse("0x0000002A000001001021");
    appendFacts(
        f,
        // Generation 0: a batch, a certain gap, and a failure its re-snapshot recovered.
        batch("lossy", target, 5, 10, "2030-01-02T03:30:00Z"),
        FactsTable.dataSkippedRow(
            "lossy",
            3,
            target,
            new org.lakecdc.io.mssqlcdc.read.SkippedRange(
                JobFixture.CI,
                Lsn.parse("0x0000002A000001000A12"),
                Lsn.parse("0x0000002A000001000B21"),
                Instant.parse("2026-09-28T13:00:00Z"),
                Instant.parse("2026-09-28T13:30:00Z"),
                true,
                null),
            Instant.parse("2030-01-02T03:00:00Z")),
        FactsTable.row()
            .set(FactsTable.APP_ID, "lossy")
            .set(FactsTable.EVENT, FactsTable.EVENT_TABLE_FAILED)
            .set(FactsTable.END_LSN, "0x0000002A0000010015E1")
            .set(FactsTable.DETAIL, "DataLossError: purged")
            .set(FactsTable.TARGET, target)
            .set(FactsTable.WRITTEN_AT, Instant.parse("2030-01-02T03:45:00Z"))
            .build(),
        // Generation 1: the whole re-snapshot, two batches and a possible gap.
        FactsTable.row()
            .set(FactsTable.APP_ID, "lossy.g1")
            .set(FactsTable.ROWS, 5L)
            .set(FactsTable.EVENT, ChunkedSnapshotFacts.EVENT_RESNAPSHOT)
            .set(FactsTable.MIN_LSN, s1)
            .set(FactsTable.MAX_LSN, s1)
            .set(FactsTable.END_LSN, s1)
            .set(FactsTable.LOST_FROM_TS, Instant.parse("2026-09-28T14:00:00Z"))
            .set(FactsTable.LOST_TO_TS, Instant.parse("2026-09-28T15:00:00Z"))
            .set(
                FactsTable.DETAIL,
                "{\"snapshot\":\"" + s1 + "\",\"generation\":1,\"mode\":\"full\"}")
            .set(FactsTable.TARGET, target)
            .set(FactsTable.WRITTEN_AT, Instant.parse("2030-01-02T04:00:00Z"))
            .build(),
        batch("lossy.g1", target, 0, 3, "2030-01-02T04:10:00Z"),
        batch("lossy.g1", target, 1, 4, "2030-01-02T04:20:00Z"),
        FactsTable.dataSkippedRow(
            "lossy.g1",
            1,
            target,
            new org.lakecdc.io.mssqlcdc.read.SkippedRange(
                JobFixture.CI,
                from,
                to,
                Instant.parse("2026-09-28T15:58:00Z"),
                null,
                false,
                "cleanup moved min_lsn while the range was read"),
            Instant.parse("2030-01-02T04:20:00Z")),
        // Generation 2's attempt failed after generation 1 started.
        FactsTable.row()
            .set(FactsTable.APP_ID, "lossy.g2")
            .set(FactsTable.ROWS, 0L)
            .set(FactsTable.EVENT, ChunkedSnapshotFacts.EVENT_RESNAPSHOT_FAILED)
            .set(FactsTable.MIN_LSN, "0x0000002A0000010000F1")
            .set(
                FactsTable.DETAIL,
                "{\"generation\":2,\"snapshot\":\"0x0000002A0000010000F1\",\"reason\":\"CDC"
                    + " cleanup purged the changes after S before the stream could start\"}")
            .set(FactsTable.TARGET, target)
            .set(FactsTable.WRITTEN_AT, Instant.parse("2030-01-02T05:00:00Z"))
            .build());
    // The facts rows are written by hand: an empty control table (no verdicts).
    f.tables.createIfAbsent(f.control, ControlTable.definition());
    Output status =
        status(
            clockAt(Instant.parse("2030-01-02T12:00:00Z")),
            "--factsTable=" + f.facts,
            "--controlTable=" + f.control);
    assertEquals(0, status.code(), status.err());
    assertEquals(
        List.of(
            "1 table in " + f.facts + ", read at 2030-01-02T12:00:00Z",
            "Source: none given; each lag is the last batch's (source_max_commit_ts -"
                + " end_commit_ts)",
            "",
            target + "  (no Delta table there)",
            "  app id            lossy",
            "  generation        1 (app id lossy.g1)",
            "  capture instance  unknown",
            "  position          0x0000002A0000010011E1 committed at 2026-09-28T16:00:01Z",
            "  last batch        1, written at 2030-01-02T04:20:00Z",
            "  rows today        7",
            "  finalized_until   none yet",
            "  lag               unknown",
            "  failure           none",
            "  bootstrap         none",
            "  snapshot          no open snapshot",
            "  resnapshots       1, the newest: generation 1, whole, 5 rows at S "
                + s1
                + ","
                + " written at 2030-01-02T04:00:00Z, lost 2026-09-28T14:00:00Z to"
                + " 2026-09-28T15:00:00Z",
            "  resnapshot failed generation 2 at S 0x0000002A0000010000F1, written at"
                + " 2030-01-02T05:00:00Z: CDC cleanup purged the changes after S before the stream"
                + " could start",
            "  data skipped      2 gaps, the newest: batch 1 of generation 1, lost from"
                + " 2026-09-28T15:58:00Z (possible: cleanup moved min_lsn while the range was"
                + " read), written at 2030-01-02T04:20:00Z"),
        status.lines());

    Output json =
        status(
            clockAt(Instant.parse("2030-01-02T12:00:00Z")),
            "--factsTable=" + f.facts,
            "--controlTable=" + f.control,
            "--json");
    JsonNode t = new ObjectMapper().readTree(json.out()).get("tables").get(0);
    assertEquals(
        "{\"generation\":2,\"snapshot_lsn\":\"0x0000002A0000010000F1\",\"reason\":\"CDC"
            + " cleanup purged the changes after S before the stream could start\","
            + "\"written_at\":\"2030-01-02T05:00:00Z\"}",
        t.get("resnapshots").get("failed").toString());
    assertEquals(
        "{\"generation\":1,\"app_id\":\"lossy.g1\",\"batch_id\":1,"
            + "\"capture_instance\":\"dbo_orders\",\"from\":\""
            + from
            + "\",\"to\":\""
            + to
            + "\",\"lost_from_ts\":\"2026-09-28T15:58:00Z\",\"lost_to_ts\":null,"
            + "\"certain\":false,\"reason\":\"cleanup moved min_lsn while the range was read\","
            + "\"written_at\":\"2030-01-02T04:20:00Z\"}",
        t.get("data_skipped").get("newest").toString());
    assertEquals(2, t.get("data_skipped").get("count").asInt());
    assertEquals("[]", t.get("lost_periods").toString());
  }

  /**
   * The case: a target whose chunked snapshot is open (opened with --backfill=false, no
   * batch after S) has no position yet; its capture instance is its snapshot_open row's, not
   * "unknown" (the app id, chunk-v1, is not the capture instance).
   */
  @Test
  void aTargetWhoseChunkedSnapshotIsOpenShowsTheCaptureInstanceOfItsOpenRow() throws Exception {
    JobFixture f = JobFixture.history(dir);
    f.run(ChunkedSnapshotJobTest.chunked(f, false, 0));
    String[] args = {"--factsTable=" + f.facts, "--controlTable=" + f.control};
    Output status = status(Clock.systemUTC(), args);
    assertEquals(0, status.code(), status.err());
    List<String> lines = status.lines();
    int target = lines.indexOf(f.bronze);
    assertEquals(
        List.of(
            "  app id            chunk-v1",
            "  capture instance  dbo_orders",
            // The open row's commit records the stream's position at S.
            "  position          0x0000002A0000010000A1 committed at 2026-09-28T15:55:00Z"),
        lines.subList(target + 1, target + 4),
        status.out());
    assertTrue(
        lines.stream()
            .anyMatch(l -> l.startsWith("  snapshot          chunked bootstrap open at S ")),
        status.out());

    Output json = status(Clock.systemUTC(), args[0], args[1], "--json");
    assertEquals(0, json.code(), json.err());
    JsonNode t = new ObjectMapper().readTree(json.out()).get("tables").get(0);
    assertEquals("dbo_orders", t.get("capture_instance").asText());
    assertEquals("chunked", t.get("open_snapshot").get("mode").asText());
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
