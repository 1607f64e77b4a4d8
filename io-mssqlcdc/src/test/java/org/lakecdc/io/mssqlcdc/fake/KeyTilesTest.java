package org.lakecdc.io.mssqlcdc.fake;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.ORDERS;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.minutes;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.io.mssqlcdc.client.CdcClient;
import org.lakecdc.io.mssqlcdc.client.CdcException;
import org.lakecdc.io.mssqlcdc.client.CloseableIterator;
import org.lakecdc.io.mssqlcdc.client.IsolationLevel;
import org.lakecdc.io.mssqlcdc.client.TableQuery;

/**
 * {@code keyTiles}: NTILE over a table's key, NULL first (docs/scenarios.md C078, C079, C081,
 * C088).
 */
class KeyTilesTest {
  private static final IsolationLevel RC = IsolationLevel.READ_COMMITTED;

  @TempDir Path dir;

  /** C079: key {@code [region int, id varchar]}, eight rows with NULLs in both columns. */
  private FakeSqlServer regions() {
    FakeSqlServer db = FakeSqlServer.open(dir);
    db.createTable(
        "dbo.sales",
        List.of(
            ColumnDefinition.of("region", "int"),
            ColumnDefinition.of("id", "varchar(10)"),
            ColumnDefinition.of("status", "varchar(10)")),
        List.of("region", "id"));
    Object[][] keys = {
      {2, "b"}, {1, "a"}, {null, "y"}, {2, null}, {null, null}, {1, null}, {null, "x"}, {1, "b"}
    };
    List<Map<String, Object>> rows = new ArrayList<>();
    for (Object[] k : keys) {
      Map<String, Object> row = new HashMap<>();
      row.put("region", k[0]);
      row.put("id", k[1]);
      row.put("status", "s");
      rows.add(row);
    }
    db.loadRows("dbo.sales", rows);
    return db;
  }

  private List<List<Object>> tiles(String table, List<String> keys, int n) {
    String[] name = table.split("\\.");
    try (CdcClient client = new FileBackedCdcClient(dir)) {
      return client.keyTiles(name[0], name[1], keys, n, RC);
    }
  }

  /** The keys each range {@code [lo, hi)} of the tiles reads, range by range. */
  private List<List<List<Object>>> readRanges(
      String schema, String table, List<String> keys, List<List<Object>> bounds) {
    List<List<List<Object>>> out = new ArrayList<>();
    try (CdcClient client = new FileBackedCdcClient(dir)) {
      for (int i = 0; i <= bounds.size(); i++) {
        Optional<List<Object>> lo = i == 0 ? Optional.empty() : Optional.of(bounds.get(i - 1));
        Optional<List<Object>> hi =
            i == bounds.size() ? Optional.empty() : Optional.of(bounds.get(i));
        List<List<Object>> part = new ArrayList<>();
        try (CloseableIterator<List<Object>> it =
            client.readTable(new TableQuery(schema, table, keys, keys, lo, hi, RC))) {
          it.forEachRemaining(part::add);
        }
        out.add(part);
      }
    }
    return out;
  }

  @Test
  void c088NtileOfThreeOverTenIntegerKeysGivesTilesOfFourThreeThree() {
    FakeSqlServer db = FakeScenarios.orders(dir);
    FakeScenarios.commitOrders(db, 10);
    List<List<Object>> bounds = tiles(ORDERS, List.of("order_id"), 3);
    assertEquals(List.of(List.of(4), List.of(7)), bounds);
    List<List<List<Object>>> parts = readRanges("dbo", "orders", List.of("order_id"), bounds);
    assertEquals(List.of(4, 3, 3), parts.stream().map(List::size).toList());
  }

  @Test
  void c081CompositeStringAndIntegerKeyTilesAreTheFirstKeysOfTilesTwoToN() {
    FakeSqlServer db = FakeSqlServer.open(dir);
    db.createTable(
        "sales.orders",
        List.of(ColumnDefinition.of("region", "varchar(10)"), ColumnDefinition.of("id", "int")),
        List.of("region", "id"));
    List<Map<String, Object>> rows = new ArrayList<>();
    String[] regions = {"n", "n", "n", "n", "s", "s", "s", "w", "w", "w"};
    int[] ids = {1, 2, 3, 4, 1, 2, 3, 1, 2, 3};
    for (int i = 0; i < regions.length; i++) {
      rows.add(Map.of("region", regions[i], "id", ids[i]));
    }
    db.loadRows("sales.orders", rows);
    List<List<Object>> bounds = tiles("sales.orders", List.of("region", "id"), 3);
    assertEquals(List.of(List.of("s", 1), List.of("w", 1)), bounds);
    assertEquals(
        List.of(4, 3, 3),
        readRanges("sales", "orders", List.of("region", "id"), bounds).stream()
            .map(List::size)
            .toList());
  }

  @Test
  void c079ACompositeKeyWithNullsSortsNullFirstAndEveryKeyIsReadOnce() {
    regions();
    List<String> keys = List.of("region", "id");
    List<List<Object>> five = tiles("dbo.sales", keys, 5);
    assertEquals(
        List.of(
            Arrays.asList(null, "y"),
            Arrays.asList(1, "a"),
            Arrays.asList(2, null),
            Arrays.asList(2, "b")),
        five);
    List<List<List<Object>>> parts = readRanges("dbo", "sales", keys, five);
    assertEquals(List.of(2, 2, 2, 1, 1), parts.stream().map(List::size).toList());
    assertEquals(
        List.of(
            Arrays.asList(null, null),
            Arrays.asList(null, "x"),
            Arrays.asList(null, "y"),
            Arrays.asList(1, null),
            Arrays.asList(1, "a"),
            Arrays.asList(1, "b"),
            Arrays.asList(2, null),
            Arrays.asList(2, "b")),
        parts.stream().flatMap(List::stream).toList());
    List<List<Object>> twenty = tiles("dbo.sales", keys, 20);
    assertEquals(7, twenty.size());
    assertEquals(
        List.of(1, 1, 1, 1, 1, 1, 1, 1),
        readRanges("dbo", "sales", keys, twenty).stream().map(List::size).toList());
  }

  @Test
  void c078AStringKeyIsCutIntoNtileTiles() {
    FakeSqlServer db = FakeSqlServer.open(dir);
    db.createTable(
        "dbo.codes",
        List.of(ColumnDefinition.of("code", "varchar(10)"), ColumnDefinition.of("n", "int")),
        List.of("code"));
    List<Map<String, Object>> rows = new ArrayList<>();
    for (int i = 4; i >= 0; i--) {
      rows.add(Map.of("code", "C" + i, "n", i));
    }
    db.loadRows("dbo.codes", rows);
    List<List<Object>> bounds = tiles("dbo.codes", List.of("code"), 4);
    assertEquals(List.of(List.of("C2"), List.of("C3"), List.of("C4")), bounds);
    assertEquals(
        List.of(
            List.of(List.of("C0"), List.of("C1")),
            List.of(List.of("C2")),
            List.of(List.of("C3")),
            List.of(List.of("C4"))),
        readRanges("dbo", "codes", List.of("code"), bounds));
  }

  @Test
  void noTilesForAnEmptyTableOneRowOrOneTile() {
    FakeSqlServer db = FakeScenarios.orders(dir);
    assertEquals(List.of(), tiles(ORDERS, List.of("order_id"), 4));
    FakeScenarios.insertOrder(db, minutes(0), 1, "new", "1.00");
    assertEquals(List.of(), tiles(ORDERS, List.of("order_id"), 4));
    FakeScenarios.insertOrder(db, minutes(1), 2, "new", "2.00");
    assertEquals(List.of(), tiles(ORDERS, List.of("order_id"), 1));
    assertEquals(List.of(List.of(2)), tiles(ORDERS, List.of("order_id"), 4));
  }

  @Test
  void tilesSeeTheTableAsItIsNow() {
    FakeSqlServer db = FakeScenarios.orders(dir);
    FakeScenarios.commitOrders(db, 4);
    db.transaction(minutes(10)).delete(ORDERS, List.of(1)).commit();
    assertEquals(List.of(List.of(2), List.of(3)), tiles(ORDERS, List.of("order_id"), 3));
  }

  @Test
  void badArgumentsAreRefused() {
    FakeScenarios.orders(dir);
    IllegalArgumentException zero =
        assertThrows(IllegalArgumentException.class, () -> tiles(ORDERS, List.of("order_id"), 0));
    assertEquals("n must be at least 1, got 0", zero.getMessage());
    IllegalArgumentException noKey =
        assertThrows(IllegalArgumentException.class, () -> tiles(ORDERS, List.of(), 2));
    assertEquals("Key tiles of dbo.orders need at least one key column", noKey.getMessage());
    CdcException column = assertThrows(CdcException.class, () -> tiles(ORDERS, List.of("nope"), 2));
    assertEquals("Invalid column name 'nope' in table 'dbo.orders'", column.getMessage());
    CdcException table =
        assertThrows(CdcException.class, () -> tiles("dbo.nope", List.of("id"), 2));
    assertEquals("Invalid object name 'dbo.nope' (fake " + dir + ")", table.getMessage());
  }
}
