package org.lakecdc.transforms.write;

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
import org.lakecdc.io.mssqlcdc.BatchSource;
import org.lakecdc.io.mssqlcdc.ChangeBatch;
import org.lakecdc.io.mssqlcdc.MssqlCdcIO;
import org.lakecdc.io.mssqlcdc.fake.CaptureOptions;
import org.lakecdc.io.mssqlcdc.fake.ColumnDefinition;
import org.lakecdc.io.mssqlcdc.fake.FakeSqlServer;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
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
                .withCaptureInstance("dbo_orders")
                .withClientFactory(db.clientFactory())
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
            0,
            null,
            org.lakecdc.transforms.delta.HadoopConf.empty());
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
