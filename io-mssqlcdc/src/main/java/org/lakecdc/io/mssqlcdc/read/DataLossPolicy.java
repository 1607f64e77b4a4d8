package org.lakecdc.io.mssqlcdc.read;

import java.util.Locale;
import java.util.Objects;

/**
 * What a stream does when the changes it needs next are gone from the change table: CDC cleanup
 * ({@code sys.sp_cdc_cleanup_change_table}, or the cleanup job with its retention) moved the
 * capture instance's {@code min_lsn} past the first LSN not yet read, or the changes were held only
 * by a capture instance disabled before the stream read them (docs/options.md {@code --onDataLoss};
 * docs/behaviour.md §3.8, §4.5, §9).
 */
public enum DataLossPolicy {
  /**
   * The default: the read fails with {@link org.lakecdc.io.mssqlcdc.client.DataLossError} naming
   * the capture instance, the first lost LSN and the current {@code min_lsn}; nothing is written.
   */
  FAIL,

  /**
   * The read goes on from the capture instance's {@code min_lsn}: each batch whose range starts
   * below it reads from {@code min_lsn} on and carries the gap ({@link SkippedRange}), which the
   * sink records as a {@code data_skipped} facts event; a gap found after a range was read (cleanup
   * ran during the read) is recorded as a possible one. The changes in the gap are lost for good.
   */
  SKIP,

  /**
   * The job takes a new snapshot of the table into a new generation and streams on from its
   * snapshot LSN (before the stream starts, and when a running stream meets the loss). The read
   * itself fails as with {@link #FAIL}: the job that runs the read recovers.
   */
  RESNAPSHOT;

  /**
   * The policy named by {@code text}: {@code fail}, {@code skip} or {@code resnapshot}, ignoring
   * case and surrounding blanks.
   *
   * @throws IllegalArgumentException for any other value: {@code onDataLoss must be 'fail', 'skip'
   *     or 'resnapshot', not '<text>'}
   */
  public static DataLossPolicy parse(String text) {
    Objects.requireNonNull(text, "onDataLoss");
    switch (text.strip().toLowerCase(Locale.ROOT)) {
      case "fail":
        return FAIL;
      case "skip":
        return SKIP;
      case "resnapshot":
        return RESNAPSHOT;
      default:
        throw new IllegalArgumentException(
            "onDataLoss must be 'fail', 'skip' or 'resnapshot', not '"
                + text.replaceAll("\\p{Cntrl}", "?")
                + "'");
    }
  }

  /** The option value: {@code fail}, {@code skip} or {@code resnapshot}. */
  @Override
  public String toString() {
    return name().toLowerCase(Locale.ROOT);
  }
}
