package org.lakecdc.io.mssqlcdc.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.lakecdc.io.mssqlcdc.chunk.Chunk;
import org.lakecdc.io.mssqlcdc.chunk.ChunkBounds;
import org.lakecdc.io.mssqlcdc.chunk.ChunkPlanner;
import org.lakecdc.io.mssqlcdc.chunk.SnapshotExtent;
import org.lakecdc.io.mssqlcdc.fake.ColumnDefinition;
import org.lakecdc.io.mssqlcdc.schema.SqlServerType;

/**
 * Chunk planning on SQL Server 2022 (docs/scenarios.md C118–C120): a datetime2(7) key whose MAX
 * shares its microsecond, a skewed bigint key counted on the server up to 2^63 − 1, and a key bound
 * seeking each piece for its first keys. Runs in the integration profile where a Docker engine is
 * available; otherwise every test reports skipped with the reason.
 */
@ExtendWith(IntegrationCondition.class)
class SqlServerChunkPlanningTest {
  private static final IsolationLevel RC = IsolationLevel.READ_COMMITTED;
  private static final String NUMBERS =
      " FROM (SELECT TOP (%d) ROW_NUMBER() OVER (ORDER BY (SELECT NULL)) - 1 AS n"
          + " FROM sys.all_objects a CROSS JOIN sys.all_objects b) AS x";
  private static SqlServerCdcTestDatabase server;

  @BeforeAll
  static void startSqlServer() throws Exception {
    server = SqlServerCdcTestDatabase.start();
  }

  @AfterAll
  static void stopSqlServer() {
    if (server != null) {
      server.stop();
    }
  }

  /** Row counts per chunk, reading each chunk with its bounds after they crossed JSON. */
  private static List<Integer> read(
      CdcClient client,
      String table,
      List<String> keys,
      List<SqlServerType> types,
      List<Chunk> plan,
      Set<List<Object>> seen) {
    List<Integer> sizes = new ArrayList<>();
    for (Chunk c : ChunkBounds.planFromJson(ChunkBounds.planJson(plan, types), types)) {
      int n = 0;
      try (CloseableIterator<List<Object>> it =
          client.readTable(
              new TableQuery(
                  "dbo",
                  table,
                  keys,
                  keys,
                  Optional.ofNullable(c.lo()),
                  Optional.ofNullable(c.hi()),
                  RC))) {
        while (it.hasNext()) {
          assertTrue(seen.add(it.next()), table + ": a key read twice");
          n++;
        }
      }
      sizes.add(n);
    }
    return sizes;
  }

  @Test
  void c118ADatetime2PlanReadsTheKeysInMaxsMicrosecond() {
    String t = "ck_dt2";
    String ci =
        server.createCapturedTable(
            t,
            List.of(ColumnDefinition.of("at", "datetime2(7)"), ColumnDefinition.of("v", "int")),
            List.of("at"),
            true);
    server.execute(
        "INSERT INTO dbo.["
            + t
            + "] (at, v) SELECT DATEADD(NANOSECOND, 700 * n,"
            + " CAST('2026-09-28T10:00:00.1234574' AS datetime2(7))), n"
            + String.format(NUMBERS, 20));
    try (CdcClient client = server.clientFactory().open()) {
      ChunkPlanner planner = ChunkPlanner.forInstance(client, ci, RC);
      SnapshotExtent extent = planner.extent();
      assertEquals(
          "{\"kind\":\"keyset\",\"max\":\"2026-09-28T10:00:00.123470\"}",
          extent.toJson(planner.keyTypes()));
      List<Chunk> plan = planner.plan(extent, 6);
      assertNull(plan.get(plan.size() - 1).hi(), "open rather than a truncated key");
      Set<List<Object>> seen = new HashSet<>();
      List<Integer> sizes = read(client, t, List.of("at"), planner.keyTypes(), plan, seen);
      assertEquals(List.of(6, 5, 6, 3), sizes);
      assertEquals(20, seen.size());
    }
  }

  @Test
  void c119AnIntegerPlanCountsASkewedKeyOnTheServer() {
    String t = "ck_skew";
    String ci =
        server.createCapturedTable(
            t,
            List.of(ColumnDefinition.of("id", "bigint"), ColumnDefinition.of("v", "int")),
            List.of("id"),
            true);
    server.execute(
        "INSERT INTO dbo.[" + t + "] (id, v) SELECT n + 1, 1" + String.format(NUMBERS, 1000));
    server.execute(
        "INSERT INTO dbo.["
            + t
            + "] (id, v) SELECT (n + 1) * 10000, 1"
            + String.format(NUMBERS, 50));
    server.execute("INSERT INTO dbo.[" + t + "] (id, v) VALUES (9223372036854775807, 1)");
    try (CdcClient client = server.clientFactory().open()) {
      ChunkPlanner planner = ChunkPlanner.forInstance(client, ci, RC);
      SnapshotExtent extent = planner.extent();
      assertEquals(SnapshotExtent.ofInt(1, Long.MAX_VALUE, 1051), extent);
      List<Chunk> plan = planner.plan(extent, 100);
      assertEquals(
          BigInteger.valueOf(Long.MAX_VALUE).add(BigInteger.ONE),
          plan.get(plan.size() - 1).hi().get(0),
          "the last hi is 2^63");
      Set<List<Object>> seen = new HashSet<>();
      List<Integer> sizes = read(client, t, List.of("id"), planner.keyTypes(), plan, seen);
      assertEquals(1051, sizes.stream().mapToInt(Integer::intValue).sum());
      assertEquals(1051, seen.size());
      assertTrue(sizes.size() <= 12, "at most 12 chunks: " + sizes);
      for (int i = 0; i < sizes.size(); i++) {
        assertTrue(sizes.get(i) >= 1 && sizes.get(i) <= 100, "chunk sizes " + sizes);
        if (i > 0) {
          assertTrue(sizes.get(i - 1) + sizes.get(i) > 100, "neighbours " + sizes);
        }
      }
    }
  }

  @Test
  void c120KeyBoundSeeksEachPieceForItsFirstKeysOnly() {
    String t = "ck_bound";
    server.createCapturedTable(
        t,
        List.of(
            ColumnDefinition.of("company", "int"),
            ColumnDefinition.of("id", "int"),
            ColumnDefinition.of("v", "int")),
        List.of("company", "id"),
        true);
    server.execute(
        "INSERT INTO dbo.["
            + t
            + "] (company, id, v) SELECT n % 3, n, 1"
            + String.format(NUMBERS, 40000));
    try (CdcClient client = server.clientFactory().open()) {
      // Keys of company 0 are the multiples of 3: the one 500 keys after (0, 3000) is (0, 4500).
      assertEquals(
          Optional.of(List.<Object>of(0, 4500)),
          client.keyBound(
              "dbo",
              t,
              List.of("company", "id"),
              Optional.of(List.<Object>of(0, 3000)),
              Optional.of(List.<Object>of(2, 30002)),
              500,
              RC));
      // Company 2 below 30002 starts at (2, 2): 500 keys into the piece of company 2 alone.
      assertEquals(
          Optional.of(List.<Object>of(2, 1502)),
          client.keyBound(
              "dbo",
              t,
              List.of("company", "id"),
              Optional.of(List.<Object>of(2, 0)),
              Optional.of(List.<Object>of(2, 30002)),
              500,
              RC));
    }
  }
}
