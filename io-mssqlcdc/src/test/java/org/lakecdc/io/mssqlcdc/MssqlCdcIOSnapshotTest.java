package org.lakecdc.io.mssqlcdc;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.CI;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.ORDERS;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.SNAPSHOT_AT;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.T0;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.commitOrders;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.insertOrder;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.lsn;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.minutes;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.IntStream;
import org.apache.beam.sdk.Pipeline.PipelineExecutionException;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.coders.KvCoder;
import org.apache.beam.sdk.coders.ListCoder;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.coders.VarLongCoder;
import org.apache.beam.sdk.metrics.MetricNameFilter;
import org.apache.beam.sdk.metrics.MetricResult;
import org.apache.beam.sdk.metrics.MetricsFilter;
import org.apache.beam.sdk.testing.PAssert;
import org.apache.beam.sdk.testing.TestPipeline;
import org.apache.beam.sdk.transforms.Count;
import org.apache.beam.sdk.transforms.MapElements;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.Row;
import org.apache.beam.sdk.values.TypeDescriptors;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.junit.rules.Timeout;
import org.lakecdc.io.mssqlcdc.client.CaptureInstanceNotFoundError;
import org.lakecdc.io.mssqlcdc.client.CdcClient;
import org.lakecdc.io.mssqlcdc.client.IsolationLevel;
import org.lakecdc.io.mssqlcdc.fake.ColumnDefinition;
import org.lakecdc.io.mssqlcdc.fake.FakeScenarios;
import org.lakecdc.io.mssqlcdc.fake.FakeSqlServer;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.io.mssqlcdc.source.RowSink;

/**
 * {@code MssqlCdcIO.snapshot()} in pipelines on the DirectRunner, driven by the simulator
 * (docs/architecture.md "Data flow"; docs/scenarios.md C056, C076, C078, C079).
 */
public class MssqlCdcIOSnapshotTest {
  @Rule public final transient TestPipeline pipeline = TestPipeline.create();
  @Rule public final transient TemporaryFolder folder = new TemporaryFolder();

  /**
   * The JUnit 4 tests run on the vintage engine, which junit-platform.properties' Jupiter timeout
   * does not reach: each pipeline test fails after 5 minutes (its slowest takes 20 s).
   */
  @Rule public final transient Timeout timeout = Timeout.seconds(300);

  private FakeSqlServer orders() throws IOException {
    return FakeScenarios.orders(folder.newFolder("src").toPath());
  }

  private static SourceConfiguration source(FakeSqlServer db) {
    return SourceConfiguration.create(CI).withClientFactory(db.clientFactory());
  }

  private static MssqlCdcIO.Snapshot snapshot(FakeSqlServer db) {
    return MssqlCdcIO.snapshot().withSourceConfiguration(source(db));
  }

  /** {@code order_id|status|_operation|_start_lsn|_seqval|_command_id|_commit_ts} of each row. */
  private static PCollection<String> describe(PCollection<Row> rows) {
    return rows.apply(
        "describe",
        MapElements.into(TypeDescriptors.strings())
            .via(
                r ->
                    r.getValue("order_id")
                        + "|"
                        + r.getString("status")
                        + "|"
                        + r.getInt32("_operation")
                        + "|"
                        + r.getString("_start_lsn")
                        + "|"
                        + r.getString("_seqval")
                        + "|"
                        + r.getValue("_command_id")
                        + "|"
                        + r.getValue("_commit_ts")));
  }

  private static long snapshotRowsCounter(PipelineResult result) {
    long total = 0;
    for (MetricResult<Long> counter :
        result
            .metrics()
            .queryMetrics(
                MetricsFilter.builder()
                    .addNameFilter(MetricNameFilter.named("mssqlcdc", "snapshot_rows"))
                    .build())
            .getCounters()) {
      total += counter.getAttempted();
    }
    return total;
  }

  /**
   * C076: S is max_lsn recorded when the pipeline is built, before any row is read. A commit made
   * after that (order 10, and order 2 deleted) is in the rows read, stamped with S: the stream
   * after S replays it, by design. Every row arrives exactly once across three partitions.
   */
  @Test
  public void c076RowsAreStampedWithTheSRecordedBeforeTheReadAndArriveOnce() throws Exception {
    FakeSqlServer db = FakeScenarios.snapshotScenario(folder.newFolder("c076").toPath());
    MssqlCdcIO.Snapshot snapshot =
        MssqlCdcIO.snapshot()
            .withSourceConfiguration(source(db).withColumns("order_id INT, status STRING"))
            .withNumPartitions(3);
    PCollection<Row> rows = pipeline.apply(snapshot);
    Lsn later =
        db.transaction(T0.plus(Duration.ofHours(2)))
            .insert(ORDERS, FakeScenarios.order(10, "late", null))
            .delete(ORDERS, List.of(2))
            .commit();
    assertTrue(later.isAfter(SNAPSHOT_AT));
    String stamp = "0|0x0000002A0000010000D1|null|null|2026-09-28T14:50";
    List<String> expected = new ArrayList<>();
    expected.add("null|no key|" + stamp);
    for (int id : new int[] {0, 1, 3, 4, 6, 7, 8, 9, 10}) {
      String status = id == 3 ? "paid" : id == 10 ? "late" : "new";
      expected.add(id + "|" + status + "|" + stamp);
    }
    PAssert.that(describe(rows)).containsInAnyOrder(expected);
    PAssert.thatSingleton(rows.apply(Count.globally())).isEqualTo(10L);
    PipelineResult result = pipeline.run();
    assertEquals(PipelineResult.State.DONE, result.waitUntilFinish());
    assertEquals(10L, snapshotRowsCounter(result));
  }

  @Test
  public void c079ACompositeKeyWithNullsIsReadExactlyOnceWithFourPartitions() throws Exception {
    FakeSqlServer db = FakeSqlServer.open(folder.newFolder("c079").toPath());
    db.createTable(
        "dbo.sales",
        List.of(
            ColumnDefinition.of("region", "int"),
            ColumnDefinition.of("id", "varchar(10)"),
            ColumnDefinition.of("status", "varchar(10)")),
        List.of("region", "id"));
    db.enableCdc("dbo.sales");
    Object[][] keys = {
      {null, null}, {null, "x"}, {null, "y"}, {1, null}, {1, "a"}, {1, "b"}, {2, null}, {2, "b"}
    };
    FakeSqlServer.Transaction tx = db.transaction(T0);
    for (Object[] k : keys) {
      Map<String, Object> row = new HashMap<>();
      row.put("region", k[0]);
      row.put("id", k[1]);
      row.put("status", "s");
      tx.insert("dbo.sales", row);
    }
    tx.commit();
    PCollection<Row> rows =
        pipeline.apply(
            MssqlCdcIO.snapshot()
                .withSourceConfiguration(
                    SourceConfiguration.create("dbo_sales")
                        .withClientFactory(db.clientFactory())
                        .withColumns("region INT, id STRING, status STRING"))
                .withNumPartitions(4));
    PAssert.that(
            rows.apply(
                MapElements.into(TypeDescriptors.strings())
                    .via(r -> r.getValue("region") + "," + r.getString("id"))))
        .containsInAnyOrder(
            "null,null", "null,x", "null,y", "1,null", "1,a", "1,b", "2,null", "2,b");
    pipeline.run().waitUntilFinish();
  }

  @Test
  public void c078AStringKeyIsReadOnceInFourPartitions() throws Exception {
    FakeSqlServer db = FakeSqlServer.open(folder.newFolder("c078").toPath());
    db.createTable(
        "dbo.codes",
        List.of(ColumnDefinition.of("code", "nvarchar(10)"), ColumnDefinition.of("n", "int")),
        List.of("code"));
    db.enableCdc("dbo.codes");
    for (int i = 0; i < 5; i++) {
      db.transaction(minutes(i)).insert("dbo.codes", Map.of("code", "C" + i, "n", i)).commit();
    }
    PCollection<Row> rows =
        pipeline.apply(
            MssqlCdcIO.snapshot()
                .withSourceConfiguration(
                    SourceConfiguration.create("dbo_codes").withClientFactory(db.clientFactory()))
                .withNumPartitions(4));
    PAssert.that(
            rows.apply(
                MapElements.into(TypeDescriptors.strings())
                    .via(r -> r.getString("code") + "=" + r.getInt32("n"))))
        .containsInAnyOrder("C0=0", "C1=1", "C2=2", "C3=3", "C4=4");
    pipeline.run().waitUntilFinish();
  }

  @Test
  public void anEmptyTableGivesNoRows() throws Exception {
    FakeSqlServer db = orders();
    insertOrder(db, T0, 1, "new", "1.00");
    db.transaction(minutes(1)).delete(ORDERS, List.of(1)).commit();
    PCollection<Row> rows = pipeline.apply(snapshot(db).withNumPartitions(3));
    PAssert.that(rows).empty();
    pipeline.run().waitUntilFinish();
  }

  /**
   * C056: after {@code DROP COLUMN status} the snapshot reads the still-captured column as NULL.
   */
  @Test
  public void c056ASnapshotAfterADroppedColumnReadsItAsNull() throws Exception {
    FakeSqlServer db = orders();
    commitOrders(db, 3);
    db.dropColumn(ORDERS, "status");
    Map<String, Object> three = new HashMap<>();
    three.put("order_id", 3);
    db.transaction(minutes(5)).insert(ORDERS, three).commit();
    PCollection<Row> rows = pipeline.apply(snapshot(db).withNumPartitions(2));
    assertTrue(rows.getSchema().hasField("status"));
    PAssert.that(
            rows.apply(
                MapElements.into(TypeDescriptors.strings())
                    .via(r -> r.getInt32("order_id") + "," + r.getString("status"))))
        .containsInAnyOrder("0,null", "1,null", "2,null", "3,null");
    PAssert.that(
            rows.apply(
                "stamps",
                MapElements.into(TypeDescriptors.strings())
                    .via(r -> r.getString("_start_lsn") + "@" + r.getValue("_commit_ts"))))
        .containsInAnyOrder(
            IntStream.range(0, 4).mapToObj(i -> lsn(4) + "@2026-09-28T13:55").toList());
    pipeline.run().waitUntilFinish();
  }

  @Test
  public void theSchemaIsTheChangeReadsWithAndWithoutCommandId() throws Exception {
    FakeSqlServer db = orders();
    commitOrders(db, 1);
    assertEquals(
        pipeline
            .apply(
                "read",
                MssqlCdcIO.read()
                    .withSourceConfiguration(
                        SourceConfiguration.create(CI).withClientFactory(db.clientFactory())))
            .getSchema(),
        pipeline.apply("snapshot", snapshot(db)).getSchema());
    PCollection<Row> without =
        pipeline.apply(
            "without",
            MssqlCdcIO.snapshot().withSourceConfiguration(source(db).withIncludeCommandId(false)));
    assertFalse(without.getSchema().hasField("_command_id"));
    assertEquals(
        pipeline
            .apply(
                "read without",
                MssqlCdcIO.read()
                    .withSourceConfiguration(
                        SourceConfiguration.create(CI)
                            .withClientFactory(db.clientFactory())
                            .withColumns("order_id BIGINT")
                            .withIncludeCommandId(false)))
            .getSchema(),
        pipeline
            .apply(
                "declared",
                MssqlCdcIO.snapshot()
                    .withSourceConfiguration(
                        source(db).withColumns("order_id BIGINT").withIncludeCommandId(false)))
            .getSchema());
    PAssert.that(
            without.apply(
                MapElements.into(TypeDescriptors.strings())
                    .via(
                        r ->
                            r.getInt32("order_id")
                                + "|"
                                + r.getString("status")
                                + "|"
                                + r.getDecimal("amount")
                                + "|"
                                + r.getInt32("_operation")
                                + "|"
                                + r.getString("_start_lsn")
                                + "|"
                                + r.getString("_seqval")
                                + "|"
                                + r.getValue("_commit_ts"))))
        .containsInAnyOrder("0|new|0.00|0|" + lsn(0) + "|null|2026-09-28T13:50");
    pipeline.run().waitUntilFinish();
  }

  /**
   * The job's way: record S once with {@code resolveSnapshotLsn()}, then pass it; later commits
   * never move the stamp.
   */
  @Test
  public void aRecordedSIsStampedEvenAfterLaterCommits() throws Exception {
    FakeSqlServer db = orders();
    commitOrders(db, 2);
    MssqlCdcIO.Snapshot snapshot = snapshot(db).withIsolationLevel(IsolationLevel.SNAPSHOT);
    Lsn s = snapshot.resolveSnapshotLsn();
    assertEquals(lsn(1), s);
    insertOrder(db, minutes(9), 9, "new", "9.00");
    assertEquals(lsn(2), snapshot.resolveSnapshotLsn());
    PCollection<Row> rows = pipeline.apply(snapshot.withSnapshotLsn(s));
    PAssert.that(
            rows.apply(
                MapElements.into(TypeDescriptors.strings())
                    .via(r -> r.getInt32("order_id") + "@" + r.getString("_start_lsn"))))
        .containsInAnyOrder("0@" + lsn(1), "1@" + lsn(1), "9@" + lsn(1));
    pipeline.run().waitUntilFinish();
    assertEquals(s, snapshot.withSnapshotLsn(s).resolveSnapshotLsn());
  }

  @Test
  public void withoutACommitAtOrBeforeSThePipelineFailsExplainingWhy() throws Exception {
    FakeSqlServer db = orders();
    try (CdcClient client = db.openClient()) {
      assertEquals(Optional.empty(), client.maxLsn());
    }
    pipeline.apply(snapshot(db));
    PipelineExecutionException e =
        assertThrows(PipelineExecutionException.class, () -> pipeline.run().waitUntilFinish());
    assertTrue(e.getCause() instanceof IllegalStateException);
    assertThat(e.getCause().getMessage(), containsString("has no commit time"));
    assertThat(e.getCause().getMessage(), containsString("retry once the capture job has run"));
  }

  @Test
  public void badOptionsNameTheOption() throws Exception {
    IllegalArgumentException noInstance =
        assertThrows(IllegalArgumentException.class, () -> pipeline.apply(MssqlCdcIO.snapshot()));
    assertEquals(
        "MssqlCdcIO.snapshot() needs a source: withSourceConfiguration() is required",
        noInstance.getMessage());
    IllegalArgumentException blankInstance =
        assertThrows(IllegalArgumentException.class, () -> SourceConfiguration.create(" "));
    assertEquals(
        "captureInstance must name a capture instance, not ' '", blankInstance.getMessage());
    IllegalArgumentException noClient =
        assertThrows(
            IllegalArgumentException.class,
            () ->
                pipeline.apply(
                    MssqlCdcIO.snapshot().withSourceConfiguration(SourceConfiguration.create(CI))));
    assertEquals(
        "MssqlCdcIO.snapshot() needs a way to reach SQL Server: withClientFactory() is required"
            + " (or withDataSourceConfiguration(), withDataSourceProviderFn() on its"
            + " SourceConfiguration)",
        noClient.getMessage());
    IllegalArgumentException partitions =
        assertThrows(
            IllegalArgumentException.class, () -> MssqlCdcIO.snapshot().withNumPartitions(0));
    assertEquals("numPartitions must be a positive integer, not '0'", partitions.getMessage());
    IllegalArgumentException zero =
        assertThrows(
            IllegalArgumentException.class, () -> MssqlCdcIO.snapshot().withSnapshotLsn(Lsn.ZERO));
    assertEquals(
        "snapshotLsn must be an LSN recorded before the read (above 0x00000000000000000000), not"
            + " 0x00000000000000000000",
        zero.getMessage());
    IllegalArgumentException isolation =
        assertThrows(
            IllegalArgumentException.class, () -> MssqlCdcIO.snapshot().withIsolationLevel(null));
    assertThat(isolation.getMessage(), containsString("withIsolationLevel()"));
    FakeSqlServer db = orders();
    commitOrders(db, 1);
    IllegalArgumentException columns =
        assertThrows(
            IllegalArgumentException.class,
            () ->
                pipeline.apply(
                    MssqlCdcIO.snapshot()
                        .withSourceConfiguration(
                            source(db).withColumns("order_id INT, amout DECIMAL(18,2)"))));
    assertThat(
        columns.getMessage(),
        containsString("No capture instance of the table (dbo_orders) captures amout"));
    CaptureInstanceNotFoundError unknown =
        assertThrows(
            CaptureInstanceNotFoundError.class,
            () ->
                pipeline.apply(
                    MssqlCdcIO.snapshot()
                        .withSourceConfiguration(source(db).withCaptureInstance("dbo_ordres"))));
    assertThat(unknown.getMessage(), containsString("'dbo_ordres'"));
    pipeline.enableAbandonedNodeEnforcement(false);
  }

  @Test
  public void sCannotBeResolvedBeforeCaptureKnowsTheInstance() {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class, () -> MssqlCdcIO.snapshot().resolveSnapshotLsn());
    assertThat(e.getMessage(), containsString("withSourceConfiguration() is required"));
    pipeline.enableAbandonedNodeEnforcement(false);
  }

  /**
   * A test sink: the {@code order_id}s (and {@code _start_lsn} of the first row) of each range it
   * writes, as {@code (sequence, ["id", ...])}; counts its setups and teardowns per JVM.
   */
  private static final class IdsSink implements RowSink<KV<Long, List<String>>> {
    static final java.util.concurrent.atomic.AtomicInteger SETUPS =
        new java.util.concurrent.atomic.AtomicInteger();
    static final java.util.concurrent.atomic.AtomicInteger TEARDOWNS =
        new java.util.concurrent.atomic.AtomicInteger();

    @Override
    public void setup() {
      SETUPS.incrementAndGet();
    }

    @Override
    public KV<Long, List<String>> write(long sequence, java.util.Iterator<Row> rows) {
      List<String> ids = new ArrayList<>();
      while (rows.hasNext()) {
        Row row = rows.next();
        ids.add(row.getValue("order_id") + "@" + row.getString("_start_lsn"));
      }
      return KV.of(sequence, ids);
    }

    @Override
    public Coder<KV<Long, List<String>>> resultCoder() {
      return KvCoder.of(VarLongCoder.of(), ListCoder.of(StringUtf8Coder.of()));
    }

    @Override
    public void teardown() {
      TEARDOWNS.incrementAndGet();
    }
  }

  /**
   * The snapshot written through a sink: one result per planned key range, the range's number as
   * the sequence, each row written exactly once, in key order within its range, stamped with S; the
   * rows counter counts every row once.
   */
  @Test
  public void writeToHandsEachRangeToTheSinkOnceNumberedInKeyOrder() throws Exception {
    FakeSqlServer db = FakeScenarios.snapshotScenario(folder.newFolder("sink").toPath());
    PCollection<KV<Long, List<String>>> written =
        pipeline.apply(
            MssqlCdcIO.snapshot()
                .withSourceConfiguration(source(db).withColumns("order_id INT, status STRING"))
                .withNumPartitions(3)
                .writeTo(new IdsSink()));
    assertEquals(
        KvCoder.of(VarLongCoder.of(), ListCoder.of(StringUtf8Coder.of())), written.getCoder());
    String s = "@0x0000002A0000010000D1";
    // NTILE(3) of NULL,0,1,2,3,4,6,7,8,9: ranges [open, 3), [3, 7), [7, open).
    PAssert.that(written)
        .containsInAnyOrder(
            KV.of(0L, List.of("null" + s, "0" + s, "1" + s, "2" + s)),
            KV.of(1L, List.of("3" + s, "4" + s, "6" + s)),
            KV.of(2L, List.of("7" + s, "8" + s, "9" + s)));
    PipelineResult result = pipeline.run();
    assertEquals(PipelineResult.State.DONE, result.waitUntilFinish());
    assertEquals(10L, snapshotRowsCounter(result));
    assertEquals(IdsSink.SETUPS.get(), IdsSink.TEARDOWNS.get());
  }

  /** An empty table is one range: the sink is still called once, with no row. */
  @Test
  public void writeToCallsTheSinkOnceForAnEmptyTable() throws Exception {
    FakeSqlServer db = orders();
    insertOrder(db, T0, 1, "new", "1.00");
    db.transaction(minutes(1)).delete(ORDERS, List.of(1)).commit();
    PCollection<KV<Long, List<String>>> written =
        pipeline.apply(snapshot(db).withNumPartitions(3).writeTo(new IdsSink()));
    PAssert.that(written).containsInAnyOrder(KV.of(0L, List.<String>of()));
    pipeline.run().waitUntilFinish();
  }

  /** A sink that reads none of its rows. */
  private static final class ReadsNothingSink implements RowSink<Long> {
    @Override
    public Long write(long sequence, java.util.Iterator<Row> rows) {
      return sequence;
    }

    @Override
    public Coder<Long> resultCoder() {
      return VarLongCoder.of();
    }
  }

  /** A sink that returns without reading its rows fails the read instead of losing them. */
  @Test
  public void aSinkThatLeavesRowsUnreadFailsTheRead() throws Exception {
    FakeSqlServer db = orders();
    commitOrders(db, 2);
    pipeline.apply(snapshot(db).writeTo(new ReadsNothingSink()));
    PipelineExecutionException e =
        assertThrows(PipelineExecutionException.class, () -> pipeline.run().waitUntilFinish());
    assertThat(
        e.getCause().getMessage(),
        containsString(
            "The sink returned before reading every row of snapshot range 0 of dbo_orders"));
  }
}
