package org.lakecdc.pipelines;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.UnaryOperator;
import org.lakecdc.io.mssqlcdc.client.SqlCdcClientFactory;
import org.lakecdc.pipelines.cdc.CdcToDeltaJob;
import org.lakecdc.pipelines.cdc.CdcToDeltaLauncher;
import org.lakecdc.pipelines.cdc.TableListing;
import org.lakecdc.pipelines.cli.CommandLine;
import org.lakecdc.pipelines.cli.JobExit;
import org.lakecdc.pipelines.cli.RefusedLines;
import org.lakecdc.pipelines.cli.StartupWarmUp;
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
 * what it accepts, one per bad line of {@code --tablesFile}; nothing is written); 1 a failed run,
 * whatever the cause: a problem with the source or the target, a table that cannot be written (a
 * read-only location, a URI scheme without its Hadoop FileSystem, a full disk), {@link
 * OutOfMemoryError}, {@link StackOverflowError} or any other {@link Error} on any thread, also in
 * continuous mode and on every runner (one {@code error:} line with the cause and what to change;
 * {@code --verbose} prints the stack trace before it). What was committed stays committed, and a
 * rerun continues from it. The JVM always exits: the failed pipeline is cancelled, and a watchdog
 * halts the JVM when its shutdown takes longer than {@link JobExit#GRACE}.
 *
 * <p>This class parses and checks the command line and turns the outcome into the exit code; the
 * validation into a configuration, the run and its summary are {@link CdcToDeltaLauncher}'s.
 */
public final class CdcToDelta {
  private CdcToDelta() {}

  /** Entry point; {@link CdcToDeltaOptions} lists the options. Exits the JVM with the code. */
  public static void main(String[] args) {
    // Beam's options registry, Hadoop's defaults and Beam's protocol built beside the option check.
    StartupWarmUp.start();
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
    List<TablesOption.Table> listed = new ArrayList<>();
    try {
      List<TablesOption.Line> lines = TablesOption.listed(options, args);
      List<String> refusals = new ArrayList<>();
      Set<String> reasons = new HashSet<>();
      List<Integer> lineOf = new ArrayList<>();
      for (TablesOption.Line line : lines) {
        refusals.add(line.refusal());
        if (line.refusal() != null) {
          reasons.add(line.refusal());
          continue;
        }
        try {
          CdcToDeltaOptions own = tableOptions(args, options, line.table());
          configs.add(tableConfig(own, line.table(), adjust));
          owns.add(own);
          listed.add(line.table());
          lineOf.add(refusals.size() - 1);
        } catch (IllegalArgumentException e) {
          refusals.set(refusals.size() - 1, CommandLine.firstLine(e));
          reasons.add(CommandLine.firstLine(e.getCause() == null ? e : e.getCause()));
        }
      }
      if (configs.isEmpty() && refusals.size() > 1 && reasons.size() == 1) {
        // Every table refused for one reason: a value of the command line, which each one takes.
        throw new IllegalArgumentException(refusals.get(0));
      }
      if (configs.size() < lines.size()) {
        refuseLines(refusals, lineOf, configs, listed, options);
      }
      CdcToDeltaLauncher.checkObjectStores(configs);
      configs =
          MainJobHistory.withHistories(
              configs, MainJobHistory.plan(args, true, configs, owns, listed));
    } catch (IllegalArgumentException e) {
      for (String line : JobExit.errorLines(e)) {
        err.println("error: " + line);
      }
      return JobExit.BAD_OPTION;
    }
    try {
      return CdcToDeltaLauncher.runMany(
          configs,
          listed,
          options.getTablesFile() == null ? null : tablesFile(args, options, adjust),
          options,
          err);
    } catch (Throwable t) {
      return JobExit.failed(t, err, options.getVerbose());
    }
  }

  /**
   * Refuses the listed tables when a line is refused, naming every bad line at once in the order
   * listed: the refused lines, and the source's refusals of the accepted ones ({@link
   * CdcToDeltaLauncher#sourceRefusals}: an unknown capture instance, declared columns it cannot
   * hold) when the source is there to ask (a SQL Server that answers, or a simulator database
   * already built: a refused run builds no demo database).
   *
   * @param refusals one per listed line, in order: its refusal, or null when accepted
   * @param lineOf the line of each accepted table, in the order of {@code configs}
   * @throws RefusedLines always
   */
  private static void refuseLines(
      List<String> refusals,
      List<Integer> lineOf,
      List<JobConfig> configs,
      List<TablesOption.Table> listed,
      CdcToDeltaOptions options) {
    List<String> all = new ArrayList<>(refusals);
    if (options.getConnectionUrl() != null
        || java.nio.file.Files.exists(
            CdcToDeltaLauncher.fakePath(options).resolve("server.json"))) {
      try {
        List<String> source = CdcToDeltaLauncher.sourceRefusals(configs, listed);
        for (int i = 0; i < source.size(); i++) {
          all.set(lineOf.get(i), source.get(i));
        }
      } catch (RuntimeException e) {
        // The source cannot be asked (unreachable, no grant): the lines' own refusals, and the
        // run's checks say the rest once they are fixed.
      }
    }
    RefusedLines.throwIfAny(all);
  }

  /**
   * The options of one listed table: the command line's with the table's own over them, its target,
   * app id, silver and history from the templates.
   *
   * @throws IllegalArgumentException {@code <origin> (<capture instance>): <why>}
   */
  private static CdcToDeltaOptions tableOptions(
      String[] args, CdcToDeltaOptions options, TablesOption.Table table) {
    String[] tableArgs =
        MainJobHistory.withTemplate(
            TablesOption.tableArgs(args, table, options), options, table.captureInstance());
    try {
      return CommandLine.parseOnly(tableArgs, CdcToDeltaOptions.class);
    } catch (IllegalArgumentException e) {
      throw refused(table, e);
    }
  }

  /**
   * The configuration of one listed table: a value refused by its type (Beam's parse) or by the
   * job's own check alike names where the table is listed, the file and line, and the capture
   * instance.
   *
   * @throws IllegalArgumentException {@code <origin> (<capture instance>): <why>}
   */
  private static JobConfig tableConfig(
      CdcToDeltaOptions own, TablesOption.Table table, UnaryOperator<JobConfig> adjust) {
    try {
      return adjust.apply(CdcToDeltaLauncher.config(own));
    } catch (IllegalArgumentException e) {
      throw refused(table, e);
    }
  }

  private static IllegalArgumentException refused(
      TablesOption.Table table, IllegalArgumentException e) {
    return new IllegalArgumentException(
        table.origin() + " (" + table.captureInstance() + "): " + CommandLine.firstLine(e), e);
  }

  /**
   * The {@code --tablesFile} of a continuous run, read again while it runs: each line parsed and
   * validated alone, as the lines are at the start (its options, its object store, its history), a
   * refused line carrying its one-line refusal.
   *
   * @param args the command line
   * @param options its options
   * @param adjust applied to each table's configuration, as at the start
   */
  static TableListing tablesFile(
      String[] args, CdcToDeltaOptions options, UnaryOperator<JobConfig> adjust) {
    String file = options.getTablesFile();
    return new TableListing() {
      @Override
      public String name() {
        return "--tablesFile " + file;
      }

      @Override
      public List<Listed> read() {
        List<Listed> out = new ArrayList<>();
        for (TablesOption.Line line : TablesOption.lines(file)) {
          TablesOption.Table table = line.table();
          if (table == null) {
            out.add(new Listed(null, "--tablesFile " + file, List.of(), null, line.refusal()));
            continue;
          }
          try {
            CdcToDeltaOptions own = tableOptions(args, options, table);
            JobConfig config = tableConfig(own, table, adjust);
            CdcToDeltaLauncher.checkObjectStores(List.of(config));
            try {
              config =
                  MainJobHistory.withHistories(
                          List.of(config),
                          MainJobHistory.plan(
                              args, true, List.of(config), List.of(own), List.of(table)))
                      .get(0);
            } catch (IllegalArgumentException e) {
              throw refused(table, e);
            }
            out.add(
                new Listed(table.captureInstance(), table.origin(), table.args(), config, null));
          } catch (IllegalArgumentException e) {
            out.add(
                new Listed(
                    table.captureInstance(),
                    table.origin(),
                    table.args(),
                    null,
                    CommandLine.firstLine(e)));
          }
        }
        return out;
      }
    };
  }
}
