package org.lakecdc.io.mssqlcdc.client;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.beam.sdk.util.BackOff;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.io.mssqlcdc.schema.SqlServerType;
import org.lakecdc.io.mssqlcdc.time.CommitTimeConverter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@link CdcClient} over SQL Server: the only code that runs T-SQL, every statement taken from
 * {@link CdcStatements}, one method each, over one JDBC connection (Microsoft's mssql-jdbc) opened
 * at the first call and closed by {@link #close()}. Works with SQL Server 2016 SP1 and later, Azure
 * SQL Database and Azure SQL Managed Instance. It reads only: it never writes to the source
 * database and never creates or drops capture instances.
 *
 * <h2>Commit times</h2>
 *
 * {@code cdc.lsn_time_mapping.tran_end_time} is the server's local time; it is converted to UTC on
 * the server (docs/sql-server.md "Connection settings") with the clock resolved once per client
 * from {@link ConnectionConfig#sourceTimeZone()}: {@code UTC} as is; a named zone per LSN range
 * with one {@code DATEADD} when no daylight-saving change is near, else per commit with {@code AT
 * TIME ZONE} and the fall-back repeated-hour rule; {@code auto} reads {@code CURRENT_TIMEZONE_ID()}
 * on SQL Server 2022+ and Azure SQL, and otherwise falls back to the server's current UTC offset
 * with a warning (exact only in zones without daylight saving). Every time this client returns is
 * UTC.
 *
 * <h2>Errors and retries</h2>
 *
 * A transient error ({@link TransientErrors}: deadlock victim 1205, Azure SQL transient errors,
 * dropped connections) closes the connection and runs the call again on a new one after a backoff
 * ({@link RetryPolicy}: at most 3 retries), logging a warning each time; streamed reads are retried
 * only until their query has started, after which the runner retries the bundle. A change-table
 * read refused for lack of {@code SELECT} raises {@link ChangeTablePermissionError} with the exact
 * GRANT. An unknown capture instance raises {@link CaptureInstanceNotFoundError}; other database
 * errors are {@link CdcException}s naming the operation, the SQL Server error number and SQLSTATE.
 * The password is never part of any message.
 *
 * <p>Not thread-safe: one client per thread, as {@link CdcClient} says. Streamed results ({@link
 * #readChanges}, {@link #readTable}) hold the connection until closed; close them before the next
 * call.
 */
public final class SqlCdcClient implements CdcClient {
  private static final Logger LOG = LoggerFactory.getLogger(SqlCdcClient.class);

  /** Rows fetched per round trip of a streamed read. */
  static final int FETCH_SIZE = 10_000;

  /** SQL Server error 229: "The %ls permission was denied on the object '%.*ls' ...". */
  static final int PERMISSION_DENIED = 229;

  /** A UTC instant as the text parameter of a look-up by time: ISO 8601, whole seconds. */
  private static final DateTimeFormatter SECONDS =
      DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss", Locale.ROOT).withZone(ZoneOffset.UTC);

  /** {@code [name]} items of {@code index_column_list}, {@code ]]} escaping a {@code ]}. */
  private static final Pattern BRACKETED = Pattern.compile("\\[((?:[^\\]]|\\]\\])*)\\]");

  /** Opens the connection; the test seam. */
  @FunctionalInterface
  interface Connector {
    /**
     * Opens a connection.
     *
     * @param config the settings
     * @return an open connection
     * @throws SQLException when the server refuses or cannot be reached
     */
    Connection connect(ConnectionConfig config) throws SQLException;
  }

  private final ConnectionConfig config;
  private final Connector connector;
  private final RetryPolicy retry;
  private final Map<String, String> resolvedNames = new HashMap<>();
  private Connection connection;
  private ServerClock clock;
  private boolean closed;

  /**
   * A client over the configured server; the connection opens at the first call.
   *
   * @param config the connection settings
   */
  public SqlCdcClient(ConnectionConfig config) {
    this(config, SqlCdcClient::connectWithDriver, RetryPolicy.standard());
  }

  SqlCdcClient(ConnectionConfig config, Connector connector, RetryPolicy retry) {
    this.config = Objects.requireNonNull(config, "config");
    this.connector = Objects.requireNonNull(connector, "connector");
    this.retry = Objects.requireNonNull(retry, "retry");
  }

  private static Connection connectWithDriver(ConnectionConfig config) throws SQLException {
    String password = config.password().read();
    Connection c =
        new com.microsoft.sqlserver.jdbc.SQLServerDriver()
            .connect(config.jdbcUrl(), config.driverProperties(password));
    if (c == null) {
      throw new CdcException("The SQL Server driver does not accept the URL " + config.jdbcUrl());
    }
    return c;
  }

  /**
   * The server clock this client converts commit times with, resolved on first use.
   *
   * @return {@code UTC}, the Windows zone name, or the fixed offset as {@code UTC-03:00}
   */
  public String timeZone() {
    return call("Reading the server's time zone", c -> clock(c)).toString();
  }

  // ---- LSNs -------------------------------------------------------------------------------------

  @Override
  public Optional<Lsn> maxLsn() {
    return call("Reading sys.fn_cdc_get_max_lsn()", c -> lsnQuery(c, CdcStatements.MAX_LSN));
  }

  /**
   * {@inheritDoc}
   *
   * <p>The name resolves exactly first, then ignoring case; the function's answer {@code 0x00...}
   * or NULL means the instance is unknown, the login may not read it, or capture has not processed
   * its creation yet.
   */
  @Override
  public Lsn minLsn(String captureInstance) {
    String name = resolve(captureInstance);
    Optional<Lsn> min =
        call(
            "Reading sys.fn_cdc_get_min_lsn('" + name + "')",
            c -> lsnQuery(c, CdcStatements.MIN_LSN, name));
    if (min.isEmpty()) {
      throw notFound(captureInstance);
    }
    return min.get();
  }

  @Override
  public Lsn incrementLsn(Lsn lsn) {
    Objects.requireNonNull(lsn, "lsn");
    return call(
            "sys.fn_cdc_increment_lsn(" + lsn + ")",
            c -> lsnQuery(c, CdcStatements.INCREMENT_LSN, lsn.toString()))
        .orElseThrow(() -> new CdcException("sys.fn_cdc_increment_lsn(" + lsn + ") is NULL"));
  }

  /** {@inheritDoc} ZERO is answered without asking the server. */
  @Override
  public Lsn decrementLsn(Lsn lsn) {
    Objects.requireNonNull(lsn, "lsn");
    if (lsn.isZero()) {
      return Lsn.ZERO;
    }
    return call(
            "sys.fn_cdc_decrement_lsn(" + lsn + ")",
            c -> lsnQueryAllowingZero(c, CdcStatements.DECREMENT_LSN, lsn.toString()))
        .orElse(Lsn.ZERO);
  }

  @Override
  public Optional<Commit> commit(Lsn lsn) {
    Objects.requireNonNull(lsn, "lsn");
    return call("Reading the commit time of " + lsn, c -> commitAt(c, lsn));
  }

  @Override
  public Optional<Commit> lastCommitAtOrBefore(Lsn lsn) {
    Objects.requireNonNull(lsn, "lsn");
    return call(
        "Reading the last commit at or before " + lsn,
        c -> {
          Optional<Lsn> at = lsnQuery(c, CdcStatements.LAST_COMMIT_AT_OR_BEFORE, lsn.toString());
          return at.isEmpty() ? Optional.empty() : commitAt(c, at.get());
        });
  }

  /**
   * {@inheritDoc}
   *
   * <p>One statement ({@link CdcStatements#lastCommitLsnAtOrBefore(ServerClock)}): the instant
   * bound as UTC text, seconds only ({@code 2026-09-28T16:50:00}), once for UTC and a fixed offset,
   * twice for a named zone, and converted to the server clock on the server.
   */
  @Override
  public Optional<Lsn> lastCommitLsnAtOrBefore(Instant utc) {
    Instant t = CommitTimeConverter.lookupSecond(utc);
    String text = SECONDS.format(t);
    return call(
        "Reading the last commit at or before " + t,
        c -> {
          ServerClock server = clock(c);
          String sql = CdcStatements.lastCommitLsnAtOrBefore(server);
          return server.zone() == null ? lsnQuery(c, sql, text) : lsnQuery(c, sql, text, text);
        });
  }

  /**
   * {@inheritDoc}
   *
   * @throws IllegalArgumentException when {@code n < 1}
   */
  @Override
  public Optional<Commit> nthCommitAfter(Lsn lsn, int n) {
    Objects.requireNonNull(lsn, "lsn");
    String sql = CdcStatements.nthCommitAfter(n);
    return call(
        "Reading the " + n + "-th commit after " + lsn,
        c -> {
          Optional<Lsn> at = lsnQuery(c, sql, lsn.toString());
          return at.isEmpty() ? Optional.empty() : commitAt(c, at.get());
        });
  }

  /** {@inheritDoc} ({@link CdcStatements#COMMIT_COUNT}) */
  @Override
  public long commitCount(Lsn afterLsn, Lsn upToLsn) {
    Objects.requireNonNull(afterLsn, "afterLsn");
    Objects.requireNonNull(upToLsn, "upToLsn");
    if (!upToLsn.isAfter(afterLsn)) {
      return 0;
    }
    return call(
        "Counting the commits in (" + afterLsn + ", " + upToLsn + "]",
        c -> {
          try (PreparedStatement ps = c.prepareStatement(CdcStatements.COMMIT_COUNT)) {
            ps.setString(1, afterLsn.toString());
            ps.setString(2, upToLsn.toString());
            try (ResultSet rs = ps.executeQuery()) {
              return rs.next() ? rs.getLong(1) : 0L;
            }
          }
        });
  }

  // ---- capture instances ------------------------------------------------------------------------

  /**
   * {@inheritDoc}
   *
   * <p>From {@code sys.sp_cdc_help_change_data_capture}: the name matches exactly first, then the
   * one instance equal ignoring case (two such: {@link CdcException} asking for the exact name); a
   * name no instance has any more but that is a table's default name {@code <schema>_<table>}
   * resolves to that table (docs/sql-server.md "Switching to a new capture instance"). {@link
   * CaptureInstance#startLsn()} is the instance's current low watermark ({@code
   * cdc.change_tables.start_lsn}, which cleanup moves).
   */
  @Override
  public List<CaptureInstance> captureInstances(String captureInstance) {
    SqlIdentifiers.captureInstance(captureInstance);
    List<CaptureInstance> all = call("Listing capture instances", this::help);
    CaptureInstance named = find(all, captureInstance);
    if (named == null) {
      for (CaptureInstance i : all) {
        if ((i.sourceSchema() + "_" + i.sourceTable()).equalsIgnoreCase(captureInstance)) {
          named = i;
          break;
        }
      }
    }
    if (named == null) {
      throw new CaptureInstanceNotFoundError(captureInstance, names(all));
    }
    List<CaptureInstance> out = new ArrayList<>();
    for (CaptureInstance i : all) {
      if (i.sourceSchema().equals(named.sourceSchema())
          && i.sourceTable().equals(named.sourceTable())) {
        out.add(i);
      }
    }
    out.sort(OLDEST_FIRST);
    return out;
  }

  private static final Comparator<CaptureInstance> OLDEST_FIRST =
      Comparator.comparing(
              (CaptureInstance i) -> i.createDate().orElse(null),
              Comparator.nullsLast(Comparator.naturalOrder()))
          .thenComparing(
              i -> i.startLsn().orElse(null), Comparator.nullsLast(Comparator.naturalOrder()));

  /**
   * {@inheritDoc}
   *
   * <p>Types from {@code data_type} with {@code character_maximum_length} (-1 for {@code max}),
   * {@code numeric_precision}/{@code numeric_scale} or {@code datetime_precision}; computed columns
   * from {@code sys.columns.is_computed} of the source table, matched by {@code column_id}.
   */
  @Override
  public List<CapturedColumn> capturedColumns(String captureInstance) {
    String name = resolve(captureInstance);
    return call("Reading the captured columns of '" + name + "'", c -> captured(c, name));
  }

  /**
   * {@inheritDoc}
   *
   * <p>Each change's commit time is that of the last {@code cdc.lsn_time_mapping} entry at or
   * before its LSN.
   *
   * @throws CaptureInstanceNotFoundError when the instance does not exist
   */
  @Override
  public List<DdlChange> ddlHistory(String captureInstance, Lsn afterLsn, Lsn upToLsn) {
    String name = resolve(captureInstance);
    return call(
        "Reading the DDL history of '" + name + "'",
        c -> {
          List<DdlChange> out = new ArrayList<>();
          try (PreparedStatement ps = c.prepareStatement(CdcStatements.DDL_HISTORY)) {
            ps.setString(1, name);
            try (ResultSet rs = ps.executeQuery()) {
              while (rs.next()) {
                byte[] raw = rs.getBytes("ddl_lsn");
                if (raw == null) {
                  continue;
                }
                Lsn lsn = Lsn.ofBytes(raw);
                if (lsn.isAfter(afterLsn) && !lsn.isAfter(upToLsn)) {
                  out.add(new DdlChange(name, lsn, Optional.empty(), rs.getString("ddl_command")));
                }
              }
            }
          }
          out.sort(Comparator.comparing(DdlChange::lsn));
          List<DdlChange> timed = new ArrayList<>();
          for (DdlChange d : out) {
            Optional<Lsn> at =
                lsnQuery(c, CdcStatements.LAST_COMMIT_AT_OR_BEFORE, d.lsn().toString());
            Optional<Instant> time =
                at.isEmpty() ? Optional.empty() : commitAt(c, at.get()).map(Commit::commitTime);
            timed.add(new DdlChange(name, d.lsn(), time, d.command()));
          }
          return timed;
        });
  }

  // ---- change rows ------------------------------------------------------------------------------

  /**
   * {@inheritDoc}
   *
   * <p>Requested columns match captured columns ignoring case; one the instance does not capture
   * reads NULL. Rows stream from the server {@value #FETCH_SIZE} at a time.
   *
   * @throws CaptureInstanceNotFoundError when the instance does not exist
   * @throws ChangeTablePermissionError when the login may not SELECT the change table
   */
  @Override
  public CloseableIterator<ChangeRow> readChanges(ChangeQuery query) {
    String name = resolve(query.captureInstance());
    List<CapturedColumn> captured = capturedColumns(name);
    Map<String, String> byLowerName = new HashMap<>();
    for (CapturedColumn col : captured) {
      byLowerName.put(col.name().toLowerCase(Locale.ROOT), col.name());
    }
    List<String> selected = new ArrayList<>();
    int[] position = new int[query.columns().size()];
    for (int i = 0; i < query.columns().size(); i++) {
      String actual = byLowerName.get(query.columns().get(i).toLowerCase(Locale.ROOT));
      if (actual == null) {
        position[i] = -1;
      } else {
        position[i] = selected.size();
        selected.add(actual);
      }
    }
    String range = name + " [" + query.fromLsn() + ", " + query.toLsn() + "]";
    int first = query.includeCommandId() ? 6 : 5;
    return call(
        "Reading the change rows of " + range,
        c -> {
          String sql =
              CdcStatements.changes(
                  name,
                  selected,
                  query.includeCommandId(),
                  commitTimeSql(c, query.fromLsn(), query.toLsn()));
          ResultSet rs =
              executeOnChangeTable(
                  c, name, sql, query.fromLsn().toString(), query.toLsn().toString());
          String[] types = types(rs);
          return new ResultIterator<ChangeRow>(rs, "Reading the change rows of " + range) {
            @Override
            ChangeRow row(ResultSet r) throws SQLException {
              Integer commandId = null;
              if (query.includeCommandId()) {
                int v = r.getInt(4);
                commandId = r.wasNull() ? null : v;
              }
              List<Object> values = new ArrayList<>(position.length);
              for (int p : position) {
                values.add(p < 0 ? null : JdbcValues.read(r, first + p, types[first + p - 1]));
              }
              return new ChangeRow(
                  Lsn.parse(r.getString(1)),
                  Lsn.parse(r.getString(2)),
                  r.getInt(3),
                  commandId,
                  utc(r.getObject(first - 1, LocalDateTime.class)),
                  values);
            }
          };
        });
  }

  /**
   * {@inheritDoc}
   *
   * @throws IllegalArgumentException when {@code n < 1}
   * @throws CaptureInstanceNotFoundError when the instance does not exist
   * @throws ChangeTablePermissionError when the login may not SELECT the change table
   */
  @Override
  public List<SplitPoint> splitPoints(String captureInstance, Lsn fromLsn, Lsn toLsn, int n) {
    String name = resolve(captureInstance);
    String sql = CdcStatements.splitPoints(name, n);
    return call(
        "Splitting the change rows of " + name + " [" + fromLsn + ", " + toLsn + "]",
        c -> {
          List<SplitPoint> out = new ArrayList<>();
          try (ResultSet rs =
              executeOnChangeTable(c, name, sql, fromLsn.toString(), toLsn.toString())) {
            while (rs.next()) {
              out.add(
                  new SplitPoint(
                      Lsn.parse(rs.getString(1)), Lsn.parse(rs.getString(2)), rs.getLong(3)));
            }
            rs.getStatement().close();
          }
          return out;
        });
  }

  /**
   * {@inheritDoc}
   *
   * <p>{@code COUNT_BIG(*)} over the change table's clustered index range {@code fromLsn <=
   * __$start_lsn <= toLsn} ({@link CdcStatements#changeRowCount}): exact at the statement's moment
   * (rows of commits in progress are not in the change table yet). It reads the range's index pages
   * but neither sorts nor tiles them, so it stays cheap enough for every {@code @GetSize}; the
   * table's partition statistics would be cheaper still but count the whole table, not an LSN
   * range.
   *
   * @throws CaptureInstanceNotFoundError when the instance does not exist
   * @throws ChangeTablePermissionError when the login may not SELECT the change table
   */
  @Override
  public long estimatedChangeRows(String captureInstance, Lsn fromLsn, Lsn toLsn) {
    String name = resolve(captureInstance);
    if (fromLsn.isAfter(toLsn)) {
      return 0;
    }
    String sql = CdcStatements.changeRowCount(name);
    return call(
        "Counting the change rows of " + name + " [" + fromLsn + ", " + toLsn + "]",
        c -> {
          try (ResultSet rs =
              executeOnChangeTable(c, name, sql, fromLsn.toString(), toLsn.toString())) {
            long rows = rs.next() ? rs.getLong(1) : 0;
            rs.getStatement().close();
            return rows;
          }
        });
  }

  // ---- source tables ----------------------------------------------------------------------------

  /**
   * {@inheritDoc}
   *
   * <p>Under {@code SET LOCK_TIMEOUT} when configured and the query's isolation level; key bounds
   * bound as text and cast to the key columns' declared types ({@link KeyRangeSql}). Table and
   * column names match as the database's collation does; a column the table no longer has, and a
   * computed column, read NULL.
   *
   * @throws CdcException for an unknown table (or one the login may not SELECT) or key column
   * @throws IllegalArgumentException for a bound of the wrong size, or bounds on a key type they
   *     cannot be cast to
   */
  @Override
  public CloseableIterator<List<Object>> readTable(TableQuery query) {
    SqlIdentifiers.name(query.schema());
    SqlIdentifiers.name(query.table());
    String table = query.schema() + "." + query.table();
    return call(
        "Reading " + table,
        c -> {
          Map<String, SourceColumn> columns = sourceColumns(c, query.schema(), query.table());
          List<String> selected = new ArrayList<>();
          int[] position = new int[query.columns().size()];
          for (int i = 0; i < query.columns().size(); i++) {
            SourceColumn col = columns.get(query.columns().get(i).toLowerCase(Locale.ROOT));
            if (col == null || col.computed()) {
              position[i] = -1;
            } else {
              position[i] = selected.size();
              selected.add(col.name());
            }
          }
          List<String> keyNames = new ArrayList<>();
          List<KeyRangeSql.KeyColumn> keys = new ArrayList<>();
          boolean bounded =
              query.lowerInclusive().isPresent() || query.upperExclusive().isPresent();
          for (String k : query.keyColumns()) {
            SourceColumn col = columns.get(k.toLowerCase(Locale.ROOT));
            if (col == null) {
              throw new CdcException("Invalid column name '" + k + "' in table '" + table + "'");
            }
            keyNames.add(col.name());
            if (bounded) {
              keys.add(col.keyColumn());
            }
          }
          List<KeyRangeSql.Piece> pieces =
              bounded
                  ? KeyRangeSql.pieces(keys, query.lowerInclusive(), query.upperExclusive())
                  : List.of(new KeyRangeSql.Piece("", List.of()));
          if (pieces.isEmpty()) {
            return CloseableIterators.<List<Object>>empty();
          }
          List<String> where = new ArrayList<>();
          List<String> parameters = new ArrayList<>();
          for (KeyRangeSql.Piece p : pieces) {
            where.add(p.where());
            parameters.addAll(p.parameters());
          }
          String sql =
              CdcStatements.sourceReadPrefix(config.lockTimeoutMs().orElse(-1), query.isolation())
                  + CdcStatements.readTable(
                      query.schema(), query.table(), selected, keyNames, where);
          PreparedStatement ps = prepareStreaming(c, sql);
          ResultSet rs;
          try {
            for (int i = 0; i < parameters.size(); i++) {
              ps.setString(i + 1, parameters.get(i));
            }
            rs = ps.executeQuery();
          } catch (SQLException | RuntimeException e) {
            closeQuietly(ps);
            throw e;
          }
          String[] types = types(rs);
          return new ResultIterator<List<Object>>(rs, "Reading " + table) {
            @Override
            List<Object> row(ResultSet r) throws SQLException {
              List<Object> values = new ArrayList<>(position.length);
              for (int p : position) {
                values.add(p < 0 ? null : JdbcValues.read(r, p + 1, types[p]));
              }
              return Collections.unmodifiableList(values);
            }
          };
        });
  }

  /**
   * {@inheritDoc}
   *
   * <p>One statement: {@code NTILE(n)} over the key columns and the first row of each tile after
   * the first ({@code ROW_NUMBER} per tile), under the lock timeout and {@code isolation}; keys
   * sort in SQL Server's order (NULL first, strings by the column's collation).
   */
  @Override
  public List<List<Object>> keyTiles(
      String schema, String table, List<String> keyColumns, int n, IsolationLevel isolation) {
    if (n < 1) {
      throw new IllegalArgumentException("n must be at least 1, got " + n);
    }
    if (keyColumns.isEmpty()) {
      throw new IllegalArgumentException(
          "Key tiles of " + schema + "." + table + " need at least one key column");
    }
    SqlIdentifiers.name(schema);
    SqlIdentifiers.name(table);
    return call(
        "Planning key ranges of " + schema + "." + table,
        c -> {
          Map<String, SourceColumn> columns = sourceColumns(c, schema, table);
          List<String> keys = new ArrayList<>();
          for (String k : keyColumns) {
            SourceColumn col = columns.get(k.toLowerCase(Locale.ROOT));
            if (col == null) {
              throw new CdcException(
                  "Invalid column name '" + k + "' in table '" + schema + "." + table + "'");
            }
            keys.add(col.name());
          }
          String sql =
              CdcStatements.sourceReadPrefix(config.lockTimeoutMs().orElse(-1), isolation)
                  + CdcStatements.keyTiles(schema, table, keys, n);
          List<List<Object>> out = new ArrayList<>();
          try (PreparedStatement ps = c.prepareStatement(sql);
              ResultSet rs = ps.executeQuery()) {
            String[] types = types(rs);
            while (rs.next()) {
              List<Object> tuple = new ArrayList<>(keys.size());
              for (int i = 0; i < keys.size(); i++) {
                tuple.add(JdbcValues.read(rs, i + 1, types[i]));
              }
              out.add(Collections.unmodifiableList(tuple));
            }
          }
          return Collections.unmodifiableList(out);
        });
  }

  // ---- chunk planning (issue 12) ----------------------------------------------------------------

  /**
   * {@inheritDoc}
   *
   * <p>One statement of two seeks ({@code SELECT (SELECT MIN([k]) ...) AS lo, (SELECT MAX([k]) ...)
   * AS hi}), under the lock timeout and {@code isolation}.
   */
  @Override
  public Optional<List<Object>> keyRange(
      String schema, String table, String keyColumn, IsolationLevel isolation) {
    requireKeyColumns(schema, table, List.of(keyColumn));
    return call(
        "Reading the key range of " + schema + "." + table,
        c -> {
          SourceColumn k = keyColumns(c, schema, table, List.of(keyColumn)).get(0);
          String sql = prefix(isolation) + CdcStatements.keyRange(schema, table, k.name());
          try (PreparedStatement ps = c.prepareStatement(sql);
              ResultSet rs = ps.executeQuery()) {
            if (!rs.next()) {
              return Optional.<List<Object>>empty();
            }
            String[] types = types(rs);
            Object lo = JdbcValues.read(rs, 1, types[0]);
            Object hi = JdbcValues.read(rs, 2, types[1]);
            if (lo == null || hi == null) {
              return Optional.<List<Object>>empty();
            }
            return Optional.of(Collections.unmodifiableList(java.util.Arrays.asList(lo, hi)));
          }
        });
  }

  /**
   * {@inheritDoc}
   *
   * <p>{@code SELECT TOP (1) <keys> ... ORDER BY <keys DESC>}, under the lock timeout and {@code
   * isolation}.
   */
  @Override
  public Optional<List<Object>> keyMax(
      String schema, String table, List<String> keyColumns, IsolationLevel isolation) {
    requireKeyColumns(schema, table, keyColumns);
    return call(
        "Reading the last key of " + schema + "." + table,
        c -> {
          List<String> keys = columnNames(keyColumns(c, schema, table, keyColumns));
          String sql = prefix(isolation) + CdcStatements.keyMax(schema, table, keys);
          try (PreparedStatement ps = c.prepareStatement(sql);
              ResultSet rs = ps.executeQuery()) {
            return rs.next() ? Optional.of(tuple(rs, keys.size())) : Optional.<List<Object>>empty();
          }
        });
  }

  /**
   * {@inheritDoc}
   *
   * <p>The range's seekable pieces ({@link KeyRangeSql}, bounds bound as text and cast to the key
   * columns' declared types from {@code sys.columns}) each take {@code TOP (n + 1)} ordered by the
   * key; the union is ordered and offset by n rows. Under the lock timeout and {@code isolation}.
   *
   * @throws IllegalArgumentException when {@code n < 0}, a bound has the wrong size, or a key type
   *     bounds cannot be cast to
   */
  @Override
  public Optional<List<Object>> keyBound(
      String schema,
      String table,
      List<String> keyColumns,
      Optional<List<Object>> lowerInclusive,
      Optional<List<Object>> upperExclusive,
      long n,
      IsolationLevel isolation) {
    requireKeyColumns(schema, table, keyColumns);
    if (n < 0) {
      throw new IllegalArgumentException("n must be at least 0, got " + n);
    }
    return call(
        "Seeking a key bound of " + schema + "." + table,
        c -> {
          List<SourceColumn> columns = keyColumns(c, schema, table, keyColumns);
          List<KeyRangeSql.KeyColumn> keys = new ArrayList<>();
          for (SourceColumn col : columns) {
            keys.add(col.keyColumn());
          }
          List<KeyRangeSql.Piece> pieces = KeyRangeSql.pieces(keys, lowerInclusive, upperExclusive);
          if (pieces.isEmpty()) {
            return Optional.<List<Object>>empty();
          }
          List<String> where = new ArrayList<>();
          List<String> parameters = new ArrayList<>();
          for (KeyRangeSql.Piece p : pieces) {
            where.add(p.where());
            parameters.addAll(p.parameters());
          }
          String sql =
              prefix(isolation)
                  + CdcStatements.keyBound(schema, table, columnNames(columns), where, n);
          try (PreparedStatement ps = c.prepareStatement(sql)) {
            for (int i = 0; i < parameters.size(); i++) {
              ps.setString(i + 1, parameters.get(i));
            }
            try (ResultSet rs = ps.executeQuery()) {
              return rs.next()
                  ? Optional.of(tuple(rs, columns.size()))
                  : Optional.<List<Object>>empty();
            }
          }
        });
  }

  /**
   * {@inheritDoc}
   *
   * <p>One {@code GROUP BY} of {@code k / width} (bigint arithmetic, one slice lower for a negative
   * key with a remainder), bounds bound as text and cast to the column's type (a bound beyond the
   * type's range is left out), under the lock timeout and {@code isolation}.
   *
   * @throws IllegalArgumentException when {@code width < 1} or the column is not {@code tinyint},
   *     {@code smallint}, {@code int} or {@code bigint}
   */
  @Override
  public SortedMap<Long, Long> keySlices(
      String schema,
      String table,
      String keyColumn,
      long width,
      long low,
      long high,
      IsolationLevel isolation) {
    requireKeyColumns(schema, table, List.of(keyColumn));
    if (width < 1) {
      throw new IllegalArgumentException("width must be at least 1, got " + width);
    }
    return call(
        "Counting key slices of " + schema + "." + table,
        c -> {
          SourceColumn k = keyColumns(c, schema, table, List.of(keyColumn)).get(0);
          long[] range = integerRange(k, "slices need tinyint, smallint, int or bigint");
          KeyRangeSql.KeyColumn key = k.keyColumn();
          List<String> parameters = new ArrayList<>();
          String lower = null;
          String upper = null;
          if (low > range[0]) {
            lower = key.cast();
            parameters.add(Long.toString(Math.min(low, range[1])));
          }
          if (high < range[1]) {
            upper = key.cast();
            parameters.add(Long.toString(Math.max(high, range[0])));
          }
          TreeMap<Long, Long> slices = new TreeMap<>();
          if (low > high) {
            return Collections.unmodifiableSortedMap(slices);
          }
          String sql =
              prefix(isolation)
                  + CdcStatements.keySlices(schema, table, k.name(), lower, upper, width);
          try (PreparedStatement ps = c.prepareStatement(sql)) {
            for (int i = 0; i < parameters.size(); i++) {
              ps.setString(i + 1, parameters.get(i));
            }
            try (ResultSet rs = ps.executeQuery()) {
              while (rs.next()) {
                slices.put(rs.getLong(1), rs.getLong(2));
              }
            }
          }
          return Collections.unmodifiableSortedMap(slices);
        });
  }

  /**
   * {@inheritDoc}
   *
   * <p>One {@code GROUP BY} of the ordinal's bucket ({@link CdcStatements#keyBuckets}), the
   * column's type from {@code sys.columns}, under the lock timeout and {@code isolation}.
   */
  @Override
  public SortedMap<Long, KeyBucket> keyBuckets(
      String schema, String table, String keyColumn, long width, IsolationLevel isolation) {
    requireKeyColumns(schema, table, List.of(keyColumn));
    if (width < 1) {
      throw new IllegalArgumentException("width must be at least 1, got " + width);
    }
    return call(
        "Counting key buckets of " + schema + "." + table,
        c -> {
          SourceColumn k = keyColumns(c, schema, table, List.of(keyColumn)).get(0);
          boolean date = k.type().equalsIgnoreCase("date");
          if (!date) {
            integerRange(k, "buckets need tinyint, smallint, int, bigint or date");
          }
          String sql =
              prefix(isolation) + CdcStatements.keyBuckets(schema, table, k.name(), date, width);
          TreeMap<Long, KeyBucket> buckets = new TreeMap<>();
          try (PreparedStatement ps = c.prepareStatement(sql);
              ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
              buckets.put(
                  rs.getLong(1),
                  new KeyBucket(rs.getLong(2), rs.getBigDecimal(3).toBigIntegerExact()));
            }
          }
          return Collections.unmodifiableSortedMap(buckets);
        });
  }

  /** {@inheritDoc} {@code SELECT COUNT_BIG(*)}, under the lock timeout and {@code isolation}. */
  @Override
  public long rowCount(String schema, String table, IsolationLevel isolation) {
    SqlIdentifiers.name(schema);
    SqlIdentifiers.name(table);
    return call(
        "Counting the rows of " + schema + "." + table,
        c -> {
          try (PreparedStatement ps =
                  c.prepareStatement(prefix(isolation) + CdcStatements.rowCount(schema, table));
              ResultSet rs = ps.executeQuery()) {
            rs.next();
            return rs.getLong(1);
          }
        });
  }

  /**
   * {@inheritDoc}
   *
   * <p>{@code EXEC sys.sp_spaceused @objname = ?} with {@code [schema].[table]}; the {@code rows}
   * column (char(20), e.g. {@code "1234"} padded with spaces) is read up to its first non-digit.
   *
   * @throws CdcException for an unknown table, or a {@code rows} column without a number
   */
  @Override
  public long rowEstimate(String schema, String table) {
    SqlIdentifiers.name(schema);
    SqlIdentifiers.name(table);
    return call(
        "Estimating the rows of " + schema + "." + table,
        c -> {
          try (PreparedStatement ps = c.prepareStatement(CdcStatements.ROW_ESTIMATE)) {
            ps.setString(1, SqlIdentifiers.quote(schema) + "." + SqlIdentifiers.quote(table));
            try (ResultSet rs = ps.executeQuery()) {
              if (!rs.next()) {
                throw new CdcException("sp_spaceused answered no row for " + schema + "." + table);
              }
              return parseRows(rs.getString("rows"), schema + "." + table);
            }
          }
        });
  }

  /** The leading number of sp_spaceused's {@code rows} text ({@code "1234 rows"} reads 1234). */
  static long parseRows(String text, String table) {
    Matcher m = LEADING_NUMBER.matcher(text == null ? "" : text);
    if (!m.lookingAt()) {
      throw new CdcException(
          "sp_spaceused answered rows '" + text + "' for " + table + ", not a number");
    }
    return Long.parseLong(m.group(1));
  }

  private static final Pattern LEADING_NUMBER = Pattern.compile("\\s*(\\d{1,18})");

  private String prefix(IsolationLevel isolation) {
    return CdcStatements.sourceReadPrefix(config.lockTimeoutMs().orElse(-1), isolation);
  }

  private static void requireKeyColumns(String schema, String table, List<String> keyColumns) {
    SqlIdentifiers.name(schema);
    SqlIdentifiers.name(table);
    if (keyColumns.isEmpty()) {
      throw new IllegalArgumentException(
          "Key queries of " + schema + "." + table + " need at least one key column");
    }
    keyColumns.forEach(SqlIdentifiers::name);
  }

  /** The named columns of the source table, as SQL Server spells them. */
  private static List<SourceColumn> keyColumns(
      Connection c, String schema, String table, List<String> keyColumns) throws SQLException {
    Map<String, SourceColumn> columns = sourceColumns(c, schema, table);
    List<SourceColumn> out = new ArrayList<>();
    for (String k : keyColumns) {
      SourceColumn col = columns.get(k.toLowerCase(Locale.ROOT));
      if (col == null) {
        throw new CdcException(
            "Invalid column name '" + k + "' in table '" + schema + "." + table + "'");
      }
      out.add(col);
    }
    return out;
  }

  private static List<String> columnNames(List<SourceColumn> columns) {
    List<String> out = new ArrayList<>();
    for (SourceColumn col : columns) {
      out.add(col.name());
    }
    return out;
  }

  private static List<Object> tuple(ResultSet rs, int n) throws SQLException {
    String[] types = types(rs);
    List<Object> out = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      out.add(JdbcValues.read(rs, i + 1, types[i]));
    }
    return Collections.unmodifiableList(out);
  }

  /**
   * {@code [min, max]} of an integer column's type.
   *
   * @param needs what the caller needs, for the message ({@code slices need tinyint, ...})
   * @throws IllegalArgumentException for another type: {@code Key column '<k>' has type <t>;
   *     <needs>}
   */
  private static long[] integerRange(SourceColumn k, String needs) {
    return switch (k.type().toLowerCase(Locale.ROOT)) {
      case "tinyint" -> new long[] {0, 255};
      case "smallint" -> new long[] {Short.MIN_VALUE, Short.MAX_VALUE};
      case "int" -> new long[] {Integer.MIN_VALUE, Integer.MAX_VALUE};
      case "bigint" -> new long[] {Long.MIN_VALUE, Long.MAX_VALUE};
      default ->
          throw new IllegalArgumentException(
              "Key column '" + k.name() + "' has type " + k.type() + "; " + needs);
    };
  }

  /** Closes the connection; idempotent. Later calls raise {@link IllegalStateException}. */
  @Override
  public void close() {
    closed = true;
    dropConnection();
  }

  @Override
  public String toString() {
    return "SqlCdcClient" + config.describe();
  }

  // ---- calls and retries ------------------------------------------------------------------------

  /** A unit of work on the connection. */
  @FunctionalInterface
  private interface Work<T> {
    T run(Connection c) throws SQLException;
  }

  /**
   * Runs {@code work} on the connection, retrying transient errors on a new connection.
   *
   * @throws CdcException wrapping a database error that is not transient, or the last transient one
   *     after the retries
   */
  private <T> T call(String operation, Work<T> work) {
    if (closed) {
      throw new IllegalStateException("This SqlCdcClient is closed");
    }
    BackOff backOff = retry.backOff();
    for (int attempt = 1; ; attempt++) {
      try {
        return work.run(connection());
      } catch (SQLException e) {
        if (!TransientErrors.isTransient(e)) {
          throw failure(operation, e);
        }
        dropConnection();
        long waited;
        try {
          waited = retry.waitBeforeRetry(backOff);
        } catch (InterruptedException interrupted) {
          Thread.currentThread().interrupt();
          throw failure(operation, e);
        }
        if (waited == BackOff.STOP) {
          throw failure(operation, e);
        }
        LOG.warn(
            "{} failed: {}; retry {} of {} on a new connection after {} ms",
            operation,
            describe(e),
            attempt,
            RetryPolicy.MAX_RETRIES,
            waited);
      }
    }
  }

  private Connection connection() throws SQLException {
    if (connection == null) {
      connection = connector.connect(config);
    }
    return connection;
  }

  private void dropConnection() {
    Connection c = connection;
    connection = null;
    if (c != null) {
      try {
        c.close();
      } catch (SQLException e) {
        LOG.debug("Closing a SQL Server connection failed: {}", describe(e));
      }
    }
  }

  private static CdcException failure(String operation, SQLException e) {
    return new CdcException(operation + " failed: " + describe(e), e);
  }

  private static String describe(SQLException e) {
    return e.getMessage()
        + " (SQL Server error "
        + e.getErrorCode()
        + ", SQLSTATE "
        + e.getSQLState()
        + ")";
  }

  // ---- helpers ----------------------------------------------------------------------------------

  private static Optional<Lsn> lsnQuery(Connection c, String sql, String... parameters)
      throws SQLException {
    Optional<Lsn> lsn = lsnQueryAllowingZero(c, sql, parameters);
    return lsn.isPresent() && lsn.get().isZero() ? Optional.empty() : lsn;
  }

  private static Optional<Lsn> lsnQueryAllowingZero(Connection c, String sql, String... parameters)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      for (int i = 0; i < parameters.length; i++) {
        ps.setString(i + 1, parameters[i]);
      }
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          return Optional.empty();
        }
        String text = rs.getString(1);
        return text == null ? Optional.empty() : Optional.of(Lsn.parse(text));
      }
    }
  }

  /** The commit whose mapping row is exactly {@code lsn}, in UTC. */
  private Optional<Commit> commitAt(Connection c, Lsn lsn) throws SQLException {
    for (Commit commit : commitsBetween(c, lsn, lsn)) {
      if (commit.lsn().equals(lsn)) {
        return Optional.of(commit);
      }
    }
    return Optional.empty();
  }

  /** The mapping rows of {@code [lo, hi]} with UTC commit times, in LSN order. */
  private List<Commit> commitsBetween(Connection c, Lsn lo, Lsn hi) throws SQLException {
    CdcStatements.CommitTimeSql how = commitTimeSql(c, lo, hi);
    String sql =
        how.perRowZone() != null
            ? CdcStatements.commitTimesNamed(how.perRowZone())
            : CdcStatements.commitTimes(how.offsetMinutes());
    List<Commit> out = new ArrayList<>();
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setString(1, lo.toString());
      ps.setString(2, hi.toString());
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          out.add(
              new Commit(Lsn.parse(rs.getString(1)), utc(rs.getObject(2, LocalDateTime.class))));
        }
      }
    }
    return out;
  }

  /** How the commit times of {@code [lo, hi]} are converted with this client's clock. */
  private CdcStatements.CommitTimeSql commitTimeSql(Connection c, Lsn lo, Lsn hi)
      throws SQLException {
    ServerClock server = clock(c);
    if (server.zone() == null) {
      return CdcStatements.CommitTimeSql.offset(server.offsetMinutes());
    }
    try (PreparedStatement ps = c.prepareStatement(CdcStatements.rangeOffset(server.zone()))) {
      ps.setString(1, lo.toString());
      ps.setString(2, hi.toString());
      try (ResultSet rs = ps.executeQuery()) {
        if (rs.next()) {
          int offset = rs.getInt(1);
          if (!rs.wasNull()) {
            return CdcStatements.CommitTimeSql.offset(offset);
          }
        }
      }
    }
    return CdcStatements.CommitTimeSql.perRow(server.zone());
  }

  /** The clock, resolved once per client (docs/scenarios.md C237, C238). */
  private ServerClock clock(Connection c) throws SQLException {
    if (clock != null) {
      return clock;
    }
    SourceTimeZone setting = config.sourceTimeZone();
    if (!setting.isAuto()) {
      String name = setting.name().orElseThrow();
      clock = name.equals("UTC") ? ServerClock.UTC : ServerClock.named(name);
      return clock;
    }
    int major;
    int edition;
    try (PreparedStatement ps = c.prepareStatement(CdcStatements.SERVER_VERSION);
        ResultSet rs = ps.executeQuery()) {
      rs.next();
      major = rs.getInt(1);
      edition = rs.getInt(2);
    }
    if (major >= 16 || edition == 5 || edition == 8) {
      String zone;
      try (PreparedStatement ps = c.prepareStatement(CdcStatements.CURRENT_TIMEZONE);
          ResultSet rs = ps.executeQuery()) {
        rs.next();
        zone = rs.getString(1);
      }
      SqlIdentifiers.timeZone(zone);
      clock = zone.equalsIgnoreCase("UTC") ? ServerClock.UTC : ServerClock.named(zone);
      LOG.info(
          "SQL Server reports its time zone as '{}'; commit times are converted from it", zone);
      return clock;
    }
    int offset;
    try (PreparedStatement ps = c.prepareStatement(CdcStatements.SERVER_OFFSET);
        ResultSet rs = ps.executeQuery()) {
      rs.next();
      offset = rs.getInt(1);
    }
    clock = ServerClock.fixed(offset);
    LOG.warn(
        "SQL Server {} cannot name its time zone (CURRENT_TIMEZONE_ID() needs 2022 or Azure SQL);"
            + " commit times are converted with its current offset {}, which is wrong across"
            + " daylight saving changes: set sourceTimeZone to the server's Windows zone name",
        major,
        clock);
    return clock;
  }

  private static Instant utc(LocalDateTime utcWallTime) {
    if (utcWallTime == null) {
      throw new CdcException("A commit time read as NULL");
    }
    return utcWallTime.toInstant(ZoneOffset.UTC);
  }

  /** The exact name of a capture instance (exact, then ignoring case), cached per client. */
  private String resolve(String captureInstance) {
    SqlIdentifiers.captureInstance(captureInstance);
    String known = resolvedNames.get(captureInstance);
    if (known != null) {
      return known;
    }
    List<CaptureInstance> all = call("Listing capture instances", this::help);
    CaptureInstance found = find(all, captureInstance);
    if (found == null) {
      throw new CaptureInstanceNotFoundError(captureInstance, names(all));
    }
    resolvedNames.put(captureInstance, found.name());
    return found.name();
  }

  private CaptureInstanceNotFoundError notFound(String captureInstance) {
    return new CaptureInstanceNotFoundError(
        captureInstance, names(call("Listing capture instances", this::help)));
  }

  private static CaptureInstance find(List<CaptureInstance> all, String name) {
    for (CaptureInstance i : all) {
      if (i.name().equals(name)) {
        return i;
      }
    }
    List<CaptureInstance> matches = new ArrayList<>();
    for (CaptureInstance i : all) {
      if (i.name().equalsIgnoreCase(name)) {
        matches.add(i);
      }
    }
    if (matches.size() > 1) {
      throw new CdcException(
          "Capture instance '"
              + name
              + "' matches "
              + matches.stream().map(i -> "'" + i.name() + "'").toList()
              + " ignoring case; use the exact name");
    }
    return matches.isEmpty() ? null : matches.get(0);
  }

  private static List<String> names(List<CaptureInstance> all) {
    return all.stream().map(CaptureInstance::name).toList();
  }

  /** Every capture instance {@code sys.sp_cdc_help_change_data_capture} lists. */
  private List<CaptureInstance> help(Connection c) throws SQLException {
    List<CaptureInstance> out = new ArrayList<>();
    try (PreparedStatement ps = c.prepareStatement(CdcStatements.HELP_CHANGE_DATA_CAPTURE);
        ResultSet rs = ps.executeQuery()) {
      while (rs.next()) {
        byte[] start = rs.getBytes("start_lsn");
        Optional<Lsn> startLsn = start == null ? Optional.empty() : Optional.of(Lsn.ofBytes(start));
        out.add(
            new CaptureInstance(
                rs.getString("capture_instance"),
                rs.getString("source_schema"),
                rs.getString("source_table"),
                startLsn.filter(l -> !l.isZero()),
                Optional.ofNullable(rs.getObject("create_date", LocalDateTime.class)),
                indexColumns(rs.getString("index_column_list"))));
      }
    }
    return out;
  }

  /**
   * The names of {@code index_column_list}, e.g. {@code [order_id], [line]}.
   *
   * @param list the list, or null
   * @return the names in order; empty for null
   */
  static List<String> indexColumns(String list) {
    List<String> out = new ArrayList<>();
    if (list == null) {
      return out;
    }
    Matcher m = BRACKETED.matcher(list);
    while (m.find()) {
      out.add(m.group(1).replace("]]", "]"));
    }
    return out;
  }

  private List<CapturedColumn> captured(Connection c, String name) throws SQLException {
    List<CapturedColumn> columns = new ArrayList<>();
    List<Integer> ids = new ArrayList<>();
    String schema = null;
    String table = null;
    try (PreparedStatement ps = c.prepareStatement(CdcStatements.CAPTURED_COLUMNS)) {
      ps.setString(1, name);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          schema = rs.getString("source_schema");
          table = rs.getString("source_table");
          ids.add(rs.getInt("column_id"));
          columns.add(
              new CapturedColumn(
                  rs.getString("column_name"),
                  rs.getInt("column_ordinal"),
                  capturedType(
                      rs.getString("data_type"),
                      toInteger(rs.getObject("character_maximum_length")),
                      toInteger(rs.getObject("numeric_precision")),
                      toInteger(rs.getObject("numeric_scale")),
                      toInteger(rs.getObject("datetime_precision"))),
                  false));
        }
      }
    }
    if (schema != null) {
      Set<Integer> computed = new HashSet<>();
      for (SourceColumn col : sourceColumns(c, schema, table).values()) {
        if (col.computed()) {
          computed.add(col.id());
        }
      }
      for (int i = 0; i < columns.size(); i++) {
        CapturedColumn col = columns.get(i);
        if (computed.contains(ids.get(i))) {
          columns.set(i, new CapturedColumn(col.name(), col.ordinal(), col.type(), true));
        }
      }
    }
    columns.sort(Comparator.comparingInt(CapturedColumn::ordinal));
    return columns;
  }

  private static Integer toInteger(Object value) {
    return value == null ? null : ((Number) value).intValue();
  }

  /**
   * A captured column's type from {@code sys.sp_cdc_get_captured_columns}.
   *
   * @param dataType {@code data_type}
   * @param maxLength {@code character_maximum_length} (-1 for {@code max}), or null
   * @param precision {@code numeric_precision}, or null
   * @param scale {@code numeric_scale}, or null
   * @param datetimePrecision {@code datetime_precision}, or null
   * @return {@code varchar(20)}, {@code decimal(18,2)}, {@code datetime2(7)}, {@code int}, ...
   */
  static SqlServerType capturedType(
      String dataType,
      Integer maxLength,
      Integer precision,
      Integer scale,
      Integer datetimePrecision) {
    String name = dataType.strip().toLowerCase(Locale.ROOT);
    switch (name) {
      case "decimal":
      case "numeric":
        return SqlServerType.of(name, precision, scale);
      case "char":
      case "varchar":
      case "nchar":
      case "nvarchar":
      case "binary":
      case "varbinary":
        return new SqlServerType(name, maxLength, null);
      case "datetime2":
      case "datetimeoffset":
      case "time":
        return new SqlServerType(name, datetimePrecision, null);
      default:
        return SqlServerType.of(name);
    }
  }

  /** A row of {@code sys.columns}. */
  private record SourceColumn(
      int id,
      String name,
      String type,
      int maxLength,
      int precision,
      int scale,
      String collation,
      boolean computed) {
    KeyRangeSql.KeyColumn keyColumn() {
      return KeyRangeSql.KeyColumn.of(name, type, maxLength, precision, scale, collation);
    }
  }

  /** The source table's columns by lower-case name. */
  private static Map<String, SourceColumn> sourceColumns(Connection c, String schema, String table)
      throws SQLException {
    Map<String, SourceColumn> out = new HashMap<>();
    try (PreparedStatement ps = c.prepareStatement(CdcStatements.SOURCE_COLUMNS)) {
      ps.setString(1, SqlIdentifiers.quote(schema) + "." + SqlIdentifiers.quote(table));
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          SourceColumn col =
              new SourceColumn(
                  rs.getInt(1),
                  rs.getString(2),
                  rs.getString(3),
                  rs.getInt(4),
                  rs.getInt(5),
                  rs.getInt(6),
                  rs.getString(7),
                  rs.getBoolean(8));
          out.put(col.name().toLowerCase(Locale.ROOT), col);
        }
      }
    }
    if (out.isEmpty()) {
      throw new CdcException(
          "Invalid object name '"
              + schema
              + "."
              + table
              + "' (no such table, or the login may not SELECT it)");
    }
    return out;
  }

  private static PreparedStatement prepareStreaming(Connection c, String sql) throws SQLException {
    PreparedStatement ps =
        c.prepareStatement(sql, ResultSet.TYPE_FORWARD_ONLY, ResultSet.CONCUR_READ_ONLY);
    ps.setFetchSize(FETCH_SIZE);
    return ps;
  }

  /**
   * Executes a read of a change table; a refusal for lack of {@code SELECT} becomes {@link
   * ChangeTablePermissionError} (docs/scenarios.md C229): when the error is SQL Server's 229 or
   * names the change table (a localized message), and {@code HAS_PERMS_BY_NAME} says 0. A
   * connection error is never checked, and a failed check leaves the original error.
   */
  private ResultSet executeOnChangeTable(
      Connection c, String captureInstance, String sql, String... parameters) throws SQLException {
    PreparedStatement ps = prepareStreaming(c, sql);
    try {
      for (int i = 0; i < parameters.length; i++) {
        ps.setString(i + 1, parameters[i]);
      }
      return ps.executeQuery();
    } catch (SQLException e) {
      closeQuietly(ps);
      Optional<String> user = deniedUser(c, captureInstance, e);
      if (user.isPresent()) {
        throw new ChangeTablePermissionError(captureInstance, user.get(), e);
      }
      throw e;
    }
  }

  /**
   * The database user refused {@code SELECT} on the change table, when {@code e} is that refusal.
   */
  static Optional<String> deniedUser(Connection c, String captureInstance, SQLException e) {
    String state = e.getSQLState();
    if (state != null && state.startsWith("08")) {
      return Optional.empty();
    }
    String message = e.getMessage() == null ? "" : e.getMessage();
    boolean looksDenied =
        e.getErrorCode() == PERMISSION_DENIED
            || message
                .toLowerCase(Locale.ROOT)
                .contains((captureInstance + "_CT").toLowerCase(Locale.ROOT));
    if (!looksDenied) {
      return Optional.empty();
    }
    try (PreparedStatement ps = c.prepareStatement(CdcStatements.CHANGE_TABLE_PERMISSION)) {
      ps.setString(1, SqlIdentifiers.changeTable(captureInstance));
      try (ResultSet rs = ps.executeQuery()) {
        if (rs.next()) {
          int allowed = rs.getInt(1);
          if (!rs.wasNull() && allowed == 0) {
            return Optional.ofNullable(rs.getString(2));
          }
        }
      }
    } catch (SQLException | RuntimeException check) {
      e.addSuppressed(check);
    }
    return Optional.empty();
  }

  private static String[] types(ResultSet rs) throws SQLException {
    ResultSetMetaData md = rs.getMetaData();
    String[] types = new String[md.getColumnCount()];
    for (int i = 0; i < types.length; i++) {
      types[i] = JdbcValues.baseType(md.getColumnTypeName(i + 1));
    }
    return types;
  }

  private static void closeQuietly(AutoCloseable c) {
    try {
      c.close();
    } catch (Exception e) {
      LOG.debug("Closing a statement failed", e);
    }
  }

  /** Streams the rows of an open result set; closes it and its statement at the end. */
  private abstract static class ResultIterator<T> implements CloseableIterator<T> {
    private final ResultSet rs;
    private final String operation;
    private T next;
    private boolean done;

    ResultIterator(ResultSet rs, String operation) {
      this.rs = rs;
      this.operation = operation;
    }

    abstract T row(ResultSet r) throws SQLException;

    @Override
    public boolean hasNext() {
      if (next == null && !done) {
        try {
          if (rs.next()) {
            next = row(rs);
          } else {
            close();
          }
        } catch (SQLException e) {
          close();
          throw failure(operation, e);
        }
      }
      return next != null;
    }

    @Override
    public T next() {
      if (!hasNext()) {
        throw new NoSuchElementException();
      }
      T out = next;
      next = null;
      return out;
    }

    @Override
    public void close() {
      if (done) {
        return;
      }
      done = true;
      try {
        java.sql.Statement st = rs.getStatement();
        rs.close();
        if (st != null) {
          st.close();
        }
      } catch (SQLException e) {
        LOG.debug("Closing a result set failed: {}", describe(e));
      }
    }
  }

  /** Empty iterators. */
  private static final class CloseableIterators {
    static <T> CloseableIterator<T> empty() {
      return new CloseableIterator<>() {
        @Override
        public boolean hasNext() {
          return false;
        }

        @Override
        public T next() {
          throw new NoSuchElementException();
        }

        @Override
        public void close() {}
      };
    }
  }
}
