package org.lakecdc.pipelines;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;
import static org.lakecdc.pipelines.JobFixture.ORDERS;
import static org.lakecdc.pipelines.JobFixture.at;
import static org.lakecdc.pipelines.JobFixture.order;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.beam.sdk.options.PipelineOptions;
import org.apache.beam.sdk.values.Row;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.lakecdc.pipelines.cdc.JobSummary;
import org.lakecdc.pipelines.targets.JobConfig;
import org.lakecdc.transforms.bronze.CrashPoint;
import org.lakecdc.transforms.delta.DeltaColumn;
import org.lakecdc.transforms.facts.FactsTable;
import org.lakecdc.transforms.finalization.Finalization;

/**
 * The main job end to end (bootstrap snapshot, then changes, into bronze, facts and the verdict) on
 * the DirectRunner, the SparkRunner ({@code local[2]}) and the FlinkRunner (mini-cluster): the same
 * bronze rows, the same facts rows apart from timings, the same verdict; and a crash between a
 * batch's bronze and facts commits on Spark and Flink, repaired by the next run on that runner.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class CrossRunnerJobTest {
  /** The facts columns compared across runners: all but timings and the runner's paths. */
  private static final List<String> FACTS_COMPARED =
      List.of(
          FactsTable.APP_ID,
          FactsTable.BATCH_ID,
          FactsTable.ROWS,
          FactsTable.MIN_LSN,
          FactsTable.MAX_LSN,
          FactsTable.MIN_COMMIT_TS,
          FactsTable.MAX_COMMIT_TS,
          FactsTable.DELETES,
          FactsTable.INSERTS,
          FactsTable.UPDATES,
          FactsTable.RETENTION_WATERMARK_TS,
          FactsTable.EVENT,
          FactsTable.LOST_FROM_TS,
          FactsTable.LOST_TO_TS,
          FactsTable.SOURCE_MAX_COMMIT_TS,
          FactsTable.END_LSN,
          FactsTable.END_COMMIT_TS,
          FactsTable.DETAIL);

  @TempDir Path dir;

  /** What one run of the scenario left in the tables. */
  record Outcome(List<String> bronze, List<String> facts, LocalDateTime verdict) {}

  private static Outcome directOutcome;

  /**
   * Orders 1..6 loaded before CDC is enabled; four insert commits; the job records S, then, before
   * the pipeline reads the snapshot and the stream, updates, a delete, inserts, a multi-statement
   * commit and an idle entry two hours later are committed; batches of 2 commits, read in 2 parts.
   * The snapshot's read sees those commits too: they are in the snapshot and among the changes
   * after S (a whole snapshot's overlap).
   */
  private static Outcome scenario(Path dir, PipelineOptions options) {
    JobFixture f = new JobFixture(dir);
    for (int i = 1; i <= 6; i++) {
      f.db.transaction(at(0)).insert(ORDERS, order(i, "old", i + ".00")).commit();
    }
    f.db.enableCdc(ORDERS);
    for (int t = 1; t <= 4; t++) {
      f.insertCommit(t, 2);
    }
    JobConfig config =
        f.config().toBuilder().bootstrap(true).maxCommitsPerBatch(2).numPartitions(2).build();
    JobSummary summary =
        f.run(
            config,
            options,
            () -> {
              f.db
                  .transaction(at(10))
                  .update(ORDERS, List.of(1), Map.of("status", "paid"))
                  .update(ORDERS, List.of(100), Map.of("status", "paid"))
                  .commit();
              f.db.transaction(at(11)).delete(ORDERS, List.of(2)).commit();
              f.insertCommit(12, 3);
              f.db
                  .transaction(at(13))
                  .insert(ORDERS, order(1300, "new", "13.00"))
                  .update(ORDERS, List.of(1300), Map.of("status", "paid"))
                  .delete(ORDERS, List.of(3))
                  .commit();
              f.db.idle(at(125));
            });
    assertEquals(
        6 + 8 - 2 + 4,
        summary.snapshotRows(),
        "the snapshot holds every row at S, less the 2 deleted and with the 4 inserted after S");
    assertTrue(summary.batches() >= 3, f.lastOutput);
    return new Outcome(
        bronzeRows(f),
        factsRows(f, dir),
        new Finalization(f.tables, f.control, java.time.Clock.systemUTC())
            .verdict(f.bronze)
            .orElseThrow());
  }

  /** Every bronze row, every column, in the ordering key's order (snapshot rows by key). */
  static List<String> bronzeRows(JobFixture f) {
    List<Row> rows =
        new ArrayList<>(
            f.tables.scan(
                f.bronze, DeltaColumn.toBeamSchema(f.tables.describe(f.bronze).columns())));
    rows.sort(BronzeOracle.CHANGE_ORDER.thenComparing(r -> r.getInt32("order_id")));
    return rows.stream().map(r -> r.getValues().toString()).collect(Collectors.toList());
  }

  /** Facts rows of batches and events, without timings, in (event, batch, end LSN) order. */
  static List<String> factsRows(JobFixture f, Path dir) {
    String bronzeId = f.tables.tableId(f.bronze);
    List<String> out = new ArrayList<>();
    for (Row r : f.tables.scan(f.facts, FactsTable.SCHEMA)) {
      StringBuilder line = new StringBuilder();
      for (String column : FACTS_COMPARED) {
        // The bronze table's id (a snapshot_open row's target_id) is each run's own.
        line.append(column)
            .append('=')
            .append(Objects.toString(r.getValue(column)).replace(bronzeId, "<bronze table id>"))
            .append(' ');
      }
      line.append("target=").append(r.getString(FactsTable.TARGET).replace(dir.toString(), ""));
      out.add(line.toString());
    }
    out.sort(null);
    return out;
  }

  private static synchronized Outcome direct() throws Exception {
    if (directOutcome == null) {
      directOutcome =
          scenario(Files.createTempDirectory("lakecdc-direct"), Runners.options(Runners.DIRECT));
    }
    return directOutcome;
  }

  @ParameterizedTest
  @ValueSource(strings = {Runners.SPARK, Runners.FLINK})
  void theMainJobWritesTheSameTablesAsOnTheDirectRunner(String runner) throws Exception {
    assumeTrue(Runners.available(runner), Runners.missing(runner));
    Outcome expected = direct();
    assertEquals(16 + 12, expected.bronze().size(), "16 snapshot rows and 12 change rows");
    assertEquals(LocalDateTime.of(2026, 9, 28, 15, 0), expected.verdict());

    Outcome actual = scenario(dir, Runners.options(runner));
    assertEquals(expected.bronze(), actual.bronze(), "bronze rows by the ordering key");
    assertEquals(expected.facts(), actual.facts(), "facts rows apart from timings");
    assertEquals(expected.verdict(), actual.verdict(), "the verdict");
  }

  private static boolean causedBySimulatedCrash(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      // Flink hands the failure over as a SerializedThrowable that keeps the message.
      if (t instanceof CrashPoint.SimulatedCrash
          || String.valueOf(t.getMessage()).contains("Simulated crash AFTER_BRONZE_COMMIT")) {
        return true;
      }
    }
    return false;
  }

  @ParameterizedTest
  @ValueSource(strings = {Runners.SPARK, Runners.FLINK})
  void aCrashBetweenTheBronzeAndTheFactsCommitIsRepairedByTheNextRun(String runner) {
    assumeTrue(Runners.available(runner), Runners.missing(runner));
    JobFixture f = JobFixture.history(dir);
    PipelineOptions options = Runners.options(runner);
    RuntimeException crash =
        assertThrows(
            RuntimeException.class,
            () ->
                f.run(f.config().withCrash(CrashPoint.AFTER_BRONZE_COMMIT, 1), options, () -> {}));
    assertTrue(causedBySimulatedCrash(crash), () -> "not the simulated crash: " + crash);
    Finalization verdicts = new Finalization(f.tables, f.control, java.time.Clock.systemUTC());
    LocalDateTime afterCrash = verdicts.verdict(f.bronze).orElseThrow();
    assertEquals(LocalDateTime.of(2026, 9, 28, 13, 0), afterCrash, "never ahead of the data");

    f.run(f.config(), options, () -> {});
    assertTrue(
        f.lastOutput.contains("Writing the facts row of batch 1"),
        "the rerun wrote the missing facts row: " + f.lastOutput);
    List<String> bronze =
        f.bronzeChanges().stream()
            .map(s -> s.substring(0, s.lastIndexOf('/')))
            .sorted()
            .collect(Collectors.toList());
    assertEquals(f.sourceChanges(), bronze, "every change exactly once");
    assertEquals(
        List.of(
            "0:12:0x0000002A000001000031",
            "1:12:0x0000002A000001000071",
            "2:4:0x0000002A0000010000A1"),
        f.factBatches(),
        "one facts row per batch");
    LocalDateTime verdict = verdicts.verdict(f.bronze).orElseThrow();
    assertEquals(LocalDateTime.of(2026, 9, 28, 15, 0), verdict);
    assertFalse(verdict.isBefore(afterCrash), "the verdict never moves backwards");
  }
}
