package org.lakecdc.io.mssqlcdc.client;

import java.io.IOException;
import org.apache.beam.sdk.util.BackOff;
import org.apache.beam.sdk.util.FluentBackoff;
import org.apache.beam.sdk.util.Sleeper;
import org.joda.time.Duration;

/**
 * How often and how long the T-SQL client waits before running a call again on a new connection
 * after a transient error ({@link TransientErrors}; docs/sql-server.md "Connection settings"): at
 * most {@value #MAX_RETRIES} retries, waiting about 1.5 s, 3 s and 6 s (Beam's {@link
 * FluentBackoff}: initial 1.5 s, exponent 2, each wait randomised by ±50%), so a call gives up
 * after roughly 10 to 16 s of waiting. Constants, not options, as in the reference. The {@link
 * Sleeper} is the test seam.
 */
final class RetryPolicy {
  /** Retries after the first attempt. */
  static final int MAX_RETRIES = 3;

  /** The first wait before randomisation. */
  static final Duration INITIAL_BACKOFF = Duration.millis(1500);

  /** Each wait is this many times the previous one, before randomisation. */
  static final double EXPONENT = 2.0;

  private static final FluentBackoff BACKOFF =
      FluentBackoff.DEFAULT
          .withMaxRetries(MAX_RETRIES)
          .withInitialBackoff(INITIAL_BACKOFF)
          .withExponent(EXPONENT);

  private final Sleeper sleeper;

  /**
   * A policy sleeping with {@code sleeper}.
   *
   * @param sleeper waits between attempts ({@link Sleeper#DEFAULT} in production)
   */
  RetryPolicy(Sleeper sleeper) {
    this.sleeper = sleeper;
  }

  /** The production policy: real sleeps. */
  static RetryPolicy standard() {
    return new RetryPolicy(Sleeper.DEFAULT);
  }

  /** A fresh backoff for one call. */
  BackOff backOff() {
    return BACKOFF.backoff();
  }

  /**
   * Waits before the next attempt.
   *
   * @param backOff the call's backoff
   * @return the milliseconds waited, or {@link BackOff#STOP} when the retries are used up
   * @throws InterruptedException when interrupted while waiting
   */
  long waitBeforeRetry(BackOff backOff) throws InterruptedException {
    long millis;
    try {
      millis = backOff.nextBackOffMillis();
    } catch (IOException e) {
      return BackOff.STOP;
    }
    if (millis != BackOff.STOP) {
      sleeper.sleep(millis);
    }
    return millis;
  }
}
