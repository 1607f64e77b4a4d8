package org.lakecdc.pipelines;

import java.io.PrintStream;
import java.time.Clock;
import org.lakecdc.pipelines.cli.CommandLine;
import org.lakecdc.pipelines.cli.ConsoleLogging;
import org.lakecdc.pipelines.cli.JobExit;
import org.lakecdc.pipelines.options.ApplyChangesOptions;
import org.lakecdc.pipelines.silver.ApplyChangesLauncher;
import org.lakecdc.transforms.delta.HadoopConf;
import org.lakecdc.transforms.silver.SilverApplier;
import org.lakecdc.transforms.silver.SilverMaintenance;

/**
 * The {@code ApplyChanges} job: brings silver tables up to the bronze tables the main job wrote,
 * one {@link SilverApplier#apply} per table in a Beam pipeline on the chosen runner (Direct, Spark,
 * Flink), then prints one line per table: whether it was rebuilt, its position {@code applied_lsn},
 * its verdict {@code finalized_until} (UTC), the waves and the keys applied.
 *
 * <p>Tables: one ({@code --captureInstance}, {@code --bronze}, {@code --silver}) or many ({@code
 * --tables} with {@code --bronzeTemplate} and {@code --silverTemplate}). Each table's key columns
 * ({@code --keys}, else the unique index its capture instance uses) and capture instances (every
 * instance of its source table) come from the source ({@code --fakePath}, default the demo's, or
 * {@code --connectionUrl}), checked before anything is written.
 *
 * <p>With {@code --maintenance=compact,vacuum} (or one of them) the job applies nothing and instead
 * runs {@link SilverMaintenance} on each table's silver: compaction ({@code
 * --silverCompactDeletedFraction}) then vacuum ({@code --silverVacuumRetentionHours}, at least 1),
 * one {@code Silver maintenance} line per table.
 *
 * <p>Exit codes ({@link JobExit}): 0 every table applied; 2 a bad option (one {@code error:} line
 * naming it; nothing written); 3 a table's apply failed (the others were applied; one {@code
 * error:} line naming the failed tables and why); 1 any other failure.
 *
 * <p>This class parses the command line and turns the outcome into the exit code; the checks, the
 * apply and the maintenance are {@link ApplyChangesLauncher}'s.
 */
public final class ApplyChanges {
  private ApplyChanges() {}

  /** Entry point; {@link ApplyChangesOptions} lists the options. Exits the JVM with the code. */
  public static void main(String[] args) {
    JobExit.main(() -> run(args, System.out, System.err));
  }

  /**
   * Runs a command line and returns its exit code instead of exiting (what {@link #main} runs).
   *
   * @param args the command line
   * @param out where the per-table lines go
   * @param err where {@code warning:} and {@code error:} lines go
   * @return {@link JobExit#OK}, {@link JobExit#BAD_OPTION}, {@link JobExit#TABLE_FAILED} or {@link
   *     JobExit#FAILED}
   */
  static int run(String[] args, PrintStream out, PrintStream err) {
    return run(args, out, err, Clock.systemUTC());
  }

  /**
   * {@link #run(String[], PrintStream, PrintStream)} whose vacuum measures the retention back from
   * {@code clock} (tests).
   */
  static int run(String[] args, PrintStream out, PrintStream err, Clock clock) {
    ApplyChangesOptions options;
    ApplyChangesLauncher.Checked checked;
    try {
      options = CommandLine.parse(args, ApplyChangesOptions.class);
      HadoopConf.checkOccurrences("hadoopConf", CommandLine.values(args, "hadoopConf"));
      checked = ApplyChangesLauncher.check(options, args);
    } catch (IllegalArgumentException e) {
      err.println("error: " + CommandLine.firstLine(e));
      return JobExit.BAD_OPTION;
    }
    try {
      ConsoleLogging.startFile(options);
      return ApplyChangesLauncher.run(options, checked, clock, out, err);
    } catch (Throwable t) {
      return JobExit.failed(t, err, options.getVerbose());
    }
  }
}
