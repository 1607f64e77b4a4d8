package org.lakecdc.pipelines.backfill;

import java.util.Locale;

/**
 * Where a chunked snapshot's backfill stands after a {@code Backfill} run (docs/behaviour.md §6.9,
 * docs/scenarios.md C100), printed in lower case on its final line.
 */
public enum BackfillState {
  /** Every chunk is recorded and the completion row is written. */
  DONE,
  /** Chunks remain: the run stopped at {@code --maxWaves} or {@code --maxSeconds}. */
  RUNNING,
  /** Paused: the stream's retention headroom is below {@code --minHeadroomHours}. */
  WAITING_HEADROOM,
  /** Paused: no batch facts row of the stream gives a retention headroom yet. */
  WAITING_METRICS,
  /** No chunked snapshot is open for the target. */
  NO_SNAPSHOT;

  /** The state's name as printed: {@code done}, {@code waiting_headroom}, ... */
  @Override
  public String toString() {
    return name().toLowerCase(Locale.ROOT);
  }
}
