package org.lakecdc.io.mssqlcdc.client;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The SQL Server clock a {@link SqlCdcClient} converts commit times with (docs/sql-server.md
 * "Connection settings"): UTC, a fixed offset (the pre-2022 fallback of {@code
 * sourceTimeZone=auto}) or a named Windows zone.
 *
 * @param zone the checked Windows zone name, or null for UTC and fixed offsets
 * @param offsetMinutes minutes east of UTC for a fixed offset (0 for UTC)
 */
record ServerClock(String zone, int offsetMinutes) {
  private static final Logger LOG = LoggerFactory.getLogger(ServerClock.class);

  /** The UTC clock. */
  static final ServerClock UTC = new ServerClock(null, 0);

  /** A named zone, checked by {@link SqlIdentifiers#timeZone(String)}. */
  static ServerClock named(String zone) {
    return new ServerClock(SqlIdentifiers.timeZone(zone), 0);
  }

  /** The fixed-offset fallback. */
  static ServerClock fixed(int offsetMinutes) {
    return new ServerClock(null, offsetMinutes);
  }

  /**
   * The clock of {@code setting}: {@code UTC} or a named zone as given; for {@code auto}, the zone
   * SQL Server 2022+ and Azure SQL name ({@code CURRENT_TIMEZONE_ID()}), else the server's current
   * UTC offset with a warning (exact only in zones without daylight saving).
   *
   * @param c an open connection, for {@code auto}
   * @param setting the configured {@code sourceTimeZone}
   * @return the clock
   * @throws SQLException when a query of {@code auto} fails
   */
  static ServerClock resolve(Connection c, SourceTimeZone setting) throws SQLException {

    if (!setting.isAuto()) {
      String name = setting.name().orElseThrow();
      return name.equals("UTC") ? UTC : named(name);
    }
    int[] version =
        oneRow(c, CdcStatements.SERVER_VERSION, rs -> new int[] {rs.getInt(1), rs.getInt(2)});
    int major = version[0];
    int edition = version[1];
    if (major >= 16 || edition == 5 || edition == 8) {
      String zone = oneRow(c, CdcStatements.CURRENT_TIMEZONE, rs -> rs.getString(1));
      SqlIdentifiers.timeZone(zone);
      ServerClock clock = zone.equalsIgnoreCase("UTC") ? UTC : named(zone);
      LOG.info(
          "SQL Server reports its time zone as '{}'; commit times are converted from it", zone);
      return clock;
    }
    int offset = oneRow(c, CdcStatements.SERVER_OFFSET, rs -> rs.getInt(1));
    ServerClock clock = fixed(offset);
    LOG.warn(
        "SQL Server {} cannot name its time zone (CURRENT_TIMEZONE_ID() needs 2022 or Azure SQL);"
            + " commit times are converted with its current offset {}, which is wrong across"
            + " daylight saving changes: set sourceTimeZone to the server's Windows zone name",
        major,
        clock);
    return clock;
  }

  /** Reads the current row of a result set. */
  @FunctionalInterface
  private interface RowRead<T> {
    T read(ResultSet rs) throws SQLException;
  }

  /** Runs a query that answers one row and reads that row. */
  private static <T> T oneRow(Connection c, String sql, RowRead<T> read) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql);
        ResultSet rs = ps.executeQuery()) {
      rs.next();
      return read.read(rs);
    }
  }

  /**
   * The clock's name as the reference reports it.
   *
   * @return the zone name, {@code UTC}, or {@code UTC-03:00} for a fixed offset
   */
  @Override
  public String toString() {
    if (zone != null) {
      return zone;
    }
    if (offsetMinutes == 0) {
      return "UTC";
    }
    int abs = Math.abs(offsetMinutes);
    return String.format(
        java.util.Locale.ROOT, "UTC%s%02d:%02d", offsetMinutes < 0 ? "-" : "+", abs / 60, abs % 60);
  }
}
