package org.lakecdc.pipelines.cdc;

import java.util.Objects;
import org.lakecdc.io.mssqlcdc.read.StopCondition;

/**
 * How a continuous run follows the source.
 *
 * @param form one pipeline with the continuous source, or repeated bounded runs
 * @param pollInterval the source's wait when caught up, or the interval between bounded runs
 * @param runFor how long to follow the source (from the end of the bootstrap, or from the first
 *     bounded run), or zero for no limit
 * @param stop when else to stop: asked between batches and at each poll (by the source), or between
 *     bounded runs
 * @throws IllegalArgumentException for a poll interval that is not positive or a negative runFor
 */
public record Continuous(
    Form form, java.time.Duration pollInterval, java.time.Duration runFor, StopCondition stop) {
  public Continuous {
    Objects.requireNonNull(form, "form");
    Objects.requireNonNull(pollInterval, "pollInterval");
    Objects.requireNonNull(runFor, "runFor");
    Objects.requireNonNull(stop, "stop");
    if (pollInterval.isNegative() || pollInterval.isZero()) {
      throw new IllegalArgumentException("pollInterval must be positive, not " + pollInterval);
    }
    if (runFor.isNegative()) {
      throw new IllegalArgumentException("runFor must not be negative, not " + runFor);
    }
  }

  /** The two forms of a continuous run. */
  public enum Form {
    /** One pipeline, the source's continuous form, each batch committed as it arrives. */
    STREAM,
    /** Bounded runs repeated every poll interval, each a complete exactly-once unit. */
    REPEAT
  }
}
