package org.lakecdc.transforms.silver;

import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.transforms.finalization.Granularity;

/**
 * What one {@link SilverApplier#apply} reads and writes (docs/behaviour.md §10.2).
 *
 * @param bronze the bronze table's path or URI, spelled as the bronze job was given it (its control
 *     row and its facts rows' {@code target} use that spelling)
 * @param silver the silver table's path or URI; created on first use
 * @param control the control table's path or URI; created on first use
 * @param facts the bronze stream's facts table, or null: without it no snapshot event can be seen,
 *     so silver's verdict is never advanced (a warning once per table)
 * @param captureInstances the capture instances whose bronze rows are this table's, lower-cased
 *     (stored lower-cased whatever the case given); at least one
 * @param keys silver's key columns, captured columns of bronze; at least one
 * @param granularity the verdict's period size
 * @param waveRows the most bronze rows one wave holds in memory (and one silver commit merges),
 *     from 1; a single source transaction larger than this is applied in several commits, its keys
 *     cut in hash partitions
 */
public record SilverSpec(
    String bronze,
    String silver,
    String control,
    @Nullable String facts,
    Set<String> captureInstances,
    List<String> keys,
    Granularity granularity,
    int waveRows) {

  /**
   * Checks and copies the components.
   *
   * @throws NullPointerException when a required component is null
   * @throws IllegalArgumentException {@code captureInstances must name at least one capture
   *     instance}, {@code keys must name at least one column}, {@code waveRows must be at least 1,
   *     not <n>}
   */
  public SilverSpec {
    Objects.requireNonNull(silver, "silver");
    captureInstances = checkedInstances(captureInstances);
    keys = checkedKeys(keys);
    checkCommon(bronze, control, granularity, waveRows);
  }

  /**
   * The capture instances lower-cased, at least one (what silver's and the history's specs share).
   *
   * @throws IllegalArgumentException {@code captureInstances must name at least one capture
   *     instance}
   */
  public static Set<String> checkedInstances(Set<String> captureInstances) {
    Set<String> lower = new LinkedHashSet<>();
    for (String instance : Objects.requireNonNull(captureInstances, "captureInstances")) {
      lower.add(instance.toLowerCase(Locale.ROOT));
    }
    if (lower.isEmpty()) {
      throw new IllegalArgumentException(
          "captureInstances must name at least one capture instance");
    }
    return Set.copyOf(lower);
  }

  /**
   * The key columns copied, at least one.
   *
   * @throws IllegalArgumentException {@code keys must name at least one column}
   */
  public static List<String> checkedKeys(List<String> keys) {
    List<String> copy = List.copyOf(Objects.requireNonNull(keys, "keys"));
    if (copy.isEmpty()) {
      throw new IllegalArgumentException("keys must name at least one column");
    }
    return copy;
  }

  /**
   * The checks of the other components both specs share.
   *
   * @throws NullPointerException when {@code bronze}, {@code control} or {@code granularity} is
   *     null
   * @throws IllegalArgumentException {@code waveRows must be at least 1, not <n>}
   */
  public static void checkCommon(
      String bronze, String control, Granularity granularity, int waveRows) {
    Objects.requireNonNull(bronze, "bronze");
    Objects.requireNonNull(control, "control");
    Objects.requireNonNull(granularity, "granularity");
    if (waveRows < 1) {
      throw new IllegalArgumentException("waveRows must be at least 1, not " + waveRows);
    }
  }
}
