package org.lakecdc.transforms.bronze;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

/**
 * Reading and writing a batch overlapped: rows are pulled from their source on the calling thread
 * and handed, in chunks of {@value #CHUNK_ROWS}, to a writer on a thread of its own, through a
 * queue of at most {@value #QUEUED_CHUNKS} chunks. So the source's parsing and the writer's
 * encoding run at the same time on two processors, and memory holds at most {@value #QUEUED_CHUNKS}
 * + 2 chunks (the queue's, the one being filled, the one being written), whatever the batch's size.
 *
 * <p>A batch whose rows fit one chunk is written on the calling thread: no thread is started for
 * it. Errors of either side fail the whole hand-off: a failure of the source (its {@code hasNext}
 * or {@code next}) stops the writer and is rethrown; a failure of the writer stops the reading
 * (within one chunk's wait) and is rethrown on the calling thread as it was thrown. An interrupt of
 * the calling thread (a cancelled pipeline) stops both and throws {@link IllegalStateException}
 * with the interrupt flag set again. In every case the writer's thread has ended when {@link #run}
 * returns or throws, so nothing the writer touches is used by two threads at once, and no thread
 * outlives its batch.
 */
final class RowHandOff {
  /** Rows per chunk handed to the writer. */
  static final int CHUNK_ROWS = 1024;

  /** Chunks the queue holds at most. */
  static final int QUEUED_CHUNKS = 4;

  /** How long the reader waits for room in the queue before it looks at the writer again. */
  private static final long OFFER_WAIT_MS = 20;

  private RowHandOff() {}

  /**
   * Pulls every row of {@code source}, calling {@code onRead} for each on the calling thread, and
   * gives them in order to {@code write}, on a thread named {@code threadName} once more than one
   * chunk of rows is read.
   *
   * @param source the rows, pulled on the calling thread only
   * @param onRead called for each row, on the calling thread, in order
   * @param write called for each row, in order, on one thread at a time
   * @param threadName the writer thread's name
   * @throws RuntimeException the source's or the writer's failure, as thrown
   * @throws IllegalStateException when the calling thread is interrupted
   */
  static <T> void run(
      Iterator<T> source, Consumer<T> onRead, Consumer<T> write, String threadName) {
    List<T> first = new ArrayList<>(CHUNK_ROWS);
    while (first.size() < CHUNK_ROWS && source.hasNext()) {
      T row = source.next();
      onRead.accept(row);
      first.add(row);
    }
    if (!source.hasNext()) {
      first.forEach(write);
      return;
    }
    BlockingQueue<List<T>> queue = new ArrayBlockingQueue<>(QUEUED_CHUNKS);
    List<T> end = new ArrayList<>(0);
    AtomicReference<Throwable> failure = new AtomicReference<>();
    Thread writer =
        new Thread(
            () -> {
              try {
                for (List<T> chunk = queue.take(); chunk != end; chunk = queue.take()) {
                  chunk.forEach(write);
                }
              } catch (InterruptedException e) {
                // Stopped by the reader, which reports its own failure.
              } catch (RuntimeException | Error e) {
                failure.set(e);
              }
            },
            threadName);
    writer.setDaemon(true);
    writer.start();
    boolean handedOver = false;
    try {
      put(queue, first, writer, failure);
      List<T> chunk = new ArrayList<>(CHUNK_ROWS);
      while (source.hasNext()) {
        T row = source.next();
        onRead.accept(row);
        chunk.add(row);
        if (chunk.size() == CHUNK_ROWS) {
          put(queue, chunk, writer, failure);
          chunk = new ArrayList<>(CHUNK_ROWS);
        }
      }
      if (!chunk.isEmpty()) {
        put(queue, chunk, writer, failure);
      }
      put(queue, end, writer, failure);
      writer.join();
      handedOver = true;
      rethrow(failure.get());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(
          "Interrupted while writing a batch (the pipeline was cancelled?)", e);
    } finally {
      if (!handedOver) {
        writer.interrupt();
        joinUninterruptibly(writer);
      }
    }
  }

  /** Queues a chunk, waiting for room; fails as soon as the writer failed. */
  private static <T> void put(
      BlockingQueue<List<T>> queue,
      List<T> chunk,
      Thread writer,
      AtomicReference<Throwable> failure)
      throws InterruptedException {
    while (!queue.offer(chunk, OFFER_WAIT_MS, TimeUnit.MILLISECONDS)) {
      if (failure.get() != null) {
        break;
      } else if (!writer.isAlive()) {
        throw new IllegalStateException("The writer of the batch ended before its last row");
      }
    }
    if (failure.get() != null) {
      writer.join();
      rethrow(failure.get());
    }
  }

  private static void rethrow(Throwable failure) {
    if (failure instanceof RuntimeException r) {
      throw r;
    } else if (failure instanceof Error e) {
      throw e;
    }
  }

  private static void joinUninterruptibly(Thread thread) {
    boolean interrupted = false;
    while (thread.isAlive()) {
      try {
        thread.join();
      } catch (InterruptedException e) {
        interrupted = true;
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }
}
