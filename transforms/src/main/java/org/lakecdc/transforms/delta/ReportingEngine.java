package org.lakecdc.transforms.delta;

import io.delta.kernel.defaults.engine.DefaultEngine;
import io.delta.kernel.defaults.engine.LoggingMetricsReporter;
import io.delta.kernel.defaults.engine.fileio.FileIO;
import io.delta.kernel.engine.MetricsReporter;
import io.delta.kernel.metrics.SnapshotReport;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Kernel's default engine, whose metrics reports (a snapshot, scan and transaction report for every
 * snapshot load, scan and commit) are made only while their logger logs them. Kernel's {@link
 * LoggingMetricsReporter} turns each report into JSON before it asks its logger, so with Kernel's
 * INFO lines off (the jobs' log file without {@code --verbose}) every snapshot load and commit
 * would still pay for JSON nobody reads. Everything else is the default engine's.
 *
 * <p>One reporter of its own is always on: it counts the snapshots Kernel reads from a table's log
 * (one snapshot report without an exception each, latest or as of a version), whoever asked ({@link
 * #snapshotReads}).
 */
final class ReportingEngine extends DefaultEngine {
  private static final Logger REPORTS = LoggerFactory.getLogger(LoggingMetricsReporter.class);

  private final AtomicLong snapshotReads = new AtomicLong();

  /** Counts the reports of snapshots read; ignores failed reads (no table) and other reports. */
  private final MetricsReporter snapshotCounter =
      report -> {
        if (report instanceof SnapshotReport snapshot && snapshot.getException().isEmpty()) {
          snapshotReads.incrementAndGet();
        }
      };

  private final List<MetricsReporter> countOnly = List.of(snapshotCounter);
  private final List<MetricsReporter> countAndLog;

  private ReportingEngine(FileIO fileIO) {
    super(fileIO);
    this.countAndLog =
        java.util.stream.Stream.concat(countOnly.stream(), super.getMetricsReporters().stream())
            .toList();
  }

  /** The default engine on {@code fileIO}. */
  static ReportingEngine on(FileIO fileIO) {
    return new ReportingEngine(fileIO);
  }

  /** The snapshot counter, and the default engine's reporters while their logger logs at INFO. */
  @Override
  public List<MetricsReporter> getMetricsReporters() {
    return REPORTS.isInfoEnabled() ? countAndLog : countOnly;
  }

  /** How many snapshots Kernel has read from a log through this engine (its snapshot reports). */
  long snapshotReads() {
    return snapshotReads.get();
  }
}
