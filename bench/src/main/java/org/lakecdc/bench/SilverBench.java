package org.lakecdc.bench;

import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Stream;
import org.lakecdc.transforms.delta.DeltaTables;
import org.lakecdc.transforms.silver.SilverMerge;
import org.lakecdc.transforms.silver.SilverTable;
import org.lakecdc.transforms.silver.WaveResult;

/**
 * The silver measurements (docs/performance.md "Silver"): a silver table of {@code rows} rows and
 * one of {@code smallRows} rows, each built in the harness's JVM with {@link
 * SilverMerge#replaceAll} from {@link SilverWaves}' rows in key order, then {@code 2 + waves} waves
 * of {@code waveKeys} keys merged into each by a {@link SilverProbe} JVM of its own (its first wave
 * is the cold wave, its second a warm-up, the rest the warm waves measured); and delta-spark's
 * MERGE of the same waves into a copy of the large table as it was built, in a {@code
 * DeltaSparkMerge} JVM.
 *
 * <p>The answers are checked before any figure is given: every silver wave's counts ({@link
 * SilverProbe}), each silver table's row count (Parquet footers less deletion vectors, Kernel's
 * public API) against the generator's, delta-spark's row count of its table and of silver against
 * it, and the two tables' rows equal as multisets (equal digests: sums of a 64-bit hash of each
 * row).
 */
final class SilverBench {
  /** The waves' seed. */
  static final long SEED = 11;

  /** Waves before the measured ones: the cold wave and a warm-up wave. */
  static final int UNMEASURED = 2;

  /**
   * The figures, in seconds.
   *
   * @param waveSeconds median of the large table's warm waves
   * @param coldSeconds the large table's first wave in a fresh JVM
   * @param smallWaveSeconds median of the small table's warm waves
   * @param deltaSparkSeconds median of delta-spark's MERGE of the same warm waves; NaN when skipped
   * @param waveCpuSeconds median of the large table's warm waves' CPU time (the silver JVM's)
   * @param smallWaveCpuSeconds median of the small table's warm waves' CPU time
   */
  record Result(
      double waveSeconds,
      double coldSeconds,
      double smallWaveSeconds,
      double deltaSparkSeconds,
      double waveCpuSeconds,
      double smallWaveCpuSeconds) {}

  /** A silver JVM's waves: wall and CPU seconds of each, in wave order. */
  record Waves(List<Double> seconds, List<Double> cpuSeconds) {}

  private final Path benchDir;
  private final Path run;
  private final PrintStream out;
  private final String heap;
  private final Path jfr;

  /**
   * A measurement in a run directory.
   *
   * @param benchDir the bench module's directory
   * @param run the run directory (tables, wave files, logs)
   * @param heap the silver JVMs' {@code -Xmx}
   * @param jfr where the large table's silver JVM writes a flight recording of its warm waves, or
   *     null for none
   * @param out where progress lines go
   */
  SilverBench(Path benchDir, Path run, String heap, Path jfr, PrintStream out) {
    this.benchDir = benchDir;
    this.run = run;
    this.heap = heap;
    this.jfr = jfr;
    this.out = out;
  }

  /**
   * Builds the tables, runs the waves, checks the answers.
   *
   * @param rows the large table's rows
   * @param smallRows the small table's rows
   * @param waveKeys keys per wave
   * @param waves warm waves measured (at least 1)
   * @param deltaSpark whether delta-spark's MERGE runs too
   * @return the figures
   * @throws IllegalStateException when a JVM fails or an answer is wrong (naming it)
   */
  Result measure(long rows, long smallRows, int waveKeys, int waves, boolean deltaSpark)
      throws InterruptedException {
    int total = UNMEASURED + waves;
    Path large = run.resolve("silver-large");
    Path copy = run.resolve("deltaspark-large");
    Path waveDir = run.resolve("waves");
    build(large, rows, waveKeys);
    if (deltaSpark) {
      copyTable(large, copy);
    }
    long expected = writeWaves(rows, waveKeys, total, deltaSpark ? waveDir : null);
    Waves big = waves(large, rows, waveKeys, total, "large");
    checkRows(large, expected);

    Path small = run.resolve("silver-small");
    build(small, smallRows, waveKeys);
    long expectedSmall = writeWaves(smallRows, waveKeys, total, null);
    Waves little = waves(small, smallRows, waveKeys, total, "small");
    checkRows(small, expectedSmall);

    double spark = Double.NaN;
    if (deltaSpark) {
      DeltaSparkAnchor.MergeResult m =
          DeltaSparkAnchor.merge(
              benchDir,
              copy,
              waveDir,
              total,
              SilverWaves.KEYS,
              large,
              run.resolve("deltaspark-merge-output.log"));
      if (m.rows() != expected || m.silverRows() != expected || !m.sameRows()) {
        throw new IllegalStateException(
            String.format(
                Locale.ROOT,
                "after %d waves delta-spark's MERGE left %d rows and reads %d in silver (expected"
                    + " %d); the two tables' rows are %s; see %s",
                total,
                m.rows(),
                m.silverRows(),
                expected,
                m.sameRows() ? "the same" : "not the same",
                run.resolve("deltaspark-merge-output.log")));
      }
      spark = Bench.median(m.seconds().subList(UNMEASURED, total));
      out.printf(
          Locale.ROOT,
          "  %-24s MERGE per wave: %s s; both tables hold the same %,d rows%n",
          "deltaspark merge",
          seconds(m.seconds()),
          expected);
    }
    return new Result(
        Bench.median(big.seconds().subList(UNMEASURED, total)),
        big.seconds().get(0),
        Bench.median(little.seconds().subList(UNMEASURED, total)),
        spark,
        Bench.median(big.cpuSeconds().subList(UNMEASURED, total)),
        Bench.median(little.cpuSeconds().subList(UNMEASURED, total)));
  }

  /** Creates silver at {@code path} and fills it with the generator's initial rows. */
  private void build(Path path, long rows, int waveKeys) {
    long start = System.nanoTime();
    DeltaTables tables = DeltaTables.create();
    tables.createIfAbsent(path.toString(), SilverTable.definition(SilverWaves.SCHEMA));
    WaveResult r =
        new SilverMerge(tables)
            .replaceAll(
                path.toString(),
                SilverWaves.KEYS,
                new SilverWaves(rows, waveKeys, SEED).initialRows(),
                SilverProbe.APP_ID,
                0,
                Map.of());
    if (r.inserted() != rows) {
      throw new IllegalStateException(
          "silver's replaceAll wrote " + r.inserted() + " rows of " + rows + " into " + path);
    }
    checkRows(path, rows);
    out.printf(
        Locale.ROOT,
        "  %-24s %,d rows built in %.1f s (replaceAll, %d files)%n",
        "silver " + path.getFileName(),
        rows,
        (System.nanoTime() - start) / 1e9,
        dataFiles(path));
  }

  /**
   * Makes the waves as {@link SilverProbe} will, writing each to {@code <dir>/wave-<i>.parquet}
   * when {@code dir} is given.
   *
   * @return the rows silver holds after them
   */
  static long writeWaves(long rows, int waveKeys, int total, Path dir) {
    SilverWaves waves = new SilverWaves(rows, waveKeys, SEED);
    for (int i = 1; i <= total; i++) {
      SilverWaves.Wave w = waves.next();
      if (dir != null) {
        WaveFile.write(SilverWaves.SCHEMA, w.images(), dir.resolve("wave-" + i + ".parquet"));
      }
    }
    return waves.liveRows();
  }

  /** Runs the waves in a {@link SilverProbe} JVM; returns each wave's wall and CPU seconds. */
  private Waves waves(Path table, long rows, int waveKeys, int total, String label)
      throws InterruptedException {
    Path target = benchDir.resolve("target");
    List<String> args =
        new ArrayList<>(
            List.of(
                table.toString(),
                String.valueOf(rows),
                String.valueOf(waveKeys),
                String.valueOf(total),
                String.valueOf(SEED)));
    if (jfr != null && label.equals("large")) {
      args.add(jfr.toString());
    }
    ChildJvm jvm =
        ChildJvm.start(
            ChildJvm.classpath(target.resolve("job-classpath.txt"), target.resolve("classes")),
            List.of("-Xmx" + heap),
            SilverProbe.class.getName(),
            args,
            run.resolve("silver-" + label + "-output.log"));
    Waves timed = timings(jvm, "SILVER_WAVE", total, "silver");
    List<Double> seconds = timed.seconds();
    List<Double> cpu = timed.cpuSeconds();
    out.printf(
        Locale.ROOT,
        "  %-24s %d waves of %,d keys into %,d rows: %s s, CPU %s s (first: a fresh JVM's)%n",
        "silver " + label,
        total,
        waveKeys,
        rows,
        seconds(seconds),
        seconds(cpu));
    return new Waves(seconds, cpu);
  }

  /**
   * Waits for a wave JVM and reads its {@code <prefix> wave=<i> seconds=<s> cpu_seconds=<s> ...}
   * lines.
   *
   * @throws IllegalStateException when the JVM fails or prints another number of timings than
   *     {@code total}
   */
  static Waves timings(ChildJvm jvm, String prefix, int total, String what)
      throws InterruptedException {
    jvm.await(6 * 3600);
    List<Double> seconds = new ArrayList<>();
    List<Double> cpu = new ArrayList<>();
    for (String line : DeltaSparkAnchor.lines(jvm.log())) {
      if (line.startsWith(prefix + " ")) {
        String[] f = line.split(" ");
        seconds.add(Double.parseDouble(DeltaSparkAnchor.value(f[2], "seconds")));
        cpu.add(Double.parseDouble(DeltaSparkAnchor.value(f[3], "cpu_seconds")));
      }
    }
    if (seconds.size() != total) {
      throw new IllegalStateException(
          "the "
              + what
              + " JVM printed "
              + seconds.size()
              + " wave timings of "
              + total
              + "; see "
              + jvm.log());
    }
    return new Waves(seconds, cpu);
  }

  /** Checks silver's row count (footers less deletion vectors). */
  private static void checkRows(Path table, long expected) {
    long rows = new BronzeTable(table).rows();
    if (rows != expected) {
      throw new IllegalStateException(
          "silver table " + table + " holds " + rows + " rows, not the expected " + expected);
    }
  }

  private static long dataFiles(Path table) {
    try (Stream<Path> files = Files.list(table)) {
      return files.filter(p -> p.getFileName().toString().endsWith(".parquet")).count();
    } catch (IOException e) {
      return -1;
    }
  }

  /** Copies a table's directory tree (its paths are relative, so the copy is the same table). */
  static void copyTable(Path from, Path to) {
    SourceDatabase.delete(to);
    try (Stream<Path> paths = Files.walk(from)) {
      for (Path p : (Iterable<Path>) paths::iterator) {
        Path target = to.resolve(from.relativize(p).toString());
        if (Files.isDirectory(p)) {
          Files.createDirectories(target);
        } else {
          Files.copy(p, target);
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot copy " + from + " to " + to, e);
    }
  }

  /** The values with two decimals, comma-separated. */
  static String seconds(List<Double> values) {
    List<String> text = new ArrayList<>();
    for (double v : values) {
      text.add(String.format(Locale.ROOT, "%.2f", v));
    }
    return String.join(", ", text);
  }
}
