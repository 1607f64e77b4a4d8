package org.lakecdc.pipelines.silver;

import java.io.PrintStream;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.metrics.Metrics;
import org.apache.beam.sdk.transforms.Create;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.ParDo;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.io.mssqlcdc.client.CdcClientFactory;
import org.lakecdc.io.mssqlcdc.client.SourceTimeZone;
import org.lakecdc.pipelines.cli.CommandLine;
import org.lakecdc.pipelines.cli.JobExit;
import org.lakecdc.pipelines.cli.ObjectStores;
import org.lakecdc.pipelines.cli.OptionRefusedException;
import org.lakecdc.pipelines.cli.SqlServerSource;
import org.lakecdc.pipelines.cli.TablesOption;
import org.lakecdc.pipelines.history.HistoryRun;
import org.lakecdc.pipelines.options.ApplyChangesOptions;
import org.lakecdc.pipelines.targets.RunCounters;
import org.lakecdc.pipelines.targets.SilverPlan;
import org.lakecdc.transforms.Counts;
import org.lakecdc.transforms.delta.DataFileDetail;
import org.lakecdc.transforms.delta.DeltaColumn;
import org.lakecdc.transforms.delta.DeltaConflictException;
import org.lakecdc.transforms.delta.DeltaTables;
import org.lakecdc.transforms.delta.HadoopConf;
import org.lakecdc.transforms.delta.VacuumResult;
import org.lakecdc.transforms.finalization.Granularity;
import org.lakecdc.transforms.history.HistoryApplier;
import org.lakecdc.transforms.history.HistoryResult;
import org.lakecdc.transforms.history.HistorySpec;
import org.lakecdc.transforms.history.HistoryTable;
import org.lakecdc.transforms.position.StreamPosition;
import org.lakecdc.transforms.silver.ApplyChangesToSilver;
import org.lakecdc.transforms.silver.ApplyResult;
import org.lakecdc.transforms.silver.SilverApplier;
import org.lakecdc.transforms.silver.SilverMaintenance;
import org.lakecdc.transforms.silver.SilverMaintenance.CompactionOptions;
import org.lakecdc.transforms.silver.SilverMaintenance.CompactionResult;
import org.lakecdc.transforms.silver.SilverTable;
import org.lakecdc.transforms.silver.SilverTarget;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the {@code ApplyChanges} job's entry point ({@code org.lakecdc.pipelines.ApplyChanges})
 * delegates to: the checks of its options and tables before anything is written ({@link #check}),
 * then the apply of each table's silver in a Beam pipeline and the line per table ({@link #run}),
 * or the maintenance of each table's silver ({@code --maintenance}).
 */
public final class ApplyChangesLauncher {
  private static final Logger LOG = LoggerFactory.getLogger(ApplyChangesLauncher.class);

  private ApplyChangesLauncher() {}

  /**
   * One table of a run: its capture instance, bronze, silver and history (normalized; silver or
   * history null when the run has none for it).
   */
  public record Table(
      String captureInstance, String bronze, @Nullable String silver, @Nullable String history) {}

  /**
   * What the checks resolved, for the run: the maintenance operations (empty: the run applies), the
   * compaction and the vacuum's retention, the tables, the verdict's granularity, the key columns
   * of {@code --keys} (empty: each table's unique index), the Hadoop configuration, the control and
   * facts tables (normalized) and the source.
   */
  public record Checked(
      Set<String> maintenance,
      CompactionOptions compaction,
      Duration retention,
      List<Table> tables,
      Granularity granularity,
      List<String> keys,
      HadoopConf conf,
      String control,
      String facts,
      CdcClientFactory source,
      List<String> historyColumns) {}

  /**
   * Checks the options and the tables before anything is written.
   *
   * @param args the command line (which options were given)
   * @throws IllegalArgumentException naming the option, the value and what it accepts
   */
  public static Checked check(ApplyChangesOptions options, String[] args) {
    Set<String> maintenance;
    CompactionOptions compaction;
    Duration retention;
    List<Table> tables;
    Granularity granularity;
    List<String> keys;
    HadoopConf conf;
    String control;
    String facts;
    CdcClientFactory source;
    tables = tables(options, args);
    granularity = options.getGranularity();
    keys = CommandLine.keys(options.getKeys());
    if (options.getSilverWaveRows() < 1) {
      throw new IllegalArgumentException(
          "--silverWaveRows must be a positive integer, not '" + options.getSilverWaveRows() + "'");
    }
    maintenance = maintenance(options.getMaintenance());
    compaction =
        compaction(
            options.getSilverCompactDeletedFraction(),
            CommandLine.typed(
                options,
                "silverCompactDeletedFraction",
                options.getSilverCompactDeletedFraction()));
    retention = retention(options.getSilverVacuumRetentionHours());
    control =
        CommandLine.writableTableLocation(
            "control", CommandLine.tablePath("control", options.getControl()));
    facts = CommandLine.tablePath("facts", options.getFacts());
    conf = hadoopConf(options);
    List<String> paths = new ArrayList<>(List.of(control, facts));
    for (Table table : tables) {
      paths.add(table.bronze());
      if (table.silver() != null) {
        paths.add(table.silver());
      }
      if (table.history() != null) {
        paths.add(table.history());
      }
    }
    ObjectStores.check(conf, paths);
    source = source(options);
    tables = checkTables(tables, conf.tables(), !maintenance.isEmpty(), args);
    List<String> historyColumns = HistoryRun.columns(options.getHistoryColumns());
    checkHistories(tables, conf.tables(), control, facts, historyColumns, maintenance, args);
    if (!CommandLine.values(args, "facts").isEmpty()) {
      CommandLine.existingTable(
          conf.tables(),
          "facts",
          facts,
          null,
          "give the facts table the main job wrote for these bronze tables (leave --facts out"
              + " to apply without one)");
    }
    return new Checked(
        maintenance,
        compaction,
        retention,
        tables,
        granularity,
        keys,
        conf,
        control,
        facts,
        source,
        historyColumns);
  }

  /**
   * Applies each table's silver in a Beam pipeline on the chosen runner and prints one line per
   * table, or with {@code --maintenance} maintains each table's silver.
   *
   * @param clock the clock the vacuum measures the retention back from
   * @param out where the per-table lines go
   * @param err where {@code warning:} and {@code error:} lines go
   * @return {@link JobExit#OK} or {@link JobExit#TABLE_FAILED}
   */
  public static int run(
      ApplyChangesOptions options, Checked checked, Clock clock, PrintStream out, PrintStream err) {
    Set<String> maintenance = checked.maintenance();
    CompactionOptions compaction = checked.compaction();
    Duration retention = checked.retention();
    List<Table> tables = checked.tables();
    Granularity granularity = checked.granularity();
    List<String> keys = checked.keys();
    HadoopConf conf = checked.conf();
    String control = checked.control();
    String facts = checked.facts();
    CdcClientFactory source = checked.source();
    DeltaTables delta = conf.tables();
    String factsOrNull = facts;
    if (!delta.exists(facts)) {
      err.println(
          "warning: no facts table at "
              + facts
              + " (the default --facts): silver is applied without snapshot facts (its verdict"
              + " stays unset while a snapshot cannot be ruled out)");
      factsOrNull = null;
    }
    Instant startedAt = Instant.now();
    Map<String, SilverTarget> targets = new LinkedHashMap<>();
    for (Table table : tables) {
      if (table.silver() == null) {
        continue;
      }
      List<String> captured =
          delta.exists(table.bronze())
              ? SilverTable.capturedColumns(
                  DeltaColumn.toBeamSchema(delta.describe(table.bronze()).columns()))
              : null;
      SilverPlan.Resolved resolved =
          SilverPlan.resolve(source, table.captureInstance(), keys, captured);
      targets.put(
          table.captureInstance(),
          new SilverTarget(
              table.captureInstance(),
              table.bronze(),
              table.silver(),
              control,
              factsOrNull,
              resolved.captureInstances(),
              resolved.keys(),
              granularity,
              options.getSilverWaveRows(),
              startedAt,
              conf,
              SilverTarget.DEFAULT_APPLY_INTERVAL,
              null));
    }
    if (!maintenance.isEmpty()) {
      List<Maintained> maintained = new ArrayList<>();
      for (SilverTarget target : targets.values()) {
        maintained.add(
            new Maintained(
                "Silver", target.appId(), target.silver(), target.keys(), file -> Boolean.TRUE));
      }
      for (Table table : tables) {
        if (table.history() != null) {
          maintained.add(
              new Maintained(
                  "History",
                  table.captureInstance(),
                  table.history(),
                  List.of(),
                  HistoryTable::fileKind));
        }
      }
      return maintain(
          maintained,
          new SilverMaintenance(delta, clock),
          maintenance,
          compaction,
          retention,
          out,
          err);
    }
    PipelineResult result = null;
    if (!targets.isEmpty()) {
      Pipeline pipeline = Pipeline.create(options);
      pipeline
          .apply("Tables", Create.of(List.copyOf(targets.keySet())).withCoder(StringUtf8Coder.of()))
          .apply("Apply changes to silver", ParDo.of(new ApplyFn(targets)));
      result = JobExit.run(pipeline);
    }
    List<String> failed = new ArrayList<>();
    for (SilverTarget target : targets.values()) {
      String name = target.appId();
      ApplyResult applied;
      try {
        // Nothing new after the pipeline's apply: this reads the position and the verdict, and
        // applies what reached bronze since (or what a failed apply left).
        applied = new SilverApplier(delta, Clock.systemUTC()).apply(target.spec());
      } catch (RuntimeException e) {
        String line = CommandLine.firstLine(e);
        out.printf("Silver %s %s: FAILED: %s%n", name, target.silver(), line);
        failed.add(name + ": " + line);
        continue;
      }
      String table = RunCounters.tableNamespace(name);
      out.println(
          SilverRun.line(
              name,
              target.silver(),
              applied,
              applied.rebuilt()
                  || RunCounters.counter(result, table, ApplyChangesToSilver.REBUILDS) > 0,
              applied.waves() + RunCounters.counter(result, table, ApplyChangesToSilver.WAVES),
              applied.keysApplied()
                  + RunCounters.counter(result, table, ApplyChangesToSilver.KEYS_APPLIED)));
    }
    for (Table table : tables) {
      if (table.history() == null) {
        continue;
      }
      String name = table.captureInstance();
      try {
        List<String> captured =
            delta.exists(table.bronze())
                ? SilverTable.capturedColumns(
                    DeltaColumn.toBeamSchema(delta.describe(table.bronze()).columns()))
                : null;
        SilverPlan.Resolved resolved = SilverPlan.resolve(source, name, keys, captured);
        HistoryResult applied =
            new HistoryApplier(delta, Clock.systemUTC())
                .apply(
                    new HistorySpec(
                        table.bronze(),
                        table.history(),
                        control,
                        factsOrNull,
                        Set.copyOf(resolved.captureInstances()),
                        resolved.keys(),
                        checked.historyColumns(),
                        granularity,
                        options.getSilverWaveRows()));
        out.println(HistoryRun.line(name, table.history(), applied));
      } catch (RuntimeException e) {
        String line = CommandLine.firstLine(e);
        out.printf("History %s %s: FAILED: %s%n", name, table.history(), line);
        failed.add(name + ": " + line);
      }
    }
    if (!failed.isEmpty()) {
      err.println(
          "error: "
              + Counts.of(failed.size(), "table", "tables")
              + " of "
              + targets.size()
              + " failed, the others were applied: "
              + String.join(" | ", failed));
      return JobExit.TABLE_FAILED;
    }
    return JobExit.OK;
  }

  /** The operations {@code --maintenance} accepts, in the order they run. */
  public static final List<String> MAINTENANCE = List.of("compact", "vacuum");

  /**
   * The operations of {@code --maintenance}: empty when it is not given (the job applies).
   *
   * @throws IllegalArgumentException naming the option and what it accepts
   */
  static Set<String> maintenance(@Nullable String value) {
    Set<String> chosen = new java.util.LinkedHashSet<>();
    if (value == null) {
      return chosen;
    }
    for (String part : value.split(",", -1)) {
      String op = part.strip().toLowerCase(Locale.ROOT);
      if (!MAINTENANCE.contains(op) || !chosen.add(op)) {
        throw new IllegalArgumentException(
            "--maintenance must be compact, vacuum or compact,vacuum, not '" + value + "'");
      }
    }
    return chosen;
  }

  /**
   * The compaction of {@code --silverCompactDeletedFraction} (other values: {@link
   * CompactionOptions#DEFAULTS}).
   *
   * @param typed the value as the user typed it, for the message
   * @throws IllegalArgumentException naming the option, the value as typed and what it accepts
   */
  static CompactionOptions compaction(double deletedFraction, String typed) {
    if (!(deletedFraction > 0 && deletedFraction <= 1)) {
      throw new IllegalArgumentException(
          "--silverCompactDeletedFraction must be a number greater than 0 and at most 1, not '"
              + typed
              + "'");
    }
    CompactionOptions d = CompactionOptions.DEFAULTS;
    return new CompactionOptions(deletedFraction, d.targetFileBytes(), d.maxFilesPerBin());
  }

  /**
   * The retention of {@code --silverVacuumRetentionHours}.
   *
   * @throws IllegalArgumentException when it is below 1 hour
   */
  static Duration retention(long hours) {
    return CommandLine.retentionHours("silverVacuumRetentionHours", hours);
  }

  /**
   * Runs the maintenance on each table's silver and history, one line per table: "Silver
   * maintenance {ci} {silver}: " (or "History maintenance {ci} {history}: ") then, for compact,
   * "compacted F files into N (R rows, P deleted rows purged)" or "nothing to compact" (or
   * "compaction skipped ..." when a concurrent commit won, logged at INFO), and for vacuum
   * "vacuumed V files (B bytes)".
   *
   * @return {@link JobExit#OK}, or {@link JobExit#TABLE_FAILED} when a table's maintenance failed
   *     (the others ran)
   */
  /**
   * A table to maintain: its kind's word for the line ({@code Silver} or {@code History}), its
   * capture instance, its path, the keys its compaction sorts by (empty: none) and the kinds of
   * files its compaction never packs together (a history's closed and current versions).
   */
  private record Maintained(
      String label,
      String name,
      String path,
      List<String> keys,
      Function<DataFileDetail, @Nullable Object> kinds) {}

  private static int maintain(
      List<Maintained> targets,
      SilverMaintenance maintenance,
      Set<String> operations,
      CompactionOptions compaction,
      Duration retention,
      PrintStream out,
      PrintStream err) {
    List<String> failed = new ArrayList<>();
    for (Maintained target : targets) {
      String name = target.name();
      List<String> done = new ArrayList<>();
      try {
        if (operations.contains("compact")) {
          CompactionResult c = null;
          try {
            c = maintenance.compact(target.path(), target.keys(), compaction, target.kinds());
          } catch (DeltaConflictException e) {
            // A silver apply committed meanwhile and wins; its files stay orphans for the vacuum.
            LOG.info("Compaction of {} skipped, a concurrent commit won: {}", target.path(), e);
          }
          done.add(
              c == null
                  ? "compaction skipped (a concurrent commit won; run it again)"
                  : c.committed()
                      ? "compacted "
                          + Counts.of(c.filesRemoved(), "file", "files")
                          + " into "
                          + Counts.of(c.filesAdded(), "file", "files")
                          + " ("
                          + Counts.of(c.rowsWritten(), "row", "rows")
                          + ", "
                          + Counts.of(c.deletedRowsPurged(), "deleted row", "deleted rows")
                          + " purged)"
                      : "nothing to compact");
        }
        if (operations.contains("vacuum")) {
          VacuumResult v = maintenance.vacuum(target.path(), retention, false);
          done.add(
              "vacuumed "
                  + Counts.of(v.files().size(), "file", "files")
                  + " ("
                  + Counts.of(v.bytes(), "byte", "bytes")
                  + ")");
        }
      } catch (RuntimeException e) {
        String line = CommandLine.firstLine(e);
        out.printf("%s maintenance %s %s: FAILED: %s%n", target.label(), name, target.path(), line);
        failed.add(name + ": " + line);
        continue;
      }
      out.printf(
          "%s maintenance %s %s: %s%n",
          target.label(), name, target.path(), String.join(", ", done));
    }
    if (!failed.isEmpty()) {
      err.println(
          "error: maintenance of "
              + Counts.of(failed.size(), "table", "tables")
              + " of "
              + targets.size()
              + " failed, the others ran: "
              + String.join(" | ", failed));
      return JobExit.TABLE_FAILED;
    }
    return JobExit.OK;
  }

  /**
   * The tables of the command line: one, or those of {@code --tables} with the templates.
   *
   * @throws IllegalArgumentException naming the option and what it accepts
   */
  static List<Table> tables(ApplyChangesOptions o, String[] args) {
    if (o.getTables() == null) {
      for (String[] option :
          new String[][] {
            {"bronzeTemplate", "--bronze"},
            {"silverTemplate", "--silver"},
            {"historyTemplate", "--history"}
          }) {
        if (!CommandLine.values(args, option[0]).isEmpty()) {
          throw new IllegalArgumentException(
              "--"
                  + option[0]
                  + " applies to the tables of --tables; for the one table of --captureInstance"
                  + " give "
                  + option[1]);
        }
      }
      String ci = CommandLine.required("captureInstance", o.getCaptureInstance());
      String bronze =
          o.getBronze() != null
              ? o.getBronze()
              : "lakecdc-demo/delta/" + ci.toLowerCase(Locale.ROOT);
      if (o.getSilver() == null && o.getHistory() == null) {
        throw new IllegalArgumentException(
            "--silver must name the silver table to apply to (a path or URI, e.g."
                + " lakecdc-demo/delta/silver/"
                + ci.toLowerCase(Locale.ROOT)
                + ")");
      }
      return List.of(
          table(
              ci,
              CommandLine.tablePath("bronze", bronze),
              o.getSilver() == null ? null : CommandLine.tablePath("silver", o.getSilver()),
              o.getHistory() == null ? null : CommandLine.tablePath("history", o.getHistory()),
              "--silver"));
    }
    for (String single : List.of("captureInstance", "bronze", "silver", "history")) {
      if (!CommandLine.values(args, single).isEmpty()) {
        throw new IllegalArgumentException(
            "--"
                + single
                + " names one table; with --tables each table has its own (use --bronzeTemplate"
                + " and --silverTemplate)");
      }
    }
    TablesOption.requireTemplate("bronzeTemplate", o.getBronzeTemplate());
    if (o.getHistoryTemplate() == null || o.getSilverTemplate() != null) {
      TablesOption.requireTemplate("silverTemplate", o.getSilverTemplate());
    }
    if (o.getHistoryTemplate() != null) {
      TablesOption.requireTemplate("historyTemplate", o.getHistoryTemplate());
    }
    List<Table> tables = new ArrayList<>();
    java.util.Set<String> seen = new java.util.HashSet<>();
    for (String name : o.getTables().split(",", -1)) {
      if (name.isBlank()) {
        throw new IllegalArgumentException(
            "--tables must list capture instances separated by commas (dbo_orders,dbo_lineitem),"
                + " without an empty one: '"
                + o.getTables()
                + "'");
      }
      String ci = name.strip();
      String lower = ci.toLowerCase(Locale.ROOT);
      if (!seen.add(lower)) {
        throw new IllegalArgumentException(
            "--tables: capture instance " + ci + " is listed twice (names match ignoring case)");
      }
      tables.add(
          table(
              ci,
              CommandLine.tablePath(
                  "bronzeTemplate", o.getBronzeTemplate().replace(TablesOption.CI, lower)),
              o.getSilverTemplate() == null
                  ? null
                  : CommandLine.tablePath(
                      "silverTemplate", o.getSilverTemplate().replace(TablesOption.CI, lower)),
              o.getHistoryTemplate() == null
                  ? null
                  : CommandLine.tablePath(
                      "historyTemplate", o.getHistoryTemplate().replace(TablesOption.CI, lower)),
              "--silverTemplate"));
    }
    return tables;
  }

  /**
   * The tables after the checks that need their Delta tables, before anything is written: each
   * applied table's bronze must exist (a maintained table's silver), and each silver must be
   * creatable. One table given by {@code --bronze} without {@code --captureInstance} takes the
   * capture instance bronze's position records, so silver's keys are its table's.
   *
   * @param maintain whether the run maintains silver instead of applying bronze
   * @throws OptionRefusedException naming the option and the path
   */
  private static List<Table> checkTables(
      List<Table> tables, DeltaTables delta, boolean maintain, String[] args) {
    boolean many = tables.size() > 1 || !CommandLine.values(args, "tables").isEmpty();
    List<Table> checked = new ArrayList<>();
    for (Table table : tables) {
      String silverOption = many ? "silverTemplate" : "silver";
      if (maintain) {
        if (table.silver() != null) {
          CommandLine.existingTable(
              delta,
              silverOption,
              table.silver(),
              null,
              "maintenance keeps an existing silver table healthy; apply bronze to it first"
                  + " (without --maintenance)");
        }
        if (table.history() != null) {
          CommandLine.existingTable(
              delta,
              many ? "historyTemplate" : "history",
              table.history(),
              null,
              "maintenance keeps an existing history table healthy; apply bronze to it first"
                  + " (without --maintenance)");
        }
        checked.add(table);
        continue;
      }
      String bronzeOption = many ? "bronzeTemplate" : "bronze";
      boolean bronzeGiven = !CommandLine.values(args, bronzeOption).isEmpty();
      CommandLine.existingTable(
          delta,
          bronzeOption,
          table.bronze(),
          bronzeGiven
              ? null
              : many
                  ? "the default --bronzeTemplate for " + table.captureInstance()
                  : CommandLine.defaultFor(args, table.captureInstance()),
          "give the bronze table the main job wrote (its --target)");
      if (table.silver() != null) {
        CommandLine.writableTableLocation(silverOption, table.silver());
      }
      String ci = table.captureInstance();
      if (!many && bronzeGiven && CommandLine.values(args, "captureInstance").isEmpty()) {
        ci =
            StreamPosition.fromJson(
                    delta.domainMetadata(table.bronze(), StreamPosition.BRONZE_DOMAIN))
                .map(StreamPosition::captureInstance)
                .filter(name -> !name.isEmpty())
                .orElse(ci);
      }
      checked.add(new Table(ci, table.bronze(), table.silver(), table.history()));
    }
    return checked;
  }

  private static Table table(
      String ci,
      String bronze,
      @Nullable String silver,
      @Nullable String history,
      String silverOption) {
    if (bronze.equals(silver)) {
      throw new IllegalArgumentException(
          silverOption + " must be a table of its own, not the bronze table " + bronze);
    }
    return new Table(ci, bronze, silver, history);
  }

  /**
   * The history checks before anything is written: each history path its own table's and of kind
   * history when it exists, and the tracked columns captured columns of each bronze.
   *
   * @throws OptionRefusedException naming the option
   */
  private static void checkHistories(
      List<Table> tables,
      DeltaTables delta,
      String control,
      String facts,
      List<String> historyColumns,
      Set<String> maintenance,
      String[] args) {
    Map<String, String> histories = new LinkedHashMap<>();
    List<String> others = new ArrayList<>(List.of(control, facts));
    for (Table table : tables) {
      others.add(table.bronze());
      if (table.silver() != null) {
        others.add(table.silver());
      }
      if (table.history() != null) {
        histories.put(table.captureInstance(), table.history());
      }
    }
    if (histories.isEmpty()) {
      if (!historyColumns.isEmpty()) {
        throw new OptionRefusedException(
            "--historyColumns are the tracked columns of a history table: pass --history (or"
                + " --historyTemplate with --tables)");
      }
      return;
    }
    boolean many = tables.size() > 1 || !CommandLine.values(args, "tables").isEmpty();
    HistoryRun.checkPaths(delta, many ? "historyTemplate" : "history", histories, others);
    if (maintenance.isEmpty()) {
      for (Table table : tables) {
        if (table.history() != null) {
          HistoryRun.checkColumns(delta, table.bronze(), historyColumns);
        }
      }
    }
  }

  /** The simulator of {@code --fakePath} (default the demo's), or the SQL Server. */
  private static CdcClientFactory source(ApplyChangesOptions o) {
    SourceTimeZone zone = SqlServerSource.checkTimeoutAndZone(o);
    if (o.getConnectionUrl() != null) {
      if (o.getFakePath() != null) {
        throw new IllegalArgumentException(
            "--fakePath is for the simulator and --connectionUrl for a real SQL Server: pass one"
                + " of them, not both");
      }
      return SqlServerSource.factory(o, zone, null);
    }
    return CommandLine.simulator(o.getFakePath(), "the bronze tables were read from");
  }

  private static HadoopConf hadoopConf(ApplyChangesOptions o) {
    HadoopConf conf = HadoopConf.empty();
    if (o.getHadoopConfFile() != null) {
      conf =
          HadoopConf.readFile(
              "hadoopConfFile", CommandLine.required("hadoopConfFile", o.getHadoopConfFile()));
    }
    if (o.getHadoopConf() != null) {
      conf = conf.overriddenBy(HadoopConf.parseEntries("hadoopConf", o.getHadoopConf()));
    }
    return conf;
  }

  /**
   * Applies each table's silver once, one table per element; a failed apply is logged and counted
   * ({@code silver_failures} of the table), and the launcher's apply after the pipeline reports it.
   */
  static final class ApplyFn extends DoFn<String, Void> {
    private final Map<String, SilverTarget> targets;
    private transient SilverApplier applier;

    ApplyFn(Map<String, SilverTarget> targets) {
      this.targets = new LinkedHashMap<>(targets);
    }

    @Setup
    public void setup() {
      applier =
          new SilverApplier(
              targets.values().iterator().next().hadoopConf().tables(), Clock.systemUTC());
    }

    @ProcessElement
    public void process(@Element String name) {
      SilverTarget target = targets.get(name);
      String table = RunCounters.tableNamespace(name);
      try {
        ApplyResult result = applier.apply(target.spec());
        Metrics.counter(table, ApplyChangesToSilver.APPLIES).inc();
        Metrics.counter(table, ApplyChangesToSilver.WAVES).inc(result.waves());
        Metrics.counter(table, ApplyChangesToSilver.KEYS_APPLIED).inc(result.keysApplied());
        if (result.rebuilt()) {
          Metrics.counter(table, ApplyChangesToSilver.REBUILDS).inc();
        }
      } catch (RuntimeException e) {
        Metrics.counter(table, "silver_failures").inc();
        LOG.warn("Silver {} of {} could not be applied: {}", target.silver(), name, e.toString());
      }
    }
  }
}
