package org.lakecdc.cdc.transforms.write;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.beam.sdk.values.Row;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.cdc.transforms.facts.FactsTable;
import org.lakecdc.cdc.transforms.finalization.Granularity;
import org.lakecdc.cdc.transforms.position.StreamPosition;
import org.lakecdc.mssqlcdc.client.CdcClient;
import org.lakecdc.mssqlcdc.fake.CaptureOptions;
import org.lakecdc.mssqlcdc.fake.ColumnDefinition;
import org.lakecdc.mssqlcdc.fake.FakeSqlServer;
import org.lakecdc.mssqlcdc.io.ChangeBatch;
import org.lakecdc.mssqlcdc.io.MssqlCdcIO;
import org.lakecdc.mssqlcdc.lsn.Lsn;

/** The detail of the capture-instance switch event (BEHAVIOUR.md 3.6; C033). */
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

    try (CdcClient client = db.openClient()) {
      assertEquals(
          "dbo_orders -> dbo_orders_v2; no longer captured, read as NULL: updated_at",
          BatchFacts.switchDetail(client, "dbo_orders", "dbo_orders_v2", read));
      assertEquals(
          "dbo_orders -> dbo_orders_v2",
          BatchFacts.switchDetail(
              client, "dbo_orders", "dbo_orders_v2", List.of("ORDER_ID", "Note")),
          "names compared ignoring case; nothing lost");
      assertEquals(
          "dbo_orders -> dbo_gone",
          BatchFacts.switchDetail(client, "dbo_orders", "dbo_gone", read),
          "an instance no longer there: the plain detail");
    }
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
            db.clientFactory(),
            T0,
            null,
            0,
            null);
    ChangeBatch batch =
        new ChangeBatch("dbo_orders", lsn, lsn, committed, 1, List.of("dbo_orders"));
    Clock job = Clock.fixed(Instant.parse("2026-12-01T11:00:00Z"), ZoneOffset.UTC);
    try (CdcClient client = db.openClient()) {
      Row onSourceClock =
          BatchFacts.rows(
                  target,
                  withCurrentTime(client, Optional.of(committed.plusSeconds(42))),
                  start,
                  batch,
                  BatchStats.empty(0),
                  T0,
                  Duration.ZERO,
                  List.of("order_id"),
                  job)
              .get(0);
      assertEquals(42.0, onSourceClock.getDouble(FactsTable.CAPTURE_LAG_SECONDS));
      assertEquals(
          LocalDateTime.of(2026, 12, 1, 11, 0),
          onSourceClock.getLogicalTypeValue(FactsTable.WRITTEN_AT, LocalDateTime.class));
      Row onJobClock =
          BatchFacts.rows(
                  target,
                  withCurrentTime(client, Optional.empty()),
                  start,
                  batch,
                  BatchStats.empty(0),
                  T0,
                  Duration.ZERO,
                  List.of("order_id"),
                  job)
              .get(0);
      assertEquals(5_518_800.0, onJobClock.getDouble(FactsTable.CAPTURE_LAG_SECONDS));
    }
  }

  /** {@code client} answering {@code currentTime()} with {@code time}. */
  private static CdcClient withCurrentTime(CdcClient client, Optional<Instant> time) {
    return (CdcClient)
        Proxy.newProxyInstance(
            CdcClient.class.getClassLoader(),
            new Class<?>[] {CdcClient.class},
            (proxy, method, args) -> {
              if (method.getName().equals("currentTime")) {
                return time;
              }
              try {
                return method.invoke(client, args);
              } catch (InvocationTargetException e) {
                throw e.getCause();
              }
            });
  }
}
