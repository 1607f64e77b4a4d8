package org.lakecdc.io.mssqlcdc.client;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.io.mssqlcdc.schema.CapturedColumn;
import org.lakecdc.io.mssqlcdc.time.CommitTimeConverter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@link CdcClient} over SQL Server: the only code that runs T-SQL, every statement taken from
 * {@link CdcStatements}, one method each, over one JDBC connection (Microsoft's mssql-jdbc) taken
 * from the source's pool at the first call and given back by {@link #close()} ({@link SqlSession}).
 * Source-table reads are {@link SourceTableReads}', capture-instance metadata {@link
 * CaptureInstanceQueries}'. Works with SQL Server 2016 SP1 and later, Azure SQL Database and Azure
 * SQL Managed Instance. It reads only: it never writes to the source database and never creates or
 * drops capture instances.
 *
 * <h2>Commit times</h2>
 *
 * {@code cdc.lsn_time_mapping.tran_end_time} is the server's local time; it is converted to UTC on
 * the server (docs/sql-server.md "Connection settings") with the clock resolved once per client
 * from {@link SqlCdcClientFactory#sourceTimeZone()}: {@code UTC} as is; a named zone per LSN range
 * with one {@code DATEADD} when no daylight-saving change is near, else per commit with {@code AT
 * TIME ZONE} and the fall-back repeated-hour rule; {@code auto} reads {@code CURRENT_TIMEZONE_ID()}
 * on SQL Server 2022+ and Azure SQL, and otherwise falls back to the server's current UTC offset
 * with a warning (exact only in zones without daylight saving). Every time this client returns is
 * UTC.
 *
 * <h2>Errors and retries</h2>
 *
 * A transient error ({@link TransientErrors}: deadlock victim 1205, Azure SQL transient errors,
 * dropped connections) gives the connection back and runs the call again on a new one after a
 * backoff ({@link RetryPolicy}: at most 3 retries), logging a warning each time; streamed reads are
 * retried only until their query has started, after which the runner retries the bundle. A
 * change-table read refused for lack of {@code SELECT} raises {@link ChangeTablePermissionError}
 * with the exact GRANT. An unknown capture instance raises {@link CaptureInstanceNotFoundError};
 * other database errors are {@link CdcException}s naming the operation, the SQL Server error number
 * and SQLSTATE. The password is never part of any message.
 *
 * <p>Not thread-safe: one client per thread, as {@link CdcClient} says. Streamed results ({@link
 * #readChanges}, {@link #readTable}) hold the connection until closed; close them before the next
 * call.
 */
final class SqlCdcClient extends SourceTableReads {
  private static final Logger LOG = LoggerFactory.getLogger(SqlCdcClient.class);

  /** SQL Server error 229: "The %ls permission was denied on the object '%.*ls' ...". */
  static final int PERMISSION_DENIED = 229;

  /** A UTC instant as the text parameter of a look-up by time: ISO 8601, whole seconds. */
  private static final DateTimeFormatter SECONDS =
      DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss", Locale.ROOT).withZone(ZoneOffset.UTC);

  private final SqlCdcClientFactory settings;
  private final Map<String, String> resolvedNames = new HashMap<>();
  private ServerClock clock;

  /**
   * A client over the source {@code settings} describe, taking its connection from {@code
   * connector} at the first call.
   *
   * @param settings the source's client settings (server clock, lock timeout)
   * @param connector where the connection comes from
   * @param retry how transient errors are retried
   */
  SqlCdcClient(SqlCdcClientFactory settings, SqlSession.Connector connector, RetryPolicy retry) {
    super(new SqlSession(connector, retry, settings.lockTimeoutMs().orElse(-1)));
    this.settings = Objects.requireNonNull(settings, "settings");
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
    List<CaptureInstance> all = call("Listing capture instances", CaptureInstanceQueries::help);
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
    return call(
        "Reading the captured columns of '" + name + "'",
        c -> CaptureInstanceQueries.captured(c, name));
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
          String[] types = SqlSession.types(rs);
          return new SqlSession.ResultIterator<ChangeRow>(
              rs, "Reading the change rows of " + range) {
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

  /**
   * Gives the connection back to its pool; idempotent. Later calls raise {@link
   * IllegalStateException}.
   */
  @Override
  public void close() {
    session.close();
  }

  @Override
  public String toString() {
    return "SqlCdcClient" + settings.describe();
  }

  private <T> T call(String operation, SqlSession.Work<T> work) {
    return session.call(operation, work);
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
    if (clock == null) {
      clock = ServerClock.resolve(c, settings.sourceTimeZone());
    }
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
    List<CaptureInstance> all = call("Listing capture instances", CaptureInstanceQueries::help);
    CaptureInstance found = find(all, captureInstance);
    if (found == null) {
      throw new CaptureInstanceNotFoundError(captureInstance, names(all));
    }
    resolvedNames.put(captureInstance, found.name());
    return found.name();
  }

  private CaptureInstanceNotFoundError notFound(String captureInstance) {
    return new CaptureInstanceNotFoundError(
        captureInstance, names(call("Listing capture instances", CaptureInstanceQueries::help)));
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

  /**
   * Executes a read of a change table; a refusal for lack of {@code SELECT} becomes {@link
   * ChangeTablePermissionError} (docs/scenarios.md C229): when the error is SQL Server's 229 or
   * names the change table (a localized message), and {@code HAS_PERMS_BY_NAME} says 0. A
   * connection error is never checked, and a failed check leaves the original error.
   */
  private ResultSet executeOnChangeTable(
      Connection c, String captureInstance, String sql, String... parameters) throws SQLException {
    PreparedStatement ps = SqlSession.prepareStreaming(c, sql);
    try {
      for (int i = 0; i < parameters.length; i++) {
        ps.setString(i + 1, parameters[i]);
      }
      return ps.executeQuery();
    } catch (SQLException e) {
      SqlSession.closeQuietly(ps);
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
}
