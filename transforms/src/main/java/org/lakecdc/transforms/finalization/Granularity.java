package org.lakecdc.transforms.finalization;

import java.time.LocalDateTime;
import java.time.temporal.ChronoUnit;
import java.util.Locale;

/** The period size of the completeness verdict (docs/tables.md "Control"). */
public enum Granularity {
  MINUTE(ChronoUnit.MINUTES),
  HOUR(ChronoUnit.HOURS),
  DAY(ChronoUnit.DAYS);

  private final ChronoUnit unit;

  Granularity(ChronoUnit unit) {
    this.unit = unit;
  }

  /**
   * The start of the period that contains {@code utc}: seconds and below zeroed for {@code minute},
   * minutes too for {@code hour}, hours too for {@code day}.
   */
  public LocalDateTime truncate(LocalDateTime utc) {
    return utc.truncatedTo(unit);
  }

  /** The start of the period after the one that contains {@code utc}. */
  public LocalDateTime nextPeriod(LocalDateTime utc) {
    return truncate(utc).plus(1, unit);
  }

  /**
   * Parses {@code minute}, {@code hour} or {@code day}, any case.
   *
   * @throws IllegalArgumentException {@code granularity must be 'minute', 'hour' or 'day', not
   *     '<value>'}
   */
  public static Granularity parse(String value) {
    String v = value == null ? "" : value.strip().toLowerCase(Locale.ROOT);
    for (Granularity g : values()) {
      if (g.name().toLowerCase(Locale.ROOT).equals(v)) {
        return g;
      }
    }
    throw new IllegalArgumentException(
        "granularity must be 'minute', 'hour' or 'day', not '" + value + "'");
  }

  @Override
  public String toString() {
    return name().toLowerCase(Locale.ROOT);
  }
}
