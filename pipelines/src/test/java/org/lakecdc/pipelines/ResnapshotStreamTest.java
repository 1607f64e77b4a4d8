package org.lakecdc.pipelines;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.UnaryOperator;
import org.apache.beam.sdk.values.Row;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.io.mssqlcdc.fake.ColumnDefinition;
import org.lakecdc.io.mssqlcdc.fake.FakeSqlServer;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.io.mssqlcdc.read.DataLossPolicy;
import org.lakecdc.io.mssqlcdc.schema.MetadataColumns;
import org.lakecdc.pipelines.cdc.CdcToDeltaJob;
import org.lakecdc.pipelines.cdc.Continuous;
import org.lakecdc.pipelines.cdc.ContinuousMode;
import org.lakecdc.pipelines.cdc.JobSummary;
import org.lakecdc.pipelines.cli.JobExit;
import org.lakecdc.pipelines.targets.JobConfig;
import org.lakecdc.transforms.delta.DeltaColumn;
import org.lakecdc.transforms.delta.DeltaTables;
import org.lakecdc.transforms.facts.FactsTable;

/**
 * A re-snapshot of one table never stops or delays the others (docs/many-tables.md): a continuous
 * run of two tables in which one meets data loss mid-run is re-snapshotted into generation 1 and
 * follows on, while the other's batches keep committing; a chunked re-snapshot; the options.
 */
@Timeout(value = 6, unit = TimeUnit.MINUTES)
class ResnapshotStreamTest {
  private static final Instant T0 = Instant.parse("2026-09-28T13:50:00Z");

  @TempDir Path dir;

  private final DeltaTables tables = DeltaTables.create();

  private String delta(String name) {
    return dir.resolve("delta").resolve(name).toString();
  }

  private FakeSqlServer source() {
    FakeSqlServer db = FakeSqlServer.open(dir.resolve("source"));
    db.createTable(
        "dbo.orders",
        List.of(
            ColumnDefinition.of("order_id", "int"), ColumnDefinition.of("status", "varchar(20)")),
        List.of("order_id"));
    db.createTable(
        "dbo.customers",
        List.of(ColumnDefinition.of("id", "int"), ColumnDefinition.of("name", "varchar(20)")),
        List.of("id"));
    db.enableCdc("dbo.orders");
    db.enableCdc("dbo.customers");
    db.transaction(T0)
        .insert("dbo.orders", Map.of("order_id", 1, "status", "new"))
        .insert("dbo.orders", Map.of("order_id", 2, "status", "new"))
        .commit();
    db.transaction(T0.plusSeconds(60))
        .insert("dbo.customers", Map.of("id", 7, "name", "Ana"))
        .commit();
    return db;
  }

  private List<Row> rows(String path) {
    try {
      return tables.scan(path, DeltaColumn.toBeamSchema(tables.describe(path).columns()));
    } catch (RuntimeException e) {
      return List.of(); // not created yet
    }
  }

  /** Bronze's rows as "op/key", sorted. */
  private List<String> bronze(String ci, String key) {
    List<String> out = new ArrayList<>();
    for (Row r : rows(delta("bronze_" + ci))) {
      out.add(r.getInt32(MetadataColumns.OPERATION) + "/" + r.getInt32(key));
    }
    out.sort(null);
    return out;
  }

  private List<Row> facts(String event, String appId) {
    List<Row> out = new ArrayList<>();
    for (Row r : rows(delta("facts"))) {
      if (java.util.Objects.equals(event, r.getString(FactsTable.EVENT))
          && appId.equals(r.getString(FactsTable.APP_ID))) {
        out.add(r);
      }
    }
    return out;
  }

  private static Instant writtenAt(Row r) {
    return r.getLogicalTypeValue(FactsTable.WRITTEN_AT, LocalDateTime.class)
        .toInstant(java.time.ZoneOffset.UTC);
  }

  @Test
  void c160ATableReSnapshotsMidRunWhileTheOtherTablesBatchesKeepCommitting() throws Exception {
    FakeSqlServer db = source();
    List<JobConfig> configs = new ArrayList<>();
    // One source for both reads; only dbo_orders' re-snapshot reads the table, and its read
    // starts once the other table (a commit every 300 ms, a poll every second) has committed a
    // batch after the re-snapshot's recovery was recorded (its snapshot_open row).
    org.lakecdc.io.mssqlcdc.client.CdcClientFactory source =
        ReadTableHook.before(
            db.clientFactory(),
            () ->
                org.awaitility.Awaitility.await("a dbo_customers batch after dbo_orders' open row")
                    .atMost(Duration.ofSeconds(120))
                    .pollInterval(Duration.ofMillis(200))
                    .pollInSameThread()
                    .until(
                        () ->
                            facts("snapshot_open", "dbo_orders-v1.g1").stream()
                                .map(ResnapshotStreamTest::writtenAt)
                                .anyMatch(
                                    open ->
                                        facts(null, "dbo_customers-v1").stream()
                                            .map(ResnapshotStreamTest::writtenAt)
                                            .anyMatch(t -> t.isAfter(open)))));
    for (String ci : List.of("dbo_orders", "dbo_customers")) {
      configs.add(
          JobConfig.builder(source, ci, delta("bronze_" + ci), delta("facts"), delta("control"))
              .appId(ci + "-v1")
              .bootstrap(false)
              .onDataLoss(DataLossPolicy.RESNAPSHOT)
              .build());
    }
    ContinuousMode.Stop stop = ContinuousMode.Stop.create();
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);
    CompletableFuture<List<CdcToDeltaJob.TableOutcome>> job =
        CompletableFuture.supplyAsync(
            () ->
                CdcToDeltaJob.runAllContinuously(
                    configs,
                    JobFixture.direct(),
                    out,
                    () -> {},
                    new Continuous(
                        Continuous.Form.STREAM,
                        Duration.ofSeconds(1),
                        Duration.ofMinutes(4),
                        stop)));
    // A customer every 300 ms, from the first changes' arrival to the end.
    java.util.concurrent.ScheduledExecutorService customers =
        java.util.concurrent.Executors.newSingleThreadScheduledExecutor();
    java.util.concurrent.atomic.AtomicInteger nextId =
        new java.util.concurrent.atomic.AtomicInteger(100);
    Runnable customer =
        () -> {
          int id = nextId.getAndIncrement();
          // The simulator has one writer at a time: this thread's and the test's writes take
          // turns (two at once could lose a cdc.lsn_time_mapping row).
          synchronized (db) {
            db.transaction(T0.plusSeconds(600 + id))
                .insert("dbo.customers", Map.of("id", id, "name", "c" + id))
                .commit();
          }
        };
    try {
      await(
          "the first changes are in bronze",
          () -> bronze("dbo_orders", "order_id").size() == 2,
          job,
          () -> bytes.toString(StandardCharsets.UTF_8));
      customers.scheduleWithFixedDelay(customer, 0, 300, TimeUnit.MILLISECONDS);
      synchronized (db) {
        try (FakeSqlServer.Bulk bulk = db.bulk()) {
          db.transaction(T0.plusSeconds(300))
              .insert("dbo.orders", Map.of("order_id", 3, "status", "new"))
              .commit();
          Lsn kept =
              db.transaction(T0.plusSeconds(360))
                  .insert("dbo.orders", Map.of("order_id", 4, "status", "new"))
                  .commit();
          db.cleanup("dbo_orders", kept);
        }
      }
      await(
          "dbo_orders was re-snapshotted",
          () -> !facts("resnapshot", "dbo_orders-v1.g1").isEmpty(),
          job,
          () -> bytes.toString(StandardCharsets.UTF_8));
      synchronized (db) {
        db.transaction(T0.plusSeconds(5000))
            .update("dbo.orders", List.of(1), Map.of("status", "paid"))
            .commit();
      }
      await(
          "dbo_orders streams on in generation 1",
          () -> bronze("dbo_orders", "order_id").contains("4/1"),
          job,
          () -> bytes.toString(StandardCharsets.UTF_8));
    } finally {
      customers.shutdown();
      assertTrue(customers.awaitTermination(60, TimeUnit.SECONDS), "the customers' writer ended");
      stop.request();
    }
    List<CdcToDeltaJob.TableOutcome> outcomes = job.get(120, TimeUnit.SECONDS);
    stop.forget();
    String printed = bytes.toString(StandardCharsets.UTF_8);
    assertTrue(
        printed.contains(
            "dbo_orders: CDC cleanup passed the stream; recovering with --onDataLoss=resnapshot"
                + " while the other tables go on"),
        printed);
    assertEquals(
        List.of("0/1", "0/2", "0/3", "0/4", "2/1", "2/2", "3/1", "4/1"),
        bronze("dbo_orders", "order_id"),
        printed);
    // While dbo_orders re-snapshotted (its recovery recorded, then its event), dbo_customers
    // committed batches.
    Row open =
        facts("snapshot_open", "dbo_orders-v1.g1").stream()
            .findFirst()
            .orElseThrow(() -> new AssertionError(printed));
    Instant from = writtenAt(open);
    Instant to = writtenAt(facts("resnapshot", "dbo_orders-v1.g1").get(0));
    long during =
        facts(null, "dbo_customers-v1").stream()
            .map(ResnapshotStreamTest::writtenAt)
            .filter(t -> t.isAfter(from) && t.isBefore(to))
            .count();
    assertTrue(during > 0, "dbo_customers batches between " + from + " and " + to + "\n" + printed);
    assertFalse(outcomes.get(0).failed(), printed);
    assertEquals("dbo_orders-v1.g1", outcomes.get(0).config().streamAppId(), printed);
    assertFalse(outcomes.get(1).failed(), printed);
    assertEquals(1, facts("table_failed", "dbo_orders-v1").size(), printed);
  }

  @Test
  void aContinuousRunOfOneTableReSnapshotsWhenItsStreamMeetsTheLossAndFollowsOn() throws Exception {
    FakeSqlServer db = source();
    JobConfig config =
        JobConfig.builder(
                db.clientFactory(),
                "dbo_orders",
                delta("bronze_dbo_orders"),
                delta("facts"),
                delta("control"))
            .appId("one")
            .bootstrap(false)
            .onDataLoss(DataLossPolicy.RESNAPSHOT)
            .build();
    ContinuousMode.Stop stop = ContinuousMode.Stop.create();
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);
    CompletableFuture<JobSummary> job =
        CompletableFuture.supplyAsync(
            () ->
                CdcToDeltaJob.runContinuously(
                    config,
                    JobFixture.direct(),
                    out,
                    () -> {},
                    new Continuous(
                        Continuous.Form.STREAM,
                        Duration.ofSeconds(1),
                        Duration.ofMinutes(4),
                        stop)));
    try {
      await(
          "the first changes are in bronze",
          () -> bronze("dbo_orders", "order_id").size() == 2,
          job,
          () -> bytes.toString(StandardCharsets.UTF_8));
      try (FakeSqlServer.Bulk bulk = db.bulk()) {
        db.transaction(T0.plusSeconds(300))
            .insert("dbo.orders", Map.of("order_id", 3, "status", "new"))
            .commit();
        db.cleanup(
            "dbo_orders",
            db.transaction(T0.plusSeconds(360))
                .insert("dbo.orders", Map.of("order_id", 4, "status", "new"))
                .commit());
      }
      await(
          "generation 1 follows on",
          () -> !facts("resnapshot", "one.g1").isEmpty(),
          job,
          () -> bytes.toString(StandardCharsets.UTF_8));
      db.transaction(T0.plusSeconds(5000)).delete("dbo.orders", List.of(2)).commit();
      await(
          "the delete after S is streamed",
          () -> bronze("dbo_orders", "order_id").contains("1/2"),
          job,
          () -> bytes.toString(StandardCharsets.UTF_8));
    } finally {
      stop.request();
    }
    JobSummary summary = job.get(120, TimeUnit.SECONDS);
    stop.forget();
    String printed = bytes.toString(StandardCharsets.UTF_8);
    assertTrue(
        printed.contains(
            "dbo_orders: CDC cleanup passed the stream (dbo_orders: change data from "),
        printed);
    assertEquals(
        List.of("0/1", "0/2", "0/3", "0/4", "1/2", "2/1", "2/2"),
        bronze("dbo_orders", "order_id"),
        printed);
    assertEquals(1, summary.position().orElseThrow().generation(), printed);
  }

  @Test
  void aChunkedReSnapshotOpensTheNewGenerationAndIsReadInChunksBesideTheStream() {
    FakeSqlServer db = source();
    List<String> args =
        new ArrayList<>(
            List.of(
                "--fakePath=" + dir.resolve("source"),
                "--captureInstance=dbo_orders",
                "--target=" + delta("bronze_dbo_orders"),
                "--factsTable=" + delta("facts"),
                "--controlTable=" + delta("control"),
                "--silver=" + delta("silver_dbo_orders"),
                "--logFile=" + dir.resolve("run.log")));
    assertEquals(
        0, CdcToDelta.run(args.toArray(String[]::new), System.err, UnaryOperator.identity()));
    try (FakeSqlServer.Bulk bulk = db.bulk()) {
      for (int id = 3; id < 9; id++) {
        db.transaction(T0.plusSeconds(60L * id))
            .insert("dbo.orders", Map.of("order_id", id, "status", "new"))
            .commit();
      }
      db.transaction(T0.plusSeconds(600)).delete("dbo.orders", List.of(1)).commit();
      db.cleanup("dbo_orders", db.idle(T0.plusSeconds(660)));
    }
    args.addAll(
        List.of(
            "--onDataLoss=resnapshot",
            "--snapshot=chunked",
            "--snapshotChunkRows=3",
            "--chunksPerWave=1"));
    assertEquals(
        0, CdcToDelta.run(args.toArray(String[]::new), System.err, UnaryOperator.identity()));
    Row open = facts("snapshot_open", "dbo_orders.g1").get(0);
    assertEquals(
        "{\"mode\":\"chunked\",\"kind\":\"resnapshot\",\"keys\":[\"order_id\"],"
            + "\"plan\":{\"kind\":\"int\",\"lo\":2,\"hi\":8,\"rows\":7},\"generation\":1,"
            + "\"lost_from_ts\":\"2026-09-28T13:51:00Z\",\"lost_to_ts\":\"2026-09-28T14:01:00Z\","
            + "\"capture_instance\":\"dbo_orders\",\"target_id\":\""
            + tables.tableId(delta("bronze_dbo_orders"))
            + "\"}",
        open.getString(FactsTable.DETAIL));
    Row done = facts("resnapshot", "dbo_orders.g1").get(0);
    assertEquals(7L, done.getInt64(FactsTable.ROWS));
    assertEquals(open.getString(FactsTable.MIN_LSN), done.getString(FactsTable.MAX_LSN));
    assertEquals(3, facts("snapshot_chunk", "dbo_orders.g1").size());
    assertEquals(1, facts("bootstrap", "dbo_orders").size(), "the bootstrap row is written once");
    List<String> silver = new ArrayList<>();
    for (Row r : rows(delta("silver_dbo_orders"))) {
      silver.add(r.getInt32("order_id") + "/" + r.getString("status"));
    }
    silver.sort(null);
    assertEquals(
        List.of("2/new", "3/new", "4/new", "5/new", "6/new", "7/new", "8/new"),
        silver,
        "order 1, deleted in the gap, is gone");
  }

  @Test
  void badDataLossOptionsAreRefusedInOneLineWithNothingWritten() {
    source();
    for (String[] bad :
        new String[][] {
          {
            "--onDataLoss=ignore",
            "error: --onDataLoss must be 'fail', 'skip' or 'resnapshot', not 'ignore'"
          },
          {
            "--resnapshotIntervalDays=-1",
            "error: --resnapshotIntervalDays must be 0 or a positive number of days, not '-1'"
          }
        }) {
      ByteArrayOutputStream err = new ByteArrayOutputStream();
      int code =
          CdcToDelta.run(
              new String[] {
                "--fakePath=" + dir.resolve("source"),
                "--target=" + delta("bronze"),
                "--factsTable=" + delta("facts"),
                "--controlTable=" + delta("control"),
                bad[0]
              },
              new PrintStream(err, true, StandardCharsets.UTF_8),
              UnaryOperator.identity());
      assertEquals(JobExit.BAD_OPTION, code, bad[0]);
      assertEquals(bad[1], err.toString(StandardCharsets.UTF_8).strip());
      assertFalse(tables.exists(delta("bronze")), "nothing written");
    }
  }

  private static void await(
      String what,
      BooleanSupplier condition,
      CompletableFuture<?> job,
      java.util.function.Supplier<String> printed) {
    org.awaitility.Awaitility.await(what)
        .atMost(Duration.ofSeconds(120))
        .pollDelay(Duration.ZERO)
        .pollInterval(Duration.ofMillis(200))
        .pollInSameThread()
        .until(
            () -> {
              if (condition.getAsBoolean()) {
                return true;
              }
              if (job.isDone()) {
                try {
                  job.get();
                } catch (java.util.concurrent.ExecutionException e) {
                  throw new AssertionError(
                      "the job failed before " + what + ":\n" + printed.get(), e);
                }
                throw new AssertionError("the job ended before " + what + ":\n" + printed.get());
              }
              return false;
            });
  }
}
