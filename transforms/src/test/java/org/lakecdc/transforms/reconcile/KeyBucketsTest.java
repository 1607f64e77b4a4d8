package org.lakecdc.transforms.reconcile;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.lakecdc.io.mssqlcdc.client.KeyBucket;
import org.lakecdc.io.mssqlcdc.schema.OutputType;

/** Tier 1's bucket merge (docs/scenarios.md C196) and bucket bounds (C195), with exact values. */
class KeyBucketsTest {
  private static TreeMap<Long, KeyBucket> fines(long... fineRowsSum) {
    TreeMap<Long, KeyBucket> out = new TreeMap<>();
    for (int i = 0; i < fineRowsSum.length; i += 3) {
      out.put(
          fineRowsSum[i],
          new KeyBucket(fineRowsSum[i + 1], BigInteger.valueOf(fineRowsSum[i + 2])));
    }
    return out;
  }

  /** "lo hi fines (source rows,sum) (silver rows,sum) moved" per bucket. */
  private static List<String> text(List<Bucket> buckets) {
    List<String> out = new ArrayList<>();
    for (Bucket b : buckets) {
      out.add(
          b.lo()
              + " "
              + b.hi()
              + " "
              + b.fines()
              + " ("
              + b.source().rows()
              + ","
              + b.source().keySum()
              + ") ("
              + b.silver().rows()
              + ","
              + b.silver().keySum()
              + ") "
              + b.moved());
    }
    return out;
  }

  @Test
  void c196FineBucketsMergeByTheLargerSide() {
    assertEquals(
        List.of(
            "0 30 [0, 1, 2] (9,25) (9,56) false",
            "30 50 [3] (25,800) (25,800) false",
            "50 100 [5, 9] (3,245) (1,55) false"),
        text(
            KeyBuckets.merge(
                10,
                fines(0, 6, 10, 1, 3, 15, 3, 25, 800, 5, 1, 55, 9, 2, 190),
                fines(0, 6, 10, 1, 1, 5, 2, 2, 41, 3, 25, 800, 5, 1, 55),
                10)));
    assertEquals(
        List.of("0 5 [0, 4] (5,15) (0,0) false"),
        text(KeyBuckets.merge(1, fines(0, 2, 1, 4, 3, 14), fines(), 10)));
    assertEquals(
        List.of("7 8 [7] (0,0) (4,30) false"),
        text(KeyBuckets.merge(1, fines(), fines(7, 4, 30), 10)));
  }

  @Test
  void c196AChangedKeyMovesOnlyItsBucket() {
    TreeMap<Long, KeyBucket> both = fines(2, 5, 10, 3, 5, 15, 4, 5, 20, 5, 5, 25);
    List<Bucket> merged = KeyBuckets.merge(1, both, both, 10);
    assertEquals(
        List.of("2 4 [2, 3] (10,25) (10,25) true", "4 6 [4, 5] (10,45) (10,45) false"),
        text(KeyBuckets.markMoved(merged, Arrays.asList(1L, 3L, 6L))));
  }

  @Test
  void c195DateBoundsStayInsideTheDateRange() {
    KeyOrdinal date = KeyOrdinal.of(OutputType.DATE).orElseThrow();
    long last = java.time.LocalDate.of(9999, 12, 31).toEpochDay();
    assertEquals("\"9999-12-31\"", date.boundJson(last));
    assertNull(date.boundJson(last + 1));
    assertEquals("\"0001-01-01\"", date.boundJson(-10_000_000L));
    assertEquals("\"1970-01-01\"", date.boundJson(0));
    assertEquals("-3", KeyOrdinal.of(OutputType.INT).orElseThrow().boundJson(-3));
    assertNull(KeyOrdinal.of(OutputType.INT).orElseThrow().boundJson(1L << 31));
  }

  @Test
  void theKeyRangeIsCutIntoAtMostAHundredThousandFineBuckets() {
    assertEquals(1, KeyBuckets.width(0, 99));
    assertEquals(50, KeyBuckets.width(0, 4_999_999));
    assertEquals(51, KeyBuckets.width(0, 5_000_000));
  }
}
