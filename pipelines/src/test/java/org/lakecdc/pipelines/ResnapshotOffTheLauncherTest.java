package org.lakecdc.pipelines;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;
import static org.lakecdc.pipelines.JobFixture.ORDERS;
import static org.lakecdc.pipelines.JobFixture.at;
import static org.lakecdc.pipelines.JobFixture.order;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.beam.sdk.values.Row;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.lakecdc.io.mssqlcdc.client.CdcClientFactory;
import org.lakecdc.io.mssqlcdc.fake.ColumnDefinition;
import org.lakecdc.io.mssqlcdc.read.DataLossPolicy;
import org.lakecdc.io.mssqlcdc.schema.MetadataColumns;
import org.lakecdc.pipelines.cdc.CdcToDeltaJob;
import org.lakecdc.pipelines.cdc.JobSummary;
import org.lakecdc.pipelines.targets.JobConfig;
import org.lakecdc.pipelines.targets.SnapshotSettings;
import org.lakecdc.transforms.bronze.CrashPlan;
import org.lakecdc.transforms.bronze.CrashPoint;
import org.lakecdc.transforms.delta.DeltaColumn;
import org.lakecdc.transforms.facts.FactsTable;
import org.lakecdc.transforms.position.StreamPosition;

/**
 * A whole re-snapshot after data loss ({@code --onDataLoss=resnapshot}) is read in the pipeline, as
 * a bootstrap snapshot is ({@code SnapshotOffTheLauncherTest}): the launcher records the new
 * generation's S and reads no row of the table; the pipeline's workers read every row once, commit
 * the snapshot, write its {@code resnapshot} event and stream on from S. For a run of one table and
 * for a run of many, on every runner. The simulator's clients count the rows each thread read
 * ({@link ReadTableHook}); the launcher's thread is the one that runs {@code beforeStream}, called
 * once every table is planned.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class ResnapshotOffTheLauncherTest {
  private static final String CUSTOMERS = "dbo.customers";

  @TempDir Path dir;

  /**
   * Orders 1..6 before CDC, orders 100, 101, 200, 201 after: bootstrapped (10 rows) by a plain run
   * of {@code config}; then order 300 inserted and the changes up to it purged by CDC cleanup
   * before the target read them: 11 rows, lost after the bootstrap.
   */
  private static void bootstrappedThenPurged(JobFixture f, List<JobConfig> plain) {
    for (int i = 1; i <= 6; i++) {
      f.db.transaction(at(0)).insert(ORDERS, order(i, "old", i + ".00")).commit();
    }
    f.db.enableCdc(ORDERS);
    f.insertCommit(1, 2);
    f.insertCommit(2, 2);
    if (plain.size() == 1) {
      f.run(plain.get(0));
    } else {
      CdcToDeltaJob.runAll(plain, JobFixture.direct(), quiet(), () -> {});
    }
    f.insertCommit(3, 1);
    f.db.cleanup(JobFixture.CI, f.db.idle(at(4)));
  }

  /**
   * A customers table (customer 7) beside the orders, both bootstrapped by a run of many tables,
   * the orders' changes then purged ({@link #bootstrappedThenPurged}), customer 8 inserted after:
   * the customers target's configuration.
   */
  private JobConfig customersBesideOrdersPurged(JobFixture f) {
    f.db.createTable(
        CUSTOMERS,
        List.of(ColumnDefinition.of("id", "int"), ColumnDefinition.of("name", "varchar(20)")),
        List.of("id"));
    f.db.enableCdc(CUSTOMERS);
    f.db.transaction(at(0)).insert(CUSTOMERS, Map.of("id", 7, "name", "Ana")).commit();
    JobConfig customers =
        JobConfig.builder(
                f.db.clientFactory(),
                "dbo_customers",
                dir.resolve("delta/dbo_customers").toString(),
                f.facts,
                f.control)
            .appId("customers-v1")
            .build();
    bootstrappedThenPurged(f, List.of(orders(f, f.db.clientFactory()), customers));
    f.db.transaction(at(5)).insert(CUSTOMERS, Map.of("id", 8, "name", "Bo")).commit();
    return customers;
  }

  private static PrintStream quiet() {
    return new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
  }

  /** The orders target read through {@code factory}, re-snapshotting after data loss. */
  private static JobConfig orders(JobFixture f, CdcClientFactory factory) {
    return JobConfig.builder(factory, JobFixture.CI, f.bronze, f.facts, f.control)
        .appId("orders-v1")
        .onDataLoss(DataLossPolicy.RESNAPSHOT)
        .maxCommitsPerBatch(4)
        .build();
  }

  /**
   * The run's beforeStream ({@link SnapshotOffTheLauncherTest#recording}): records the launcher's
   * thread and the rows read so far in {@code launcher}, then commits order 600 (after S: the
   * re-snapshot's read sees it, 12 rows, and the stream after S reads its change).
   */
  private static Runnable recording(
      AtomicReference<SnapshotOffTheLauncherTest.Launcher> launcher,
      ReadTableHook reads,
      JobFixture f) {
    return SnapshotOffTheLauncherTest.recording(launcher, reads, () -> f.insertCommit(6, 1));
  }

  @ParameterizedTest
  @ValueSource(strings = {Runners.DIRECT, Runners.SPARK, Runners.FLINK})
  void aReSnapshotOfOneTableIsReadInThePipeline(String runner) {
    assumeTrue(Runners.available(runner), Runners.missing(runner));
    JobFixture f = new JobFixture(dir);
    bootstrappedThenPurged(f, List.of(orders(f, f.db.clientFactory())));
    ReadTableHook reads = ReadTableHook.beforeReadOf(f.db.clientFactory(), "orders", () -> {});
    AtomicReference<SnapshotOffTheLauncherTest.Launcher> launcher = new AtomicReference<>();

    JobSummary summary =
        f.run(orders(f, reads), Runners.options(runner), recording(launcher, reads, f));

    assertEquals(Map.of(), launcher.get().rowsReadBefore(), "no row read while planning");
    SnapshotOffTheLauncherTest.assertOneReadOfTheSnapshotOffTheLauncher(
        reads, launcher.get(), 12, f.lastOutput);
    assertEquals(12, summary.snapshotRows(), f.lastOutput);
    assertEquals(1, summary.batches(), f.lastOutput);
    assertGenerationOneStartedAfterASnapshotOf12Rows(f, f.lastOutput);
  }

  @ParameterizedTest
  @ValueSource(strings = {Runners.DIRECT, Runners.SPARK, Runners.FLINK})
  void aReSnapshotInARunOfManyTablesIsReadInThePipeline(String runner) {
    assumeTrue(Runners.available(runner), Runners.missing(runner));
    JobFixture f = new JobFixture(dir);
    JobConfig customers = customersBesideOrdersPurged(f);
    ReadTableHook reads = ReadTableHook.beforeReadOf(f.db.clientFactory(), "orders", () -> {});
    AtomicReference<SnapshotOffTheLauncherTest.Launcher> launcher = new AtomicReference<>();
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();

    List<CdcToDeltaJob.TableOutcome> outcomes =
        CdcToDeltaJob.runAll(
            List.of(orders(f, reads), customers),
            Runners.options(runner),
            new PrintStream(bytes, true, StandardCharsets.UTF_8),
            recording(launcher, reads, f));
    String printed = bytes.toString(StandardCharsets.UTF_8);

    assertEquals(Map.of(), launcher.get().rowsReadBefore(), "no row read while planning");
    SnapshotOffTheLauncherTest.assertOneReadOfTheSnapshotOffTheLauncher(
        reads, launcher.get(), 12, printed);
    assertEquals(12, outcomes.get(0).summary().snapshotRows(), printed);
    assertEquals(1, outcomes.get(0).summary().batches(), printed);
    assertFalse(outcomes.get(0).failed(), printed);
    assertEquals(1, outcomes.get(1).summary().batches(), "customer 8 streamed: " + printed);
    assertGenerationOneStartedAfterASnapshotOf12Rows(f, printed);
  }

  /**
   * A chunked re-snapshot is read in the pipeline too: the launcher records S, plans the chunks
   * from the key's extent and starts the generation; the chunks' rows are read beside the stream,
   * none on the launcher. (Its beforeStream updates order 1: no new key outside the planned
   * extent.)
   */
  @ParameterizedTest
  @ValueSource(strings = {Runners.DIRECT, Runners.SPARK, Runners.FLINK})
  void aChunkedReSnapshotIsReadInThePipeline(String runner) {
    assumeTrue(Runners.available(runner), Runners.missing(runner));
    JobFixture f = new JobFixture(dir);
    bootstrappedThenPurged(f, List.of(orders(f, f.db.clientFactory())));
    ReadTableHook reads = ReadTableHook.beforeReadOf(f.db.clientFactory(), "orders", () -> {});
    AtomicReference<SnapshotOffTheLauncherTest.Launcher> launcher = new AtomicReference<>();
    JobConfig chunked =
        orders(f, reads).toBuilder()
            .snapshot(new SnapshotSettings(SnapshotSettings.Mode.CHUNKED, 4, 2, true, 0))
            .build();

    JobSummary summary =
        f.run(
            chunked,
            Runners.options(runner),
            SnapshotOffTheLauncherTest.recording(
                launcher,
                reads,
                () ->
                    f.db
                        .transaction(at(6))
                        .update(ORDERS, List.of(1), Map.of("status", "paid"))
                        .commit()));

    assertEquals(Map.of(), launcher.get().rowsReadBefore(), "no row read while planning");
    SnapshotOffTheLauncherTest.assertOneReadOfTheSnapshotOffTheLauncher(
        reads, launcher.get(), 11, f.lastOutput);
    assertEquals(1, summary.batches(), f.lastOutput);
    List<Row> events = resnapshotEvents(f);
    assertEquals(1, events.size(), f.lastOutput);
    assertEquals(11L, events.get(0).getInt64(FactsTable.ROWS), f.lastOutput);
    StreamPosition position =
        StreamPosition.fromJson(f.tables.domainMetadata(f.bronze, StreamPosition.BRONZE_DOMAIN))
            .orElseThrow();
    assertEquals("orders-v1.g1", position.appId(), f.lastOutput);
    assertEquals(0, position.batchId(), f.lastOutput);
  }

  /**
   * In a run of many tables, a re-snapshot whose S CDC cleanup purges while the pipeline reads it
   * commits nothing and stops its table alone, as when the launcher read it: its {@code
   * resnapshot_failed} and {@code table_failed} rows, bronze still in generation 0, no second
   * attempt in the same run (even with {@code --resnapshotIntervalDays=0}); the other table
   * streams.
   */
  @Test
  void aReSnapshotWhoseSIsPurgedWhileItIsReadStopsItsTableAloneInARunOfMany() {
    JobFixture f = new JobFixture(dir);
    JobConfig customers = customersBesideOrdersPurged(f);
    ReadTableHook purging =
        ReadTableHook.beforeReadOf(
            f.db.clientFactory(),
            "orders",
            () -> {
              f.insertCommit(7, 1);
              f.db.cleanup(JobFixture.CI, f.db.idle(at(8)));
            });
    JobConfig orders = orders(f, purging).toBuilder().resnapshotIntervalDays(0).build();
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();

    List<CdcToDeltaJob.TableOutcome> outcomes =
        CdcToDeltaJob.runAll(
            List.of(orders, customers),
            JobFixture.direct(),
            new PrintStream(bytes, true, StandardCharsets.UTF_8),
            () -> {});
    String printed = bytes.toString(StandardCharsets.UTF_8);

    assertTrue(outcomes.get(0).failed(), printed);
    assertTrue(
        outcomes
            .get(0)
            .failure()
            .orElseThrow()
            .message()
            .startsWith("dbo_orders: the re-snapshot into generation 1 at S = "),
        printed);
    assertEquals(1, outcomes.get(1).summary().batches(), "customer 8 streamed: " + printed);
    List<Row> failed =
        f.tables.scan(f.facts, FactsTable.SCHEMA).stream()
            .filter(r -> "resnapshot_failed".equals(r.getString(FactsTable.EVENT)))
            .toList();
    assertEquals(1, failed.size(), printed);
    assertEquals("orders-v1.g1", failed.get(0).getString(FactsTable.APP_ID));
    assertEquals(List.of(), resnapshotEvents(f), printed);
    assertEquals(
        1,
        f.tables.scan(f.facts, FactsTable.SCHEMA).stream()
            .filter(r -> "snapshot_open".equals(r.getString(FactsTable.EVENT)))
            .filter(r -> r.getString(FactsTable.DETAIL).contains("\"kind\":\"resnapshot\""))
            .count(),
        "one attempt: " + printed);
    StreamPosition position =
        StreamPosition.fromJson(f.tables.domainMetadata(f.bronze, StreamPosition.BRONZE_DOMAIN))
            .orElseThrow();
    assertEquals("orders-v1", position.appId(), "still generation 0");
  }

  /**
   * A crash of the pipeline after the re-snapshot's bronze commit, before its {@code resnapshot}
   * facts row (or right after that row, before the stream), is finished by the rerun: the snapshot
   * is not read again, the event is written once, and the stream goes on from S in generation 1.
   */
  @ParameterizedTest
  @CsvSource({
    "DirectRunner, AFTER_RESNAPSHOT_COMMIT",
    "DirectRunner, AFTER_RESNAPSHOT_EVENT",
    "SparkRunner, AFTER_RESNAPSHOT_COMMIT",
    "SparkRunner, AFTER_RESNAPSHOT_EVENT",
    "FlinkRunner, AFTER_RESNAPSHOT_COMMIT",
    "FlinkRunner, AFTER_RESNAPSHOT_EVENT"
  })
  void aCrashAfterTheReSnapshotsCommitIsFinishedByTheRerun(String runner, CrashPoint point) {
    assumeTrue(Runners.available(runner), Runners.missing(runner));
    JobFixture f = new JobFixture(dir);
    JobConfig config = orders(f, f.db.clientFactory());
    bootstrappedThenPurged(f, List.of(config));
    ReadTableHook reads = ReadTableHook.beforeReadOf(f.db.clientFactory(), "orders", () -> {});
    AtomicReference<SnapshotOffTheLauncherTest.Launcher> launcher = new AtomicReference<>();

    RuntimeException crash =
        assertThrows(
            RuntimeException.class,
            () ->
                f.run(
                    orders(f, reads).withCrash(CrashPlan.batch(point, -1)),
                    Runners.options(runner),
                    recording(launcher, reads, f)));
    assertTrue(causedBy(crash, point), () -> "not the simulated crash: " + crash);
    SnapshotOffTheLauncherTest.assertOneReadOfTheSnapshotOffTheLauncher(
        reads, launcher.get(), 12, String.valueOf(crash));
    long eventsAfterCrash = resnapshotEvents(f).size();
    assertEquals(point == CrashPoint.AFTER_RESNAPSHOT_COMMIT ? 0 : 1, eventsAfterCrash);

    JobSummary rerun = f.run(config, Runners.options(runner), () -> {});

    assertEquals(12, reads.rowsByThread().values().stream().mapToLong(Long::longValue).sum());
    assertEquals(-1, rerun.snapshotRows(), "not read again: " + f.lastOutput);
    assertEquals(1, rerun.batches(), f.lastOutput);
    List<Row> events = resnapshotEvents(f);
    assertEquals(1, events.size(), f.lastOutput);
    // Written by the crashed run's pipeline with its read's rows, or by the rerun's launcher with
    // the rows recorded with the snapshot commit (the read was the crashed run's: its timing is
    // not known to the rerun).
    assertEquals((Long) 12L, events.get(0).getValue(FactsTable.ROWS), f.lastOutput);
    assertEquals(
        point == CrashPoint.AFTER_RESNAPSHOT_COMMIT,
        events.get(0).getValue(FactsTable.DURATION_MS) == null,
        f.lastOutput);
    assertEquals(
        List.of("1", "2", "3", "4", "5", "6", "100", "101", "200", "201", "300", "600"),
        snapshotKeys(f, events.get(0).getString(FactsTable.MAX_LSN)));
    StreamPosition position =
        StreamPosition.fromJson(f.tables.domainMetadata(f.bronze, StreamPosition.BRONZE_DOMAIN))
            .orElseThrow();
    assertEquals("orders-v1.g1", position.appId());
    assertEquals(0, position.batchId(), "order 600's change after S, once");
  }

  private static boolean causedBy(Throwable e, CrashPoint point) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      // Flink hands the failure over as a SerializedThrowable that keeps the message.
      if (t instanceof CrashPoint.SimulatedCrash
          || String.valueOf(t.getMessage()).contains("Simulated crash " + point)) {
        return true;
      }
    }
    return false;
  }

  private static List<Row> resnapshotEvents(JobFixture f) {
    return f.tables.scan(f.facts, FactsTable.SCHEMA).stream()
        .filter(r -> "resnapshot".equals(r.getString(FactsTable.EVENT)))
        .toList();
  }

  /** The order ids of bronze's snapshot rows stamped with {@code s}, in key order. */
  private static List<String> snapshotKeys(JobFixture f, String s) {
    return f
        .tables
        .scan(f.bronze, DeltaColumn.toBeamSchema(f.tables.describe(f.bronze).columns()))
        .stream()
        .filter(r -> s.equals(r.getString(MetadataColumns.SNAPSHOT)))
        .map(r -> r.getValue("order_id"))
        .map(v -> (Integer) v)
        .sorted()
        .map(String::valueOf)
        .toList();
  }

  /**
   * Bronze is in generation 1 at the re-snapshot's S, the run printed so, and the facts table holds
   * its one {@code resnapshot} event of 12 rows.
   */
  private static void assertGenerationOneStartedAfterASnapshotOf12Rows(
      JobFixture f, String printed) {
    StreamPosition position =
        StreamPosition.fromJson(f.tables.domainMetadata(f.bronze, StreamPosition.BRONZE_DOMAIN))
            .orElseThrow();
    assertEquals("orders-v1.g1", position.appId(), printed);
    assertEquals(0, position.batchId(), printed);
    List<Row> events =
        f.tables.scan(f.facts, FactsTable.SCHEMA).stream()
            .filter(r -> "resnapshot".equals(r.getString(FactsTable.EVENT)))
            .toList();
    assertEquals(1, events.size(), printed);
    assertEquals(12L, events.get(0).getInt64(FactsTable.ROWS), printed);
    String s = events.get(0).getString(FactsTable.MAX_LSN);
    assertTrue(
        printed.contains(
            "Target "
                + f.bronze
                + ": generation 1 starts at S = "
                + s
                + " under app id orders-v1.g1 (a snapshot of 12 rows)"),
        printed);
  }
}
