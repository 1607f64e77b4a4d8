package org.lakecdc.pipelines.history;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.beam.sdk.schemas.Schema;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.io.mssqlcdc.schema.MetadataColumns;
import org.lakecdc.pipelines.cli.CommandLine;
import org.lakecdc.pipelines.cli.OptionRefusedException;
import org.lakecdc.pipelines.cli.TablesOption;
import org.lakecdc.pipelines.options.CdcToDeltaOptions;
import org.lakecdc.pipelines.targets.JobConfig;
import org.lakecdc.pipelines.targets.TablePlan;
import org.lakecdc.transforms.delta.DeltaTables;

/**
 * The main job's history tables ({@code --history}, {@code --historyTemplate}, {@code
 * --historyColumns}): resolved and checked before anything is written ({@link #plan}) and set into
 * each table's configuration ({@link #withHistories}); the pipeline then applies them after each
 * bronze commit, beside silver ({@link HistoryPlan}).
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
   * {@link #plan(String[], boolean, List, List, List)} for a run that lists no tables from {@code
   * --tablesFile} lines.
   */
  public static List<Target> plan(
      String[] args, boolean many, List<JobConfig> configs, List<CdcToDeltaOptions> options) {
    return plan(args, many, configs, options, List.of());
  }

  /**
   * {@code configs} with the history of each of {@code targets} (matched by capture instance) set:
   * its path and tracked columns; the others as they were.
   */
  public static List<JobConfig> withHistories(List<JobConfig> configs, List<Target> targets) {
    List<JobConfig> out = new ArrayList<>();
    for (JobConfig config : configs) {
      JobConfig with = config;
      for (Target target : targets) {
        if (target.config() == config) {
          with = config.toBuilder().history(target.history(), target.columns()).build();
        }
      }
      out.add(with);
    }
    return out;
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
   * @param listed where each table was listed, in the order of {@code configs}, or empty: a refusal
   *     of a path a {@code --tablesFile} line gave names that line
   * @return the tables with a history, in order
   * @throws OptionRefusedException naming the option
   */
  public static List<Target> plan(
      String[] args,
      boolean many,
      List<JobConfig> configs,
      List<CdcToDeltaOptions> options,
      List<TablesOption.Table> listed) {
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
    Map<String, Integer> histories = new LinkedHashMap<>();
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
      Integer before = histories.put(path, i);
      String fromLines = sharedByLines(listed, before, i, configs, path);
      if (fromLines != null) {
        throw new OptionRefusedException(fromLines);
      }
      if (before != null) {
        throw new OptionRefusedException(
            "--"
                + option
                + ": tables "
                + configs.get(before).captureInstance()
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

  /**
   * The refusal of tables {@code before} and {@code now} sharing the history {@code path} when a
   * {@code --tablesFile} line gave either its {@code --history} (naming the lines), or null when
   * neither did (the template's refusal then names {@code --historyTemplate}) or no table shares.
   */
  private static @Nullable String sharedByLines(
      List<TablesOption.Table> listed,
      @Nullable Integer before,
      int now,
      List<JobConfig> configs,
      String path) {
    if (before == null || listed.isEmpty()) {
      return null;
    }
    TablesOption.Table first = listed.get(before);
    TablesOption.Table second = listed.get(now);
    boolean firstOwn =
        !CommandLine.values(first.args().toArray(String[]::new), "history").isEmpty();
    boolean secondOwn =
        !CommandLine.values(second.args().toArray(String[]::new), "history").isEmpty();
    if (!firstOwn && !secondOwn) {
      return null;
    }
    return "--history: tables "
        + configs.get(before).captureInstance()
        + " ("
        + (firstOwn ? first.origin() : "--historyTemplate")
        + ") and "
        + configs.get(now).captureInstance()
        + " ("
        + (secondOwn ? second.origin() : "--historyTemplate")
        + ") would share the history table "
        + path
        + ": give each table its own history; nothing was written";
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
}
