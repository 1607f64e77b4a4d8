package org.lakecdc.pipelines.demo;

import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;
import org.lakecdc.io.mssqlcdc.client.CdcException;

/**
 * The lock that serialises builds and history parts of one demo directory, between the threads of a
 * JVM and between processes: {@code .<name>.lock} beside the directory, and the other hidden
 * siblings ({@code .<name>.building}, {@code .<name>.continuing}) the demo is staged in.
 */
final class DemoLock {
  /** One lock per demo directory for the threads of this JVM (a file lock is per process). */
  private static final Map<Path, ReentrantLock> JVM_LOCKS = new ConcurrentHashMap<>();

  private DemoLock() {}

  /**
   * Runs {@code body} holding the demo directory's lock: first this JVM's lock of the directory,
   * then an exclusive {@link FileChannel#lock()} of {@code .<name>.lock} beside it (created when
   * absent, never deleted: deleting a lock file lets two runs hold two different files). When
   * either is held elsewhere: with {@code wait}, says so once on {@code out} and waits; without,
   * refuses. Reentrant in one thread.
   *
   * @throws CdcException without {@code wait}, when another run holds the lock
   */
  static <T> T locked(Path directory, boolean wait, PrintStream out, Supplier<T> body) {
    Path absolute = directory.toAbsolutePath().normalize();
    ReentrantLock jvm = JVM_LOCKS.computeIfAbsent(absolute, k -> new ReentrantLock());
    if (jvm.isHeldByCurrentThread()) {
      return body.get();
    }
    boolean said = false;
    if (!jvm.tryLock()) {
      said = busy(absolute, wait, out);
      jvm.lock();
    }
    try {
      Files.createDirectories(absolute.getParent());
      try (FileChannel channel =
          FileChannel.open(
              lockFile(absolute), StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
        FileLock lock = channel.tryLock();
        if (lock == null) {
          if (!said) {
            busy(absolute, wait, out);
          }
          lock = channel.lock();
        }
        try {
          return body.get();
        } finally {
          lock.release();
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(
          "Cannot lock the demo database's lock file " + lockFile(absolute) + ": " + e.getMessage(),
          e);
    } finally {
      jvm.unlock();
    }
  }

  /**
   * Another run holds the lock: says that this run waits (true), or refuses (a run that would build
   * the demo would go on to bootstrap the same target as the run building it).
   */
  private static boolean busy(Path absolute, boolean wait, PrintStream out) {
    if (!wait) {
      throw new CdcException(
          "Another run is building the demo database in "
              + absolute
              + " (lock "
              + lockFile(absolute)
              + "): run again when it has finished (two first runs at once would both bootstrap"
              + " the same target)");
    }
    out.println(
        "Another run is writing the demo database in "
            + absolute
            + "; waiting for it to finish (lock "
            + lockFile(absolute)
            + ")");
    return true;
  }

  /** {@code .<name>.lock} beside the demo directory. */
  static Path lockFile(Path directory) {
    return sibling(directory, ".lock");
  }

  /**
   * Holds the demo directory's lock until closed (for tests: another run building the demo).
   *
   * @param directory the demo directory
   * @return the held lock; close it to release
   */
  static AutoCloseable holdLock(Path directory) throws InterruptedException {
    java.util.concurrent.CountDownLatch held = new java.util.concurrent.CountDownLatch(1);
    java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
    Thread holder =
        new Thread(
            () ->
                locked(
                    directory,
                    true,
                    DemoDatabase.NOWHERE,
                    () -> {
                      held.countDown();
                      try {
                        release.await();
                      } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                      }
                      return null;
                    }),
            "demo-lock-holder");
    holder.start();
    held.await();
    return () -> {
      release.countDown();
      holder.join();
    };
  }

  /** The hidden sibling {@code .<name><suffix>} of {@code directory}. */
  static Path sibling(Path directory, String suffix) {
    Path absolute = directory.toAbsolutePath().normalize();
    return absolute.resolveSibling("." + absolute.getFileName() + suffix);
  }
}
