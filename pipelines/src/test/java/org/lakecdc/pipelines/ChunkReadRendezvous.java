package org.lakecdc.pipelines;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.lakecdc.io.mssqlcdc.client.CdcClient;
import org.lakecdc.io.mssqlcdc.client.CdcClientFactory;

/**
 * A client factory of the simulator whose table reads ({@code readTable}: a snapshot chunk's
 * SELECT) meet: each of the first {@code parties} reads waits, before its SELECT, until that many
 * reads have started, or gives up after a minute. A runner that reads the chunks one after another
 * makes the first read give up (recorded as not met); one that reads them at once lets them all
 * meet. Each read records its thread and its interval (from {@code readTable} to the close of its
 * rows), in this JVM (the DirectRunner's, Spark's {@code local[2]}, Flink's mini-cluster), by name.
 */
final class ChunkReadRendezvous implements CdcClientFactory {
  private static final long serialVersionUID = 1L;
  private static final Map<String, State> STATES = new ConcurrentHashMap<>();

  /**
   * One table read: its thread (name and id: the DirectRunner names all its workers alike), whether
   * it met the others, its interval in nanoseconds, and the lower bound of its key range as text
   * ({@code [2]}; {@code null} for a range from the table's start): which chunk it read.
   */
  record Read(String thread, boolean met, long startNanos, long endNanos, String lower) {
    /** Whether this read and {@code other} ran at the same time. */
    boolean overlaps(Read other) {
      return startNanos < other.endNanos && other.startNanos < endNanos;
    }
  }

  private static final class State {
    final CountDownLatch started;
    final List<Read> reads = new ArrayList<>();

    State(int parties) {
      started = new CountDownLatch(parties);
    }
  }

  private final CdcClientFactory delegate;
  private final String name;

  ChunkReadRendezvous(CdcClientFactory delegate, int parties) {
    this.delegate = delegate;
    this.name = UUID.randomUUID().toString();
    STATES.put(name, new State(parties));
  }

  /** The finished reads so far, in the order they finished. */
  List<Read> reads() {
    State state = STATES.get(name);
    synchronized (state) {
      return List.copyOf(state.reads);
    }
  }

  @Override
  public CdcClient open() {
    return ReadTableHook.intercept(
        delegate.open(),
        (query, read) -> {
          State state = STATES.get(name);
          long start = System.nanoTime();
          state.started.countDown();
          boolean met = state.started.await(1, TimeUnit.MINUTES);
          String thread = Thread.currentThread().getName() + "#" + Thread.currentThread().getId();
          String lower = query.lowerInclusive().map(Object::toString).orElse("null");
          return ReadTableHook.watched(
              read.call(),
              () -> {},
              () -> {
                synchronized (state) {
                  state.reads.add(new Read(thread, met, start, System.nanoTime(), lower));
                }
              });
        });
  }
}
