package org.lakecdc.pipelines;

import java.io.PrintStream;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.lakecdc.mssqlcdc.io.StopCondition;

/**
 * The {@code --continuous} mode of {@link CdcToDelta}: which form follows the source on the chosen
 * runner, when it stops, and a clean stop on Ctrl-C or SIGTERM.
 *
 * <p>Form: the source's continuous form ({@link CdcToDeltaJob.Continuous.Form#STREAM}) needs a
 * runner that runs an unbounded splittable DoFn in streaming; Beam's SparkRunner expands every
 * splittable DoFn into a naive bounded loop and its streaming translator handles only legacy
 * unbounded sources, so on Spark the job repeats bounded runs instead ({@link
 * CdcToDeltaJob.Continuous.Form#REPEAT}). {@code --repeatBoundedRuns} overrides the choice.
 *
 * <p>Stop: after following the source for {@code --runForSeconds} (counted from the end of the
 * bootstrap, or from the first bounded run), or when the JVM is asked to exit (Ctrl-C, SIGTERM):
 * the source ends after the batch it is reading (or the bounded run in progress finishes), every
 * batch read is committed, and the JVM exits once the run has returned (at most one poll interval
 * plus the run's last batch). A signal reaches a source running in this JVM (the DirectRunner,
 * Spark {@code local}, Flink's embedded mini-cluster); a job submitted to a cluster is stopped with
 * the cluster's own command, and the Delta tables keep it exactly once whatever the stop.
 */
final class ContinuousMode {
  private static final Map<String, AtomicBoolean> REQUESTED = new ConcurrentHashMap<>();

  private ContinuousMode() {}

  /**
   * Validates the continuous options.
   *
   * @throws IllegalArgumentException naming the option and what it accepts
   */
  static void validate(CdcToDeltaOptions o) {
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
  static CdcToDeltaJob.Continuous.Form form(CdcToDeltaOptions options) {
    boolean repeat =
        options.getRepeatBoundedRuns() != null
            ? options.getRepeatBoundedRuns()
            : options.getRunner().getSimpleName().equals("SparkRunner");
    return repeat ? CdcToDeltaJob.Continuous.Form.REPEAT : CdcToDeltaJob.Continuous.Form.STREAM;
  }

  /**
   * Runs the job continuously until {@code --runForSeconds} pass or the JVM is asked to exit, then
   * hands the summary to {@code done} (before an exiting JVM is let go).
   */
  static void run(
      CdcToDeltaJob.Config config,
      CdcToDeltaOptions options,
      PrintStream out,
      Runnable beforeStream,
      Consumer<CdcToDeltaJob.Summary> done) {
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
    try {
      done.accept(
          CdcToDeltaJob.runContinuously(
              config,
              options,
              out,
              beforeStream,
              new CdcToDeltaJob.Continuous(
                  form(options), poll, Duration.ofSeconds(options.getRunForSeconds()), stop)));
    } finally {
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
   * The stop request of one continuous run, made in this JVM (a signal, or a test); the time limit
   * is added by the job. Serializable: a copy runs in the source on the workers, where, in another
   * JVM, it never asks to stop.
   *
   * @param runId the run's identity, naming its request flag in this JVM
   */
  record Stop(String runId) implements StopCondition {
    /** A new run's request flag, not set. */
    static Stop create() {
      Stop stop = new Stop(UUID.randomUUID().toString());
      REQUESTED.put(stop.runId(), new AtomicBoolean());
      return stop;
    }

    /** Asks the run to stop (in this JVM). */
    void request() {
      AtomicBoolean flag = REQUESTED.get(runId);
      if (flag != null) {
        flag.set(true);
      }
    }

    void forget() {
      REQUESTED.remove(runId);
    }

    @Override
    public boolean shouldStop() {
      AtomicBoolean flag = REQUESTED.get(runId);
      return flag != null && flag.get();
    }
  }
}
