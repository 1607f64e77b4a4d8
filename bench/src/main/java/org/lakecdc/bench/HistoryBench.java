package org.lakecdc.bench;

import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import org.lakecdc.transforms.delta.CommitResult;
import org.lakecdc.transforms.delta.DataFileAction;
import org.lakecdc.transforms.delta.DeltaTables;
import org.lakecdc.transforms.history.HistoryPosition;
import org.lakecdc.transforms.history.HistoryTable;
import org.lakecdc.transforms.silver.SilverImage;

/**
 * The history measurement (docs/performance.md "History"): a history table of {@code keys} keys
 * with {@value HistoryWaves#VERSIONS} versions each, built in the harness's JVM in one commit at
 * the position of its last version (as if applied from bronze up to there), then {@code 2 + waves}
 * waves of {@code waveKeys} updates, each committed to bronze and applied by a {@link HistoryProbe}
 * JVM of its own (its first wave is the cold wave, its second a warm-up, the rest the warm waves
 * measured); and delta-spark doing the same SCD2 update of a copy of the table as built, in a
 * {@code DeltaSparkHistoryMerge} JVM: per wave a {@code MERGE} closing the matched current
 * versions, then an {@code INSERT} of the new ones.
 *
 * <p>The answers are checked before any figure is given: every wave's counts ({@link
 * HistoryProbe}), the history's row count (Parquet footers less deletion vectors) against {@code
 * keys × 5 + waves × waveKeys}, delta-spark's row count of its table and of the history, and the
 * two tables' rows equal as multisets (equal digests), so every key's versions, current ones
 * included, are the same.
 */
final class HistoryBench {
  /** The waves' seed. */
  static final long SEED = 13;

  /**
   * The figures, in seconds.
   *
   * @param waveSeconds median of the warm waves
   * @param coldSeconds the first wave in a fresh JVM
   * @param deltaSparkSeconds median of delta-spark's MERGE and INSERT of the same warm waves; NaN
   *     when skipped
   */
  record Result(double waveSeconds, double coldSeconds, double deltaSparkSeconds) {}

  private final Path benchDir;
  private final Path run;
  private final PrintStream out;
  private final String heap;

  /**
   * A measurement in a run directory.
   *
   * @param benchDir the bench module's directory
   * @param run the run directory (tables, wave files, logs)
   * @param heap the history JVM's {@code -Xmx}
   * @param out where progress lines go
   */
  HistoryBench(Path benchDir, Path run, String heap, PrintStream out) {
    this.benchDir = benchDir;
    this.run = run;
    this.heap = heap;
    this.out = out;
  }

  /**
   * The history figures of a run: {@code history_wave_s} (median of the warm waves of 1% of {@code
   * --historyKeys} keys), {@code history_cold_wave_s}, and unless {@code deltasparkmerge} is
   * skipped {@code deltaspark_history_merge_s} and {@code history_vs_deltaspark_merge} (its ratio
   * to {@code history_wave_s}).
   */
  static void figures(BenchRun context) throws InterruptedException {
    long keys = Bench.historyKeys(context.options);
    int waveKeys = (int) Math.max(1, keys / 100);
    int waves = context.options.getHistoryWaves();
    boolean spark = !context.skip.contains("deltasparkmerge");
    Result r =
        new HistoryBench(
                context.benchDir,
                context.newRunDir("history"),
                context.options.getJobHeap(),
                context.out)
            .measure(keys, waveKeys, waves, spark);
    String what =
        String.format(
            Locale.ROOT,
            "median of %d warm waves of %,d keys into %,d keys x %d versions",
            waves,
            waveKeys,
            keys,
            HistoryWaves.VERSIONS);
    context.figures.put("history_wave_s", r.waveSeconds());
    context.row("history, " + what, r.waveSeconds(), "s", r.waveSeconds(), "s");
    if (spark) {
      context.figures.put("deltaspark_history_merge_s", r.deltaSparkSeconds());
      context.figures.put("history_vs_deltaspark_merge", r.deltaSparkSeconds() / r.waveSeconds());
      context.row(
          "delta-spark 3.3 SCD2 MERGE + INSERT, the same waves, Spark local[2]",
          r.deltaSparkSeconds(),
          "s",
          r.deltaSparkSeconds() / r.waveSeconds(),
          "x history's time");
    }
    context.figures.put("history_cold_wave_s", r.coldSeconds());
    context.row(
        String.format(Locale.ROOT, "history, a fresh JVM's first wave into %,d keys", keys),
        r.coldSeconds(),
        "s",
        r.coldSeconds(),
        "s");
  }

  /**
   * Builds the table, runs the waves, checks the answers.
   *
   * @param keys the history's keys
   * @param waveKeys keys per wave
   * @param waves warm waves measured (at least 1)
   * @param deltaSpark whether delta-spark's MERGE runs too
   * @return the figures
   * @throws IllegalStateException when a JVM fails or an answer is wrong (naming it)
   */
  Result measure(long keys, int waveKeys, int waves, boolean deltaSpark)
      throws InterruptedException {
    int total = SilverBench.UNMEASURED + waves;
    Path history = run.resolve("history");
    Path bronze = run.resolve("bronze");
    Path copy = run.resolve("deltaspark-history");
    Path waveDir = run.resolve("waves");
    build(bronze, history, keys, waveKeys);
    if (deltaSpark) {
      SilverBench.copyTable(history, copy);
      HistoryWaves generator = new HistoryWaves(keys, waveKeys, SEED);
      for (int i = 1; i <= total; i++) {
        HistoryWaves.Wave w = generator.next();
        WaveFile.write(
            HistoryWaves.SCHEMA,
            w.opened().stream().map(row -> new SilverImage(row, false)).toList(),
            waveDir.resolve("wave-" + i + ".parquet"));
      }
    }
    long expected = new HistoryWaves(keys, waveKeys, SEED).rowsAfter(total);
    SilverBench.Waves timed = waves(bronze, history, keys, waveKeys, total);
    long rows = new BronzeTable(history).rows();
    if (rows != expected) {
      throw new IllegalStateException(
          "history table " + history + " holds " + rows + " rows, not the expected " + expected);
    }
    double spark = Double.NaN;
    if (deltaSpark) {
      Path log = run.resolve("deltaspark-history-output.log");
      DeltaSparkAnchor.MergeResult m =
          DeltaSparkAnchor.historyMerge(
              benchDir, copy, waveDir, total, HistoryWaves.KEYS, history, log);
      if (m.rows() != expected || m.silverRows() != expected || !m.sameRows()) {
        throw new IllegalStateException(
            String.format(
                Locale.ROOT,
                "after %d waves delta-spark's MERGE and INSERT left %d rows and read %d in the"
                    + " history (expected %d); the two tables' rows are %s; see %s",
                total,
                m.rows(),
                m.silverRows(),
                expected,
                m.sameRows() ? "the same" : "not the same",
                log));
      }
      spark = Bench.median(m.seconds().subList(SilverBench.UNMEASURED, total));
      out.printf(
          Locale.ROOT,
          "  %-24s MERGE + INSERT per wave: %s s; both tables hold the same %,d rows%n",
          "deltaspark history",
          SilverBench.seconds(m.seconds()),
          expected);
    }
    return new Result(
        Bench.median(timed.seconds().subList(SilverBench.UNMEASURED, total)),
        timed.seconds().get(0),
        spark);
  }

  /**
   * Creates an empty bronze table and the history at {@code history} holding the generator's
   * versions (the closed ones and the current ones in files apart), in one commit with the position
   * of their last LSN.
   */
  private void build(Path bronze, Path history, long keys, int waveKeys) {
    long start = System.nanoTime();
    DeltaTables tables = DeltaTables.create();
    tables.createIfAbsent(
        bronze.toString(),
        org.lakecdc.transforms.bronze.BronzeTable.definition(HistoryWaves.changeSchema()));
    tables.createIfAbsent(
        history.toString(),
        HistoryTable.definition(
            HistoryWaves.SCHEMA, bronze.toString(), Set.of(HistoryWaves.INSTANCE), List.of()));
    HistoryPosition position =
        new HistoryPosition(HistoryWaves.lsn(HistoryWaves.VERSIONS - 1), null, 1);
    HistoryWaves generator = new HistoryWaves(keys, waveKeys, SEED);
    // The closed versions and the current ones in files apart, as the history's waves write them.
    List<DataFileAction> files = new ArrayList<>();
    for (boolean current : new boolean[] {false, true}) {
      files.addAll(
          tables.writeDataFiles(
              history.toString(), HistoryWaves.SCHEMA, () -> generator.initialRows(current)));
    }
    CommitResult r =
        tables
            .deletionVectors()
            .commitDeletionVectors(
                history.toString(),
                tables.version(history.toString()),
                null,
                List.of(),
                files,
                HistoryPosition.APP_ID,
                position.wave(),
                position.domainMetadata());
    long rows = new BronzeTable(history).rows();
    if (rows != generator.rowsAfter(0)) {
      throw new IllegalStateException(
          "the history "
              + history
              + " was built with "
              + rows
              + " rows, not "
              + generator.rowsAfter(0)
              + " ("
              + r
              + ")");
    }
    out.printf(
        Locale.ROOT,
        "  %-24s %,d keys x %d versions built in %.1f s%n",
        "history",
        keys,
        HistoryWaves.VERSIONS,
        (System.nanoTime() - start) / 1e9);
  }

  /** Runs the waves in a {@link HistoryProbe} JVM; returns each wave's wall and CPU seconds. */
  private SilverBench.Waves waves(Path bronze, Path history, long keys, int waveKeys, int total)
      throws InterruptedException {
    Path target = benchDir.resolve("target");
    ChildJvm jvm =
        ChildJvm.start(
            ChildJvm.classpath(target.resolve("job-classpath.txt"), target.resolve("classes")),
            List.of("-Xmx" + heap),
            HistoryProbe.class.getName(),
            List.of(
                bronze.toString(),
                history.toString(),
                run.resolve("control").toString(),
                String.valueOf(keys),
                String.valueOf(waveKeys),
                String.valueOf(total),
                String.valueOf(SEED)),
            run.resolve("history-output.log"));
    SilverBench.Waves timed = SilverBench.timings(jvm, "HISTORY_WAVE", total, "history");
    out.printf(
        Locale.ROOT,
        "  %-24s %d waves of %,d keys into %,d keys x %d versions: %s s, CPU %s s (first: a fresh"
            + " JVM's)%n",
        "history",
        total,
        waveKeys,
        keys,
        HistoryWaves.VERSIONS,
        SilverBench.seconds(timed.seconds()),
        SilverBench.seconds(timed.cpuSeconds()));
    return timed;
  }
}
