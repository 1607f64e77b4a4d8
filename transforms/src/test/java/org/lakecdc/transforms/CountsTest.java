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

  /**
   * The change rows by operation add up to the rows: an update is two rows (before- and
   * after-image), which the updates part says (39 rows = 25 + 8 + 6).
   */
  @Test
  void changeRowsByOperationAddUpToTheRows() {
    assertEquals("25 inserts, 4 updates in 8 rows, 6 deletes", Counts.byOperation(39, 25, 4, 6));
    assertEquals("1 insert, 1 update in 2 rows, 1 delete", Counts.byOperation(4, 1, 1, 1));
    assertEquals("0 inserts, 0 updates, 0 deletes", Counts.byOperation(0, 0, 0, 0));
    assertEquals("0 inserts, 2 updates, 1 delete", Counts.byOperation(3, 0, 2, 1));
    assertEquals(
        "206 inserts, 354 updates in 708 rows, 58 deletes", Counts.byOperation(972, 206, 354, 58));
    assertEquals(
        "1,200 inserts, 0 updates, 0 deletes, 2 other rows", Counts.byOperation(1202, 1200, 0, 0));
  }
}
