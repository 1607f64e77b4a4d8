package org.lakecdc.io.mssqlcdc.fake;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.ORDERS;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.T0;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.insertOrder;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.minutes;

import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.io.mssqlcdc.client.CdcClient;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.io.mssqlcdc.schema.SqlServerType;

/** The fake's LSN arithmetic: first 0x0000002A000001000001, +0x10 per commit, idle entry or DDL. */
class LsnSequenceTest {
  @TempDir Path dir;

  @Test
  void firstCommitTakesTheFirstLsn() {
    FakeSqlServer db = FakeScenarios.orders(dir);
    assertEquals(Lsn.parse("0x0000002A000001000001"), insertOrder(db, T0, 1, "new", "10.00"));
  }

  @Test
  void commitIdleAndDdlTakeLsnsSixteenApart() {
    FakeSqlServer db = FakeScenarios.orders(dir);
    Lsn commit = insertOrder(db, T0, 1, "new", "10.00");
    Lsn idle = db.idle(minutes(1));
    Lsn ddl = db.addColumn(ORDERS, "note", SqlServerType.parse("varchar(100)"));
    Lsn next = insertOrder(db, minutes(2), 2, "new", "20.00");
    assertEquals(
        List.of(
            Lsn.parse("0x0000002A000001000001"),
            Lsn.parse("0x0000002A000001000011"),
            Lsn.parse("0x0000002A000001000021"),
            Lsn.parse("0x0000002A000001000031")),
        List.of(commit, idle, ddl, next));
  }

  @Test
  void ddlTakesAnLsnButNoMappingRow() {
    FakeSqlServer db = FakeScenarios.orders(dir);
    Lsn commit = insertOrder(db, T0, 1, "new", "10.00");
    Lsn ddl = db.addColumn(ORDERS, "note", SqlServerType.parse("varchar(100)"));
    try (CdcClient client = db.openClient()) {
      assertEquals(Optional.empty(), client.commit(ddl));
      assertEquals(Optional.of(commit), client.maxLsn());
    }
  }

  @Test
  void idleEntryIsAMappingRowWithoutChangeRows() {
    FakeSqlServer db = FakeScenarios.orders(dir);
    insertOrder(db, T0, 1, "new", "10.00");
    Lsn idle = db.idle(minutes(5));
    try (CdcClient client = db.openClient()) {
      assertEquals(Optional.of(idle), client.maxLsn());
      assertEquals(minutes(5), client.commit(idle).orElseThrow().commitTime());
      assertEquals(1, FakeScenarios.readAllOrders(client).size());
    }
  }

  @Test
  void reopeningContinuesTheLsnSequence() {
    FakeSqlServer db = FakeScenarios.orders(dir);
    insertOrder(db, T0, 1, "new", "10.00");
    db.idle(minutes(1));
    FakeSqlServer reopened = FakeSqlServer.open(dir);
    assertEquals(FakeScenarios.lsn(2), reopened.nextLsn());
    assertEquals(FakeScenarios.lsn(2), insertOrder(reopened, minutes(2), 2, "new", "20.00"));
  }

  @Test
  void reopeningAfterATrailingDdlDoesNotReuseItsLsn() {
    FakeSqlServer db = FakeScenarios.orders(dir);
    insertOrder(db, T0, 1, "new", "10.00");
    Lsn ddl = db.addColumn(ORDERS, "note", SqlServerType.parse("varchar(100)"));
    Lsn next = insertOrder(FakeSqlServer.open(dir), minutes(1), 2, "new", "20.00");
    assertTrue(next.isAfter(ddl));
    assertEquals(FakeScenarios.lsn(2), next);
  }

  @Test
  void transactionWithoutCapturedChangesTakesAnLsnButNoMappingRow() {
    FakeSqlServer db = FakeSqlServer.open(dir);
    db.createTable(ORDERS, FakeScenarios.ORDERS_COLUMNS, List.of("order_id"));
    Lsn untracked = insertOrder(db, T0, 1, "new", "10.00");
    try (CdcClient client = db.openClient()) {
      assertEquals(FakeScenarios.lsn(0), untracked);
      assertEquals(Optional.empty(), client.maxLsn());
    }
  }
}
