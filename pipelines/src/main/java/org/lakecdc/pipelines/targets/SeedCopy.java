package org.lakecdc.pipelines.targets;

import java.time.DateTimeException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.Objects;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;

/**
 * A new target's seed from an existing copy of the source table (docs/options.md "Seeding from a
 * copy"): the options {@code --seedTable}, {@code --seedAsOf} and {@code
 * --seedAllowMissingColumns}. Exactly one of {@link #asOf()} and {@link #asOfLsn()} is set.
 *
 * @param table the path or URI of a Delta table holding the copy
 * @param asOf the UTC instant when the copy started being read, or null when an LSN is given
 * @param asOfLsn an LSN recorded before the copy started being read, or null when a time is given
 * @param allowMissingColumns whether captured columns the copy lacks are seeded as NULL (else
 *     refused)
 */
public record SeedCopy(
    String table, @Nullable Instant asOf, @Nullable Lsn asOfLsn, boolean allowMissingColumns) {
  public SeedCopy {
    Objects.requireNonNull(table, "table");
    if ((asOf == null) == (asOfLsn == null)) {
      throw new IllegalArgumentException("a seed needs exactly one of an as_of time or an LSN");
    }
  }

  /**
   * Parses the options.
   *
   * @param table {@code --seedTable}
   * @param asOf {@code --seedAsOf}: an ISO-8601 instant in UTC ({@code 2026-09-28T13:52:00Z}); one
   *     with an offset ({@code 2026-09-28T10:52:00-03:00}) is converted to UTC; or an LSN {@code
   *     0x...} (up to 20 hexadecimal digits)
   * @param allowMissingColumns {@code --seedAllowMissingColumns}
   * @return the seed
   * @throws IllegalArgumentException naming the option, the value and the accepted forms
   */
  public static SeedCopy parse(String table, @Nullable String asOf, boolean allowMissingColumns) {
    if (table == null || table.isBlank()) {
      throw new IllegalArgumentException("--seedTable must not be empty");
    }
    if (asOf == null || asOf.isBlank()) {
      throw new IllegalArgumentException(
          "--seedTable needs --seedAsOf: the UTC instant when the copy started being read (e.g."
              + " 2026-09-28T13:52:00Z) or an LSN such as 0x0000002A000001000001 recorded before"
              + " that");
    }
    String text = asOf.strip();
    if (text.startsWith("0x") || text.startsWith("0X")) {
      try {
        return new SeedCopy(table, null, Lsn.parseCanonical(text), allowMissingColumns);
      } catch (IllegalArgumentException e) {
        throw bad(asOf);
      }
    }
    try {
      return new SeedCopy(table, OffsetDateTime.parse(text).toInstant(), null, allowMissingColumns);
    } catch (DateTimeException e) {
      throw bad(asOf);
    }
  }

  private static IllegalArgumentException bad(String asOf) {
    return new IllegalArgumentException(
        "--seedAsOf must be a UTC ISO-8601 instant such as 2026-09-28T13:52:00Z (an offset such as"
            + " -03:00 is converted to UTC) or an LSN of 0x and 20 hexadecimal digits such as"
            + " 0x0000002A000001000001, not '"
            + asOf.replaceAll("\\p{Cntrl}", "?")
            + "'");
  }

  /** The as_of as text: the UTC instant ({@code 2026-09-28T13:52:00Z}) or the LSN. */
  public String asOfText() {
    return asOf != null ? asOf.toString() : String.valueOf(asOfLsn);
  }
}
