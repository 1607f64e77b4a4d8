package org.lakecdc.io.mssqlcdc.snapshot;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.CI;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.SNAPSHOT_AT;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.commitOrders;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.lsn;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.minutes;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.io.mssqlcdc.ForwardingClientFactory;
import org.lakecdc.io.mssqlcdc.client.CaptureInstance;
import org.lakecdc.io.mssqlcdc.client.CaptureInstanceNotFoundError;
import org.lakecdc.io.mssqlcdc.client.CdcClient;
import org.lakecdc.io.mssqlcdc.fake.CaptureOptions;
import org.lakecdc.io.mssqlcdc.fake.FakeScenarios;
import org.lakecdc.io.mssqlcdc.fake.FakeSqlServer;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;

/** The snapshot LSN rule (docs/architecture.md "Data flow"; docs/scenarios.md C076, C086). */
class SnapshotLsnTest {
  @TempDir Path dir;

  @Test
  void c076SIsMaxLsnWhenCaptureHasWrittenPastTheInstanceStart() {
    FakeSqlServer db = FakeScenarios.snapshotScenario(dir);
    try (CdcClient client = db.openClient()) {
      assertEquals(Optional.of(SNAPSHOT_AT), client.maxLsn());
      assertEquals(SNAPSHOT_AT, SnapshotLsn.resolve(client, CI));
    }
  }

  @Test
  void whenCaptureNeverWroteSIsJustBeforeTheInstanceStart() {
    FakeScenarios.orders(dir);
    try (CdcClient client = new org.lakecdc.io.mssqlcdc.fake.FileBackedCdcClient(dir)) {
      assertEquals(Optional.empty(), client.maxLsn());
      assertEquals(lsn(0), client.captureInstances(CI).get(0).startLsn().orElseThrow());
      assertEquals(Lsn.parse("0x0000002A000001000000"), SnapshotLsn.resolve(client, CI));
    }
  }

  @Test
  void c086AFreshInstanceOnAQuietDatabaseTakesStartMinusOneOverAnOlderMaxLsn() {
    FakeSqlServer db = FakeSqlServer.open(dir);
    String customers = FakeScenarios.customers(db);
    Lsn other =
        db.transaction(minutes(0))
            .insert("dbo.customers", Map.of("customer_id", 1, "name", "a"))
            .commit();
    db.createTable(FakeScenarios.ORDERS, FakeScenarios.ORDERS_COLUMNS, List.of("order_id"));
    db.enableCdc(FakeScenarios.ORDERS);
    try (CdcClient client = db.openClient()) {
      Lsn start = client.captureInstances(CI).get(0).startLsn().orElseThrow();
      assertEquals(Optional.of(other), client.maxLsn());
      assertTrue(start.decrement().isAfter(other));
      assertEquals(start.decrement(), SnapshotLsn.resolve(client, CI));
      assertEquals(other, SnapshotLsn.resolve(client, customers));
    }
  }

  @Test
  void theOldestInstanceOfTheTableDecides() {
    FakeSqlServer db = FakeSqlServer.open(dir);
    db.createTable(FakeScenarios.ORDERS, FakeScenarios.ORDERS_COLUMNS, List.of("order_id"));
    db.enableCdc(FakeScenarios.ORDERS, CaptureOptions.defaults().withCreateTime(FakeScenarios.T0));
    commitOrders(db, 3);
    db.enableCdc(
        FakeScenarios.ORDERS,
        CaptureOptions.defaults().withName(FakeScenarios.V2).withCreateTime(minutes(5)));
    try (CdcClient client = db.openClient()) {
      List<CaptureInstance> instances = client.captureInstances(FakeScenarios.V2);
      assertEquals(
          List.of(CI, FakeScenarios.V2), instances.stream().map(CaptureInstance::name).toList());
      Lsn newerStart = instances.get(1).startLsn().orElseThrow();
      assertTrue(newerStart.decrement().isAfter(lsn(2)));
      assertEquals(lsn(2), SnapshotLsn.resolve(client, FakeScenarios.V2));
      assertEquals(lsn(2), SnapshotLsn.resolve(client, CI));
    }
  }

  @Test
  void sReadsOnlyMetadataNeverARow() {
    FakeSqlServer db = FakeScenarios.orders(dir);
    commitOrders(db, 3);
    ForwardingClientFactory factory =
        new ForwardingClientFactory(db.clientFactory(), (method, args) -> {});
    try (CdcClient client = factory.open()) {
      assertEquals(lsn(2), SnapshotLsn.resolve(client, CI));
    }
    assertEquals(List.of("captureInstances", "maxLsn", "decrementLsn", "close"), factory.calls);
  }

  @Test
  void withNeitherAMaxLsnNorAnInstanceStartItAsksToRetry() {
    CdcClient client = FakeScenarios.neverCaptured();
    IllegalStateException e =
        assertThrows(IllegalStateException.class, () -> SnapshotLsn.resolve(client, CI));
    assertEquals(
        "No snapshot LSN for capture instance dbo_orders: it has no start LSN and CDC has no"
            + " max_lsn yet; retry once the capture job has run",
        e.getMessage());
  }

  @Test
  void anUnknownInstanceIsNotFound() {
    FakeScenarios.orders(dir);
    try (CdcClient client = new org.lakecdc.io.mssqlcdc.fake.FileBackedCdcClient(dir)) {
      assertThrows(CaptureInstanceNotFoundError.class, () -> SnapshotLsn.resolve(client, "nope"));
    }
  }
}
