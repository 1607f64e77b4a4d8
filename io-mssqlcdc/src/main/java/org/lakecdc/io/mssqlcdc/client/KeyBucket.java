package org.lakecdc.io.mssqlcdc.client;

import java.math.BigInteger;
import java.util.Objects;

/**
 * The rows of one fine bucket of a key column, as reconcile's tier 1 counts them on both sides
 * (docs/behaviour.md §11.2, {@link CdcClient#keyBuckets}): {@code COUNT_BIG(*)} and {@code
 * SUM(CAST(ordinal AS decimal(38,0)))} of the rows whose key ordinal falls in the bucket.
 *
 * @param rows the rows in the bucket, at least 1 for a bucket that is answered
 * @param keySum the sum of their key ordinals (an integer key itself; a date's days since
 *     1970-01-01), exact
 */
public record KeyBucket(long rows, BigInteger keySum) implements java.io.Serializable {
  /** The empty bucket: no rows, a sum of 0. */
  public static final KeyBucket EMPTY = new KeyBucket(0, BigInteger.ZERO);

  /**
   * Checks the components.
   *
   * @throws IllegalArgumentException when {@code rows} is negative
   * @throws NullPointerException when {@code keySum} is null
   */
  public KeyBucket {
    Objects.requireNonNull(keySum, "keySum");
    if (rows < 0) {
      throw new IllegalArgumentException("rows must not be negative, got " + rows);
    }
  }

  /**
   * This bucket with one more row of key ordinal {@code ordinal}.
   *
   * @param ordinal the row's key ordinal
   * @return the new bucket
   */
  public KeyBucket plus(long ordinal) {
    return new KeyBucket(rows + 1, keySum.add(BigInteger.valueOf(ordinal)));
  }

  /**
   * The rows and sums of both buckets together.
   *
   * @param other the other bucket
   * @return the new bucket
   */
  public KeyBucket plus(KeyBucket other) {
    return new KeyBucket(rows + other.rows, keySum.add(other.keySum));
  }
}
