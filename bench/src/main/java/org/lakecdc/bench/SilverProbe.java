package org.lakecdc.bench;

import com.sun.management.OperatingSystemMXBean;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.text.ParseException;
import java.util.Locale;
import java.util.Map;
import jdk.jfr.Configuration;
import jdk.jfr.Recording;
import org.lakecdc.transforms.delta.DeltaTables;
import org.lakecdc.transforms.silver.SilverMerge;
import org.lakecdc.transforms.silver.WaveResult;

/**
 * The silver JVM's main: merges the benchmark's waves ({@link SilverWaves}, the same ones the
 * harness makes) into a silver table built from the same generator, one {@link SilverMerge#merge}
 * per wave with app id {@value #APP_ID} and the wave number as transaction version. The first wave
 * is the JVM's first: its time counts from before the {@link DeltaTables} and the {@link
 * SilverMerge} are made (class loading, the engine's first key index: the cold wave); each later
 * wave's time is its {@code merge} call only. Each wave's images are made before its clock starts.
 * Beside the wall time, the JVM's CPU time over the same span (all its threads: GC and JIT
 * included), which a machine shared with other jobs changes less than the wall time.
 *
 * <p>Every wave's result is checked against the generator: a commit, and exactly the wave's
 * updates, deletes and inserts as {@link WaveResult#updated()}, {@link WaveResult#deleted()} and
 * {@link WaveResult#inserted()}; otherwise it fails (exit code 1) naming the wave.
 *
 * <p>Usage: {@code SilverProbe <table> <rows> <wave keys> <waves> <seed> [<jfr file>]}. With a JFR
 * file, a flight recording (JDK's {@code profile} settings) covers the warm waves (from the third
 * on) and is written there. Prints one line per wave: {@code SILVER_WAVE wave=<i> seconds=<s>
 * cpu_seconds=<s> inserted=<n> updated=<n> deleted=<n> files=<touched>}.
 */
public final class SilverProbe {
  /** Silver's transaction app id (SILVER-API.md). */
  static final String APP_ID = "lakecdc-silver";

  private SilverProbe() {}

  /**
   * Runs the waves.
   *
   * @param args the silver table, its initial rows, keys per wave, waves, the seed
   * @throws IllegalStateException when a wave's result differs from the wave
   * @throws IOException when the flight recording cannot be written
   * @throws ParseException when the JDK's {@code profile} settings cannot be read
   */
  public static void main(String[] args) throws IOException, ParseException {
    if (args.length != 5 && args.length != 6) {
      throw new IllegalArgumentException(
          "usage: SilverProbe <table> <rows> <wave keys> <waves> <seed> [<jfr file>]");
    }
    String table = args[0];
    SilverWaves waves =
        new SilverWaves(
            Long.parseLong(args[1]), Integer.parseInt(args[2]), Long.parseLong(args[4]));
    int count = Integer.parseInt(args[3]);
    SilverWaves.Wave first = waves.next();
    long cpuStart = cpuNanos();
    long start = System.nanoTime();
    SilverMerge merge = new SilverMerge(DeltaTables.create());
    run(merge, table, first, start, cpuStart);
    Recording recording = null;
    for (int i = 2; i <= count; i++) {
      SilverWaves.Wave wave = waves.next();
      if (i == SilverBench.UNMEASURED + 1 && args.length == 6) {
        recording = new Recording(Configuration.getConfiguration("profile"));
        recording.start();
      }
      run(merge, table, wave, System.nanoTime(), cpuNanos());
    }
    if (recording != null) {
      recording.stop();
      recording.dump(Path.of(args[5]));
      recording.close();
    }
  }

  /** The CPU time of every thread of this JVM so far (GC and JIT included), in nanoseconds. */
  private static long cpuNanos() {
    return ((OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
        .getProcessCpuTime();
  }

  private static void run(
      SilverMerge merge, String table, SilverWaves.Wave wave, long start, long cpuStart) {
    WaveResult r =
        merge.merge(table, SilverWaves.KEYS, wave.images(), APP_ID, wave.number(), Map.of());
    double seconds = (System.nanoTime() - start) / 1e9;
    double cpuSeconds = (cpuNanos() - cpuStart) / 1e9;
    if (!r.committed()
        || r.updated() != wave.updates()
        || r.deleted() != wave.deletes()
        || r.inserted() != wave.inserts()) {
      throw new IllegalStateException(
          String.format(
              Locale.ROOT,
              "silver wave %d of %s: %s, expected a commit of %d updates, %d deletes and %d"
                  + " inserts",
              wave.number(),
              table,
              r,
              wave.updates(),
              wave.deletes(),
              wave.inserts()));
    }
    System.out.println(
        String.format(
            Locale.ROOT,
            "SILVER_WAVE wave=%d seconds=%s cpu_seconds=%s inserted=%d updated=%d deleted=%d"
                + " files=%d",
            wave.number(),
            seconds,
            cpuSeconds,
            r.inserted(),
            r.updated(),
            r.deleted(),
            r.filesTouched()));
  }
}
