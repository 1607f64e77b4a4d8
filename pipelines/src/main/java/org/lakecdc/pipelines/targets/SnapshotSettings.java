package org.lakecdc.pipelines.targets;

import java.io.Serializable;
import java.util.Locale;
import org.lakecdc.pipelines.options.ChunkedSnapshotOptions;
import org.lakecdc.pipelines.options.SnapshotMode;

/**
 * How a target's snapshots are taken: {@code --snapshot}, {@code --snapshotChunkRows}, {@code
 * --chunksPerWave}, {@code --backfill} and {@code --maxWaves} (docs/options.md), validated.
 *
 * @param mode whole or chunked
 * @param chunkRows the most source rows per chunk of a new plan, at least 1
 * @param chunksPerWave chunks per wave of a new plan, at least 1
 * @param backfill whether the main job reads the open chunked snapshot's chunks beside the stream
 * @param maxWaves at most this many waves per run, 0 for no limit
 */
public record SnapshotSettings(
    Mode mode, long chunkRows, int chunksPerWave, boolean backfill, int maxWaves)
    implements Serializable {
  private static final long serialVersionUID = 1L;

  /** The snapshot modes of {@code --snapshot}. */
  public enum Mode {
    /** One whole snapshot in one bronze commit before the stream starts. */
    WHOLE,
    /** A chunked snapshot: open at S, the stream starts at S, chunks read in waves. */
    CHUNKED;

    /** The option's spelling: {@code whole} or {@code chunked}. */
    @Override
    public String toString() {
      return name().toLowerCase(Locale.ROOT);
    }
  }

  /** {@code --snapshotChunkRows}' default. */
  public static final long DEFAULT_CHUNK_ROWS = 1_000_000;

  /** {@code --chunksPerWave}' default. */
  public static final int DEFAULT_CHUNKS_PER_WAVE = 4;

  /** The command line's defaults: whole, 1,000,000 rows, 4 chunks per wave, backfill, no limit. */
  public static final SnapshotSettings DEFAULTS =
      new SnapshotSettings(Mode.WHOLE, DEFAULT_CHUNK_ROWS, DEFAULT_CHUNKS_PER_WAVE, true, 0);

  /**
   * Checks the values.
   *
   * @throws IllegalArgumentException naming the option and what it accepts
   */
  public SnapshotSettings {
    if (mode == null) {
      throw new IllegalArgumentException("--snapshot must be whole or chunked, not null");
    }
    if (chunkRows < 1) {
      throw new IllegalArgumentException(
          "--snapshotChunkRows must be a positive integer, not '" + chunkRows + "'");
    }
    if (chunksPerWave < 1) {
      throw new IllegalArgumentException(
          "--chunksPerWave must be a positive integer, not '" + chunksPerWave + "'");
    }
    if (maxWaves < 0) {
      throw new IllegalArgumentException(
          "--maxWaves must be 0 (to the end) or a positive integer, not '" + maxWaves + "'");
    }
  }

  /** Whether snapshots are chunked. */
  public boolean chunked() {
    return mode == Mode.CHUNKED;
  }

  /**
   * The settings of the options.
   *
   * @throws IllegalArgumentException naming the option and what it accepts
   */
  public static SnapshotSettings of(ChunkedSnapshotOptions o) {
    Mode mode = o.getSnapshot() == SnapshotMode.CHUNKED ? Mode.CHUNKED : Mode.WHOLE;
    return new SnapshotSettings(
        mode, o.getSnapshotChunkRows(), o.getChunksPerWave(), o.getBackfill(), o.getMaxWaves());
  }

  /** These settings in another mode. */
  public SnapshotSettings withMode(Mode other) {
    return new SnapshotSettings(other, chunkRows, chunksPerWave, backfill, maxWaves);
  }

  /** These settings with another wave limit (0: none). */
  public SnapshotSettings withMaxWaves(int waves) {
    return new SnapshotSettings(mode, chunkRows, chunksPerWave, backfill, waves);
  }
}
