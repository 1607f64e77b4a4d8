package org.lakecdc.pipelines.cdc;

import java.io.PrintStream;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.options.PipelineOptions;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.io.mssqlcdc.client.DataLossError;
import org.lakecdc.io.mssqlcdc.read.DataLossPolicy;
import org.lakecdc.io.mssqlcdc.read.StopCondition;
import org.lakecdc.pipelines.cli.JobExit;
import org.lakecdc.pipelines.targets.ChunkBackfill;
import org.lakecdc.pipelines.targets.ChunkReadPool;
import org.lakecdc.pipelines.targets.JobConfig;
import org.lakecdc.pipelines.targets.TablePlan;
import org.lakecdc.pipelines.targets.TargetIdentity;
import org.lakecdc.pipelines.targets.WaveProgress;
import org.lakecdc.transforms.Counts;
import org.lakecdc.transforms.bronze.RecordedFailure;
import org.lakecdc.transforms.bronze.TableWrite;
import org.lakecdc.transforms.bronze.WriteChangeStreamToDelta;
import org.lakecdc.transforms.silver.DerivedTarget;

/**
 * The job's continuous runs: follows the source until asked to stop, then returns with everything
 * read committed. {@link Continuous.Form#STREAM} runs one pipeline with the continuous form of the
 * source ({@code MssqlCdcIO.read().withContinuous(true)}, or {@code readAll()} of many tables) and
 * commits each batch as it arrives ({@link WriteChangeStreamToDelta}): for runners that run an
 * unbounded splittable DoFn (Direct, Flink). {@link Continuous.Form#REPEAT} repeats bounded runs
 * ({@link CdcToDeltaJob#run}), each a complete exactly-once unit, every poll interval: for the
 * SparkRunner, whose streaming mode cannot run an unbounded splittable DoFn. In both forms an idle
 * poll writes nothing (no {@code nothing_new} facts row), and idle entries of {@code
 * cdc.lsn_time_mapping} still end batches that move the position and the verdict. With many tables
 * a failed table stops alone: the stream goes on without it, and repeated runs leave it out.
 */
final class ContinuousRunner {
  private ContinuousRunner() {}

  /**
   * Follows one table; any failure fails the run.
   *
   * @return what the run did
   */
  static JobSummary run(
      JobConfig config,
      PipelineOptions beamOptions,
      PrintStream out,
      Runnable beforeStream,
      Continuous continuous) {
    return runAll(List.of(config), false, beamOptions, out, beforeStream, continuous)
        .get(0)
        .summary();
  }

  /**
   * Follows the tables of {@code configs} ({@code isolate}: many tables, a table's own failure
   * stops it alone) until {@code continuous.stop()} holds or the time limit passes.
   *
   * @return per table what the runs did together, in the order of {@code configs}
   */
  static List<CdcToDeltaJob.TableOutcome> runAll(
      List<JobConfig> configs,
      boolean isolate,
      PipelineOptions beamOptions,
      PrintStream out,
      Runnable beforeStream,
      Continuous continuous) {
    return runAll(configs, isolate, beamOptions, out, beforeStream, continuous, null);
  }

  /**
   * {@link #runAll(List, boolean, PipelineOptions, PrintStream, Runnable, Continuous)}, following
   * {@code listing} too (many tables): a table added to it joins the run, a table removed from it
   * leaves it ({@link ListingWatch}). Streaming: every poll interval the listing is read again; a
   * table that joins is planned (its bootstrap snapshot taken, when new) and followed in a pipeline
   * of its own beside the running one, until the same stop; a table that leaves has its read
   * stopped after the batch it is reading (its own stop condition, asked where the source asks the
   * run's). Repeated bounded runs: each run after the first reads the listing again.
   *
   * @param listing the tables' listing, or null (the tables of {@code configs} only)
   * @return per table what the runs did together: the tables of {@code configs} in their order,
   *     then the tables that joined, in the order they joined
   */
  static List<CdcToDeltaJob.TableOutcome> runAll(
      List<JobConfig> configs,
      boolean isolate,
      PipelineOptions beamOptions,
      PrintStream out,
      Runnable beforeStream,
      Continuous continuous,
      @Nullable TableListing listing) {
    ListingWatch watch = listing == null ? null : new ListingWatch(listing, configs, out);
    try {
      if (continuous.form() == Continuous.Form.REPEAT) {
        return repeatBoundedRuns(
            configs, isolate, beamOptions, out, beforeStream, continuous, watch);
      }
      // The new targets' whole snapshots are read in the pipeline: the launcher only records S.
      CdcToDeltaJob.Planned planned =
          CdcToDeltaJob.plan(configs, isolate, beamOptions, out, beforeStream, true);
      return follow(planned, configs, isolate, beamOptions, out, continuous, watch, false);
    } finally {
      if (watch != null) {
        watch.forget();
      }
    }
  }

  /**
   * Follows the tables of {@code planned}: the streaming form of {@link #runAll}. A table planned
   * with a snapshot the pipeline reads ({@link TablePlan#snapshot}) is followed from S in a branch
   * of its own once its snapshot is committed ({@link SnapshotBranches}).
   *
   * @param beside a table followed beside the run (joined, or recovered): it stops at the run's
   *     stop, and the run prints the one {@code Stopped} line
   */
  private static List<CdcToDeltaJob.TableOutcome> follow(
      CdcToDeltaJob.Planned planned,
      List<JobConfig> configs,
      boolean isolate,
      PipelineOptions beamOptions,
      PrintStream out,
      Continuous continuous,
      @Nullable ListingWatch watch,
      boolean beside) {
    long streamBegan = System.nanoTime();
    // The time limit counts from here, after the bootstrap: the source follows for runFor.
    StopCondition stop = stopFromNow(continuous);
    PipelineResult result = null;
    if (!planned.plans().isEmpty()) {
      Pipeline pipeline = Pipeline.create(beamOptions);
      List<TableWrite> writes = new ArrayList<>();
      List<DerivedTarget> silvers = new ArrayList<>();
      List<ChunkBackfill> backfills = new ArrayList<>();
      List<SnapshotBranches.Branch> snapshots = new ArrayList<>();
      for (TablePlan plan : planned.plans()) {
        silvers.addAll(CdcToDeltaJob.derived(plan));
        if (plan.backfill() != null) {
          backfills.add(plan.backfill());
        }
        TableWrite write =
            plan.write(
                plan.read()
                    .withContinuous(true)
                    .withPollInterval(
                        org.joda.time.Duration.millis(continuous.pollInterval().toMillis()))
                    .withStopCondition(
                        watch == null
                            ? stop
                            : stop.or(watch.stopOf(plan.config().captureInstance()))));
        if (plan.snapshot() != null) {
          snapshots.add(SnapshotBranches.Branch.following(plan, write));
        } else {
          writes.add(write);
        }
        out.printf(
            "Following %s after %s (%s)%s, polling every %s s when caught up, %s%n",
            plan.config().captureInstance(),
            plan.start().endLsn(),
            TargetIdentity.batchText(plan.start().batchId()),
            plan.snapshot() != null ? " once its snapshot is committed" : "",
            seconds(continuous),
            beside
                ? "until the run stops"
                : continuous.runFor().isZero()
                    ? "until stopped"
                    : "for " + continuous.runFor().toSeconds() + " s or until stopped");
      }
      ChunkReadPool.fit(beamOptions, backfills, writes.size() + snapshots.size());
      CdcToDeltaJob.expand(pipeline, writes, silvers, backfills, snapshots, isolate, true, stop);
      Instant runBegan = Instant.now();
      Recoverer recoverer =
          isolate ? new Recoverer(planned, beamOptions, out, continuous, stop) : null;
      Joiner joiner = watch == null ? null : new Joiner(watch, beamOptions, out, continuous, stop);
      try (WaveProgress progress = WaveProgress.follow(backfills, out)) {
        // The chunked snapshots' wave lines, on this console as the facts table records them.
        result = CdcToDeltaJob.runRecoverable(pipeline, configs, isolate, snapshots);
      } catch (CdcToDeltaJob.StreamMetDataLoss e) {
        // One table alone: planned again, its pre-flight re-snapshots it, and it follows on.
        out.printf(
            "%s: CDC cleanup passed the stream (%s); recovering with --onDataLoss=resnapshot%n",
            configs.get(0).captureInstance(), e.getMessage());
        return runAll(
            configs,
            false,
            beamOptions,
            out,
            () -> {},
            new Continuous(Continuous.Form.STREAM, continuous.pollInterval(), Duration.ZERO, stop));
      } finally {
        if (joiner != null) {
          joiner.close();
        }
        if (recoverer != null) {
          recoverer.close();
        }
      }
      if (!beside) {
        out.println("Stopped: every batch read was committed");
      }
      planned = reportSnapshots(planned, runBegan, result, out);
      List<CdcToDeltaJob.TableOutcome> outcomes =
          CdcToDeltaJob.outcomes(planned, Map.of(), result, isolate, out, streamBegan);
      if (recoverer != null) {
        outcomes = recoverer.merge(outcomes);
      }
      return joiner == null ? outcomes : joiner.append(outcomes);
    }
    return CdcToDeltaJob.outcomes(planned, Map.of(), result, isolate, out, streamBegan);
  }

  /**
   * Reads the run's listing again every poll interval while the pipeline of many tables runs
   * ({@link ListingWatch}): each table that joins is planned (its snapshot taken, when new) and
   * followed in a pipeline of its own until the run's stop or its own (its line removed), beside
   * the running one; a table of the running pipeline that leaves stops there by its own stop
   * condition. A table whose planning is refused is printed in one line and left out; the others go
   * on. {@link #close} waits for the joined tables' pipelines; {@link #append} adds what they did.
   */
  private static final class Joiner implements AutoCloseable {
    private final ListingWatch watch;
    private final List<Thread> running = new java.util.concurrent.CopyOnWriteArrayList<>();
    private final Map<String, List<CdcToDeltaJob.TableOutcome>> joined =
        java.util.Collections.synchronizedMap(new LinkedHashMap<>());
    private final Thread watcher;
    private volatile boolean closed;

    Joiner(
        ListingWatch watch,
        PipelineOptions beamOptions,
        PrintStream out,
        Continuous continuous,
        StopCondition stop) {
      this.watch = watch;
      watcher =
          new Thread(
              () -> {
                StopCondition closing = () -> closed;
                while (!waitOrStop(continuous.pollInterval(), stop.or(closing))) {
                  for (ListingWatch.Joining j : watch.poll().joined()) {
                    String ci = j.config().captureInstance();
                    joined.put(ci, List.of());
                    Thread t =
                        new Thread(
                            () -> join(j, beamOptions, out, continuous, stop),
                            "lakecdc-join-" + ci);
                    running.add(t);
                    t.start();
                  }
                }
              },
              "lakecdc-listing");
      watcher.setDaemon(true);
      watcher.start();
    }

    private void join(
        ListingWatch.Joining j,
        PipelineOptions beamOptions,
        PrintStream out,
        Continuous continuous,
        StopCondition stop) {
      String ci = j.config().captureInstance();
      try {
        // Its snapshot, when new, is read by the joined table's own pipeline, not here.
        CdcToDeltaJob.Planned planned =
            CdcToDeltaJob.plan(List.of(j.config()), true, beamOptions, out, () -> {}, true);
        joined.put(
            ci,
            follow(
                planned,
                List.of(j.config()),
                true,
                beamOptions,
                out,
                new Continuous(
                    Continuous.Form.STREAM,
                    continuous.pollInterval(),
                    Duration.ZERO,
                    stop.or(watch.stopOf(ci))),
                null,
                true));
      } catch (Throwable t) {
        out.printf("%s (%s): %s%s%n", j.origin(), ci, JobExit.describe(t), ListingWatch.IGNORED);
      }
    }

    /**
     * Stops reading the listing and waits for the joined tables' pipelines (they end at the stop).
     */
    @Override
    public void close() {
      closed = true;
      try {
        // Not interrupted: it may be writing a facts row.
        watcher.join();
        for (Thread t : running) {
          t.join();
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }

    /** {@code outcomes} followed by the outcomes of the tables that joined, in the order joined. */
    List<CdcToDeltaJob.TableOutcome> append(List<CdcToDeltaJob.TableOutcome> outcomes) {
      List<CdcToDeltaJob.TableOutcome> all = new ArrayList<>(outcomes);
      synchronized (joined) {
        joined.values().forEach(all::addAll);
      }
      return all;
    }
  }

  /**
   * Recovers, while the pipeline of many tables runs, each table whose read met data loss and that
   * re-snapshots ({@code --onDataLoss=resnapshot}): its read stopped alone with a {@code
   * table_failed} row, the others go on; a watcher sees that row (the failure's domain in the facts
   * table, once per poll interval), plans the table again (its pre-flight takes the re-snapshot
   * into the next generation) and follows it in a pipeline of its own until the same stop, beside
   * the running one. {@link #close} waits for those pipelines; {@link #merge} adds what they did to
   * the tables' outcomes.
   */
  private static final class Recoverer implements AutoCloseable {
    private final Map<String, TablePlan> watched = new LinkedHashMap<>();
    private final Map<String, Thread> running = new java.util.concurrent.ConcurrentHashMap<>();
    private final Map<String, List<CdcToDeltaJob.TableOutcome>> recovered =
        new java.util.concurrent.ConcurrentHashMap<>();
    private final Map<String, Throwable> failures = new java.util.concurrent.ConcurrentHashMap<>();
    private final StopCondition stop;
    private final Thread watcher;
    private volatile boolean closed;

    Recoverer(
        CdcToDeltaJob.Planned planned,
        PipelineOptions beamOptions,
        PrintStream out,
        Continuous continuous,
        StopCondition stop) {
      this.stop = stop;
      for (TablePlan plan : planned.plans()) {
        if (plan.config().onDataLoss() == DataLossPolicy.RESNAPSHOT) {
          watched.put(plan.config().captureInstance(), plan);
        }
      }
      long every = Math.max(1000, continuous.pollInterval().toMillis());
      watcher =
          new Thread(
              () -> {
                while (!closed && !stop.shouldStop()) {
                  for (TablePlan plan : watched.values()) {
                    String ci = plan.config().captureInstance();
                    if (!running.containsKey(ci) && metDataLoss(plan)) {
                      Thread t =
                          new Thread(
                              () -> follow(plan, beamOptions, out, continuous), "recover-" + ci);
                      running.put(ci, t);
                      t.start();
                    }
                  }
                  sleep(every);
                }
              },
              "lakecdc-recoverer");
      watcher.setDaemon(true);
      if (!watched.isEmpty()) {
        watcher.start();
      }
    }

    /** Whether the table's read stopped in this run because it met data loss. */
    private static boolean metDataLoss(TablePlan plan) {
      JobConfig config = plan.config();
      return RecordedFailure.last(plan.tables(), plan.target().facts(), plan.target().streamAppId())
          .filter(f -> f.runStartedAt().equals(plan.startedAt()))
          .filter(f -> f.errorClass().equals(DataLossError.class.getSimpleName()))
          .isPresent();
    }

    private void follow(
        TablePlan plan, PipelineOptions beamOptions, PrintStream out, Continuous continuous) {
      String ci = plan.config().captureInstance();
      out.printf(
          "%s: CDC cleanup passed the stream; recovering with --onDataLoss=resnapshot while the"
              + " other tables go on%n",
          ci);
      try {
        recovered.put(
            ci,
            ContinuousRunner.follow(
                CdcToDeltaJob.plan(List.of(plan.config()), true, beamOptions, out, () -> {}, true),
                List.of(plan.config()),
                true,
                beamOptions,
                out,
                new Continuous(
                    Continuous.Form.STREAM, continuous.pollInterval(), Duration.ZERO, stop),
                null,
                true));
      } catch (Throwable t) {
        failures.put(ci, t);
        out.printf("%s: the recovery failed: %s%n", ci, JobExit.describe(t));
      }
    }

    /** Stops watching and waits for the recovered tables' pipelines (they end at the stop). */
    @Override
    public void close() {
      closed = true;
      watcher.interrupt();
      for (Thread t : running.values()) {
        try {
          t.join();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return;
        }
      }
    }

    /** {@code outcomes} with what each recovered table's own run did added to its outcome. */
    List<CdcToDeltaJob.TableOutcome> merge(List<CdcToDeltaJob.TableOutcome> outcomes) {
      List<CdcToDeltaJob.TableOutcome> merged = new ArrayList<>();
      for (CdcToDeltaJob.TableOutcome outcome : outcomes) {
        List<CdcToDeltaJob.TableOutcome> again = recovered.get(outcome.config().captureInstance());
        if (again == null || again.isEmpty()) {
          merged.add(outcome);
          continue;
        }
        CdcToDeltaJob.TableOutcome second = again.get(0);
        merged.add(
            new CdcToDeltaJob.TableOutcome(
                second.config(), outcome.summary().plus(second.summary()), second.failure()));
      }
      return merged;
    }

    private static void sleep(long millis) {
      try {
        Thread.sleep(millis);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  private static List<CdcToDeltaJob.TableOutcome> repeatBoundedRuns(
      List<JobConfig> configs,
      boolean isolate,
      PipelineOptions beamOptions,
      PrintStream out,
      Runnable beforeStream,
      Continuous continuous,
      @Nullable ListingWatch watch) {
    long began = System.nanoTime();
    StopCondition stop = stopFromNow(continuous);
    Map<JobConfig, CdcToDeltaJob.TableOutcome> total = new LinkedHashMap<>();
    List<JobConfig> running = new ArrayList<>(configs);
    List<JobConfig> known = new ArrayList<>(configs);
    Runnable first = beforeStream;
    for (int runs = 1; ; runs++) {
      if (watch != null && runs > 1) {
        // The listing read again: the tables added join this run, the tables removed leave.
        ListingWatch.Changes changes = watch.poll();
        running.removeIf(c -> changes.left().contains(c.captureInstance()));
        for (ListingWatch.Joining j : changes.joined()) {
          running.add(j.config());
          known.add(j.config());
        }
        if (running.isEmpty()) {
          out.println("Every table left the run");
          return totals(total, began, out, runs - 1);
        }
      }
      out.printf("Bounded run %d (repeated every %s s until stopped)%n", runs, seconds(continuous));
      // An idle poll writes nothing (no nothing_new row every poll interval).
      List<CdcToDeltaJob.TableOutcome> these =
          CdcToDeltaJob.bounded(running, isolate, beamOptions, out, first, false);
      first = () -> {};
      for (CdcToDeltaJob.TableOutcome one : these) {
        JobConfig key = configOf(known, one.config());
        CdcToDeltaJob.TableOutcome before = total.get(key);
        total.put(
            key,
            before == null
                ? one
                : new CdcToDeltaJob.TableOutcome(
                    one.config(),
                    before.summary().plus(one.summary()),
                    one.failure().isPresent() ? one.failure() : before.failure()));
        if (one.failed()) {
          // A table that failed is left out of the later runs: it stopped alone.
          running.remove(key);
        }
      }
      if (running.isEmpty() || waitOrStop(continuous.pollInterval(), stop)) {
        return totals(total, began, out, runs);
      }
    }
  }

  /** The outcomes of repeated bounded runs, each table's over all the runs, after the last line. */
  private static List<CdcToDeltaJob.TableOutcome> totals(
      Map<JobConfig, CdcToDeltaJob.TableOutcome> total, long began, PrintStream out, int runs) {
    out.printf("Stopped after %s%n", Counts.of(runs, "bounded run", "bounded runs"));
    List<CdcToDeltaJob.TableOutcome> outcomes = new ArrayList<>();
    for (CdcToDeltaJob.TableOutcome each : total.values()) {
      // Every count of the runs kept (those found already written too), the seconds of them all.
      outcomes.add(
          new CdcToDeltaJob.TableOutcome(
              each.config(),
              each.summary().withSeconds((System.nanoTime() - began) / 1e9),
              each.failure()));
    }
    return outcomes;
  }

  /**
   * The configuration of {@code configs} that {@code run} came from: the same capture instance (a
   * run may continue a target under its recorded app id, a changed configuration).
   */
  private static JobConfig configOf(List<JobConfig> configs, JobConfig run) {
    for (JobConfig config : configs) {
      if (config.captureInstance().equals(run.captureInstance())) {
        return config;
      }
    }
    return run;
  }

  /** {@code continuous}'s stop request, or its time limit counted from now when it has one. */
  /**
   * After a continuous run whose pipeline read new targets' snapshots: each printed from its
   * committed record ({@link SnapshotBranches#report}), in the tables' order.
   *
   * @return the plans, those with a committed snapshot carrying its rows and seconds
   */
  private static CdcToDeltaJob.Planned reportSnapshots(
      CdcToDeltaJob.Planned planned,
      Instant runBegan,
      @Nullable PipelineResult result,
      PrintStream out) {
    List<TablePlan> plans = new ArrayList<>();
    for (TablePlan plan : planned.plans()) {
      plans.add(
          plan.snapshot() == null ? plan : SnapshotBranches.report(plan, runBegan, result, out));
    }
    return new CdcToDeltaJob.Planned(plans, planned.failedEarly());
  }

  private static StopCondition stopFromNow(Continuous continuous) {
    StopCondition stop = continuous.stop();
    if (!continuous.runFor().isZero()) {
      stop = stop.or(StopCondition.at(System.currentTimeMillis() + continuous.runFor().toMillis()));
    }
    return stop;
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
}
