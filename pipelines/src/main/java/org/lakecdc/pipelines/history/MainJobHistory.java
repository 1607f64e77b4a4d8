package org.lakecdc.pipelines.history;

import java.io.PrintStream;
import java.time.Clock;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.apache.beam.sdk.schemas.Schema;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.io.mssqlcdc.schema.MetadataColumns;
import org.lakecdc.pipelines.cli.CommandLine;
import org.lakecdc.pipelines.cli.OptionRefusedException;
import org.lakecdc.pipelines.cli.TablesOption;
import org.lakecdc.pipelines.options.CdcToDeltaOptions;
import org.lakecdc.pipelines.targets.JobConfig;
import org.lakecdc.pipelines.targets.SilverPlan;
import org.lakecdc.pipelines.targets.TablePlan;
import org.lakecdc.transforms.delta.DeltaTables;
import org.lakecdc.transforms.history.HistoryApplier;
import org.lakecdc.transforms.history.HistoryResult;
import org.lakecdc.transforms.history.HistorySpec;

/**
 * The main job's history tables ({@code --history}, {@code --historyTemplate}, {@code
 * --historyColumns}): resolved and checked before anything is written ({@link #plan}), then applied
 * from bronze once the run's bronze commits are done, one line per table ({@link #apply}).
 */
public final class MainJobHistory {
  private MainJobHistory() {}

  /** One table's history: its configuration, the history path and the tracked columns. */
  public record Target(JobConfig config, String history, List<String> columns) {}

  /**
   * The {@code --history=} argument a table of {@code --tables}/{@code --tablesFile} gets from
   * {@code --historyTemplate}, appended to its own arguments when they give none.
   *
   * @param tableArgs the table's command line
   * @param options the shared options
   * @param captureInstance the table's capture instance
   * @return the table's command line, with its history
   */
  public static String[] withTemplate(
      String[] tableArgs, CdcToDeltaOptions options, String captureInstance) {
    if (options.getHistoryTemplate() == null
        || !CommandLine.values(tableArgs, "history").isEmpty()) {
      return tableArgs;
    }
    List<String> out = new ArrayList<>(List.of(tableArgs));
    out.add(
        "--history="
            + options
                .getHistoryTemplate()
                .replace(TablesOption.CI, captureInstance.toLowerCase(Locale.ROOT)));
    return out.toArray(String[]::new);
  }

  /**
   * The history of each table and the checks before anything is written: {@code --history} names
   * one table's (with {@code --tables} or {@code --tablesFile}: {@code --historyTemplate} with
   * {@code {ci}}, or a table's own {@code --history}); a history path must not be another table of
   * the run nor one another table's history, nor hold a table of another kind; tracked columns must
   * be columns the source captures.
   *
   * @param args the command line
   * @param many whether the run lists tables
   * @param configs each table's configuration
   * @param options each table's options, in the order of {@code configs}
   * @return the tables with a history, in order
   * @throws OptionRefusedException naming the option
   */
  public static List<Target> plan(
      String[] args, boolean many, List<JobConfig> configs, List<CdcToDeltaOptions> options) {
    if (!many && !CommandLine.values(args, "historyTemplate").isEmpty()) {
      throw new OptionRefusedException(
          "--historyTemplate applies to the tables of --tables or --tablesFile; for the one table"
              + " of --captureInstance give --history");
    }
    if (many && !CommandLine.values(args, "history").isEmpty()) {
      throw new OptionRefusedException(
          "--history names one table's history; with --tables or --tablesFile use"
              + " --historyTemplate (with {ci}), or a table's own --history in --tablesFile");
    }
    if (many && options.get(0).getHistoryTemplate() != null) {
      TablesOption.requireTemplate("historyTemplate", options.get(0).getHistoryTemplate());
    }
    String option = many ? "historyTemplate" : "history";
    List<Target> targets = new ArrayList<>();
    Map<String, String> histories = new LinkedHashMap<>();
    List<String> others = new ArrayList<>();
    for (int i = 0; i < configs.size(); i++) {
      JobConfig config = configs.get(i);
      CdcToDeltaOptions o = options.get(i);
      others.add(config.bronzePath());
      others.add(config.factsPath());
      others.add(config.controlPath());
      if (config.silverPath() != null) {
        others.add(config.silverPath());
      }
      List<String> columns = HistoryRun.columns(o.getHistoryColumns());
      if (o.getHistory() == null) {
        if (!columns.isEmpty()) {
          throw new OptionRefusedException(
              "--historyColumns are the tracked columns of a history table: pass --history (or"
                  + " --historyTemplate with --tables)");
        }
        continue;
      }
      String path = CommandLine.tablePath(option, o.getHistory());
      String before = histories.put(path, config.captureInstance());
      if (before != null) {
        throw new OptionRefusedException(
            "--"
                + option
                + ": tables "
                + before
                + " and "
                + config.captureInstance()
                + " would share the history table "
                + path
                + ": give each table its own history (a --historyTemplate with {ci}); nothing was"
                + " written");
      }
      targets.add(new Target(config, path, columns));
    }
    if (targets.isEmpty()) {
      return targets;
    }
    DeltaTables tables = configs.get(0).hadoopConf().tables();
    Map<String, String> byTable = new LinkedHashMap<>();
    for (Target target : targets) {
      byTable.put(target.config().captureInstance(), target.history());
    }
    HistoryRun.checkPaths(tables, option, byTable, others);
    for (Target target : targets) {
      checkCaptured(target);
    }
    return targets;
  }

  /** Tracked columns must be among the columns the source captures. */
  private static void checkCaptured(Target target) {
    if (target.columns().isEmpty()) {
      return;
    }
    Schema change = TablePlan.outputSchema(TablePlan.read(target.config()));
    List<String> captured = new ArrayList<>();
    for (Schema.Field field : change.getFields()) {
      if (!MetadataColumns.isReserved(field.getName())) {
        captured.add(field.getName());
      }
    }
    List<String> missing = new ArrayList<>();
    for (String column : target.columns()) {
      if (captured.stream().noneMatch(c -> c.equalsIgnoreCase(column))) {
        missing.add(column);
      }
    }
    if (!missing.isEmpty()) {
      throw new OptionRefusedException(
          "--historyColumns: "
              + missing
              + " are not captured columns of "
              + target.config().captureInstance()
              + " (captured: "
              + String.join(", ", captured)
              + "); nothing was written");
    }
  }

  /**
   * Applies each table's history from its bronze and prints {@link HistoryRun#line}; a failure is
   * printed as {@code History <ci> <path>: FAILED: <why>}.
   *
   * @return the tables whose history failed, as {@code <ci>: <why>}
   */
  public static List<String> apply(List<Target> targets, PrintStream out) {
    List<String> failed = new ArrayList<>();
    for (Target target : targets) {
      JobConfig config = target.config();
      String name = config.captureInstance();
      try {
        DeltaTables tables = config.hadoopConf().tables();
        SilverPlan.Resolved resolved =
            SilverPlan.resolve(
                config.clientFactory(), name, config.keys(), captured(tables, config));
        HistoryResult result =
            new HistoryApplier(tables, Clock.systemUTC())
                .apply(
                    new HistorySpec(
                        config.bronzePath(),
                        target.history(),
                        config.controlPath(),
                        config.factsPath(),
                        Set.copyOf(resolved.captureInstances()),
                        resolved.keys(),
                        target.columns(),
                        config.granularity(),
                        config.silverWaveRows()));
        out.println(HistoryRun.line(name, target.history(), result));
      } catch (RuntimeException e) {
        String line = CommandLine.firstLine(e);
        out.printf("History %s %s: FAILED: %s%n", name, target.history(), line);
        failed.add(name + ": " + line);
      }
    }
    return failed;
  }

  private static @Nullable List<String> captured(DeltaTables tables, JobConfig config) {
    if (!tables.exists(config.bronzePath())) {
      return null;
    }
    return org.lakecdc.transforms.silver.SilverTable.capturedColumns(
        org.lakecdc.transforms.delta.DeltaColumn.toBeamSchema(
            tables.describe(config.bronzePath()).columns()));
  }
}
