package org.lakecdc.pipelines.cdc;

import java.io.PrintStream;
import java.time.Instant;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.coders.SerializableCoder;
import org.apache.beam.sdk.options.PipelineOptions;
import org.apache.beam.sdk.schemas.Schema;
import org.apache.beam.sdk.transforms.Create;
import org.apache.beam.sdk.transforms.Flatten;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.PCollectionList;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.io.mssqlcdc.client.CdcClient;
import org.lakecdc.io.mssqlcdc.client.DataLossError;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.io.mssqlcdc.read.DataLossPolicy;
import org.lakecdc.io.mssqlcdc.read.StopCondition;
import org.lakecdc.io.mssqlcdc.read.TableFailure;
import org.lakecdc.pipelines.cli.JobExit;
import org.lakecdc.pipelines.cli.OptionRefusedException;
import org.lakecdc.pipelines.history.HistoryPlan;
import org.lakecdc.pipelines.silver.SilverRun;
import org.lakecdc.pipelines.targets.Bootstrap;
import org.lakecdc.pipelines.targets.ChunkBackfill;
import org.lakecdc.pipelines.targets.ChunkReadPool;
import org.lakecdc.pipelines.targets.ChunkedSnapshot;
import org.lakecdc.pipelines.targets.JobConfig;
import org.lakecdc.pipelines.targets.Recovery;
import org.lakecdc.pipelines.targets.Resnapshot;
import org.lakecdc.pipelines.targets.RunCounters;
import org.lakecdc.pipelines.targets.Seeding;
import org.lakecdc.pipelines.targets.SilverPlan;
import org.lakecdc.pipelines.targets.TablePlan;
import org.lakecdc.pipelines.targets.Target;
import org.lakecdc.pipelines.targets.TargetIdentity;
import org.lakecdc.pipelines.targets.WaveProgress;
import org.lakecdc.transforms.bronze.CommittedBatch;
import org.lakecdc.transforms.bronze.RecordedFailure;
import org.lakecdc.transforms.bronze.TableWrite;
import org.lakecdc.transforms.bronze.WriteChangeStreamToDelta;
import org.lakecdc.transforms.bronze.WriteChangesToDelta;
import org.lakecdc.transforms.delta.DeltaTables;
import org.lakecdc.transforms.facts.FactsTable;
import org.lakecdc.transforms.finalization.ControlTable;
import org.lakecdc.transforms.history.HistoryTarget;
import org.lakecdc.transforms.position.StreamPosition;
import org.lakecdc.transforms.silver.ApplyChangesToSilver;
import org.lakecdc.transforms.silver.DerivedTarget;
import org.lakecdc.transforms.snapshot.CommittedChunk;

/**
 * The main job: SQL Server CDC of one or many capture instances into their bronze Delta tables, a
 * shared facts table and the completeness verdict, exactly once across replays, crashes and fresh
 * submissions, all tables in one pipeline.
 *
 * <p>A run has three parts, each in its own place:
 *
 * <ol>
 *   <li><b>Plan</b>, on the launcher, per table ({@link TablePlan}): the checks that refuse a
 *       configuration before anything is written (for every table first), then the tables created
 *       or migrated, bronze made to take the change schema, the position read from the Delta tables
 *       and what a crash left repaired ({@link Recovery}), a new target's bootstrap snapshot opened
 *       (S recorded, no row read: the pipeline reads it, {@link SnapshotBranches}) or the target
 *       seeded ({@link Bootstrap}, {@link Seeding}); a table with nothing new stops here.
 *   <li><b>Expand</b> ({@link #expand}): every table's read and committer into one given pipeline:
 *       one table as {@code MssqlCdcIO.read()}, many in one {@code MssqlCdcIO.readAll()}, each with
 *       its own restriction, schema, bronze and committer; the tables commit independently.
 *   <li><b>Run</b>: the runner, then per table the summary from the pipeline's counters and the
 *       tables' metadata ({@link JobSummary}); continuous runs in {@link ContinuousRunner}.
 * </ol>
 *
 * <p>One table ({@link #run}) fails the run on any error, as it always has. Many tables ({@link
 * #runAll}) isolate a table's own failures ({@link TableFailure}: data loss, a schema change the
 * read cannot follow, a missing grant, a disabled capture instance): that table records a {@code
 * table_failed} facts row and stops, the others go on; an unknown capture instance among them is
 * refused before anything is written.
 */
public final class CdcToDeltaJob {
  private CdcToDeltaJob() {}

  /**
   * What a run of many tables did for one table.
   *
   * @param config the table's configuration
   * @param summary what the run did for it
   * @param failure the failure that stopped the table in this run, or empty
   */
  public record TableOutcome(
      JobConfig config, JobSummary summary, Optional<RecordedFailure> failure) {
    /** Whether the table failed in this run. */
    public boolean failed() {
      return failure.isPresent();
    }
  }

  /**
   * Runs one table once; any failure fails the run.
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
  public static JobSummary run(JobConfig config, PipelineOptions beamOptions, PrintStream out) {
    return run(config, beamOptions, out, () -> {});
  }

  /**
   * Runs one table once, calling {@code beforeStream} once the table is planned (a new target's S
   * recorded) and before the pipeline reads its snapshot (if any) and its changes: the demo's
   * application writes its second half of history there, as a live OLTP database keeps changing
   * while a snapshot is taken (a commit after S that the snapshot's read sees is in the snapshot
   * and among the changes after S as well).
   *
   * @see #run(JobConfig, PipelineOptions, PrintStream)
   */
  public static JobSummary run(
      JobConfig config, PipelineOptions beamOptions, PrintStream out, Runnable beforeStream) {
    return bounded(List.of(config), false, beamOptions, out, beforeStream, true).get(0).summary();
  }

  /**
   * Follows one table continuously until {@code continuous.stop()} holds ({@link
   * ContinuousRunner}); any failure fails the run.
   *
   * @return what the run did
   */
  public static JobSummary runContinuously(
      JobConfig config,
      PipelineOptions beamOptions,
      PrintStream out,
      Runnable beforeStream,
      Continuous continuous) {
    return ContinuousRunner.run(config, beamOptions, out, beforeStream, continuous);
  }

  /**
   * Follows many tables continuously in one pipeline until {@code continuous.stop()} holds ({@link
   * ContinuousRunner}); a table that fails with a {@link TableFailure} is stopped alone.
   *
   * @return one outcome per table, in the order of {@code configs}
   */
  public static List<TableOutcome> runAllContinuously(
      List<JobConfig> configs,
      PipelineOptions beamOptions,
      PrintStream out,
      Runnable beforeStream,
      Continuous continuous) {
    return ContinuousRunner.runAll(configs, true, beamOptions, out, beforeStream, continuous);
  }

  /**
   * {@link #runAllContinuously(List, PipelineOptions, PrintStream, Runnable, Continuous)} that also
   * follows where the tables are listed: read again every poll interval (or before each of the
   * repeated bounded runs), a table added is planned (its bootstrap snapshot taken, when new) and
   * then followed beside the running tables, a table removed stops after the batch it is reading
   * (its position kept for a later run), a refused line is printed in one line and ignored, and a
   * table whose options changed goes on with the ones it started with (printed in one line). The
   * tables that join and leave write {@code joined} and {@code left} facts rows.
   *
   * @param listing where the tables are listed ({@code --tablesFile}); {@code configs} are the
   *     tables it listed at the start
   * @return one outcome per table: those of {@code configs} in their order, then those that joined
   *     while running, in the order they joined
   */
  public static List<TableOutcome> runAllContinuously(
      List<JobConfig> configs,
      PipelineOptions beamOptions,
      PrintStream out,
      Runnable beforeStream,
      Continuous continuous,
      TableListing listing) {
    return ContinuousRunner.runAll(
        configs, true, beamOptions, out, beforeStream, continuous, listing);
  }

  /**
   * Runs many tables once, in one pipeline: each into its own bronze table, sharing the facts and
   * control tables of their configurations (created once, first). A table that fails with a {@link
   * TableFailure} is stopped alone (a {@code table_failed} facts row, its outcome says so); the
   * others run to their end.
   *
   * @param configs one configuration per table: distinct capture instances, targets and app ids
   * @return one outcome per table, in the order of {@code configs}
   * @throws IllegalArgumentException before anything is written, when a capture instance is unknown
   *     or a table's configuration is refused
   */
  public static List<TableOutcome> runAll(
      List<JobConfig> configs,
      PipelineOptions beamOptions,
      PrintStream out,
      Runnable beforeStream) {
    return bounded(configs, true, beamOptions, out, beforeStream, true);
  }

  /**
   * Expands the tables' change reads and committers into {@code pipeline}: {@link
   * WriteChangesToDelta} (bounded reads) or {@link WriteChangeStreamToDelta} (continuous reads),
   * one table alone ({@code isolate} false: a failure fails the pipeline) or all in one {@code
   * readAll()} ({@code isolate} true), and the counters the summaries read ({@link RunCounters}).
   *
   * @param tables each table's read (positioned), target and schema
   * @param continuous whether the reads are continuous
   * @return the committed batches
   */
  public static PCollection<CommittedBatch> expand(
      Pipeline pipeline, List<TableWrite> tables, boolean isolate, boolean continuous) {
    return expand(pipeline, tables, List.of(), isolate, continuous);
  }

  /**
   * {@link #expand(Pipeline, List, boolean, boolean)}, then the silver and history tables of {@code
   * silvers} applied after the bronze commits of their tables ({@link ApplyChangesToSilver}).
   *
   * @param silvers the silver and history tables of some of {@code tables} (by app id), possibly
   *     none
   * @return the committed batches
   */
  public static PCollection<CommittedBatch> expand(
      Pipeline pipeline,
      List<TableWrite> tables,
      List<? extends DerivedTarget> silvers,
      boolean isolate,
      boolean continuous) {
    return expand(pipeline, tables, silvers, List.of(), isolate, continuous);
  }

  /**
   * {@link #expand(Pipeline, List, List, boolean, boolean)} with the chunks of open chunked
   * snapshots read and committed beside the stream, in the same pipeline ({@link ChunkBackfill}):
   * each table's chunks commit in index order, independently of its batches, and each committed
   * chunk also triggers its table's silver apply ({@link ApplyChangesToSilver#withChunks}).
   *
   * @param tables the tables whose changes are read (possibly none: only chunks are read)
   * @param backfills the chunks to read, at most one per table, possibly none
   * @return the committed batches
   */
  static PCollection<CommittedBatch> expand(
      Pipeline pipeline,
      List<TableWrite> tables,
      List<? extends DerivedTarget> silvers,
      List<ChunkBackfill> backfills,
      boolean isolate,
      boolean continuous) {
    return expand(pipeline, tables, silvers, backfills, isolate, continuous, null);
  }

  /**
   * {@link #expand(Pipeline, List, List, List, boolean, boolean)}; with {@code silverStop} (a
   * continuous pipeline) each silver or history table also applies at the pipeline's start and then
   * at least every {@link DerivedTarget#applyInterval()} until {@code silverStop} holds ({@link
   * ApplyChangesToSilver#following}), whatever the runner's bundles.
   *
   * @param silverStop the continuous source's stop condition, or null (bounded: silver applies
   *     after the commits only)
   * @return the committed batches
   */
  static PCollection<CommittedBatch> expand(
      Pipeline pipeline,
      List<TableWrite> tables,
      List<? extends DerivedTarget> silvers,
      List<ChunkBackfill> backfills,
      boolean isolate,
      boolean continuous,
      @Nullable StopCondition silverStop) {
    return expand(pipeline, tables, silvers, backfills, List.of(), isolate, continuous, silverStop);
  }

  /**
   * {@link #expand(Pipeline, List, List, List, boolean, boolean, StopCondition)} with the bootstrap
   * snapshots of new targets read in the pipeline, each table in a branch of its own: its
   * snapshot's read and commit, then its change read from S ({@link SnapshotBranches}).
   *
   * @param snapshots the new targets whose snapshots the pipeline reads, possibly none
   * @return the committed batches of every table
   */
  static PCollection<CommittedBatch> expand(
      Pipeline pipeline,
      List<TableWrite> tables,
      List<? extends DerivedTarget> silvers,
      List<ChunkBackfill> backfills,
      List<SnapshotBranches.Branch> snapshots,
      boolean isolate,
      boolean continuous,
      @Nullable StopCondition silverStop) {
    PCollectionList<CommittedBatch> all = PCollectionList.empty(pipeline);
    if (!tables.isEmpty()) {
      all = all.and(expandStream(pipeline, tables, isolate, continuous));
    }
    for (SnapshotBranches.Branch branch : snapshots) {
      PCollection<CommittedBatch> after = SnapshotBranches.expand(pipeline, branch, isolate);
      if (after != null) {
        all = all.and(after);
      }
    }
    PCollection<CommittedBatch> committed;
    if (all.size() == 1) {
      committed = all.get(0);
    } else if (all.size() == 0) {
      committed =
          pipeline.apply(
              "No change read", Create.empty(SerializableCoder.of(CommittedBatch.class)));
    } else {
      committed = all.apply("Committed batches", Flatten.pCollections());
    }
    committed.apply(RunCounters.count());
    PCollection<CommittedChunk> chunks = null;
    if (!backfills.isEmpty()) {
      PCollectionList<CommittedChunk> each = PCollectionList.empty(pipeline);
      for (ChunkBackfill backfill : backfills) {
        each = each.and(backfill.expand(pipeline));
      }
      chunks = each.apply("Committed chunks", Flatten.pCollections());
    }
    if (!silvers.isEmpty()) {
      ApplyChangesToSilver apply = ApplyChangesToSilver.of(silvers, isolate);
      if (chunks != null) {
        apply = apply.withChunks(chunks);
      }
      if (silverStop != null) {
        apply = apply.following(silverStop);
      }
      committed.apply("Apply changes to silver", apply);
    }
    return committed;
  }

  private static PCollection<CommittedBatch> expandStream(
      Pipeline pipeline, List<TableWrite> tables, boolean isolate, boolean continuous) {
    String names = String.join(",", tables.stream().map(TableWrite::captureInstance).toList());
    PCollection<CommittedBatch> committed;
    if (continuous) {
      committed =
          pipeline.apply(
              "Follow " + names + " and write to Delta as batches arrive",
              isolate
                  ? WriteChangeStreamToDelta.fromAll(tables)
                  : WriteChangeStreamToDelta.from(
                      tables.get(0).read(), tables.get(0).target(), tables.get(0).changeSchema()));
    } else {
      committed =
          pipeline.apply(
              "Read " + names + " and write to Delta",
              isolate
                  ? WriteChangesToDelta.fromAll(tables)
                  : WriteChangesToDelta.from(
                      tables.get(0).read(), tables.get(0).target(), tables.get(0).changeSchema()));
    }
    return committed;
  }

  /**
   * One bounded run of {@code configs}; with {@code recordNothingNew} false (a poll of a continuous
   * run) a table that finds nothing new writes nothing at all, as the continuous source writes
   * nothing while idle.
   */
  static List<TableOutcome> bounded(
      List<JobConfig> configs,
      boolean isolate,
      PipelineOptions beamOptions,
      PrintStream out,
      Runnable beforeStream,
      boolean recordNothingNew) {
    List<TableOutcome> outcomes;
    try {
      outcomes = boundedOnce(configs, isolate, beamOptions, out, beforeStream, recordNothingNew);
    } catch (StreamMetDataLoss e) {
      // One table alone: its read met the loss. Planned again, its pre-flight re-snapshots it.
      out.printf(
          "%s: CDC cleanup passed the stream during the run (%s); recovering with"
              + " --onDataLoss=resnapshot%n",
          configs.get(0).captureInstance(), e.getMessage());
      return boundedOnce(configs, isolate, beamOptions, out, () -> {}, recordNothingNew);
    }
    List<JobConfig> again = new ArrayList<>();
    for (TableOutcome outcome : outcomes) {
      if (metDataLossToRecover(outcome)) {
        again.add(outcome.config());
      }
    }
    if (again.isEmpty()) {
      return outcomes;
    }
    for (JobConfig config : again) {
      out.printf(
          "%s: CDC cleanup passed the stream during the run; recovering with"
              + " --onDataLoss=resnapshot while the other tables are done%n",
          config.captureInstance());
    }
    List<TableOutcome> recovered =
        boundedOnce(again, isolate, beamOptions, out, () -> {}, recordNothingNew);
    List<TableOutcome> merged = new ArrayList<>();
    for (TableOutcome outcome : outcomes) {
      TableOutcome second =
          recovered.stream()
              .filter(r -> r.config().captureInstance().equals(outcome.config().captureInstance()))
              .findFirst()
              .orElse(null);
      merged.add(
          second == null
              ? outcome
              : new TableOutcome(
                  second.config(), outcome.summary().plus(second.summary()), second.failure()));
    }
    return merged;
  }

  /**
   * Whether a table of a run of many stopped because its read met data loss and is configured to
   * re-snapshot ({@code --onDataLoss=resnapshot}): it is planned again, and its pre-flight
   * recovers.
   */
  static boolean metDataLossToRecover(TableOutcome outcome) {
    // A table that failed while being planned (the pre-flight's own refusal) has no position in
    // its summary: planning it again would only repeat the refusal.
    return outcome.failed()
        && outcome.summary().position().isPresent()
        && outcome.config().onDataLoss() == DataLossPolicy.RESNAPSHOT
        && outcome.failure().get().errorClass().equals(DataLossError.class.getSimpleName());
  }

  /** The pipeline of one table failed because its read met data loss the table re-snapshots. */
  static final class StreamMetDataLoss extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /**
     * @param loss the data loss's own message (its first line)
     * @param cause the pipeline's failure
     */
    StreamMetDataLoss(String loss, RuntimeException cause) {
      super(loss, cause);
    }
  }

  /**
   * Runs {@code pipeline}; a failure of one table's pipeline ({@code isolate} false) is rethrown as
   * the {@link DataLossError} of its bootstrap snapshot when CDC cleanup passed that snapshot's S
   * ({@link SnapshotBranches#throwIfOutlived}), else, when its cause is data loss and the table
   * re-snapshots, as {@link StreamMetDataLoss}.
   *
   * @param snapshots the bootstrap snapshots {@code pipeline} reads, possibly none
   */
  static PipelineResult runRecoverable(
      Pipeline pipeline,
      List<JobConfig> configs,
      boolean isolate,
      List<SnapshotBranches.Branch> snapshots) {
    try {
      return JobExit.run(pipeline);
    } catch (RuntimeException e) {
      if (!isolate) {
        // As when the launcher read the snapshot: its DataLossError fails the run, not recovered.
        SnapshotBranches.throwIfOutlived(snapshots, e);
      }
      Optional<TableFailure> loss =
          TableFailure.of(e)
              .filter(f -> f.errorClass().equals(DataLossError.class.getSimpleName()));
      if (!isolate
          && configs.get(0).onDataLoss() == DataLossPolicy.RESNAPSHOT
          && loss.isPresent()) {
        throw new StreamMetDataLoss(loss.get().message(), e);
      }
      throw e;
    }
  }

  private static List<TableOutcome> boundedOnce(
      List<JobConfig> configs,
      boolean isolate,
      PipelineOptions beamOptions,
      PrintStream out,
      Runnable beforeStream,
      boolean recordNothingNew) {
    // The new targets' whole snapshots are read in the pipeline: the launcher only records S.
    Planned planned = plan(configs, isolate, beamOptions, out, beforeStream, true);
    long streamBegan = System.nanoTime();
    Lsn max;
    try (CdcClient client = configs.get(0).clientFactory().open()) {
      max = client.maxLsn().orElse(Lsn.ZERO);
    }
    List<TablePlan> reading = new ArrayList<>();
    Map<TablePlan, JobSummary> idle = new LinkedHashMap<>();
    List<ChunkBackfill> backfills = new ArrayList<>();
    List<SnapshotBranches.Branch> snapshots = new ArrayList<>();
    for (TablePlan plan : planned.plans()) {
      if (plan.backfill() != null) {
        backfills.add(plan.backfill());
      }
      StreamPosition start = plan.start();
      if (plan.snapshot() != null) {
        snapshots.add(new SnapshotBranches.Branch(plan, max.isAfter(start.endLsn())));
        continue;
      }
      if (max.isAfter(start.endLsn())) {
        reading.add(plan);
        continue;
      }
      nothingNew(plan, max, recordNothingNew, (System.nanoTime() - streamBegan) / 1e9, idle, out);
    }
    PipelineResult result = null;
    if (!reading.isEmpty() || !backfills.isEmpty() || !snapshots.isEmpty()) {
      ChunkReadPool.fit(beamOptions, backfills, reading.size() + snapshots.size());
      Pipeline pipeline = Pipeline.create(beamOptions);
      List<TableWrite> writes = new ArrayList<>();
      List<DerivedTarget> silvers = new ArrayList<>();
      for (TablePlan plan : planned.plans()) {
        if (reading.contains(plan) || plan.backfill() != null || plan.snapshot() != null) {
          silvers.addAll(derived(plan));
        }
      }
      for (TablePlan plan : reading) {
        writes.add(plan.write(null));
        printReading(plan, max, out);
      }
      for (SnapshotBranches.Branch branch : snapshots) {
        if (branch.stream()) {
          printReading(branch.plan(), max, out);
        }
      }
      expand(pipeline, writes, silvers, backfills, snapshots, isolate, false, null);
      Instant runBegan = Instant.now();
      // The chunked snapshots' wave lines, on this console as the facts table records them.
      try (WaveProgress progress = WaveProgress.follow(backfills, out)) {
        result = runRecoverable(pipeline, configs, isolate, snapshots);
      }
      planned =
          afterSnapshots(planned, snapshots, runBegan, result, max, idle, recordNothingNew, out);
    }
    return outcomes(planned, idle, result, isolate, out, streamBegan);
  }

  private static void printReading(TablePlan plan, Lsn max, PrintStream out) {
    out.printf(
        "Reading %s after %s (%s) up to max_lsn %s%n",
        plan.config().captureInstance(),
        plan.start().endLsn(),
        TargetIdentity.batchText(plan.start().batchId()),
        max);
  }

  /**
   * After a run that read new targets' snapshots: each snapshot printed from its committed record
   * ({@link SnapshotBranches#report}), in the tables' order; a table whose snapshot was committed
   * with nothing after S to stream is {@code Nothing new} (and recorded so with {@code
   * recordNothingNew}), its summary in {@code idle}.
   *
   * @return the plans, those with a committed snapshot carrying its rows and seconds
   */
  private static Planned afterSnapshots(
      Planned planned,
      List<SnapshotBranches.Branch> snapshots,
      Instant runBegan,
      PipelineResult result,
      Lsn max,
      Map<TablePlan, JobSummary> idle,
      boolean recordNothingNew,
      PrintStream out) {
    if (snapshots.isEmpty()) {
      return planned;
    }
    List<TablePlan> plans = new ArrayList<>();
    for (TablePlan plan : planned.plans()) {
      SnapshotBranches.Branch branch =
          snapshots.stream().filter(b -> b.plan() == plan).findFirst().orElse(null);
      if (branch == null) {
        plans.add(plan);
        continue;
      }
      TablePlan reported = SnapshotBranches.report(plan, runBegan, result, out);
      plans.add(reported);
      if (!branch.stream() && reported != plan) {
        nothingNew(reported, max, recordNothingNew, 0, idle, out);
      }
    }
    return new Planned(plans, planned.failedEarly());
  }

  /**
   * A table whose bronze already holds {@code max}: prints {@code Nothing new: max_lsn <max> is
   * already in <bronze> (<batch>)}, records it with {@code record} (the {@code nothing_new} facts
   * row), and puts its summary in {@code idle} (no batch; a snapshot's rows and seconds when the
   * run took one; the position and verdict).
   *
   * @param streamSeconds the wall seconds of the stream phase so far
   */
  private static void nothingNew(
      TablePlan plan,
      Lsn max,
      boolean record,
      double streamSeconds,
      Map<TablePlan, JobSummary> idle,
      PrintStream out) {
    StreamPosition start = plan.start();
    out.printf(
        "Nothing new: max_lsn %s is already in %s (%s)%n",
        max, plan.target().bronze(), TargetIdentity.batchText(start.batchId()));
    if (record) {
      recordNothingNew(plan, max);
    }
    idle.put(
        plan,
        new JobSummary(
            0,
            Map.of(),
            plan.snapshotRows(),
            plan.snapshotSeconds(),
            Optional.of(start),
            plan.finalization().verdict(plan.target().bronze()),
            streamSeconds,
            (System.nanoTime() - plan.began()) / 1e9));
  }

  /** The tables the pipeline keeps from {@code plan}'s bronze: its silver and its history. */
  static List<DerivedTarget> derived(TablePlan plan) {
    List<DerivedTarget> derived = new ArrayList<>();
    if (plan.silver() != null) {
      derived.add(plan.silver());
    }
    HistoryTarget history = HistoryPlan.target(plan);
    if (history != null) {
      derived.add(history);
    }
    return derived;
  }

  /** The tables planned for a run, and those that failed while being planned. */
  record Planned(List<TablePlan> plans, Map<JobConfig, RecordedFailure> failedEarly) {}

  /**
   * Plans every table ({@link TablePlan}): with {@code isolate}, first refuses unknown capture
   * instances and every table's refused configuration before anything is written, creates the
   * shared facts and control tables once, and stops a table whose planning meets a {@link
   * TableFailure} (recorded) instead of the run; the tables are then planned a few at once ({@link
   * ParallelPlanning#threads}), their lines printed in the tables' order as if planned one after
   * another; then calls {@code beforeStream} and advances each table's verdict to its start. With
   * {@code snapshotsInPipeline} a new target's whole bootstrap snapshot is only opened (S recorded,
   * no row read): the pipeline reads it ({@link TablePlan#snapshot}).
   */
  static Planned plan(
      List<JobConfig> configs,
      boolean isolate,
      PipelineOptions beamOptions,
      PrintStream out,
      Runnable beforeStream,
      boolean snapshotsInPipeline) {
    List<Target> resolved = new ArrayList<>();
    for (JobConfig config : configs) {
      resolved.add(Recovery.continueUnderTargetAppId(Target.of(config), out));
    }
    if (isolate) {
      checkAll(resolved, out);
    }
    List<TablePlan> plans = new ArrayList<>();
    Map<JobConfig, RecordedFailure> failedEarly = new LinkedHashMap<>();
    // Many tables are planned a few at once, each printing as if alone (ParallelPlanning).
    List<ParallelPlanning.Outcome<Prepared>> prepared =
        ParallelPlanning.run(
            resolved,
            isolate ? ParallelPlanning.threads(resolved.size()) : 1,
            (target, own) -> prepare(target, isolate, snapshotsInPipeline, beamOptions, own),
            out);
    for (ParallelPlanning.Outcome<Prepared> outcome : prepared) {
      if (outcome.failure() != null) {
        throw outcome.failure();
      }
      if (outcome.result().plan() != null) {
        plans.add(outcome.result().plan());
      } else {
        failedEarly.put(outcome.result().config(), outcome.result().failure());
      }
    }
    beforeStream.run();
    plans.forEach(TablePlan::advanceVerdictToStart);
    return new Planned(plans, failedEarly);
  }

  /** A table planned, or the failure its planning recorded (a table of a run of many tables). */
  private record Prepared(
      JobConfig config, @Nullable TablePlan plan, @Nullable RecordedFailure failure) {}

  /**
   * Plans one table; with {@code isolate}, a failure of the table's own (a {@link TableFailure}) is
   * recorded and returned instead of thrown.
   */
  private static Prepared prepare(
      Target target,
      boolean isolate,
      boolean snapshotInPipeline,
      PipelineOptions beamOptions,
      PrintStream out) {
    try {
      return new Prepared(
          target.config(), TablePlan.prepare(target, beamOptions, out, snapshotInPipeline), null);
    } catch (RuntimeException e) {
      Optional<TableFailure> failure = isolate ? TableFailure.of(e) : Optional.empty();
      if (failure.isEmpty()) {
        throw e;
      }
      return new Prepared(target.config(), null, recordEarlyFailure(target, failure.get(), out));
    }
  }

  /**
   * The checks of a run of many tables before anything is written: no two tables share a bronze
   * table or an app id, every capture instance exists (else one line naming the unknown ones and
   * the known ones), every table's configuration passes {@link TablePlan#check}; then the shared
   * facts and control tables are created (once).
   *
   * @throws OptionRefusedException naming the unknown capture instances
   */
  private static void checkAll(List<Target> targets, PrintStream out) {
    Map<String, String> tableOwners = new LinkedHashMap<>();
    Map<String, String> appIds = new LinkedHashMap<>();
    for (Target target : targets) {
      String other = tableOwners.putIfAbsent(target.bronze(), target.captureInstance());
      if (other != null) {
        throw new OptionRefusedException(
            "--tables: "
                + other
                + " and "
                + target.captureInstance()
                + " would both write the bronze table "
                + target.bronze()
                + ": give each table its own --target (or a --targetTemplate with {ci});"
                + " nothing was written");
      }
      other = appIds.putIfAbsent(target.appId(), target.captureInstance());
      if (other != null) {
        throw new OptionRefusedException(
            "--tables: "
                + other
                + " and "
                + target.captureInstance()
                + " would both write under the app id '"
                + target.appId()
                + "': give each table its own --appId (or an --appIdTemplate with {ci});"
                + " nothing was written");
      }
    }
    CaptureInstanceCheck.checkTables(
        targets.get(0).config().clientFactory(),
        targets.stream().map(Target::captureInstance).toList());
    Map<String, String> silvers = new LinkedHashMap<>();
    for (Target target : targets) {
      if (target.silver() == null) {
        continue;
      }
      String other = silvers.putIfAbsent(target.silver(), target.captureInstance());
      if (other == null && tableOwners.containsKey(target.silver())) {
        other = tableOwners.get(target.silver());
      }
      if (other != null) {
        throw new OptionRefusedException(
            "--tables: "
                + other
                + " and "
                + target.captureInstance()
                + " would both write the table "
                + target.silver()
                + ": give each table its own silver (a --silverTemplate with {ci}); nothing was"
                + " written");
      }
    }
    for (Target target : targets) {
      checkOne(target, out);
    }
    Target first = targets.get(0);
    first.tables().createIfAbsent(first.facts(), FactsTable.definition());
    first.tables().createIfAbsent(first.control(), ControlTable.definition());
  }

  /**
   * The checks of one table of many before anything of it is written: its declared columns against
   * the source, its configuration against its tables ({@link TablePlan#check}), its silver's keys.
   *
   * @throws IllegalArgumentException (an {@link OptionRefusedException} among them) naming what is
   *     refused
   */
  static void checkOne(Target target, PrintStream out) {
    Schema changeSchema = TablePlan.outputSchema(TablePlan.read(target.config()));
    TablePlan.check(target, changeSchema, out);
    SilverPlan.target(target, changeSchema, Instant.now());
  }

  /** Records a table that failed while being planned, at the position its tables hold, if any. */
  private static RecordedFailure recordEarlyFailure(
      Target target, TableFailure failure, PrintStream out) {
    DeltaTables tables = target.tables();
    StreamPosition position =
        new StreamPosition(target.appId(), 0, -1, Lsn.ZERO, null, target.captureInstance());
    try {
      if (target.exists()) {
        position = Recovery.resumePosition(target, out).orElse(position);
      }
    } catch (RuntimeException e) {
      // The position cannot be read: the failure is recorded without it.
    }
    tables.createIfAbsent(target.facts(), FactsTable.definition());
    RecordedFailure recorded =
        RecordedFailure.at(
            position, target.bronze(), failure, position.endLsn().increment(), Instant.now());
    recorded.write(tables, target.facts());
    out.printf("Stopped %s: %s%n", target.captureInstance(), recorded.text());
    return recorded;
  }

  /**
   * Prints the progress of the target's chunked snapshot, when it has one and runs chunked: {@code
   * Chunked snapshot of <ci> at S = <S>: chunks d/n, r rows, complete | open}.
   */
  static void printChunkedProgress(TablePlan plan, PrintStream out) {
    JobConfig config = plan.config();
    if (!config.snapshot().chunked()) {
      return;
    }
    ChunkedSnapshot.read(plan.target())
        .chunked()
        .ifPresent(
            state ->
                out.printf(
                    "Chunked snapshot of %s at S = %s: %s, %s%n",
                    config.captureInstance(),
                    state.open().s(),
                    ChunkedSnapshot.progress(state),
                    state.complete()
                        ? "complete"
                        : "open (run Backfill, or CdcToDelta with --backfill, to read the rest)"));
  }

  /** Writes the {@code nothing_new} facts row of a table whose position is at {@code max}. */
  private static void recordNothingNew(TablePlan plan, Lsn max) {
    Target target = plan.target();
    StreamPosition start = plan.start();
    target.appendFacts(
        List.of(
            FactsTable.row()
                .set(FactsTable.APP_ID, target.streamAppId())
                .set(FactsTable.ROWS, 0L)
                .set(FactsTable.EVENT, FactsTable.EVENT_NOTHING_NEW)
                .set(FactsTable.END_LSN, start.endLsn().toString())
                .set(FactsTable.END_COMMIT_TS, start.endCommitTime())
                .set(
                    FactsTable.DETAIL,
                    "max_lsn " + max + " is not after the position " + start.endLsn())
                .set(FactsTable.TARGET, target.bronze())
                .set(FactsTable.STARTED_AT, plan.startedAt())
                .set(FactsTable.WRITTEN_AT, Instant.now())
                .build()),
        null,
        0,
        Map.of());
  }

  /**
   * Per table, in the order planned (tables that failed while being planned last): the batches and
   * change rows the run committed and, apart, those it found already written (replays whose bronze
   * commit it skipped), from the pipeline's counters ({@link RunCounters}; from the facts rows,
   * {@link RunFacts}, when the counters lack batches the position says the run committed and none
   * was found already written), the snapshot's rows from its commit's record, the position and the
   * verdict from the tables' metadata, and the failure this run recorded, if any.
   */
  static List<TableOutcome> outcomes(
      Planned planned,
      Map<TablePlan, JobSummary> idle,
      @Nullable PipelineResult result,
      boolean isolate,
      PrintStream out,
      long streamBegan) {
    double streamSeconds = (System.nanoTime() - streamBegan) / 1e9;
    List<TableOutcome> outcomes = new ArrayList<>();
    for (TablePlan plan : planned.plans()) {
      printChunkedProgress(plan, out);
      SilverRun.catchUp(plan, result, isolate, out);
      HistoryPlan.catchUp(plan, result, isolate, out);
    }
    // The verdicts of all tables of one control table in one scan, not a scan per table.
    Map<String, Map<String, LocalDateTime>> verdicts = new HashMap<>();
    for (TablePlan plan : planned.plans()) {
      Target target = plan.target();
      JobConfig config = target.config();
      JobSummary summary = idle.get(plan);
      if (summary == null) {
        // A table recovered beside this run (a re-snapshot) is in a later generation now; one whose
        // re-snapshot the pipeline could not commit stays in its former one, not recovered again.
        Optional<StreamPosition> position =
            SnapshotBranches.refusedResnapshot(plan)
                ? Optional.empty()
                : Recovery.resumePosition(Resnapshot.resolveGeneration(target), out);
        long batches =
            isolate
                ? RunCounters.batches(result, config.streamAppId())
                : RunCounters.batches(result);
        Map<String, Long> rows =
            isolate
                ? RunCounters.rowsByOperation(result, config.streamAppId())
                : RunCounters.rowsByOperation(result);
        // Batches found already written (another run or attempt committed them): never counted
        // as this run's, never twice.
        long skipped =
            isolate
                ? RunCounters.skippedBatches(result, config.streamAppId())
                : RunCounters.skippedBatches(result);
        long skippedRows =
            isolate
                ? RunCounters.skippedRows(result, config.streamAppId())
                : RunCounters.skippedRows(result);
        StreamPosition start = plan.start();
        long committed =
            position
                .filter(p -> p.appId().equals(start.appId()))
                .map(p -> p.batchId() - start.batchId())
                .orElse(batches + skipped);
        if (batches + skipped != committed && skipped == 0) {
          // The counters lack batches the position says this run committed: on a cluster, the
          // counts of a task attempt whose worker died die with it, though its commits stand.
          // The facts rows are the record. Not when batches were found already written: then
          // another writer was at work and the facts rows after the start are not all this run's.
          RunFacts facts =
              RunFacts.after(
                  target.tables(), target.facts(), start.appId(), target.bronze(), start.batchId());
          batches = facts.batches();
          rows = facts.rowsByOperation();
        }
        summary =
            new JobSummary(
                batches,
                rows,
                plan.snapshotRows(),
                plan.snapshotSeconds(),
                position,
                Optional.ofNullable(
                    verdicts
                        .computeIfAbsent(
                            plan.finalization().controlPath(), c -> plan.finalization().verdicts())
                        .get(target.bronze())),
                streamSeconds,
                (System.nanoTime() - plan.began()) / 1e9,
                skipped,
                skippedRows,
                -1);
      }
      summary = summary.withFoundSnapshotRows(SnapshotBranches.foundWrittenRows(plan, result));
      Optional<RecordedFailure> failure =
          isolate
              ? RecordedFailure.last(target.tables(), target.facts(), target.streamAppId())
                  .filter(f -> f.runStartedAt().equals(plan.startedAt()))
              : Optional.empty();
      outcomes.add(new TableOutcome(config, summary, failure));
    }
    planned
        .failedEarly()
        .forEach(
            (config, failure) ->
                outcomes.add(
                    new TableOutcome(
                        config,
                        new JobSummary(
                            0,
                            Map.of(),
                            -1,
                            0,
                            Optional.empty(),
                            Optional.empty(),
                            0,
                            streamSeconds),
                        Optional.of(failure))));
    return outcomes;
  }
}
