package org.lakecdc.io.mssqlcdc.client;

/**
 * The SQL Server clock a {@link SqlCdcClient} converts commit times with (docs/sql-server.md
 * "Connection settings"): UTC, a fixed offset (the pre-2022 fallback of {@code
 * sourceTimeZone=auto}) or a named Windows zone.
 *
 * @param zone the checked Windows zone name, or null for UTC and fixed offsets
 * @param offsetMinutes minutes east of UTC for a fixed offset (0 for UTC)
 */
record ServerClock(String zone, int offsetMinutes) {
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
