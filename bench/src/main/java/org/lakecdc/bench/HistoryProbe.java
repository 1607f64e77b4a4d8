package org.lakecdc.bench;

import com.sun.management.OperatingSystemMXBean;
import java.lang.management.ManagementFactory;
import java.time.Clock;
import java.util.Locale;
import java.util.Map;
import org.lakecdc.transforms.delta.DeltaTables;
import org.lakecdc.transforms.history.HistoryApplier;
import org.lakecdc.transforms.history.HistoryResult;
import org.lakecdc.transforms.history.HistorySpec;

/**
 * The history JVM's main: per wave of {@link HistoryWaves} (the same ones the harness makes), one
 * bronze commit of the wave's update rows, then one {@link HistoryApplier#apply} of the history
 * table the harness built, timed. The first wave is the JVM's first: its time counts from before
 * the {@link DeltaTables} and the {@link HistoryApplier} are made (class loading, the first key
 * index: the cold wave); each later wave's time is its {@code apply} call only. The bronze commit
 * is not timed. Beside the wall time, the JVM's CPU time over the same span.
 *
 * <p>Every wave's result is checked: one wave applied, exactly {@code waveKeys} versions opened and
 * closed, none updated in place; otherwise it fails (exit code 1) naming the wave.
 *
 * <p>Usage: {@code HistoryProbe <bronze> <history> <control> <keys> <wave keys> <waves> <seed>}.
 * Prints one line per wave: {@code HISTORY_WAVE wave=<i> seconds=<s> cpu_seconds=<s> opened=<n>
 * closed=<n>}.
 */
public final class HistoryProbe {
  private HistoryProbe() {}

  /**
   * Runs the waves.
   *
   * @param args the bronze, history and control tables, the keys, keys per wave, waves, the seed
   * @throws IllegalStateException when a wave's result differs from the wave
   */
  public static void main(String[] args) {
    if (args.length != 7) {
      throw new IllegalArgumentException(
          "usage: HistoryProbe <bronze> <history> <control> <keys> <wave keys> <waves> <seed>");
    }
    HistorySpec spec = HistoryWaves.spec(args[0], args[1], args[2]);
    int waveKeys = Integer.parseInt(args[4]);
    HistoryWaves waves =
        new HistoryWaves(Long.parseLong(args[3]), waveKeys, Long.parseLong(args[6]));
    int count = Integer.parseInt(args[5]);
    DeltaTables bronzeWriter = DeltaTables.create();
    HistoryWaves.Wave first = waves.next();
    commit(bronzeWriter, spec.bronze(), first);
    long cpuStart = cpuNanos();
    long start = System.nanoTime();
    HistoryApplier applier = new HistoryApplier(DeltaTables.create(), Clock.systemUTC());
    run(applier, spec, first, waveKeys, start, cpuStart);
    for (int i = 2; i <= count; i++) {
      HistoryWaves.Wave wave = waves.next();
      commit(bronzeWriter, spec.bronze(), wave);
      run(applier, spec, wave, waveKeys, System.nanoTime(), cpuNanos());
    }
  }

  private static void commit(DeltaTables tables, String bronze, HistoryWaves.Wave wave) {
    tables.append(bronze, HistoryWaves.BRONZE, wave.bronze(), null, 0, Map.of());
  }

  /** The CPU time of every thread of this JVM so far (GC and JIT included), in nanoseconds. */
  private static long cpuNanos() {
    return ((OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
        .getProcessCpuTime();
  }

  private static void run(
      HistoryApplier applier,
      HistorySpec spec,
      HistoryWaves.Wave wave,
      int waveKeys,
      long start,
      long cpuStart) {
    HistoryResult r = applier.apply(spec);
    double seconds = (System.nanoTime() - start) / 1e9;
    double cpuSeconds = (cpuNanos() - cpuStart) / 1e9;
    if (r.waves() != 1
        || r.opened() != waveKeys
        || r.closed() != waveKeys
        || r.updatedInPlace() != 0) {
      throw new IllegalStateException(
          String.format(
              Locale.ROOT,
              "history wave %d of %s: %s, expected one wave opening and closing %d versions",
              wave.number(),
              spec.history(),
              r,
              waveKeys));
    }
    System.out.println(
        String.format(
            Locale.ROOT,
            "HISTORY_WAVE wave=%d seconds=%s cpu_seconds=%s opened=%d closed=%d",
            wave.number(),
            seconds,
            cpuSeconds,
            r.opened(),
            r.closed()));
  }
}
