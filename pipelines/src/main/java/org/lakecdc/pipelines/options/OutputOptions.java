package org.lakecdc.pipelines.options;

import com.fasterxml.jackson.annotation.JsonIgnore;
import java.util.List;
import org.apache.beam.sdk.options.Default;
import org.apache.beam.sdk.options.Description;
import org.apache.beam.sdk.options.Hidden;
import org.apache.beam.sdk.options.PipelineOptions;

/**
 * Where a job's output goes, shared by every job's options: the console gets one plain line per
 * event (what the job prints, and the lakecdc loggers' messages as they are, warnings as {@code
 * warning: ...}); the log lines of everything, with time, level, thread and logger, go to {@code
 * --logFile}, or to the console as well with {@code --verbose}. See {@code ConsoleLogging}.
 */
public interface OutputOptions extends PipelineOptions {
  @Description(
      "Also print the log lines of every library (Beam, the runner, Delta Kernel, Hadoop) on the"
          + " console, with time, level, thread and logger; on a failure, print its stack trace"
          + " (standard error) before the one-line error.")
  @Default.Boolean(false)
  boolean getVerbose();

  void setVerbose(boolean value);

  @Description(
      "File the log lines of every library are appended to (time, level, thread, logger; created"
          + " when the first line is written). Default: lakecdc.log next to the first table the"
          + " run writes (lakecdc-demo/delta/lakecdc.log for the demo's main job), or in the"
          + " working directory for a table on an object store.")
  String getLogFile();

  void setLogFile(String value);

  /**
   * The command line as the job was given it, kept by {@code CommandLine.parse} so that a refused
   * value is echoed as typed ({@code CommandLine.typed}): {@code '-1'}, not the {@code '-1.0'} of
   * the parsed number. Not an option to give; never shipped to workers.
   */
  @Hidden
  @JsonIgnore
  @Description("The command line as given (kept by the job itself).")
  List<String> getGivenArgs();

  void setGivenArgs(List<String> value);
}
