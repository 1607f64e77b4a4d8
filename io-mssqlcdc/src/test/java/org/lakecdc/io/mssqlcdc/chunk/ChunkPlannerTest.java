package org.lakecdc.io.mssqlcdc.chunk;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.math.BigInteger;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.io.mssqlcdc.client.CdcClient;
import org.lakecdc.io.mssqlcdc.client.CloseableIterator;
import org.lakecdc.io.mssqlcdc.client.IsolationLevel;
import org.lakecdc.io.mssqlcdc.client.TableQuery;
import org.lakecdc.io.mssqlcdc.fake.ColumnDefinition;
import org.lakecdc.io.mssqlcdc.fake.FakeSqlServer;
import org.lakecdc.io.mssqlcdc.schema.SqlServerType;

/**
 * Chunk plans on the simulator (docs/scenarios.md C091–C094, C096, C105, C118): the extent read at
 * the open, the plan, and the rows each chunk then reads, through the plan's JSON as a reader gets
 * it.
 */
class ChunkPlannerTest {
  static final IsolationLevel RC = IsolationLevel.READ_COMMITTED;
  static final SqlServerType INT = SqlServerType.of("int");

  @TempDir Path dir;

  static Map<String, Object> row(String k1, Object v1, String k2, Object v2) {
    Map<String, Object> row = new HashMap<>();
    row.put(k1, v1);
    row.put(k2, v2);
    return row;
  }

  /** Commits one insert per row, in order. */
  static void insertEach(FakeSqlServer db, String table, List<Map<String, Object>> rows) {
    for (Map<String, Object> r : rows) {
      db.transaction().insert(table, r).commit();
    }
  }

  /** The keys each chunk reads, chunk by chunk, after the plan has crossed JSON. */
  static List<List<List<Object>>> readChunks(
      CdcClient client,
      String schema,
      String table,
      List<String> keys,
      List<SqlServerType> types,
      List<Chunk> plan) {
    List<List<List<Object>>> out = new ArrayList<>();
    for (Chunk c : ChunkBounds.planFromJson(ChunkBounds.planJson(plan, types), types)) {
      List<List<Object>> part = new ArrayList<>();
      try (CloseableIterator<List<Object>> it =
          client.readTable(
              new TableQuery(
                  schema,
                  table,
                  keys,
                  keys,
                  Optional.ofNullable(c.lo()),
                  Optional.ofNullable(c.hi()),
                  RC))) {
        it.forEachRemaining(part::add);
      }
      out.add(part);
    }
    return out;
  }

  static List<Integer> sizes(List<List<List<Object>>> chunks) {
    return chunks.stream().map(List::size).toList();
  }

  static List<Object> key(Object... values) {
    return Arrays.asList(values);
  }

  private FakeSqlServer orders() {
    FakeSqlServer db = FakeSqlServer.open(dir);
    db.createTable(
        "dbo.orders",
        List.of(
            ColumnDefinition.of("order_id", "int"), ColumnDefinition.of("status", "varchar(10)")),
        List.of("order_id"));
    return db;
  }

  @Test
  void c091IntegersWithANullKeyTileTheKeySpace() {
    FakeSqlServer db = orders();
    List<Map<String, Object>> rows = new ArrayList<>();
    rows.add(row("order_id", null, "status", "no key"));
    for (int i = 0; i <= 11; i++) {
      rows.add(row("order_id", i, "status", "new"));
    }
    db.enableCdc("dbo.orders");
    insertEach(db, "dbo.orders", rows);
    try (CdcClient client = db.openClient()) {
      ChunkPlanner planner = ChunkPlanner.forInstance(client, "dbo_orders", RC);
      assertEquals(List.of("order_id"), planner.keyColumns());
      assertEquals(List.of(INT), planner.keyTypes());
      SnapshotExtent extent = planner.extent();
      assertEquals(
          "{\"kind\":\"int\",\"lo\":0,\"hi\":11,\"rows\":13}", extent.toJson(List.of(INT)));
      db.transaction().insert("dbo.orders", row("order_id", 99, "status", "late")).commit();
      List<Chunk> plan = planner.plan(extent, 5);
      assertEquals(
          List.of(
              new Chunk(0, null, key(5)),
              new Chunk(1, key(5), key(10)),
              new Chunk(2, key(10), key(12))),
          plan);
      List<List<List<Object>>> read =
          readChunks(client, "dbo", "orders", List.of("order_id"), List.of(INT), plan);
      assertEquals(List.of(6, 5, 2), sizes(read));
      assertEquals(key((Object) null), read.get(0).get(0), "the NULL key sorts first");
      List<Object> all = new ArrayList<>();
      read.forEach(part -> part.forEach(k -> all.add(k.get(0))));
      List<Object> expected = new ArrayList<>();
      expected.add(null);
      for (int i = 0; i <= 11; i++) {
        expected.add(i);
      }
      assertEquals(expected, all, "every original row once, and not 99");
    }
  }

  @Test
  void c092SparseIntegersMakeNoEmptyChunk() {
    FakeSqlServer db = orders();
    List<Map<String, Object>> rows = new ArrayList<>();
    rows.add(row("order_id", null, "status", "no key"));
    for (int i = 0; i <= 9; i++) {
      rows.add(row("order_id", i, "status", "new"));
    }
    for (int i = 100; i <= 109; i++) {
      rows.add(row("order_id", i, "status", "new"));
    }
    db.loadRows("dbo.orders", rows);
    db.enableCdc("dbo.orders");
    try (CdcClient client = db.openClient()) {
      ChunkPlanner planner = ChunkPlanner.forInstance(client, "dbo_orders", RC);
      SnapshotExtent extent = planner.extent();
      assertEquals(SnapshotExtent.ofInt(0, 109, 21), extent);
      db.transaction().insert("dbo.orders", row("order_id", 200, "status", "late")).commit();
      List<Chunk> plan = planner.plan(extent, 3);
      assertEquals(
          List.of(4, 3, 3, 3, 3, 3, 2),
          sizes(readChunks(client, "dbo", "orders", List.of("order_id"), List.of(INT), plan)));
      assertEquals(new Chunk(3, key(9), key(102)), plan.get(3), "the gap 10..99 joins chunk 3");
      assertEquals(key(110), plan.get(6).hi());
    }
  }

  @Test
  void c093AStringKeyIsTiledByKeyset() {
    FakeSqlServer db = FakeSqlServer.open(dir);
    db.createTable(
        "dbo.codes",
        List.of(ColumnDefinition.of("code", "varchar(10)"), ColumnDefinition.of("v", "int")),
        List.of("code"));
    List<Map<String, Object>> rows = new ArrayList<>();
    for (int i = 0; i <= 11; i++) {
      rows.add(row("code", String.format("C%02d", i), "v", i));
    }
    db.loadRows("dbo.codes", rows);
    db.enableCdc("dbo.codes");
    SqlServerType varchar = SqlServerType.parse("varchar(10)");
    try (CdcClient client = db.openClient()) {
      ChunkPlanner planner = ChunkPlanner.forInstance(client, "dbo_codes", RC);
      SnapshotExtent extent = planner.extent();
      assertEquals("{\"kind\":\"keyset\",\"max\":\"C11\"}", extent.toJson(List.of(varchar)));
      db.transaction().insert("dbo.codes", row("code", "C99", "v", 99)).commit();
      List<Chunk> plan = planner.plan(extent, 5);
      assertEquals(
          List.of(
              new Chunk(0, null, key("C05")),
              new Chunk(1, key("C05"), key("C10")),
              new Chunk(2, key("C10"), key("C99"))),
          plan);
      assertEquals(
          List.of(5, 5, 2),
          sizes(readChunks(client, "dbo", "codes", List.of("code"), List.of(varchar), plan)));
    }
  }

  @Test
  void c094ACompositeKeyWithNullsIsTiledByKeyset() {
    FakeSqlServer db = FakeSqlServer.open(dir);
    db.createTable(
        "dbo.sales",
        List.of(
            ColumnDefinition.of("region", "int"),
            ColumnDefinition.of("id", "varchar(10)"),
            ColumnDefinition.of("status", "varchar(10)")),
        List.of("region", "id"));
    Object[][] keys = {{null, "x"}, {1, null}, {1, "a"}, {1, "b"}, {2, "a"}, {3, "z"}};
    List<Map<String, Object>> rows = new ArrayList<>();
    for (Object[] k : keys) {
      Map<String, Object> r = row("region", k[0], "id", k[1]);
      r.put("status", "s");
      rows.add(r);
    }
    db.loadRows("dbo.sales", rows);
    db.enableCdc("dbo.sales");
    List<SqlServerType> types = List.of(INT, SqlServerType.parse("varchar(10)"));
    try (CdcClient client = db.openClient()) {
      ChunkPlanner planner = ChunkPlanner.forInstance(client, "dbo_sales", RC);
      SnapshotExtent extent = planner.extent();
      assertEquals("{\"kind\":\"keyset\",\"max\":[3,\"z\"]}", extent.toJson(types));
      Map<String, Object> later = row("region", 4, "id", "a");
      later.put("status", "s");
      db.transaction().insert("dbo.sales", later).commit();
      List<Chunk> plan = planner.plan(extent, 2);
      assertEquals(
          List.of(
              new Chunk(0, null, key(1, "a")),
              new Chunk(1, key(1, "a"), key(2, "a")),
              new Chunk(2, key(2, "a"), key(4, "a"))),
          plan);
      List<List<List<Object>>> read =
          readChunks(client, "dbo", "sales", List.of("region", "id"), types, plan);
      assertEquals(List.of(2, 2, 2), sizes(read));
      assertEquals(List.of(key(null, "x"), key(1, null)), read.get(0));
    }
  }

  /** Records the widths of every {@code keySlices} call. */
  static CdcClient recording(CdcClient client, List<Long> widths) {
    return (CdcClient)
        Proxy.newProxyInstance(
            CdcClient.class.getClassLoader(),
            new Class<?>[] {CdcClient.class},
            (proxy, method, args) -> {
              if (method.getName().equals("keySlices")) {
                widths.add((Long) args[3]);
              }
              try {
                return method.invoke(client, args);
              } catch (InvocationTargetException e) {
                throw e.getCause();
              }
            });
  }

  @Test
  void c096AnIntegerPlanPacksCountedSlicesWhateverTheSkew() {
    FakeSqlServer db = FakeSqlServer.open(dir);
    db.createTable(
        "dbo.skew",
        List.of(ColumnDefinition.of("id", "bigint"), ColumnDefinition.of("v", "int")),
        List.of("id"));
    long top = Long.MAX_VALUE - 9; // 2^63 - 10
    List<Long> ids = new ArrayList<>();
    for (long i = 0; i <= 999; i++) {
      ids.add(i);
    }
    for (long i = 10_000; i <= 500_000; i += 10_000) {
      ids.add(i);
    }
    ids.add(top);
    FakeSqlServer.Transaction tx = db.transaction();
    for (long id : ids) {
      tx.insert("dbo.skew", row("id", id, "v", 1));
    }
    tx.commit();
    db.enableCdc("dbo.skew");
    List<SqlServerType> types = List.of(SqlServerType.of("bigint"));
    List<Long> widths = new ArrayList<>();
    try (CdcClient fake = db.openClient()) {
      CdcClient client = recording(fake, widths);
      ChunkPlanner planner = ChunkPlanner.forInstance(client, "dbo_skew", RC);
      SnapshotExtent extent = planner.extent();
      assertEquals(SnapshotExtent.ofInt(0, top, 1051), extent);
      List<Chunk> plan = planner.plan(extent, 100);
      assertEquals(List.of(2977L, 7L), widths.subList(1, widths.size()));
      assertNull(plan.get(0).lo());
      assertEquals(key(top + 1), plan.get(plan.size() - 1).hi());
      for (int i = 1; i < plan.size(); i++) {
        assertEquals(plan.get(i - 1).hi(), plan.get(i).lo(), "contiguous at " + i);
      }
      List<List<List<Object>>> read = readChunks(client, "dbo", "skew", List.of("id"), types, plan);
      List<Integer> expected = new ArrayList<>(Collections.nCopies(10, 98));
      expected.add(71);
      assertEquals(expected, sizes(read));
      for (int i = 1; i < expected.size(); i++) {
        assertTrue(expected.get(i - 1) + expected.get(i) > 100);
      }
      List<Long> all = new ArrayList<>();
      read.forEach(part -> part.forEach(k -> all.add((Long) k.get(0))));
      assertEquals(ids, all);
      assertEquals(key(98L), plan.get(0).hi(), "14 slices of 7 per chunk");
    }
  }

  @Test
  void c096TheLastBoundAboveBigintIsAJsonNumberThatReadsBackOpen() {
    FakeSqlServer db = FakeSqlServer.open(dir);
    db.createTable(
        "dbo.big",
        List.of(ColumnDefinition.of("id", "bigint"), ColumnDefinition.of("v", "int")),
        List.of("id"));
    db.loadRows(
        "dbo.big",
        List.of(
            row("id", Long.MIN_VALUE, "v", 1),
            row("id", -1L, "v", 1),
            row("id", Long.MAX_VALUE, "v", 1)));
    db.enableCdc("dbo.big");
    List<SqlServerType> types = List.of(SqlServerType.of("bigint"));
    try (CdcClient client = db.openClient()) {
      ChunkPlanner planner = ChunkPlanner.forInstance(client, "dbo_big", RC);
      SnapshotExtent extent = planner.extent();
      assertEquals(SnapshotExtent.ofInt(Long.MIN_VALUE, Long.MAX_VALUE, 3), extent);
      List<Chunk> plan = planner.plan(extent, 1);
      BigInteger end = BigInteger.valueOf(Long.MAX_VALUE).add(BigInteger.ONE);
      assertEquals(
          // 48 slices of width ceil(2^64 / 48) = 384307168202282326; bounds are slice starts.
          "[[0,null,-384307168202282326],[1,-384307168202282326,8839064868652493498],"
              + "[2,8839064868652493498,"
              + end
              + "]]",
          ChunkBounds.planJson(plan, types));
      assertNull(ChunkBounds.planFromJson(ChunkBounds.planJson(plan, types), types).get(2).hi());
      assertEquals(
          List.of(1, 1, 1), sizes(readChunks(client, "dbo", "big", List.of("id"), types, plan)));
    }
  }

  @Test
  void c105AnEmptyIntegerPlanIsOneChunkToMaxPlusOne() {
    FakeSqlServer db = orders();
    db.enableCdc("dbo.orders");
    try (CdcClient client = db.openClient()) {
      ChunkPlanner planner =
          ChunkPlanner.forInstance(client, "dbo_orders", IsolationLevel.SNAPSHOT);
      assertEquals(
          List.of(new Chunk(0, null, key(10))), planner.plan(SnapshotExtent.ofInt(0, 9, 0), 10));
      assertEquals(SnapshotExtent.ofKeyset(null), planner.extent(), "an empty table");
      assertEquals(List.of(new Chunk(0, null, null)), planner.plan(planner.extent(), 10));
      assertThrows(IllegalArgumentException.class, () -> planner.plan(planner.extent(), 0));
    }
  }

  @Test
  void c118ADatetime2PlanReadsTheKeysInMaxsMicrosecond() {
    FakeSqlServer db = FakeSqlServer.open(dir);
    SqlServerType dt2 = SqlServerType.parse("datetime2(7)");
    db.createTable(
        "dbo.events",
        List.of(ColumnDefinition.of("at", dt2), ColumnDefinition.of("v", "int")),
        List.of("at"));
    LocalDateTime first = LocalDateTime.parse("2026-09-28T10:00:00.1234574");
    List<Map<String, Object>> rows = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      rows.add(row("at", first.plusNanos(700L * i), "v", i));
    }
    db.loadRows("dbo.events", rows);
    db.enableCdc("dbo.events");
    try (CdcClient client = db.openClient()) {
      ChunkPlanner planner = ChunkPlanner.forInstance(client, "dbo_events", RC);
      SnapshotExtent extent = planner.extent();
      assertEquals(
          "{\"kind\":\"keyset\",\"max\":\"2026-09-28T10:00:00.123470\"}",
          extent.toJson(List.of(dt2)));
      List<Chunk> plan = planner.plan(extent, 6);
      assertNull(plan.get(plan.size() - 1).hi(), "open rather than a truncated key");
      List<List<List<Object>>> read =
          readChunks(client, "dbo", "events", List.of("at"), List.of(dt2), plan);
      assertEquals(List.of(6, 5, 6, 3), sizes(read), "all 20 keys");
      assertEquals(Optional.empty(), planner.firstKeyAfter(extent.max()));
    }
  }

  @Test
  void aKeyWithoutABindableTypeIsOneChunkOfTheWholeTable() {
    FakeSqlServer db = FakeSqlServer.open(dir);
    db.createTable(
        "dbo.times",
        List.of(ColumnDefinition.of("t", "time(7)"), ColumnDefinition.of("v", "int")),
        List.of("t"));
    db.loadRows("dbo.times", List.of(row("t", "10:00:00", "v", 1)));
    db.enableCdc("dbo.times");
    try (CdcClient client = db.openClient()) {
      ChunkPlanner planner = ChunkPlanner.forInstance(client, "dbo_times", RC);
      assertEquals(SnapshotExtent.ofKeyset(null), planner.extent());
      assertEquals(List.of(new Chunk(0, null, null)), planner.plan(planner.extent(), 1));
    }
    ChunkPlanner notLast =
        new ChunkPlanner(
            null,
            "dbo",
            "x",
            List.of("at", "id"),
            List.of(SqlServerType.parse("datetime2(7)"), INT),
            RC);
    assertEquals(SnapshotExtent.ofKeyset(null), notLast.extent(), "datetime2(7) only last");
  }
}
