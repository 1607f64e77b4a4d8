package org.lakecdc.pipelines;

import java.io.PrintStream;
import java.time.Clock;
import java.util.function.UnaryOperator;
import org.lakecdc.pipelines.backfill.BackfillWaves;
import org.lakecdc.pipelines.cdc.CdcToDeltaLauncher;
import org.lakecdc.pipelines.cli.CommandLine;
import org.lakecdc.pipelines.cli.ConsoleLogging;
import org.lakecdc.pipelines.cli.JobExit;
import org.lakecdc.pipelines.cli.OptionRefusedException;
import org.lakecdc.pipelines.options.BackfillOptions;
import org.lakecdc.pipelines.targets.JobConfig;
import org.lakecdc.transforms.delta.DeltaTables;
import org.lakecdc.transforms.delta.HadoopConf;

/**
 * The backfill job: reads the open chunked snapshot of a target (opened by {@link CdcToDelta} with
 * {@code --snapshot=chunked}) in waves, one bounded pipeline per wave on the chosen runner, next to
 * the running stream (docs/behaviour.md §6.9; docs/options.md "Backfill"). Each run repairs what a
 * crash left (a chunk's facts row, the completion row), plans the snapshot at its first wave, then
 * reads wave after wave until the plan's last chunk is recorded (and the snapshot's completion row
 * written), {@code --maxWaves} waves were read, {@code --maxSeconds} passed, or the stream's
 * retention headroom is below {@code --minHeadroomHours}. A progress line follows each wave; the
 * last line gives the state: {@code done}, {@code running}, {@code waiting_headroom}, {@code
 * waiting_metrics} or {@code no_snapshot}. This class parses and checks the command line; the waves
 * are {@link BackfillWaves}'.
 *
 * <p>Exit codes ({@link JobExit}): 0 whatever the state; 2 a bad option value or a refused run (the
 * mode lock: a whole snapshot of the stream still open), one line, nothing written; 1 a failed run.
 * What was committed stays committed: a rerun goes on from the next chunk.
 */
public final class Backfill {
  private Backfill() {}

  /** Entry point; {@link BackfillOptions} lists the options. Exits the JVM with the code. */
  public static void main(String[] args) {
    JobExit.main(
        () -> run(args, System.out, System.err, Clock.systemUTC(), UnaryOperator.identity()));
  }

  /**
   * Runs the job of a command line and returns its exit code instead of exiting.
   *
   * @param clock the clock of the headroom's age (UTC)
   * @param adjust applied to the validated configuration (tests inject crashes with it)
   */
  static int run(
      String[] args,
      PrintStream out,
      PrintStream err,
      Clock clock,
      UnaryOperator<JobConfig> adjust) {
    BackfillOptions options;
    JobConfig config;
    try {
      options = CommandLine.parse(args, BackfillOptions.class);
      HadoopConf.checkOccurrences("hadoopConf", CommandLine.values(args, "hadoopConf"));
      refuseMainJobOnly(options);
      config = adjust.apply(CdcToDeltaLauncher.config(options));
      CdcToDeltaLauncher.checkObjectStores(java.util.List.of(config));
      requireTables(config, args);
    } catch (IllegalArgumentException e) {
      err.println("error: " + CommandLine.firstLine(e));
      return JobExit.BAD_OPTION;
    }
    try {
      ConsoleLogging.startFile(options);
      BackfillWaves.Result result =
          BackfillWaves.run(
              config,
              options,
              options.getMaxSeconds() == null ? 0 : options.getMaxSeconds(),
              options.getMinHeadroomHours(),
              clock,
              out);
      out.println(BackfillWaves.stateLine(config, result));
    } catch (Throwable t) {
      return JobExit.failed(t, err, options.getVerbose());
    }
    return JobExit.OK;
  }

  /**
   * Refuses a target or facts table that does not exist: a chunked snapshot is read into the target
   * the main job opened it for, from the state in its facts table, so a missing one is a mistyped
   * path (or a target never opened), not a run with nothing to do.
   *
   * @throws OptionRefusedException naming {@code --target} or {@code --factsTable} and the path
   */
  private static void requireTables(JobConfig config, String[] args) {
    DeltaTables tables = config.hadoopConf().tables();
    CommandLine.existingTable(
        tables,
        "target",
        config.bronzePath(),
        CommandLine.values(args, "target").isEmpty()
            ? CommandLine.defaultFor(args, config.captureInstance())
            : null,
        "give the bronze table whose chunked snapshot CdcToDelta --snapshot=chunked opened");
    CommandLine.existingTable(
        tables,
        "factsTable",
        config.factsPath(),
        CommandLine.values(args, "factsTable").isEmpty() ? "the default" : null,
        "give the facts table of the run that opened the chunked snapshot");
  }

  /**
   * Refuses the main job's options that have no meaning here, and the backfill's own out of range.
   *
   * @throws IllegalArgumentException naming the option
   */
  private static void refuseMainJobOnly(BackfillOptions o) {
    if (o.getContinuous()) {
      throw new IllegalArgumentException(
          "--continuous is an option of CdcToDelta: Backfill reads its waves and ends (run it"
              + " again, or let CdcToDelta --snapshot=chunked --continuous read them)");
    }
    if (o.getTables() != null || o.getTablesFile() != null) {
      throw new IllegalArgumentException(
          "--"
              + (o.getTables() != null ? "tables" : "tablesFile")
              + " is an option of CdcToDelta: Backfill reads one table's snapshot (--captureInstance,"
              + " --target, --appId)");
    }
    if (o.getMaxSeconds() != null && o.getMaxSeconds() < 0) {
      throw new IllegalArgumentException(
          "--maxSeconds must be 0 (no limit) or a positive integer, not '"
              + o.getMaxSeconds()
              + "'");
    }
    if (o.getMinHeadroomHours() != null
        && !(o.getMinHeadroomHours() >= 0 && Double.isFinite(o.getMinHeadroomHours()))) {
      throw new IllegalArgumentException(
          "--minHeadroomHours must be 0 or a positive number of hours, not '"
              + CommandLine.typed(o, "minHeadroomHours", o.getMinHeadroomHours())
              + "'");
    }
  }
}
