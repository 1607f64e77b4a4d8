package org.lakecdc.io.mssqlcdc.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.lakecdc.io.mssqlcdc.chunk.Chunk;
import org.lakecdc.io.mssqlcdc.chunk.ChunkPlanner;
import org.lakecdc.io.mssqlcdc.chunk.SnapshotExtent;
import org.lakecdc.io.mssqlcdc.schema.SqlServerType;

/**
 * The T-SQL of chunk planning (docs/scenarios.md C103–C105): key bounds by per-piece {@code TOP (n
 * + 1)} and one {@code OFFSET}, the last key, MIN/MAX, slice counts and {@code sp_spaceused}, all
 * under the isolation prefix and the lock timeout, never NOLOCK.
 */
class ChunkQueriesTest {
  private static final IsolationLevel RC = IsolationLevel.READ_COMMITTED;
  private static final String RC_PREFIX = "SET TRANSACTION ISOLATION LEVEL READ COMMITTED; ";
  private static final String SNAPSHOT_PREFIX = "SET TRANSACTION ISOLATION LEVEL SNAPSHOT; ";
  private final List<Long> sleeps = new ArrayList<>();

  /** {@code sales.orders (region varchar(10) COLLATE Latin1_General_CI_AS, id int, v money)}. */
  private static ScriptedJdbc sales() {
    return new ScriptedJdbc()
        .answer(
            "FROM sys.columns",
            ScriptedJdbc.typed(
                List.of(
                    "int",
                    "nvarchar",
                    "nvarchar",
                    "smallint",
                    "tinyint",
                    "tinyint",
                    "nvarchar",
                    "bit"),
                new Object[] {1, "region", "varchar", 10, 0, 0, "Latin1_General_CI_AS", false},
                new Object[] {2, "id", "int", 4, 10, 0, null, false},
                new Object[] {3, "v", "money", 8, 19, 4, null, false}));
  }

  private SqlCdcClient client(ScriptedJdbc db) {
    return db.client(SqlCdcClientTest.config(SourceTimeZone.utc()), sleeps);
  }

  private static List<Object> key(Object... values) {
    return Arrays.asList(values);
  }

  @Test
  void c103EachPieceOfABoundTakesItsOwnTopAndTheUnionIsOffset() {
    ScriptedJdbc db =
        sales()
            .answer(
                "OFFSET 1000 ROWS",
                ScriptedJdbc.typed(List.of("varchar", "int"), new Object[] {"n", 3}));
    try (SqlCdcClient client = client(db)) {
      assertEquals(
          Optional.of(key("n", 3)),
          client.keyBound(
              "sales",
              "orders",
              List.of("REGION", "id"),
              Optional.of(key("a", 1)),
              Optional.of(key("s", 9)),
              1000,
              RC));
    }
    ScriptedJdbc.Executed bound = db.executed("OFFSET").get(0);
    String region = "CAST(? COLLATE Latin1_General_CI_AS AS varchar(10))";
    String below =
        "((([region] < "
            + region
            + " OR [region] IS NULL)) OR ([region] = "
            + region
            + " AND ([id] < CAST(? AS int) OR [id] IS NULL)))";
    assertEquals(
        RC_PREFIX
            + "SELECT [region], [id] FROM ("
            + "SELECT * FROM (SELECT TOP (1001) [region], [id] FROM [sales].[orders] WHERE"
            + " [region] = "
            + region
            + " AND [id] >= CAST(? AS int) AND "
            + below
            + " ORDER BY [region], [id]) p0"
            + " UNION ALL SELECT * FROM (SELECT TOP (1001) [region], [id] FROM [sales].[orders]"
            + " WHERE [region] > "
            + region
            + " AND ([region] < "
            + region
            + " OR [region] IS NULL) ORDER BY [region], [id]) p1"
            + " UNION ALL SELECT * FROM (SELECT TOP (1001) [region], [id] FROM [sales].[orders]"
            + " WHERE [region] = "
            + region
            + " AND ([id] < CAST(? AS int) OR [id] IS NULL) AND"
            + " [region] > "
            + region
            + " ORDER BY [region], [id]) p2"
            + ") u ORDER BY [region], [id] OFFSET 1000 ROWS FETCH NEXT 1 ROWS ONLY",
        bound.sql());
    assertEquals(3, bound.sql().split("TOP \\(1001\\)", -1).length - 1);
    assertEquals(List.of("a", "1", "s", "s", "9", "a", "s", "s", "9", "a"), bound.parameters());
  }

  @Test
  void c103AnIntegerBoundBelowHiReadsNoneFromAnEmptyResult() {
    ScriptedJdbc db = sales().answer("OFFSET 5 ROWS", ScriptedJdbc.typed(List.of("int")));
    try (SqlCdcClient client = client(db)) {
      assertEquals(
          Optional.empty(),
          client.keyBound(
              "sales", "orders", List.of("id"), Optional.empty(), Optional.of(key(9)), 5, RC));
      assertEquals(
          Optional.empty(),
          client.keyBound(
              "sales", "orders", List.of("id"), Optional.of(key(4)), Optional.of(key(4)), 0, RC),
          "an empty range asks nothing");
    }
    assertEquals(1, db.executed("OFFSET").size());
    ScriptedJdbc.Executed bound = db.executed("OFFSET").get(0);
    assertEquals(
        RC_PREFIX
            + "SELECT [id] FROM (SELECT * FROM (SELECT TOP (6) [id] FROM [sales].[orders] WHERE"
            + " ([id] < CAST(? AS int) OR [id] IS NULL) ORDER BY [id]) p0) u ORDER BY [id]"
            + " OFFSET 5 ROWS FETCH NEXT 1 ROWS ONLY",
        bound.sql());
    assertEquals(List.of("9"), bound.parameters());
  }

  @Test
  void c103TheLastKeyAndTheRowEstimate() {
    ScriptedJdbc db =
        sales()
            .answer(
                "SELECT TOP (1)",
                ScriptedJdbc.typed(List.of("varchar", "int"), new Object[] {"z", 7}))
            .answer(
                "sp_spaceused",
                ScriptedJdbc.labelled(
                    List.of("name", "rows", "reserved", "data", "index_size", "unused"),
                    List.of("nvarchar", "char", "varchar", "varchar", "varchar", "varchar"),
                    new Object[] {
                      "orders", "1234                ", "72 KB", "8 KB", "16 KB", "48 KB"
                    }));
    try (SqlCdcClient client = client(db)) {
      assertEquals(
          Optional.of(key("z", 7)), client.keyMax("sales", "orders", List.of("region", "id"), RC));
      assertEquals(1234, client.rowEstimate("sales", "orders"));
    }
    assertEquals(
        RC_PREFIX
            + "SELECT TOP (1) [region], [id] FROM [sales].[orders] ORDER BY [region] DESC, [id]"
            + " DESC",
        db.executed("SELECT TOP (1)").get(0).sql());
    ScriptedJdbc.Executed estimate = db.executed("sp_spaceused").get(0);
    assertEquals("EXEC sys.sp_spaceused @objname = ?", estimate.sql());
    assertEquals(List.of("[sales].[orders]"), estimate.parameters());
    assertEquals(1234, SourceTableReads.parseRows("1234 rows", "sales.orders"));
    CdcException e =
        assertThrows(CdcException.class, () -> SourceTableReads.parseRows("many", "sales.orders"));
    assertEquals(
        "sp_spaceused answered rows 'many' for sales.orders, not a number", e.getMessage());
  }

  @Test
  void c103InjectedNamesAndBadArgumentsAreRefusedBeforeAnyQuery() {
    ScriptedJdbc db = sales();
    try (SqlCdcClient client = client(db)) {
      assertThrows(
          IllegalArgumentException.class,
          () -> client.keyMax("sales", "orders]; DROP TABLE x; --", List.of("id"), RC));
      assertThrows(
          IllegalArgumentException.class, () -> client.keyRange("sales]", "orders", "id", RC));
      assertThrows(
          IllegalArgumentException.class,
          () ->
              client.keyBound(
                  "sales", "orders", List.of("id"), Optional.empty(), Optional.empty(), -1, RC));
      assertThrows(
          IllegalArgumentException.class, () -> client.keyMax("sales", "orders", List.of(), RC));
      assertThrows(
          IllegalArgumentException.class,
          () -> client.keyMax("sales", "orders", List.of("id] DESC; DROP TABLE x; --"), RC));
      assertThrows(
          IllegalArgumentException.class,
          () -> client.keySlices("sales", "orders", "id]--", 1, 0, 10, RC));
      assertThrows(
          IllegalArgumentException.class,
          () -> client.keySlices("sales", "orders", "id", 0, 0, 10, RC));
      assertThrows(IllegalArgumentException.class, () -> client.rowEstimate("[sales]", "orders"));
      assertTrue(db.executed().isEmpty());
      IllegalArgumentException notInteger =
          assertThrows(
              IllegalArgumentException.class,
              () -> client.keySlices("sales", "orders", "region", 10, 0, 10, RC));
      assertEquals(
          "Key column 'region' has type varchar; slices need tinyint, smallint, int or bigint",
          notInteger.getMessage());
      CdcException unknown =
          assertThrows(
              CdcException.class, () -> client.keyMax("sales", "orders", List.of("nope"), RC));
      assertTrue(
          unknown.getMessage().contains("Invalid column name 'nope' in table 'sales.orders'"),
          unknown.getMessage());
    }
  }

  @Test
  void c105SlicesAreCountedInOneGroupByFlooringNegativeKeys() {
    ScriptedJdbc db =
        sales()
            .answer(
                "GROUP BY x.slice",
                ScriptedJdbc.typed(
                    List.of("bigint", "bigint"), new Object[] {-1L, 3L}, new Object[] {0L, 10L}));
    SortedMapHolder got = new SortedMapHolder();
    try (SqlCdcClient client = client(db)) {
      got.value = client.keySlices("sales", "orders", "id", 10, 0, 10, RC);
      client.keySlices("sales", "orders", "id", 3_000_000_000L, Long.MIN_VALUE, Long.MAX_VALUE, RC);
    }
    assertEquals(new TreeMap<>(Map.of(-1L, 3L, 0L, 10L)), got.value);
    List<ScriptedJdbc.Executed> slices = db.executed("GROUP BY x.slice");
    assertEquals(
        RC_PREFIX
            + "SELECT x.slice, COUNT_BIG(*) FROM (SELECT CAST([id] AS bigint) / CAST(10 AS bigint)"
            + " - CASE WHEN CAST([id] AS bigint) % CAST(10 AS bigint) < 0 THEN 1 ELSE 0 END AS"
            + " slice FROM [sales].[orders] WHERE [id] IS NOT NULL AND [id] >= CAST(? AS int) AND"
            + " [id] <= CAST(? AS int)) AS x GROUP BY x.slice ORDER BY x.slice",
        slices.get(0).sql());
    assertEquals(List.of("0", "10"), slices.get(0).parameters());
    assertEquals(
        RC_PREFIX
            + "SELECT x.slice, COUNT_BIG(*) FROM (SELECT CAST([id] AS bigint) / CAST(3000000000 AS"
            + " bigint) - CASE WHEN CAST([id] AS bigint) % CAST(3000000000 AS bigint) < 0 THEN 1"
            + " ELSE 0 END AS slice FROM [sales].[orders] WHERE [id] IS NOT NULL) AS x GROUP BY"
            + " x.slice ORDER BY x.slice",
        slices.get(1).sql(),
        "bounds beyond int are left out");
    assertEquals(List.of(), slices.get(1).parameters());
  }

  /** Holds a result across the try block. */
  private static final class SortedMapHolder {
    java.util.SortedMap<Long, Long> value;
  }

  @Test
  void c105PlanningRunsUnderTheIsolationAndTheLockTimeoutNeverNolock() {
    ScriptedJdbc db =
        sales()
            .answer("MIN([id])", ScriptedJdbc.typed(List.of("int", "int"), new Object[] {0, 10}))
            .answer("GROUP BY", ScriptedJdbc.typed(List.of("bigint", "bigint")))
            .answer("OFFSET", ScriptedJdbc.typed(List.of("int")))
            .answer("SELECT TOP (1)", ScriptedJdbc.typed(List.of("int")));
    for (IsolationLevel isolation : IsolationLevel.values()) {
      try (SqlCdcClient client = client(db)) {
        assertEquals(Optional.of(key(0, 10)), client.keyRange("sales", "orders", "id", isolation));
        client.keySlices("sales", "orders", "id", 10, 0, 10, isolation);
        client.keyBound(
            "sales", "orders", List.of("id"), Optional.empty(), Optional.empty(), 3, isolation);
        client.keyMax("sales", "orders", List.of("id"), isolation);
      }
    }
    SqlCdcClientFactory timeout =
        SqlCdcClientTest.config(SourceTimeZone.utc()).withLockTimeoutMs(5000);
    try (SqlCdcClient client = db.client(timeout, sleeps)) {
      client.keyRange("sales", "orders", "id", IsolationLevel.SNAPSHOT);
    }
    List<String> statements = new ArrayList<>();
    db.executed().stream()
        .filter(e -> !e.sql().contains("sys.columns"))
        .forEach(e -> statements.add(e.sql()));
    assertEquals(9, statements.size());
    for (int i = 0; i < 4; i++) {
      assertTrue(statements.get(i).startsWith(RC_PREFIX + "SELECT "), statements.get(i));
      assertTrue(statements.get(4 + i).startsWith(SNAPSHOT_PREFIX + "SELECT "), statements.get(i));
    }
    assertEquals(
        "SET LOCK_TIMEOUT 5000; "
            + SNAPSHOT_PREFIX
            + "SELECT (SELECT MIN([id]) FROM [sales].[orders]) AS lo, (SELECT MAX([id]) FROM"
            + " [sales].[orders]) AS hi",
        statements.get(8));
    for (String sql : statements) {
      assertFalse(sql.toUpperCase(Locale.ROOT).contains("NOLOCK"), sql);
      assertFalse(sql.toUpperCase(Locale.ROOT).contains("UNCOMMITTED"), sql);
    }
    IllegalArgumentException uncommitted =
        assertThrows(
            IllegalArgumentException.class,
            () -> IsolationLevel.fromOption("--isolationLevel", "uncommitted"));
    assertEquals(
        "--isolationLevel must be 'readCommitted' or 'snapshot' (never NOLOCK), not 'uncommitted'",
        uncommitted.getMessage());
    assertThrows(
        IllegalArgumentException.class,
        () -> IsolationLevel.fromOption("--isolationLevel", "readUncommitted"));
    assertEquals(
        IsolationLevel.READ_COMMITTED,
        IsolationLevel.fromOption("--isolationLevel", " ReadCommitted "));
    assertEquals(
        IsolationLevel.SNAPSHOT, IsolationLevel.fromOption("--isolationLevel", "snapshot"));
  }

  @Test
  void c105AnEmptyIntegerPlanUnderSnapshotIsOneChunkAndItsCountCarriesThePrefix() {
    ScriptedJdbc db = sales().answer("GROUP BY", ScriptedJdbc.typed(List.of("bigint", "bigint")));
    try (SqlCdcClient client = client(db)) {
      ChunkPlanner planner =
          new ChunkPlanner(
              client,
              "sales",
              "orders",
              List.of("id"),
              List.of(SqlServerType.of("int")),
              IsolationLevel.SNAPSHOT);
      assertEquals(
          List.of(new Chunk(0, null, key(10))), planner.plan(SnapshotExtent.ofInt(0, 9, 0), 10));
    }
    ScriptedJdbc.Executed count = db.executed("GROUP BY").get(0);
    assertTrue(count.sql().startsWith(SNAPSHOT_PREFIX), count.sql());
    assertTrue(count.sql().contains("/ CAST(10 AS bigint)"), count.sql());
    assertEquals(List.of("0", "9"), count.parameters());
  }
}
