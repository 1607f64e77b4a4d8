package org.lakecdc.io.mssqlcdc.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigDecimal;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.io.mssqlcdc.schema.CapturedColumn;
import org.lakecdc.io.mssqlcdc.schema.SqlServerType;

/**
 * {@link SqlCdcClient} over scripted JDBC: the statements it sends with their exact parameters, how
 * it reads the answers, the server clock, permissions and retries (docs/scenarios.md C020, C228,
 * C229, C235 to C238, C240, C241, C270, C273, C274).
 */
class SqlCdcClientTest {
  static final String CI = "dbo_orders";
  static final Lsn L1 = Lsn.parse("0x01");
  static final Lsn L2 = Lsn.parse("0x02");
  static final Lsn C1 = Lsn.parse("0x0000002A000001000001");
  static final String ZONE = "E. South America Standard Time";

  static final List<String> HELP_LABELS =
      List.of(
          "source_schema",
          "source_table",
          "capture_instance",
          "start_lsn",
          "create_date",
          "index_column_list");
  static final List<String> CAPTURED_LABELS =
      List.of(
          "source_schema",
          "source_table",
          "capture_instance",
          "column_name",
          "column_id",
          "column_ordinal",
          "data_type",
          "character_maximum_length",
          "numeric_precision",
          "numeric_precision_radix",
          "numeric_scale",
          "datetime_precision");

  private final List<Long> sleeps = new ArrayList<>();

  static SqlCdcClientFactory config(SourceTimeZone zone) {
    return SqlCdcClientFactory.of(
            SqlCdcClientFactory.dataSourceConfiguration(
                "jdbc:sqlserver://db:1433;databaseName=sales",
                "reader",
                PasswordSource.environmentVariable("LAKECDC_TEST_PASSWORD"),
                Duration.ofSeconds(30)))
        .withSourceTimeZone(zone);
  }

  static Object[] help(String ci, String schema, String table, String createDate, String keys) {
    return new Object[] {
      schema,
      table,
      ci,
      HexFormat.of().parseHex("0000002A000001000001"),
      LocalDateTime.parse(createDate),
      keys
    };
  }

  /** dbo.orders: capture instance dbo_orders over order_id int, status varchar(20), a computed. */
  static ScriptedJdbc orders() {
    ScriptedJdbc db = new ScriptedJdbc();
    db.answer(
        "sp_cdc_help_change_data_capture",
        ScriptedJdbc.labelled(
            HELP_LABELS,
            List.of("sysname", "sysname", "sysname", "binary", "datetime", "nvarchar"),
            help(CI, "dbo", "orders", "2026-09-28T10:00:00", "[order_id]")));
    db.answer(
        "sp_cdc_get_captured_columns",
        ScriptedJdbc.labelled(
            CAPTURED_LABELS,
            List.of(
                "sysname",
                "sysname",
                "sysname",
                "sysname",
                "int",
                "int",
                "sysname",
                "int",
                "tinyint",
                "smallint",
                "int",
                "smallint"),
            new Object[] {"dbo", "orders", CI, "order_id", 1, 1, "int", null, 10, 10, 0, null},
            new Object[] {
              "dbo", "orders", CI, "status", 2, 2, "varchar", 20, null, null, null, null
            },
            new Object[] {"dbo", "orders", CI, "amount", 3, 3, "decimal", null, 18, 10, 2, null},
            new Object[] {"dbo", "orders", CI, "total", 4, 4, "int", null, 10, 10, 0, null}));
    db.answer(
        "FROM sys.columns",
        ScriptedJdbc.typed(
            List.of(
                "int", "nvarchar", "nvarchar", "smallint", "tinyint", "tinyint", "nvarchar", "bit"),
            new Object[] {1, "order_id", "int", 4, 10, 0, null, false},
            new Object[] {2, "status", "varchar", 20, 0, 0, "Latin1_General_CI_AS", false},
            new Object[] {3, "amount", "decimal", 9, 18, 2, null, false},
            new Object[] {4, "total", "int", 4, 10, 0, null, true}));
    return db;
  }

  static ScriptedJdbc.Result changeRows(boolean commandId) {
    List<String> types =
        commandId
            ? List.of("varchar", "varchar", "tinyint", "int", "datetime2", "int", "varchar")
            : List.of("varchar", "varchar", "tinyint", "datetime2", "int", "varchar");
    Object[] row =
        commandId
            ? new Object[] {
              "0x0000002a000001000001",
              "0x0000002a000001000003",
              2,
              1,
              LocalDateTime.parse("2026-09-28T16:50:00.123"),
              7,
              "new"
            }
            : new Object[] {
              "0x0000002a000001000001",
              "0x0000002a000001000003",
              2,
              LocalDateTime.parse("2026-09-28T16:50:00.123"),
              7,
              "new"
            };
    return ScriptedJdbc.typed(types, row);
  }

  // ---- C274 ---------------------------------------------------------------------------------

  @Test
  void readsTheChangeTableDirectly() {
    ScriptedJdbc db = orders().answer("FROM cdc.[dbo_orders_CT] c", changeRows(true));
    try (SqlCdcClient client = db.client(config(SourceTimeZone.utc()), sleeps);
        CloseableIterator<ChangeRow> rows =
            client.readChanges(
                new ChangeQuery(CI, L1, L2, List.of("order_id", "STATUS", "gone"), true))) {
      ChangeRow row = rows.next();
      assertEquals(C1, row.startLsn());
      assertEquals(Lsn.parse("0x0000002A000001000003"), row.seqval());
      assertEquals(2, row.operation());
      assertEquals(1, row.commandId());
      assertEquals(Instant.parse("2026-09-28T16:50:00.123Z"), row.commitTime());
      assertEquals(java.util.Arrays.asList(7, "new", null), row.values());
      assertFalse(rows.hasNext());
    }
    ScriptedJdbc.Executed read = db.executed("FROM cdc.[dbo_orders_CT] c").get(0);
    assertEquals(
        "SELECT CONVERT(varchar(22), c.[__$start_lsn], 1) AS _start_lsn,"
            + " CONVERT(varchar(22), c.[__$seqval], 1) AS _seqval, c.[__$operation] AS _operation,"
            + " c.[__$command_id] AS _command_id, CAST(m.tran_end_time AS datetime2(3)) AS"
            + " _commit_ts, c.[order_id], c.[status] FROM cdc.[dbo_orders_CT] c"
            + " JOIN cdc.lsn_time_mapping m ON m.start_lsn = c.[__$start_lsn]"
            + " WHERE c.[__$start_lsn] BETWEEN CONVERT(binary(10), ?, 1) AND CONVERT(binary(10), ?,"
            + " 1) ORDER BY c.[__$start_lsn], c.[__$command_id], c.[__$seqval], c.[__$operation]",
        read.sql());
    assertEquals(List.of("0x00000000000000000001", "0x00000000000000000002"), read.parameters());
    assertFalse(read.sql().contains("fn_cdc_get_all_changes"));
    assertTrue(db.executed("CURRENT_TIMEZONE_ID").isEmpty(), "UTC never asks for the zone");
  }

  @Test
  void leavesCommandIdOutWhenNotIncluded() {
    ScriptedJdbc db = orders().answer("FROM cdc.[dbo_orders_CT] c", changeRows(false));
    try (SqlCdcClient client = db.client(config(SourceTimeZone.utc()), sleeps);
        CloseableIterator<ChangeRow> rows =
            client.readChanges(new ChangeQuery(CI, L1, L2, List.of("order_id", "status"), false))) {
      ChangeRow row = rows.next();
      assertEquals(null, row.commandId());
      assertEquals(List.of(7, "new"), row.values());
    }
    assertFalse(db.executed("FROM cdc.[dbo_orders_CT] c").get(0).sql().contains("__$command_id"));
  }

  // ---- C020, C273, C241 -----------------------------------------------------------------------

  @Test
  void c020TilesTheChangeTableWithNtileInOneRoundTrip() {
    ScriptedJdbc db =
        orders()
            .answer(
                "NTILE(4)",
                ScriptedJdbc.typed(
                    List.of("varchar", "varchar", "bigint"),
                    new Object[] {"0x0000002a000001000001", "0x0000002a000001000002", 3L},
                    new Object[] {"0x0000002a000001000003", "0x0000002a000001000004", 2L}));
    try (SqlCdcClient client = db.client(config(SourceTimeZone.utc()), sleeps)) {
      List<SplitPoint> tiles = client.splitPoints(CI, L1, L2, 4);
      assertEquals(
          List.of(
              new SplitPoint(C1, Lsn.parse("0x0000002A000001000002"), 3),
              new SplitPoint(
                  Lsn.parse("0x0000002A000001000003"), Lsn.parse("0x0000002A000001000004"), 2)),
          tiles);
    }
    List<ScriptedJdbc.Executed> split = db.executed("NTILE");
    assertEquals(1, split.size());
    assertEquals(
        "SELECT CONVERT(varchar(22), t.b, 1), CONVERT(varchar(22), sys.fn_cdc_increment_lsn(t.b),"
            + " 1), t.rows FROM (SELECT MAX(x.[__$start_lsn]) AS b, COUNT_BIG(*) AS rows, x.tile"
            + " FROM (SELECT c.[__$start_lsn], NTILE(4) OVER (ORDER BY c.[__$start_lsn]) AS tile"
            + " FROM cdc.[dbo_orders_CT] c WHERE c.[__$start_lsn] BETWEEN CONVERT(binary(10), ?, 1)"
            + " AND CONVERT(binary(10), ?, 1)) AS x GROUP BY x.tile) AS t ORDER BY t.b, t.tile",
        split.get(0).sql());
    assertEquals(
        List.of("0x00000000000000000001", "0x00000000000000000002"), split.get(0).parameters());
  }

  @Test
  void estimatesChangeRowsWithOneCountOverTheStartLsnRange() {
    ScriptedJdbc db =
        orders()
            .answer(
                "COUNT_BIG(*) FROM cdc.[dbo_orders_CT]",
                ScriptedJdbc.typed(List.of("bigint"), new Object[] {1234567L}));
    try (SqlCdcClient client = db.client(config(SourceTimeZone.utc()), sleeps)) {
      assertEquals(1234567L, client.estimatedChangeRows(CI, L1, L2));
      assertEquals(0L, client.estimatedChangeRows(CI, L2, L1), "from after to: no statement");
    }
    List<ScriptedJdbc.Executed> count = db.executed("COUNT_BIG(*) FROM cdc.[dbo_orders_CT]");
    assertEquals(1, count.size());
    assertEquals(
        "SELECT COUNT_BIG(*) FROM cdc.[dbo_orders_CT] c WHERE c.[__$start_lsn] BETWEEN"
            + " CONVERT(binary(10), ?, 1) AND CONVERT(binary(10), ?, 1)",
        count.get(0).sql());
    assertEquals(
        List.of("0x00000000000000000001", "0x00000000000000000002"), count.get(0).parameters());
    assertTrue(db.executed("NTILE").isEmpty());
  }

  @Test
  void findsTheNthCommitWithTopAndNormalisesIt() {
    ScriptedJdbc db =
        new ScriptedJdbc()
            .answer("TOP (5)", "0x2a000001000001")
            .answer(
                "FROM cdc.lsn_time_mapping m",
                "0x0000002a000001000001",
                LocalDateTime.parse("2026-09-28T16:50:00"));
    try (SqlCdcClient client = db.client(config(SourceTimeZone.utc()), sleeps)) {
      Optional<Commit> nth = client.nthCommitAfter(Lsn.ZERO, 5);
      assertEquals(Optional.of(new Commit(C1, Instant.parse("2026-09-28T16:50:00.000Z"))), nth);
    }
    assertEquals(
        "SELECT CONVERT(varchar(22), MAX(t.start_lsn), 1) FROM (SELECT TOP (5) start_lsn FROM"
            + " cdc.lsn_time_mapping WHERE start_lsn > CONVERT(binary(10), ?, 1) ORDER BY"
            + " start_lsn) AS t",
        db.executed("TOP (5)").get(0).sql());
    assertEquals(
        List.of("0x0000002A000001000001", "0x0000002A000001000001"),
        db.executed("FROM cdc.lsn_time_mapping m").get(0).parameters());
    assertThrows(IllegalArgumentException.class, () -> CdcStatements.nthCommitAfter(0));
  }

  @Test
  void returnsNoCommitForAnLsnWithoutMappingRow() {
    ScriptedJdbc db =
        new ScriptedJdbc()
            .answer(
                "FROM cdc.lsn_time_mapping m", ScriptedJdbc.typed(List.of("varchar", "datetime2")))
            .answer("MAX(start_lsn)", new Object[] {null});
    try (SqlCdcClient client = db.client(config(SourceTimeZone.utc()), sleeps)) {
      assertEquals(Optional.empty(), client.commit(C1));
      assertEquals(Optional.empty(), client.lastCommitAtOrBefore(C1));
    }
  }

  // ---- time_to_lsn: C240 ----------------------------------------------------------------------

  static final Instant C240_AT = Instant.parse("2026-09-28T16:50:00.999Z");

  @Test
  void c240MapsTheInstantOntoANamedZonesClockWithTheFallBackRule() {
    ScriptedJdbc db = new ScriptedJdbc().answer("fn_cdc_map_time_to_lsn", "0x2a000001000001");
    try (SqlCdcClient client = db.client(config(SourceTimeZone.named(ZONE)), sleeps)) {
      Optional<Lsn> at = client.lastCommitLsnAtOrBefore(C240_AT);
      assertEquals(Optional.of(C1), at);
      assertEquals("0x0000002A000001000001", at.orElseThrow().toString());
    }
    ScriptedJdbc.Executed map = db.executed("fn_cdc_map_time_to_lsn").get(0);
    assertEquals(
        "SELECT CONVERT(varchar(22), sys.fn_cdc_map_time_to_lsn('largest less than or equal',"
            + " MIN(x.t)), 1) FROM (VALUES (CONVERT(datetime2(0), (CONVERT(datetime2(0), ?, 126)"
            + " AT TIME ZONE 'UTC') AT TIME ZONE N'E. South America Standard Time')),"
            + " (DATEADD(hour, -1, CONVERT(datetime2(0), (DATEADD(hour, 1, CONVERT(datetime2(0),"
            + " ?, 126)) AT TIME ZONE 'UTC') AT TIME ZONE N'E. South America Standard Time'))))"
            + " AS x(t)",
        map.sql());
    assertTrue(
        map.sql()
            .contains(
                "(CONVERT(datetime2(0), ?, 126) AT TIME ZONE 'UTC') AT TIME ZONE N'E. South"
                    + " America Standard Time'"),
        map.sql());
    assertEquals(List.of("2026-09-28T16:50:00", "2026-09-28T16:50:00"), map.parameters());
    assertEquals(1, db.executed().size(), "a named zone is used without asking the server");
  }

  @Test
  void c240PassesTheInstantAsIsToAUtcServer() {
    ScriptedJdbc db = new ScriptedJdbc().answer("fn_cdc_map_time_to_lsn", "0x2a000001000001");
    try (SqlCdcClient client = db.client(config(SourceTimeZone.utc()), sleeps)) {
      assertEquals(Optional.of(C1), client.lastCommitLsnAtOrBefore(C240_AT));
    }
    ScriptedJdbc.Executed map = db.executed("fn_cdc_map_time_to_lsn").get(0);
    assertEquals(
        "SELECT CONVERT(varchar(22), sys.fn_cdc_map_time_to_lsn('largest less than or equal',"
            + " CONVERT(datetime2(0), ?, 126)), 1)",
        map.sql());
    assertTrue(
        map.sql().endsWith("'largest less than or equal', CONVERT(datetime2(0), ?, 126)), 1)"));
    assertEquals(List.of("2026-09-28T16:50:00"), map.parameters());
  }

  @Test
  void c240AddsTheFixedOffsetOfAPre2022Server() {
    ScriptedJdbc db =
        new ScriptedJdbc()
            .answer("ProductMajorVersion", 15, 3)
            .answer("SYSDATETIMEOFFSET", -180)
            .answer("fn_cdc_map_time_to_lsn", "0x2a000001000001");
    try (SqlCdcClient client = db.client(config(SourceTimeZone.auto()), sleeps)) {
      assertEquals(Optional.of(C1), client.lastCommitLsnAtOrBefore(C240_AT));
    }
    ScriptedJdbc.Executed map = db.executed("fn_cdc_map_time_to_lsn").get(0);
    assertEquals(
        "SELECT CONVERT(varchar(22), sys.fn_cdc_map_time_to_lsn('largest less than or equal',"
            + " DATEADD(minute, -180, CONVERT(datetime2(0), ?, 126))), 1)",
        map.sql());
    assertEquals(List.of("2026-09-28T16:50:00"), map.parameters());
  }

  @Test
  void c240UsesTheDetectedZoneOn2022() {
    ScriptedJdbc db =
        new ScriptedJdbc()
            .answer("ProductMajorVersion", 16, 3)
            .answer("CURRENT_TIMEZONE_ID", "Eastern Standard Time")
            .answer("fn_cdc_map_time_to_lsn", "0x2a000001000001");
    try (SqlCdcClient client = db.client(config(SourceTimeZone.auto()), sleeps)) {
      assertEquals(Optional.of(C1), client.lastCommitLsnAtOrBefore(C240_AT));
      assertEquals(Optional.of(C1), client.lastCommitLsnAtOrBefore(C240_AT));
    }
    assertEquals(1, db.executed("CURRENT_TIMEZONE_ID").size(), "the clock is resolved once");
    ScriptedJdbc.Executed map = db.executed("fn_cdc_map_time_to_lsn").get(1);
    assertTrue(
        map.sql()
            .contains(
                "(CONVERT(datetime2(0), ?, 126) AT TIME ZONE 'UTC') AT TIME ZONE N'Eastern"
                    + " Standard Time'"),
        map.sql());
    assertEquals(List.of("2026-09-28T16:50:00", "2026-09-28T16:50:00"), map.parameters());
  }

  @Test
  void c240AnswersNoneForANullOrZeroLsn() {
    ScriptedJdbc none = new ScriptedJdbc().answer("fn_cdc_map_time_to_lsn", new Object[] {null});
    try (SqlCdcClient client = none.client(config(SourceTimeZone.named(ZONE)), sleeps)) {
      assertEquals(Optional.empty(), client.lastCommitLsnAtOrBefore(C240_AT));
    }
    ScriptedJdbc zero =
        new ScriptedJdbc().answer("fn_cdc_map_time_to_lsn", "0x00000000000000000000");
    try (SqlCdcClient client = zero.client(config(SourceTimeZone.utc()), sleeps)) {
      assertEquals(Optional.empty(), client.lastCommitLsnAtOrBefore(C240_AT));
    }
  }

  @Test
  void c240RetriesATransientErrorAndRefusesAnInstantOutsideDatetime() {
    ScriptedJdbc db =
        new ScriptedJdbc()
            .fail(
                "fn_cdc_map_time_to_lsn",
                ScriptedJdbc.error("Communication link failure", "08S01", 0),
                1)
            .answer("fn_cdc_map_time_to_lsn", "0x2a000001000001");
    try (SqlCdcClient client = db.client(config(SourceTimeZone.utc()), sleeps)) {
      assertEquals(Optional.of(C1), client.lastCommitLsnAtOrBefore(C240_AT));
      assertThrows(
          IllegalArgumentException.class,
          () -> client.lastCommitLsnAtOrBefore(Instant.parse("1700-01-01T00:00:00Z")));
      assertThrows(NullPointerException.class, () -> client.lastCommitLsnAtOrBefore(null));
    }
    assertEquals(2, db.connections());
    assertEquals(1, sleeps.size());
    assertEquals(2, db.executed().size(), "the refused instants never reach the server");
  }

  // ---- the clock: C235 to C238 ----------------------------------------------------------------

  @Test
  void convertsANamedZonePerRowWithAtTimeZone() {
    ScriptedJdbc db =
        orders()
            .answer("DATEDIFF(day, MIN(tran_end_time)", new Object[] {null})
            .answer("FROM cdc.[dbo_orders_CT] c", changeRows(true));
    try (SqlCdcClient client = db.client(config(SourceTimeZone.named(ZONE)), sleeps);
        CloseableIterator<ChangeRow> rows =
            client.readChanges(new ChangeQuery(CI, L1, L2, List.of("order_id"), true))) {
      assertTrue(rows.hasNext());
    }
    ScriptedJdbc.Executed read = db.executed("FROM cdc.[dbo_orders_CT] c").get(0);
    assertTrue(
        read.sql().contains("AT TIME ZONE N'E. South America Standard Time') AT TIME ZONE 'UTC'"),
        read.sql());
    assertTrue(read.sql().startsWith("DECLARE @lo binary(10) = CONVERT(binary(10), ?, 1);"));
    assertTrue(read.sql().contains("JOIN ct m ON m.start_lsn = c.[__$start_lsn]"));
    assertTrue(read.sql().contains("LAG(tran_end_time) OVER (ORDER BY start_lsn)"));
    assertEquals(List.of("0x00000000000000000001", "0x00000000000000000002"), read.parameters());
    assertTrue(db.executed("CURRENT_TIMEZONE_ID").isEmpty());
  }

  @Test
  void convertsARangeUnderOneOffsetWithDateadd() {
    ScriptedJdbc db =
        orders()
            .answer("DATEDIFF(day, MIN(tran_end_time)", -180)
            .answer("FROM cdc.[dbo_orders_CT] c", changeRows(true));
    try (SqlCdcClient client = db.client(config(SourceTimeZone.named(ZONE)), sleeps);
        CloseableIterator<ChangeRow> rows =
            client.readChanges(new ChangeQuery(CI, L1, L2, List.of("order_id"), true))) {
      assertTrue(rows.hasNext());
    }
    ScriptedJdbc.Executed offset = db.executed("DATEDIFF(day").get(0);
    assertTrue(offset.sql().contains("DATEDIFF(day, MIN(tran_end_time), MAX(tran_end_time)) < 7"));
    assertEquals(List.of("0x00000000000000000001", "0x00000000000000000002"), offset.parameters());
    String read = db.executed("FROM cdc.[dbo_orders_CT] c").get(0).sql();
    assertTrue(
        read.contains("CAST(DATEADD(minute, 180, m.tran_end_time) AS datetime2(3)) AS _commit_ts"),
        read);
    assertFalse(read.contains("AT TIME ZONE"));
  }

  @Test
  void detectsTheZoneOncePerClientOn2022() {
    ScriptedJdbc db =
        orders()
            .answer("ProductMajorVersion", 16, 3)
            .answer("CURRENT_TIMEZONE_ID", ZONE)
            .answer("DATEDIFF(day, MIN(tran_end_time)", new Object[] {null})
            .answer(
                "SELECT CONVERT(varchar(22), ct.start_lsn, 1)",
                "0x0000002a000001000001",
                LocalDateTime.parse("2026-09-28T16:50:00.123"))
            .answer("FROM cdc.[dbo_orders_CT] c", changeRows(true));
    try (SqlCdcClient client = db.client(config(SourceTimeZone.auto()), sleeps)) {
      assertEquals(
          Optional.of(new Commit(C1, Instant.parse("2026-09-28T16:50:00.123Z"))),
          client.commit(C1));
      try (CloseableIterator<ChangeRow> rows =
          client.readChanges(new ChangeQuery(CI, L1, L2, List.of("order_id"), true))) {
        assertTrue(rows.hasNext());
      }
      assertEquals(ZONE, client.timeZone());
    }
    assertEquals(1, db.executed("CURRENT_TIMEZONE_ID").size());
    assertEquals(1, db.executed("ProductMajorVersion").size());
    assertTrue(
        db.executed("FROM cdc.[dbo_orders_CT] c")
            .get(0)
            .sql()
            .contains("AT TIME ZONE N'E. South America Standard Time'"));
  }

  @Test
  void fallsBackToTheCurrentOffsetBefore2022() {
    ScriptedJdbc db =
        orders()
            .answer("ProductMajorVersion", 15, 3)
            .answer("SYSDATETIMEOFFSET", -180)
            .answer("FROM cdc.[dbo_orders_CT] c", changeRows(true));
    try (SqlCdcClient client = db.client(config(SourceTimeZone.auto()), sleeps)) {
      assertEquals("UTC-03:00", client.timeZone());
      try (CloseableIterator<ChangeRow> rows =
          client.readChanges(new ChangeQuery(CI, L1, L2, List.of("order_id"), true))) {
        assertTrue(rows.hasNext());
      }
    }
    assertTrue(
        db.executed("FROM cdc.[dbo_orders_CT] c")
            .get(0)
            .sql()
            .contains("DATEADD(minute, 180, m.tran_end_time)"));
    assertEquals(1, db.executed("SYSDATETIMEOFFSET").size());
    assertEquals(1, db.executed("ProductMajorVersion").size());
    assertTrue(db.executed("CURRENT_TIMEZONE_ID").isEmpty(), "it would not compile there");
  }

  @Test
  void c228RefusesADetectedZoneNameThatCouldInject() {
    ScriptedJdbc db =
        new ScriptedJdbc()
            .answer("ProductMajorVersion", 16, 5)
            .answer("CURRENT_TIMEZONE_ID", "UTC'; DROP TABLE x --");
    try (SqlCdcClient client = db.client(config(SourceTimeZone.auto()), sleeps)) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class, client::timeZone);
      assertTrue(e.getMessage().startsWith("Invalid sourceTimeZone"));
    }
  }

  // ---- capture instances: C228, C270 ----------------------------------------------------------

  @Test
  void matchesCaptureInstancesIgnoringCaseExactFirst() {
    ScriptedJdbc db = new ScriptedJdbc();
    db.answer(
        "sp_cdc_help_change_data_capture",
        ScriptedJdbc.labelled(
            HELP_LABELS,
            List.of("sysname", "sysname", "sysname", "binary", "datetime", "nvarchar"),
            help("dbo_ORDER_ITEMS", "dbo", "ORDER_ITEMS", "2026-09-28T10:00:00", "[id], [li]]ne]"),
            help("dbo_Orders", "dbo", "Orders", "2026-09-28T10:00:00", "[order_id]"),
            help("dbo_orders", "dbo", "orders", "2026-09-28T11:00:00", "[order_id]")));
    try (SqlCdcClient client = db.client(config(SourceTimeZone.utc()), sleeps)) {
      List<CaptureInstance> items = client.captureInstances("dbo_order_items");
      assertEquals(1, items.size());
      assertEquals("ORDER_ITEMS", items.get(0).sourceTable());
      assertEquals(List.of("id", "li]ne"), items.get(0).keyColumns());
      assertEquals(Optional.of(C1), items.get(0).startLsn());
      assertEquals("orders", client.captureInstances("dbo_orders").get(0).sourceTable());
      CdcException e =
          assertThrows(CdcException.class, () -> client.captureInstances("DBO_ORDERS"));
      assertTrue(
          e.getMessage().contains("matches ['dbo_Orders', 'dbo_orders'] ignoring case"),
          e.getMessage());
      CaptureInstanceNotFoundError missing =
          assertThrows(
              CaptureInstanceNotFoundError.class, () -> client.captureInstances("dbo_nope"));
      assertEquals(List.of("dbo_ORDER_ITEMS", "dbo_Orders", "dbo_orders"), missing.existing());
      assertThrows(
          IllegalArgumentException.class, () -> client.captureInstances("dbo_x]; DROP TABLE y --"));
    }
  }

  @Test
  void bindsTheCaptureInstanceOfMinLsnAsAParameter() {
    ScriptedJdbc db = orders().answer("fn_cdc_get_min_lsn", "0x0000002A000001000001");
    try (SqlCdcClient client = db.client(config(SourceTimeZone.utc()), sleeps)) {
      assertEquals(C1, client.minLsn("DBO_ORDERS"));
    }
    ScriptedJdbc.Executed min = db.executed("fn_cdc_get_min_lsn").get(0);
    assertEquals("SELECT CONVERT(varchar(22), sys.fn_cdc_get_min_lsn(?), 1)", min.sql());
    assertEquals(List.of(CI), min.parameters());
  }

  @Test
  void reportsAnInstanceWithAZeroMinLsnAsNotFound() {
    ScriptedJdbc db = orders().answer("fn_cdc_get_min_lsn", "0x00000000000000000000");
    try (SqlCdcClient client = db.client(config(SourceTimeZone.utc()), sleeps)) {
      CaptureInstanceNotFoundError e =
          assertThrows(CaptureInstanceNotFoundError.class, () -> client.minLsn(CI));
      assertEquals(List.of(CI), e.existing());
    }
  }

  @Test
  void readsCapturedColumnsWithTypesAndComputedColumns() {
    try (SqlCdcClient client = orders().client(config(SourceTimeZone.utc()), sleeps)) {
      assertEquals(
          List.of(
              new CapturedColumn("order_id", 1, SqlServerType.of("int"), false),
              new CapturedColumn("status", 2, SqlServerType.parse("varchar(20)"), false),
              new CapturedColumn("amount", 3, SqlServerType.of("decimal", 18, 2), false),
              new CapturedColumn("total", 4, SqlServerType.of("int"), true)),
          client.capturedColumns(CI));
    }
  }

  @Test
  void mapsCapturedColumnTypes() {
    assertEquals(
        "nvarchar(max)",
        CaptureInstanceQueries.capturedType("nvarchar", -1, null, null, null).toString());
    assertEquals(
        "datetime2(7)",
        CaptureInstanceQueries.capturedType("datetime2", null, null, null, 7).toString());
    assertEquals(
        "time(3)", CaptureInstanceQueries.capturedType("time", null, null, null, 3).toString());
    assertEquals(
        "numeric(10,4)",
        CaptureInstanceQueries.capturedType("NUMERIC", null, 10, 4, null).toString());
    assertEquals(
        "float", CaptureInstanceQueries.capturedType("float", null, 53, null, null).toString());
    assertEquals(
        "binary(16)",
        CaptureInstanceQueries.capturedType("binary", 16, null, null, null).toString());
  }

  @Test
  void keepsOnlyDdlInsideTheRangeWithItsCommitTime() {
    ScriptedJdbc db = orders();
    db.answer(
        "sp_cdc_get_ddl_history",
        ScriptedJdbc.labelled(
            List.of("ddl_command", "ddl_lsn"),
            List.of("nvarchar", "binary"),
            new Object[] {
              "ALTER TABLE dbo.orders ADD note varchar(20)",
              HexFormat.of().parseHex("0000002A000001000021")
            },
            new Object[] {
              "ALTER TABLE dbo.orders DROP COLUMN note",
              HexFormat.of().parseHex("0000002A000001000041")
            }));
    db.answer("MAX(start_lsn)", "0x0000002A000001000011");
    db.answer(
        "FROM cdc.lsn_time_mapping m",
        "0x0000002A000001000011",
        LocalDateTime.parse("2026-09-28T13:51:00"));
    try (SqlCdcClient client = db.client(config(SourceTimeZone.utc()), sleeps)) {
      List<DdlChange> ddl =
          client.ddlHistory(
              CI, Lsn.parse("0x0000002A000001000011"), Lsn.parse("0x0000002A000001000031"));
      assertEquals(
          List.of(
              new DdlChange(
                  CI,
                  Lsn.parse("0x0000002A000001000021"),
                  Optional.of(Instant.parse("2026-09-28T13:51:00Z")),
                  "ALTER TABLE dbo.orders ADD note varchar(20)")),
          ddl);
    }
    assertEquals(List.of(CI), db.executed("sp_cdc_get_ddl_history").get(0).parameters());
  }

  // ---- C229: permissions ----------------------------------------------------------------------

  static final String DENIED =
      "The SELECT permission was denied on the object 'dbo_orders_CT', database 'sales', schema"
          + " 'cdc'.";

  @Test
  void c229NamesTheGrantWhenTheChangeTableIsDenied() {
    ScriptedJdbc db =
        orders()
            .fail("FROM cdc.[dbo_orders_CT] c", ScriptedJdbc.error(DENIED, "S0005", 229), -1)
            .answer("HAS_PERMS_BY_NAME", 0, "lakecdc_reader");
    try (SqlCdcClient client = db.client(config(SourceTimeZone.utc()), sleeps)) {
      ChangeTablePermissionError e =
          assertThrows(
              ChangeTablePermissionError.class,
              () -> client.readChanges(new ChangeQuery(CI, L1, L2, List.of("order_id"), true)));
      assertTrue(
          e.getMessage().contains("GRANT SELECT ON cdc.[dbo_orders_CT] TO [lakecdc_reader]"),
          e.getMessage());
      assertTrue(e.getMessage().contains("own grant"));
      assertEquals("GRANT SELECT ON cdc.[dbo_orders_CT] TO [lakecdc_reader]", e.grant());
      ChangeTablePermissionError split =
          assertThrows(ChangeTablePermissionError.class, () -> client.splitPoints(CI, L1, L2, 2));
      assertTrue(split.getMessage().contains("GRANT SELECT ON cdc.[dbo_orders_CT]"));
    }
    assertEquals(
        List.of("cdc.[dbo_orders_CT]"), db.executed("HAS_PERMS_BY_NAME").get(0).parameters());
    assertTrue(sleeps.isEmpty(), "a permission error is never retried");
  }

  @Test
  void c230RecognisesALocalisedDenialByTheChangeTableName() {
    ScriptedJdbc db =
        orders()
            .fail(
                "FROM cdc.[dbo_orders_CT] c",
                ScriptedJdbc.error(
                    "A permissão SELECT foi negada no objeto 'dbo_orders_CT', esquema 'cdc'.",
                    "S0005",
                    0),
                -1)
            .answer("HAS_PERMS_BY_NAME", 0, "leitor");
    try (SqlCdcClient client = db.client(config(SourceTimeZone.utc()), sleeps)) {
      ChangeTablePermissionError e =
          assertThrows(
              ChangeTablePermissionError.class,
              () -> client.readChanges(new ChangeQuery(CI, L1, L2, List.of("order_id"), true)));
      assertTrue(e.getMessage().contains("GRANT SELECT ON cdc.[dbo_orders_CT] TO [leitor]"));
      assertTrue(e.getCause().getMessage().contains("negada"));
    }
  }

  @Test
  void c229LeavesOtherErrorsAsTheyAre() {
    ScriptedJdbc missing =
        orders()
            .fail(
                "FROM cdc.[dbo_orders_CT] c",
                ScriptedJdbc.error("Invalid object name 'cdc.dbo_orders_CT'.", "S0002", 208),
                -1)
            .answer("HAS_PERMS_BY_NAME", null, "reader");
    try (SqlCdcClient client = missing.client(config(SourceTimeZone.utc()), sleeps)) {
      CdcException e =
          assertThrows(
              CdcException.class,
              () -> client.readChanges(new ChangeQuery(CI, L1, L2, List.of("order_id"), true)));
      assertFalse(e instanceof ChangeTablePermissionError);
      assertTrue(e.getMessage().contains("Invalid object name"));
    }

    ScriptedJdbc checkFails =
        orders()
            .fail("FROM cdc.[dbo_orders_CT] c", ScriptedJdbc.error(DENIED, "S0005", 229), -1)
            .fail("HAS_PERMS_BY_NAME", ScriptedJdbc.error("boom", "S0001", 50000), -1);
    try (SqlCdcClient client = checkFails.client(config(SourceTimeZone.utc()), sleeps)) {
      CdcException e = assertThrows(CdcException.class, () -> client.splitPoints(CI, L1, L2, 2));
      assertFalse(e instanceof ChangeTablePermissionError);
      assertTrue(e.getMessage().contains("SELECT permission was denied"));
    }
  }

  @Test
  void doesNotAskForPermissionsAfterAConnectionFailure() {
    ScriptedJdbc db =
        orders()
            .fail(
                "FROM cdc.[dbo_orders_CT] c",
                ScriptedJdbc.error("Communication link failure dbo_orders_CT", "08S01", 0),
                -1);
    try (SqlCdcClient client = db.client(config(SourceTimeZone.utc()), sleeps)) {
      assertThrows(
          CdcException.class,
          () -> client.readChanges(new ChangeQuery(CI, L1, L2, List.of("order_id"), true)));
    }
    assertTrue(db.executed("HAS_PERMS_BY_NAME").isEmpty());
  }

  // ---- retries --------------------------------------------------------------------------------

  @Test
  void c027RetriesATransientErrorOnANewConnection() {
    ScriptedJdbc db =
        new ScriptedJdbc()
            .fail(
                "fn_cdc_get_max_lsn",
                ScriptedJdbc.error("Communication link failure: TCP reset", "08S01", 0),
                1)
            .answer("fn_cdc_get_max_lsn", "0x0000002A000001000001");
    try (SqlCdcClient client = db.client(config(SourceTimeZone.utc()), sleeps)) {
      assertEquals(Optional.of(C1), client.maxLsn());
      assertEquals(2, db.connections());
      assertEquals(1, db.closedConnections(), "the broken connection is closed");
    }
    assertEquals(1, sleeps.size());
    assertTrue(sleeps.get(0) >= 750 && sleeps.get(0) <= 2250, "slept " + sleeps);
  }

  @Test
  void c027RetriesADeadlockVictim() {
    ScriptedJdbc db =
        new ScriptedJdbc()
            .fail(
                "fn_cdc_get_max_lsn",
                ScriptedJdbc.error("Transaction was deadlocked", "40001", 1205),
                2)
            .answer("fn_cdc_get_max_lsn", "0x0000002A000001000001");
    try (SqlCdcClient client = db.client(config(SourceTimeZone.utc()), sleeps)) {
      assertEquals(Optional.of(C1), client.maxLsn());
    }
    assertEquals(3, db.connections());
    assertEquals(2, sleeps.size());
  }

  @Test
  void c028GivesUpAfterThreeRetries() {
    SQLException reset = ScriptedJdbc.error("TCP reset", "08S01", 10054);
    ScriptedJdbc db = new ScriptedJdbc().fail("fn_cdc_get_max_lsn", reset, -1);
    try (SqlCdcClient client = db.client(config(SourceTimeZone.utc()), sleeps)) {
      CdcException e = assertThrows(CdcException.class, client::maxLsn);
      assertSame(reset, e.getCause());
      assertTrue(e.getMessage().contains("SQL Server error 10054, SQLSTATE 08S01"));
    }
    assertEquals(4, db.connections(), "the first connection and three retries");
    assertEquals(3, sleeps.size());
    assertTrue(sleeps.get(0) >= 750 && sleeps.get(0) <= 2250, "slept " + sleeps);
    assertTrue(sleeps.get(1) >= 1500 && sleeps.get(1) <= 4500, "slept " + sleeps);
    assertTrue(sleeps.get(2) >= 3000 && sleeps.get(2) <= 9000, "slept " + sleeps);
  }

  @Test
  void doesNotRetryAPermanentError() {
    ScriptedJdbc db =
        new ScriptedJdbc()
            .fail(
                "fn_cdc_get_max_lsn",
                ScriptedJdbc.error("Lock request time out period exceeded.", "S0001", 1222),
                -1);
    try (SqlCdcClient client = db.client(config(SourceTimeZone.utc()), sleeps)) {
      assertThrows(CdcException.class, client::maxLsn);
    }
    assertEquals(1, db.connections());
    assertTrue(sleeps.isEmpty());
  }

  @Test
  void doesNotRetryAMissingPassword() {
    SqlCdcClientFactory config =
        SqlCdcClientFactory.of(
            SqlCdcClientFactory.dataSourceConfiguration(
                "jdbc:sqlserver://db:1433",
                "reader",
                PasswordSource.environmentVariable("UNSET_X9"),
                Duration.ofSeconds(30)));
    try (CdcClient client = config.open()) {
      CdcException e = assertThrows(CdcException.class, client::maxLsn);
      assertEquals("The password's environment variable UNSET_X9 is not set", e.getMessage());
    }
  }

  // ---- LSN helpers ----------------------------------------------------------------------------

  @Test
  void incrementsAndDecrementsOnTheServer() {
    ScriptedJdbc db =
        new ScriptedJdbc()
            .answer("fn_cdc_increment_lsn", "0x0000002A000001000002")
            .answer("fn_cdc_decrement_lsn", "0x0000002A000001000000");
    try (SqlCdcClient client = db.client(config(SourceTimeZone.utc()), sleeps)) {
      assertEquals(Lsn.parse("0x0000002A000001000002"), client.incrementLsn(C1));
      assertEquals(Lsn.parse("0x0000002A000001000000"), client.decrementLsn(C1));
      assertEquals(Lsn.ZERO, client.decrementLsn(Lsn.ZERO));
    }
    assertEquals(List.of(C1.toString()), db.executed("fn_cdc_increment_lsn").get(0).parameters());
    assertEquals(2, db.executed().size(), "ZERO is answered without a query");
  }

  @Test
  void refusesCallsAfterClose() {
    SqlCdcClient client = new ScriptedJdbc().client(config(SourceTimeZone.utc()), sleeps);
    client.close();
    client.close();
    assertThrows(IllegalStateException.class, client::maxLsn);
  }

  // ---- source tables --------------------------------------------------------------------------

  @Test
  void readsAKeyRangeUnderTheLockTimeoutAndIsolation() {
    ScriptedJdbc db =
        orders()
            .answer(
                "FROM [dbo].[orders]",
                ScriptedJdbc.typed(
                    List.of("int", "decimal", "int"),
                    new Object[] {5, new BigDecimal("5.00"), 5},
                    new Object[] {6, null, 6}));
    SqlCdcClientFactory config = config(SourceTimeZone.utc()).withLockTimeoutMs(5000);
    List<List<Object>> rows = new ArrayList<>();
    try (SqlCdcClient client = db.client(config, sleeps);
        CloseableIterator<List<Object>> it =
            client.readTable(
                new TableQuery(
                    "dbo",
                    "orders",
                    List.of("ORDER_ID", "amount", "total", "gone"),
                    List.of("order_id"),
                    Optional.of(List.<Object>of(5)),
                    Optional.of(List.<Object>of(8)),
                    IsolationLevel.SNAPSHOT))) {
      it.forEachRemaining(rows::add);
    }
    assertEquals(
        List.of(
            java.util.Arrays.asList(5, new BigDecimal("5.00"), null, null),
            java.util.Arrays.asList(6, null, null, null)),
        rows);
    ScriptedJdbc.Executed read = db.executed("FROM [dbo].[orders]").get(0);
    assertEquals(
        "SET LOCK_TIMEOUT 5000; SET TRANSACTION ISOLATION LEVEL SNAPSHOT; SELECT r.[c0], r.[c1]"
            + " FROM (SELECT [order_id] AS [c0], [amount] AS [c1], [order_id] AS [k0] FROM"
            + " [dbo].[orders] WHERE [order_id] >= CAST(? AS int) AND ([order_id] < CAST(? AS int)"
            + " OR [order_id] IS NULL)) AS r ORDER BY r.[k0]",
        read.sql());
    assertEquals(List.of("5", "8"), read.parameters());
    assertEquals(List.of("[dbo].[orders]"), db.executed("FROM sys.columns").get(0).parameters());
  }

  @Test
  void readsNothingForAnEmptyRangeAndRefusesUnknownTables() {
    ScriptedJdbc db = orders();
    try (SqlCdcClient client = db.client(config(SourceTimeZone.utc()), sleeps);
        CloseableIterator<List<Object>> it =
            client.readTable(
                new TableQuery(
                    "dbo",
                    "orders",
                    List.of("order_id"),
                    List.of("order_id"),
                    Optional.of(List.<Object>of(5)),
                    Optional.of(List.<Object>of(5)),
                    IsolationLevel.READ_COMMITTED))) {
      assertFalse(it.hasNext());
    }
    assertTrue(db.executed("FROM [dbo].[orders]").isEmpty());
    ScriptedJdbc none =
        new ScriptedJdbc().answer("FROM sys.columns", ScriptedJdbc.typed(List.of("int")));
    try (SqlCdcClient client = none.client(config(SourceTimeZone.utc()), sleeps)) {
      CdcException e =
          assertThrows(
              CdcException.class,
              () ->
                  client.keyTiles("dbo", "nope", List.of("id"), 3, IsolationLevel.READ_COMMITTED));
      assertTrue(e.getMessage().contains("Invalid object name 'dbo.nope'"), e.getMessage());
    }
  }

  @Test
  void tilesKeysInOneStatementWithoutParameters() {
    ScriptedJdbc db =
        orders()
            .answer(
                "NTILE(3) OVER (ORDER BY [order_id])",
                ScriptedJdbc.typed(List.of("int"), new Object[] {5}, new Object[] {8}));
    try (SqlCdcClient client = db.client(config(SourceTimeZone.utc()), sleeps)) {
      assertEquals(
          List.of(List.of(5), List.of(8)),
          client.keyTiles("dbo", "orders", List.of("order_id"), 3, IsolationLevel.READ_COMMITTED));
    }
    ScriptedJdbc.Executed tiles = db.executed("NTILE(3)").get(0);
    assertEquals(
        "SET TRANSACTION ISOLATION LEVEL READ COMMITTED; SELECT y.[k0] FROM (SELECT x.[k0],"
            + " x.tile, ROW_NUMBER() OVER (PARTITION BY x.tile ORDER BY x.[k0]) AS rn FROM (SELECT"
            + " [order_id] AS [k0], NTILE(3) OVER (ORDER BY [order_id]) AS tile FROM"
            + " [dbo].[orders]) AS x) AS y WHERE y.rn = 1 AND y.tile > 1 ORDER BY y.tile",
        tiles.sql());
    assertTrue(tiles.parameters().isEmpty());
  }
}
