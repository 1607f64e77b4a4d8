package org.lakecdc.pipelines.targets;

import java.util.List;
import java.util.Locale;
import org.apache.beam.runners.direct.DirectOptions;
import org.apache.beam.runners.direct.DirectRunner;
import org.apache.beam.sdk.options.PipelineOptions;
import org.lakecdc.pipelines.options.OutputOptions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The DirectRunner's thread pool of a pipeline that reads chunks of a chunked snapshot: large
 * enough for a wave's chunks to be read at once, and for the pipeline's other branches to go on
 * beside them.
 *
 * <p>The chunk descriptors of a read are a source that splits into one split per chunk ({@code
 * MssqlCdcIO.snapshotChunks()}), so every runner spreads them over its workers: Spark's tasks,
 * Flink's parallel subtasks, the DirectRunner's pool. The jobs size that pool at one less than the
 * processors (one thread on two processors), which would read the chunks one after another. A
 * pipeline that reads chunks gets at least the largest wave's chunks plus one thread for each of
 * its other branches (a table's stream, a new table's whole snapshot: {@code others}), at most
 * {@value #MAX_OTHER_THREADS} of those, so that a wave's long reads hold back neither the streams
 * nor the small tables' snapshots; {@code --targetParallelism} given on the command line always
 * wins. Other runners are left as they are.
 *
 * <p>No thread more than that: the DirectRunner's scheduler is a task that its pool runs again and
 * again, so a pool with a thread that has no bundle to run spends that thread's core scheduling
 * (measured: an eighth of a chunked run's profile samples with 4 reads in a pool of 5,
 * docs/performance.md). A pipeline that reads chunks and nothing else (a bounded run whose stream
 * has nothing after S, a {@code Backfill} wave) gets exactly the wave's chunks: while they are
 * read, every thread reads.
 */
public final class ChunkReadPool {
  private static final Logger LOG = LoggerFactory.getLogger(ChunkReadPool.class);

  private ChunkReadPool() {}

  /** Threads at most for a pipeline's branches other than its chunk reads. */
  static final int MAX_OTHER_THREADS = 16;

  /**
   * The DirectRunner pool for {@code backfills} beside {@code others} other branches: the largest
   * number of chunks of one wave any of them reads ({@code chunks_per_wave} of its plan, at most
   * the chunks it reads), plus one thread per other branch (at most {@value #MAX_OTHER_THREADS}); 0
   * when there is no chunk to read.
   *
   * @param backfills the chunk reads of one pipeline, possibly none
   * @param others the pipeline's other branches (tables streamed, whole snapshots read), at least 0
   * @return the threads the pool needs, or 0
   * @throws IllegalArgumentException when {@code others < 0}
   */
  public static int threadsFor(List<ChunkBackfill> backfills, int others) {
    int threads = 0;
    for (ChunkBackfill backfill : backfills) {
      threads =
          Math.max(
              threads,
              threads(
                  backfill.state().plan().orElseThrow().chunksPerWave(),
                  backfill.chunks().size(),
                  others));
    }
    return threads;
  }

  /**
   * The DirectRunner pool one chunk read needs: its wave's chunks at once, plus one thread per
   * other branch of the pipeline (at most {@value #MAX_OTHER_THREADS}).
   *
   * @param chunksPerWave the plan's chunks per wave, at least 1
   * @param chunks the chunks the read reads, possibly 0
   * @param others the pipeline's other branches, at least 0
   * @return {@code min(chunksPerWave, chunks) + min(others, MAX_OTHER_THREADS)}, or 0 without
   *     chunks
   * @throws IllegalArgumentException when {@code others < 0}
   */
  static int threads(int chunksPerWave, int chunks, int others) {
    if (others < 0) {
      throw new IllegalArgumentException("others must be at least 0, got " + others);
    }
    int wave = Math.min(chunksPerWave, chunks);
    return wave <= 0 ? 0 : wave + Math.min(others, MAX_OTHER_THREADS);
  }

  /**
   * Raises {@code options}' DirectRunner pool ({@link DirectOptions#getTargetParallelism()}) to
   * {@link #threadsFor}{@code (backfills, others)} when the runner is the DirectRunner, the pool is
   * smaller and {@code --targetParallelism} is not among the command line's arguments ({@link
   * OutputOptions#getGivenArgs()}). Changes {@code options} in place.
   *
   * @param options the options the pipeline is created with
   * @param backfills the pipeline's chunk reads, possibly none
   * @param others the pipeline's other branches (tables streamed, whole snapshots read)
   * @return the pool size the pipeline runs with (unchanged for other runners: their value of
   *     {@code targetParallelism}, which they ignore)
   * @throws IllegalArgumentException when {@code others < 0}
   */
  public static int fit(PipelineOptions options, List<ChunkBackfill> backfills, int others) {
    return fit(options, threadsFor(backfills, others));
  }

  /**
   * {@link #fit(PipelineOptions, List, int)} for a pipeline whose chunk reads need {@code needed}.
   */
  static int fit(PipelineOptions options, int needed) {
    DirectOptions direct = options.as(DirectOptions.class);
    int pool = direct.getTargetParallelism();
    if (options.getRunner() != DirectRunner.class || pool >= needed || givenPool(options)) {
      return pool;
    }
    direct.setTargetParallelism(needed);
    LOG.info(
        "DirectRunner pool raised from {} to {} threads: chunks are read at once, beside the"
            + " pipeline's other branches",
        pool,
        needed);
    return needed;
  }

  private static boolean givenPool(PipelineOptions options) {
    List<String> given = options.as(OutputOptions.class).getGivenArgs();
    if (given == null) {
      return false;
    }
    for (String arg : given) {
      if (arg.toLowerCase(Locale.ROOT).startsWith("--targetparallelism")) {
        return true;
      }
    }
    return false;
  }
}
