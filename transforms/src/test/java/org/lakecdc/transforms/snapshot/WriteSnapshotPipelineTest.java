package org.lakecdc.transforms.snapshot;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.stream.IntStream;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.coders.RowCoder;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.schemas.Schema;
import org.apache.beam.sdk.transforms.Create;
import org.apache.beam.sdk.transforms.windowing.FixedWindows;
import org.apache.beam.sdk.transforms.windowing.Window;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.Row;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.io.mssqlcdc.MssqlCdcIO;
import org.lakecdc.io.mssqlcdc.SourceConfiguration;
import org.lakecdc.io.mssqlcdc.client.CdcClient;
import org.lakecdc.io.mssqlcdc.client.Commit;
import org.lakecdc.io.mssqlcdc.fake.ColumnDefinition;
import org.lakecdc.io.mssqlcdc.fake.FakeSqlServer;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.transforms.bronze.BronzeTable;
import org.lakecdc.transforms.delta.CommitSummary;
import org.lakecdc.transforms.delta.DeltaTables;
import org.lakecdc.transforms.position.StreamPosition;

/**
 * {@link WriteSnapshotToDelta} in pipelines on the DirectRunner: both forms write their files where
 * the rows are and commit them all in one commit at S, once.
 */
class WriteSnapshotPipelineTest {
  @TempDir Path dir;

  private static final Instant T0 = Instant.parse("2026-09-28T13:00:00Z");
  private static final int ROWS = 500;

  /** A small target: several files per key range. */
  private static final Map<String, String> SMALL_FILES =
      Map.of("delta.kernel.default.parquet.writer.targetMaxFileSize", "2048");

  private final DeltaTables tables = DeltaTables.create();

  /** dbo.orders with orders 0..ROWS-1 (status "s<i>") in one commit at T0. */
  private FakeSqlServer orders() {
    FakeSqlServer db = FakeSqlServer.open(dir.resolve("src"));
    db.createTable(
        "dbo.orders",
        List.of(
            ColumnDefinition.of("order_id", "int"), ColumnDefinition.of("status", "varchar(10)")),
        List.of("order_id"));
    db.enableCdc("dbo.orders");
    FakeSqlServer.Transaction tx = db.transaction(T0);
    for (int i = 0; i < ROWS; i++) {
      tx.insert("dbo.orders", Map.of("order_id", i, "status", "s" + i));
    }
    tx.commit();
    return db;
  }

  private static MssqlCdcIO.Snapshot snapshot(FakeSqlServer db) {
    return MssqlCdcIO.snapshot()
        .withSourceConfiguration(
            SourceConfiguration.create("dbo_orders").withClientFactory(db.clientFactory()))
        .withNumPartitions(3);
  }

  private static StreamPosition atS(FakeSqlServer db, Lsn s) {
    Instant time;
    try (CdcClient client = db.clientFactory().open()) {
      time = client.lastCommitAtOrBefore(s).map(Commit::commitTime).orElseThrow();
    }
    return new StreamPosition("app", 0, -1, s, time, "dbo_orders");
  }

  private static void run(Pipeline pipeline) {
    assertEquals(PipelineResult.State.DONE, pipeline.run().waitUntilFinish());
  }

  private static Pipeline pipeline() {
    return Pipeline.create(PipelineOptionsFactory.create());
  }

  /** The commits of the target's snapshot transaction. */
  private List<CommitSummary> snapshotCommits(String bronze) {
    return tables.history(bronze).stream()
        .filter(c -> "app#snapshot".equals(c.txnAppId()))
        .toList();
  }

  @Test
  void theSnapshotReadWritesItsKeyRangesAndCommitsThemOnceAtS() {
    FakeSqlServer db = orders();
    MssqlCdcIO.Snapshot snapshot = snapshot(db);
    Lsn s = snapshot.resolveSnapshotLsn();
    StreamPosition position = atS(db, s);
    String bronze = dir.resolve("bronze").toString();
    tables.createIfAbsent(bronze, BronzeTable.definition(snapshot.outputSchema()));

    Pipeline first = pipeline();
    first.apply(
        WriteSnapshotToDelta.from(snapshot).to(bronze, position).withHadoopConf(SMALL_FILES));
    run(first);

    List<CommitSummary> commits = snapshotCommits(bronze);
    assertEquals(1, commits.size(), "one snapshot commit");
    assertEquals(OptionalLong.of(0), commits.get(0).txnVersion());
    assertTrue(commits.get(0).filesAdded() > 3, "several files per range: " + commits.get(0));
    assertEquals(
        java.util.Set.of(WriteSnapshotToDelta.SNAPSHOT_DOMAIN, StreamPosition.BRONZE_DOMAIN),
        java.util.Set.copyOf(commits.get(0).domains()));
    WriteSnapshotToDelta.SnapshotRecord record =
        WriteSnapshotToDelta.committedRecord(tables, bronze).orElseThrow();
    assertEquals(s, record.lsn());
    assertEquals((long) ROWS, record.rows());
    assertNull(record.seed());
    assertEquals(
        position.toJson(),
        tables.domainMetadata(bronze, StreamPosition.BRONZE_DOMAIN).orElseThrow());
    List<Map<String, Object>> rows = tables.scan(bronze);
    assertEquals(
        IntStream.range(0, ROWS).boxed().toList(),
        rows.stream().map(r -> (Integer) r.get("order_id")).sorted().toList());
    for (Map<String, Object> row : rows) {
      assertEquals("s" + row.get("order_id"), row.get("status"));
      assertEquals(s.toString(), row.get("_snapshot"));
      assertEquals(s.toString(), row.get("_start_lsn"));
      assertNull(row.get("_batch_id"));
    }

    // A rerun finds the snapshot recorded and commits nothing.
    long version = tables.version(bronze);
    Pipeline again = pipeline();
    again.apply(WriteSnapshotToDelta.from(snapshot).to(bronze, position));
    run(again);
    assertEquals(version, tables.version(bronze));
    assertEquals(1, snapshotCommits(bronze).size());
  }

  @Test
  void rowsOfAPCollectionAreWrittenPerBundleAndCommittedOnceWithTheSeed() {
    FakeSqlServer db = orders();
    MssqlCdcIO.Snapshot snapshot = snapshot(db);
    Schema changeSchema = snapshot.outputSchema();
    Lsn s = snapshot.resolveSnapshotLsn();
    StreamPosition position = atS(db, s);
    String bronze = dir.resolve("bronze").toString();
    tables.createIfAbsent(bronze, BronzeTable.definition(changeSchema));
    WriteSnapshotToDelta.SeedSource seed =
        new WriteSnapshotToDelta.SeedSource("/copies/orders", "2026-09-28T13:52:00Z");

    Pipeline pipeline = pipeline();
    pipeline
        .apply(snapshot.withSnapshotLsn(s))
        .apply(
            WriteSnapshotToDelta.to(bronze, changeSchema, position)
                .withSeed(seed)
                .withHadoopConf(SMALL_FILES));
    run(pipeline);

    List<CommitSummary> commits = snapshotCommits(bronze);
    assertEquals(1, commits.size());
    assertTrue(commits.get(0).filesAdded() > 1, "files rolled: " + commits.get(0));
    WriteSnapshotToDelta.SnapshotRecord record =
        WriteSnapshotToDelta.committedRecord(tables, bronze).orElseThrow();
    assertEquals((long) ROWS, record.rows());
    assertEquals(seed, record.seed());
    assertEquals(
        IntStream.range(0, ROWS).boxed().toList(),
        tables.scan(bronze).stream().map(r -> (Integer) r.get("order_id")).sorted().toList());
  }

  @Test
  void noRowsStillRecordTheSnapshotAndThePosition() {
    FakeSqlServer db = orders();
    MssqlCdcIO.Snapshot snapshot = snapshot(db);
    Schema changeSchema = snapshot.outputSchema();
    StreamPosition position = atS(db, snapshot.resolveSnapshotLsn());
    String bronze = dir.resolve("bronze").toString();
    tables.createIfAbsent(bronze, BronzeTable.definition(changeSchema));

    Pipeline pipeline = pipeline();
    pipeline
        .apply(Create.empty(RowCoder.of(changeSchema)))
        .apply(WriteSnapshotToDelta.to(bronze, changeSchema, position));
    run(pipeline);

    assertEquals(0L, WriteSnapshotToDelta.committedSnapshotRows(tables, bronze).orElseThrow());
    assertEquals(1, snapshotCommits(bronze).size());
    assertEquals(0, snapshotCommits(bronze).get(0).filesAdded());
    assertEquals(List.of(), tables.scan(bronze));
  }

  @Test
  void rowsOutsideTheGlobalWindowAreRefused() {
    Schema changeSchema = Schema.builder().addInt32Field("order_id").build();
    StreamPosition position =
        new StreamPosition("app", 0, -1, Lsn.parse("0x0000002A000001000071"), T0, "dbo_orders");
    Pipeline pipeline = pipeline();
    PCollection<Row> windowed =
        pipeline
            .apply(Create.of(new ArrayList<Row>()).withRowSchema(changeSchema))
            .apply(Window.into(FixedWindows.of(org.joda.time.Duration.standardMinutes(1))));
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> windowed.apply(WriteSnapshotToDelta.to("/tmp/none", changeSchema, position)));
    assertTrue(
        e.getMessage().startsWith("WriteSnapshotToDelta needs its rows in the global window"));
  }
}
