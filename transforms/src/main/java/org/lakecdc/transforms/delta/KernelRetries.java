package org.lakecdc.transforms.delta;

import io.delta.kernel.exceptions.CommitStateUnknownException;
import io.delta.kernel.exceptions.InvalidTableException;
import io.delta.kernel.exceptions.KernelEngineException;
import io.delta.kernel.exceptions.KernelException;
import io.delta.kernel.exceptions.MaxCommitRetryLimitReachedException;
import io.delta.kernel.exceptions.TableNotFoundException;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.io.UncheckedIOException;
import java.nio.file.AccessDeniedException;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import java.util.function.Supplier;
import org.apache.beam.sdk.util.BackOff;
import org.apache.beam.sdk.util.BackOffUtils;
import org.apache.beam.sdk.util.FluentBackoff;
import org.apache.beam.sdk.util.Sleeper;
import org.apache.hadoop.fs.UnsupportedFileSystemException;
import org.joda.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Which failures of Delta Kernel, while it loads a snapshot or commits, pass when the same step is
 * started again from a fresh snapshot, and the backoff between such starts.
 *
 * <p>On an object store the log is listed, and a listing can miss a file another writer (or a
 * checkpoint) has just written, or a request can fail on the way. Kernel then throws, though the
 * table is fine: retryable ({@link #isRetryable}) are
 *
 * <ul>
 *   <li>{@link InvalidTableException} {@code Missing delta files: versions are not contiguous} and
 *       {@code Missing checkpoint at version N}, and Kernel's {@code Cannot load table version N as
 *       it does not exist} (a checkpoint of the version just committed): a listing that missed
 *       files;
 *   <li>{@link IllegalStateException} {@code No winning commits found} and {@code Gaps in Delta log
 *       commit files}, and {@link IllegalArgumentException} {@code New commit version N should be
 *       greater than the previous commit attempt version N}: a commit that lost its version but
 *       whose listing did not show all the winners yet;
 *   <li>{@link CommitStateUnknownException}: an attempt failed on the way and a later one found its
 *       version taken (retried only where a transaction identifier tells whether it was ours);
 *   <li>I/O failures ({@link IOException}, {@link UncheckedIOException}, {@link
 *       KernelEngineException} over one; a {@link MaxCommitRetryLimitReachedException} whose last
 *       attempt failed on I/O): the store could not be reached or answered an error.
 * </ul>
 *
 * Fatal, whatever they wrap: {@link ConditionalWritesUnsupportedException}, access denied ({@link
 * AccessDeniedException}), a full disk ({@code No space left on device}), {@link
 * TableNotFoundException}, an interruption, a path's file system missing from the class path
 * (Hadoop's {@link UnsupportedFileSystemException}, or its implementation's {@link
 * ClassNotFoundException}: no later attempt finds it), and everything else (Kernel's refusals of a
 * schema, a protocol, a conflicting concurrent change).
 *
 * <p>Attempts are spaced by Beam's {@link FluentBackoff}: from {@value #INITIAL_BACKOFF_MILLIS} ms,
 * doubling up to 5 s, at most {@value #MAX_RETRIES} retries and about a minute in all.
 */
public final class KernelRetries {
  private static final Logger LOG = LoggerFactory.getLogger(KernelRetries.class);

  /**
   * Each retried attempt, with Kernel's exception (a listing that missed a file, a lost commit
   * version: routine on an object store and when two runs write one table): under {@code
   * org.lakecdc.detail}, log file only. Giving up is a warning on the console.
   */
  private static final Logger DETAIL =
      LoggerFactory.getLogger("org.lakecdc.detail." + KernelRetries.class.getSimpleName());

  /** The first pause, in milliseconds. */
  public static final long INITIAL_BACKOFF_MILLIS = 200;

  /** Retries after the first attempt, at most. */
  public static final int MAX_RETRIES = 10;

  private static final FluentBackoff BACKOFF =
      FluentBackoff.DEFAULT
          .withInitialBackoff(Duration.millis(INITIAL_BACKOFF_MILLIS))
          .withMaxBackoff(Duration.standardSeconds(5))
          .withMaxRetries(MAX_RETRIES)
          .withMaxCumulativeBackoff(Duration.standardMinutes(1));

  /** Kernel's words for a log whose listing missed files (all but the last are InvalidTable). */
  private static final List<String> RETRYABLE_TABLE_STATES =
      List.of(
          "versions are not contiguous",
          "Missing checkpoint at version",
          "Missing delta file",
          "as it does not exist. The latest available version is");

  /**
   * Kernel's words, after a commit lost its version, for a listing of the winning commits that
   * missed some of them (the first two IllegalStateException, the last IllegalArgumentException).
   */
  private static final List<String> RETRYABLE_LOST_COMMITS =
      List.of(
          "No winning commits found",
          "Gaps in Delta log commit files",
          "should be greater than the previous commit attempt version");

  private KernelRetries() {}

  /**
   * Whether {@code failure} passes when the step is started again from a fresh snapshot (see the
   * class comment).
   *
   * @param failure what Kernel (or the engine under it) threw
   * @return true when retryable
   */
  public static boolean isRetryable(Throwable failure) {
    Set<Throwable> chain = Collections.newSetFromMap(new IdentityHashMap<>());
    boolean retryable = false;
    for (Throwable t = failure; t != null && chain.add(t); t = t.getCause()) {
      if (t instanceof ConditionalWritesUnsupportedException
          || String.valueOf(t.getMessage()).contains("No space left on device")
          || t instanceof AccessDeniedException
          || t instanceof TableNotFoundException
          || t instanceof InterruptedIOException
          || t instanceof InterruptedException
          || t instanceof UnsupportedFileSystemException
          || t instanceof ClassNotFoundException) {
        return false;
      }
      if (t instanceof KernelException && mentions(t, RETRYABLE_TABLE_STATES)) {
        retryable = true;
      } else if ((t instanceof IllegalStateException || t instanceof IllegalArgumentException)
          && mentions(t, RETRYABLE_LOST_COMMITS)) {
        retryable = true;
      } else if (t instanceof CommitStateUnknownException) {
        retryable = true;
      } else if (t instanceof IOException
          || t instanceof UncheckedIOException
          || (t instanceof KernelEngineException && t.getCause() instanceof IOException)) {
        retryable = true;
      } else if (t instanceof MaxCommitRetryLimitReachedException && hasIoCause(t)) {
        retryable = true;
      }
    }
    return retryable;
  }

  /**
   * Whether a commit that failed with {@code failure} may be started again from a fresh snapshot:
   * only a commit with a transaction identifier, whose next attempt sees whether the failed one
   * landed after all (a request whose answer was lost), and only a {@link #isRetryable} failure. A
   * commit without one could be written twice; its failure stands (its snapshot loads are still
   * retried, {@link #call}).
   *
   * @param failure the failure
   * @param identified whether the commit carries a transaction identifier
   * @return true when the commit may be retried from a fresh snapshot
   */
  public static boolean isRetryableCommit(Throwable failure, boolean identified) {
    return identified && isRetryable(failure);
  }

  /**
   * Runs {@code step} until it returns, retrying retryable failures with backoff.
   *
   * @param path the table, for the log
   * @param what the step, for the log (e.g. {@code load the latest snapshot})
   * @param step the step
   * @param <T> its result
   * @return the step's result
   * @throws RuntimeException the step's last failure when it is fatal or the retries are spent
   */
  public static <T> T call(String path, String what, Supplier<T> step) {
    if (RETRYING.get()[0] > 0) {
      // Inside another step's retries: its attempts cover this one.
      return step.get();
    }
    try (Attempts attempts = new Attempts(path, what)) {
      while (true) {
        try {
          return step.get();
        } catch (RuntimeException e) {
          if (!isRetryable(e)) {
            throw e;
          }
          attempts.pauseOrThrow(e);
        }
      }
    }
  }

  /** How many retry scopes ({@link Attempts}) are open on this thread. */
  private static final ThreadLocal<int[]> RETRYING = ThreadLocal.withInitial(() -> new int[1]);

  /**
   * Sleeps {@code backOff}'s next interval on this thread.
   *
   * @return false, without sleeping, when the back-off is spent; false when the sleep is
   *     interrupted (the thread's interrupt flag set again); true after the sleep
   */
  public static boolean pause(BackOff backOff) {
    try {
      return BackOffUtils.next(Sleeper.DEFAULT, backOff);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    } catch (IOException e) {
      return false;
    }
  }

  /**
   * The backoff of one step's retries: {@link #pauseOrThrow} logs the failure and waits before the
   * next attempt, or rethrows it when the retries are spent. Retries do not nest: while one is open
   * on a thread, {@link #call} on that thread runs its step once and leaves a failure to this one's
   * attempts, so a store that stays away fails the step after about a minute, not a minute per
   * level. Close it when the step is done.
   */
  public static final class Attempts implements AutoCloseable {
    private final String path;
    private final String what;
    private final BackOff backOff = BACKOFF.backoff();
    private int failures;

    /**
     * @param path the table, for the log
     * @param what the step, for the log
     */
    public Attempts(String path, String what) {
      this.path = path;
      this.what = what;
      RETRYING.get()[0]++;
    }

    /** Ends the scope: {@link #call} retries on its own again. */
    @Override
    public void close() {
      RETRYING.get()[0]--;
    }

    /**
     * Logs {@code failure} and waits before the next attempt.
     *
     * @param failure the retryable failure of the last attempt
     * @throws RuntimeException {@code failure} itself when the retries are spent or the wait is
     *     interrupted
     */
    public void pauseOrThrow(RuntimeException failure) {
      failures++;
      if (!pause(backOff)) {
        LOG.warn(
            "Delta table {}: {} failed {} times; giving up: {}", path, what, failures, failure);
        throw failure;
      }
      DETAIL.info(
          "Delta table {}: {} failed (attempt {}), retried from a fresh snapshot: {}",
          path,
          what,
          failures,
          failure.toString());
    }

    /** How many failures were retried or rethrown so far. */
    public int failures() {
      return failures;
    }
  }

  private static boolean mentions(Throwable t, List<String> words) {
    String message = String.valueOf(t.getMessage());
    return words.stream().anyMatch(message::contains);
  }

  private static boolean hasIoCause(Throwable t) {
    return causeOf(t, IOException.class) || causeOf(t, UncheckedIOException.class);
  }

  private static boolean causeOf(Throwable failure, Class<? extends Throwable> type) {
    Set<Throwable> chain = Collections.newSetFromMap(new IdentityHashMap<>());
    for (Throwable t = failure; t != null && chain.add(t); t = t.getCause()) {
      if (type.isInstance(t)) {
        return true;
      }
    }
    return false;
  }
}
