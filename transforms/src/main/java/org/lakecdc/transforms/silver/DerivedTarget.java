package org.lakecdc.transforms.silver;

import java.io.Serializable;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Objects;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.transforms.delta.HadoopConf;

/**
 * A table a pipeline keeps from bronze after the bronze commits of its table, applied in waves by
 * {@link ApplyChangesToSilver}: a silver table ({@link SilverTarget}) or a history table ({@code
 * org.lakecdc.transforms.history.HistoryTarget}). Each apply reads bronze from the table's own
 * position (its domain metadata), so it is idempotent and a crash anywhere is repaired by the next
 * apply. Serializable: shipped to the workers with the transform.
 */
public interface DerivedTarget extends Serializable {
  /** The bronze target's app id: the key of its committed batches and chunks. */
  String appId();

  /** Path or URI of the bronze table (normalized). */
  String bronze();

  /** Path or URI of the derived table (normalized); unique among the targets of one pipeline. */
  String path();

  /**
   * The table's kind as the words of messages and counters use it: {@code silver} or {@code
   * history}.
   */
  String kind();

  /**
   * Path or URI of the facts table shared with bronze: snapshot facts, and where a failure is
   * recorded; null for none.
   */
  @Nullable String facts();

  /** When the run started (UTC): a recorded failure's run. */
  Instant runStartedAt();

  /** The Hadoop configuration every table is opened with, on every worker. */
  HadoopConf hadoopConf();

  /**
   * In a continuous pipeline, the longest time between two applies of this table while the pipeline
   * runs (positive).
   */
  Duration applyInterval();

  /**
   * Crash tests only: whether the apply after bronze batch {@code batchId} stops in its second wave
   * (after the wave's files, before its commit) with a {@link SilverTarget.SimulatedSilverCrash}.
   */
  boolean stopsAfter(long batchId);

  /**
   * A new applier of this table; one per worker's {@code DoFn} instance (it caches the key index).
   */
  Applier applier();

  /**
   * The checks every derived target's constructor makes of its run components, before it is
   * shipped.
   *
   * @param kind the kind as messages start with it: {@code Silver} or {@code History}
   * @param path the derived table's path, for the message
   * @throws NullPointerException when {@code appId}, {@code runStartedAt}, {@code hadoopConf} or
   *     {@code applyInterval} is null (naming it)
   * @throws IllegalArgumentException when {@code applyInterval} is not positive: {@code <kind>
   *     <path>: applyInterval must be positive, not <interval>}
   */
  static void checkRun(
      String kind,
      @Nullable String path,
      String appId,
      Instant runStartedAt,
      HadoopConf hadoopConf,
      Duration applyInterval) {
    Objects.requireNonNull(appId, "appId");
    Objects.requireNonNull(runStartedAt, "runStartedAt");
    Objects.requireNonNull(hadoopConf, "hadoopConf");
    Objects.requireNonNull(applyInterval, "applyInterval");
    if (applyInterval.isNegative() || applyInterval.isZero()) {
      throw new IllegalArgumentException(
          kind + " " + path + ": applyInterval must be positive, not " + applyInterval);
    }
  }

  /** One table's applier. */
  interface Applier {
    /**
     * Brings the table up to what bronze holds now.
     *
     * @return the position reached and the counters of this apply
     * @throws RuntimeException when the apply fails (nothing of the failed wave is committed)
     */
    Applied apply();

    /** Crash tests only: runs {@code hook} before each wave's commit ({@code () -> {}}: none). */
    void beforeWaveCommit(Runnable hook);
  }

  /**
   * One apply's outcome.
   *
   * @param appliedLsn the table's position after the apply (bronze LSN text), or null when nothing
   *     was ever applied
   * @param waves the commits this apply made
   * @param counters counter name (namespace {@code lakecdc.table.<appId>}) to the amount this apply
   *     adds
   */
  record Applied(@Nullable String appliedLsn, int waves, Map<String, Long> counters) {
    public Applied {
      counters = Map.copyOf(counters);
    }
  }
}
