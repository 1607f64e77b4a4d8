package org.lakecdc.pipelines.cdc;

import java.io.PrintStream;
import java.math.BigDecimal;
import java.math.MathContext;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.io.mssqlcdc.client.CdcClientFactory;
import org.lakecdc.io.mssqlcdc.client.IsolationLevel;
import org.lakecdc.io.mssqlcdc.client.SourceTimeZone;
import org.lakecdc.io.mssqlcdc.fake.FakeCdcClientFactory;
import org.lakecdc.io.mssqlcdc.read.DataLossPolicy;
import org.lakecdc.io.mssqlcdc.read.SchemaChangePolicy;
import org.lakecdc.io.mssqlcdc.read.StartingLsn;
import org.lakecdc.io.mssqlcdc.schema.ColumnsDdl;
import org.lakecdc.pipelines.cli.CommandLine;
import org.lakecdc.pipelines.cli.ConsoleLogging;
import org.lakecdc.pipelines.cli.JobExit;
import org.lakecdc.pipelines.cli.ObjectStores;
import org.lakecdc.pipelines.cli.OptionRefusedException;
import org.lakecdc.pipelines.cli.RefusedLines;
import org.lakecdc.pipelines.cli.SqlServerSource;
import org.lakecdc.pipelines.cli.TablesOption;
import org.lakecdc.pipelines.demo.DemoDatabase;
import org.lakecdc.pipelines.options.CdcToDeltaOptions;
import org.lakecdc.pipelines.targets.JobConfig;
import org.lakecdc.pipelines.targets.SeedCopy;
import org.lakecdc.pipelines.targets.SnapshotSettings;
import org.lakecdc.pipelines.targets.TablePlan;
import org.lakecdc.pipelines.targets.TargetIdentity;
import org.lakecdc.transforms.Counts;
import org.lakecdc.transforms.delta.HadoopConf;
import org.lakecdc.transforms.delta.TablePaths;
import org.lakecdc.transforms.finalization.Granularity;

/**
 * What the main job's entry point ({@code org.lakecdc.pipelines.CdcToDelta}) delegates to: the
 * options validated into a {@link JobConfig} ({@link #config}), the checks before anything is
 * written (the S3 settings, the declared columns of many tables), the run of one table or of many
 * ({@link CdcToDeltaJob}, {@link ContinuousMode}) with the demo database and its application, and
 * the summary printed after it.
 */
public final class CdcToDeltaLauncher {
  private CdcToDeltaLauncher() {}

  /**
   * Runs one table's validated configuration: builds the demo database when the run reads it and it
   * is absent, checks the capture instance, starts the log file, then runs once or continuously and
   * prints the summary.
   *
   * @throws Exception whatever the run failed with (the entry point turns it into its exit code)
   */
  public static void run(JobConfig config, CdcToDeltaOptions options) throws Exception {
    ensureDemo(options);
    CaptureInstanceCheck.check(
        config.clientFactory(),
        List.of(new CaptureInstanceCheck.Given(config.captureInstance(), "--captureInstance")));
    TargetIdentity.checkBeforeWriting(config);
    ConsoleLogging.startFile(options);
    Runnable beforeStream = demoApplication(options, List.of(config.captureInstance()));
    if (options.getContinuous()) {
      ContinuousMode.run(
          config,
          options,
          System.out,
          beforeStream,
          summary -> printLast(() -> printSummary(config, summary), options));
    } else {
      JobSummary summary = CdcToDeltaJob.run(config, options, System.out, beforeStream);
      printLast(() -> printSummary(config, summary), options);
    }
  }

  /**
   * Runs many tables' validated configurations in one pipeline ({@code --tables}, {@code
   * --tablesFile}) and prints the summary.
   *
   * @param listed the tables as the command line lists them, in the order of {@code configs}
   * @param err where the {@code error:} line of the tables that failed goes
   * @return {@link JobExit#OK}, or {@link JobExit#TABLE_FAILED} when a table failed alone while the
   *     others completed
   * @throws Exception whatever the run failed with (the entry point turns it into its exit code)
   */
  public static int runMany(
      List<JobConfig> configs,
      List<TablesOption.Table> listed,
      CdcToDeltaOptions options,
      PrintStream err)
      throws Exception {
    return runMany(configs, listed, null, options, err);
  }

  /**
   * {@link #runMany(List, List, CdcToDeltaOptions, PrintStream)}; a continuous run also follows
   * {@code listing} when given: tables added to it join the run, tables removed from it leave
   * ({@link ContinuousMode#runAll(List, TableListing, CdcToDeltaOptions, PrintStream, Runnable,
   * java.util.function.Consumer)}).
   *
   * @param listing where the tables are listed ({@code --tablesFile}), or null
   */
  public static int runMany(
      List<JobConfig> configs,
      List<TablesOption.Table> listed,
      @Nullable TableListing listing,
      CdcToDeltaOptions options,
      PrintStream err)
      throws Exception {
    ensureDemo(options);
    // Before the log file starts: a refused run appends nothing to it.
    RefusedLines.throwIfAny(sourceRefusals(configs, listed));
    ConsoleLogging.startFile(options);
    Runnable beforeStream =
        demoApplication(options, configs.stream().map(JobConfig::captureInstance).toList());
    List<CdcToDeltaJob.TableOutcome> outcomes = new ArrayList<>();
    if (options.getContinuous()) {
      // Printed inside the run: a JVM stopped by a signal exits once the run has returned.
      ContinuousMode.runAll(
          configs,
          listing,
          options,
          System.out,
          beforeStream,
          done -> {
            outcomes.addAll(done);
            printLast(() -> printSummary(done, System.out), options);
          });
    } else {
      outcomes.addAll(CdcToDeltaJob.runAll(configs, options, System.out, beforeStream));
      printLast(() -> printSummary(outcomes, System.out), options);
    }
    List<CdcToDeltaJob.TableOutcome> failed =
        outcomes.stream().filter(CdcToDeltaJob.TableOutcome::failed).toList();
    if (!failed.isEmpty()) {
      err.println(
          "error: "
              + Counts.of(failed.size(), "table", "tables")
              + " of "
              + outcomes.size()
              + " failed and stopped alone, the others completed: "
              + String.join(
                  " | ",
                  failed.stream()
                      .map(f -> f.config().captureInstance() + ": " + f.failure().get().text())
                      .toList()));
      return JobExit.TABLE_FAILED;
    }
    return JobExit.OK;
  }

  /**
   * Checks the S3 settings of the runs' {@code s3a://} tables before anything is written ({@link
   * S3StoreCheck}): a wrong endpoint, refused credentials, a missing bucket or a store without
   * conditional writes is a refused option (exit code 2).
   */
  public static void checkObjectStores(List<JobConfig> configs) {
    for (JobConfig c : configs) {
      ObjectStores.check(
          c.hadoopConf(), c.bronzePath(), c.factsPath(), c.controlPath(), c.silverPath());
    }
  }

  /**
   * The source's refusals of listed tables, before anything is written: a capture instance the
   * source does not have (a {@code --tablesFile}'s named by its file and line, {@code --tables}'
   * together in one refusal: {@link CaptureInstanceCheck#refusals}), else declared columns ({@code
   * --columns}) its capture instances cannot hold ({@code <origin> (<capture instance>): --columns:
   * <why>}).
   *
   * @param configs the tables' validated configurations, one source
   * @param listed where each is listed, in the order of {@code configs}
   * @return one entry per table, in order: its refusal, or null
   */
  public static List<String> sourceRefusals(
      List<JobConfig> configs, List<TablesOption.Table> listed) {
    if (configs.isEmpty()) {
      return List.of();
    }
    List<String> refusals =
        new ArrayList<>(
            CaptureInstanceCheck.refusals(
                configs.get(0).clientFactory(),
                listed.stream()
                    .map(
                        t ->
                            new CaptureInstanceCheck.Given(
                                t.captureInstance(),
                                t.origin().startsWith("--tablesFile") ? t.origin() : "--tables"))
                    .toList()));
    for (int i = 0; i < configs.size(); i++) {
      JobConfig config = configs.get(i);
      if (refusals.get(i) != null || config.columns() == null) {
        continue;
      }
      try {
        TablePlan.outputSchema(TablePlan.read(config));
      } catch (OptionRefusedException e) {
        refusals.set(
            i, listed.get(i).origin() + " (" + config.captureInstance() + "): " + e.getMessage());
      } catch (org.lakecdc.io.mssqlcdc.client.CaptureInstanceNotFoundError e) {
        // A --tables' unknown capture instance: named in the refusal of the first one.
      }
    }
    return refusals;
  }

  /** Builds the demo database first when the run reads the default simulator and it is absent. */
  private static void ensureDemo(CdcToDeltaOptions options) {
    if (options.getConnectionUrl() == null) {
      Path source = fakePath(options);
      DemoDatabase.Summary demo =
          DemoDatabase.ensure(source, options.getDemoScale(), options.getDemoTransactions());
      if (demo.created()) {
        System.out.println(demo.builtText(source));
      }
    }
  }

  /**
   * What runs before the stream: with the simulator, the demo application writing the next part of
   * its history the first time a job streams each of the demo's capture instances (a no-op for a
   * database that is not the demo); nothing with a real SQL Server.
   */
  private static Runnable demoApplication(CdcToDeltaOptions options, List<String> instances) {
    if (options.getConnectionUrl() != null) {
      return () -> {};
    }
    Path demo = fakePath(options);
    return () -> {
      for (String ci : instances) {
        DemoDatabase.Continuation more =
            DemoDatabase.continueHistory(demo, options.getDemoTransactions(), ci, System.out);
        if (more.transactions() > 0) {
          System.out.printf(
              "The demo application committed %s%s%n",
              Counts.of(more.transactions(), "transaction", "transactions"), more.description());
        }
      }
    };
  }

  /**
   * Validates the options into a job configuration.
   *
   * @throws IllegalArgumentException naming the option, the value and what it accepts
   */
  public static JobConfig config(CdcToDeltaOptions o) {
    String ci = required("captureInstance", o.getCaptureInstance());
    if (o.getMaxCommitsPerBatch() < 0) {
      throw new IllegalArgumentException(
          "--maxCommitsPerBatch must be a positive integer, or 0 to read up to max_lsn, not '"
              + o.getMaxCommitsPerBatch()
              + "'");
    }
    if (o.getNumPartitions() < 1) {
      throw new IllegalArgumentException(
          "--numPartitions must be a positive integer, not '" + o.getNumPartitions() + "'");
    }
    if (!(o.getDemoScale() > 0 && o.getDemoScale() <= 1)) {
      throw new IllegalArgumentException(
          "--demoScale must be a TPC-H scale factor in (0, 1], not '"
              + CommandLine.typed(o, "demoScale", o.getDemoScale())
              + "'");
    }
    if (o.getDemoTransactions() < 0) {
      throw new IllegalArgumentException(
          "--demoTransactions must be 0 or a positive integer, not '"
              + o.getDemoTransactions()
              + "'");
    }
    ContinuousMode.validate(o);
    Granularity granularity = o.getGranularity();
    SeedCopy seed = null;
    if (o.getSeedTable() != null) {
      if (o.getStartingLsn() != null) {
        throw new IllegalArgumentException(
            "--seedTable cannot be combined with --startingLsn (the seed's --seedAsOf decides where"
                + " the stream starts); pass one or the other");
      }
      seed = SeedCopy.parse(o.getSeedTable(), o.getSeedAsOf(), o.getSeedAllowMissingColumns());
    } else if (o.getSeedAsOf() != null || o.getSeedAllowMissingColumns()) {
      throw new IllegalArgumentException(
          (o.getSeedAsOf() != null ? "--seedAsOf" : "--seedAllowMissingColumns")
              + " needs --seedTable (the path or URI of a Delta table holding a copy of the"
              + " source table)");
    }
    SnapshotSettings snapshot = SnapshotSettings.of(o);
    if (snapshot.chunked() && seed != null) {
      throw new IllegalArgumentException(
          "--snapshot=chunked cannot be combined with --seedTable (the seed is the new target's"
              + " snapshot): pass one or the other");
    }
    StartingLsn start = StartingLsn.earliest();
    if (o.getStartingLsn() != null) {
      if (o.getBootstrap()) {
        throw new IllegalArgumentException(
            "--startingLsn cannot be combined with --bootstrap=true (the snapshot decides where"
                + " the stream starts); pass --bootstrap=false to start at an LSN");
      }
      try {
        start = StartingLsn.parse(o.getStartingLsn());
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("--" + e.getMessage());
      }
    }
    IsolationLevel isolation = o.getIsolationLevel();
    SchemaChangePolicy schemaChangePolicy = o.getSchemaChangePolicy();
    DataLossPolicy onDataLoss = o.getOnDataLoss();
    if (!(o.getResnapshotIntervalDays() >= 0) || Double.isInfinite(o.getResnapshotIntervalDays())) {
      throw new IllegalArgumentException(
          "--resnapshotIntervalDays must be 0 or a positive number of days, not '"
              + CommandLine.typed(o, "resnapshotIntervalDays", o.getResnapshotIntervalDays())
              + "'");
    }
    String target =
        o.getTarget() != null ? o.getTarget() : "lakecdc-demo/delta/" + ci.toLowerCase(Locale.ROOT);
    if (o.getColumns() != null) {
      try {
        ColumnsDdl.parse(o.getColumns());
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("--columns: " + firstLine(e));
      }
    }
    String bronze = tablePath("target", target);
    String facts = tablePath("factsTable", o.getFactsTable());
    String control = tablePath("controlTable", o.getControlTable());
    String silver = o.getSilver() == null ? null : tablePath("silver", o.getSilver());
    if (silver != null) {
      for (String[] other :
          new String[][] {{"target", bronze}, {"factsTable", facts}, {"controlTable", control}}) {
        if (silver.equals(other[1])) {
          throw new IllegalArgumentException(
              "--silver must be a table of its own, not the --" + other[0] + " " + other[1]);
        }
      }
    }
    List<String> keys = CommandLine.keys(o.getKeys());
    if (silver == null && !keys.isEmpty()) {
      throw new IllegalArgumentException(
          "--keys are the key columns of a silver table: pass --silver (or --silverTemplate with"
              + " --tables) with it");
    }
    if (o.getSilverWaveRows() < 1) {
      throw new IllegalArgumentException(
          "--silverWaveRows must be a positive integer, not '" + o.getSilverWaveRows() + "'");
    }
    if (o.getSilverIntervalSeconds() < 1) {
      throw new IllegalArgumentException(
          "--silverIntervalSeconds must be a positive integer, not '"
              + o.getSilverIntervalSeconds()
              + "'");
    }
    return JobConfig.builder(clientFactory(o), ci, bronze, facts, control)
        .appId(o.getAppId() != null ? required("appId", o.getAppId()) : ci)
        .bootstrap(o.getBootstrap())
        .startingLsn(start)
        .maxCommitsPerBatch(o.getMaxCommitsPerBatch())
        .numPartitions(o.getNumPartitions())
        .granularity(granularity)
        .includeCommandId(o.getIncludeCommandId())
        .columns(o.getColumns())
        .isolation(isolation)
        .schemaChangePolicy(schemaChangePolicy)
        .seed(seed)
        .hadoopConf(hadoopConf(o))
        .silverPath(silver)
        .keys(keys)
        .silverWaveRows(o.getSilverWaveRows())
        .silverIntervalSeconds(o.getSilverIntervalSeconds())
        .snapshot(snapshot)
        .onDataLoss(onDataLoss)
        .resnapshotIntervalDays(o.getResnapshotIntervalDays())
        .build();
  }

  /**
   * {@code --hadoopConfFile}'s properties with {@code --hadoopConf}'s entries set over them.
   *
   * @throws IllegalArgumentException naming the option: a malformed entry, a missing or unparsable
   *     file
   */
  public static HadoopConf hadoopConf(CdcToDeltaOptions o) {
    HadoopConf conf = HadoopConf.empty();
    if (o.getHadoopConfFile() != null) {
      conf =
          HadoopConf.readFile("hadoopConfFile", required("hadoopConfFile", o.getHadoopConfFile()));
    }
    if (o.getHadoopConf() != null) {
      conf = conf.overriddenBy(HadoopConf.parseEntries("hadoopConf", o.getHadoopConf()));
    }
    return conf;
  }

  private static CdcClientFactory clientFactory(CdcToDeltaOptions o) {
    if (o.getLockTimeoutMs() != null
        && (o.getLockTimeoutMs() < 0 || o.getLockTimeoutMs() > Integer.MAX_VALUE)) {
      throw new IllegalArgumentException(
          "--lockTimeoutMs must be 0 or a positive number of milliseconds up to "
              + Integer.MAX_VALUE
              + ", not '"
              + o.getLockTimeoutMs()
              + "'");
    }
    SourceTimeZone zone = SqlServerSource.checkTimeoutAndZone(o);
    if (o.getConnectionUrl() == null) {
      if (!zone.isAuto()) {
        throw new IllegalArgumentException(
            "--sourceTimeZone applies to --connectionUrl (a SQL Server's clock); the simulator"
                + " under --fakePath keeps its own zone: leave --sourceTimeZone at auto");
      }
      String serverOnly =
          o.getUser() != null
              ? "--user"
              : o.getPasswordEnv() != null
                  ? "--passwordEnv"
                  : o.getPasswordFile() != null ? "--passwordFile" : null;
      if (serverOnly != null) {
        throw new IllegalArgumentException(
            serverOnly
                + " applies to --connectionUrl (a real SQL Server's login); the simulator needs"
                + " none: add --connectionUrl, or leave "
                + serverOnly
                + " out");
      }
      Path path = fakePath(o);
      if (Files.exists(path) && !Files.isDirectory(path)) {
        throw new IllegalArgumentException(
            "--fakePath must be a directory (the simulator's database, built there when empty),"
                + " not the file '"
                + path
                + "'");
      }
      DemoDatabase.requireSource(path, o.getBuildDemo());
      return new FakeCdcClientFactory(path.toString());
    }
    if (o.getFakePath() != null || o.getBuildDemo()) {
      throw new IllegalArgumentException(
          (o.getFakePath() != null ? "--fakePath" : "--buildDemo")
              + " is for the simulator and --connectionUrl for a real SQL Server: pass one of"
              + " them, not both");
    }
    return SqlServerSource.factory(o, zone, o.getLockTimeoutMs());
  }

  /**
   * A Delta table's path or URI, normalized: not empty, and for a local path neither an existing
   * file nor below one (a table is a directory; the job would fail creating it, after its work).
   */
  private static String tablePath(String option, String value) {
    required(option, value);
    String normalized;
    try {
      normalized = TablePaths.normalize(value);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("--" + option + ": " + e.getMessage());
    }
    return CommandLine.writableTableLocation(option, normalized);
  }

  /** {@code --fakePath}, or the demo's default directory when it is not given. */
  public static Path fakePath(CdcToDeltaOptions o) {
    return o.getFakePath() == null
        ? DemoDatabase.DEFAULT_DIRECTORY
        : Path.of(required("fakePath", o.getFakePath()));
  }

  private static String required(String option, String value) {
    if (value == null || value.isBlank()) {
      throw new IllegalArgumentException("--" + option + " must not be empty");
    }
    return value;
  }

  private static String firstLine(Throwable e) {
    String message = e.getMessage() == null ? e.toString() : e.getMessage();
    return message.lines().findFirst().orElse(message);
  }

  /** A summary's change rows by operation, adding up to its rows ({@link Counts#byOperation}). */
  private static String byOperation(JobSummary s) {
    return Counts.byOperation(
        s.rows(),
        s.rowsByOperation().getOrDefault("insert", 0L),
        s.rowsByOperation().getOrDefault("update", 0L),
        s.rowsByOperation().getOrDefault("delete", 0L));
  }

  /** {@code rows} per second of {@code seconds}, rounded, with the noun that fits the figure. */
  /**
   * Rows per second as a count with its noun ({@code 3,000 rows/s}), or, for a rate of some rows
   * below one per second, with two significant digits ({@code 0.25 rows/s}) rather than 0.
   */
  static String rate(long rows, double seconds, String one, String many) {
    double perSecond = rows / Math.max(seconds, 1e-3);
    if (rows > 0 && perSecond < 0.995) {
      return BigDecimal.valueOf(perSecond)
              .round(new MathContext(2))
              .stripTrailingZeros()
              .toPlainString()
          + " "
          + many;
    }
    return Counts.of(Math.round(perSecond), one, many);
  }

  /**
   * The line of the batches a run found already written, when there are any: {@code Found already
   * written: 22 batches, 33 change rows (committed by another run of this target, or by an earlier
   * attempt of this run's task: skipped, not counted above)}. A batch an earlier run committed to
   * bronze but not to facts is not among them: the launcher writes its facts row before the run, on
   * a line of its own ({@code Writing the facts row of batch 141, …}).
   */
  private static void printAlreadyWritten(
      long batches, long rows, String targets, PrintStream out) {
    if (batches == 0) {
      return;
    }
    printFound(
        Counts.of(batches, "batch", "batches")
            + ", "
            + Counts.of(rows, "change row", "change rows"),
        targets,
        out);
  }

  /**
   * The line of a snapshot the run read and found already written (another run of the target
   * committed the snapshot of the same S first), when there is one: {@code Found already written: a
   * snapshot of 61,117 rows (committed by another run of this target, …)}.
   */
  private static void printSnapshotFound(long snapshotRows, PrintStream out) {
    if (snapshotRows < 0) {
      return;
    }
    printFound("a snapshot of " + Counts.of(snapshotRows, "row", "rows"), "this target", out);
  }

  /**
   * A table's part of its line in the summary of many tables: {@code ; found already written: 22
   * batches, 33 change rows and a snapshot of 61,117 rows} (either part alone), or empty.
   */
  private static String foundAlreadyWritten(JobSummary s) {
    List<String> found = new ArrayList<>();
    if (s.skippedBatches() > 0) {
      found.add(
          Counts.of(s.skippedBatches(), "batch", "batches")
              + ", "
              + Counts.of(s.skippedRows(), "change row", "change rows"));
    }
    if (s.foundSnapshotRows() >= 0) {
      found.add("a snapshot of " + Counts.of(s.foundSnapshotRows(), "row", "rows"));
    }
    return found.isEmpty() ? "" : "; found already written: " + String.join(" and ", found);
  }

  private static void printFound(String what, String targets, PrintStream out) {
    out.printf(
        "Found already written: %s (committed by another run of %s, or by an earlier attempt"
            + " of this run's task: skipped, not counted above)%n",
        what, targets);
  }

  /**
   * Prints a run's summary as its last console lines: first waits for the background compactions of
   * facts and control its commits started ({@link JobExit#awaitCompactions}), so their {@code Delta
   * table …: compacted …} lines come before the summary (the JVM waits for them before it exits
   * anyway, so the summary comes no later than the end of the process would), then {@code summary},
   * then {@code Log file: <path>} ({@link ConsoleLogging#summaryLine}), the last line.
   */
  private static void printLast(Runnable summary, CdcToDeltaOptions options) {
    JobExit.awaitCompactions();
    summary.run();
    System.out.println(ConsoleLogging.summaryLine(options));
  }

  private static void printSummary(JobConfig config, JobSummary summary) {
    printSummary(config, summary, System.out);
  }

  /**
   * Prints what a run of many tables did: the totals, then one line per table (its batches and
   * change rows, a snapshot taken, its position and verdict, or why it stopped), and where the
   * shared tables are.
   */
  public static void printSummary(List<CdcToDeltaJob.TableOutcome> outcomes, PrintStream out) {
    long batches = 0;
    long rows = 0;
    long skipped = 0;
    long skippedRows = 0;
    double seconds = 0;
    double streamSeconds = 0;
    for (CdcToDeltaJob.TableOutcome o : outcomes) {
      batches += o.summary().batches();
      rows += o.summary().rows();
      skipped += o.summary().skippedBatches();
      skippedRows += o.summary().skippedRows();
      seconds = Math.max(seconds, o.summary().seconds());
      streamSeconds = Math.max(streamSeconds, o.summary().streamSeconds());
    }
    long failed = outcomes.stream().filter(CdcToDeltaJob.TableOutcome::failed).count();
    out.println();
    out.printf(
        "Done in %.1f s: %s%s, %s, %s in %.1f s of streaming, %s%n",
        seconds,
        Counts.of(outcomes.size(), "table", "tables"),
        failed > 0 ? " (" + failed + " failed)" : "",
        Counts.of(batches, "batch", "batches"),
        Counts.of(rows, "change row", "change rows"),
        streamSeconds,
        rate(rows, streamSeconds, "change row/s", "change rows/s"));
    printAlreadyWritten(skipped, skippedRows, "these targets", out);
    int width =
        outcomes.stream().mapToInt(o -> o.config().captureInstance().length()).max().orElse(0);
    for (CdcToDeltaJob.TableOutcome o : outcomes) {
      JobSummary s = o.summary();
      String name = String.format(Locale.ROOT, "%-" + width + "s", o.config().captureInstance());
      if (o.failed()) {
        out.printf(
            "  %s  FAILED at %s (%s) after %s this run: %s%n",
            name,
            o.failure().get().positionLsn(),
            TargetIdentity.batchText(o.failure().get().batchId() - 1),
            Counts.of(s.batches(), "batch", "batches"),
            o.failure().get().errorClass());
        continue;
      }
      out.printf(
          "  %s  %s, %s (%s)%s%s; %s; finalized_until = %s%n",
          name,
          Counts.of(s.batches(), "batch", "batches"),
          Counts.of(s.rows(), "change row", "change rows"),
          byOperation(s),
          foundAlreadyWritten(s),
          s.snapshotRows() >= 0
              ? "; a snapshot of " + Counts.of(s.snapshotRows(), "row", "rows")
              : "",
          s.position()
              .map(p -> TargetIdentity.batchText(p.batchId()) + " at " + p.endLsn())
              .orElse("no position"),
          s.verdict().map(v -> v + " UTC").orElse("none yet"));
    }
    JobConfig first = outcomes.get(0).config();
    out.printf(
        "Tables (Delta):%n  bronze  %s%s%n  facts   %s%n  control %s%n",
        outcomes.size() == 1 ? "" : "one per table, e.g. ",
        first.bronzePath(),
        first.factsPath(),
        first.controlPath());
  }

  /**
   * Prints what a run did: counts (each with its singular or plural noun); the change rows' rate,
   * per second of the stream phase only; a snapshot's rows with their own rate, per second of the
   * snapshot; the position, the verdict (a UTC time, or {@code none yet}), where the tables are.
   */
  public static void printSummary(JobConfig config, JobSummary summary, PrintStream out) {
    out.println();
    out.printf(
        "Done in %.1f s: %s, %s (%s) in %.1f s of streaming, %s%s%n",
        summary.seconds(),
        Counts.of(summary.batches(), "batch", "batches"),
        Counts.of(summary.rows(), "change row", "change rows"),
        byOperation(summary),
        summary.streamSeconds(),
        rate(summary.rows(), summary.streamSeconds(), "change row/s", "change rows/s"),
        summary.snapshotRows() >= 0
            ? String.format(
                Locale.ROOT,
                "; a snapshot of %s in %.1f s, %s",
                Counts.of(summary.snapshotRows(), "row", "rows"),
                summary.snapshotSeconds(),
                rate(summary.snapshotRows(), summary.snapshotSeconds(), "row/s", "rows/s"))
            : "");
    printAlreadyWritten(summary.skippedBatches(), summary.skippedRows(), "this target", out);
    printSnapshotFound(summary.foundSnapshotRows(), out);
    summary
        .position()
        .ifPresent(
            p ->
                out.printf(
                    "Position: %s%s, end LSN %s committed at %s%n",
                    p.generation() > 0
                        ? "generation " + p.generation() + " (app id " + p.appId() + "), "
                        : "",
                    TargetIdentity.batchText(p.batchId()),
                    p.endLsn(),
                    p.endCommitTime()));
    out.printf(
        "Verdict: finalized_until = %s (%s periods)%n",
        summary.verdict().map(v -> v + " UTC").orElse("none yet"), config.granularity());
    out.printf(
        "Tables (Delta):%n  bronze  %s%n  facts   %s%n  control %s%n",
        // Normalized: a local table's absolute path, or the URI as given (s3a://...).
        config.bronzePath(), config.factsPath(), config.controlPath());
    if (config.silverPath() != null) {
      out.printf("  silver  %s%n", config.silverPath());
    }
    out.printf(
        "Query them with Spark and delta-spark, e.g.%n  spark.read.format(\"delta\").load(\"%s\")"
            + ".orderBy(\"_start_lsn\", \"_command_id\", \"_seqval\", \"_operation\").show()%n",
        config.bronzePath());
  }
}
