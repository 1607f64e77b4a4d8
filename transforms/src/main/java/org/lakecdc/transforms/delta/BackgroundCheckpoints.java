package org.lakecdc.transforms.delta;

import io.delta.kernel.engine.Engine;
import io.delta.kernel.hook.PostCommitHook;
import java.io.IOException;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Checkpoints written after their commit by background threads of the JVM's tables ({@link
 * #THREADS}), not by the committing thread: what a commit that asks for it ({@link
 * CheckpointTiming#IN_BACKGROUND}) does with the checkpoint Kernel offers every {@code
 * delta.checkpointInterval} versions.
 *
 * <p>Delta allows a checkpoint of any committed version at any time: the commit is complete without
 * it, and a reader lists the log and replays the commit files after whatever checkpoint it finds.
 * So while a checkpoint is queued or being written, a reader (this JVM's or another's) reads the
 * table from the checkpoint before it and the commits since, as it would at the version before the
 * interval; Kernel writes the checkpoint file atomically and {@code _last_checkpoint} after it, so
 * a process killed while writing leaves the log as if the checkpoint had not been offered, and the
 * next interval's commit offers the next one. At most one checkpoint per table is queued or
 * running: a table whose checkpoint is still in flight when the next interval comes skips that one.
 * A failure is logged and left to the next interval; the commit stands.
 *
 * <p>The threads are daemons, started on demand and ended after {@value #IDLE_SECONDS} s without
 * work; {@link #awaitIdle} waits until nothing is queued or running (the end of a run).
 * Thread-safe.
 */
final class BackgroundCheckpoints {
  private static final Logger LOG = LoggerFactory.getLogger(BackgroundCheckpoints.class);

  /** The skipped intervals' lines: under {@code org.lakecdc.detail}, log file only. */
  private static final Logger SKIPS =
      LoggerFactory.getLogger("org.lakecdc.detail." + BackgroundCheckpoints.class.getSimpleName());

  /** Seconds a background thread waits for more work before it ends. */
  static final int IDLE_SECONDS = 5;

  /**
   * The background threads: two where the JVM has two processors or more. The checkpoints of many
   * tables come due together (each table's tenth commit of a run of many tables falls in the same
   * committer round) and the run's end waits for them; different tables' checkpoints are
   * independent, one table's never two at once.
   */
  static final int THREADS = Math.min(2, Runtime.getRuntime().availableProcessors());

  private final Engine engine;

  /** Run after a checkpoint of a path was written (the kept snapshot is read again next time). */
  private final Consumer<String> written;

  /** The checkpoint queued or running per table path: at most one each. */
  private final Map<String, CompletableFuture<Void>> pending = new ConcurrentHashMap<>();

  private final ThreadPoolExecutor background;

  /** A test hook run by the background thread before it writes a checkpoint. */
  private volatile Runnable beforeWrite = () -> {};

  BackgroundCheckpoints(Engine engine, Consumer<String> written) {
    this.engine = engine;
    this.written = written;
    this.background = BackgroundThread.start("lakecdc-checkpoint", IDLE_SECONDS, THREADS);
  }

  /**
   * Hands the checkpoint of {@code version} to the background thread and returns at once, unless a
   * checkpoint of the table is queued or running (then this one is skipped). Never throws.
   *
   * @param path the table path or URI
   * @param version the version the hook checkpoints
   * @param hook Kernel's checkpoint hook of the commit of that version
   */
  void submit(String path, long version, PostCommitHook hook) {
    CompletableFuture<Void> task = new CompletableFuture<>();
    if (pending.putIfAbsent(path, task) != null) {
      SKIPS.info(
          "Delta table {}: a checkpoint is still being written; the one at version {} is skipped",
          path,
          version);
      return;
    }
    try {
      background.execute(() -> write(path, version, hook, task));
    } catch (RuntimeException e) {
      pending.remove(path, task);
      task.complete(null);
      LOG.warn(
          "Delta table {}: checkpoint at version {} not started; the next one will be tried",
          path,
          version,
          e);
    }
  }

  private void write(String path, long version, PostCommitHook hook, CompletableFuture<Void> task) {
    try {
      beforeWrite.run();
      hook.threadSafeInvoke(engine);
      written.accept(path);
    } catch (IOException | RuntimeException e) {
      LOG.warn(
          "Delta table {}: checkpoint at version {} failed; the next one will be tried",
          path,
          version,
          e);
    } finally {
      pending.remove(path, task);
      task.complete(null);
    }
  }

  /** Sets the hook the background thread runs before it writes a checkpoint (tests). */
  void beforeWrite(Runnable hook) {
    this.beforeWrite = hook;
  }

  /**
   * Waits until no checkpoint of these tables is queued or running (one handed over while it waits
   * is waited for too).
   *
   * @throws InterruptedException when the waiting thread is interrupted
   */
  void awaitIdle() throws InterruptedException {
    BackgroundThread.awaitIdle(pending, "checkpoint");
  }
}
