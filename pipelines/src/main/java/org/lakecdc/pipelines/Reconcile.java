package org.lakecdc.pipelines;

import java.io.PrintStream;
import org.lakecdc.io.mssqlcdc.client.CdcException;
import org.lakecdc.pipelines.cli.CommandLine;
import org.lakecdc.pipelines.cli.ConsoleLogging;
import org.lakecdc.pipelines.cli.JobExit;
import org.lakecdc.pipelines.options.ReconcileOptions;
import org.lakecdc.pipelines.reconcile.ReconcileLauncher;
import org.lakecdc.transforms.delta.HadoopConf;
import org.lakecdc.transforms.reconcile.BronzeGeneration;

/**
 * The {@code Reconcile} job (docs/behaviour.md §11, docs/options.md "Reconcile"): proves a silver
 * table equals its source table. The launcher pins silver's version and reads its {@code
 * applied_lsn}, reads {@code max_lsn}, runs tier 1 (row counts and key sums per bucket, on the
 * server and over silver with Delta Kernel) and picks the buckets to compare row by row (every
 * MISMATCH bucket and a seeded sample of the matching ones); a Beam pipeline on the chosen runner
 * compares them (one element per group of key ranges), then one step reads the keys in flight again
 * and appends the run's rows to the report table. The launcher prints a summary (or, with {@code
 * --json}, one JSON object) read back from the report, and with {@code --html} writes a page of it.
 * Both name the bronze generation silver reflects ({@link BronzeGeneration}: bronze's stream
 * position, the facts table's re-snapshot row and silver's {@code snapshot_lsn}).
 *
 * <p>Exit codes ({@link JobExit}): 0 silver matched (differences in flight allowed: they clear once
 * the stream and silver catch up); {@link JobExit#MISMATCH} (4) a MISMATCH bucket or a key that is
 * MISSING_TARGET, MISSING_SOURCE or RECORD_DIFF; 2 a bad option (one {@code error:} line naming it;
 * nothing written); 1 any other failure.
 *
 * <p>This class parses the command line and turns the outcome into the exit code; the checks, the
 * run and its report are {@link ReconcileLauncher}'s.
 */
public final class Reconcile {
  private Reconcile() {}

  /** Entry point; {@link ReconcileOptions} lists the options. Exits the JVM with the code. */
  public static void main(String[] args) {
    JobExit.main(() -> run(args, System.out, System.err));
  }

  /**
   * Runs a command line and returns its exit code instead of exiting (what {@link #main} runs).
   *
   * @param args the command line
   * @param out where the summary (or the JSON) goes
   * @param err where {@code error:} lines go
   * @return {@link JobExit#OK}, {@link JobExit#MISMATCH}, {@link JobExit#BAD_OPTION} or {@link
   *     JobExit#FAILED}
   */
  static int run(String[] args, PrintStream out, PrintStream err) {
    ReconcileOptions options;
    ReconcileLauncher.Checked checked;
    try {
      options = CommandLine.parse(args, ReconcileOptions.class);
      HadoopConf.checkOccurrences("hadoopConf", CommandLine.values(args, "hadoopConf"));
      checked = ReconcileLauncher.check(options, args);
    } catch (IllegalArgumentException e) {
      err.println("error: " + CommandLine.firstLine(e));
      return JobExit.BAD_OPTION;
    }
    try {
      ConsoleLogging.startFile(options);
      return ReconcileLauncher.run(options, checked, out);
    } catch (Throwable t) {
      if (t instanceof IllegalArgumentException || t instanceof CdcException) {
        err.println("error: " + CommandLine.firstLine(t));
        return JobExit.FAILED;
      }
      return JobExit.report(t, err, options.getVerbose());
    }
  }
}
