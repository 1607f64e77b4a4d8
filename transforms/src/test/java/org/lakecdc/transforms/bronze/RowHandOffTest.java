package org.lakecdc.transforms.bronze;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;

/** The bounded hand-off of a batch's rows from the reading thread to a writer thread. */
class RowHandOffTest {
  /** Rows 0 .. n-1; {@code onPull} runs before each row is given. */
  private static final class Rows implements Iterator<Integer> {
    private final int n;
    private final java.util.function.IntConsumer onPull;
    int pulled;

    Rows(int n, java.util.function.IntConsumer onPull) {
      this.n = n;
      this.onPull = onPull;
    }

    @Override
    public boolean hasNext() {
      return pulled < n;
    }

    @Override
    public Integer next() {
      if (!hasNext()) {
        throw new NoSuchElementException();
      }
      onPull.accept(pulled);
      return pulled++;
    }
  }

  private static boolean threadAlive(String name) {
    return Thread.getAllStackTraces().keySet().stream()
        .anyMatch(t -> t.getName().equals(name) && t.isAlive());
  }

  @Test
  void everyRowReachesTheWriterInOrderOnItsOwnThread() {
    List<Integer> read = new ArrayList<>();
    List<Integer> written = new ArrayList<>();
    Set<String> writerThreads = new HashSet<>();

    RowHandOff.run(
        new Rows(5000, i -> {}),
        read::add,
        row -> {
          written.add(row);
          writerThreads.add(Thread.currentThread().getName());
        },
        "hand-off test writer");

    assertEquals(5000, written.size());
    for (int i = 0; i < 5000; i++) {
      assertEquals(i, written.get(i));
      assertEquals(i, read.get(i));
    }
    assertEquals(Set.of("hand-off test writer"), writerThreads);
    assertFalse(threadAlive("hand-off test writer"));
  }

  @Test
  void aBatchOfOneChunkIsWrittenOnTheCallingThread() {
    List<Integer> written = new ArrayList<>();
    Set<String> writerThreads = new HashSet<>();

    RowHandOff.run(
        new Rows(RowHandOff.CHUNK_ROWS, i -> {}),
        row -> {},
        row -> {
          written.add(row);
          writerThreads.add(Thread.currentThread().getName());
        },
        "hand-off test unused");

    assertEquals(1024, written.size());
    assertEquals(1023, written.get(1023));
    assertEquals(Set.of(Thread.currentThread().getName()), writerThreads);
  }

  @Test
  void aFailedReadStopsTheWriterAndReachesTheCaller() {
    IllegalStateException readFailure = new IllegalStateException("the change table is gone");
    List<Integer> written = new ArrayList<>();

    IllegalStateException thrown =
        assertThrows(
            IllegalStateException.class,
            () ->
                RowHandOff.run(
                    new Rows(
                        100_000,
                        i -> {
                          if (i == 3000) {
                            throw readFailure;
                          }
                        }),
                    row -> {},
                    written::add,
                    "hand-off test failed read"));

    assertSame(readFailure, thrown);
    assertFalse(threadAlive("hand-off test failed read"));
    assertTrue(written.size() <= 3000, "written " + written.size());
  }

  @Test
  void aFailedWriteStopsTheReadWithinTheQueuedChunks() {
    java.io.UncheckedIOException writeFailure =
        new java.io.UncheckedIOException(new java.io.IOException("No space left on device"));
    Rows rows = new Rows(1_000_000, i -> {});

    java.io.UncheckedIOException thrown =
        assertThrows(
            java.io.UncheckedIOException.class,
            () ->
                RowHandOff.run(
                    rows,
                    row -> {},
                    row -> {
                      if (row == 2000) {
                        throw writeFailure;
                      }
                    },
                    "hand-off test failed write"));

    assertSame(writeFailure, thrown);
    assertFalse(threadAlive("hand-off test failed write"));
    // At most the queued chunks, the one being written and the one being filled were read.
    assertTrue(
        rows.pulled <= (RowHandOff.QUEUED_CHUNKS + 3) * RowHandOff.CHUNK_ROWS,
        "pulled " + rows.pulled);
  }

  @Test
  void anInterruptedReadStopsTheWriterAndSaysSo() {
    CountDownLatch never = new CountDownLatch(1);

    IllegalStateException thrown =
        assertThrows(
            IllegalStateException.class,
            () ->
                RowHandOff.run(
                    new Rows(
                        1_000_000,
                        i -> {
                          if (i == 3000) {
                            Thread.currentThread().interrupt();
                          }
                        }),
                    row -> {},
                    row -> {
                      try {
                        never.await();
                      } catch (InterruptedException e) {
                        throw new IllegalStateException("writer interrupted", e);
                      }
                    },
                    "hand-off test cancelled"));

    assertTrue(Thread.interrupted(), "the interrupt flag is set again (and cleared here)");
    assertEquals(
        "Interrupted while writing a batch (the pipeline was cancelled?)", thrown.getMessage());
    assertFalse(threadAlive("hand-off test cancelled"));
  }
}
