package org.lakecdc.cdc.transforms.write;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.mssqlcdc.client.CdcClient;
import org.lakecdc.mssqlcdc.fake.CaptureOptions;
import org.lakecdc.mssqlcdc.fake.ColumnDefinition;
import org.lakecdc.mssqlcdc.fake.FakeSqlServer;
import org.lakecdc.mssqlcdc.io.MssqlCdcIO;

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
}
