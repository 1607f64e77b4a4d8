package org.lakecdc.pipelines.cdc;

import java.io.PrintStream;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.apache.beam.sdk.options.PipelineOptions;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.io.mssqlcdc.read.StopCondition;
import org.lakecdc.pipelines.cli.JobExit;
import org.lakecdc.pipelines.options.CdcToDeltaOptions;
import org.lakecdc.pipelines.targets.JobConfig;
import org.lakecdc.pipelines.targets.Target;
import org.lakecdc.pipelines.targets.TargetIdentity;
import org.lakecdc.transforms.Counts;
import org.lakecdc.transforms.position.StreamPosition;

/**
 * The {@code --continuous} mode of {@code CdcToDelta}: which form follows the source on the chosen
 * runner, when it stops, and a clean stop on Ctrl-C or SIGTERM.
 *
 * <p>Form: the source's continuous form ({@link Continuous.Form#STREAM}) needs a runner that runs
 * an unbounded splittable DoFn in streaming; Beam's SparkRunner expands every splittable DoFn into
 * a naive bounded loop and its streaming translator handles only legacy unbounded sources, so on
 * Spark the job repeats bounded runs instead ({@link Continuous.Form#REPEAT}). {@code
 * --repeatBoundedRuns} overrides the choice.
 *
 * <p>Stop: after following the source for {@code --runForSeconds} (counted from the end of the
 * bootstrap, or from the first bounded run), or when the JVM is asked to exit (Ctrl-C, SIGTERM):
 * the source ends after the batch it is reading (or the bounded run in progress finishes), every
 * batch read is committed, and the JVM exits once the run has returned (at most one poll interval
 * plus the run's last batch). A signal reaches a source running in this JVM (the DirectRunner,
 * Spark {@code local}, Flink's embedded mini-cluster); a job submitted to a cluster is stopped with
 * the cluster's own command, and the Delta tables keep it exactly once whatever the stop.
 */
public final class ContinuousMode {
  private static final Map<String, AtomicBoolean> REQUESTED = new ConcurrentHashMap<>();

  private ContinuousMode() {}

  /**
   * Validates the continuous options.
   *
   * @throws IllegalArgumentException naming the option and what it accepts
   */
  public static void validate(CdcToDeltaOptions o) {
    if (o.getPollIntervalSeconds() < 1) {
      throw new IllegalArgumentException(
          "--pollIntervalSeconds must be a positive integer, not '"
              + o.getPollIntervalSeconds()
              + "'");
    }
    if (o.getRunForSeconds() < 0) {
      throw new IllegalArgumentException(
          "--runForSeconds must be 0 (run until stopped) or a positive integer, not '"
              + o.getRunForSeconds()
              + "'");
    }
    if (o.getRunForSeconds() > 0 && !o.getContinuous()) {
      throw new IllegalArgumentException(
          "--runForSeconds limits a continuous run: pass --continuous=true with it (a run without"
              + " --continuous ends by itself once it has read up to max_lsn)");
    }
  }

  /** The form for the runner of {@code options}: see the class comment. */
  static Continuous.Form form(CdcToDeltaOptions options) {
    boolean repeat =
        options.getRepeatBoundedRuns() != null
            ? options.getRepeatBoundedRuns()
            : options.getRunner().getSimpleName().equals("SparkRunner");
    return repeat ? Continuous.Form.REPEAT : Continuous.Form.STREAM;
  }

  /**
   * Runs the job continuously until {@code --runForSeconds} pass or the JVM is asked to exit, then
   * hands the summary to {@code done} (before an exiting JVM is let go).
   */
  public static void run(
      JobConfig config,
      CdcToDeltaOptions options,
      PrintStream out,
      Runnable beforeStream,
      Consumer<JobSummary> done) {
    follow(
        () ->
            positionText(Target.of(config))
                .map(p -> new WaitingNotice.Waiting(config.captureInstance(), p)),
        options,
        out,
        continuous ->
            done.accept(
                CdcToDeltaJob.runContinuously(config, options, out, beforeStream, continuous)));
  }

  /**
   * Runs many tables continuously ({@link CdcToDeltaJob#runAllContinuously}) until {@code
   * --runForSeconds} pass or the JVM is asked to exit, then hands the outcomes to {@code done}.
   */
  public static void runAll(
      List<JobConfig> configs,
      CdcToDeltaOptions options,
      PrintStream out,
      Runnable beforeStream,
      Consumer<List<CdcToDeltaJob.TableOutcome>> done) {
    runAll(configs, null, options, out, beforeStream, done);
  }

  /**
   * {@link #runAll(List, CdcToDeltaOptions, PrintStream, Runnable, Consumer)} following {@code
   * listing} too, when given ({@link CdcToDeltaJob#runAllContinuously(List, PipelineOptions,
   * PrintStream, Runnable, Continuous, TableListing)}): tables added to it join the run, tables
   * removed from it leave.
   *
   * @param listing where the tables are listed ({@code --tablesFile}), or null
   */
  public static void runAll(
      List<JobConfig> configs,
      @Nullable TableListing listing,
      CdcToDeltaOptions options,
      PrintStream out,
      Runnable beforeStream,
      Consumer<List<CdcToDeltaJob.TableOutcome>> done) {
    follow(
        waitingFor(configs, listing),
        options,
        out,
        continuous ->
            done.accept(
                listing == null
                    ? CdcToDeltaJob.runAllContinuously(
                        configs, options, out, beforeStream, continuous)
                    : CdcToDeltaJob.runAllContinuously(
                        configs, options, out, beforeStream, continuous, listing)));
  }

  /**
   * What the waiting notice of a run of many tables names at each check: the tables the run follows
   * then (with {@code listing}, those of its {@link ListingWatch}: a table added to the listing
   * while running is named once it joined, a table removed is no longer named; before the watch
   * starts, the tables of {@code configs}), and each one's position; empty while a table has no
   * position yet (its bootstrap snapshot is being taken) or no table is followed.
   *
   * @param listing where the tables are listed ({@code --tablesFile}), or null
   */
  static Supplier<Optional<WaitingNotice.Waiting>> waitingFor(
      List<JobConfig> configs, @Nullable TableListing listing) {
    return () -> {
      List<Target> running = listing == null ? null : ListingWatch.running(listing).orElse(null);
      if (running == null) {
        running = configs.stream().map(Target::of).toList();
      }
      if (running.isEmpty()) {
        return Optional.empty();
      }
      List<String> positions = new java.util.ArrayList<>();
      for (Target target : running) {
        Optional<String> p = positionText(target);
        if (p.isEmpty()) {
          return Optional.empty();
        }
        positions.add(target.captureInstance() + " " + p.get());
      }
      return Optional.of(
          new WaitingNotice.Waiting(
              Counts.of(running.size(), "table", "tables"), String.join(", ", positions)));
    };
  }

  /**
   * Follows the source with {@code body} until {@code --runForSeconds} pass or the JVM is asked to
   * exit: the stop request, the shutdown hook that waits for a clean stop, and the waiting notice
   * (what it names and the positions from {@code waiting}).
   */
  private static void follow(
      Supplier<Optional<WaitingNotice.Waiting>> waiting,
      CdcToDeltaOptions options,
      PrintStream out,
      Consumer<Continuous> body) {
    Stop stop = Stop.create();
    CountDownLatch finished = new CountDownLatch(1);
    Duration poll = Duration.ofSeconds(options.getPollIntervalSeconds());
    Thread hook =
        new Thread(
            () -> {
              out.println("Stopping: committing what was read, then exiting");
              stop.request();
              try {
                finished.await(poll.toSeconds() + 120, TimeUnit.SECONDS);
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            },
            "lakecdc-stop");
    Runtime.getRuntime().addShutdownHook(hook);
    // A signal's shutdown waits for the clean stop (the hook's bound) before JobExit halts the JVM.
    JobExit.allowForStop(poll.plusSeconds(120));
    ScheduledExecutorService notices =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "lakecdc-waiting-notice");
              t.setDaemon(true);
              return t;
            });
    WaitingNotice notice = new WaitingNotice(poll, waiting, out);
    notices.scheduleAtFixedRate(
        notice::check, 0, WaitingNotice.EVERY.toSeconds(), TimeUnit.SECONDS);
    try {
      body.accept(
          new Continuous(
              form(options), poll, Duration.ofSeconds(options.getRunForSeconds()), stop));
    } finally {
      notices.shutdownNow();
      finished.countDown();
      JobExit.allowForStop(Duration.ZERO);
      stop.forget();
      try {
        Runtime.getRuntime().removeShutdownHook(hook);
      } catch (IllegalStateException e) {
        // The JVM is exiting: the hook is running and now sees the run finished.
      }
    }
  }

  /**
   * The target's position as text ({@code 0x... (batch 3)}): the later of bronze's and the facts
   * table's, read from their domain metadata (no table is scanned); empty before the first.
   */
  static Optional<String> positionText(Target target) {
    Optional<StreamPosition> bronze = target.bronzePosition();
    // The shared facts table's position only when it is this bronze table's own.
    Optional<StreamPosition> facts = TargetIdentity.ownFactsPosition(target);
    Optional<StreamPosition> later =
        bronze.isEmpty()
                || (facts.isPresent() && facts.get().endLsn().isAfter(bronze.get().endLsn()))
            ? facts
            : bronze;
    return later.map(p -> p.endLsn() + " (" + TargetIdentity.batchText(p.batchId()) + ")");
  }

  /**
   * Says that a continuous run is waiting for changes when its target's position did not move
   * between two checks {@link #EVERY} apart: at most one line a minute, none while batches arrive,
   * none before the target has a position (the bootstrap snapshot is still being taken). Of many
   * tables, the line names the tables followed at the check, and none comes at a check where they
   * differ from the last check's (a table joined or left: the positions are not comparable).
   */
  static final class WaitingNotice {
    /** The interval between two checks. */
    static final Duration EVERY = Duration.ofMinutes(1);

    /**
     * What one check found.
     *
     * @param subject what the line names: a capture instance, or {@code N tables}
     * @param position the position(s), as text
     */
    record Waiting(String subject, String position) {}

    private final Duration poll;
    private final Supplier<Optional<Waiting>> waiting;
    private final PrintStream out;
    private Optional<Waiting> last = Optional.empty();

    /**
     * @param poll the source's poll interval, named in the line
     * @param waiting what is followed now and its position (empty before the first position)
     * @param out where the line goes
     */
    WaitingNotice(Duration poll, Supplier<Optional<Waiting>> waiting, PrintStream out) {
      this.poll = poll;
      this.waiting = waiting;
      this.out = out;
    }

    /** Reads the position; prints the line when it equals the one read at the last check. */
    synchronized void check() {
      Optional<Waiting> now;
      try {
        now = waiting.get();
      } catch (RuntimeException e) {
        // The table could not be read this time (being created, a slow store): check again later.
        return;
      }
      if (now.isPresent() && now.equals(last)) {
        out.printf(
            "Waiting for changes to %s: no batch committed in the last minute; position %s;"
                + " polling every %s s%n",
            now.get().subject(), now.get().position(), poll.toSeconds());
      }
      last = now;
    }
  }

  /**
   * The stop request of one continuous run, made in this JVM (a signal, or a test); the time limit
   * is added by the job. Serializable: a copy runs in the source on the workers, where, in another
   * JVM, it never asks to stop.
   *
   * @param runId the run's identity, naming its request flag in this JVM
   */
  public record Stop(String runId) implements StopCondition {
    /** A new run's request flag, not set. */
    public static Stop create() {
      Stop stop = new Stop(UUID.randomUUID().toString());
      REQUESTED.put(stop.runId(), new AtomicBoolean());
      return stop;
    }

    /** Asks the run to stop (in this JVM). */
    public void request() {
      AtomicBoolean flag = REQUESTED.get(runId);
      if (flag != null) {
        flag.set(true);
      }
    }

    public void forget() {
      REQUESTED.remove(runId);
    }

    @Override
    public boolean shouldStop() {
      AtomicBoolean flag = REQUESTED.get(runId);
      return flag != null && flag.get();
    }
  }
}
