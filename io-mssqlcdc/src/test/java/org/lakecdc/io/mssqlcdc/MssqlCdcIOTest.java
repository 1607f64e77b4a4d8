package org.lakecdc.io.mssqlcdc;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.CI;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.ORDERS;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.T0;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.commitOrders;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.insertOrder;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.lsn;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.minutes;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.order;

import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.stream.IntStream;
import org.apache.beam.sdk.Pipeline.PipelineExecutionException;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.schemas.Schema;
import org.apache.beam.sdk.testing.PAssert;
import org.apache.beam.sdk.testing.TestPipeline;
import org.apache.beam.sdk.transforms.Count;
import org.apache.beam.sdk.transforms.Distinct;
import org.apache.beam.sdk.transforms.MapElements;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.PCollectionTuple;
import org.apache.beam.sdk.values.Row;
import org.apache.beam.sdk.values.TypeDescriptors;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.junit.rules.Timeout;
import org.lakecdc.io.mssqlcdc.client.CaptureInstanceNotFoundError;
import org.lakecdc.io.mssqlcdc.client.DataLossError;
import org.lakecdc.io.mssqlcdc.client.SchemaChangedError;
import org.lakecdc.io.mssqlcdc.fake.ColumnDefinition;
import org.lakecdc.io.mssqlcdc.fake.FakeScenarios;
import org.lakecdc.io.mssqlcdc.fake.FakeSqlServer;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.io.mssqlcdc.read.ChangeBatch;
import org.lakecdc.io.mssqlcdc.read.SchemaChangePolicy;
import org.lakecdc.io.mssqlcdc.read.StartingLsn;
import org.lakecdc.io.mssqlcdc.schema.OutputType;

/** {@code MssqlCdcIO.read()} in pipelines on the DirectRunner, driven by the simulator. */
public class MssqlCdcIOTest {
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

  private static MssqlCdcIO.Read read(FakeSqlServer db) {
    return MssqlCdcIO.read().withSourceConfiguration(source(db));
  }

  private static Lsn insertAll(FakeSqlServer db, Instant at, int... ids) {
    FakeSqlServer.Transaction tx = db.transaction(at);
    for (int id : ids) {
      tx.insert(ORDERS, order(id, "new", id + ".00"));
    }
    return tx.commit();
  }

  private static PCollection<Integer> orderIds(PCollection<Row> rows) {
    return rows.apply(
        "order ids", MapElements.into(TypeDescriptors.integers()).via(r -> r.getInt32("order_id")));
  }

  @Test
  public void c001TheBoundedFormReadsUpToMaxLsnInBatchesOfAtMostFourCommits() throws Exception {
    FakeSqlServer db = orders();
    for (int t = 0; t < 10; t++) {
      insertAll(db, minutes(t), t * 100, t * 100 + 1, t * 100 + 2);
    }
    PCollectionTuple out = pipeline.apply(read(db).withMaxCommitsPerBatch(4).withBatches());
    PAssert.that(
            out.get(MssqlCdcIO.BATCHES)
                .apply(MapElements.into(TypeDescriptors.longs()).via(ChangeBatch::rows)))
        .containsInAnyOrder(12L, 12L, 6L);
    PAssert.that(
            out.get(MssqlCdcIO.BATCHES)
                .apply(
                    "ends",
                    MapElements.into(TypeDescriptors.strings()).via(b -> b.toLsn().toString())))
        .containsInAnyOrder(lsn(3).toString(), lsn(7).toString(), lsn(9).toString());
    PCollection<Integer> ids = orderIds(out.get(MssqlCdcIO.CHANGES));
    PAssert.that(ids)
        .containsInAnyOrder(
            IntStream.range(0, 10)
                .boxed()
                .flatMap(t -> IntStream.range(0, 3).mapToObj(i -> t * 100 + i))
                .toList());
    PAssert.thatSingleton(ids.apply(Distinct.create()).apply(Count.globally())).isEqualTo(30L);
    assertEquals(PipelineResult.State.DONE, pipeline.run().waitUntilFinish());
  }

  @Test
  public void c015NumPartitionsSplitsABatchWithoutDuplicates() throws Exception {
    FakeSqlServer db = orders();
    for (int t = 0; t < 9; t++) {
      insertAll(db, minutes(t), 2 * t, 2 * t + 1);
    }
    PCollection<Integer> ids =
        orderIds(pipeline.apply(read(db).withNumPartitions(3).withMinRowsPerPartition(1)));
    PAssert.that(ids).containsInAnyOrder(IntStream.range(0, 18).boxed().toList());
    pipeline.run().waitUntilFinish();
  }

  /**
   * 2,000 rows in 200 commits: the DirectRunner checkpoints the reader every 100 outputs or second;
   * every change still arrives exactly once.
   */
  @Test
  public void checkpointsOfTheRunnerNeitherLoseNorRepeatAChange() throws Exception {
    FakeSqlServer db = orders();
    try (FakeSqlServer.Bulk bulk = db.bulk()) {
      for (int t = 0; t < 200; t++) {
        int base = t * 10;
        int[] ids = IntStream.range(0, 10).map(i -> base + i).toArray();
        insertAll(db, T0.plusSeconds(t), ids);
      }
    }
    PCollectionTuple out = pipeline.apply(read(db).withMaxCommitsPerBatch(7).withBatches());
    PAssert.that(orderIds(out.get(MssqlCdcIO.CHANGES)))
        .containsInAnyOrder(IntStream.range(0, 2000).boxed().toList());
    PAssert.thatSingleton(out.get(MssqlCdcIO.BATCHES).apply(Count.globally())).isEqualTo(29L);
    pipeline.run().waitUntilFinish();
  }

  @Test
  public void c232WithoutCommandIdTheColumnIsAbsent() throws Exception {
    FakeSqlServer db = orders();
    insertAll(db, minutes(0), 1, 2, 3);
    insertAll(db, minutes(1), 4, 5, 6);
    PCollection<Row> rows =
        pipeline.apply(
            MssqlCdcIO.read().withSourceConfiguration(source(db).withIncludeCommandId(false)));
    assertFalse(rows.getSchema().hasField("_command_id"));
    PAssert.that(orderIds(rows)).containsInAnyOrder(1, 2, 3, 4, 5, 6);
    pipeline.run().waitUntilFinish();
  }

  @Test
  public void c207TheSchemaIsInferredAndADeclaredOneWins() throws Exception {
    FakeSqlServer db = orders();
    insertAll(db, minutes(0), 1);
    Schema inferred = pipeline.apply("inferred", read(db)).getSchema();
    assertEquals(
        List.of(
            "_capture_instance",
            "_start_lsn",
            "_seqval",
            "_operation",
            "_command_id",
            "_commit_ts",
            "order_id",
            "status",
            "amount",
            "updated_at"),
        inferred.getFieldNames());
    assertEquals(
        OutputType.parse("DECIMAL(18,2)"),
        OutputType.fromBeamFieldType(inferred.getField("amount").getType()));
    assertEquals(
        OutputType.TIMESTAMP_NTZ,
        OutputType.fromBeamFieldType(inferred.getField("updated_at").getType()));
    PCollection<Row> declared =
        pipeline.apply(
            "declared",
            MssqlCdcIO.read().withSourceConfiguration(source(db).withColumns("order_id BIGINT")));
    assertEquals(
        Schema.FieldType.INT64.withNullable(true),
        declared.getSchema().getField("order_id").getType());
    assertEquals(7, declared.getSchema().getFieldCount());
    PAssert.that(
            declared.apply(
                MapElements.into(TypeDescriptors.longs()).via(r -> r.getInt64("order_id"))))
        .containsInAnyOrder(1L);
    pipeline.run().waitUntilFinish();
  }

  @Test
  public void c218ADeclaredColumnNamedLikeAMetadataColumnFailsTheBuild() throws Exception {
    FakeSqlServer db = orders();
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () ->
                pipeline.apply(
                    MssqlCdcIO.read()
                        .withSourceConfiguration(
                            source(db).withColumns("order_id INT, _Seqval STRING"))));
    assertThat(e.getMessage(), containsString("_Seqval"));
    assertThat(e.getMessage(), containsString("'columns'"));
    pipeline.enableAbandonedNodeEnforcement(false);
  }

  @Test
  public void c220ADeclaredColumnNoInstanceCapturesFailsTheBuild() throws Exception {
    FakeSqlServer db = orders();
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () ->
                pipeline.apply(
                    MssqlCdcIO.read()
                        .withSourceConfiguration(
                            source(db).withColumns("order_id INT, amout DECIMAL(18,2)"))));
    assertThat(
        e.getMessage(),
        containsString("No capture instance of the table (dbo_orders) captures amout"));
    pipeline.enableAbandonedNodeEnforcement(false);
  }

  @Test
  public void anUnsupportedTypeFailsTheBuildNamingColumnTypeAndFix() throws Exception {
    FakeSqlServer db = FakeSqlServer.open(folder.newFolder("geo").toPath());
    db.createTable(
        "dbo.places",
        List.of(ColumnDefinition.of("id", "int"), ColumnDefinition.of("shape", "geography")),
        List.of("id"));
    db.enableCdc("dbo.places");
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () ->
                pipeline.apply(
                    MssqlCdcIO.read()
                        .withSourceConfiguration(
                            SourceConfiguration.create("dbo_places")
                                .withClientFactory(db.clientFactory()))));
    assertThat(e.getMessage(), containsString("shape"));
    assertThat(e.getMessage(), containsString("geography"));
    assertThat(e.getMessage(), containsString("columns"));
    pipeline.enableAbandonedNodeEnforcement(false);
  }

  @Test
  public void anUnknownCaptureInstanceListsTheExistingOnes() throws Exception {
    FakeSqlServer db = orders();
    CaptureInstanceNotFoundError e =
        assertThrows(
            CaptureInstanceNotFoundError.class,
            () ->
                pipeline.apply(
                    MssqlCdcIO.read()
                        .withSourceConfiguration(
                            SourceConfiguration.create("dbo_ordres")
                                .withClientFactory(db.clientFactory()))));
    assertThat(e.getMessage(), containsString("'dbo_ordres'"));
    assertThat(e.getMessage(), containsString("dbo_orders"));
    pipeline.enableAbandonedNodeEnforcement(false);
  }

  @Test
  public void c213CountOptionsNameTheOptionAndTheValue() {
    IllegalArgumentException zero =
        assertThrows(
            IllegalArgumentException.class, () -> MssqlCdcIO.read().withMaxCommitsPerBatch(0));
    assertEquals(
        "maxCommitsPerBatch must be a positive integer, not '0'; omit it to read up to max_lsn",
        zero.getMessage());
    IllegalArgumentException negative =
        assertThrows(
            IllegalArgumentException.class, () -> MssqlCdcIO.read().withMaxCommitsPerBatch(-5));
    assertThat(
        negative.getMessage(),
        containsString("maxCommitsPerBatch must be a positive integer, not '-5'"));
    IllegalArgumentException partitions =
        assertThrows(IllegalArgumentException.class, () -> MssqlCdcIO.read().withNumPartitions(0));
    assertEquals("numPartitions must be a positive integer, not '0'", partitions.getMessage());
    pipeline.enableAbandonedNodeEnforcement(false);
  }

  @Test
  public void missingConfigurationNamesTheBuilderMethod() {
    IllegalArgumentException noInstance =
        assertThrows(IllegalArgumentException.class, () -> pipeline.apply(MssqlCdcIO.read()));
    assertThat(noInstance.getMessage(), containsString("withSourceConfiguration() is required"));
    IllegalArgumentException noClient =
        assertThrows(
            IllegalArgumentException.class,
            () ->
                pipeline.apply(
                    MssqlCdcIO.read().withSourceConfiguration(SourceConfiguration.create(CI))));
    assertThat(noClient.getMessage(), containsString("withClientFactory() is required"));
    pipeline.enableAbandonedNodeEnforcement(false);
  }

  @Test
  public void c063APurgedRangeFailsThePipelineWithDataLoss() throws Exception {
    FakeSqlServer db = orders();
    List<Lsn> first = commitOrders(db, 2);
    insertOrder(db, T0.plus(Duration.ofHours(1)), 700, "new", "7.00");
    Lsn last = insertOrder(db, T0.plus(Duration.ofHours(2)), 701, "new", "7.01");
    db.cleanup(CI, last);
    pipeline.apply(read(db).withStartingLsn(StartingLsn.after(first.get(1))));
    PipelineExecutionException e =
        assertThrows(PipelineExecutionException.class, () -> pipeline.run().waitUntilFinish());
    assertTrue(e.getCause() instanceof DataLossError);
    assertThat(e.getCause().getMessage(), containsString("re-snapshot is required"));
  }

  @Test
  public void c050ATypeChangeFailsTheBoundedPipelineBeforeItsBatchIsEmitted() throws Exception {
    FakeSqlServer db = orders();
    commitOrders(db, 3);
    MssqlCdcIO.Read read = read(db).withStartingLsn(StartingLsn.after(lsn(2)));
    PCollection<Integer> ids = orderIds(pipeline.apply(read));
    db.ddl(ORDERS, "ALTER TABLE dbo.orders ALTER COLUMN amount decimal(20,4)", minutes(3));
    insertOrder(db, minutes(3), 3, "new", "1.2345");
    PAssert.that(ids).empty();
    PipelineExecutionException e =
        assertThrows(PipelineExecutionException.class, () -> pipeline.run().waitUntilFinish());
    assertTrue(e.getCause() instanceof SchemaChangedError);
    assertThat(e.getCause().getMessage(), containsString("amount DECIMAL(20,4) (read as decimal"));
    assertThat(
        e.getCause().getMessage(), containsString("Restart the query to re-infer the schema"));
  }

  @Test
  public void c052AnUnknownSchemaChangePolicyIsRefusedWhenSet() {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> MssqlCdcIO.read().withSchemaChangePolicy(SchemaChangePolicy.parse("ignore")));
    assertEquals("schemaChangePolicy must be 'classify' or 'fail', not 'ignore'", e.getMessage());
    pipeline.enableAbandonedNodeEnforcement(false);
  }
}
