package org.lakecdc.transforms.delta;

import io.delta.kernel.defaults.engine.DefaultEngine;
import io.delta.kernel.defaults.engine.LoggingMetricsReporter;
import io.delta.kernel.defaults.engine.fileio.FileIO;
import io.delta.kernel.engine.MetricsReporter;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Kernel's default engine, whose metrics reports (a snapshot, scan and transaction report for every
 * snapshot load, scan and commit) are made only while their logger logs them. Kernel's {@link
 * LoggingMetricsReporter} turns each report into JSON before it asks its logger, so with Kernel's
 * INFO lines off (the jobs' log file without {@code --verbose}) every snapshot load and commit
 * would still pay for JSON nobody reads. Everything else is the default engine's.
 */
final class ReportingEngine extends DefaultEngine {
  private static final Logger REPORTS = LoggerFactory.getLogger(LoggingMetricsReporter.class);

  private ReportingEngine(FileIO fileIO) {
    super(fileIO);
  }

  /** The default engine on {@code fileIO}. */
  static ReportingEngine on(FileIO fileIO) {
    return new ReportingEngine(fileIO);
  }

  /** The default engine's reporters while their logger logs at INFO; none otherwise. */
  @Override
  public List<MetricsReporter> getMetricsReporters() {
    return REPORTS.isInfoEnabled() ? super.getMetricsReporters() : List.of();
  }
}
