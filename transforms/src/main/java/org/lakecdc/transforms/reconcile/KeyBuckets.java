package org.lakecdc.transforms.reconcile;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.SortedMap;
import java.util.TreeSet;
import org.lakecdc.io.mssqlcdc.client.KeyBucket;

/**
 * Tier 1's bucket plan (docs/behaviour.md §11.2, docs/scenarios.md C196): the fine buckets both
 * sides counted ({@code floor(ordinal / width)}), merged in key order into buckets of about {@code
 * bucketRows} rows.
 */
public final class KeyBuckets {
  /** At most about this many fine buckets are counted on each side. */
  public static final long MAX_FINE_BUCKETS = 100_000;

  private KeyBuckets() {}

  /**
   * The fine bucket width that cuts the ordinals {@code [min, max]} into at most {@link
   * #MAX_FINE_BUCKETS} buckets: {@code ceil((max - min + 1) / MAX_FINE_BUCKETS)}, at least 1.
   *
   * @param min the least key ordinal
   * @param max the greatest key ordinal, at least {@code min}
   * @return the width
   */
  public static long width(long min, long max) {
    java.math.BigInteger span =
        java.math.BigInteger.valueOf(max)
            .subtract(java.math.BigInteger.valueOf(min))
            .add(java.math.BigInteger.ONE);
    java.math.BigInteger[] qr =
        span.divideAndRemainder(java.math.BigInteger.valueOf(MAX_FINE_BUCKETS));
    long w = qr[0].longValueExact() + (qr[1].signum() > 0 ? 1 : 0);
    return Math.max(1, w);
  }

  /**
   * Merges the fine buckets of both sides: walking the fine numbers either side has in ascending
   * order, a fine bucket starts a new bucket when adding it would make the current bucket's larger
   * side exceed {@code bucketRows}, and a bucket closes once its larger side reaches {@code
   * bucketRows}. A bucket covers {@code [first fine × width, next bucket's first fine × width)};
   * the last one runs to {@code (its last fine + 1) × width}.
   *
   * @param width the fine buckets' width, at least 1
   * @param source the source's fine buckets
   * @param silver silver's fine buckets
   * @param bucketRows rows per bucket, at least 1
   * @return the buckets in key order, numbered from 0, not moved
   */
  public static List<Bucket> merge(
      long width,
      SortedMap<Long, KeyBucket> source,
      SortedMap<Long, KeyBucket> silver,
      long bucketRows) {
    TreeSet<Long> fines = new TreeSet<>(source.keySet());
    fines.addAll(silver.keySet());
    List<List<Long>> groups = new ArrayList<>();
    List<Long> current = new ArrayList<>();
    long sourceRows = 0;
    long silverRows = 0;
    for (long fine : fines) {
      KeyBucket s = source.getOrDefault(fine, KeyBucket.EMPTY);
      KeyBucket t = silver.getOrDefault(fine, KeyBucket.EMPTY);
      if (!current.isEmpty()
          && Math.max(sourceRows + s.rows(), silverRows + t.rows()) > bucketRows) {
        groups.add(current);
        current = new ArrayList<>();
        sourceRows = 0;
        silverRows = 0;
      }
      current.add(fine);
      sourceRows += s.rows();
      silverRows += t.rows();
      if (Math.max(sourceRows, silverRows) >= bucketRows) {
        groups.add(current);
        current = new ArrayList<>();
        sourceRows = 0;
        silverRows = 0;
      }
    }
    if (!current.isEmpty()) {
      groups.add(current);
    }
    List<Bucket> buckets = new ArrayList<>();
    for (int i = 0; i < groups.size(); i++) {
      List<Long> group = groups.get(i);
      long lo = Math.multiplyExact(group.get(0), width);
      long hi =
          i + 1 < groups.size()
              ? Math.multiplyExact(groups.get(i + 1).get(0), width)
              : Math.multiplyExact(group.get(group.size() - 1) + 1, width);
      buckets.add(new Bucket(i, lo, hi, group, sum(source, group), sum(silver, group), false));
    }
    return buckets;
  }

  /**
   * The buckets with {@link Bucket#moved} set where one of the moved ordinals lies inside.
   *
   * @param buckets the buckets, in key order
   * @param movedOrdinals the ordinals of the keys in flight (NULL keys left out)
   * @return the buckets
   */
  public static List<Bucket> markMoved(List<Bucket> buckets, Collection<Long> movedOrdinals) {
    TreeSet<Long> moved = new TreeSet<>(movedOrdinals);
    List<Bucket> out = new ArrayList<>();
    for (Bucket b : buckets) {
      Long first = b.lo() == null ? null : moved.ceiling(b.lo());
      out.add(b.withMoved(first != null && b.hi() != null && first < b.hi()));
    }
    return out;
  }

  private static KeyBucket sum(SortedMap<Long, KeyBucket> side, List<Long> fines) {
    KeyBucket total = KeyBucket.EMPTY;
    for (long fine : fines) {
      total = total.plus(side.getOrDefault(fine, KeyBucket.EMPTY));
    }
    return total;
  }
}
