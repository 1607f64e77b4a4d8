package org.lakecdc.io.mssqlcdc.fake;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.CI;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.ORDERS;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.T0;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.minutes;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.readAll;

import java.io.UncheckedIOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.io.mssqlcdc.client.CdcClient;
import org.lakecdc.io.mssqlcdc.client.ChangeRow;
import org.lakecdc.io.mssqlcdc.client.Commit;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;

/** Cleanup (C063/C064/C066/C067 semantics, C272, C276). */
class CleanupTest {
  @TempDir Path dir;

  private static List<Lsn> mappingLsns(CdcClient client) {
    List<Lsn> out = new ArrayList<>();
    Optional<Commit> c = client.nthCommitAfter(Lsn.ZERO, 1);
    while (c.isPresent()) {
      out.add(c.get().lsn());
      Optional<Commit> next = client.nthCommitAfter(c.get().lsn(), 1);
      c = next;
    }
    return out;
  }

  private static List<Object> orderIds(List<ChangeRow> rows) {
    return rows.stream().map(r -> r.values().get(0)).toList();
  }

  @Test
  void cleanupMovesMinLsnAndDeletesOlderChangeRows() {
    FakeSqlServer db = FakeScenarios.orders(dir);
    List<Lsn> l = FakeScenarios.commitOrders(db, 4);
    db.cleanup(CI, l.get(2));
    try (CdcClient client = db.openClient()) {
      assertEquals(l.get(2), client.minLsn(CI));
      assertEquals(
          List.of(2, 3), orderIds(readAll(client, CI, List.of("order_id"), Lsn.ZERO, Lsn.MAX)));
      assertEquals(List.of(l.get(2), l.get(3)), mappingLsns(client));
    }
  }

  @Test
  void aPurgedRangeReadsAsEmpty() {
    FakeSqlServer db = FakeScenarios.orders(dir);
    List<Lsn> l = FakeScenarios.commitOrders(db, 3);
    db.cleanup(CI, l.get(2));
    try (CdcClient client = db.openClient()) {
      assertEquals(List.of(), readAll(client, CI, List.of("order_id"), l.get(0), l.get(1)));
    }
  }

  @Test
  void theCaptureInstancesStartLsnIsTheLowWatermark() {
    FakeSqlServer db = FakeScenarios.orders(dir);
    List<Lsn> l = FakeScenarios.commitOrders(db, 3);
    db.cleanup(CI, l.get(1));
    try (CdcClient client = db.openClient()) {
      assertEquals(Optional.of(l.get(1)), client.captureInstances(CI).get(0).startLsn());
    }
  }

  @Test
  void aLowWatermarkBelowTheCurrentOneIsRefused() {
    FakeSqlServer db = FakeScenarios.orders(dir);
    List<Lsn> l = FakeScenarios.commitOrders(db, 3);
    db.cleanup(CI, l.get(2));
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> db.cleanup(CI, l.get(1)));
    assertEquals(
        "Low watermark "
            + l.get(1)
            + " is below the current low watermark "
            + l.get(2)
            + " of capture instance 'dbo_orders'",
        e.getMessage());
  }

  @Test
  void mappingRowsStayWhileAnotherInstanceHoldsThem() {
    FakeSqlServer db = FakeScenarios.orders(dir);
    db.createTable(
        "dbo.customers",
        List.of(ColumnDefinition.of("id", "int"), ColumnDefinition.of("name", "nvarchar(50)")),
        List.of("id"));
    db.enableCdc("dbo.customers");
    Lsn c0 = db.transaction(T0).insert("dbo.customers", Map.of("id", 1, "name", "a")).commit();
    List<Lsn> l = FakeScenarios.commitOrders(db, 1, 3);
    db.cleanup(CI, l.get(2));
    try (CdcClient client = db.openClient()) {
      assertEquals(List.of(c0, l.get(0), l.get(1), l.get(2)), mappingLsns(client));
      assertEquals(
          List.of(3), orderIds(readAll(client, CI, List.of("order_id"), Lsn.ZERO, Lsn.MAX)));
    }
    db.cleanup("dbo_customers", l.get(2));
    try (CdcClient client = db.openClient()) {
      assertEquals(List.of(l.get(2)), mappingLsns(client));
      assertEquals(Optional.empty(), client.commit(l.get(0)));
    }
  }

  @Test
  void aReplaceRefusedTwiceIsRetried() {
    AtomicInteger refusals = new AtomicInteger();
    boolean[] refuse = {false};
    FileReplacer flaky =
        (source, target) -> {
          if (refuse[0] && refusals.get() < 2) {
            refusals.incrementAndGet();
            throw new AccessDeniedException(target.toString(), null, "[Errno 13] held open");
          }
          FileReplacer.atomicMove().replace(source, target);
        };
    FakeSqlServer db = FakeSqlServer.open(dir, flaky);
    db.createTable(ORDERS, FakeScenarios.ORDERS_COLUMNS, List.of("order_id"));
    db.enableCdc(ORDERS);
    List<Lsn> l = FakeScenarios.commitOrders(db, 3);
    refuse[0] = true;
    db.cleanup(CI, l.get(1));
    assertEquals(2, refusals.get());
    try (CdcClient client = db.openClient()) {
      assertEquals(l.get(1), client.minLsn(CI));
      assertEquals(List.of(l.get(1), l.get(2)), mappingLsns(client));
    }
  }

  @Test
  void aReplaceRefusedEveryTimeFailsAfterBoundedRetries() {
    AtomicInteger attempts = new AtomicInteger();
    boolean[] refuse = {false};
    FileReplacer locked =
        (source, target) -> {
          if (refuse[0]) {
            attempts.incrementAndGet();
            throw new AccessDeniedException(target.toString(), null, "[Errno 13] held open");
          }
          FileReplacer.atomicMove().replace(source, target);
        };
    FakeSqlServer db = FakeSqlServer.open(dir, locked);
    db.createTable(ORDERS, FakeScenarios.ORDERS_COLUMNS, List.of("order_id"));
    db.enableCdc(ORDERS);
    List<Lsn> l = FakeScenarios.commitOrders(db, 2);
    refuse[0] = true;
    UncheckedIOException e =
        assertThrows(UncheckedIOException.class, () -> db.cleanup(CI, l.get(1)));
    assertInstanceOf(AccessDeniedException.class, e.getCause());
    assertEquals(AtomicFiles.MAX_ATTEMPTS, attempts.get());
    try (CdcClient client = new FileBackedCdcClient(dir)) {
      assertEquals(l.get(0), client.minLsn(CI));
    }
    assertEquals(List.of(), leftoverTempFiles());
  }

  private List<String> leftoverTempFiles() {
    List<String> out = new ArrayList<>();
    for (java.io.File f : dir.toFile().listFiles()) {
      if (f.getName().endsWith(".tmp")) {
        out.add(f.getName());
      }
    }
    return out;
  }

  @Test
  void cleanupOfAnInstanceAfterASwitchKeepsTheOtherInstancesRows() {
    FakeSqlServer db = FakeScenarios.orders(dir);
    List<Lsn> c = new ArrayList<>(FakeScenarios.commitOrders(db, 5));
    db.enableCdc(ORDERS, CaptureOptions.defaults().withName("dbo_orders_v2"));
    c.addAll(FakeScenarios.commitOrders(db, 5, 5));
    db.cleanup(CI, c.get(3));
    db.cleanup("dbo_orders_v2", c.get(7));
    try (CdcClient client = db.openClient()) {
      assertEquals(c.get(3), client.minLsn(CI));
      assertEquals(c.get(7), client.minLsn("dbo_orders_v2"));
      assertEquals(
          List.of(5, 6), orderIds(readAll(client, CI, List.of("order_id"), c.get(5), c.get(6))));
      assertEquals(
          List.of(7, 8, 9),
          orderIds(readAll(client, "dbo_orders_v2", List.of("order_id"), c.get(5), c.get(9))));
      assertEquals(c.get(3), mappingLsns(client).get(0));
      assertEquals(minutes(3), client.commit(c.get(3)).orElseThrow().commitTime());
    }
  }
}
