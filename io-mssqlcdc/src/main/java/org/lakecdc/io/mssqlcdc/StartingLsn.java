package org.lakecdc.io.mssqlcdc;

import java.io.Serializable;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;

/**
 * Where a read starts when it has no stored position (docs/options.md). The LSN given or computed
 * is the last <em>processed</em> one; reading starts right after it.
 *
 * <ul>
 *   <li>{@code earliest}: just before the oldest capture instance's minimum LSN, so the first read
 *       starts exactly at {@code sys.fn_cdc_get_min_lsn}.
 *   <li>{@code latest}: {@code max(max_lsn, start_lsn - 1)} of the oldest instance: skips the
 *       history present when the read starts.
 *   <li>an LSN: that LSN, treated as already processed.
 * </ul>
 */
public final class StartingLsn implements Serializable {
  private static final long serialVersionUID = 1L;

  /** The kinds of starting position. */
  public enum Kind {
    EARLIEST,
    LATEST,
    EXPLICIT
  }

  private static final StartingLsn EARLIEST = new StartingLsn(Kind.EARLIEST, null);
  private static final StartingLsn LATEST = new StartingLsn(Kind.LATEST, null);

  private final Kind kind;
  private final Lsn lsn;

  private StartingLsn(Kind kind, Lsn lsn) {
    this.kind = kind;
    this.lsn = lsn;
  }

  /** Start at the oldest change CDC still holds. */
  public static StartingLsn earliest() {
    return EARLIEST;
  }

  /** Skip the history: start after {@code max_lsn} at the start of the read. */
  public static StartingLsn latest() {
    return LATEST;
  }

  /** Start right after {@code lastProcessed}. */
  public static StartingLsn after(Lsn lastProcessed) {
    return new StartingLsn(Kind.EXPLICIT, Objects.requireNonNull(lastProcessed, "lastProcessed"));
  }

  /**
   * Parses {@code earliest}, {@code latest} (any case) or an LSN in its canonical text, {@code 0x}
   * and exactly 20 hexadecimal digits ({@link Lsn#parseCanonical}: a shorter LSN is refused, not
   * padded); surrounding whitespace is ignored.
   *
   * @throws IllegalArgumentException naming the option {@code startingLsn}, the value and what is
   *     accepted
   */
  public static StartingLsn parse(String text) {
    String value = text == null ? "" : text.strip();
    switch (value.toLowerCase(Locale.ROOT)) {
      case "earliest":
        return EARLIEST;
      case "latest":
        return LATEST;
      default:
        try {
          return after(Lsn.parseCanonical(value));
        } catch (IllegalArgumentException e) {
          throw new IllegalArgumentException(
              "startingLsn must be 'earliest', 'latest' or an LSN of 0x and 20 hexadecimal digits"
                  + " such as 0x0000002A000001000001, not '"
                  + text
                  + "'");
        }
    }
  }

  /** The kind of position. */
  public Kind kind() {
    return kind;
  }

  /** The explicit last-processed LSN, present only for {@link Kind#EXPLICIT}. */
  public Optional<Lsn> lsn() {
    return Optional.ofNullable(lsn);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof StartingLsn
        && ((StartingLsn) o).kind == kind
        && Objects.equals(((StartingLsn) o).lsn, lsn);
  }

  @Override
  public int hashCode() {
    return Objects.hash(kind, lsn);
  }

  @Override
  public String toString() {
    return kind == Kind.EXPLICIT ? lsn.toString() : kind.name().toLowerCase(Locale.ROOT);
  }
}
