package org.lakecdc.io.mssqlcdc.read;

import java.io.Serializable;

/**
 * When the continuous form of {@link org.lakecdc.io.mssqlcdc.MssqlCdcIO#read()} stops following
 * {@code max_lsn}: asked after each batch and at each poll; once it answers true the read emits
 * nothing more, ends its restriction and the pipeline can finish (every batch read so far has been
 * emitted whole). Shipped to the workers with the read, so it must be serializable and cheap.
 */
@FunctionalInterface
public interface StopCondition extends Serializable {
  /** The condition of a read that never stops by itself (the default). */
  StopCondition NEVER = () -> false;

  /** Whether the read should stop now. */
  boolean shouldStop();

  /** Stops from {@code epochMillis} on (wall-clock time of the worker asking). */
  static StopCondition at(long epochMillis) {
    return () -> System.currentTimeMillis() >= epochMillis;
  }

  /** Stops when this or {@code other} says so. */
  default StopCondition or(StopCondition other) {
    StopCondition self = this;
    return () -> self.shouldStop() || other.shouldStop();
  }
}
