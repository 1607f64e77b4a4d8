package org.lakecdc.transforms;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class CountsTest {
  @Test
  void oneTakesTheSingularAndEveryOtherCountThePlural() {
    assertEquals("1 batch", Counts.of(1, "batch", "batches"));
    assertEquals("0 batches", Counts.of(0, "batch", "batches"));
    assertEquals("2 rows", Counts.of(2, "row", "rows"));
    assertEquals("12,000 rows", Counts.of(12_000, "row", "rows"));
    assertEquals("-1 rows", Counts.of(-1, "row", "rows"));
  }
}
