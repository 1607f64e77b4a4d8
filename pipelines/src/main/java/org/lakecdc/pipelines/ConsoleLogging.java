package org.lakecdc.pipelines;

import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.core.LoggerContext;

/**
 * Applies a job's {@link OutputOptions} to its logging, Log4j 2 configured by the {@code
 * log4j2.xml} of this module: the console gets one plain line per event (no time, thread or
 * logger), the detail goes to {@code --logFile}, and {@code --verbose} shows the detail on the
 * console too. The configuration reads the system properties {@value #VERBOSE} and {@value
 * #LOG_FILE}, set here before it is loaded again.
 *
 * <p>Under another configuration (a cluster's, which the bundled jars leave in charge, or the
 * tests') or another logging backend, only the system properties are set.
 */
final class ConsoleLogging {
  /** Where the log lines go without {@code --logFile}: next to the demo's tables. */
  static final String DEFAULT_LOG_FILE = "lakecdc-demo/lakecdc.log";

  /** System property read by log4j2.xml: {@code true} shows the detailed lines on the console. */
  static final String VERBOSE = "lakecdc.verbose";

  /** System property read by log4j2.xml: the log file's path. */
  static final String LOG_FILE = "lakecdc.logFile";

  /** The {@code name} of the Configuration in log4j2.xml. */
  static final String CONFIGURATION = "lakecdc";

  private ConsoleLogging() {}

  /**
   * Sets the logging up for {@code options}.
   *
   * @return whether the jobs' console configuration was loaded again with them (false under another
   *     configuration or backend)
   * @throws IllegalArgumentException when {@code --logFile} is empty, a directory, or below a plain
   *     file
   */
  static boolean apply(OutputOptions options) {
    String file = options.getLogFile();
    if (file == null || file.isBlank()) {
      throw new IllegalArgumentException("--logFile must be a file's path, not empty");
    }
    if (Files.isDirectory(Path.of(file))) {
      throw new IllegalArgumentException(
          "--logFile must be a file's path, not the directory '" + file + "'");
    }
    // Log4j would drop every line of a file it cannot create, without a word.
    CommandLine.writableFile("logFile", file);
    System.setProperty(VERBOSE, Boolean.toString(options.getVerbose()));
    System.setProperty(LOG_FILE, options.getLogFile());
    try {
      if (LogManager.getContext(false) instanceof LoggerContext context
          && CONFIGURATION.equals(context.getConfiguration().getName())) {
        context.reconfigure();
        return true;
      }
    } catch (LinkageError e) {
      // No Log4j core on this class path: whatever logging it has stays as it is.
    }
    return false;
  }
}
