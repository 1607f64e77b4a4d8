package org.lakecdc.pipelines;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;
import static org.lakecdc.pipelines.JobFixture.ORDERS;
import static org.lakecdc.pipelines.JobFixture.at;
import static org.lakecdc.pipelines.JobFixture.order;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.LocalDateTime;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.pipelines.cdc.CdcToDeltaJob;
import org.lakecdc.pipelines.cdc.Continuous;
import org.lakecdc.pipelines.cdc.ContinuousMode;
import org.lakecdc.pipelines.cdc.JobSummary;
import org.lakecdc.pipelines.targets.JobConfig;
import org.lakecdc.transforms.finalization.Finalization;

/**
 * The {@code --continuous} mode: a change committed to the source after the job started reaches
 * bronze, and the job stops cleanly when asked, with every change exactly once and one facts row
 * per batch. The source's continuous form on the DirectRunner and the FlinkRunner; repeated bounded
 * runs on the SparkRunner (and, as the option allows, on the DirectRunner).
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class ContinuousJobTest {
  private static final Duration WAIT = Duration.ofSeconds(120);

  @TempDir Path dir;

  private static List<String> bronze(JobFixture f) {
    try {
      return f.bronzeChanges().stream()
          .map(s -> s.substring(0, s.lastIndexOf('/')))
          .sorted()
          .collect(Collectors.toList());
    } catch (RuntimeException e) {
      return List.of(); // not created yet
    }
  }

  /** Starts {@code config}'s continuous run on {@code runner} on a thread of the common pool. */
  static CompletableFuture<JobSummary> start(
      JobConfig config,
      String runner,
      PrintStream out,
      Runnable beforeStream,
      Continuous continuous) {
    return CompletableFuture.supplyAsync(
        () ->
            CdcToDeltaJob.runContinuously(
                config, Runners.options(runner), out, beforeStream, continuous));
  }

  /**
   * Waits until {@code condition} holds, at most two minutes; fails when {@code job} ends first.
   */
  static void await(String what, BooleanSupplier condition, CompletableFuture<?> job) {
    org.awaitility.Awaitility.await(what)
        .atMost(WAIT)
        .pollDelay(Duration.ZERO)
        .pollInterval(Duration.ofMillis(200))
        .pollInSameThread()
        .until(
            () -> {
              if (condition.getAsBoolean()) {
                return true;
              }
              if (job.isDone()) {
                job.get(); // the job failed: its exception
                throw new AssertionError("the job ended before " + what);
              }
              return false;
            });
  }

  @ParameterizedTest(name = "{0}, {1}")
  @CsvSource({
    "DirectRunner, STREAM",
    "FlinkRunner, STREAM",
    "SparkRunner, REPEAT",
    "DirectRunner, REPEAT"
  })
  void aChangeCommittedAfterTheStartReachesBronzeAndTheJobStopsCleanly(
      String runner, Continuous.Form form) throws Exception {
    assumeTrue(Runners.available(runner), Runners.missing(runner));
    JobFixture f = new JobFixture(dir);
    f.db.enableCdc(ORDERS);
    for (int t = 0; t < 5; t++) {
      f.insertCommit(t, 2);
    }
    ContinuousMode.Stop stop = ContinuousMode.Stop.create();
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);
    CompletableFuture<JobSummary> job =
        CompletableFuture.supplyAsync(
            () ->
                CdcToDeltaJob.runContinuously(
                    f.config(),
                    Runners.options(runner),
                    out,
                    () -> {},
                    new Continuous(form, Duration.ofSeconds(1), WAIT.multipliedBy(2), stop)));
    try {
      await("the first commits are in bronze", () -> bronze(f).size() == 10, job);

      f.db
          .transaction(at(30))
          .insert(ORDERS, order(3000, "new", "30.00"))
          .update(ORDERS, List.of(100), java.util.Map.of("status", "paid"))
          .commit();
      f.db.transaction(at(31)).delete(ORDERS, List.of(0)).commit();
      await("the later commits are in bronze", () -> bronze(f).size() == 14, job);
    } finally {
      stop.request();
    }
    JobSummary summary = job.get(WAIT.toSeconds(), TimeUnit.SECONDS);
    stop.forget();
    String printed = bytes.toString(StandardCharsets.UTF_8);

    assertEquals(f.sourceChanges(), bronze(f), "every change exactly once: " + printed);
    assertEquals(14, summary.rows(), printed);
    List<Long> batchIds =
        f.factBatches().stream()
            .map(b -> Long.parseLong(b.substring(0, b.indexOf(':'))))
            .collect(Collectors.toList());
    assertEquals(
        LongStream.range(0, batchIds.size()).boxed().collect(Collectors.toList()),
        batchIds,
        "one facts row per batch, numbered without gaps");
    assertEquals(summary.batches(), batchIds.size(), printed);
    assertEquals(
        Lsn.parse(f.factBatches().get(batchIds.size() - 1).split(":")[2]),
        summary.position().orElseThrow().endLsn(),
        "the position is the last batch's end");
    assertTrue(
        printed.contains(
            form == Continuous.Form.STREAM
                ? "Stopped: every batch read was committed"
                : "Stopped after"),
        printed);
  }

  /** How many bounded runs a repeating job has started, from its printed lines. */
  private static int boundedRuns(ByteArrayOutputStream printed) {
    return (int)
        printed
            .toString(StandardCharsets.UTF_8)
            .lines()
            .filter(l -> l.startsWith("Bounded run "))
            .count();
  }

  /**
   * Repeated bounded runs over a quiet source: the polls that find nothing new write nothing (no
   * {@code nothing_new} facts row, no commit to any table), while an idle entry of {@code
   * cdc.lsn_time_mapping} added between polls still ends a batch (its facts row, no bronze commit)
   * that moves the position and the verdict. A run without {@code --continuous} keeps writing its
   * one {@code nothing_new} row (CdcToDeltaJobTest).
   */
  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"SparkRunner", "DirectRunner"})
  void idlePollsWriteNothingAndAnIdleEntryStillMovesTheVerdict(String runner) throws Exception {
    assumeTrue(Runners.available(runner), Runners.missing(runner));
    JobFixture f = new JobFixture(dir);
    f.db.enableCdc(ORDERS);
    f.insertCommit(0, 3);
    f.insertCommit(1, 3);
    Finalization verdicts = new Finalization(f.tables, f.control, Clock.systemUTC());
    ContinuousMode.Stop stop = ContinuousMode.Stop.create();
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);
    CompletableFuture<JobSummary> job =
        CompletableFuture.supplyAsync(
            () ->
                CdcToDeltaJob.runContinuously(
                    f.config(),
                    Runners.options(runner),
                    out,
                    () -> {},
                    new Continuous(
                        Continuous.Form.REPEAT,
                        Duration.ofSeconds(1),
                        WAIT.multipliedBy(2),
                        stop)));
    long bronzeVersion;
    long factsVersion;
    long controlVersion;
    Lsn idle;
    try {
      // Run 1 reads the two commits; runs 2 to 4 find nothing new (run 5 has started).
      await("four bounded runs are done", () -> boundedRuns(bytes) >= 5, job);
      assertEquals(List.of("0:6:0x0000002A000001000011"), f.factBatches(), bytes.toString());
      assertEquals(List.of(), f.factEvents(), "the idle polls wrote no nothing_new row");
      assertEquals(Optional.of(LocalDateTime.of(2026, 9, 28, 13, 0)), verdicts.verdict(f.bronze));
      bronzeVersion = f.tables.version(f.bronze);
      factsVersion = f.tables.version(f.facts);
      controlVersion = f.tables.version(f.control);

      idle = f.db.idle(at(125));
      await(
          "the idle entry at 15:55 moved the verdict to 15:00",
          () ->
              verdicts.verdict(f.bronze).equals(Optional.of(LocalDateTime.of(2026, 9, 28, 15, 0))),
          job);
      int runs = boundedRuns(bytes);
      await("three more bounded runs are done", () -> boundedRuns(bytes) >= runs + 3, job);
    } finally {
      stop.request();
    }
    JobSummary summary = job.get(WAIT.toSeconds(), TimeUnit.SECONDS);
    stop.forget();
    String printed = bytes.toString(StandardCharsets.UTF_8);

    assertEquals(List.of("0:6:0x0000002A000001000011", "1:0:" + idle), f.factBatches(), printed);
    assertEquals(List.of(), f.factEvents(), "no nothing_new row in a continuous run: " + printed);
    assertEquals(
        factsVersion + 1, f.tables.version(f.facts), "one facts commit: the idle entry's batch");
    assertEquals(
        controlVersion + 1, f.tables.version(f.control), "one control commit: the verdict moved");
    assertEquals(
        bronzeVersion, f.tables.version(f.bronze), "a batch without rows: no bronze commit");
    assertEquals(2, summary.batches(), printed);
    assertEquals(6, summary.rows(), printed);
    assertEquals(idle, summary.position().orElseThrow().endLsn(), "the idle entry is the position");
    assertEquals(Optional.of(LocalDateTime.of(2026, 9, 28, 15, 0)), summary.verdict(), printed);
  }
}
