package org.lakecdc.transforms.history;

import java.util.List;
import java.util.Objects;
import java.util.Set;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.transforms.finalization.Granularity;
import org.lakecdc.transforms.silver.SilverSpec;

/**
 * What one {@link HistoryApplier#apply} reads and writes.
 *
 * @param bronze the bronze table's path or URI, spelled as the bronze job was given it
 * @param history the history table's path or URI; created on first use
 * @param control the control table's path or URI; created on first use
 * @param facts the bronze stream's facts table, or null: without it no snapshot event can be seen
 *     and the verdict is never advanced
 * @param captureInstances the capture instances whose bronze rows are this table's (lower-cased)
 * @param keys the key columns, captured columns of bronze; at least one
 * @param historyColumns the tracked columns: a change that leaves all of them as they were updates
 *     the current version in place; empty for all columns
 * @param granularity the verdict's period size
 * @param waveRows the most bronze rows one wave holds in memory, from 1
 */
public record HistorySpec(
    String bronze,
    String history,
    String control,
    @Nullable String facts,
    Set<String> captureInstances,
    List<String> keys,
    List<String> historyColumns,
    Granularity granularity,
    int waveRows) {

  /**
   * Checks and copies the components.
   *
   * @throws NullPointerException when a required component is null
   * @throws IllegalArgumentException when no capture instance or key is given, or {@code waveRows}
   *     is below 1
   */
  public HistorySpec {
    Objects.requireNonNull(history, "history");
    captureInstances = SilverSpec.checkedInstances(captureInstances);
    keys = SilverSpec.checkedKeys(keys);
    historyColumns = List.copyOf(Objects.requireNonNull(historyColumns, "historyColumns"));
    SilverSpec.checkCommon(bronze, control, granularity, waveRows);
  }
}
