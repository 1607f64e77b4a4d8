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
 * enough for a wave's chunks to be read at once.
 *
 * <p>The chunk descriptors of a read are a source that splits into one split per chunk ({@code
 * MssqlCdcIO.snapshotChunks()}), so every runner spreads them over its workers: Spark's tasks,
 * Flink's parallel subtasks, the DirectRunner's pool. The jobs size that pool at one less than the
 * processors (one thread on two processors, so the DirectRunner's scheduler never spins beside the
 * one reading stage), which would read the chunks one after another. A pipeline that reads chunks
 * gets at least the largest wave's chunks plus one thread (the stream's read and the scheduler
 * share it), unless {@code --targetParallelism} was given on the command line, which always wins.
 * Other runners are left as they are.
 */
public final class ChunkReadPool {
  private static final Logger LOG = LoggerFactory.getLogger(ChunkReadPool.class);

  private ChunkReadPool() {}

  /**
   * The DirectRunner pool for {@code backfills}: the largest number of chunks of one wave any of
   * them reads ({@code chunks_per_wave} of its plan, at most the chunks it reads), plus one; 0 when
   * there is nothing to read.
   *
   * @param backfills the chunk reads of one pipeline, possibly none
   * @return the threads the pool needs, or 0
   */
  public static int threadsFor(List<ChunkBackfill> backfills) {
    int threads = 0;
    for (ChunkBackfill backfill : backfills) {
      threads =
          Math.max(
              threads,
              threads(
                  backfill.state().plan().orElseThrow().chunksPerWave(), backfill.chunks().size()));
    }
    return threads;
  }

  /**
   * The DirectRunner pool one chunk read needs: its wave's chunks at once, plus one thread.
   *
   * @param chunksPerWave the plan's chunks per wave, at least 1
   * @param chunks the chunks the read reads, possibly 0
   * @return {@code min(chunksPerWave, chunks) + 1}, or 0 without chunks
   */
  static int threads(int chunksPerWave, int chunks) {
    int wave = Math.min(chunksPerWave, chunks);
    return wave <= 0 ? 0 : wave + 1;
  }

  /**
   * Raises {@code options}' DirectRunner pool ({@link DirectOptions#getTargetParallelism()}) to
   * {@link #threadsFor}{@code (backfills)} when the runner is the DirectRunner, the pool is smaller
   * and {@code --targetParallelism} is not among the command line's arguments ({@link
   * OutputOptions#getGivenArgs()}). Changes {@code options} in place.
   *
   * @param options the options the pipeline is created with
   * @param backfills the pipeline's chunk reads, possibly none
   * @return the pool size the pipeline runs with (unchanged for other runners: their value of
   *     {@code targetParallelism}, which they ignore)
   */
  public static int fit(PipelineOptions options, List<ChunkBackfill> backfills) {
    return fit(options, threadsFor(backfills));
  }

  /** {@link #fit(PipelineOptions, List)} for a pipeline whose chunk reads need {@code needed}. */
  static int fit(PipelineOptions options, int needed) {
    DirectOptions direct = options.as(DirectOptions.class);
    int pool = direct.getTargetParallelism();
    if (options.getRunner() != DirectRunner.class || pool >= needed || givenPool(options)) {
      return pool;
    }
    direct.setTargetParallelism(needed);
    LOG.info(
        "DirectRunner pool raised from {} to {} threads: the chunks of a wave are read at once",
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
