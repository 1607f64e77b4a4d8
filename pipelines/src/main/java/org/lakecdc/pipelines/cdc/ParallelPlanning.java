package org.lakecdc.pipelines.cdc;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * Plans the tables of a run of many tables on a few launcher threads at once, printing each table's
 * lines as if it had been planned alone: a table's lines go to its own buffer and are printed, in
 * the order of the tables, as soon as that table and every table before it are planned. So the
 * output is the same lines in the same order as planning one table after another, only sooner.
 *
 * <p>Planning a table is mostly waiting on its own tables' logs and the source, so a bounded pool
 * ({@link #threads}) overlaps that waiting without more than a few tables' work in memory at once.
 */
final class ParallelPlanning {
  /** The most tables planned at once. */
  static final int MAX_THREADS = 4;

  private ParallelPlanning() {}

  /** What planning one item gave: its result or the failure that stops the run, and its lines. */
  record Outcome<T>(T result, RuntimeException failure, String printed) {}

  /** Plans one item, printing to the stream it is given; may throw unchecked. */
  interface PlanStep<I, T> {
    T plan(I item, PrintStream out);
  }

  /**
   * Threads for {@code tables} tables: one per table, at most {@link #MAX_THREADS} and at most
   * twice the processors.
   */
  static int threads(int tables) {
    return Math.max(
        1, Math.min(tables, Math.min(MAX_THREADS, 2 * Runtime.getRuntime().availableProcessors())));
  }

  /**
   * Runs {@code plan} on each item on at most {@code threads} threads, each call printing to its
   * own stream, and prints every item's lines to {@code out} in the items' order (an item's lines
   * as soon as it and every item before it are done). A failure stops the run as it would one item
   * after another: items after it are not started (those already running finish first), and it is
   * the last outcome returned.
   *
   * @param items the items, in the order their lines are printed
   * @param threads the most items planned at once; 1 plans on the calling thread, in order
   * @param plan plans one item
   * @param out where the lines are printed
   * @return the outcomes in order, up to and including the first failure
   */
  static <I, T> List<Outcome<T>> run(
      List<I> items, int threads, PlanStep<I, T> plan, PrintStream out) {
    List<Outcome<T>> outcomes = new ArrayList<>(items.size());
    if (threads <= 1 || items.size() <= 1) {
      for (I item : items) {
        Outcome<T> outcome = call(item, plan, out, () -> "");
        outcomes.add(outcome);
        if (outcome.failure() != null) {
          break;
        }
      }
      return outcomes;
    }
    AtomicInteger named = new AtomicInteger();
    ExecutorService pool =
        Executors.newFixedThreadPool(
            threads,
            r -> {
              Thread t = new Thread(r, "lakecdc-plan-" + named.incrementAndGet());
              t.setDaemon(true);
              return t;
            });
    List<Future<Outcome<T>>> futures = new ArrayList<>(items.size());
    try {
      for (I item : items) {
        futures.add(
            pool.submit(
                () -> {
                  ByteArrayOutputStream buffer = new ByteArrayOutputStream();
                  PrintStream own = new PrintStream(buffer, true, StandardCharsets.UTF_8);
                  return call(item, plan, own, () -> buffer.toString(StandardCharsets.UTF_8));
                }));
      }
      for (Future<Outcome<T>> future : futures) {
        Outcome<T> outcome = await(future);
        out.print(outcome.printed());
        out.flush();
        outcomes.add(outcome);
        if (outcome.failure() != null) {
          break;
        }
      }
      return outcomes;
    } finally {
      // After a failure: nothing more starts, and what runs finishes before the run goes on.
      futures.forEach(f -> f.cancel(false));
      pool.shutdown();
      try {
        while (!pool.awaitTermination(1, TimeUnit.MINUTES)) {
          // Planning a table (a bootstrap snapshot included) can take long: keep waiting.
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  private static <I, T> Outcome<T> call(
      I item, PlanStep<I, T> plan, PrintStream out, Supplier<String> printed) {
    try {
      T result = plan.plan(item, out);
      out.flush();
      return new Outcome<>(result, null, printed.get());
    } catch (RuntimeException e) {
      out.flush();
      return new Outcome<>(null, e, printed.get());
    }
  }

  private static <T> T await(Future<T> future) {
    try {
      return future.get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("Interrupted while the tables were being planned", e);
    } catch (ExecutionException e) {
      // call() returns a RuntimeException as the outcome: only an Error gets here.
      if (e.getCause() instanceof Error error) {
        throw error;
      }
      throw new IllegalStateException("Planning a table failed", e.getCause());
    }
  }
}
