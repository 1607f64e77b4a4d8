package org.lakecdc.pipelines;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;
import static org.lakecdc.pipelines.JobFixture.ORDERS;
import static org.lakecdc.pipelines.JobFixture.at;
import static org.lakecdc.pipelines.JobFixture.order;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.lakecdc.pipelines.cdc.Continuous;
import org.lakecdc.pipelines.cdc.ContinuousMode;
import org.lakecdc.pipelines.cdc.JobSummary;
import org.lakecdc.pipelines.targets.JobConfig;

/**
 * A run of one new table reads its whole bootstrap snapshot in the pipeline, as a run of many does
 * (docs/many-tables.md "How snapshots of new tables run"): the launcher records S and reads no row
 * of the table. The simulator's clients count the rows each thread read ({@link ReadTableHook});
 * the launcher's thread is the one that runs {@code beforeStream}, called once the table is
 * planned. Bounded runs on every runner, continuous runs on the runners that stream. (Its batch
 * lines stay a one-table run's, not naming the table: {@code ConsoleOutputTest}.)
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class SnapshotOffTheLauncherTest {
  @TempDir Path dir;

  /** Orders 1..6 before CDC is enabled, then two commits of two orders each: 10 rows at S. */
  static JobFixture tenOrders(Path dir) {
    JobFixture f = new JobFixture(dir);
    for (int i = 1; i <= 6; i++) {
      f.db.transaction(at(0)).insert(ORDERS, order(i, "old", i + ".00")).commit();
    }
    f.db.enableCdc(ORDERS);
    f.insertCommit(1, 2);
    f.insertCommit(2, 2);
    return f;
  }

  /** The launcher's thread and the rows read before the pipeline, recorded by beforeStream. */
  record Launcher(String thread, Map<String, Long> rowsReadBefore) {}

  /** The job's configuration of {@code f}'s table, read through {@code reads}: a new target. */
  private static JobConfig counted(JobFixture f, ReadTableHook reads) {
    return JobConfig.builder(reads, JobFixture.CI, f.bronze, f.facts, f.control)
        .maxCommitsPerBatch(4)
        .build();
  }

  /**
   * The run's beforeStream: records the launcher's thread and the rows read so far in {@code
   * launcher}, then runs {@code then} (here: commits order 300, after S: the snapshot's read sees
   * it, 11 rows).
   */
  static Runnable recording(
      AtomicReference<Launcher> launcher, ReadTableHook reads, Runnable then) {
    return () -> {
      launcher.set(new Launcher(Thread.currentThread().getName(), reads.rowsByThread()));
      then.run();
    };
  }

  @ParameterizedTest
  @ValueSource(strings = {Runners.DIRECT, Runners.SPARK, Runners.FLINK})
  void aBoundedRunOfOneNewTableReadsItsSnapshotInThePipeline(String runner) {
    assumeTrue(Runners.available(runner), Runners.missing(runner));
    JobFixture f = tenOrders(dir);
    ReadTableHook reads = ReadTableHook.beforeReadOf(f.db.clientFactory(), "orders", () -> {});
    JobConfig config = counted(f, reads);
    AtomicReference<Launcher> launcher = new AtomicReference<>();

    JobSummary summary =
        f.run(
            config,
            Runners.options(runner),
            recording(launcher, reads, () -> f.insertCommit(3, 1)));

    assertEquals(Map.of(), launcher.get().rowsReadBefore(), "no row read while planning");
    assertOneReadOfTheSnapshotOffTheLauncher(reads, launcher.get(), 11, f.lastOutput);
    assertEquals(11, summary.snapshotRows(), f.lastOutput);
    assertEquals(1, summary.batches(), f.lastOutput);
    assertTrue(f.lastOutput.contains("Snapshot: 11 rows written to " + f.bronze), f.lastOutput);
  }

  @ParameterizedTest
  @ValueSource(strings = {Runners.DIRECT, Runners.FLINK})
  void aContinuousRunOfOneNewTableReadsItsSnapshotInThePipeline(String runner) throws Exception {
    assumeTrue(Runners.available(runner), Runners.missing(runner));
    JobFixture f = tenOrders(dir);
    ReadTableHook reads = ReadTableHook.beforeReadOf(f.db.clientFactory(), "orders", () -> {});
    JobConfig config = counted(f, reads);
    AtomicReference<Launcher> launcher = new AtomicReference<>();
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);
    ContinuousMode.Stop stop = ContinuousMode.Stop.create();
    CompletableFuture<JobSummary> job =
        ContinuousJobTest.start(
            config,
            runner,
            out,
            recording(launcher, reads, () -> f.insertCommit(3, 1)),
            new Continuous(Continuous.Form.STREAM, Duration.ofSeconds(1), Duration.ZERO, stop));
    JobSummary summary;
    try {
      ContinuousJobTest.await(
          "the snapshot and the batch after S are in bronze", () -> batches(f) == 1, job);
    } finally {
      stop.request();
    }
    summary = job.get(2, TimeUnit.MINUTES);
    String printed = bytes.toString(StandardCharsets.UTF_8);

    assertEquals(Map.of(), launcher.get().rowsReadBefore(), "no row read while planning");
    assertOneReadOfTheSnapshotOffTheLauncher(reads, launcher.get(), 11, printed);
    assertEquals(11, summary.snapshotRows(), printed);
    assertEquals(1, summary.batches(), printed);
    assertTrue(printed.contains("Snapshot: 11 rows written to " + f.bronze), printed);
  }

  /** The batches in the facts table, none before the run has created it. */
  private static int batches(JobFixture f) {
    try {
      return f.factBatches().size();
    } catch (IllegalStateException e) {
      return 0; // no facts table yet
    }
  }

  /**
   * {@code reads} read the table's {@code rows} rows once, every one off the launcher's thread (the
   * pipeline's workers).
   */
  static void assertOneReadOfTheSnapshotOffTheLauncher(
      ReadTableHook reads, Launcher launcher, long rows, String printed) {
    Map<String, Long> byThread = reads.rowsByThread();
    assertFalse(byThread.containsKey(launcher.thread()), launcher.thread() + ": " + byThread);
    assertEquals(
        rows,
        byThread.values().stream().mapToLong(Long::longValue).sum(),
        "each row read once: " + byThread + "\n" + printed);
  }
}
