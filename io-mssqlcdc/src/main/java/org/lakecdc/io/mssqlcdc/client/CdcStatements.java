package org.lakecdc.io.mssqlcdc.client;

import java.util.ArrayList;
import java.util.List;
import java.util.StringJoiner;

/**
 * Every T-SQL statement of the project, each a named, commented constant or one small builder. Only
 * {@link SqlCdcClient} runs them.
 *
 * <p>Rules every statement follows:
 *
 * <ul>
 *   <li>LSNs cross as text: bound as {@code CONVERT(binary(10), ?, 1)}, returned as {@code
 *       CONVERT(varchar(22), x, 1)}; the only binary LSNs read are the {@code start_lsn} and {@code
 *       ddl_lsn} columns of the documented CDC procedures, which cannot convert them.
 *   <li>Everything inlined (capture instances, schema, table and column names, zone names, SQL
 *       types, collations) passed {@link SqlIdentifiers} and is bracket-quoted or a checked
 *       literal; integers are Java {@code int}s. Everything else is a parameter bound as text.
 *   <li>Metadata comes only from documented objects: {@code sys.sp_cdc_help_change_data_capture},
 *       {@code sys.sp_cdc_get_captured_columns}, {@code sys.sp_cdc_get_ddl_history}, the {@code
 *       sys.fn_cdc_*} functions, {@code cdc.lsn_time_mapping}, and {@code sys.columns} of the
 *       source table. Nothing writes.
 *   <li>Source tables are never read with {@code NOLOCK}: {@code READ COMMITTED} or {@code
 *       SNAPSHOT} (docs/options.md), set in the read's own batch, which mssql-jdbc sends through
 *       {@code sp_executesql}, so the {@code SET} ends with it (Microsoft docs "SET Statements": a
 *       SET in dynamic SQL is restored when the batch returns).
 * </ul>
 */
final class CdcStatements {
  private CdcStatements() {}

  // ---- LSNs -------------------------------------------------------------------------------------

  /**
   * {@code sys.fn_cdc_get_max_lsn()}: the last {@code cdc.lsn_time_mapping} entry; NULL or zeros
   * when capture has never written one.
   */
  static final String MAX_LSN = "SELECT CONVERT(varchar(22), sys.fn_cdc_get_max_lsn(), 1)";

  /**
   * {@code sys.fn_cdc_get_min_lsn(@ci)}: the instance's low watermark; zeros for an unknown
   * instance, one the login may not read, or one capture has not processed yet. Parameter: the
   * capture instance name (bound, never inlined).
   */
  static final String MIN_LSN = "SELECT CONVERT(varchar(22), sys.fn_cdc_get_min_lsn(?), 1)";

  /** {@code sys.fn_cdc_increment_lsn}: the next LSN. Parameter: the LSN as text. */
  static final String INCREMENT_LSN =
      "SELECT CONVERT(varchar(22), sys.fn_cdc_increment_lsn(CONVERT(binary(10), ?, 1)), 1)";

  /** {@code sys.fn_cdc_decrement_lsn}: the previous LSN. Parameter: the LSN as text. */
  static final String DECREMENT_LSN =
      "SELECT CONVERT(varchar(22), sys.fn_cdc_decrement_lsn(CONVERT(binary(10), ?, 1)), 1)";

  /**
   * The last {@code cdc.lsn_time_mapping} entry at or before an LSN (the commit time of a DDL LSN,
   * which has no entry of its own). Parameter: the LSN. NULL when none.
   */
  static final String LAST_COMMIT_AT_OR_BEFORE =
      "SELECT CONVERT(varchar(22), MAX(start_lsn), 1) FROM cdc.lsn_time_mapping"
          + " WHERE start_lsn <= CONVERT(binary(10), ?, 1)";

  /**
   * The n-th {@code cdc.lsn_time_mapping} entry after an LSN ({@code MAX} of the first n; idle
   * entries and other tables' commits count): the end of a batch of at most n commits
   * (docs/architecture.md "Data flow"). Parameter: the LSN. NULL when no entry follows.
   *
   * @param n the number of commits, at least 1, inlined as {@code TOP (n)}
   * @return the statement
   */
  static String nthCommitAfter(int n) {
    if (n < 1) {
      throw new IllegalArgumentException("n must be at least 1, got " + n);
    }
    return "SELECT CONVERT(varchar(22), MAX(t.start_lsn), 1) FROM (SELECT TOP ("
        + n
        + ") start_lsn FROM cdc.lsn_time_mapping WHERE start_lsn > CONVERT(binary(10), ?, 1)"
        + " ORDER BY start_lsn) AS t";
  }

  /**
   * The number of {@code cdc.lsn_time_mapping} rows in {@code (?, ?]} (parameters: the LSN after
   * which and the LSN up to which to count, as canonical text); a range seek on its clustered
   * index.
   */
  static final String COMMIT_COUNT =
      "SELECT COUNT_BIG(*) FROM cdc.lsn_time_mapping WHERE start_lsn > CONVERT(binary(10), ?, 1)"
          + " AND start_lsn <= CONVERT(binary(10), ?, 1)";

  // ---- the server clock (docs/sql-server.md "Connection settings")
  // ---------------------------------------------

  /**
   * The server's major version and engine edition: {@code sourceTimeZone=auto} uses the zone name
   * on SQL Server 2022 and later (major version 16+) and on Azure SQL Database (edition 5) and
   * Managed Instance (edition 8), where {@code CURRENT_TIMEZONE_ID()} exists (Microsoft docs
   * "SERVERPROPERTY (Transact-SQL)").
   */
  static final String SERVER_VERSION =
      "SELECT CONVERT(int, SERVERPROPERTY('ProductMajorVersion')),"
          + " CONVERT(int, SERVERPROPERTY('EngineEdition'))";

  /** {@code CURRENT_TIMEZONE_ID()}: the server's Windows zone name (2022+, Azure SQL). */
  static final String CURRENT_TIMEZONE = "SELECT CURRENT_TIMEZONE_ID()";

  /**
   * The server's current UTC offset in minutes: the fixed-offset fallback before SQL Server 2022,
   * exact only where the zone has no daylight saving.
   */
  static final String SERVER_OFFSET = "SELECT DATEPART(TZOFFSET, SYSDATETIMEOFFSET())";

  /**
   * The one UTC offset (minutes) that holds for every commit of an LSN range in a named zone, or
   * NULL when none does (docs/sql-server.md "Connection settings"): the range spans under 7 days
   * and the zone's offset 3 hours before its first commit equals the offset 3 hours after its last,
   * so no daylight-saving change is near and one {@code DATEADD} converts the range (about 2.7
   * times cheaper than {@code AT TIME ZONE} per row). Parameters: the range's first and last LSN.
   *
   * @param zone the checked Windows zone name
   * @return the statement
   */
  static String rangeOffset(String zone) {
    String z = SqlIdentifiers.timeZoneLiteral(zone);
    return "SELECT CASE WHEN DATEDIFF(day, MIN(tran_end_time), MAX(tran_end_time)) < 7"
        + " AND DATEPART(TZOFFSET, DATEADD(hour, -3, MIN(tran_end_time)) AT TIME ZONE "
        + z
        + ") = DATEPART(TZOFFSET, DATEADD(hour, 3, MAX(tran_end_time)) AT TIME ZONE "
        + z
        + ") THEN DATEPART(TZOFFSET, MIN(tran_end_time) AT TIME ZONE "
        + z
        + ") END FROM cdc.lsn_time_mapping"
        + " WHERE start_lsn BETWEEN CONVERT(binary(10), ?, 1) AND CONVERT(binary(10), ?, 1)";
  }

  /**
   * The UTC commit time of a mapping row {@code m} as {@code datetime2(3)}, for a clock with one
   * offset: the value itself for UTC, {@code DATEADD(minute, -offset, t)} otherwise.
   *
   * @param offsetMinutes minutes east of UTC (0 for UTC)
   * @return the expression over {@code m.tran_end_time}
   */
  static String commitTimeWithOffset(int offsetMinutes) {
    if (offsetMinutes == 0) {
      return "CAST(m.tran_end_time AS datetime2(3))";
    }
    return "CAST(DATEADD(minute, " + (-offsetMinutes) + ", m.tran_end_time) AS datetime2(3))";
  }

  /**
   * The per-commit conversion in a named zone with the fall-back repeated-hour rule
   * (docs/sql-server.md "Connection settings"): declares {@code @lo}, {@code @hi} (the two
   * parameters, the range's first and last LSN) and a common table expression {@code ct(start_lsn,
   * commit_ts)} holding every {@code cdc.lsn_time_mapping} row of {@code [@lo, @hi]}.
   *
   * <p>{@code w} takes the mapping from the first entry whose local time is less than 3 hours
   * before the range's earliest, with each entry's predecessor ({@code LAG} in LSN order). A
   * <em>drop</em> is an entry more than one minute earlier than its predecessor at a repeated local
   * time (the zone's offset 3 hours later is smaller than at t, and t moved forward by the
   * difference has the later offset). An entry with a drop at or before it in LSN order less than 3
   * hours earlier reads the repeated hour's second pass: the offset in force 3 hours later. Every
   * other entry is {@code (t AT TIME ZONE zone) AT TIME ZONE 'UTC'}, which reads a repeated time as
   * its first pass (Microsoft docs "AT TIME ZONE (Transact-SQL)").
   *
   * @param zone the checked Windows zone name
   * @return the {@code DECLARE} and {@code WITH ... ct AS (...)} prefix; a {@code SELECT} follows
   */
  static String namedCommitTimes(String zone) {
    String z = SqlIdentifiers.timeZoneLiteral(zone);
    return "DECLARE @lo binary(10) = CONVERT(binary(10), ?, 1);"
        + " DECLARE @hi binary(10) = CONVERT(binary(10), ?, 1);"
        + " DECLARE @first datetime = (SELECT MIN(tran_end_time) FROM cdc.lsn_time_mapping"
        + " WHERE start_lsn BETWEEN @lo AND @hi);"
        + " WITH w AS (SELECT start_lsn, tran_end_time AS t,"
        + " LAG(tran_end_time) OVER (ORDER BY start_lsn) AS prev_t"
        + " FROM cdc.lsn_time_mapping WHERE start_lsn <= @hi AND start_lsn >= (SELECT"
        + " MIN(start_lsn) FROM cdc.lsn_time_mapping WHERE start_lsn <= @hi"
        + " AND tran_end_time > DATEADD(hour, -3, @first))),"
        + " o AS (SELECT start_lsn, t, prev_t, DATEPART(TZOFFSET, t AT TIME ZONE "
        + z
        + ") AS off_at, DATEPART(TZOFFSET, DATEADD(hour, 3, t) AT TIME ZONE "
        + z
        + ") AS off_later FROM w),"
        + " d AS (SELECT start_lsn, t FROM o WHERE prev_t IS NOT NULL"
        + " AND t < DATEADD(minute, -1, prev_t) AND off_later < off_at"
        + " AND DATEPART(TZOFFSET, DATEADD(minute, off_at - off_later, t) AT TIME ZONE "
        + z
        + ") = off_later),"
        + " ct AS (SELECT o.start_lsn, CASE WHEN EXISTS (SELECT 1 FROM d"
        + " WHERE d.start_lsn <= o.start_lsn AND d.t > DATEADD(hour, -3, o.t))"
        + " THEN CAST(DATEADD(minute, -o.off_later, o.t) AS datetime2(3))"
        + " ELSE CAST((o.t AT TIME ZONE "
        + z
        + ") AT TIME ZONE 'UTC' AS datetime2(3)) END AS commit_ts"
        + " FROM o WHERE o.start_lsn BETWEEN @lo AND @hi)";
  }

  /**
   * The {@code cdc.lsn_time_mapping} rows of an LSN range with their UTC commit times, for a clock
   * with one offset. Parameters: first and last LSN. Columns: LSN text, {@code datetime2(3)}.
   *
   * @param offsetMinutes minutes east of UTC (0 for UTC)
   * @return the statement
   */
  static String commitTimes(int offsetMinutes) {
    return "SELECT CONVERT(varchar(22), m.start_lsn, 1), "
        + commitTimeWithOffset(offsetMinutes)
        + " FROM cdc.lsn_time_mapping m"
        + " WHERE m.start_lsn BETWEEN CONVERT(binary(10), ?, 1) AND CONVERT(binary(10), ?, 1)"
        + " ORDER BY m.start_lsn";
  }

  /**
   * The {@code cdc.lsn_time_mapping} rows of an LSN range with their UTC commit times in a named
   * zone, per row ({@link #namedCommitTimes}). Parameters: first and last LSN.
   *
   * @param zone the checked Windows zone name
   * @return the statement
   */
  static String commitTimesNamed(String zone) {
    return namedCommitTimes(zone)
        + " SELECT CONVERT(varchar(22), ct.start_lsn, 1), ct.commit_ts FROM ct"
        + " ORDER BY ct.start_lsn";
  }

  /**
   * The LSN of the last commit at or before a UTC instant (docs/options.md "Seeding from a copy",
   * docs/scenarios.md C240): {@code sys.fn_cdc_map_time_to_lsn('largest less than or equal', t)}
   * with t the server clock's reading of the instant ({@link #serverTimeAtOrBefore(ServerClock)}),
   * as LSN text; NULL or zeros when no commit is at or before it (Microsoft docs
   * "sys.fn_cdc_map_time_to_lsn"). Parameters: the instant in UTC as {@code yyyy-MM-ddTHH:mm:ss}
   * text, once for UTC and a fixed offset, twice for a named zone.
   *
   * @param clock the server clock (its zone name is checked again before it is inlined)
   * @return the statement
   */
  static String lastCommitLsnAtOrBefore(ServerClock clock) {
    ServerTimeSql t = serverTimeSql(clock);
    return "SELECT CONVERT(varchar(22), sys.fn_cdc_map_time_to_lsn('largest less than or equal', "
        + t.expression()
        + "), 1)"
        + t.from();
  }

  /**
   * The server clock's reading of a UTC instant for a look-up of the commits at or before it, as a
   * {@code datetime2(0)} column: the value {@link #lastCommitLsnAtOrBefore(ServerClock)} passes to
   * {@code sys.fn_cdc_map_time_to_lsn}, selected on its own so a test can ask SQL Server what it
   * evaluates to (docs/scenarios.md C245). Same parameters.
   *
   * @param clock the server clock
   * @return the statement
   */
  static String serverTimeAtOrBefore(ServerClock clock) {
    ServerTimeSql t = serverTimeSql(clock);
    return "SELECT " + t.expression() + t.from();
  }

  /**
   * A UTC instant on the server clock: an expression and the {@code FROM} clause it needs (empty,
   * or starting with a space).
   */
  private record ServerTimeSql(String expression, String from) {}

  /** The UTC instant parameter, seconds only (style 126 is ISO 8601). */
  private static final String UTC_PARAMETER = "CONVERT(datetime2(0), ?, 126)";

  /**
   * The server clock's reading of the UTC instant parameter, never later than the reading of a
   * commit made after the instant (the rule of {@code CommitTimeConverter.serverTimeAtOrBefore}):
   * UTC as is; a fixed offset with {@code DATEADD}; a named zone as the {@code MIN} of the zone's
   * wall time at t and at t + 1 hour, minus 1 hour, the second being the smaller only in the hour
   * before a fall-back. The zone's wall time is {@code (t AT TIME ZONE 'UTC') AT TIME ZONE zone}, a
   * {@code datetimeoffset}, converted to {@code datetime2(0)} (which keeps the wall time and drops
   * the offset) before the hour is taken away and the two are compared: {@code datetimeoffset}
   * values compare as instants, and the two readings are the same instant.
   */
  private static ServerTimeSql serverTimeSql(ServerClock clock) {
    if (clock.zone() == null) {
      if (clock.offsetMinutes() == 0) {
        return new ServerTimeSql(UTC_PARAMETER, "");
      }
      return new ServerTimeSql(
          "DATEADD(minute, " + clock.offsetMinutes() + ", " + UTC_PARAMETER + ")", "");
    }
    String z = SqlIdentifiers.timeZoneLiteral(clock.zone());
    String now =
        "CONVERT(datetime2(0), (" + UTC_PARAMETER + " AT TIME ZONE 'UTC') AT TIME ZONE " + z + ")";
    String hourLater =
        "DATEADD(hour, -1, CONVERT(datetime2(0), (DATEADD(hour, 1, "
            + UTC_PARAMETER
            + ") AT TIME ZONE 'UTC') AT TIME ZONE "
            + z
            + "))";
    return new ServerTimeSql(
        "MIN(x.t)", " FROM (VALUES (" + now + "), (" + hourLater + ")) AS x(t)");
  }

  // ---- capture instances -----------------------------------------------------------------------

  /**
   * {@code sys.sp_cdc_help_change_data_capture}: every capture instance whose captured columns the
   * login may SELECT (Microsoft docs "sys.sp_cdc_help_change_data_capture"). Columns used: {@code
   * source_schema}, {@code source_table}, {@code capture_instance}, {@code start_lsn} (binary),
   * {@code create_date}, {@code index_column_list} ({@code [a], [b]}).
   */
  static final String HELP_CHANGE_DATA_CAPTURE = "EXEC sys.sp_cdc_help_change_data_capture";

  /**
   * {@code sys.sp_cdc_get_captured_columns}: the instance's captured columns (Microsoft docs
   * "sys.sp_cdc_get_captured_columns"). Parameter: the capture instance name. Columns used: {@code
   * column_name}, {@code column_id}, {@code column_ordinal}, {@code data_type}, {@code
   * character_maximum_length}, {@code numeric_precision}, {@code numeric_scale}, {@code
   * datetime_precision}.
   */
  static final String CAPTURED_COLUMNS =
      "EXEC sys.sp_cdc_get_captured_columns @capture_instance = ?";

  /**
   * {@code sys.sp_cdc_get_ddl_history}: DDL on the instance's source table since it was enabled
   * (Microsoft docs "sys.sp_cdc_get_ddl_history"). Parameter: the capture instance name. Columns
   * used: {@code ddl_command}, {@code ddl_lsn} (binary).
   */
  static final String DDL_HISTORY = "EXEC sys.sp_cdc_get_ddl_history @capture_instance = ?";

  /**
   * The columns of a source table from {@code sys.columns} (visible for a table the login may
   * SELECT): id, name, base type ({@code TYPE_NAME(system_type_id)}, so alias types read as their
   * base), byte length, precision, scale, collation, computed. Parameter: the two-part
   * bracket-quoted name for {@code OBJECT_ID}.
   */
  static final String SOURCE_COLUMNS =
      "SELECT c.column_id, c.name, TYPE_NAME(c.system_type_id), c.max_length, c.precision,"
          + " c.scale, c.collation_name, c.is_computed FROM sys.columns c"
          + " WHERE c.object_id = OBJECT_ID(?) ORDER BY c.column_id";

  /**
   * Whether the login may read a change table, and the database user to name in a GRANT
   * (docs/scenarios.md C229). Parameter: {@code cdc.[<ci>_CT]}. NULL for an object that does not
   * exist.
   */
  static final String CHANGE_TABLE_PERMISSION =
      "SELECT HAS_PERMS_BY_NAME(?, 'OBJECT', 'SELECT'), USER_NAME()";

  // ---- change rows ------------------------------------------------------------------------------

  /**
   * The tiles of a change table's rows in an LSN range (docs/architecture.md "Data flow",
   * docs/scenarios.md C020): per {@code NTILE(n)} tile over the rows ordered by {@code
   * __$start_lsn}, its last commit LSN, the LSN right after it ({@code sys.fn_cdc_increment_lsn})
   * and its row count, ordered by bound; one round trip. Parameters: first and last LSN.
   *
   * @param captureInstance the checked capture instance
   * @param n the number of tiles, at least 1, inlined
   * @return the statement
   */
  static String splitPoints(String captureInstance, int n) {
    if (n < 1) {
      throw new IllegalArgumentException("n must be at least 1, got " + n);
    }
    return "SELECT CONVERT(varchar(22), t.b, 1), CONVERT(varchar(22),"
        + " sys.fn_cdc_increment_lsn(t.b), 1), t.rows FROM (SELECT MAX(x.[__$start_lsn]) AS b,"
        + " COUNT_BIG(*) AS rows, x.tile FROM (SELECT c.[__$start_lsn], NTILE("
        + n
        + ") OVER (ORDER BY c.[__$start_lsn]) AS tile FROM "
        + SqlIdentifiers.changeTable(captureInstance)
        + " c WHERE c.[__$start_lsn] BETWEEN CONVERT(binary(10), ?, 1) AND CONVERT(binary(10), ?,"
        + " 1)) AS x GROUP BY x.tile) AS t ORDER BY t.b, t.tile";
  }

  /**
   * The number of a change table's rows in an LSN range, both ends inclusive: {@code COUNT_BIG(*)}
   * under a range predicate on {@code __$start_lsn}, the leading column of the change table's
   * clustered index, so SQL Server seeks to the range and counts it in one pass with no sort and no
   * window (unlike {@link #splitPoints}'s {@code NTILE}, which sorts and spools the range). One
   * round trip. Parameters: first and last LSN.
   *
   * @param captureInstance the checked capture instance
   * @return the statement
   */
  static String changeRowCount(String captureInstance) {
    return "SELECT COUNT_BIG(*) FROM "
        + SqlIdentifiers.changeTable(captureInstance)
        + " c WHERE c.[__$start_lsn] BETWEEN CONVERT(binary(10), ?, 1) AND CONVERT(binary(10), ?,"
        + " 1)";
  }

  /**
   * The change rows of one capture instance in an LSN range, both ends inclusive
   * (docs/sql-server.md "The reading login", docs/scenarios.md C274): the change table {@code
   * cdc.[<ci>_CT] c} read directly (not {@code cdc.fn_cdc_get_all_changes_<ci>}, which lacks {@code
   * __$command_id} on SQL Server 2022) joined to the commit times, ordered by {@code __$start_lsn,
   * __$command_id, __$seqval, __$operation}. Columns: {@code _start_lsn}, {@code _seqval} (text),
   * {@code _operation}, {@code _command_id} (only when asked for), {@code _commit_ts} (UTC {@code
   * datetime2(3)}), then the captured columns.
   *
   * @param captureInstance the checked capture instance
   * @param columns captured column names to select, in order
   * @param includeCommandId whether to read {@code __$command_id}
   * @param clock how commit times are converted: {@link CommitTimeSql}
   * @return the statement; parameters: first and last LSN
   */
  static String changes(
      String captureInstance, List<String> columns, boolean includeCommandId, CommitTimeSql clock) {
    StringBuilder sql = new StringBuilder();
    if (clock.perRowZone() != null) {
      sql.append(namedCommitTimes(clock.perRowZone())).append(' ');
    }
    sql.append("SELECT CONVERT(varchar(22), c.[__$start_lsn], 1) AS _start_lsn,")
        .append(" CONVERT(varchar(22), c.[__$seqval], 1) AS _seqval,")
        .append(" c.[__$operation] AS _operation,");
    if (includeCommandId) {
      sql.append(" c.[__$command_id] AS _command_id,");
    }
    if (clock.perRowZone() != null) {
      sql.append(" m.commit_ts AS _commit_ts");
    } else {
      sql.append(' ').append(commitTimeWithOffset(clock.offsetMinutes())).append(" AS _commit_ts");
    }
    for (String column : columns) {
      sql.append(", c.").append(SqlIdentifiers.quote(column));
    }
    sql.append(" FROM ").append(SqlIdentifiers.changeTable(captureInstance)).append(" c");
    if (clock.perRowZone() != null) {
      sql.append(" JOIN ct m ON m.start_lsn = c.[__$start_lsn]")
          .append(" WHERE c.[__$start_lsn] BETWEEN @lo AND @hi");
    } else {
      sql.append(" JOIN cdc.lsn_time_mapping m ON m.start_lsn = c.[__$start_lsn]")
          .append(
              " WHERE c.[__$start_lsn] BETWEEN CONVERT(binary(10), ?, 1) AND CONVERT(binary(10),"
                  + " ?, 1)");
    }
    sql.append(" ORDER BY c.[__$start_lsn], ");
    if (includeCommandId) {
      sql.append("c.[__$command_id], ");
    }
    sql.append("c.[__$seqval], c.[__$operation]");
    return sql.toString();
  }

  /**
   * How a change query converts commit times: one offset for the whole range (UTC is 0), or per row
   * in a named zone.
   *
   * @param offsetMinutes minutes east of UTC when {@code perRowZone} is null
   * @param perRowZone the checked Windows zone name to convert per row, or null
   */
  record CommitTimeSql(int offsetMinutes, String perRowZone) {
    /** One offset: {@code DATEADD(minute, -offset, tran_end_time)}. */
    static CommitTimeSql offset(int offsetMinutes) {
      return new CommitTimeSql(offsetMinutes, null);
    }

    /** Per row in a named zone, with the fall-back rule. */
    static CommitTimeSql perRow(String zone) {
      return new CommitTimeSql(0, SqlIdentifiers.timeZone(zone));
    }
  }

  // ---- source tables (snapshots)
  // -----------------------------------------------------------------

  /**
   * The session settings a source-table read runs under, as the prefix of its own batch (
   * docs/architecture.md "Data flow"): {@code SET LOCK_TIMEOUT n;} when a lock timeout is set, then
   * the isolation level ({@code READ COMMITTED} or {@code SNAPSHOT}; never {@code READ
   * UNCOMMITTED}/{@code NOLOCK}).
   *
   * @param lockTimeoutMs milliseconds, or negative for none
   * @param isolation the isolation level
   * @return the prefix, ending with a space
   */
  static String sourceReadPrefix(long lockTimeoutMs, IsolationLevel isolation) {
    StringBuilder sql = new StringBuilder();
    if (lockTimeoutMs >= 0) {
      sql.append("SET LOCK_TIMEOUT ").append(Math.toIntExact(lockTimeoutMs)).append("; ");
    }
    sql.append("SET TRANSACTION ISOLATION LEVEL ")
        .append(isolation == IsolationLevel.SNAPSHOT ? "SNAPSHOT" : "READ COMMITTED")
        .append("; ");
    return sql.toString();
  }

  /**
   * Puts back the session settings {@link #sourceReadPrefix} changes (no lock timeout, {@code READ
   * COMMITTED}), run before a pooled connection goes back to its pool, so the next client to borrow
   * it reads change tables as on a new connection. No parameters.
   */
  static final String RESET_SESSION =
      "SET LOCK_TIMEOUT -1; SET TRANSACTION ISOLATION LEVEL READ COMMITTED";

  /**
   * The first key tuple of each tile 2..n' of {@code NTILE(n) OVER (ORDER BY <keys>)} over a source
   * table, in tile order: the bounds that cut it into parts of nearly equal row counts. No
   * parameters.
   *
   * @param schema the checked schema
   * @param table the checked table
   * @param keyColumns the checked key columns
   * @param n the number of tiles, at least 1, inlined
   * @return the statement (without the session prefix)
   */
  static String keyTiles(String schema, String table, List<String> keyColumns, int n) {
    if (n < 1) {
      throw new IllegalArgumentException("n must be at least 1, got " + n);
    }
    StringJoiner keys = new StringJoiner(", ");
    StringJoiner aliased = new StringJoiner(", ");
    StringJoiner aliases = new StringJoiner(", ");
    for (int i = 0; i < keyColumns.size(); i++) {
      keys.add(SqlIdentifiers.quote(keyColumns.get(i)));
      aliased.add(SqlIdentifiers.quote(keyColumns.get(i)) + " AS [k" + i + "]");
      aliases.add("x.[k" + i + "]");
    }
    return "SELECT "
        + aliases.toString().replace("x.", "y.")
        + " FROM (SELECT "
        + aliases
        + ", x.tile, ROW_NUMBER() OVER (PARTITION BY x.tile ORDER BY "
        + aliases
        + ") AS rn FROM (SELECT "
        + aliased
        + ", NTILE("
        + n
        + ") OVER (ORDER BY "
        + keys
        + ") AS tile FROM "
        + SqlIdentifiers.quote(schema)
        + "."
        + SqlIdentifiers.quote(table)
        + ") AS x) AS y WHERE y.rn = 1 AND y.tile > 1 ORDER BY y.tile";
  }

  // ---- chunk planning (docs/behaviour.md §6.8) -------------------------------------------------

  /**
   * MIN and MAX of one key column ({@code NULL}s ignored), two seeks in one statement: {@code
   * SELECT (SELECT MIN([k]) FROM [s].[t]) AS lo, (SELECT MAX([k]) FROM [s].[t]) AS hi}. No
   * parameters.
   *
   * @return the statement (without the session prefix)
   */
  static String keyRange(String schema, String table, String keyColumn) {
    String from = " FROM " + SqlIdentifiers.quote(schema) + "." + SqlIdentifiers.quote(table);
    String k = SqlIdentifiers.quote(keyColumn);
    return "SELECT (SELECT MIN("
        + k
        + ")"
        + from
        + ") AS lo, (SELECT MAX("
        + k
        + ")"
        + from
        + ") AS hi";
  }

  /**
   * The last key in {@code ORDER BY} order: {@code SELECT TOP (1) [a], [b] FROM [s].[t] ORDER BY
   * [a] DESC, [b] DESC}. No parameters.
   *
   * @return the statement (without the session prefix)
   */
  static String keyMax(String schema, String table, List<String> keyColumns) {
    StringJoiner keys = new StringJoiner(", ");
    StringJoiner desc = new StringJoiner(", ");
    for (String k : keyColumns) {
      keys.add(SqlIdentifiers.quote(k));
      desc.add(SqlIdentifiers.quote(k) + " DESC");
    }
    return "SELECT TOP (1) "
        + keys
        + " FROM "
        + SqlIdentifiers.quote(schema)
        + "."
        + SqlIdentifiers.quote(table)
        + " ORDER BY "
        + desc;
  }

  /**
   * The key at offset n of a key range (docs/scenarios.md C103): each seekable piece takes its own
   * {@code TOP (n + 1)} ordered by the key, the union is ordered and {@code OFFSET n ROWS FETCH
   * NEXT 1 ROWS ONLY} picks the bound, so at most (pieces × (n + 1)) keys are read. Parameters: the
   * pieces' bound values, in order.
   *
   * @param pieces the WHERE conditions of the range's pieces ({@link KeyRangeSql}; an empty one
   *     reads the whole table); at least one
   * @param n the offset, 0 to {@code Long.MAX_VALUE - 1}, inlined
   * @return the statement (without the session prefix)
   */
  static String keyBound(
      String schema, String table, List<String> keyColumns, List<String> pieces, long n) {
    if (pieces.isEmpty()) {
      throw new IllegalArgumentException("A key bound needs at least one piece");
    }
    if (n < 0 || n == Long.MAX_VALUE) {
      throw new IllegalArgumentException("n must be at least 0 and below 2^63 - 1, got " + n);
    }
    StringJoiner keys = new StringJoiner(", ");
    for (String k : keyColumns) {
      keys.add(SqlIdentifiers.quote(k));
    }
    String from = " FROM " + SqlIdentifiers.quote(schema) + "." + SqlIdentifiers.quote(table);
    StringJoiner union = new StringJoiner(" UNION ALL ");
    for (int i = 0; i < pieces.size(); i++) {
      String where = pieces.get(i);
      union.add(
          "SELECT * FROM (SELECT TOP ("
              + (n + 1)
              + ") "
              + keys
              + from
              + (where.isEmpty() ? "" : " WHERE " + where)
              + " ORDER BY "
              + keys
              + ") p"
              + i);
    }
    return "SELECT "
        + keys
        + " FROM ("
        + union
        + ") u ORDER BY "
        + keys
        + " OFFSET "
        + n
        + " ROWS FETCH NEXT 1 ROWS ONLY";
  }

  /**
   * Row counts per slice {@code floor(k / width)} of one integer key column, in one {@code GROUP
   * BY}: integer division truncates towards zero, so a negative key with a remainder is moved one
   * slice down; rows with a NULL key are excluded. Parameters: the bounds' texts for the conditions
   * present.
   *
   * @param keyColumn the checked column
   * @param lowerCast the cast of the lower bound ({@code CAST(? AS int)}), or null for none
   * @param upperCast the cast of the upper bound, or null for none
   * @param width at least 1, inlined as a bigint
   * @return the statement (without the session prefix): slice, count, ascending by slice
   */
  static String keySlices(
      String schema,
      String table,
      String keyColumn,
      String lowerCast,
      String upperCast,
      long width) {
    if (width < 1) {
      throw new IllegalArgumentException("width must be at least 1, got " + width);
    }
    String k = SqlIdentifiers.quote(keyColumn);
    String big = "CAST(" + k + " AS bigint)";
    String w = "CAST(" + width + " AS bigint)";
    List<String> where = new ArrayList<>();
    where.add(k + " IS NOT NULL");
    if (lowerCast != null) {
      where.add(k + " >= " + lowerCast);
    }
    if (upperCast != null) {
      where.add(k + " <= " + upperCast);
    }
    return "SELECT x.slice, COUNT_BIG(*) FROM (SELECT "
        + big
        + " / "
        + w
        + " - CASE WHEN "
        + big
        + " % "
        + w
        + " < 0 THEN 1 ELSE 0 END AS slice FROM "
        + SqlIdentifiers.quote(schema)
        + "."
        + SqlIdentifiers.quote(table)
        + " WHERE "
        + String.join(" AND ", where)
        + ") AS x GROUP BY x.slice ORDER BY x.slice";
  }

  /**
   * Reconcile's fine buckets of one key column (docs/behaviour.md §11.2): the key's ordinal as
   * bigint ({@code CAST(k AS bigint)} for an integer key, {@code DATEDIFF_BIG(day, CAST('19700101'
   * AS date), k)} for a date), its bucket {@code ordinal / width} moved one down for a negative
   * ordinal with a remainder (floor), then {@code COUNT_BIG(*)} and {@code SUM(CAST(ordinal AS
   * decimal(38,0)))} per bucket in one {@code GROUP BY}; NULL keys excluded. No parameters.
   *
   * @param keyColumn the checked column
   * @param date whether the column is a {@code date} (else an integer type)
   * @param width at least 1, inlined as a bigint
   * @return the statement (without the session prefix): bucket, rows, key sum, ascending by bucket
   */
  static String keyBuckets(
      String schema, String table, String keyColumn, boolean date, long width) {
    if (width < 1) {
      throw new IllegalArgumentException("width must be at least 1, got " + width);
    }
    String k = SqlIdentifiers.quote(keyColumn);
    String ordinal =
        date
            ? "DATEDIFF_BIG(day, CAST('19700101' AS date), " + k + ")"
            : "CAST(" + k + " AS bigint)";
    String w = "CAST(" + width + " AS bigint)";
    return "SELECT x.b, COUNT_BIG(*), SUM(CAST(x.o AS decimal(38,0))) FROM (SELECT o.o, o.o / "
        + w
        + " - CASE WHEN o.o % "
        + w
        + " < 0 THEN 1 ELSE 0 END AS b FROM (SELECT "
        + ordinal
        + " AS o FROM "
        + SqlIdentifiers.quote(schema)
        + "."
        + SqlIdentifiers.quote(table)
        + " WHERE "
        + k
        + " IS NOT NULL) AS o) AS x GROUP BY x.b ORDER BY x.b";
  }

  /** A table's row count, {@code SELECT COUNT_BIG(*)}; reconcile's whole-table tier 1. */
  static String rowCount(String schema, String table) {
    return "SELECT COUNT_BIG(*) FROM "
        + SqlIdentifiers.quote(schema)
        + "."
        + SqlIdentifiers.quote(table);
  }

  /**
   * The table's row estimate: {@code EXEC sys.sp_spaceused @objname = ?} with the two-part
   * bracket-quoted name; its {@code rows} column (char(20), e.g. {@code "1234"} padded) holds it.
   */
  static final String ROW_ESTIMATE = "EXEC sys.sp_spaceused @objname = ?";

  /**
   * A key-range read of a source table (docs/architecture.md "Data flow"): the disjoint pieces of
   * {@link KeyRangeSql} as a {@code UNION ALL}, each of the "equalities on leading key columns, one
   * range on the next" shape SQL Server can seek, ordered by the key (NULL first, as {@code ORDER
   * BY} sorts). Parameters: the pieces' bound values, in order.
   *
   * @param schema the checked schema
   * @param table the checked table
   * @param columns the columns to return, checked, in order
   * @param keyColumns the key columns, checked
   * @param pieces the WHERE conditions of the pieces (an empty condition reads the whole table); at
   *     least one
   * @return the statement (without the session prefix)
   */
  static String readTable(
      String schema,
      String table,
      List<String> columns,
      List<String> keyColumns,
      List<String> pieces) {
    if (pieces.isEmpty()) {
      throw new IllegalArgumentException("A key-range read needs at least one piece");
    }
    List<String> selected = new ArrayList<>();
    for (int i = 0; i < columns.size(); i++) {
      selected.add(SqlIdentifiers.quote(columns.get(i)) + " AS [c" + i + "]");
    }
    for (int i = 0; i < keyColumns.size(); i++) {
      selected.add(SqlIdentifiers.quote(keyColumns.get(i)) + " AS [k" + i + "]");
    }
    String from = " FROM " + SqlIdentifiers.quote(schema) + "." + SqlIdentifiers.quote(table);
    StringJoiner union = new StringJoiner(" UNION ALL ");
    for (String where : pieces) {
      union.add(
          "SELECT "
              + String.join(", ", selected)
              + from
              + (where.isEmpty() ? "" : " WHERE " + where));
    }
    StringJoiner outer = new StringJoiner(", ");
    for (int i = 0; i < columns.size(); i++) {
      outer.add("r.[c" + i + "]");
    }
    if (columns.isEmpty()) {
      outer.add("1");
    }
    StringJoiner order = new StringJoiner(", ");
    for (int i = 0; i < keyColumns.size(); i++) {
      order.add("r.[k" + i + "]");
    }
    return "SELECT "
        + outer
        + " FROM ("
        + union
        + ") AS r"
        + (keyColumns.isEmpty() ? "" : " ORDER BY " + order);
  }
}
