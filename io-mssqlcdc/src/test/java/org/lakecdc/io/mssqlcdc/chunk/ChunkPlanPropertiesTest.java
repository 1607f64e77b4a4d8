package org.lakecdc.io.mssqlcdc.chunk;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigInteger;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
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
 * Properties of chunk plans over many seeded random tables on the simulator (docs/scenarios.md
 * C108, C109): the plan tiles the key space up to MAX, no chunk is empty, and chunk sizes keep to
 * {@code chunk_rows}.
 */
class ChunkPlanPropertiesTest {
  private static final IsolationLevel RC = IsolationLevel.READ_COMMITTED;
  private static final SqlServerType BIGINT = SqlServerType.of("bigint");

  @TempDir Path dir;

  /** A table {@code dbo.t (id int PRIMARY KEY, k bigint)}: k may repeat and be NULL. */
  private FakeSqlServer integerTable(Path at, List<Long> keys) {
    FakeSqlServer db = FakeSqlServer.open(at);
    db.createTable(
        "dbo.t",
        List.of(ColumnDefinition.of("id", "int"), ColumnDefinition.of("k", "bigint")),
        List.of("id"));
    List<Map<String, Object>> rows = new ArrayList<>();
    for (int i = 0; i < keys.size(); i++) {
      Map<String, Object> row = new HashMap<>();
      row.put("id", i);
      row.put("k", keys.get(i));
      rows.add(row);
    }
    db.loadRows("dbo.t", rows);
    db.enableCdc("dbo.t");
    return db;
  }

  private static List<Long> randomKeys(Random random) {
    int n = 1 + random.nextInt(60);
    List<Long> keys = new ArrayList<>();
    switch (random.nextInt(4)) {
      case 0 -> { // dense
        long start = random.nextInt(101) - 50;
        for (int i = 0; i < n; i++) {
          keys.add(start + i);
        }
      }
      case 1 -> { // sparse
        for (int i = 0; i < n; i++) {
          keys.add((long) (random.nextInt(2_000_001) - 1_000_000));
        }
      }
      case 2 -> { // the whole bigint range
        keys.add(random.nextBoolean() ? Long.MIN_VALUE : random.nextLong());
        keys.add(random.nextBoolean() ? Long.MAX_VALUE : random.nextLong());
        for (int i = 2; i < n; i++) {
          keys.add(random.nextLong());
        }
      }
      default -> { // many duplicates
        int pool = 1 + random.nextInt(8);
        long base = random.nextInt(1000) - 500;
        for (int i = 0; i < n; i++) {
          keys.add(base + 3L * random.nextInt(pool));
        }
      }
    }
    if (random.nextInt(4) == 0) {
      keys.add(null);
    }
    return keys;
  }

  private static long numeric(Object v) {
    return ((Number) v).longValue();
  }

  /** The chunk an integer key falls in by the plan's bounds, or -1 for none. */
  private static int chunkOf(List<Chunk> plan, Long key) {
    int found = -1;
    for (Chunk c : plan) {
      boolean above = c.lo() == null || (key != null && key >= numeric(c.lo().get(0)));
      boolean below =
          c.hi() == null
              || key == null
              || BigInteger.valueOf(key).compareTo(new BigInteger(c.hi().get(0).toString())) < 0;
      if (above && below) {
        if (found >= 0) {
          return -2;
        }
        found = c.index();
      }
    }
    return found;
  }

  /** Checks one random integer case; returns the number of chunks. */
  private int checkIntegerPlan(Path at, List<Long> keys, long estimate, List<Long> later, long r) {
    FakeSqlServer db = integerTable(at, keys);
    List<Long> present = keys.stream().filter(k -> k != null).toList();
    long min = present.stream().min(Long::compare).orElseThrow();
    long max = present.stream().max(Long::compare).orElseThrow();
    String what = "keys " + keys + " estimate " + estimate + " later " + later + " rows " + r;
    try (CdcClient client = db.openClient()) {
      ChunkPlanner planner =
          new ChunkPlanner(client, "dbo", "t", List.of("k"), List.of(BIGINT), RC);
      assertEquals(SnapshotExtent.ofInt(min, max, keys.size()), planner.extent(), what);
      List<Chunk> plan = planner.plan(SnapshotExtent.ofInt(min, max, estimate), r);
      assertNull(plan.get(0).lo(), what);
      Object last = plan.get(plan.size() - 1).hi().get(0);
      assertEquals(BigInteger.valueOf(max).add(BigInteger.ONE), new BigInteger(last.toString()));
      for (int i = 0; i < plan.size(); i++) {
        Chunk c = plan.get(i);
        assertEquals(i, c.index());
        if (i > 0) {
          assertEquals(plan.get(i - 1).hi(), c.lo(), "contiguous: " + what);
          assertTrue(c.lo().get(0) instanceof Long, what);
          assertTrue(
              BigInteger.valueOf(numeric(c.lo().get(0)))
                      .compareTo(new BigInteger(c.hi().get(0).toString()))
                  < 0,
              "lo < hi: " + what);
        }
      }
      // Sizes over the rows at planning (NULL keys, which chunk 0 takes, are not counted): none
      // empty, more than r only for one distinct value.
      Map<Integer, List<Long>> byChunk = new HashMap<>();
      for (Long k : keys) {
        int c = chunkOf(plan, k);
        assertTrue(c >= 0, "key " + k + " in exactly one chunk: " + what);
        if (k != null) {
          byChunk.computeIfAbsent(c, x -> new ArrayList<>()).add(k);
        }
      }
      for (Chunk c : plan) {
        List<Long> in = byChunk.getOrDefault(c.index(), List.of());
        assertTrue(!in.isEmpty(), "chunk " + c.index() + " is not empty: " + what);
        if (in.size() > r) {
          assertEquals(
              1, new HashSet<>(in).size(), "one value in chunk " + c.index() + ": " + what);
        }
      }
      // Later keys anywhere: every key <= MAX is read by exactly one chunk, none above it.
      int id = keys.size();
      for (Long k : later) {
        Map<String, Object> row = new HashMap<>();
        row.put("id", id++);
        row.put("k", k);
        db.transaction().insert("dbo.t", row).commit();
      }
      List<Long> expected = new ArrayList<>(keys);
      later.stream().filter(k -> k <= max).forEach(expected::add);
      List<Long> read = new ArrayList<>();
      List<SqlServerType> types = List.of(BIGINT);
      for (Chunk c : ChunkBounds.planFromJson(ChunkBounds.planJson(plan, types), types)) {
        try (CloseableIterator<List<Object>> it =
            client.readTable(
                new TableQuery(
                    "dbo",
                    "t",
                    List.of("k"),
                    List.of("k"),
                    Optional.ofNullable(c.lo()),
                    Optional.ofNullable(c.hi()),
                    RC))) {
          it.forEachRemaining(v -> read.add((Long) v.get(0)));
        }
      }
      Comparator<Long> order = Comparator.nullsFirst(Comparator.naturalOrder());
      expected.sort(order);
      read.sort(order);
      assertEquals(expected, read, what);
      return plan.size();
    }
  }

  @Test
  void c108AnIntegerPlanTilesTheKeysUpToMax() {
    Random random = new Random(108);
    int cases = 100;
    int chunks = 0;
    for (int i = 0; i < cases; i++) {
      List<Long> keys = randomKeys(random);
      if (keys.stream().allMatch(k -> k == null)) {
        keys.add(0L);
      }
      List<Long> later = new ArrayList<>();
      int laterCount = random.nextInt(6);
      for (int j = 0; j < laterCount; j++) {
        later.add(random.nextBoolean() ? random.nextLong() : (long) (random.nextInt(2001) - 1000));
      }
      chunks +=
          checkIntegerPlan(
              dir.resolve("int" + i), keys, random.nextInt(401), later, 1 + random.nextInt(40));
    }
    assertTrue(chunks > cases, "the cases plan more than one chunk each on average: " + chunks);
  }

  @Test
  void c108FixedExamples() {
    assertEquals(2, checkIntegerPlan(dir.resolve("a"), List.of(0L, 0L, 1L, 1L), 4, List.of(), 1));
    // 32 slices of 2: {98, 99}, {100, 101}, {120}, {147} pack into [-, 100), [100, 146), [146,
    // 148).
    assertEquals(
        3,
        checkIntegerPlan(
            dir.resolve("b"), List.of(98L, 99L, 100L, 101L, 120L, 147L), 6, List.of(), 3));
  }

  /** A table {@code dbo.p (a int, b varchar(10), v int, PRIMARY KEY (a, b))}. */
  private static FakeSqlServer pairTable(Path at, List<Pair> pairs) {
    FakeSqlServer db = FakeSqlServer.open(at);
    db.createTable(
        "dbo.p",
        List.of(
            ColumnDefinition.of("a", "int"),
            ColumnDefinition.of("b", "varchar(10)"),
            ColumnDefinition.of("v", "int")),
        List.of("a", "b"));
    List<Map<String, Object>> rows = new ArrayList<>();
    for (Pair p : pairs) {
      rows.add(p.row());
    }
    db.loadRows("dbo.p", rows);
    db.enableCdc("dbo.p");
    return db;
  }

  /** A composite key; NULL sorts first, strings are lower-case letters (one order everywhere). */
  private record Pair(Integer a, String b) implements Comparable<Pair> {
    static final Comparator<Pair> ORDER =
        Comparator.comparing(Pair::a, Comparator.nullsFirst(Comparator.<Integer>naturalOrder()))
            .thenComparing(Pair::b, Comparator.nullsFirst(Comparator.<String>naturalOrder()));

    @Override
    public int compareTo(Pair o) {
      return ORDER.compare(this, o);
    }

    Map<String, Object> row() {
      Map<String, Object> row = new HashMap<>();
      row.put("a", a);
      row.put("b", b);
      row.put("v", 1);
      return row;
    }

    List<Object> key() {
      List<Object> key = new ArrayList<>();
      key.add(a);
      key.add(b);
      return key;
    }

    static Pair of(List<Object> key) {
      return new Pair((Integer) key.get(0), (String) key.get(1));
    }
  }

  private static Pair randomPair(Random random) {
    Integer a = random.nextInt(10) == 0 ? null : random.nextInt(6);
    String b = null;
    if (random.nextInt(10) != 0) {
      StringBuilder s = new StringBuilder();
      int len = 1 + random.nextInt(3);
      for (int i = 0; i < len; i++) {
        s.append((char) ('a' + random.nextInt(4)));
      }
      b = s.toString();
    }
    return new Pair(a, b);
  }

  @Test
  void c109AKeysetPlanTilesUpToTheFirstKeyAfterMax() {
    Random random = new Random(109);
    List<SqlServerType> types =
        List.of(SqlServerType.of("int"), SqlServerType.parse("varchar(10)"));
    int openEnds = 0;
    int closedEnds = 0;
    for (int i = 0; i < 100; i++) {
      TreeSet<Pair> pairs = new TreeSet<>();
      int n = 1 + random.nextInt(40);
      while (pairs.size() < n) {
        pairs.add(randomPair(random));
      }
      FakeSqlServer db = pairTable(dir.resolve("keyset" + i), new ArrayList<>(pairs));
      long r = 1 + random.nextInt(8);
      Pair max = pairs.last();
      TreeSet<Pair> later = new TreeSet<>();
      int laterCount = random.nextInt(6);
      while (later.size() < laterCount) {
        Pair p = randomPair(random);
        if (!pairs.contains(p)) {
          later.add(p);
        }
      }
      String what = "pairs " + pairs + " later " + later + " rows " + r;
      try (CdcClient client = db.openClient()) {
        ChunkPlanner planner = new ChunkPlanner(client, "dbo", "p", List.of("a", "b"), types, RC);
        SnapshotExtent extent = planner.extent();
        assertEquals(SnapshotExtent.ofKeyset(max.key()), extent, what);
        for (Pair p : later) {
          db.transaction().insert("dbo.p", p.row()).commit();
        }
        List<Chunk> plan = planner.plan(extent, r);
        Pair firstAfter = later.higher(max);
        List<Object> lastHi = plan.get(plan.size() - 1).hi();
        if (firstAfter == null) {
          assertNull(lastHi, what);
          openEnds++;
        } else {
          assertEquals(firstAfter.key(), lastHi, what);
          closedEnds++;
        }
        assertNull(plan.get(0).lo(), what);
        for (int c = 1; c < plan.size(); c++) {
          assertEquals(plan.get(c - 1).hi(), plan.get(c).lo(), "contiguous: " + what);
        }
        TreeSet<Pair> all = new TreeSet<>(pairs);
        all.addAll(later);
        Set<Pair> seen = new HashSet<>();
        for (Chunk c : ChunkBounds.planFromJson(ChunkBounds.planJson(plan, types), types)) {
          List<Pair> in = new ArrayList<>();
          try (CloseableIterator<List<Object>> it =
              client.readTable(
                  new TableQuery(
                      "dbo",
                      "p",
                      List.of("a", "b"),
                      List.of("a", "b"),
                      Optional.ofNullable(c.lo()),
                      Optional.ofNullable(c.hi()),
                      RC))) {
            it.forEachRemaining(k -> in.add(Pair.of(k)));
          }
          assertTrue(in.size() >= 1 && in.size() <= r + 1, "chunk " + c.index() + " size: " + what);
          if (c.index() < plan.size() - 1) {
            assertEquals(r, in.size(), "a chunk before the last holds chunk_rows keys: " + what);
          }
          for (Pair p : in) {
            assertTrue(seen.add(p), "read once: " + p + " " + what);
          }
        }
        Set<Pair> upToMax = new HashSet<>(all.headSet(max, true));
        assertEquals(upToMax, seen, "every key <= MAX once, none after: " + what);
      }
    }
    assertTrue(openEnds > 10 && closedEnds > 10, openEnds + " open, " + closedEnds + " closed");
  }
}
