package org.lakecdc.transforms.reconcile;

import java.io.Serializable;
import java.math.BigInteger;
import java.util.List;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.io.mssqlcdc.client.KeyBucket;

/**
 * One bucket of reconcile's tier 1 (docs/behaviour.md §11.2): the key ordinals {@code [lo, hi)} of
 * adjacent fine buckets (or, for a key without an ordinal, the whole table: both bounds null), its
 * rows and key sums on each side, and what the run made of it.
 *
 * @param index the bucket's number in key order, from 0
 * @param lo the first ordinal (inclusive), or null for the whole table
 * @param hi the ordinal the bucket ends before (exclusive), or null for the whole table
 * @param fines the fine bucket numbers merged into it, ascending (empty for the whole table)
 * @param source rows and key sum in the source
 * @param silver rows and key sum in silver
 * @param moved whether a key inside the bucket is in flight ({@link InFlight})
 */
public record Bucket(
    int index,
    @Nullable Long lo,
    @Nullable Long hi,
    List<Long> fines,
    KeyBucket source,
    KeyBucket silver,
    boolean moved)
    implements Serializable {
  /** Bucket statuses (the report's {@code status}). */
  public enum Status {
    /** Rows and key sums equal. */
    MATCH,
    /** They differ, and a key in the bucket changed after silver's position. */
    IN_FLIGHT,
    /** They differ, and nothing in flight explains it. */
    MISMATCH
  }

  public Bucket {
    fines = List.copyOf(fines);
  }

  /** Whether this is the whole-table bucket of a key without an ordinal. */
  public boolean whole() {
    return lo == null;
  }

  /**
   * The bucket's status: MATCH when rows and key sums are equal (for the whole table: the rows),
   * else IN_FLIGHT when {@link #moved}, else MISMATCH.
   */
  public Status status() {
    boolean equal =
        source.rows() == silver.rows() && (whole() || source.keySum().equals(silver.keySum()));
    return equal ? Status.MATCH : moved ? Status.IN_FLIGHT : Status.MISMATCH;
  }

  /** This bucket with {@link #moved} set. */
  public Bucket withMoved(boolean value) {
    return new Bucket(index, lo, hi, fines, source, silver, value);
  }

  /** Whether an ordinal lies in {@code [lo, hi)}. */
  public boolean contains(long ordinal) {
    return lo != null && hi != null && ordinal >= lo && ordinal < hi;
  }

  /** The larger side's rows. */
  public long largerRows() {
    return Math.max(source.rows(), silver.rows());
  }

  /** The source's key sum, or null for the whole table (the report's {@code source_key_sum}). */
  public @Nullable BigInteger sourceKeySum() {
    return whole() ? null : source.keySum();
  }

  /** Silver's key sum, or null for the whole table. */
  public @Nullable BigInteger silverKeySum() {
    return whole() ? null : silver.keySum();
  }
}
