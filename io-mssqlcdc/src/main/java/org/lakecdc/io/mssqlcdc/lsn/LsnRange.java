package org.lakecdc.io.mssqlcdc.lsn;

import java.io.Serializable;
import java.math.BigInteger;
import java.util.Objects;
import org.apache.beam.sdk.coders.Coder;

/**
 * A half-open interval {@code [from, to)} of LSNs: the restriction of the change reader. The
 * positions in it that mean anything are commit LSNs ({@code cdc.lsn_time_mapping.start_lsn}); a
 * transaction's change rows all carry its commit LSN, so cutting anywhere between two commit LSNs
 * never splits a transaction.
 *
 * <p>{@code to == }{@link Lsn#MAX} is the open end of the continuous form (the end grows with
 * {@code max_lsn}). A range never is inverted; the only empty range ({@code from == to}) is the
 * primary of a checkpoint taken before anything was claimed, which Beam requires and which holds no
 * work.
 *
 * <p>SQL Server's change-table query is closed ({@code __$start_lsn BETWEEN a AND b}); {@link
 * #lastLsn()} gives the closed upper end of this range for such a query.
 *
 * <p>{@code firstBatch} numbers the batches read from the range: the reader emits batch {@code
 * firstBatch}, then {@code firstBatch + 1}, ..., one per claimed commit, so batches of different
 * ranges of one read are numbered 0, 1, 2, ... in LSN order with no gap, whichever worker reads
 * them and in whichever order they arrive. It is 0 for the range a read starts with; the reader's
 * splits give each later part the number of batches before it, and a checkpoint's residual the
 * number claimed before it.
 *
 * @param from first LSN of the range, inclusive
 * @param to first LSN after the range, exclusive
 * @param firstBatch ordinal (from 0) within its read of the first batch read from this range
 */
public record LsnRange(Lsn from, Lsn to, long firstBatch) implements Serializable {
  public LsnRange {
    Objects.requireNonNull(from, "from");
    Objects.requireNonNull(to, "to");
    if (from.isAfter(to)) {
      throw new IllegalArgumentException("Inverted LSN range [" + from + ", " + to + ")");
    }
    if (firstBatch < 0) {
      throw new IllegalArgumentException("firstBatch must be 0 or more, not " + firstBatch);
    }
  }

  /** The range {@code [from, to)} whose first batch is the read's first (number 0). */
  public LsnRange(Lsn from, Lsn to) {
    this(from, to, 0);
  }

  /** The same interval, its first batch numbered {@code firstBatch}. */
  public LsnRange withFirstBatch(long firstBatch) {
    return new LsnRange(from, to, firstBatch);
  }

  /**
   * The range of the closed interval {@code [first, last]} of a change-table query.
   *
   * @throws IllegalArgumentException when {@code last < first}
   */
  public static LsnRange closed(Lsn first, Lsn last) {
    if (last.isBefore(first)) {
      throw new IllegalArgumentException("Inverted LSN range [" + first + ", " + last + "]");
    }
    return new LsnRange(first, last.increment());
  }

  /** The range from {@code from} with the open end {@link Lsn#MAX} of the continuous form. */
  public static LsnRange openFrom(Lsn from) {
    return new LsnRange(from, Lsn.MAX);
  }

  /** True when the end is open ({@link Lsn#MAX}): the continuous form. */
  public boolean isOpen() {
    return to.equals(Lsn.MAX);
  }

  /** True for the work-less primary of a checkpoint taken before any claim. */
  public boolean isEmpty() {
    return from.equals(to);
  }

  /** True when {@code lsn} is in {@code [from, to)}. */
  public boolean contains(Lsn lsn) {
    return !lsn.isBefore(from) && lsn.isBefore(to);
  }

  /**
   * The last LSN of the range, {@code to - 1}: the inclusive upper end of a change-table query.
   *
   * @throws IllegalStateException for an empty range
   */
  public Lsn lastLsn() {
    if (isEmpty()) {
      throw new IllegalStateException("Empty LSN range " + this + " has no last LSN");
    }
    return to.decrement();
  }

  /** Number of LSN values in the range, for progress fractions only. */
  public BigInteger width() {
    return to.toBigInteger().subtract(from.toBigInteger());
  }

  @Override
  public String toString() {
    return "[" + from + ", " + to + ")" + (firstBatch == 0 ? "" : " from batch " + firstBatch);
  }

  /**
   * The Beam coder of ranges: the 10 bytes of {@code from}, the 10 bytes of {@code to}, then {@code
   * firstBatch} (a variable-length long). Deterministic.
   *
   * @return the coder
   */
  public static Coder<LsnRange> coder() {
    return LsnRangeCoder.of();
  }
}
