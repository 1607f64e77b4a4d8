package org.lakecdc.io.mssqlcdc.fake;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.CI;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.ORDERS;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.minutes;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.order;

import java.math.BigDecimal;
import java.nio.file.Path;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.io.mssqlcdc.client.CdcClient;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;

/** Bulk mode keeps state in memory and writes each changed file once when it closes. */
@SuppressWarnings("try") // try-with-resources on a Bulk is the API's intended form
class BulkModeTest {
  @TempDir Path dir;

  private final Map<String, Integer> replaces = new TreeMap<>();

  private FileReplacer counting() {
    return (source, target) -> {
      replaces.merge(target.getFileName().toString(), 1, Integer::sum);
      FileReplacer.atomicMove().replace(source, target);
    };
  }

  @Test
  void aBulkWritesEachChangedFileOnce() {
    FakeSqlServer db = FakeSqlServer.open(dir, counting());
    replaces.clear();
    try (FakeSqlServer.Bulk bulk = db.bulk()) {
      db.createTable(ORDERS, FakeScenarios.ORDERS_COLUMNS, List.of("order_id"));
      db.enableCdc(ORDERS);
      List<Lsn> l = FakeScenarios.commitOrders(db, 20);
      db.idle(minutes(30));
      db.addColumn(ORDERS, "note", org.lakecdc.io.mssqlcdc.schema.SqlServerType.parse("int"));
      db.cleanup(CI, l.get(5));
    }
    assertEquals(
        Map.of(
            "cdc.captured_columns.jsonl", 1,
            "cdc.change_tables.jsonl", 1,
            "cdc.dbo_orders_CT.jsonl", 1,
            "cdc.ddl_history.jsonl", 1,
            "cdc.index_columns.jsonl", 1,
            "cdc.lsn_time_mapping.jsonl", 1,
            "dbo.orders.jsonl", 1,
            "server.json", 1,
            "sys.columns.jsonl", 1,
            "sys.tables.jsonl", 1),
        replaces);
    try (CdcClient client = db.openClient()) {
      assertEquals(FakeScenarios.lsn(5), client.minLsn(CI));
      assertEquals(15, FakeScenarios.readAllOrders(client).size());
      assertEquals(Optional.of(FakeScenarios.lsn(20)), client.maxLsn());
    }
  }

  @Test
  void nothingIsVisibleBeforeTheBulkCloses() {
    FakeSqlServer db = FakeScenarios.orders(dir);
    try (FakeSqlServer.Bulk bulk = db.bulk()) {
      FakeScenarios.commitOrders(db, 3);
      try (CdcClient client = db.openClient()) {
        assertEquals(Optional.empty(), client.maxLsn());
      }
    }
    try (CdcClient client = db.openClient()) {
      assertEquals(Optional.of(FakeScenarios.lsn(2)), client.maxLsn());
    }
  }

  @Test
  void outsideABulkEachCommitIsWrittenAtOnce() {
    FakeSqlServer db = FakeSqlServer.open(dir, counting());
    db.createTable(ORDERS, FakeScenarios.ORDERS_COLUMNS, List.of("order_id"));
    db.enableCdc(ORDERS);
    replaces.clear();
    FakeScenarios.commitOrders(db, 2);
    assertEquals(2, replaces.get("cdc.lsn_time_mapping.jsonl"));
    assertEquals(2, replaces.get("cdc.dbo_orders_CT.jsonl"));
    assertEquals(2, replaces.get("dbo.orders.jsonl"));
  }

  @Test
  void nestedBulksWriteAtTheOutermostClose() {
    FakeSqlServer db = FakeScenarios.orders(dir);
    try (FakeSqlServer.Bulk outer = db.bulk()) {
      try (FakeSqlServer.Bulk inner = db.bulk()) {
        FakeScenarios.commitOrders(db, 1);
      }
      try (CdcClient client = db.openClient()) {
        assertEquals(Optional.empty(), client.maxLsn());
      }
    }
    try (CdcClient client = db.openClient()) {
      assertEquals(Optional.of(FakeScenarios.lsn(0)), client.maxLsn());
    }
  }

  /** The demo's shape: 15,000 orders and 60,000 line items before CDC, then 1,000 transactions. */
  @Test
  void aTpchSizedHistoryLoadsInBulk() {
    FakeSqlServer db = FakeSqlServer.open(dir);
    try (FakeSqlServer.Bulk bulk = db.bulk()) {
      db.createTable(ORDERS, FakeScenarios.ORDERS_COLUMNS, List.of("order_id"));
      db.createTable(
          "dbo.lineitem",
          List.of(
              ColumnDefinition.of("l_orderkey", "int"),
              ColumnDefinition.of("l_linenumber", "int"),
              ColumnDefinition.of("l_quantity", "decimal(15,2)"),
              ColumnDefinition.of("l_extendedprice", "decimal(15,2)"),
              ColumnDefinition.of("l_shipdate", "date"),
              ColumnDefinition.of("l_comment", "varchar(44)")),
          List.of("l_orderkey", "l_linenumber"));
      List<Map<String, Object>> orders = new ArrayList<>();
      List<Map<String, Object>> items = new ArrayList<>();
      for (int o = 0; o < 15_000; o++) {
        orders.add(order(o, "O", "100.00"));
        for (int line = 1; line <= 4; line++) {
          items.add(item(o, line));
        }
      }
      db.loadRows(ORDERS, orders);
      db.loadRows("dbo.lineitem", items);
      db.enableCdc(ORDERS);
      db.enableCdc("dbo.lineitem");
      for (int t = 0; t < 1_000; t++) {
        int o = 15_000 + t;
        db.transaction(minutes(t))
            .insert(ORDERS, order(o, "O", "10.00"))
            .insert("dbo.lineitem", item(o, 1))
            .update(ORDERS, List.of(t), Map.of("status", "F"))
            .delete("dbo.lineitem", List.of(t, 4))
            .commit();
      }
    }
    try (CdcClient client = db.openClient()) {
      assertEquals(Optional.of(FakeScenarios.lsn(999)), client.maxLsn());
      assertEquals(3_000, FakeScenarios.readAllOrders(client).size());
      assertEquals(
          2_000,
          FakeScenarios.readAll(client, "dbo_lineitem", List.of("l_orderkey"), Lsn.ZERO, Lsn.MAX)
              .size());
    }
    assertEquals(16_000, db.rows(ORDERS).size());
    assertTrue(FakeSqlServer.open(dir).rows("dbo.lineitem").size() == 60_000);
  }

  private static Map<String, Object> item(int order, int line) {
    Map<String, Object> row = new HashMap<>();
    row.put("l_orderkey", order);
    row.put("l_linenumber", line);
    row.put("l_quantity", new BigDecimal("3.00"));
    row.put("l_extendedprice", new BigDecimal("123.45"));
    row.put("l_shipdate", LocalDate.of(1996, 3, 13));
    row.put("l_comment", "carefully final packages");
    return row;
  }
}
