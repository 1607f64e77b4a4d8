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
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;
import java.util.stream.LongStream;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.lakecdc.mssqlcdc.lsn.Lsn;

/**
 * The {@code --continuous} mode: a change committed to the source after the job started reaches
 * bronze, and the job stops cleanly when asked, with every change exactly once and one facts row
 * per batch. The source's continuous form on the DirectRunner and the FlinkRunner; repeated bounded
 * runs on the SparkRunner (and, as the option allows, on the DirectRunner).
 */
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

  private static void await(String what, BooleanSupplier condition, CompletableFuture<?> job)
      throws Exception {
    long until = System.nanoTime() + WAIT.toNanos();
    while (!condition.getAsBoolean()) {
      if (job.isDone()) {
        job.get(); // the job failed: its exception
        throw new AssertionError("the job ended before " + what);
      }
      assertTrue(System.nanoTime() < until, "timed out waiting until " + what);
      Thread.sleep(200);
    }
  }

  @ParameterizedTest(name = "{0}, {1}")
  @CsvSource({
    "DirectRunner, STREAM",
    "FlinkRunner, STREAM",
    "SparkRunner, REPEAT",
    "DirectRunner, REPEAT"
  })
  void aChangeCommittedAfterTheStartReachesBronzeAndTheJobStopsCleanly(
      String runner, CdcToDeltaJob.Continuous.Form form) throws Exception {
    assumeTrue(Runners.available(runner), Runners.missing(runner));
    JobFixture f = new JobFixture(dir);
    f.db.enableCdc(ORDERS);
    for (int t = 0; t < 5; t++) {
      f.insertCommit(t, 2);
    }
    ContinuousMode.Stop stop = ContinuousMode.Stop.create();
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);
    CompletableFuture<CdcToDeltaJob.Summary> job =
        CompletableFuture.supplyAsync(
            () ->
                CdcToDeltaJob.runContinuously(
                    f.config(),
                    Runners.options(runner),
                    out,
                    () -> {},
                    new CdcToDeltaJob.Continuous(
                        form, Duration.ofSeconds(1), WAIT.multipliedBy(2), stop)));
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
    CdcToDeltaJob.Summary summary = job.get(WAIT.toSeconds(), TimeUnit.SECONDS);
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
            form == CdcToDeltaJob.Continuous.Form.STREAM
                ? "Stopped: every batch read was committed"
                : "Stopped after"),
        printed);
  }
}
