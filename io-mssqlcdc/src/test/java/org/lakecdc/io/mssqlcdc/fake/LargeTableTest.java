package org.lakecdc.io.mssqlcdc.fake;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.io.mssqlcdc.schema.SqlServerType;

/**
 * A source table larger than the writer holds in memory ({@link SourceRows#IN_MEMORY_BYTES}): it is
 * loaded a row at a time and changed holding only its changes, and reads back (by key, in key
 * order, after DDL, from a new writer) as a table held whole would.
 */
@SuppressWarnings("try") // try-with-resources on a Bulk is the API's intended form
class LargeTableTest {
  private static final String BIG = "dbo.big";

  /** Even keys 0, 2, …: about 9 MiB of JSON lines, twice the in-memory bound. */
  private static final int ROWS = 100_000;

  @TempDir Path dir;

  private static Map<String, Object> initial(int key) {
    Map<String, Object> row = new LinkedHashMap<>();
    row.put("id", key);
    row.put("name", "row " + key + " of a table too large to be held in memory");
    row.put("amount", BigDecimal.valueOf(key, 2));
    return row;
  }

  /** The rows {@link #initial} gives, generated as they are taken (never a list). */
  private static Iterable<Map<String, Object>> generated(int rows) {
    return generated(rows, i -> initial(2 * i));
  }

  /** Rows {@code row(0..rows-1)}, generated as they are taken (never a list). */
  static Iterable<Map<String, Object>> generated(
      int rows, java.util.function.IntFunction<Map<String, Object>> row) {
    return () ->
        new Iterator<>() {
          int i;

          @Override
          public boolean hasNext() {
            return i < rows;
          }

          @Override
          public Map<String, Object> next() {
            return row.apply(i++);
          }
        };
  }

  private FakeSqlServer big() {
    FakeSqlServer db = FakeSqlServer.open(dir);
    db.createTable(
        BIG,
        List.of(
            ColumnDefinition.of("id", "int"),
            ColumnDefinition.of("name", "varchar(80)"),
            ColumnDefinition.of("amount", "decimal(15,2)")),
        List.of("id"));
    return db;
  }

  @Test
  void aLargeTableIsLoadedAndChangedHoldingOnlyItsChanges() throws Exception {
    FakeSqlServer db = big();
    assertEquals(ROWS, db.loadRowsInKeyOrder(BIG, generated(ROWS)));
    assertTrue(
        Files.size(dir.resolve("dbo.big.jsonl")) > 2 * SourceRows.IN_MEMORY_BYTES,
        "the table's file is larger than the bound");
    assertEquals(0, db.rowsHeld(), "a loaded table larger than the bound is not held");
    db.enableCdc(BIG);

    // Changes by key, mirrored: null for a row deleted.
    TreeMap<Integer, Map<String, Object>> expected = new TreeMap<>();
    Random random = new Random(32);
    Instant at = Instant.parse("2026-12-07T09:00:00Z");
    int changes = 0;
    try (FakeSqlServer.Bulk bulk = db.bulk()) {
      for (int t = 0; t < 100; t++) {
        FakeSqlServer.Transaction tx = db.transaction(at.plusSeconds(t));
        int updated = 2 * random.nextInt(ROWS);
        BigDecimal amount = BigDecimal.valueOf(random.nextInt(100_000), 2);
        if (!expected.containsKey(updated)) {
          tx.update(BIG, List.of(updated), Map.of("amount", amount));
          Map<String, Object> row = initial(updated);
          row.put("amount", amount);
          expected.put(updated, row);
        }
        int deleted = 2 * random.nextInt(ROWS);
        if (!expected.containsKey(deleted)) {
          tx.delete(BIG, List.of(deleted));
          expected.put(deleted, null);
        }
        int inserted = 2 * random.nextInt(ROWS) + 1;
        if (!expected.containsKey(inserted)) {
          tx.insert(BIG, initial(inserted));
          expected.put(inserted, initial(inserted));
        }
        changes += 3;
        tx.commit();
      }
      assertTrue(db.rowsHeld() <= changes, "held in the bulk: " + db.rowsHeld() + " of " + changes);
    }
    assertEquals(0, db.rowsHeld(), "the changes are written; the table is not held");

    for (FakeSqlServer writer : List.of(db, FakeSqlServer.open(dir))) {
      for (Map.Entry<Integer, Map<String, Object>> e : expected.entrySet()) {
        Map<String, Object> row = writer.row(BIG, List.of(e.getKey()));
        assertEquals(
            e.getValue(), row == null ? null : new LinkedHashMap<>(row), "key " + e.getKey());
      }
      assertEquals(initial(4), new LinkedHashMap<>(writer.row(BIG, List.of(4))));
      assertNull(writer.row(BIG, List.of(3)));
    }
    // In key order, each row as expected, from a key on.
    List<Integer> keys = new ArrayList<>();
    long[] rows = {0};
    db.scanRows(
        BIG,
        null,
        r -> {
          int key = (Integer) r.get("id");
          Map<String, Object> want = expected.containsKey(key) ? expected.get(key) : initial(key);
          assertEquals(want, new LinkedHashMap<>(r), "key " + key);
          if (key >= 1001 && keys.size() < 2) {
            keys.add(key);
          }
          rows[0]++;
          return true;
        });
    long deletes = expected.values().stream().filter(v -> v == null).count();
    long inserts = expected.keySet().stream().filter(k -> k % 2 == 1).count();
    assertEquals(ROWS - deletes + inserts, rows[0]);
    List<Integer> from = new ArrayList<>();
    db.scanRows(
        BIG,
        List.of(1001),
        r -> {
          from.add((Integer) r.get("id"));
          return from.size() < 2;
        });
    assertEquals(keys, from, "the first two rows from key 1001 on");
  }

  @Test
  void ddlOnALargeTableAppliesToItsRowsAsTheyAreRead() {
    FakeSqlServer db = big();
    db.loadRowsInKeyOrder(BIG, generated(ROWS));
    db.enableCdc(BIG);
    try (FakeSqlServer.Bulk bulk = db.bulk()) {
      db.alterColumn(BIG, "amount", SqlServerType.parse("decimal(17,4)"));
      db.dropColumn(BIG, "name");
      db.addColumn(BIG, "note", SqlServerType.parse("int"));
      Map<String, Object> row = new LinkedHashMap<>(db.row(BIG, List.of(10)));
      Map<String, Object> want = new LinkedHashMap<>();
      want.put("id", 10);
      want.put("amount", new BigDecimal("0.1000"));
      want.put("note", null);
      assertEquals(want, row);
    }
    Map<String, Object> want = new LinkedHashMap<>();
    want.put("id", 123_456);
    want.put("amount", new BigDecimal("1234.5600"));
    want.put("note", null);
    assertEquals(want, new LinkedHashMap<>(FakeSqlServer.open(dir).row(BIG, List.of(123_456))));
    // A value that does not fit the new type is refused before anything changes.
    assertThrows(
        IllegalArgumentException.class,
        () -> db.alterColumn(BIG, "amount", SqlServerType.parse("decimal(5,2)")));
    assertEquals(new BigDecimal("1234.5600"), db.row(BIG, List.of(123_456)).get("amount"));
  }

  @Test
  void rowsOutOfKeyOrderLoadNothing() {
    FakeSqlServer db = big();
    List<Map<String, Object>> rows = List.of(initial(4), initial(2));
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> db.loadRowsInKeyOrder(BIG, rows));
    assertTrue(e.getMessage().contains("increasing key order"), e.getMessage());
    assertThrows(
        IllegalArgumentException.class,
        () -> db.loadRowsInKeyOrder(BIG, List.of(initial(2), initial(2))));
    assertEquals(List.of(), db.rows(BIG));
    assertEquals(2, db.loadRowsInKeyOrder(BIG, List.of(initial(2), initial(4))));
    assertThrows(IllegalStateException.class, () -> db.loadRowsInKeyOrder(BIG, List.of()));
  }
}
