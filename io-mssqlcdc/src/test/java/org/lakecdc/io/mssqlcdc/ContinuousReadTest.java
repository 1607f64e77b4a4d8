package org.lakecdc.io.mssqlcdc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.CI;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.T0;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.insertOrder;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.BooleanSupplier;
import org.apache.beam.runners.direct.DirectOptions;
import org.apache.beam.runners.direct.DirectRunner;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.transforms.Combine;
import org.apache.beam.sdk.transforms.Count;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;
import org.apache.beam.sdk.transforms.windowing.FixedWindows;
import org.apache.beam.sdk.transforms.windowing.IntervalWindow;
import org.apache.beam.sdk.transforms.windowing.Window;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.Row;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.io.mssqlcdc.client.SchemaChangedError;
import org.lakecdc.io.mssqlcdc.fake.FakeScenarios;
import org.lakecdc.io.mssqlcdc.fake.FakeSqlServer;

/**
 * The continuous form on the DirectRunner: a commit made after the start arrives, the watermark
 * crosses an idle hour without changes, the pipeline stops when cancelled, and a type change in the
 * source stops the running read before its batch is emitted (docs/scenarios.md C051).
 */
class ContinuousReadTest {
  /** What the running pipelines saw, per test run (the DoFns below are serialized). */
  private static final Map<String, Queue<String>> SEEN = new ConcurrentHashMap<>();

  /** Notified after each record, so a test waits on what was seen rather than on time. */
  private static final Object SEEN_CHANGED = new Object();

  /** Records {@code what} for {@code run} and wakes the tests waiting on it. */
  private static void record(String run, String what) {
    SEEN.get(run).add(what);
    synchronized (SEEN_CHANGED) {
      SEEN_CHANGED.notifyAll();
    }
  }

  @TempDir Path dir;

  /** Records "row:<order_id>" for each change row. */
  static final class RecordRows extends DoFn<Row, Void> {
    private final String run;

    RecordRows(String run) {
      this.run = run;
    }

    @ProcessElement
    public void process(@Element Row row) {
      record(run, "row:" + row.getInt32("order_id"));
    }
  }

  /** Records "window:<start>:<count>" when a one-minute window of rows fires. */
  static final class RecordWindows extends DoFn<Long, Void> {
    private final String run;

    RecordWindows(String run) {
      this.run = run;
    }

    @ProcessElement
    public void process(@Element Long count, BoundedWindow window) {
      record(run, "window:" + ((IntervalWindow) window).start() + ":" + count);
    }
  }

  /**
   * Waits until {@code condition} on what the pipeline recorded holds, woken by each record, for at
   * most 60 s.
   */
  private static boolean eventually(BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    synchronized (SEEN_CHANGED) {
      while (!condition.getAsBoolean()) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          return false;
        }
        SEEN_CHANGED.wait(Math.max(1, left / 1_000_000));
      }
      return true;
    }
  }

  @Test
  void picksUpLaterCommitsMovesTheWatermarkOverAnIdleHourAndStopsWhenCancelled() throws Exception {
    FakeSqlServer db = FakeScenarios.orders(dir);
    insertOrder(db, T0, 1, "new", "1.00");
    String run = UUID.randomUUID().toString();
    SEEN.put(run, new ConcurrentLinkedQueue<>());

    DirectOptions options = PipelineOptionsFactory.as(DirectOptions.class);
    options.setRunner(DirectRunner.class);
    options.setBlockOnRun(false);
    Pipeline pipeline = Pipeline.create(options);
    PCollection<Row> rows =
        pipeline.apply(
            MssqlCdcIO.read()
                .withSourceConfiguration(
                    SourceConfiguration.create(CI).withClientFactory(db.clientFactory()))
                .withContinuous(true)
                .withPollInterval(org.joda.time.Duration.millis(100)));
    rows.apply("record rows", ParDo.of(new RecordRows(run)));
    rows.apply(Window.into(FixedWindows.of(org.joda.time.Duration.standardMinutes(1))))
        .apply(Combine.globally(Count.<Row>combineFn()).withoutDefaults())
        .apply("record windows", ParDo.of(new RecordWindows(run)));
    PipelineResult result = pipeline.run();
    try {
      Queue<String> seen = SEEN.get(run);
      assertTrue(eventually(() -> seen.contains("row:1")), "the first change arrives: " + seen);

      insertOrder(db, T0.plus(Duration.ofMinutes(30)), 555, "new", "5.55");
      assertTrue(
          eventually(() -> seen.contains("row:555")),
          "a commit made after the start arrives: " + seen);
      String firstWindow = "window:" + new org.joda.time.Instant(T0.toEpochMilli()) + ":1";
      assertTrue(
          eventually(() -> seen.contains(firstWindow)),
          "the commit at T0+30m moved the watermark past T0's window: " + seen);
      String lateWindow =
          "window:"
              + new org.joda.time.Instant(T0.plus(Duration.ofMinutes(30)).toEpochMilli())
              + ":1";
      assertTrue(!seen.contains(lateWindow), "T0+30m's window waits for the watermark: " + seen);

      db.idle(T0.plus(Duration.ofMinutes(90)));
      assertTrue(
          eventually(() -> seen.contains(lateWindow)),
          "an idle entry an hour later moves the watermark with no change rows: " + seen);
      assertEquals(
          List.of("row:1", "row:555"),
          seen.stream().filter(s -> s.startsWith("row:")).sorted().toList());
    } finally {
      // Cancelling stops the pipeline; the DirectRunner may report FAILED instead of CANCELLED when
      // its executor shuts down while a timer is being delivered (a race inside the runner). A
      // clean stop of the read itself is tested with a stop condition below.
      assertTrue(result.cancel().isTerminal());
      SEEN.remove(run);
    }
  }

  /** Stop flags of the runs below, by run (the stop condition is serialized with the read). */
  private static final Map<String, Boolean> STOP = new ConcurrentHashMap<>();

  @Test
  void aStopConditionEndsTheReadAfterItsBatchAndThePipelineFinishesByItself() throws Exception {
    FakeSqlServer db = FakeScenarios.orders(dir);
    insertOrder(db, T0, 1, "new", "1.00");
    String run = UUID.randomUUID().toString();
    SEEN.put(run, new ConcurrentLinkedQueue<>());
    STOP.put(run, false);

    DirectOptions options = PipelineOptionsFactory.as(DirectOptions.class);
    options.setRunner(DirectRunner.class);
    options.setBlockOnRun(false);
    Pipeline pipeline = Pipeline.create(options);
    pipeline
        .apply(
            MssqlCdcIO.read()
                .withSourceConfiguration(
                    SourceConfiguration.create(CI).withClientFactory(db.clientFactory()))
                .withContinuous(true)
                .withPollInterval(org.joda.time.Duration.millis(100))
                .withStopCondition(() -> STOP.get(run)))
        .apply("record rows", ParDo.of(new RecordRows(run)));
    PipelineResult result = pipeline.run();
    try {
      Queue<String> seen = SEEN.get(run);
      assertTrue(eventually(() -> seen.contains("row:1")), "the first change arrives: " + seen);
      STOP.put(run, true);
      assertEquals(
          PipelineResult.State.DONE,
          result.waitUntilFinish(org.joda.time.Duration.standardSeconds(60)),
          "the read ends and the pipeline finishes without being cancelled");
      assertEquals(List.of("row:1"), List.copyOf(seen));
    } finally {
      if (!result.getState().isTerminal()) {
        result.cancel();
      }
      STOP.remove(run);
      SEEN.remove(run);
    }
  }

  @Test
  void c051ARunningReadStopsAtATypeChangeWithNothingOfTheFailedBatchEmitted() throws Exception {
    FakeSqlServer db = FakeScenarios.orders(dir);
    FakeScenarios.commitOrders(db, 3);
    String run = UUID.randomUUID().toString();
    SEEN.put(run, new ConcurrentLinkedQueue<>());

    DirectOptions options = PipelineOptionsFactory.as(DirectOptions.class);
    options.setRunner(DirectRunner.class);
    options.setBlockOnRun(false);
    Pipeline pipeline = Pipeline.create(options);
    pipeline
        .apply(
            MssqlCdcIO.read()
                .withSourceConfiguration(
                    SourceConfiguration.create(CI).withClientFactory(db.clientFactory()))
                .withContinuous(true)
                .withPollInterval(org.joda.time.Duration.millis(100)))
        .apply("record rows", ParDo.of(new RecordRows(run)));
    PipelineResult result = pipeline.run();
    try {
      Queue<String> seen = SEEN.get(run);
      assertTrue(
          eventually(() -> seen.size() == 3), "all available data is processed first: " + seen);

      db.ddl(
          FakeScenarios.ORDERS,
          "ALTER TABLE dbo.orders ALTER COLUMN amount decimal(20,4)",
          T0.plus(Duration.ofMinutes(3)));
      insertOrder(db, T0.plus(Duration.ofMinutes(3)), 3, "new", "1.2345");

      Pipeline.PipelineExecutionException e =
          assertThrows(
              Pipeline.PipelineExecutionException.class,
              () -> result.waitUntilFinish(org.joda.time.Duration.standardSeconds(60)));
      Throwable cause = e;
      while (cause != null && !(cause instanceof SchemaChangedError)) {
        cause = cause.getCause();
      }
      assertTrue(cause != null, "the read fails with SchemaChangedError: " + e);
      assertTrue(
          cause.getMessage().contains("Restart the query to re-infer the schema"),
          cause.getMessage());
      assertTrue(
          cause.getMessage().contains("amount DECIMAL(20,4) (read as decimal(18,2))"),
          cause.getMessage());
      assertEquals(
          List.of("row:0", "row:1", "row:2"),
          seen.stream().sorted().toList(),
          "nothing of the failed batch was emitted");
    } finally {
      if (!result.getState().isTerminal()) {
        result.cancel();
      }
      SEEN.remove(run);
    }
  }
}
