package org.lakecdc.transforms.history;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.transforms.bronze.CrashPlan;
import org.lakecdc.transforms.bronze.CrashPoint;
import org.lakecdc.transforms.delta.HadoopConf;
import org.lakecdc.transforms.finalization.Granularity;
import org.lakecdc.transforms.silver.ApplyChangesToSilver;
import org.lakecdc.transforms.silver.DerivedTarget;
import org.lakecdc.transforms.silver.SilverSpec;

/**
 * One history table a pipeline keeps current after its bronze commits, as shipped to the workers
 * with {@link ApplyChangesToSilver} (beside, or instead of, the table's silver): the {@link
 * HistorySpec} of its applies, plus who it belongs to (the bronze target's app id) and where a
 * failure is recorded. Serializable (every component is).
 *
 * @param appId the bronze target's app id: the key of its committed batches
 * @param bronze path or URI of the bronze table (normalized)
 * @param history path or URI of the history table (normalized)
 * @param control path or URI of the control table (shared with bronze)
 * @param facts path or URI of the facts table (shared with bronze), or null for none
 * @param captureInstances the capture instances whose bronze rows are the history's, lower-cased
 * @param keys the key columns (captured columns, in key order; at least one)
 * @param historyColumns the tracked columns; empty for all
 * @param granularity the verdict's period, bronze's
 * @param waveRows at most this many bronze rows held in memory by one wave (positive)
 * @param runStartedAt when the run started (UTC): a recorded failure's run
 * @param hadoopConf the Hadoop configuration every table is opened with, on every worker
 * @param applyInterval in a continuous pipeline, the longest time between two applies (positive)
 * @param crash crash tests only: a {@link CrashPlan#history} plan, whose apply after its bronze
 *     batch stops in its second wave (before or right after its commit); null otherwise
 */
public record HistoryTarget(
    String appId,
    String bronze,
    String history,
    String control,
    @Nullable String facts,
    List<String> captureInstances,
    List<String> keys,
    List<String> historyColumns,
    Granularity granularity,
    int waveRows,
    Instant runStartedAt,
    HadoopConf hadoopConf,
    Duration applyInterval,
    @Nullable CrashPlan crash)
    implements DerivedTarget {
  /** Counter of the history commits (namespace {@code lakecdc.table.<appId>}). */
  public static final String WAVES = "history_waves";

  /** Counter of the versions opened. */
  public static final String OPENED = "history_versions_opened";

  /** Counter of the versions closed. */
  public static final String CLOSED = "history_versions_closed";

  /** Counter of the versions updated in place (only untracked columns changed). */
  public static final String UPDATED_IN_PLACE = "history_updated_in_place";

  /**
   * Checks and copies the components.
   *
   * @throws NullPointerException when a required component is null
   * @throws IllegalArgumentException when {@code applyInterval} is not positive (and as {@link
   *     HistorySpec} refuses its components)
   */
  public HistoryTarget {
    DerivedTarget.checkRun("History", history, appId, runStartedAt, hadoopConf, applyInterval);
    captureInstances = List.copyOf(captureInstances);
    keys = List.copyOf(keys);
    historyColumns = List.copyOf(historyColumns);
    // The spec's checks, before the target is shipped (the fields are not assigned yet here).
    SilverSpec.checkCommon(bronze, control, granularity, waveRows);
    SilverSpec.checkedInstances(Set.copyOf(captureInstances));
    SilverSpec.checkedKeys(keys);
    Objects.requireNonNull(history, "history");
  }

  /** The spec of one apply of this history table. */
  public HistorySpec spec() {
    return new HistorySpec(
        bronze,
        history,
        control,
        facts,
        Set.copyOf(captureInstances),
        keys,
        historyColumns,
        granularity,
        waveRows);
  }

  /** The history table's path: {@link #history()}. */
  @Override
  public String path() {
    return history;
  }

  /** {@code history}. */
  @Override
  public String kind() {
    return "history";
  }

  /**
   * Whether this target's crash plan stops the apply after bronze batch {@code batchId} in its
   * second wave (before or right after its commit, as {@link CrashPlan#history} says).
   */
  @Override
  public boolean stopsAfter(long batchId) {
    return crash != null
        && (crash.stops(CrashPlan.Scope.HISTORY, CrashPoint.AFTER_DATA_FILES, batchId)
            || crash.stops(
                CrashPlan.Scope.HISTORY_COMMITTED, CrashPoint.AFTER_DATA_FILES, batchId));
  }

  /**
   * A {@link HistoryApplier} of this table; its counters are {@link #WAVES}, {@link #OPENED},
   * {@link #CLOSED} and {@link #UPDATED_IN_PLACE}.
   */
  @Override
  public Applier applier() {
    HistoryApplier applier = new HistoryApplier(hadoopConf.tables(), Clock.systemUTC());
    HistorySpec spec = spec();
    return new Applier() {
      @Override
      public Applied apply() {
        HistoryResult result = applier.apply(spec);
        return new Applied(
            result.appliedLsn(),
            result.waves(),
            Map.of(
                WAVES,
                (long) result.waves(),
                OPENED,
                result.opened(),
                CLOSED,
                result.closed(),
                UPDATED_IN_PLACE,
                result.updatedInPlace()));
      }

      /**
       * Runs {@code hook} before each wave's commit, or right after each commit when this target's
       * crash plan stops after the commit.
       */
      @Override
      public void beforeWaveCommit(Runnable hook) {
        if (crash != null && crash.scope() == CrashPlan.Scope.HISTORY_COMMITTED) {
          applier.hook(
              point -> {
                if (point.equals("committed")) {
                  hook.run();
                }
              });
        } else {
          applier.beforeWaveCommit(hook);
        }
      }
    };
  }
}
