package org.lakecdc.transforms.silver;

import java.time.Clock;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.Map;
import java.util.function.Supplier;
import org.apache.beam.sdk.values.Row;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.transforms.delta.DeltaConflictException;
import org.lakecdc.transforms.delta.DeltaTables;
import org.lakecdc.transforms.finalization.ControlTable;
import org.lakecdc.transforms.finalization.Finalization;
import org.lakecdc.transforms.finalization.Granularity;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What an apply of a table derived from bronze (silver, history) shares: the control rows it starts
 * from (bronze's is read before bronze, as bronze commits rows before its verdict), the verdict it
 * ends with (bronze's, capped per period), and the hash partitions of a wave larger than the wave
 * size.
 */
public final class DerivedApply {
  private static final Logger LOG = LoggerFactory.getLogger(DerivedApply.class);

  /** How many times an apply starts over after losing a commit to another writer. */
  public static final int ATTEMPTS = 5;

  private DerivedApply() {}

  /** Test hook points of an apply (after bronze is pinned, after a commit, ...). */
  public interface Hook {
    /**
     * Called at a point of the apply.
     *
     * @param point the point's name
     */
    void at(String point);
  }

  /**
   * Runs one apply, starting it over when a commit of it lost to another writer (maintenance), at
   * most {@value #ATTEMPTS} times.
   *
   * @param kind the derived table's kind as the log line names it ({@code Silver}, {@code History})
   * @param path the derived table's path, for the log line
   * @param once one apply from the start
   * @param lost run after each lost attempt (e.g. forget a stale key index)
   * @return the apply's outcome
   * @throws DeltaConflictException the last attempt's, when every attempt lost
   */
  public static <T> T retrying(String kind, String path, Supplier<T> once, Runnable lost) {
    DeltaConflictException last = null;
    for (int attempt = 1; attempt <= ATTEMPTS; attempt++) {
      try {
        return once.get();
      } catch (DeltaConflictException e) {
        LOG.info(
            "{} {}: a commit lost to another writer (attempt {} of {}); starting over: {}",
            kind,
            path,
            attempt,
            ATTEMPTS,
            e.getMessage());
        lost.run();
        last = e;
      }
    }
    throw last;
  }

  /**
   * The control rows an apply starts from.
   *
   * @param finalization the control table's verdicts
   * @param bronzeRow bronze's control row, or null
   * @param derivedRow the derived table's control row, or null
   * @param storedVerdict the derived table's verdict before the apply (UTC), or null
   */
  public record Start(
      Finalization finalization,
      @Nullable Row bronzeRow,
      @Nullable Row derivedRow,
      @Nullable LocalDateTime storedVerdict) {}

  /**
   * Creates the control table if absent and reads bronze's row and the derived table's.
   *
   * @param finalizations the caller's {@link Finalization} per control path (filled here)
   * @param clock the clock of the control table's {@code updated_at}
   */
  public static Start start(
      Map<String, Finalization> finalizations,
      DeltaTables tables,
      Clock clock,
      String control,
      String bronze,
      String derived) {
    Finalization finalization =
        finalizations.computeIfAbsent(control, c -> new Finalization(tables, c, clock));
    tables.createIfAbsent(control, ControlTable.definition());
    Row bronzeRow = finalization.row(bronze).orElse(null);
    Row derivedRow = finalization.row(derived).orElse(null);
    LocalDateTime stored =
        derivedRow == null
            ? null
            : derivedRow.getLogicalTypeValue(ControlTable.FINALIZED_UNTIL, LocalDateTime.class);
    return new Start(finalization, bronzeRow, derivedRow, stored);
  }

  /**
   * The derived table's verdict after the apply: with {@code advance}, bronze's as read at the
   * start ({@link Finalization#advance}); else, or when bronze has no end yet, the stored one.
   *
   * @param advance whether the verdict may move (facts given, no chunked snapshot open)
   */
  public static @Nullable LocalDateTime verdict(
      Start start, String derived, boolean advance, Granularity granularity) {
    Row bronzeRow = start.bronzeRow();
    if (!advance || bronzeRow == null) {
      return start.storedVerdict();
    }
    String endLsn = bronzeRow.getString(ControlTable.END_LSN);
    LocalDateTime endCommitTs =
        bronzeRow.getLogicalTypeValue(ControlTable.END_COMMIT_TS, LocalDateTime.class);
    if (endLsn == null || endCommitTs == null) {
      return start.storedVerdict();
    }
    return start
        .finalization()
        .advance(derived, Lsn.parse(endLsn), endCommitTs.toInstant(ZoneOffset.UTC), granularity);
  }

  /**
   * How many hash partitions a wave of {@code plan} is cut in: 1 unless it passes {@code waveRows}.
   */
  public static int partitions(BronzeWaves.Plan plan, int waveRows) {
    return plan.rows() > waveRows
        ? (int) Math.min(Integer.MAX_VALUE, (plan.rows() + waveRows - 1) / waveRows)
        : 1;
  }
}
