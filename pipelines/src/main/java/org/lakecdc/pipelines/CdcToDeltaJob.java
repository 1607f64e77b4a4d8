package org.lakecdc.pipelines;

import java.io.PrintStream;
import java.time.Instant;
import java.time.LocalDateTime;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.options.PipelineOptions;
import org.apache.beam.sdk.schemas.Schema;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.io.mssqlcdc.MssqlCdcIO;
import org.lakecdc.io.mssqlcdc.SchemaChangePolicy;
import org.lakecdc.io.mssqlcdc.StartPositions;
import org.lakecdc.io.mssqlcdc.StartingLsn;
import org.lakecdc.io.mssqlcdc.StopCondition;
import org.lakecdc.io.mssqlcdc.client.CaptureInstance;
import org.lakecdc.io.mssqlcdc.client.CaptureInstanceNotFoundError;
import org.lakecdc.io.mssqlcdc.client.CdcClient;
import org.lakecdc.io.mssqlcdc.client.CdcClientFactory;
import org.lakecdc.io.mssqlcdc.client.Commit;
import org.lakecdc.io.mssqlcdc.client.IsolationLevel;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.transforms.Counts;
import org.lakecdc.transforms.bronze.BronzeTable;
import org.lakecdc.transforms.delta.DeltaTables;
import org.lakecdc.transforms.delta.HadoopConf;
import org.lakecdc.transforms.delta.SchemaEvolution;
import org.lakecdc.transforms.delta.TablePaths;
import org.lakecdc.transforms.facts.FactsTable;
import org.lakecdc.transforms.finalization.ControlTable;
import org.lakecdc.transforms.finalization.Finalization;
import org.lakecdc.transforms.finalization.Granularity;
import org.lakecdc.transforms.position.StreamPosition;
import org.lakecdc.transforms.write.BatchStats;
import org.lakecdc.transforms.write.CrashPoint;
import org.lakecdc.transforms.write.DeltaTarget;
import org.lakecdc.transforms.write.WriteChangeStreamToDelta;
import org.lakecdc.transforms.write.WriteChangesToDelta;
import org.lakecdc.transforms.write.WriteSnapshotToDelta;

/**
 * One run of the main job: SQL Server CDC of one capture instance into a bronze Delta table, a
 * facts table and the completeness verdict, exactly once across replays, crashes and fresh
 * submissions.
 *
 * <p>Before the pipeline runs, on the launcher: create the tables that are missing (and migrate old
 * ones); make bronze take this run's change schema (add the columns a newer capture instance
 * brought, widen a type when bronze has type widening on, or fail before anything is written); read
 * the target's position from the Delta tables (Delta is the checkpoint); repair what a crash left:
 * a facts row missing after a bronze commit, a verdict behind the data; take the bootstrap snapshot
 * of a new target, or seed it from an existing copy ({@code --seedTable}, {@link Seeding}); stop
 * early when nothing new was captured. Then one bounded pipeline reads the changes after the
 * position and commits them batch by batch in LSN order. {@link #runContinuously} follows the
 * source instead, until asked to stop: with the source's continuous form in one streaming pipeline,
 * or by repeating bounded runs (docs/runners.md).
 */
public final class CdcToDeltaJob {
  private CdcToDeltaJob() {}

  /**
   * A validated job configuration.
   *
   * @param clientFactory opens CDC clients
   * @param captureInstance the capture instance to read
   * @param bronzePath the bronze table (the target), {@link TablePaths#normalize normalized}
   * @param factsPath the facts table, normalized
   * @param controlPath the control table, normalized
   * @param appId the job's identity in the target
   * @param bootstrap whether a new target starts with a whole snapshot
   * @param startingLsn where a new target starts without bootstrap
   * @param maxCommitsPerBatch commits per batch, 0 for no limit
   * @param numPartitions parallel parts of a read
   * @param granularity the verdict's period
   * @param includeCommandId whether {@code _command_id} is read
   * @param columns declared columns, or null to infer
   * @param isolation isolation of snapshot reads
   * @param schemaChangePolicy what DDL in a batch's range does (the read's {@link
   *     MssqlCdcIO.Read#withSchemaChangePolicy(SchemaChangePolicy)})
   * @param crashPoint crash tests only: where to stop, or null
   * @param crashBatch crash tests only: the batch to stop at
   * @param crashFailure crash tests only: what is thrown there (null for {@link
   *     CrashPoint.Failure#EXCEPTION})
   * @param seed a new target's seed from an existing copy instead of the bootstrap snapshot
   *     (BEHAVIOUR.md 6.6), or null
   * @param hadoopConf the Hadoop configuration every Delta table is opened with, on the launcher
   *     and on every worker
   */
  public record Config(
      CdcClientFactory clientFactory,
      String captureInstance,
      String bronzePath,
      String factsPath,
      String controlPath,
      String appId,
      boolean bootstrap,
      StartingLsn startingLsn,
      int maxCommitsPerBatch,
      int numPartitions,
      Granularity granularity,
      boolean includeCommandId,
      @Nullable String columns,
      IsolationLevel isolation,
      SchemaChangePolicy schemaChangePolicy,
      @Nullable CrashPoint crashPoint,
      long crashBatch,
      CrashPoint.@Nullable Failure crashFailure,
      @Nullable SeedCopy seed,
      HadoopConf hadoopConf) {
    public Config {
      Objects.requireNonNull(hadoopConf, "hadoopConf");
      Objects.requireNonNull(clientFactory, "clientFactory");
      Objects.requireNonNull(captureInstance, "captureInstance");
      Objects.requireNonNull(bronzePath, "bronzePath");
      Objects.requireNonNull(factsPath, "factsPath");
      Objects.requireNonNull(controlPath, "controlPath");
      // One spelling per table, here once: facts rows, control rows and messages name it so.
      bronzePath = TablePaths.normalize(bronzePath);
      factsPath = TablePaths.normalize(factsPath);
      controlPath = TablePaths.normalize(controlPath);
      Objects.requireNonNull(appId, "appId");
      Objects.requireNonNull(startingLsn, "startingLsn");
      Objects.requireNonNull(granularity, "granularity");
      Objects.requireNonNull(isolation, "isolation");
      Objects.requireNonNull(schemaChangePolicy, "schemaChangePolicy");
    }

    /** The same configuration with another app id. */
    public Config withAppId(String otherAppId) {
      return toBuilder().appId(otherAppId).build();
    }

    /** The same configuration with a seed from an existing copy (or none for null). */
    public Config withSeed(@Nullable SeedCopy otherSeed) {
      return toBuilder().seed(otherSeed).build();
    }

    /** The same configuration, stopping at {@code point} of batch {@code batch} (crash tests). */
    public Config withCrash(CrashPoint point, long batch) {
      return withCrash(point, batch, CrashPoint.Failure.EXCEPTION);
    }

    /**
     * The same configuration, throwing {@code failure} at {@code point} of batch {@code batch}
     * (crash and fatal-error tests).
     */
    public Config withCrash(CrashPoint point, long batch, CrashPoint.Failure failure) {
      return toBuilder().crashPoint(point).crashBatch(batch).crashFailure(failure).build();
    }

    /**
     * A builder with the command line's defaults for everything but the tables and the source: app
     * id the capture instance, bootstrap on, starting LSN earliest, 100 commits per batch, one
     * partition, hourly verdict, {@code _command_id} read, inferred columns, read-committed
     * snapshot reads, schema changes classified, no crash point and no seed.
     *
     * @param clientFactory opens CDC clients
     * @param captureInstance the capture instance to read
     * @param bronzePath the bronze table (the target)
     * @param factsPath the facts table
     * @param controlPath the control table
     */
    public static Builder builder(
        CdcClientFactory clientFactory,
        String captureInstance,
        String bronzePath,
        String factsPath,
        String controlPath) {
      return new Builder(clientFactory, captureInstance, bronzePath, factsPath, controlPath);
    }

    /** A builder holding this configuration's values. */
    public Builder toBuilder() {
      return new Builder(clientFactory, captureInstance, bronzePath, factsPath, controlPath)
          .appId(appId)
          .bootstrap(bootstrap)
          .startingLsn(startingLsn)
          .maxCommitsPerBatch(maxCommitsPerBatch)
          .numPartitions(numPartitions)
          .granularity(granularity)
          .includeCommandId(includeCommandId)
          .columns(columns)
          .isolation(isolation)
          .schemaChangePolicy(schemaChangePolicy)
          .crashPoint(crashPoint)
          .crashBatch(crashBatch)
          .crashFailure(crashFailure)
          .seed(seed)
          .hadoopConf(hadoopConf);
    }

    /**
     * Builds a {@link Config}: the source and the tables are fixed, every other component has a
     * setter and starts at the command line's default (see {@link Config#builder}). {@link #build}
     * validates.
     */
    public static final class Builder {
      private final CdcClientFactory clientFactory;
      private final String captureInstance;
      private final String bronzePath;
      private final String factsPath;
      private final String controlPath;
      private String appId;
      private boolean bootstrap = true;
      private StartingLsn startingLsn = StartingLsn.earliest();
      private int maxCommitsPerBatch = 100;
      private int numPartitions = 1;
      private Granularity granularity = Granularity.HOUR;
      private boolean includeCommandId = true;
      private @Nullable String columns;
      private IsolationLevel isolation = IsolationLevel.READ_COMMITTED;
      private SchemaChangePolicy schemaChangePolicy = SchemaChangePolicy.CLASSIFY;
      private @Nullable CrashPoint crashPoint;
      private long crashBatch;
      private CrashPoint.@Nullable Failure crashFailure;
      private @Nullable SeedCopy seed;
      private HadoopConf hadoopConf = HadoopConf.empty();

      private Builder(
          CdcClientFactory clientFactory,
          String captureInstance,
          String bronzePath,
          String factsPath,
          String controlPath) {
        this.clientFactory = clientFactory;
        this.captureInstance = captureInstance;
        this.bronzePath = bronzePath;
        this.factsPath = factsPath;
        this.controlPath = controlPath;
        this.appId = captureInstance;
      }

      /** The job's identity in the target (default: the capture instance). */
      public Builder appId(String appId) {
        this.appId = appId;
        return this;
      }

      /** Whether a new target starts with a whole snapshot (default true). */
      public Builder bootstrap(boolean bootstrap) {
        this.bootstrap = bootstrap;
        return this;
      }

      /** Where a new target starts without bootstrap (default earliest). */
      public Builder startingLsn(StartingLsn startingLsn) {
        this.startingLsn = startingLsn;
        return this;
      }

      /** Commits per batch, 0 for no limit (default 100). */
      public Builder maxCommitsPerBatch(int maxCommitsPerBatch) {
        this.maxCommitsPerBatch = maxCommitsPerBatch;
        return this;
      }

      /** Parallel parts of a read (default 1). */
      public Builder numPartitions(int numPartitions) {
        this.numPartitions = numPartitions;
        return this;
      }

      /** The verdict's period (default hour). */
      public Builder granularity(Granularity granularity) {
        this.granularity = granularity;
        return this;
      }

      /** Whether {@code _command_id} is read (default true). */
      public Builder includeCommandId(boolean includeCommandId) {
        this.includeCommandId = includeCommandId;
        return this;
      }

      /** Declared columns, or null to infer (default null). */
      public Builder columns(@Nullable String columns) {
        this.columns = columns;
        return this;
      }

      /** Isolation of snapshot reads (default read committed). */
      public Builder isolation(IsolationLevel isolation) {
        this.isolation = isolation;
        return this;
      }

      /** What DDL in a batch's range does (default {@link SchemaChangePolicy#CLASSIFY}). */
      public Builder schemaChangePolicy(SchemaChangePolicy schemaChangePolicy) {
        this.schemaChangePolicy = schemaChangePolicy;
        return this;
      }

      /** Crash tests only: where to stop, or null (default null). */
      public Builder crashPoint(@Nullable CrashPoint crashPoint) {
        this.crashPoint = crashPoint;
        return this;
      }

      /** Crash tests only: the batch to stop at (default 0). */
      public Builder crashBatch(long crashBatch) {
        this.crashBatch = crashBatch;
        return this;
      }

      /** Crash tests only: what is thrown at the crash point, or null for the exception. */
      public Builder crashFailure(CrashPoint.@Nullable Failure crashFailure) {
        this.crashFailure = crashFailure;
        return this;
      }

      /** A new target's seed from an existing copy, or null for none (default null). */
      public Builder seed(@Nullable SeedCopy seed) {
        this.seed = seed;
        return this;
      }

      /** The Hadoop configuration of every Delta table (default: none). */
      public Builder hadoopConf(HadoopConf hadoopConf) {
        this.hadoopConf = hadoopConf;
        return this;
      }

      /** The configuration; throws when a required value is null. */
      public Config build() {
        return new Config(
            clientFactory,
            captureInstance,
            bronzePath,
            factsPath,
            controlPath,
            appId,
            bootstrap,
            startingLsn,
            maxCommitsPerBatch,
            numPartitions,
            granularity,
            includeCommandId,
            columns,
            isolation,
            schemaChangePolicy,
            crashPoint,
            crashBatch,
            crashFailure,
            seed,
            hadoopConf);
      }
    }
  }

  /**
   * What a run did.
   *
   * @param batches batches committed by this run
   * @param rowsByOperation change rows written by this run: delete, insert, update (after-images)
   *     and all rows
   * @param snapshotRows rows of a snapshot taken by this run, or -1 when none was taken
   * @param snapshotSeconds wall seconds of that snapshot (the bootstrap snapshot or the seed copy,
   *     written and committed), 0 when none was taken
   * @param position the target's position after the run
   * @param verdict the target's verdict after the run, UTC
   * @param streamSeconds wall seconds of the stream phase: from reading {@code max_lsn} after the
   *     start position to the end of the change pipeline (its batches read and committed); the sum
   *     of the phases of repeated bounded runs
   * @param seconds wall seconds of the run, everything included
   */
  public record Summary(
      long batches,
      Map<String, Long> rowsByOperation,
      long snapshotRows,
      double snapshotSeconds,
      Optional<StreamPosition> position,
      Optional<LocalDateTime> verdict,
      double streamSeconds,
      double seconds) {
    /** All change rows written by the run. */
    public long rows() {
      return rowsByOperation.getOrDefault("rows", 0L);
    }

    /** This run followed by {@code later}: counts added, the later position and verdict. */
    Summary plus(Summary later) {
      Map<String, Long> sum = new java.util.TreeMap<>(rowsByOperation);
      later.rowsByOperation().forEach((k, v) -> sum.merge(k, v, Long::sum));
      boolean ours = snapshotRows >= 0;
      return new Summary(
          batches + later.batches(),
          sum,
          ours ? snapshotRows : later.snapshotRows(),
          ours ? snapshotSeconds : later.snapshotSeconds(),
          later.position().isPresent() ? later.position() : position,
          later.verdict().isPresent() ? later.verdict() : verdict,
          streamSeconds + later.streamSeconds(),
          seconds + later.seconds());
    }
  }

  /**
   * Runs the job once.
   *
   * @param config the validated configuration
   * @param beamOptions the pipeline options (runner)
   * @param out where progress and the summary are printed
   * @return what the run did
   * @throws IllegalArgumentException when the target belongs to another app id, or the
   *     configuration does not fit the source
   * @throws org.lakecdc.io.mssqlcdc.client.SchemaChangedError before anything is written, when
   *     bronze cannot take the change schema (see {@link DeltaTables#evolveSchema})
   */
  public static Summary run(Config config, PipelineOptions beamOptions, PrintStream out) {
    return run(config, beamOptions, out, () -> {});
  }

  /**
   * Runs the job once, calling {@code beforeStream} after the bootstrap snapshot (if any) and
   * before the changes are read: the demo's application writes its second half of history there, as
   * a live OLTP database keeps changing while a snapshot is taken.
   *
   * @see #run(Config, PipelineOptions, PrintStream)
   */
  public static Summary run(
      Config config, PipelineOptions beamOptions, PrintStream out, Runnable beforeStream) {
    return run(config, beamOptions, out, beforeStream, true);
  }

  /**
   * Runs the job once; with {@code recordNothingNew} false (a poll of a continuous run) a run that
   * finds nothing new writes nothing at all, as the continuous source writes nothing while idle.
   */
  private static Summary run(
      Config config,
      PipelineOptions beamOptions,
      PrintStream out,
      Runnable beforeStream,
      boolean recordNothingNew) {
    config = continueUnderTargetAppId(config, out);
    Start run = begin(config, beamOptions, out, beforeStream);
    long streamBegan = System.nanoTime();
    StreamPosition start = run.start();
    Lsn max;
    try (CdcClient client = config.clientFactory().open()) {
      max = client.maxLsn().orElse(Lsn.ZERO);
    }
    if (!max.isAfter(start.endLsn())) {
      out.printf(
          "Nothing new: max_lsn %s is already in %s (%s)%n",
          max, config.bronzePath(), batchText(start.batchId()));
      if (recordNothingNew) {
        run.tables()
            .append(
                config.factsPath(),
                FactsTable.SCHEMA,
                List.of(
                    FactsTable.row()
                        .set(FactsTable.APP_ID, config.appId())
                        .set(FactsTable.ROWS, 0L)
                        .set(FactsTable.EVENT, FactsTable.EVENT_NOTHING_NEW)
                        .set(FactsTable.END_LSN, start.endLsn().toString())
                        .set(FactsTable.END_COMMIT_TS, start.endCommitTime())
                        .set(
                            FactsTable.DETAIL,
                            "max_lsn " + max + " is not after the position " + start.endLsn())
                        .set(FactsTable.TARGET, config.bronzePath())
                        .set(FactsTable.STARTED_AT, run.startedAt())
                        .set(FactsTable.WRITTEN_AT, Instant.now())
                        .build()),
                null,
                0,
                Map.of());
      }
      return new Summary(
          0,
          Map.of(),
          run.snapshotRows(),
          run.snapshotSeconds(),
          Optional.of(start),
          run.finalization().verdict(config.bronzePath()),
          (System.nanoTime() - streamBegan) / 1e9,
          (System.nanoTime() - run.began()) / 1e9);
    }

    Pipeline pipeline = Pipeline.create(beamOptions);
    pipeline
        .apply(
            "Read " + config.captureInstance() + " and write to Delta",
            WriteChangesToDelta.from(
                run.read().withStartingLsn(StartingLsn.after(start.endLsn())),
                run.target(config),
                run.changeSchema()))
        .apply(RunCounters.count());
    out.printf(
        "Reading %s after %s (%s) up to max_lsn %s%n",
        config.captureInstance(), start.endLsn(), batchText(start.batchId()), max);
    PipelineResult result = JobExit.run(pipeline);
    return summarize(config, run, out, result, streamBegan);
  }

  /**
   * Runs the job continuously: follows the source until {@code continuous.stop()} holds, then
   * returns with everything read committed. {@link Continuous.Form#STREAM} runs one pipeline with
   * the continuous form of the source ({@code MssqlCdcIO.read().withContinuous(true)}) and commits
   * each batch as it arrives ({@link WriteChangeStreamToDelta}): for runners that run an unbounded
   * splittable DoFn (Direct, Flink). {@link Continuous.Form#REPEAT} repeats bounded runs ({@link
   * #run}), each a complete exactly-once unit, every poll interval: for the SparkRunner, whose
   * streaming mode cannot run an unbounded splittable DoFn. In both forms an idle poll writes
   * nothing (no {@code nothing_new} facts row), and idle entries of {@code cdc.lsn_time_mapping}
   * still end batches that move the position and the verdict.
   *
   * @return what the runs did together
   */
  public static Summary runContinuously(
      Config config,
      PipelineOptions beamOptions,
      PrintStream out,
      Runnable beforeStream,
      Continuous continuous) {
    if (continuous.form() == Continuous.Form.REPEAT) {
      return repeatBoundedRuns(config, beamOptions, out, beforeStream, continuous);
    }
    config = continueUnderTargetAppId(config, out);
    Start run = begin(config, beamOptions, out, beforeStream);
    long streamBegan = System.nanoTime();
    StreamPosition start = run.start();
    StopCondition stop = continuous.stop();
    if (!continuous.runFor().isZero()) {
      // The time limit counts from here, after the bootstrap: the source follows for runFor.
      stop = stop.or(StopCondition.at(System.currentTimeMillis() + continuous.runFor().toMillis()));
    }
    Pipeline pipeline = Pipeline.create(beamOptions);
    pipeline
        .apply(
            "Follow " + config.captureInstance() + " and write to Delta as batches arrive",
            WriteChangeStreamToDelta.from(
                run.read()
                    .withStartingLsn(StartingLsn.after(start.endLsn()))
                    .withContinuous(true)
                    .withPollInterval(
                        org.joda.time.Duration.millis(continuous.pollInterval().toMillis()))
                    .withStopCondition(stop),
                run.target(config),
                run.changeSchema()))
        .apply(RunCounters.count());
    out.printf(
        "Following %s after %s (%s), polling every %s s when caught up, %s%n",
        config.captureInstance(),
        start.endLsn(),
        batchText(start.batchId()),
        seconds(continuous),
        continuous.runFor().isZero()
            ? "until stopped"
            : "for " + continuous.runFor().toSeconds() + " s or until stopped");
    PipelineResult result = JobExit.run(pipeline);
    out.println("Stopped: every batch read was committed");
    return summarize(config, run, out, result, streamBegan);
  }

  private static Summary repeatBoundedRuns(
      Config config,
      PipelineOptions beamOptions,
      PrintStream out,
      Runnable beforeStream,
      Continuous continuous) {
    long began = System.nanoTime();
    StopCondition stop = continuous.stop();
    if (!continuous.runFor().isZero()) {
      stop = stop.or(StopCondition.at(System.currentTimeMillis() + continuous.runFor().toMillis()));
    }
    Summary total = null;
    Runnable first = beforeStream;
    for (int runs = 1; ; runs++) {
      out.printf("Bounded run %d (repeated every %s s until stopped)%n", runs, seconds(continuous));
      // An idle poll writes nothing (no nothing_new row every poll interval).
      Summary one = run(config, beamOptions, out, first, false);
      first = () -> {};
      total = total == null ? one : total.plus(one);
      if (waitOrStop(continuous.pollInterval(), stop)) {
        out.printf("Stopped after %s%n", Counts.of(runs, "bounded run", "bounded runs"));
        return new Summary(
            total.batches(),
            total.rowsByOperation(),
            total.snapshotRows(),
            total.snapshotSeconds(),
            total.position(),
            total.verdict(),
            total.streamSeconds(),
            (System.nanoTime() - began) / 1e9);
      }
    }
  }

  private static double seconds(Continuous continuous) {
    return continuous.pollInterval().toMillis() / 1000.0;
  }

  /** Waits one poll interval, checking the stop condition; true when asked to stop. */
  private static boolean waitOrStop(java.time.Duration pollInterval, StopCondition stop) {
    long until = System.nanoTime() + pollInterval.toNanos();
    while (!stop.shouldStop()) {
      long left = until - System.nanoTime();
      if (left <= 0) {
        return false;
      }
      try {
        Thread.sleep(Math.min(100, Math.max(1, left / 1_000_000)));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return true;
      }
    }
    return true;
  }

  /**
   * How a continuous run follows the source.
   *
   * @param form one pipeline with the continuous source, or repeated bounded runs
   * @param pollInterval the source's wait when caught up, or the interval between bounded runs
   * @param runFor how long to follow the source (from the end of the bootstrap, or from the first
   *     bounded run), or zero for no limit
   * @param stop when else to stop: asked between batches and at each poll (by the source), or
   *     between bounded runs
   */
  public record Continuous(
      Form form, java.time.Duration pollInterval, java.time.Duration runFor, StopCondition stop) {
    public Continuous {
      Objects.requireNonNull(form, "form");
      Objects.requireNonNull(pollInterval, "pollInterval");
      Objects.requireNonNull(runFor, "runFor");
      Objects.requireNonNull(stop, "stop");
      if (pollInterval.isNegative() || pollInterval.isZero()) {
        throw new IllegalArgumentException("pollInterval must be positive, not " + pollInterval);
      }
      if (runFor.isNegative()) {
        throw new IllegalArgumentException("runFor must not be negative, not " + runFor);
      }
    }

    /** The two forms of a continuous run. */
    public enum Form {
      /** One pipeline, the source's continuous form, each batch committed as it arrives. */
      STREAM,
      /** Bounded runs repeated every poll interval, each a complete exactly-once unit. */
      REPEAT
    }
  }

  /** What the launcher found and did before the change pipeline. */
  private record Start(
      DeltaTables tables,
      Finalization finalization,
      MssqlCdcIO.Read read,
      Schema changeSchema,
      StreamPosition start,
      long snapshotRows,
      double snapshotSeconds,
      Instant startedAt,
      long began) {
    DeltaTarget target(Config config) {
      return new DeltaTarget(
          config.bronzePath(),
          config.factsPath(),
          config.controlPath(),
          start,
          config.granularity(),
          startedAt,
          config.crashPoint(),
          config.crashBatch(),
          config.crashFailure(),
          config.hadoopConf());
    }
  }

  /**
   * Creates the missing tables, reads and repairs the target's position, takes the bootstrap
   * snapshot of a new target, calls {@code beforeStream} and advances the verdict to the position.
   */
  private static Start begin(
      Config config, PipelineOptions beamOptions, PrintStream out, Runnable beforeStream) {
    long began = System.nanoTime();
    Instant startedAt = Instant.now();
    DeltaTables tables = config.hadoopConf().tables();
    MssqlCdcIO.Read read = read(config);
    Schema changeSchema = read.outputSchema();
    // A seed is checked (and its copy read) before anything is created or written.
    Seeding.Plan seed = config.seed() == null ? null : Seeding.check(config, tables, changeSchema);
    if (seed == null
        && !tables.exists(config.bronzePath())
        && !config.bootstrap()
        && config.startingLsn().kind() == StartingLsn.Kind.EXPLICIT) {
      // Checked before anything is created: a bad starting LSN writes nothing.
      try (CdcClient client = config.clientFactory().open()) {
        StartPositions.checkExplicit(
            client, config.captureInstance(), config.startingLsn().lsn().orElseThrow());
      }
    }
    // Checked before anything is created: an app id another target uses writes nothing, nor does
    // a facts table that lacks the facts of the target's earlier batches.
    TargetIdentity.check(config, tables, out);
    TargetIdentity.requireTargetsFacts(config, tables);
    boolean created =
        tables.createIfAbsent(config.bronzePath(), BronzeTable.definition(changeSchema)).created();
    String bronzeId = tables.tableId(config.bronzePath());
    if (!created) {
      takeColumnsIfEmpty(config, tables, changeSchema, out);
    }
    evolveBronze(config, tables, changeSchema, out);
    tables.createIfAbsent(config.factsPath(), FactsTable.definition());
    tables.createIfAbsent(config.controlPath(), ControlTable.definition());
    Finalization finalization =
        new Finalization(tables, config.controlPath(), java.time.Clock.systemUTC());

    Optional<StreamPosition> position = resumePosition(config, tables, out);
    if (position.isEmpty()) {
      forgetFormerVerdict(config, finalization, out);
    }
    long snapshotRows = -1;
    long snapshotBegan = System.nanoTime();
    if (position.isEmpty() && seed != null && !seed.alreadySeeded()) {
      snapshotRows = Seeding.write(config, tables, changeSchema, seed, beamOptions, out);
      position = resumePosition(config, tables, out);
    } else if (seed != null) {
      out.printf(
          "Target %s holds the seed at LSN %s (committed at %s): nothing written again%n",
          config.bronzePath(), seed.lsn(), seed.commitTime());
    } else if (position.isEmpty() && config.bootstrap()) {
      snapshotRows = snapshot(config, tables, beamOptions, out, bronzeId);
      position = resumePosition(config, tables, out);
    } else if (position.isEmpty()) {
      position = Optional.of(startPosition(config));
      out.printf(
          "New target %s: starting after %s (startingLsn=%s)%n",
          config.bronzePath(), position.get().endLsn(), config.startingLsn());
    }
    double snapshotSeconds = snapshotRows >= 0 ? (System.nanoTime() - snapshotBegan) / 1e9 : 0;
    StreamPosition start = position.get().ofTarget(config.bronzePath(), bronzeId);
    if (config.bootstrap() || seed != null) {
      writeBootstrapFact(config, tables, start, snapshotRows);
    }
    beforeStream.run();
    if (start.endCommitTime() != null && start.batchId() >= 0) {
      finalization.advance(
          config.bronzePath(), start.endLsn(), start.endCommitTime(), config.granularity());
    }
    return new Start(
        tables,
        finalization,
        read,
        changeSchema,
        start,
        snapshotRows,
        snapshotSeconds,
        startedAt,
        began);
  }

  /**
   * The configuration to run: {@code config} itself, or, when its app id is the default one (equal
   * to the capture instance's name) and the target was written under another app id that names a
   * capture instance of the same table (or whose last batch read one), {@code config} with the
   * target's app id. The target's identity is kept when it is configured under the table's newer
   * capture instance after a switch ({@code --captureInstance=dbo_orders_v2} for a target written
   * as {@code dbo_orders}; C043); any other app id mismatch is refused by {@link #resumePosition}.
   */
  static Config continueUnderTargetAppId(Config config, PrintStream out) {
    if (!config.appId().equals(config.captureInstance())) {
      return config;
    }
    DeltaTables tables = config.hadoopConf().tables();
    if (!tables.exists(config.bronzePath())) {
      return config;
    }
    Optional<StreamPosition> recorded =
        StreamPosition.fromJson(
            tables.domainMetadata(config.bronzePath(), StreamPosition.BRONZE_DOMAIN));
    if (recorded.isEmpty() || recorded.get().appId().equals(config.appId())) {
      return config;
    }
    Set<String> instances = new HashSet<>();
    try (CdcClient client = config.clientFactory().open()) {
      for (CaptureInstance instance : client.captureInstances(config.captureInstance())) {
        instances.add(instance.name().toLowerCase(Locale.ROOT));
      }
    } catch (CaptureInstanceNotFoundError e) {
      return config;
    }
    String appId = recorded.get().appId();
    if (!instances.contains(appId.toLowerCase(Locale.ROOT))
        && !instances.contains(recorded.get().captureInstance().toLowerCase(Locale.ROOT))) {
      return config;
    }
    out.printf(
        "Target %s is written under app id '%s', from a capture instance of the same table as %s:"
            + " continuing under that app id%n",
        config.bronzePath(), appId, config.captureInstance());
    return config.withAppId(appId);
  }

  /**
   * Gives a bronze table that holds nothing yet this run's columns: a run that failed before its
   * first commit (a {@code --columns} type its values do not convert to, say) leaves bronze created
   * but without a position or a data file; the next run's columns replace its own, so a corrected
   * {@code --columns} is taken instead of refused (issue 15, defect 2).
   */
  private static void takeColumnsIfEmpty(
      Config config, DeltaTables tables, Schema changeSchema, PrintStream out) {
    if (TargetIdentity.bronzePosition(config, tables).isPresent()
        || tables.hasDataFiles(config.bronzePath())) {
      return;
    }
    if (tables.replaceColumnsOfEmptyTable(
        config.bronzePath(), BronzeTable.definition(changeSchema).columns())) {
      out.printf(
          "Bronze %s holds no row yet: it takes this run's columns (version %d)%n",
          config.bronzePath(), tables.version(config.bronzePath()));
    }
  }

  /**
   * Removes the control row a former table at the target's path left: a target without a position
   * of its own has no complete period, whatever a deleted table at the same path had vouched for.
   */
  private static void forgetFormerVerdict(
      Config config, Finalization finalization, PrintStream out) {
    finalization
        .forget(config.bronzePath())
        .ifPresent(
            former ->
                out.printf(
                    "Removed the verdict finalized_until = %s of a former table at %s: this"
                        + " table's verdict follows its own data%n",
                    former, config.bronzePath()));
  }

  /**
   * Makes bronze take the change rows of this run (C043, C054, C055): the change schema, inferred
   * as the union of the table's capture instances, may have columns bronze lacks (a newer instance
   * captures them) or a type wider than bronze's. Columns are added, and types widened when bronze
   * has type widening on, in one metadata commit before anything else is written; each change is
   * printed. Anything bronze cannot take fails the run here, before the bootstrap or the stream.
   *
   * @throws org.lakecdc.io.mssqlcdc.client.SchemaChangedError when bronze cannot take the change
   *     rows (see {@link DeltaTables#evolveSchema})
   */
  private static void evolveBronze(
      Config config, DeltaTables tables, Schema changeSchema, PrintStream out) {
    SchemaEvolution evolved = BronzeTable.evolve(tables, config.bronzePath(), changeSchema);
    if (!evolved.added().isEmpty()) {
      out.printf(
          "Added column(s) %s to bronze %s (version %d): the change rows have them; rows written"
              + " before read them as NULL%n",
          evolved.addedNames(), config.bronzePath(), evolved.version());
    }
    if (!evolved.widened().isEmpty()) {
      out.printf(
          "Widened column(s) %s in bronze %s (version %d, type widening is on): rows written"
              + " before read in the new type%n",
          evolved.widenedText(), config.bronzePath(), evolved.version());
    }
  }

  /**
   * The summary of a run: batches and change rows from the pipeline's counters ({@link
   * RunCounters}), the snapshot's rows from its commit's record, the position and the verdict from
   * the tables' metadata; no table is read back. The stream phase began at {@code streamBegan}
   * ({@link System#nanoTime}).
   */
  private static Summary summarize(
      Config config, Start run, PrintStream out, PipelineResult result, long streamBegan) {
    double streamSeconds = (System.nanoTime() - streamBegan) / 1e9;
    return new Summary(
        RunCounters.batches(result),
        RunCounters.rowsByOperation(result),
        run.snapshotRows(),
        run.snapshotSeconds(),
        resumePosition(config, run.tables(), out),
        run.finalization().verdict(config.bronzePath()),
        streamSeconds,
        (System.nanoTime() - run.began()) / 1e9);
  }

  /** "batch N", or "no batch yet" before the first batch (after a snapshot or on a new target). */
  static String batchText(long batchId) {
    return batchId < 0 ? "no batch yet" : "batch " + batchId;
  }

  static MssqlCdcIO.Read read(Config config) {
    MssqlCdcIO.Read read =
        MssqlCdcIO.read()
            .withCaptureInstance(config.captureInstance())
            .withClientFactory(config.clientFactory())
            .withNumPartitions(config.numPartitions())
            .withIncludeCommandId(config.includeCommandId())
            .withSchemaChangePolicy(config.schemaChangePolicy());
    if (config.maxCommitsPerBatch() > 0) {
      read = read.withMaxCommitsPerBatch(config.maxCommitsPerBatch());
    }
    if (config.columns() != null) {
      read = read.withColumns(config.columns());
    }
    return read;
  }

  /**
   * The target's position: the later of bronze's and the facts table's, after writing the facts row
   * a crash left missing (bronze committed a batch, its facts commit did not happen).
   *
   * @throws IllegalArgumentException when the target was written by another app id
   */
  static Optional<StreamPosition> resumePosition(
      Config config, DeltaTables tables, PrintStream out) {
    Optional<StreamPosition> bronze =
        StreamPosition.fromJson(
            tables.domainMetadata(config.bronzePath(), StreamPosition.BRONZE_DOMAIN));
    if (bronze.isPresent() && !bronze.get().appId().equals(config.appId())) {
      throw new IllegalArgumentException(
          "Target "
              + config.bronzePath()
              + " is written by app id '"
              + bronze.get().appId()
              + "', not '"
              + config.appId()
              + "': run with --appId="
              + bronze.get().appId()
              + " or write a new target");
    }
    // The shared facts table's position counts only when it is this bronze table's own.
    Optional<StreamPosition> facts = TargetIdentity.ownFactsPosition(config, tables);
    if (bronze.isPresent()
        && bronze.get().batchId() >= 0
        && (facts.isEmpty() || facts.get().endLsn().isBefore(bronze.get().endLsn()))) {
      writeMissingFacts(config, tables, bronze.get(), out);
      return bronze;
    }
    if (facts.isPresent()
        && (bronze.isEmpty() || facts.get().endLsn().isAfter(bronze.get().endLsn()))) {
      return facts;
    }
    return bronze;
  }

  /** Rebuilds the facts row of the last bronze batch from the stats stored with its commit. */
  private static void writeMissingFacts(
      Config config, DeltaTables tables, StreamPosition bronze, PrintStream out) {
    BatchStats stats =
        BatchStats.fromJson(
            tables
                .domainMetadata(config.bronzePath(), BatchStats.BRONZE_DOMAIN)
                .orElseThrow(
                    () ->
                        new IllegalStateException(
                            "Bronze "
                                + config.bronzePath()
                                + " has a position but no batch stats")));
    StreamPosition own = bronze.ofTarget(config.bronzePath(), tables.tableId(config.bronzePath()));
    out.printf(
        "Writing the facts row of batch %d, which the previous run committed to bronze but not"
            + " to facts%n",
        stats.batchId());
    tables.append(
        config.factsPath(),
        FactsTable.SCHEMA,
        List.of(
            stats
                .factsRow(
                    config.appId(), bronze.endLsn(), bronze.endCommitTime(), config.bronzePath())
                .set(FactsTable.WRITTEN_AT, Instant.now())
                .build()),
        own.factsAppId(),
        stats.batchId(),
        Map.of(StreamPosition.factsDomain(config.appId()), own.toJson()));
  }

  /**
   * Takes the bootstrap snapshot of a new target: records S ({@code max_lsn} before any row is
   * read, BEHAVIOUR.md 6.1), reads the table in key ranges and writes the rows to bronze in one
   * commit that also records S and the position at S.
   *
   * @return the snapshot's rows
   */
  private static long snapshot(
      Config config,
      DeltaTables tables,
      PipelineOptions beamOptions,
      PrintStream out,
      String bronzeId) {
    MssqlCdcIO.Snapshot snapshot =
        MssqlCdcIO.snapshot()
            .withCaptureInstance(config.captureInstance())
            .withClientFactory(config.clientFactory())
            .withNumPartitions(Math.max(config.numPartitions(), 4))
            .withIsolationLevel(config.isolation())
            .withIncludeCommandId(config.includeCommandId());
    if (config.columns() != null) {
      snapshot = snapshot.withColumns(config.columns());
    }
    Lsn s = snapshot.resolveSnapshotLsn();
    Instant time;
    try (CdcClient client = config.clientFactory().open()) {
      time =
          client
              .lastCommitAtOrBefore(s)
              .map(Commit::commitTime)
              .orElseThrow(
                  () ->
                      new IllegalStateException(
                          "Snapshot LSN "
                              + s
                              + " has no commit at or before it in cdc.lsn_time_mapping: run"
                              + " again once the capture job has written one"));
    }
    StreamPosition atS =
        new StreamPosition(config.appId(), 0, -1, s, time, config.captureInstance())
            .ofTarget(config.bronzePath(), bronzeId);
    out.printf(
        "New target %s: taking a snapshot of %s stamped with S = %s (committed at %s)%n",
        config.bronzePath(), config.captureInstance(), s, time);
    Pipeline pipeline = Pipeline.create(beamOptions);
    pipeline.apply(
        "Snapshot " + config.captureInstance() + " to bronze",
        WriteSnapshotToDelta.from(snapshot)
            .to(config.bronzePath(), atS)
            .withHadoopConf(config.hadoopConf())
            .withRowListener(SnapshotProgress.listener(config.captureInstance())));
    JobExit.run(pipeline);
    if (WriteSnapshotToDelta.committedSnapshot(tables, config.bronzePath()).isEmpty()) {
      WriteSnapshotToDelta.commit(tables, config.bronzePath(), atS, List.of(), 0);
    }
    // The rows recorded with the snapshot commit: bronze is never scanned to count them.
    long rows = WriteSnapshotToDelta.committedSnapshotRows(tables, config.bronzePath()).orElse(0L);
    out.printf("Snapshot: %s written to %s%n", Counts.of(rows, "row", "rows"), config.bronzePath());
    return rows;
  }

  /**
   * Writes the {@code bootstrap} event of the target's snapshot or seed once (transaction id {@code
   * <appId>#events}, version 0); offered on every run, so a crash between the snapshot commit and
   * this write only delays it.
   */
  private static void writeBootstrapFact(
      Config config, DeltaTables tables, StreamPosition start, long snapshotRows) {
    Optional<WriteSnapshotToDelta.SnapshotRecord> record =
        WriteSnapshotToDelta.committedRecord(tables, config.bronzePath());
    if (record.isEmpty()) {
      return;
    }
    Optional<Lsn> s = record.map(WriteSnapshotToDelta.SnapshotRecord::lsn);
    WriteSnapshotToDelta.SeedSource seed = record.get().seed();
    String detail =
        seed == null
            ? "whole snapshot of " + config.captureInstance()
            : "seed of "
                + seed.table()
                + " as of "
                + seed.asOf()
                + " ("
                + config.captureInstance()
                + ")";
    // The rows recorded with the snapshot (or seed) commit, also after a crash between that commit
    // and this event (issue 15, defect 12).
    Long rows = null;
    if (snapshotRows >= 0) {
      rows = snapshotRows;
    } else if (record.get().rows() >= 0) {
      rows = record.get().rows();
    }
    String eventsApp = start.eventsAppId();
    if (tables.latestTransactionVersion(config.factsPath(), eventsApp).isPresent()) {
      return;
    }
    if (start.targetId() == null
        || TargetIdentity.bronzePosition(config, tables)
            .filter(p -> p.targetId() == null)
            .isPresent()) {
      // A target whose bronze position records no table id wrote its event before lakecdc named
      // the event's transaction after the table.
      String legacy = config.appId() + "#events";
      if (tables.latestTransactionVersion(config.factsPath(), legacy).isPresent()) {
        return;
      }
    }
    Instant time;
    try (CdcClient client = config.clientFactory().open()) {
      time = client.lastCommitAtOrBefore(s.get()).map(Commit::commitTime).orElse(null);
    }
    tables.append(
        config.factsPath(),
        FactsTable.SCHEMA,
        List.of(
            FactsTable.row()
                .set(FactsTable.APP_ID, config.appId())
                .set(FactsTable.ROWS, rows)
                .set(FactsTable.EVENT, FactsTable.EVENT_BOOTSTRAP)
                .set(FactsTable.MIN_LSN, s.get().toString())
                .set(FactsTable.MAX_LSN, s.get().toString())
                .set(FactsTable.END_LSN, s.get().toString())
                .set(FactsTable.END_COMMIT_TS, time)
                .set(FactsTable.DETAIL, detail)
                .set(FactsTable.TARGET, config.bronzePath())
                .set(FactsTable.WRITTEN_AT, Instant.now())
                .build()),
        eventsApp,
        0,
        Map.of());
  }

  /** The position of a new target without a snapshot: right before where the read starts. */
  private static StreamPosition startPosition(Config config) {
    try (CdcClient client = config.clientFactory().open()) {
      Lsn last =
          StartPositions.lastProcessed(client, config.captureInstance(), config.startingLsn());
      if (config.startingLsn().kind() == StartingLsn.Kind.EXPLICIT) {
        StartPositions.checkExplicit(client, config.captureInstance(), last);
      }
      Instant time = client.commit(last).map(Commit::commitTime).orElse(null);
      return new StreamPosition(config.appId(), 0, -1, last, time, config.captureInstance());
    }
  }
}
