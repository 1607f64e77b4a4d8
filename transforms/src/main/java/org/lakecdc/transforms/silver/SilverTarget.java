package org.lakecdc.transforms.silver;

import java.io.Serializable;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.transforms.bronze.CrashPlan;
import org.lakecdc.transforms.bronze.CrashPoint;
import org.lakecdc.transforms.delta.HadoopConf;
import org.lakecdc.transforms.finalization.Granularity;

/**
 * One silver table a pipeline keeps current after its bronze commits, as shipped to the workers
 * with {@link ApplyChangesToSilver}: the {@link SilverSpec} of its applies, plus who it belongs to
 * (the bronze target's app id) and where a failure is recorded. Serializable (every component is).
 *
 * @param appId the bronze target's app id: the key of its committed batches
 * @param bronze path or URI of the bronze table (normalized)
 * @param silver path or URI of the silver table (normalized)
 * @param control path or URI of the control table (shared with bronze)
 * @param facts path or URI of the facts table (shared with bronze): the snapshot facts of the
 *     applies, and where {@link ApplyChangesToSilver} records a failure; null for none (the applies
 *     read no snapshot facts, and a run of many tables cannot record a failure)
 * @param captureInstances the capture instances whose bronze rows are silver's, lower-cased
 * @param keys silver's key columns (captured columns, in key order; at least one)
 * @param granularity the verdict's period, bronze's
 * @param waveRows at most this many bronze rows held in memory by one wave (positive)
 * @param runStartedAt when the run started (UTC): a recorded failure's run
 * @param hadoopConf the Hadoop configuration every table is opened with, on every worker
 * @param applyInterval in a continuous pipeline ({@link ApplyChangesToSilver#following}), the
 *     longest time between two applies of this silver table while the pipeline runs (positive;
 *     {@link #DEFAULT_APPLY_INTERVAL} unless the run sets another)
 * @param crash crash tests only: a {@link CrashPlan#silver} plan, whose apply after its bronze
 *     batch throws {@link SimulatedSilverCrash} in its second wave, after the wave's Parquet file
 *     and deletion vector file are written and before its silver commit (its first wave is
 *     committed); null for none
 */
public record SilverTarget(
    String appId,
    String bronze,
    String silver,
    String control,
    @Nullable String facts,
    List<String> captureInstances,
    List<String> keys,
    Granularity granularity,
    int waveRows,
    Instant runStartedAt,
    HadoopConf hadoopConf,
    Duration applyInterval,
    @Nullable CrashPlan crash)
    implements Serializable, DerivedTarget {
  /** The default {@link #applyInterval()}: 5 seconds. */
  public static final Duration DEFAULT_APPLY_INTERVAL = Duration.ofSeconds(5);

  public SilverTarget {
    Objects.requireNonNull(bronze, "bronze");
    Objects.requireNonNull(silver, "silver");
    Objects.requireNonNull(control, "control");
    Objects.requireNonNull(granularity, "granularity");
    DerivedTarget.checkRun("Silver", silver, appId, runStartedAt, hadoopConf, applyInterval);
    captureInstances = List.copyOf(captureInstances);
    keys = List.copyOf(keys);
    if (keys.isEmpty()) {
      throw new IllegalArgumentException("Silver " + silver + " needs at least one key column");
    }
    if (waveRows < 1) {
      throw new IllegalArgumentException(
          "Silver " + silver + ": waveRows must be positive, not " + waveRows);
    }
  }

  /**
   * The same target, applied at least every {@code interval} in a continuous pipeline.
   *
   * @throws IllegalArgumentException when {@code interval} is not positive
   */
  public SilverTarget withApplyInterval(Duration interval) {
    return new SilverTarget(
        appId,
        bronze,
        silver,
        control,
        facts,
        captureInstances,
        keys,
        granularity,
        waveRows,
        runStartedAt,
        hadoopConf,
        interval,
        crash);
  }

  /** Whether this target's crash plan stops the apply after bronze batch {@code batchId}. */
  @Override
  public boolean stopsAfter(long batchId) {
    return crash != null
        && crash.stops(CrashPlan.Scope.SILVER, CrashPoint.AFTER_DATA_FILES, batchId);
  }

  /**
   * What a silver crash test throws mid-wave: the wave's files are written, its commit is not, so
   * they are left unreferenced and the next apply must read silver as if they did not exist.
   */
  public static final class SimulatedSilverCrash extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /**
     * @param silver the silver table's path
     * @param batchId the bronze batch whose apply stopped
     */
    public SimulatedSilverCrash(String silver, long batchId) {
      super(
          "Simulated crash of silver "
              + silver
              + " in the apply after batch "
              + batchId
              + ": wave files written, before the silver commit");
    }
  }

  /** The silver table's path: {@link #silver()}. */
  @Override
  public String path() {
    return silver;
  }

  /** {@code silver}. */
  @Override
  public String kind() {
    return "silver";
  }

  /**
   * A {@link SilverApplier} of this table; its counters are {@link ApplyChangesToSilver#WAVES},
   * {@link ApplyChangesToSilver#KEYS_APPLIED} and {@link ApplyChangesToSilver#REBUILDS}.
   */
  @Override
  public Applier applier() {
    SilverApplier applier = new SilverApplier(hadoopConf.tables(), java.time.Clock.systemUTC());
    SilverSpec spec = spec();
    return new Applier() {
      @Override
      public Applied apply() {
        ApplyResult result = applier.apply(spec);
        return new Applied(
            result.appliedLsn(),
            result.waves(),
            java.util.Map.of(
                ApplyChangesToSilver.WAVES,
                (long) result.waves(),
                ApplyChangesToSilver.KEYS_APPLIED,
                result.keysApplied(),
                ApplyChangesToSilver.REBUILDS,
                result.rebuilt() ? 1L : 0L));
      }

      @Override
      public void beforeWaveCommit(Runnable hook) {
        applier.beforeWaveCommit(hook);
      }
    };
  }

  /** The spec of one apply of this silver table. */
  public SilverSpec spec() {
    return spec(facts);
  }

  /** The spec of one apply, reading the snapshot facts from {@code factsPath} (null: none). */
  public SilverSpec spec(@Nullable String factsPath) {
    return new SilverSpec(
        bronze,
        silver,
        control,
        factsPath,
        Set.copyOf(captureInstances),
        keys,
        granularity,
        waveRows);
  }
}
