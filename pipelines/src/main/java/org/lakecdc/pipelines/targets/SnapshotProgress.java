package org.lakecdc.pipelines.targets;

import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.lakecdc.transforms.Counts;
import org.lakecdc.transforms.snapshot.SnapshotFileSink;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Says how many rows of a snapshot have been written, at most every {@link #EVERY}: {@code Snapshot
 * of dbo_orders: 120,000 rows read (40,000 rows/s)}, a line on the console (log4j2.xml). Counted
 * per JVM, so on a cluster each worker reports its own rows. No ETA: the source gives no row count
 * estimate, and nothing scans the table to count it.
 */
final class SnapshotProgress {
  /** The shortest time between two progress lines of one JVM. */
  static final Duration EVERY = Duration.ofSeconds(5);

  private static final Logger LOG = LoggerFactory.getLogger(SnapshotProgress.class);
  private static final Map<String, Meter> METERS = new ConcurrentHashMap<>();

  private SnapshotProgress() {}

  /**
   * The progress lines of the snapshot of {@code captureInstance}, whose rows are written where
   * they are read ({@code WriteSnapshotToDelta.from(snapshot)}): told of each row written. Each
   * call is a new run with its own count.
   */
  static SnapshotFileSink.RowListener listener(String captureInstance) {
    String runId = UUID.randomUUID().toString();
    return () ->
        METERS
            .computeIfAbsent(runId, id -> new Meter(captureInstance, System.nanoTime(), EVERY))
            .count(System.nanoTime())
            .ifPresent(LOG::info);
  }

  /**
   * Counts rows and says, at most once per interval, how many were read and how fast. Safe for
   * concurrent callers; times are {@link System#nanoTime} values.
   */
  static final class Meter {
    private final String captureInstance;
    private final long startNanos;
    private final long everyNanos;
    private final AtomicLong rows = new AtomicLong();
    private final AtomicLong lastReportNanos;

    /**
     * @param captureInstance named in the lines
     * @param startNanos when the reading started
     * @param every the shortest time between two lines
     */
    Meter(String captureInstance, long startNanos, Duration every) {
      this.captureInstance = captureInstance;
      this.startNanos = startNanos;
      this.everyNanos = every.toNanos();
      this.lastReportNanos = new AtomicLong(startNanos);
    }

    /**
     * Counts one row read at {@code nowNanos}.
     *
     * @return the progress line when the interval since the last one (or the start) has passed
     */
    Optional<String> count(long nowNanos) {
      long n = rows.incrementAndGet();
      long last = lastReportNanos.get();
      if (nowNanos - last < everyNanos || !lastReportNanos.compareAndSet(last, nowNanos)) {
        return Optional.empty();
      }
      double seconds = (nowNanos - startNanos) / 1e9;
      return Optional.of(
          String.format(
              Locale.ROOT,
              "Snapshot of %s: %s read (%,.0f rows/s)",
              captureInstance,
              Counts.of(n, "row", "rows"),
              n / Math.max(seconds, 1e-3)));
    }
  }
}
