package org.lakecdc.io.mssqlcdc.client;

import java.io.Serializable;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;

/**
 * The {@code sourceTimeZone} option (docs/sql-server.md "Connection settings"): the zone of the SQL
 * Server clock that writes {@code cdc.lsn_time_mapping.tran_end_time}, a zone-less local time. The
 * T-SQL client converts commit times to UTC with it; captured {@code datetime} columns are never
 * converted.
 *
 * <ul>
 *   <li>{@link #auto()}: SQL Server 2022 and later ({@code SERVERPROPERTY('ProductMajorVersion') >=
 *       16}) and Azure SQL ({@code EngineEdition} 5 or 8) report their zone by name ({@code
 *       CURRENT_TIMEZONE_ID()}, Microsoft docs "CURRENT_TIMEZONE_ID (Transact-SQL)"); older servers
 *       fall back to their current UTC offset ({@code DATEPART(TZOFFSET, SYSDATETIMEOFFSET())}),
 *       exact only for zones without daylight saving, with a warning.
 *   <li>{@link #utc()}: the clock is UTC; commit times are used as they are.
 *   <li>{@link #named(String)}: a Windows zone name ({@code sys.time_zone_info}), converted per
 *       commit with {@code AT TIME ZONE} (SQL Server 2016 and later; Microsoft docs "AT TIME ZONE
 *       (Transact-SQL)") and the fall-back repeated-hour rule of docs/sql-server.md "Connection
 *       settings".
 * </ul>
 *
 * <p>Immutable and serializable (it travels in {@link SqlCdcClientFactory}).
 */
public final class SourceTimeZone implements Serializable {
  private static final long serialVersionUID = 1L;

  private static final SourceTimeZone AUTO = new SourceTimeZone(null, true);
  private static final SourceTimeZone UTC = new SourceTimeZone("UTC", false);

  /** The zone name, or null for {@link #auto()}. */
  private final String name;

  private final boolean auto;

  private SourceTimeZone(String name, boolean auto) {
    this.name = name;
    this.auto = auto;
  }

  /**
   * Detect the server's zone (the default).
   *
   * @return the {@code auto} setting
   */
  public static SourceTimeZone auto() {
    return AUTO;
  }

  /**
   * The server's clock is UTC.
   *
   * @return the {@code UTC} setting
   */
  public static SourceTimeZone utc() {
    return UTC;
  }

  /**
   * A Windows time-zone name, e.g. {@code E. South America Standard Time}; {@code UTC} (any case)
   * is {@link #utc()}.
   *
   * @param windowsZoneName the name as {@code sys.time_zone_info.name} spells it
   * @return the setting
   * @throws IllegalArgumentException {@code Invalid sourceTimeZone} for characters outside {@code
   *     [A-Za-z0-9 ._+-/()]}
   */
  public static SourceTimeZone named(String windowsZoneName) {
    SqlIdentifiers.timeZone(windowsZoneName);
    if (windowsZoneName.equalsIgnoreCase("UTC")) {
      return UTC;
    }
    return new SourceTimeZone(windowsZoneName, false);
  }

  /**
   * Parses the option: {@code auto} (any case), {@code UTC} or a Windows zone name; surrounding
   * spaces are ignored, any other character outside {@code [A-Za-z0-9 ._+-/()]} is refused.
   *
   * @param text the option value
   * @return the setting
   * @throws IllegalArgumentException {@code Invalid sourceTimeZone: '<text>' (...)}
   */
  public static SourceTimeZone parse(String text) {
    Objects.requireNonNull(text, "sourceTimeZone");
    String value = text.strip();
    if (value.toLowerCase(Locale.ROOT).equals("auto")) {
      return AUTO;
    }
    // The whole text is checked (a line break is refused, not stripped); then outer blanks go.
    SqlIdentifiers.timeZone(text);
    return named(value);
  }

  /**
   * Whether the zone is detected from the server.
   *
   * @return true for {@link #auto()}
   */
  public boolean isAuto() {
    return auto;
  }

  /**
   * The zone name.
   *
   * @return {@code UTC} or the Windows zone name; empty for {@link #auto()}
   */
  public Optional<String> name() {
    return Optional.ofNullable(name);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof SourceTimeZone
        && auto == ((SourceTimeZone) o).auto
        && Objects.equals(name, ((SourceTimeZone) o).name);
  }

  @Override
  public int hashCode() {
    return Objects.hash(name, auto);
  }

  /**
   * The option value.
   *
   * @return {@code auto}, {@code UTC} or the zone name
   */
  @Override
  public String toString() {
    return auto ? "auto" : name;
  }

  private Object readResolve() {
    return auto ? AUTO : "UTC".equals(name) ? UTC : this;
  }
}
