package org.lakecdc.transforms.bronze;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.beam.sdk.values.Row;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.io.mssqlcdc.MssqlCdcIO;
import org.lakecdc.io.mssqlcdc.SourceConfiguration;
import org.lakecdc.io.mssqlcdc.fake.CaptureOptions;
import org.lakecdc.io.mssqlcdc.fake.ColumnDefinition;
import org.lakecdc.io.mssqlcdc.fake.FakeSqlServer;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.io.mssqlcdc.read.BatchSource;
import org.lakecdc.io.mssqlcdc.read.ChangeBatch;
import org.lakecdc.transforms.facts.FactsTable;
import org.lakecdc.transforms.finalization.Granularity;
import org.lakecdc.transforms.position.StreamPosition;

/**
 * The detail of the capture-instance switch event (docs/sql-server.md "Switching to a new capture
 * instance"; C033).
 */
class BatchFactsTest {
  @TempDir Path dir;

  private static final Instant T0 = Instant.parse("2026-09-28T13:50:00Z");

  /**
   * C033's instances: {@code dbo_orders} captures order_id, status, amount, updated_at; {@code
   * dbo_orders_v2} captures order_id, status, amount, note (no updated_at, adds note).
   */
  private FakeSqlServer switchDatabase() {
    FakeSqlServer db = FakeSqlServer.open(dir.resolve("source"));
    db.createTable(
        "dbo.orders",
        List.of(
            ColumnDefinition.of("order_id", "int"),
            ColumnDefinition.of("status", "varchar(20)"),
            ColumnDefinition.of("amount", "decimal(18,2)"),
            ColumnDefinition.of("updated_at", "datetime2(7)"),
            ColumnDefinition.of("note", "varchar(20)")),
        List.of("order_id"));
    db.enableCdc(
        "dbo.orders",
        CaptureOptions.defaults()
            .withCapturedColumns("order_id", "status", "amount", "updated_at")
            .withCreateTime(T0));
    db.enableCdc(
        "dbo.orders",
        CaptureOptions.defaults()
            .withName("dbo_orders_v2")
            .withCapturedColumns("order_id", "status", "amount", "note")
            .withCreateTime(T0.plusSeconds(300)));
    return db;
  }

  @Test
  void c033TheSwitchDetailNamesTheReadColumnsTheNewerInstanceNoLongerCaptures() {
    FakeSqlServer db = switchDatabase();
    List<String> read =
        BatchFacts.readColumns(
            MssqlCdcIO.read()
                .withSourceConfiguration(
                    SourceConfiguration.create("dbo_orders").withClientFactory(db.clientFactory()))
                .outputSchema());
    assertEquals(List.of("order_id", "status", "amount", "updated_at", "note"), read);

    assertEquals(
        "dbo_orders -> dbo_orders_v2; no longer captured, read as NULL: updated_at",
        BatchFacts.switchDetail("dbo_orders", "dbo_orders_v2", List.of("updated_at")));
    assertEquals(
        "dbo_orders -> dbo_orders_v2",
        BatchFacts.switchDetail("dbo_orders", "dbo_orders_v2", List.of()),
        "nothing lost: the plain detail");
  }

  /**
   * capture_lag_seconds is measured on the source's clock when the client knows it (the
   * simulator's, whose history may lie anywhere in time), else on the job's clock; written_at is
   * always the job's.
   */
  @Test
  void captureLagIsMeasuredOnTheSourcesClockWhenTheClientKnowsIt() {
    FakeSqlServer db = switchDatabase();
    Map<String, Object> order = new HashMap<>();
    order.put("order_id", 1);
    order.put("status", "new");
    Instant committed = T0.plusSeconds(600);
    Lsn lsn = db.transaction(committed).insert("dbo.orders", order).commit();
    StreamPosition start = new StreamPosition("dbo_orders", 0, -1, Lsn.ZERO, null, "dbo_orders");
    DeltaTarget target =
        new DeltaTarget(
            "bronze",
            "facts",
            "control",
            start,
            Granularity.HOUR,
            T0,
            null,
            org.lakecdc.transforms.delta.HadoopConf.empty(),
            null);
    Clock job = Clock.fixed(Instant.parse("2026-12-01T11:00:00Z"), ZoneOffset.UTC);
    Row onSourceClock =
        BatchFacts.rows(
                target,
                start,
                batchSeenAt(lsn, committed, committed.plusSeconds(42)),
                BatchStats.empty(0),
                T0,
                Duration.ZERO,
                job)
            .get(0);
    assertEquals(42.0, onSourceClock.getDouble(FactsTable.CAPTURE_LAG_SECONDS));
    assertEquals(
        LocalDateTime.of(2026, 12, 1, 11, 0),
        onSourceClock.getLogicalTypeValue(FactsTable.WRITTEN_AT, LocalDateTime.class));
    Row onJobClock =
        BatchFacts.rows(
                target,
                start,
                batchSeenAt(lsn, committed, null),
                BatchStats.empty(0),
                T0,
                Duration.ZERO,
                job)
            .get(0);
    assertEquals(5_518_800.0, onJobClock.getDouble(FactsTable.CAPTURE_LAG_SECONDS));
  }

  /**
   * A gap a batch skipped ({@code --onDataLoss=skip}) is a {@code data_skipped} row after the batch
   * row, in the same facts commit; its start time comes from the position before the batch when
   * cleanup also removed that commit's {@code cdc.lsn_time_mapping} row (C069).
   */
  @Test
  void c069ASkippedGapIsADataSkippedRowWithItsLsnsAndCommitTimes() {
    Lsn l0 = Lsn.parse("0x0000002A000001000001");
    Lsn l2 = Lsn.parse("0x0000002A000001000021");
    Lsn l3 = Lsn.parse("0x0000002A000001000031");
    StreamPosition before = new StreamPosition("loss-v1", 0, 4, l0, T0, "dbo_orders");
    DeltaTarget target =
        new DeltaTarget(
            "bronze",
            "facts",
            "control",
            before,
            Granularity.HOUR,
            T0,
            null,
            org.lakecdc.transforms.delta.HadoopConf.empty(),
            null);
    org.lakecdc.io.mssqlcdc.read.SkippedRange gap =
        new org.lakecdc.io.mssqlcdc.read.SkippedRange(
            "dbo_orders", l0.increment(), l2, null, T0.plusSeconds(120), true, null);
    ChangeBatch batch =
        new ChangeBatch(
            "dbo_orders",
            l0.increment(),
            l3,
            T0.plusSeconds(180),
            2,
            List.of("dbo_orders"),
            0,
            new BatchSource(null, null, null, 0, 0, List.of(), List.of(), List.of(gap)));
    List<Row> rows =
        BatchFacts.rows(
            target,
            before,
            batch,
            BatchStats.empty(5),
            T0,
            Duration.ZERO,
            Clock.fixed(Instant.parse("2026-12-01T11:00:00Z"), ZoneOffset.UTC));
    assertEquals(2, rows.size());
    Row skipped = rows.get(1);
    assertEquals("data_skipped", skipped.getString(FactsTable.EVENT));
    assertEquals("loss-v1", skipped.getString(FactsTable.APP_ID));
    assertEquals(5L, skipped.getInt64(FactsTable.BATCH_ID));
    assertEquals(0L, skipped.getInt64(FactsTable.ROWS));
    assertEquals(l2.toString(), skipped.getString(FactsTable.MIN_LSN));
    assertEquals(l2.toString(), skipped.getString(FactsTable.MAX_LSN));
    assertEquals(l2.toString(), skipped.getString(FactsTable.END_LSN));
    assertEquals(
        LocalDateTime.of(2026, 9, 28, 13, 50),
        skipped.getLogicalTypeValue(FactsTable.LOST_FROM_TS, LocalDateTime.class));
    assertEquals(
        LocalDateTime.of(2026, 9, 28, 13, 52),
        skipped.getLogicalTypeValue(FactsTable.LOST_TO_TS, LocalDateTime.class));
    assertEquals(
        LocalDateTime.of(2026, 9, 28, 13, 52),
        skipped.getLogicalTypeValue(FactsTable.END_COMMIT_TS, LocalDateTime.class));
    assertEquals(
        LocalDateTime.of(2026, 9, 28, 13, 52),
        skipped.getLogicalTypeValue(FactsTable.RETENTION_WATERMARK_TS, LocalDateTime.class));
    assertEquals(
        "{\"capture_instance\":\"dbo_orders\",\"from\":\"0x0000002A000001000002\","
            + "\"to\":\"0x0000002A000001000021\",\"certain\":true}",
        skipped.getString(FactsTable.DETAIL));
    assertEquals("bronze", skipped.getString(FactsTable.TARGET));
    // Stored with the bronze commit, so a crash before the facts commit rebuilds it.
    assertEquals(List.of(gap), BatchStats.skippedOf(BatchStats.empty(5).toJson(batch)));
  }

  /**
   * A batch of one commit at {@code lsn}, the source's newest commit, read when the source's clock
   * said {@code sourceTime} (null: no clock).
   */
  private static ChangeBatch batchSeenAt(Lsn lsn, Instant committed, Instant sourceTime) {
    return new ChangeBatch(
        "dbo_orders",
        lsn,
        lsn,
        committed,
        1,
        List.of("dbo_orders"),
        0,
        new BatchSource(null, committed, sourceTime, 0, 0, List.of(), List.of()));
  }
}
