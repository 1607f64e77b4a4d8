package org.lakecdc.pipelines;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.lakecdc.pipelines.ChunkedSnapshotJobTest.bronze;
import static org.lakecdc.pipelines.ChunkedSnapshotJobTest.detail;
import static org.lakecdc.pipelines.ChunkedSnapshotJobTest.facts;
import static org.lakecdc.pipelines.ChunkedSnapshotJobTest.rebuild;
import static org.lakecdc.pipelines.JobFixture.ORDERS;
import static org.lakecdc.pipelines.JobFixture.at;
import static org.lakecdc.pipelines.JobFixture.order;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import java.util.stream.Collectors;
import org.apache.beam.sdk.values.Row;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.lakecdc.io.mssqlcdc.client.CdcClient;
import org.lakecdc.io.mssqlcdc.client.CloseableIterator;
import org.lakecdc.io.mssqlcdc.client.IsolationLevel;
import org.lakecdc.io.mssqlcdc.client.TableQuery;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.io.mssqlcdc.schema.MetadataColumns;
import org.lakecdc.pipelines.backfill.BackfillState;
import org.lakecdc.pipelines.backfill.BackfillWaves;
import org.lakecdc.pipelines.cdc.CdcToDeltaJob;
import org.lakecdc.pipelines.cdc.Continuous;
import org.lakecdc.pipelines.cdc.ContinuousMode;
import org.lakecdc.pipelines.cdc.JobSummary;
import org.lakecdc.pipelines.cli.JobExit;
import org.lakecdc.pipelines.targets.JobConfig;
import org.lakecdc.pipelines.targets.SnapshotSettings;
import org.lakecdc.transforms.bronze.CrashPlan;
import org.lakecdc.transforms.bronze.CrashPoint;
import org.lakecdc.transforms.delta.DeltaColumn;
import org.lakecdc.transforms.facts.FactsTable;

/**
 * The main job reading a chunked snapshot beside its stream ({@code --snapshot=chunked
 * --backfill=true}), bounded and continuous, with silver; crashes in a chunk's commit; the Backfill
 * job's states without a snapshot or metrics and its command line.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class ChunkedBackfillJobTest {
  @TempDir Path dir;

  /** Keys -20, -17, ..., 46 (23 orders "new") inserted at T0 after CDC was enabled. */
  private static JobFixture spread(Path dir) {
    JobFixture f = new JobFixture(dir);
    f.db.enableCdc(ORDERS);
    var tx = f.db.transaction(at(0));
    for (int i = 0; i < 23; i++) {
      tx.insert(ORDERS, order(3 * i - 20, "new", i + ".00"));
    }
    tx.commit();
    return f;
  }

  private static JobConfig config(JobFixture f, int chunkRows, int maxWaves) {
    return config(f, chunkRows, maxWaves, true);
  }

  private static JobConfig config(JobFixture f, int chunkRows, int maxWaves, boolean backfill) {
    return JobConfig.builder(f.db.clientFactory(), JobFixture.CI, f.bronze, f.facts, f.control)
        .appId("chunk-v1")
        .maxCommitsPerBatch(4)
        .numPartitions(2)
        .snapshot(
            new SnapshotSettings(SnapshotSettings.Mode.CHUNKED, chunkRows, 2, backfill, maxWaves))
        .build();
  }

  /** Changes after S, committed while the job runs (after its plan, before its reads). */
  private static void changes(JobFixture f) {
    f.db.transaction(at(10)).update(ORDERS, List.of(-20), Map.of("status", "paid")).commit();
    f.db.transaction(at(11)).delete(ORDERS, List.of(7)).commit();
    f.db.transaction(at(12)).insert(ORDERS, order(100, "new", "1.00")).commit();
  }

  /** The source table now, key → status, read through the simulator's client (a full scan). */
  private static Map<Integer, String> sourceTable(JobFixture f) {
    Map<Integer, String> table = new TreeMap<>();
    try (CdcClient client = f.db.openClient();
        CloseableIterator<List<Object>> rows =
            client.readTable(
                new TableQuery(
                    "dbo",
                    "orders",
                    List.of("order_id", "status"),
                    List.of("order_id"),
                    Optional.empty(),
                    Optional.empty(),
                    IsolationLevel.READ_COMMITTED))) {
      rows.forEachRemaining(r -> table.put((Integer) r.get(0), (String) r.get(1)));
    }
    return table;
  }

  /**
   * Every chunk's bronze rows exactly once: per chunk facts row, the source rows in {@code [lo,
   * hi)} counted here from a full scan of the table equal the chunk's row count and its bronze rows
   * ({@code _chunk}); the chunks tile the key space (first open below, each hi the next lo, the
   * last flagged); no key appears twice among the snapshot rows.
   *
   * @return the number of chunks
   */
  private static int checkEveryRowOnce(JobFixture f, Lsn s) {
    Map<Integer, String> table = sourceTable(f);
    List<Row> snapshotRows =
        bronze(f).stream().filter(r -> r.getInt32(MetadataColumns.OPERATION) == 0).toList();
    Map<Integer, Long> bronzePerChunk =
        snapshotRows.stream()
            .collect(
                Collectors.groupingBy(
                    r -> r.getInt32(MetadataColumns.CHUNK), TreeMap::new, Collectors.counting()));
    List<Row> chunks = new ArrayList<>(facts(f, "snapshot_chunk"));
    chunks.sort(java.util.Comparator.comparing(r -> detail(r).get("chunk").asInt()));
    JsonNode previousHi = null;
    for (int i = 0; i < chunks.size(); i++) {
      JsonNode d = detail(chunks.get(i));
      assertEquals(i, d.get("chunk").asInt());
      assertEquals(s.toString(), d.get("snapshot").asText());
      assertEquals(i == chunks.size() - 1, d.get("last").asBoolean());
      if (i == 0) {
        assertTrue(d.get("lo").isNull(), "the first chunk is open below");
      } else {
        assertEquals(previousHi, d.get("lo"), "no gap, no overlap");
      }
      previousHi = d.get("hi");
      Integer lo = d.get("lo").isNull() ? null : d.get("lo").asInt();
      Integer hi = d.get("hi").isNull() ? null : d.get("hi").asInt();
      long counted =
          table.keySet().stream()
              .filter(k -> (lo == null || k >= lo) && (hi == null || k < hi))
              .count();
      assertEquals(counted, chunks.get(i).getInt64(FactsTable.ROWS), "chunk " + i);
      assertEquals(counted, bronzePerChunk.getOrDefault(i, 0L), "bronze rows of chunk " + i);
    }
    List<Integer> keys = snapshotRows.stream().map(r -> r.getInt32("order_id")).sorted().toList();
    assertEquals(keys.stream().distinct().toList(), keys, "each key once");
    return chunks.size();
  }

  @Test
  void c111TheMainJobReadsEveryChunkBesideTheStreamAndSilverEqualsTheSource() {
    JobFixture f = spread(dir);
    Lsn s = f.db.openClient().maxLsn().orElseThrow();
    String silver = dir.resolve("delta/silver").toString();
    JobConfig config = config(f, 4, 0).toBuilder().silverPath(silver).build();

    f.run(config, JobFixture.direct(), () -> changes(f));
    assertTrue(
        f.lastOutput.contains("Planned the chunked snapshot at S = " + s + " of dbo_orders: 6"),
        f.lastOutput);
    assertTrue(
        f.lastOutput.contains("Chunked snapshot of dbo_orders at S = " + s + ": chunks 6/6"),
        f.lastOutput);
    assertEquals(6, checkEveryRowOnce(f, s));
    Map<Integer, String> source = sourceTable(f);
    assertEquals(23, source.size());
    assertEquals("paid", source.get(-20));
    assertEquals(source, rebuild(bronze(f), s), "the rebuild from S is the source table");
    assertEquals(1, facts(f, "bootstrap").size());
    assertEquals(22L, facts(f, "bootstrap").get(0).getInt64(FactsTable.ROWS));

    Map<Integer, String> silverRows = new TreeMap<>();
    for (Row r :
        f.tables.scan(silver, DeltaColumn.toBeamSchema(f.tables.describe(silver).columns()))) {
      silverRows.put(r.getInt32("order_id"), r.getString("status"));
    }
    assertEquals(source, silverRows, "silver is the latest image per key");
  }

  @ParameterizedTest
  @EnumSource(
      value = CrashPoint.class,
      names = {"AFTER_DATA_FILES", "AFTER_BRONZE_COMMIT", "AFTER_FACTS_COMMIT"})
  void c099ACrashInAChunksCommitIsRepairedAndEveryChunkIsWrittenOnce(CrashPoint point) {
    JobFixture f = ChunkedSnapshotJobTest.orders(dir, 8);
    Lsn s = f.db.openClient().maxLsn().orElseThrow();
    JobConfig config = config(f, 2, 0);
    JobConfig crashing = config.withCrash(CrashPlan.chunk(point, 1));
    RuntimeException crash = assertThrows(RuntimeException.class, () -> f.run(crashing));
    boolean simulated = false;
    for (Throwable t = crash; t != null; t = t.getCause()) {
      simulated |= t instanceof CrashPoint.SimulatedCrash;
    }
    assertTrue(simulated, () -> "not the simulated crash: " + crash);
    int recorded = facts(f, "snapshot_chunk").size();
    assertEquals(point == CrashPoint.AFTER_FACTS_COMMIT ? 2 : 1, recorded, "chunks recorded");

    f.run(config);
    assertEquals(
        point == CrashPoint.AFTER_BRONZE_COMMIT,
        f.lastOutput.contains("Repaired 1 facts row of the chunked snapshot at S = " + s),
        f.lastOutput);
    assertEquals(4, checkEveryRowOnce(f, s));
    assertEquals(8, bronze(f).size(), "8 snapshot rows, nothing twice");
    assertEquals(1, facts(f, "bootstrap").size());
  }

  @Test
  void c111ContinuouslyTheBackfillRunsBesideTheStream() throws Exception {
    JobFixture f = spread(dir);
    Lsn s = f.db.openClient().maxLsn().orElseThrow();
    ContinuousMode.Stop stop = ContinuousMode.Stop.create();
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);
    CompletableFuture<JobSummary> job =
        CompletableFuture.supplyAsync(
            () ->
                CdcToDeltaJob.runContinuously(
                    config(f, 8, 0),
                    JobFixture.direct(),
                    out,
                    () -> {},
                    new Continuous(
                        Continuous.Form.STREAM,
                        Duration.ofSeconds(1),
                        Duration.ofMinutes(4),
                        stop)));
    try {
      long until = System.nanoTime() + Duration.ofMinutes(3).toNanos();
      awaitWhileRunning(
          job,
          until,
          () -> bytes.toString(StandardCharsets.UTF_8),
          () -> f.tables.exists(f.facts) && !facts(f, "bootstrap").isEmpty());
      assertEquals(3, checkEveryRowOnce(f, s));
      f.db.transaction(at(30)).delete(ORDERS, List.of(-20)).commit();
      awaitWhileRunning(
          job,
          until,
          () -> bytes.toString(StandardCharsets.UTF_8),
          () -> !rebuild(bronze(f), s).containsKey(-20));
    } finally {
      stop.request();
    }
    job.get(120, TimeUnit.SECONDS);
    stop.forget();
    assertEquals(sourceTable(f), rebuild(bronze(f), s));
    assertEquals(22, sourceTable(f).size());
  }

  @Test
  void c100BackfillSaysNoSnapshotWithoutAnOpenAndWaitsForMetricsBeforePlanning() {
    JobFixture f = ChunkedSnapshotJobTest.orders(dir, 8);
    JobConfig config = config(f, 2, 0);
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);
    BackfillWaves.Result none =
        BackfillWaves.run(config, JobFixture.direct(), 0, null, Clock.systemUTC(), out);
    assertEquals(BackfillState.NO_SNAPSHOT, none.state());
    assertEquals(
        "Backfill of dbo_orders: no_snapshot (no chunked snapshot is open for "
            + f.bronze
            + " (app id chunk-v1): open one with CdcToDelta --snapshot=chunked); nothing read",
        BackfillWaves.stateLine(config, none));

    f.run(config(f, 2, 0, false));
    BackfillWaves.Result paused =
        BackfillWaves.run(config, JobFixture.direct(), 0, 0.0, Clock.systemUTC(), out);
    // The opening run planned it (--backfill=false too); nothing was read while paused.
    assertEquals(
        new BackfillWaves.Result(
            BackfillState.WAITING_METRICS,
            "no facts row with retention_headroom_hours",
            0,
            0,
            4,
            0),
        paused);
    assertEquals(
        "Backfill of dbo_orders: waiting_metrics (no facts row with retention_headroom_hours);"
            + " chunks 0/4, 0 rows, 0 waves this run",
        BackfillWaves.stateLine(config, paused));
    assertEquals(1, facts(f, "snapshot_plan").size());
    assertTrue(facts(f, "snapshot_chunk").isEmpty(), "nothing read while paused");
  }

  @Test
  void aSnapshotOpenedWithoutItsBackfillIsReadInTheChunksTheOpeningRunAskedFor() {
    JobFixture f = ChunkedSnapshotJobTest.orders(dir, 8);
    f.run(config(f, 3, 0, false));
    assertTrue(facts(f, "snapshot_chunk").isEmpty(), "--backfill=false reads no chunk");
    // Backfill with the default --snapshotChunkRows and --chunksPerWave reads the stored plan.
    JobConfig defaults =
        JobConfig.builder(f.db.clientFactory(), JobFixture.CI, f.bronze, f.facts, f.control)
            .appId("chunk-v1")
            .numPartitions(2)
            .snapshot(
                new SnapshotSettings(
                    SnapshotSettings.Mode.CHUNKED,
                    SnapshotSettings.DEFAULT_CHUNK_ROWS,
                    SnapshotSettings.DEFAULT_CHUNKS_PER_WAVE,
                    true,
                    0))
            .build();
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);
    BackfillWaves.Result done =
        BackfillWaves.run(defaults, JobFixture.direct(), 0, null, Clock.systemUTC(), out);
    assertEquals(new BackfillWaves.Result(BackfillState.DONE, done.reason(), 2, 3, 3, 8), done);
    assertEquals(
        List.of(3L, 3L, 2L),
        facts(f, "snapshot_chunk").stream()
            .sorted(java.util.Comparator.comparing((Row r) -> r.getString(FactsTable.DETAIL)))
            .map(r -> r.getInt64(FactsTable.ROWS))
            .toList());
  }

  @Test
  void c100BackfillsCommandLineRefusesBadValuesInOneLineWithExitCode2() {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    PrintStream err = new PrintStream(bytes, true, StandardCharsets.UTF_8);
    PrintStream out = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
    String[][] cases = {
      {"--minHeadroomHours=-1"}, {"--maxSeconds=-5"}, {"--continuous=true"}, {"--maxWaves=x"}
    };
    List<String> errors = new ArrayList<>();
    for (String[] args : cases) {
      bytes.reset();
      assertEquals(
          JobExit.BAD_OPTION,
          Backfill.run(args, out, err, Clock.systemUTC(), UnaryOperator.identity()));
      errors.add(bytes.toString(StandardCharsets.UTF_8).strip());
    }
    assertEquals(
        List.of(
            "error: --minHeadroomHours must be 0 or a positive number of hours, not '-1'",
            "error: --maxSeconds must be 0 (no limit) or a positive integer, not '-5'",
            "error: --continuous is an option of CdcToDelta: Backfill reads its waves and ends (run"
                + " it again, or let CdcToDelta --snapshot=chunked --continuous read them)",
            "error: --maxWaves must be 0 (to the end) or a positive integer, not 'x'"),
        errors);
  }

  /**
   * Waits until {@code done} holds, polling every 200 ms until {@code until} ({@link
   * System#nanoTime}); a failed job's exception is thrown at once, and a timeout is an assertion
   * error with what the job printed.
   */
  private static void awaitWhileRunning(
      CompletableFuture<?> job,
      long until,
      java.util.function.Supplier<String> printed,
      java.util.function.BooleanSupplier done) {
    try {
      org.awaitility.Awaitility.await()
          .atMost(Duration.ofNanos(Math.max(1, until - System.nanoTime())))
          .pollDelay(Duration.ZERO)
          .pollInterval(Duration.ofMillis(200))
          .pollInSameThread()
          .until(
              () -> {
                if (done.getAsBoolean()) {
                  return true;
                }
                if (job.isDone()) {
                  job.get(); // the job failed: its exception
                }
                return false;
              });
    } catch (org.awaitility.core.ConditionTimeoutException e) {
      throw new AssertionError(printed.get(), e);
    }
  }
}
