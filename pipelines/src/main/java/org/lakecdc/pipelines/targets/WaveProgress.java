package org.lakecdc.pipelines.targets;

import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.transforms.delta.DeltaTables;
import org.lakecdc.transforms.snapshot.BackfillProgress;
import org.lakecdc.transforms.snapshot.ChunkedSnapshotFacts;
import org.lakecdc.transforms.snapshot.ChunkedSnapshotFacts.Plan;
import org.lakecdc.transforms.snapshot.ChunkedSnapshotFacts.State;
import org.lakecdc.transforms.snapshot.ChunkedSnapshotSpec;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The progress lines of the chunked snapshots a pipeline reads ({@link ChunkBackfill}), printed by
 * the launcher on its own console while it waits on the pipeline, whatever the runner and wherever
 * its workers run: one {@link BackfillProgress#line} per wave once the facts table records the
 * wave's last chunk, then {@link BackfillProgress#completion} once it records the snapshot's
 * completion row. Only the waves of the chunks this run reads are printed, each once, in order.
 *
 * <p>A thread looks every {@link #EVERY}: per snapshot one listing of the facts table's log (the
 * chunk facts' transaction version, {@link DeltaTables#latestTransactionVersion}), and the facts
 * rows of the snapshot are read only when a wave's last chunk is recorded (and, after the last
 * wave, while the completion row is awaited, when the facts table has a new version). {@link
 * #close} stops it and looks once more, so no line of a chunk committed before the pipeline ended
 * (or failed) is lost. A failed look is logged to the log file and tried again at the next one.
 */
public final class WaveProgress implements AutoCloseable {
  /** The time between two looks at the facts tables. */
  static final Duration EVERY = Duration.ofSeconds(2);

  private static final Logger LOG = LoggerFactory.getLogger(WaveProgress.class);

  /** Failed looks while the pipeline runs (the next look tries again): the log file only. */
  private static final Logger DETAIL =
      LoggerFactory.getLogger("org.lakecdc.detail." + WaveProgress.class.getSimpleName());

  /**
   * Where this run's counts start (the rate and the ETA are the run's).
   *
   * @param chunksDone chunks recorded when the run started
   * @param rowsDone rows of those chunks
   * @param beganNanos when the run started ({@link System#nanoTime})
   */
  public record RunStart(int chunksDone, long rowsDone, long beganNanos) {
    /** A run starting now from {@code state}. */
    public static RunStart now(State state) {
      return new RunStart(state.chunksDone(), state.rowsDone(), System.nanoTime());
    }
  }

  private final List<Snapshot> snapshots;
  private final PrintStream out;
  private final Object lock = new Object();
  private final @Nullable Thread thread;
  private boolean closed;

  private WaveProgress(List<Snapshot> snapshots, PrintStream out) {
    this.snapshots = snapshots;
    this.out = out;
    if (snapshots.isEmpty()) {
      thread = null;
      return;
    }
    thread = new Thread(this::follow, "lakecdc-wave-progress");
    thread.setDaemon(true);
    thread.start();
  }

  /**
   * Starts following {@code backfills} (each counted as a run starting now from the state it was
   * planned with); none: nothing is started.
   *
   * @param out the launcher's console
   */
  public static WaveProgress follow(List<ChunkBackfill> backfills, PrintStream out) {
    List<Snapshot> snapshots = new ArrayList<>();
    for (ChunkBackfill backfill : backfills) {
      snapshots.add(new Snapshot(backfill, RunStart.now(backfill.state())));
    }
    return new WaveProgress(snapshots, out);
  }

  /**
   * Starts following one backfill counted as part of a run that started at {@code run} (the
   * Backfill job's waves, one pipeline each).
   *
   * @param out the launcher's console
   */
  public static WaveProgress follow(ChunkBackfill backfill, RunStart run, PrintStream out) {
    return new WaveProgress(List.of(new Snapshot(backfill, run)), out);
  }

  /** The thread's work: a look every {@link #EVERY} until {@link #close}. */
  private void follow() {
    synchronized (lock) {
      while (!closed) {
        try {
          lock.wait(EVERY.toMillis());
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return;
        }
        if (!closed) {
          look(false);
        }
      }
    }
  }

  /** One look at every snapshot: prints the lines due. Under {@link #lock}. */
  private void look(boolean last) {
    for (Snapshot snapshot : snapshots) {
      try {
        snapshot.look().forEach(out::println);
      } catch (RuntimeException e) {
        if (last) {
          LOG.warn(
              "The progress of the chunked snapshot of {} could not be read from {}: {}",
              snapshot.spec.captureInstance(),
              snapshot.spec.factsPath(),
              e.toString());
        } else {
          DETAIL.info(
              "The progress of the chunked snapshot of {} could not be read from {} (tried again"
                  + " in {} s)",
              snapshot.spec.captureInstance(),
              snapshot.spec.factsPath(),
              EVERY.toSeconds(),
              e);
        }
      }
    }
  }

  /** Stops following after one last look: the lines of everything the facts table records now. */
  @Override
  public void close() {
    if (thread == null) {
      return;
    }
    synchronized (lock) {
      closed = true;
      lock.notifyAll();
      look(true);
    }
  }

  /** One snapshot's waves in this run and what of them is printed. */
  private static final class Snapshot {
    private final ChunkedSnapshotSpec spec;
    private final DeltaTables tables;
    private final Plan plan;
    private final int chunkCount;
    private final RunStart run;
    private final int lastWave;
    private final boolean toTheEnd;
    private int nextWave;
    private long factsVersionRead = -1;
    private boolean done;

    Snapshot(ChunkBackfill backfill, RunStart run) {
      this.spec = backfill.spec();
      this.tables = backfill.config().hadoopConf().tables();
      this.plan = spec.plan();
      this.chunkCount = plan.chunkCount();
      this.run = run;
      int lastChunk = backfill.chunks().get(backfill.chunks().size() - 1).index();
      this.nextWave = plan.waveOf(backfill.chunks().get(0).index());
      this.lastWave = plan.waveOf(lastChunk);
      this.toTheEnd = lastChunk == chunkCount - 1;
    }

    /** The last chunk of wave {@code wave}: waves are chunks {@code [w × k, (w + 1) × k)}. */
    private int lastChunkOf(int wave) {
      return Math.min((wave + 1) * plan.chunksPerWave(), chunkCount) - 1;
    }

    /** The lines due now. */
    List<String> look() {
      List<String> lines = new ArrayList<>();
      if (done) {
        return lines;
      }
      if (nextWave <= lastWave) {
        long recorded =
            tables.latestTransactionVersion(spec.factsPath(), spec.chunkFactsAppId()).orElse(-1);
        if (recorded < lastChunkOf(nextWave)) {
          return lines;
        }
      }
      // After the last wave, the completion row is awaited: a read per new version of the facts.
      long version = tables.version(spec.factsPath());
      if (nextWave > lastWave && version == factsVersionRead) {
        return lines;
      }
      factsVersionRead = version;
      Optional<State> read =
          ChunkedSnapshotFacts.read(tables, spec.factsPath(), spec.appId(), spec.bronzePath())
              .chunked()
              .filter(state -> state.open().s().equals(spec.s()));
      if (read.isEmpty()) {
        return lines;
      }
      State state = read.get();
      while (nextWave <= lastWave && state.nextChunk() > lastChunkOf(nextWave)) {
        // The wave as of its last chunk: readers may have committed later ones since.
        State atWaveEnd = state.through(lastChunkOf(nextWave));
        lines.add(
            BackfillProgress.line(
                spec.captureInstance(),
                nextWave,
                atWaveEnd.chunksDone(),
                chunkCount,
                atWaveEnd.rowsDone(),
                atWaveEnd.chunksDone() - run.chunksDone(),
                atWaveEnd.rowsDone() - run.rowsDone(),
                (System.nanoTime() - run.beganNanos()) / 1e9));
        nextWave++;
      }
      if (nextWave > lastWave) {
        if (!toTheEnd) {
          done = true;
        } else if (state.complete()) {
          lines.add(
              BackfillProgress.completion(
                  spec.s(),
                  spec.bronzePath(),
                  state.rowsDone(),
                  chunkCount,
                  state.maxStamp().orElse(spec.s())));
          done = true;
        }
      }
      return lines;
    }
  }
}
