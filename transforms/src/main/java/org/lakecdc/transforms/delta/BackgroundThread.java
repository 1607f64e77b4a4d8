package org.lakecdc.transforms.delta;

import java.util.ArrayList;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The background threads of a kind of work of the tables (compactions: one; checkpoints: two at
 * most) and the wait for their tasks: shared by {@link SmallFileCompaction} and {@link
 * BackgroundCheckpoints}.
 */
final class BackgroundThread {
  private BackgroundThread() {}

  /**
   * An executor of one daemon thread named {@code <name>-<n>}, started on demand and ended after
   * {@code idleSeconds} s without work; tasks wait in an unbounded queue.
   */
  static ThreadPoolExecutor start(String name, int idleSeconds) {
    return start(name, idleSeconds, 1);
  }

  /**
   * {@link #start(String, int)} with up to {@code threads} daemon threads, each started on demand
   * and ended after {@code idleSeconds} s without work.
   */
  static ThreadPoolExecutor start(String name, int idleSeconds, int threads) {
    AtomicInteger started = new AtomicInteger();
    ThreadPoolExecutor pool =
        new ThreadPoolExecutor(
            threads,
            threads,
            idleSeconds,
            TimeUnit.SECONDS,
            new LinkedBlockingQueue<>(),
            task -> {
              Thread thread = new Thread(task, name + "-" + started.incrementAndGet());
              thread.setDaemon(true);
              return thread;
            });
    pool.allowCoreThreadTimeOut(true);
    return pool;
  }

  /**
   * Waits until {@code pending} (the task queued or running per table path) is empty; a task handed
   * over while it waits is waited for too.
   *
   * @param what the work, for the message of a failed task ({@code a <what> task failed})
   * @throws InterruptedException when the waiting thread is interrupted
   * @throws IllegalStateException when a task completed exceptionally
   */
  static void awaitIdle(Map<String, CompletableFuture<Void>> pending, String what)
      throws InterruptedException {
    while (!pending.isEmpty()) {
      for (CompletableFuture<Void> task : new ArrayList<>(pending.values())) {
        try {
          task.get();
        } catch (ExecutionException e) {
          throw new IllegalStateException("a " + what + " task failed", e.getCause());
        }
      }
    }
  }
}
