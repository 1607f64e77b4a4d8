package org.lakecdc.pipelines.targets;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class SnapshotProgressTest {
  private static final long SECOND = 1_000_000_000L;

  @Test
  void aLineAtMostEveryIntervalWithTheRowsAndTheRate() {
    SnapshotProgress.Meter meter =
        new SnapshotProgress.Meter("dbo_orders", 100 * SECOND, Duration.ofSeconds(5));
    for (int i = 0; i < 9_999; i++) {
      assertEquals(Optional.empty(), meter.count(100 * SECOND + i));
    }
    assertEquals(
        Optional.of("Snapshot of dbo_orders: 10,000 rows read (2,000 rows/s)"),
        meter.count(105 * SECOND));
    assertEquals(Optional.empty(), meter.count(109 * SECOND));
    assertEquals(
        Optional.of("Snapshot of dbo_orders: 10,002 rows read (1,000 rows/s)"),
        meter.count(110 * SECOND));
  }

  @Test
  void oneRowIsARow() {
    SnapshotProgress.Meter meter =
        new SnapshotProgress.Meter("dbo_lineitem", 0, Duration.ofSeconds(1));
    assertEquals(
        Optional.of("Snapshot of dbo_lineitem: 1 row read (0 rows/s)"), meter.count(4 * SECOND));
  }
}
