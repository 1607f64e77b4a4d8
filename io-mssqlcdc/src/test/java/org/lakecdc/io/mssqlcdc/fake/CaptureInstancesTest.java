package org.lakecdc.io.mssqlcdc.fake;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.CI;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.ORDERS;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.T0;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.insertOrder;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.lsn;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.minutes;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.readAll;

import java.nio.file.Path;
import java.time.LocalDateTime;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.io.mssqlcdc.client.CaptureInstance;
import org.lakecdc.io.mssqlcdc.client.CaptureInstanceNotFoundError;
import org.lakecdc.io.mssqlcdc.client.CdcClient;
import org.lakecdc.io.mssqlcdc.client.ChangeRow;
import org.lakecdc.io.mssqlcdc.client.DdlChange;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.io.mssqlcdc.schema.CapturedColumn;
import org.lakecdc.io.mssqlcdc.schema.SqlServerType;

/**
 * Capture instances: listing, resolution, a second instance, DDL history (docs/sql-server.md
 * "Switching to a new capture instance", docs/options.md).
 */
class CaptureInstancesTest {
  private static final String V2 = "dbo_orders_v2";

  @TempDir Path dir;

  private static CaptureOptions v2() {
    return CaptureOptions.defaults().withName(V2);
  }

  @Test
  void secondInstanceStartsAtTheNextLsnToBeIssued() {
    FakeSqlServer db = FakeScenarios.orders(dir);
    FakeScenarios.commitOrders(db, 3);
    db.enableCdc(ORDERS, v2());
    try (CdcClient client = db.openClient()) {
      assertEquals(lsn(3), client.minLsn(V2));
      assertEquals(lsn(0), client.minLsn(CI));
    }
  }

  @Test
  void fromTheNewerStartEveryCommitIsInBothWithCommandIdPlusOne() {
    FakeSqlServer db = FakeScenarios.orders(dir);
    Lsn before = insertOrder(db, T0, 0, "new", "1.00");
    db.enableCdc(ORDERS, v2());
    Lsn s = insertOrder(db, minutes(1), 1, "new", "2.00");
    try (CdcClient client = db.openClient()) {
      List<ChangeRow> older = readAll(client, CI, List.of("order_id"), Lsn.ZERO, Lsn.MAX);
      List<ChangeRow> newer = readAll(client, V2, List.of("order_id"), Lsn.ZERO, Lsn.MAX);
      assertEquals(List.of(before, s), older.stream().map(ChangeRow::startLsn).toList());
      assertEquals(List.of(s), newer.stream().map(ChangeRow::startLsn).toList());
      assertEquals(older.get(1).seqval(), newer.get(0).seqval());
      assertEquals(1, older.get(1).commandId());
      assertEquals(2, newer.get(0).commandId());
    }
  }

  @Test
  void aThirdInstanceIsRefused() {
    FakeSqlServer db = FakeScenarios.orders(dir);
    db.enableCdc(ORDERS, v2());
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> db.enableCdc(ORDERS, CaptureOptions.defaults().withName("dbo_orders_v3")));
    assertEquals("A table can have at most two capture instances", e.getMessage());
  }

  @Test
  void anInstanceNameInUseIsRefused() {
    FakeSqlServer db = FakeScenarios.orders(dir);
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> db.enableCdc(ORDERS));
    assertEquals(
        "Capture instance 'dbo_orders' already exists; choose another name", e.getMessage());
  }

  @Test
  void instancesAreListedOldestFirstWithStartLsnCreateDateAndKeys() {
    FakeSqlServer db = FakeSqlServer.open(dir);
    db.createTable(ORDERS, FakeScenarios.ORDERS_COLUMNS, List.of("order_id"));
    db.enableCdc(ORDERS, CaptureOptions.defaults().withCreateTime(T0));
    insertOrder(db, minutes(1), 1, "new", "1.00");
    db.enableCdc(ORDERS, v2().withCreateTime(minutes(2)));
    try (CdcClient client = db.openClient()) {
      List<CaptureInstance> expected =
          List.of(
              new CaptureInstance(
                  CI,
                  "dbo",
                  "orders",
                  Optional.of(lsn(0)),
                  Optional.of(LocalDateTime.parse("2026-09-28T13:50:00")),
                  List.of("order_id")),
              new CaptureInstance(
                  V2,
                  "dbo",
                  "orders",
                  Optional.of(lsn(1)),
                  Optional.of(LocalDateTime.parse("2026-09-28T13:52:00")),
                  List.of("order_id")));
      assertEquals(expected, client.captureInstances(CI));
      assertEquals(expected, client.captureInstances(V2));
    }
  }

  @Test
  void aDroppedDefaultNameResolvesToTheTablesNewestInstance() {
    FakeSqlServer db = FakeScenarios.orders(dir);
    db.enableCdc(ORDERS, v2());
    db.disableCdc(CI);
    try (CdcClient client = db.openClient()) {
      assertEquals(
          List.of(V2), client.captureInstances(CI).stream().map(CaptureInstance::name).toList());
      assertThrows(CaptureInstanceNotFoundError.class, () -> client.minLsn(CI));
    }
  }

  @Test
  void anUnknownInstanceListsTheExistingOnes() {
    FakeScenarios.orders(dir);
    try (CdcClient client = new FileBackedCdcClient(dir)) {
      CaptureInstanceNotFoundError e =
          assertThrows(CaptureInstanceNotFoundError.class, () -> client.minLsn("dbo_nope"));
      assertEquals(List.of(CI), e.existing());
      assertEquals("dbo_nope", e.captureInstance());
      assertThrows(CaptureInstanceNotFoundError.class, () -> client.captureInstances("dbo_nope"));
      assertThrows(CaptureInstanceNotFoundError.class, () -> client.capturedColumns("dbo_nope"));
    }
  }

  @Test
  void minLsnMatchesExactNameThenIgnoringCase() {
    FakeScenarios.orders(dir);
    try (CdcClient client = new FileBackedCdcClient(dir)) {
      assertEquals(lsn(0), client.minLsn(CI));
      assertEquals(lsn(0), client.minLsn("DBO_Orders"));
    }
  }

  @Test
  void capturedColumnsComeByOrdinalWithTheComputedFlag() {
    FakeSqlServer db = FakeSqlServer.open(dir);
    db.createTable(
        "dbo.items",
        List.of(
            ColumnDefinition.of("id", "int"),
            ColumnDefinition.of("price", "decimal(18,2)"),
            ColumnDefinition.computed("total", "decimal(19,2)"),
            ColumnDefinition.of("created at", "datetime2(7)")),
        List.of("id"));
    db.enableCdc("dbo.items");
    try (CdcClient client = db.openClient()) {
      assertEquals(
          List.of(
              new CapturedColumn("id", 1, SqlServerType.parse("int"), false),
              new CapturedColumn("price", 2, SqlServerType.parse("decimal(18,2)"), false),
              new CapturedColumn("total", 3, SqlServerType.parse("decimal(19,2)"), true),
              new CapturedColumn("created at", 4, SqlServerType.parse("datetime2(7)"), false)),
          client.capturedColumns("dbo_items"));
    }
  }

  @Test
  void aColumnSubsetIsCapturedInSourceColumnOrder() {
    FakeSqlServer db = FakeSqlServer.open(dir);
    db.createTable(ORDERS, FakeScenarios.ORDERS_COLUMNS, List.of("order_id"));
    db.enableCdc(ORDERS, CaptureOptions.defaults().withCapturedColumns("amount", "ORDER_ID"));
    try (CdcClient client = db.openClient()) {
      assertEquals(
          List.of("order_id", "amount"),
          client.capturedColumns(CI).stream().map(CapturedColumn::name).toList());
    }
  }

  @Test
  void aColumnSubsetWithoutTheKeyIsRefused() {
    FakeSqlServer db = FakeSqlServer.open(dir);
    db.createTable(ORDERS, FakeScenarios.ORDERS_COLUMNS, List.of("order_id"));
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> db.enableCdc(ORDERS, CaptureOptions.defaults().withCapturedColumns("status")));
    assertEquals("The captured column list must include the key column 'order_id'", e.getMessage());
  }

  @Test
  void c058DdlHistoryKeepsAfterExclusiveUpToInclusiveWithTheLastCommitsTime() {
    FakeSqlServer db = FakeScenarios.orders(dir);
    Lsn l0 = insertOrder(db, T0, 1, "new", "1.00");
    Lsn add = db.ddl(ORDERS, "ALTER TABLE dbo.orders ADD note varchar(10)");
    Lsn l2 = insertOrder(db, minutes(2), 2, "new", "2.00");
    Lsn drop = db.dropColumn(ORDERS, "note");
    try (CdcClient client = db.openClient()) {
      assertEquals(
          List.of(
              new DdlChange(
                  CI, add, Optional.of(T0), "ALTER TABLE dbo.orders ADD note varchar(10)"),
              new DdlChange(
                  CI,
                  drop,
                  Optional.of(minutes(2)),
                  "ALTER TABLE [dbo].[orders] DROP COLUMN [note]")),
          client.ddlHistory(CI, l0, drop));
      assertEquals(List.of(), client.ddlHistory(CI, add, l2.decrement().decrement()));
      assertEquals(1, client.ddlHistory(CI, add, drop).size());
    }
  }

  @Test
  void ddlIsRecordedInEveryInstanceOfTheTable() {
    FakeSqlServer db = FakeScenarios.orders(dir);
    db.enableCdc(ORDERS, v2());
    Lsn ddl = db.alterColumn(ORDERS, "status", SqlServerType.parse("varchar(50)"));
    try (CdcClient client = db.openClient()) {
      assertEquals(ddl, client.ddlHistory(CI, Lsn.ZERO, Lsn.MAX).get(0).lsn());
      assertEquals(ddl, client.ddlHistory(V2, Lsn.ZERO, Lsn.MAX).get(0).lsn());
      assertEquals(SqlServerType.parse("varchar(50)"), client.capturedColumns(V2).get(1).type());
    }
  }

  @Test
  void disablingAnInstanceDropsItsChangeTableAndHistory() {
    FakeSqlServer db = FakeScenarios.orders(dir);
    db.enableCdc(ORDERS, v2());
    insertOrder(db, T0, 1, "new", "1.00");
    db.ddl(ORDERS, "ALTER TABLE dbo.orders ADD note varchar(10)");
    db.disableCdc(V2);
    try (CdcClient client = db.openClient()) {
      assertThrows(
          CaptureInstanceNotFoundError.class, () -> client.ddlHistory(V2, Lsn.ZERO, Lsn.MAX));
      assertEquals(1, client.ddlHistory(CI, Lsn.ZERO, Lsn.MAX).size());
    }
    assertEquals(false, dir.resolve("cdc.dbo_orders_v2_CT.jsonl").toFile().exists());
  }

  @Test
  void aReEnabledInstanceStartsWithAnEmptyChangeTable() {
    FakeSqlServer db = FakeScenarios.orders(dir);
    insertOrder(db, T0, 1, "new", "1.00");
    db.disableCdc(CI);
    db.enableCdc(ORDERS);
    Lsn l1 =
        db.transaction(minutes(1)).update(ORDERS, List.of(1), Map.of("status", "paid")).commit();
    try (CdcClient client = db.openClient()) {
      assertEquals(lsn(1), client.minLsn(CI));
      assertEquals(
          List.of(l1, l1),
          readAll(client, CI, List.of("order_id"), Lsn.ZERO, Lsn.MAX).stream()
              .map(ChangeRow::startLsn)
              .toList());
    }
  }

  @Test
  void theSwitchScenarioStartsTheNewerInstanceAtC5() {
    FakeSqlServer db = FakeScenarios.switchScenario(dir, List.of("order_id", "status", "note"));
    try (CdcClient client = db.openClient()) {
      assertEquals(Lsn.parse("0x0000002A000001000051"), client.minLsn(V2));
      assertEquals(
          java.time.Instant.parse("2026-09-28T13:55:00Z"),
          client.commit(lsn(5)).orElseThrow().commitTime());
      List<ChangeRow> newer = readAll(client, V2, List.of("order_id", "note"), Lsn.ZERO, Lsn.MAX);
      assertEquals(List.of(5, "n5"), newer.get(0).values());
      assertEquals(2, newer.get(0).commandId());
      assertEquals(10, readAll(client, CI, List.of("order_id"), Lsn.ZERO, Lsn.MAX).size());
      assertEquals(
          java.util.Arrays.asList(0, null),
          readAll(client, CI, List.of("order_id", "note"), Lsn.ZERO, Lsn.MAX).get(0).values());
    }
  }
}
