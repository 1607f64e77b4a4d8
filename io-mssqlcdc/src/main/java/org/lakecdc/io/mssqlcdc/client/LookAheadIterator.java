package org.lakecdc.io.mssqlcdc.client;

import java.util.NoSuchElementException;
import org.checkerframework.checker.nullness.qual.Nullable;

/**
 * A {@link CloseableIterator} that reads one element ahead from a stream (a result set, a file's
 * lines): {@link #hasNext()} calls {@link #computeNext()} until it gives an element or the subclass
 * {@link #finish() finishes}, and releases the stream ({@link #release()}) once at the end, or on
 * the first {@link #close()} before it. Not thread-safe.
 *
 * @param <T> the element type; elements are never null
 */
public abstract class LookAheadIterator<T> implements CloseableIterator<T> {
  private @Nullable T next;
  private boolean done;
  private boolean released;

  /**
   * Reads the next element from the stream.
   *
   * @return the element, or null to read on (a skipped entry) unless {@link #finish()} was called,
   *     which ends the iteration
   * @throws RuntimeException as the stream fails; the subclass closes it first when it must
   */
  protected abstract @Nullable T computeNext();

  /** Releases the stream; called at most once. Does not throw. */
  protected abstract void release();

  /** Ends the iteration after the element in hand (end of the stream, or past the range read). */
  protected final void finish() {
    done = true;
  }

  /** Whether the iteration ended ({@link #finish()} or {@link #close()}). */
  protected final boolean finished() {
    return done;
  }

  @Override
  public final boolean hasNext() {
    while (next == null && !done) {
      next = computeNext();
    }
    if (next == null) {
      close();
    }
    return next != null;
  }

  @Override
  public final T next() {
    if (!hasNext()) {
      throw new NoSuchElementException();
    }
    T out = next;
    next = null;
    return out;
  }

  @Override
  public final void close() {
    done = true;
    if (!released) {
      released = true;
      release();
    }
  }
}
