package org.lakecdc.pipelines;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;
import org.lakecdc.io.mssqlcdc.client.SqlCdcClientFactory;
import org.lakecdc.pipelines.cdc.CdcToDeltaJob;
import org.lakecdc.pipelines.cdc.CdcToDeltaLauncher;
import org.lakecdc.pipelines.cli.CommandLine;
import org.lakecdc.pipelines.cli.JobExit;
import org.lakecdc.pipelines.cli.TablesOption;
import org.lakecdc.pipelines.history.MainJobHistory;
import org.lakecdc.pipelines.options.CdcToDeltaOptions;
import org.lakecdc.pipelines.targets.JobConfig;
import org.lakecdc.transforms.delta.HadoopConf;

/**
 * The main job: SQL Server CDC of one capture instance into a bronze Delta table, the facts table
 * and the completeness verdict (see {@link CdcToDeltaJob}). With no arguments it runs on the
 * embedded default: the demo CDC database in {@code lakecdc-demo/source} (built when absent) into
 * local Delta tables under {@code lakecdc-demo/delta}. With {@code --connectionUrl} it reads a real
 * SQL Server through {@link SqlCdcClientFactory} as {@code --user}, whose password each connection
 * reads from {@code --passwordEnv} or {@code --passwordFile}.
 *
 * <p>Exit codes ({@link JobExit}): 0 done; 2 a bad option value (one line naming the option and
 * what it accepts; nothing is written); 1 a failed run, whatever the cause: a problem with the
 * source or the target, a table that cannot be written (a read-only location, a URI scheme without
 * its Hadoop FileSystem, a full disk), {@link OutOfMemoryError}, {@link StackOverflowError} or any
 * other {@link Error} on any thread, also in continuous mode and on every runner (one {@code
 * error:} line with the cause and what to change; {@code --verbose} prints the stack trace before
 * it). What was committed stays committed, and a rerun continues from it. The JVM always exits: the
 * failed pipeline is cancelled, and a watchdog halts the JVM when its shutdown takes longer than
 * {@link JobExit#GRACE}.
 *
 * <p>This class parses and checks the command line and turns the outcome into the exit code; the
 * validation into a configuration, the run and its summary are {@link CdcToDeltaLauncher}'s.
 */
public final class CdcToDelta {
  private CdcToDelta() {}

  /** Entry point; {@link CdcToDeltaOptions} lists the options. Exits the JVM with the code. */
  public static void main(String[] args) {
    JobExit.main(() -> run(args, System.err, UnaryOperator.identity()));
  }

  /**
   * Runs the job of a command line and returns its exit code instead of exiting: what {@link #main}
   * runs, and what tests call in-process.
   *
   * @param args the command line
   * @param err where the {@code error:} line goes
   * @param adjust applied to the validated configuration (tests inject crashes with it; {@link
   *     #main} passes the identity)
   * @return {@link JobExit#OK}, {@link JobExit#BAD_OPTION} or {@link JobExit#FAILED}
   */
  static int run(String[] args, PrintStream err, UnaryOperator<JobConfig> adjust) {
    CdcToDeltaOptions options;
    JobConfig config;
    try {
      options = CommandLine.parse(args, CdcToDeltaOptions.class);
      // Per occurrence, before Beam's comma splitting joined them: --hadoopConf=a=1 --hadoopConf=b
      // must not read as a=1,b.
      HadoopConf.checkOccurrences("hadoopConf", CommandLine.values(args, "hadoopConf"));
      if (TablesOption.listsTables(options)) {
        return runMany(args, options, err, adjust);
      }
      TablesOption.refuseTemplatesWithoutTables(args);
      config = adjust.apply(CdcToDeltaLauncher.config(options));
      CdcToDeltaLauncher.checkObjectStores(List.of(config));
      config =
          MainJobHistory.withHistories(
                  List.of(config),
                  MainJobHistory.plan(args, false, List.of(config), List.of(options)))
              .get(0);
    } catch (IllegalArgumentException e) {
      err.println("error: " + CommandLine.firstLine(e));
      return JobExit.BAD_OPTION;
    }
    try {
      CdcToDeltaLauncher.run(config, options);
      return JobExit.OK;
    } catch (Throwable t) {
      return JobExit.failed(t, err, options.getVerbose());
    }
  }

  /**
   * The run of many tables ({@code --tables}, {@code --tablesFile}): each table's options are the
   * command line's with the table's own over them ({@link TablesOption}), validated as one table's
   * are; then every table in one pipeline. Exit code {@link JobExit#TABLE_FAILED} when a table
   * failed alone while the others completed.
   */
  private static int runMany(
      String[] args, CdcToDeltaOptions options, PrintStream err, UnaryOperator<JobConfig> adjust) {
    List<JobConfig> configs = new ArrayList<>();
    List<CdcToDeltaOptions> owns = new ArrayList<>();
    List<TablesOption.Table> listed;
    try {
      listed = TablesOption.tables(options, args);
      for (TablesOption.Table table : listed) {
        String[] tableArgs =
            MainJobHistory.withTemplate(
                TablesOption.tableArgs(args, table, options), options, table.captureInstance());
        // A value refused by its type (Beam's parse) or by the job's own check alike names where
        // the table is listed: the file and line, and the capture instance.
        try {
          CdcToDeltaOptions own = CommandLine.parseOnly(tableArgs, CdcToDeltaOptions.class);
          configs.add(adjust.apply(CdcToDeltaLauncher.config(own)));
          owns.add(own);
        } catch (IllegalArgumentException e) {
          throw new IllegalArgumentException(
              table.origin() + " (" + table.captureInstance() + "): " + CommandLine.firstLine(e),
              e);
        }
      }
      CdcToDeltaLauncher.checkObjectStores(configs);
      configs =
          MainJobHistory.withHistories(
              configs, MainJobHistory.plan(args, true, configs, owns, listed));
    } catch (IllegalArgumentException e) {
      err.println("error: " + CommandLine.firstLine(e));
      return JobExit.BAD_OPTION;
    }
    try {
      return CdcToDeltaLauncher.runMany(configs, listed, options, err);
    } catch (Throwable t) {
      return JobExit.failed(t, err, options.getVerbose());
    }
  }
}
