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
 * <p>Stop: after {@code --runForSeconds}, or when the JVM is asked to exit (Ctrl-C, SIGTERM): the
 * source ends after the batch it is reading (or the bounded run in progress finishes), every batch
 * read is committed, and the JVM exits once the run has returned (at most one poll interval plus
 * the run's last batch). A signal reaches a source running in this JVM (the DirectRunner, Spark
 * {@code local}, Flink's embedded mini-cluster); a job submitted to a cluster is stopped with the
 * cluster's own command, and the Delta tables keep it exactly once whatever the stop.
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
    Stop stop = Stop.after(options.getRunForSeconds());
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
    try {
      done.accept(
          CdcToDeltaJob.runContinuously(
              config,
              options,
              out,
              beforeStream,
              new CdcToDeltaJob.Continuous(form(options), poll, stop)));
    } finally {
      finished.countDown();
      stop.forget();
      try {
        Runtime.getRuntime().removeShutdownHook(hook);
      } catch (IllegalStateException e) {
        // The JVM is exiting: the hook is running and now sees the run finished.
      }
    }
  }

  /**
   * The stop condition of one continuous run: a deadline, and a request made in this JVM (a signal,
   * or a test). Serializable: a copy runs in the source on the workers; in a worker of another JVM
   * only the deadline applies.
   *
   * @param runId the run's identity, naming its request flag in this JVM
   * @param deadlineMillis epoch milliseconds to stop at, or {@link Long#MAX_VALUE}
   */
  record Stop(String runId, long deadlineMillis) implements StopCondition {
    /** A new run's condition: stop after {@code seconds}, or never by time when 0. */
    static Stop after(long seconds) {
      Stop stop =
          new Stop(
              UUID.randomUUID().toString(),
              seconds == 0 ? Long.MAX_VALUE : System.currentTimeMillis() + seconds * 1000);
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
      return System.currentTimeMillis() >= deadlineMillis || (flag != null && flag.get());
    }
  }
}
