package org.lakecdc.bench;

import java.io.PrintStream;
import java.math.BigDecimal;
import java.math.MathContext;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.lakecdc.pipelines.cli.CommandLine;

/**
 * The benchmark harness (docs/performance.md): builds an orders table in the simulator and
 * measures, in one run and on the same rows, the main job's bronze ingest on the DirectRunner
 * (through its public entry point {@code org.lakecdc.pipelines.CdcToDelta}, in a child JVM), the
 * anchors parquet-java and delta-spark 3.3, the job's per-batch fixed cost, its peak heap per batch
 * size and its continuous-mode latency, the silver engine's waves ({@link SilverBench}) and the
 * Reconcile job on a table with planted differences ({@link ReconcileBench}); with {@code
 * --runners=all} also the job on the SparkRunner and the FlinkRunner. It prints a table for people
 * and, last, one line per figure: {@code FIGURE <name> <value>} (four significant digits, plain
 * notation). {@link BenchOptions} lists the options.
 *
 * <p>The class paths of the child JVMs come from files the bench and bench-spark modules write at
 * {@code generate-resources}, found through the system property {@code lakecdc.bench.dir} (the
 * bench module's directory; the pom sets it for {@code exec:java} and the tests).
 *
 * <p>Exit codes: 0 done, 2 a bad option (one line naming it), 1 a failed measurement (one line, the
 * child's log named).
 */
public final class Bench {
  /** Measurements {@code --skip} accepts. */
  static final Set<String> PARTS =
      Set.of(
          "bronze",
          "parquet",
          "deltaspark",
          "overhead",
          "heap",
          "latency",
          "silver",
          "deltasparkmerge",
          "reconcile",
          "s3",
          "parquetio",
          "manytables",
          "snapshot",
          "history");

  private static final String JOB_MAIN = "org.lakecdc.pipelines.CdcToDelta";

  private final BenchRun context;

  private Bench(BenchRun context) {
    this.context = context;
  }

  /** Entry point: {@link #run} and exit with its code. */
  public static void main(String[] args) {
    int code = run(args, System.out, System.err);
    System.exit(code);
  }

  /**
   * Runs the benchmark of a command line.
   *
   * @param args the options ({@link BenchOptions})
   * @param out where the table and the {@code FIGURE} lines go
   * @param err where an {@code error:} line goes
   * @return 0 done, 2 a bad option, 1 a failed measurement
   */
  public static int run(String[] args, PrintStream out, PrintStream err) {
    Bench bench;
    try {
      BenchOptions options =
          PipelineOptionsFactory.fromArgs(
                  CommandLine.checked(args, BenchOptions.class, "docs/performance.md"))
              .as(BenchOptions.class);
      bench = new Bench(new BenchRun(options, out, benchDir(), validate(options)));
    } catch (IllegalArgumentException e) {
      err.println("error: " + CommandLine.firstLine(e));
      return 2;
    }
    try {
      bench.measure();
      bench.print();
      return 0;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      err.println("error: interrupted");
      return 1;
    } catch (RuntimeException e) {
      err.println("error: " + firstLine(e));
      return 1;
    }
  }

  /**
   * Checks the options and returns the measurements to skip.
   *
   * @throws IllegalArgumentException naming the option, its value and what it accepts
   */
  static Set<String> validate(BenchOptions o) {
    if (o.getRows() < 1) {
      throw new IllegalArgumentException(
          "--rows must be a positive integer, not '" + o.getRows() + "'");
    }
    if (o.getRowsPerTransaction() < 0) {
      throw new IllegalArgumentException(
          "--rowsPerTransaction must be 0 (one transaction) or a positive integer, not '"
              + o.getRowsPerTransaction()
              + "'");
    }
    if (!o.getRunners().equals("direct") && !o.getRunners().equals("all")) {
      throw new IllegalArgumentException(
          "--runners must be 'direct' or 'all', not '" + o.getRunners() + "'");
    }
    if (o.getRepeats() < 1) {
      throw new IllegalArgumentException(
          "--repeats must be a positive integer, not '" + o.getRepeats() + "'");
    }
    if (o.getOverheadCommits() < 2) {
      throw new IllegalArgumentException(
          "--overheadCommits must be an integer of at least 2, not '"
              + o.getOverheadCommits()
              + "'");
    }
    if (o.getLatencyTransactions() < 1) {
      throw new IllegalArgumentException(
          "--latencyTransactions must be a positive integer, not '"
              + o.getLatencyTransactions()
              + "'");
    }
    if (!o.getJobHeap().matches("[0-9]+[kKmMgG]?")) {
      throw new IllegalArgumentException(
          "--jobHeap must be a heap size as -Xmx takes it (e.g. 8g, 512m), not '"
              + o.getJobHeap()
              + "'");
    }
    if (o.getJobJvmOptions() != null) {
      for (String jvmOption : o.getJobJvmOptions()) {
        if (!jvmOption.startsWith("-")) {
          throw new IllegalArgumentException(
              "--jobJvmOptions must be JVM options, each starting with '-' (e.g."
                  + " -XX:TieredStopAtLevel=1,-XX:+UseSerialGC), not '"
                  + jvmOption
                  + "'");
        }
      }
    }
    for (String[] rows :
        new String[][] {
          {"--silverRows", String.valueOf(silverRows(o))},
          {"--silverSmallRows", String.valueOf(silverSmallRows(o))}
        }) {
      long n = Long.parseLong(rows[1]);
      if (n < 1 || n > Integer.MAX_VALUE / 2) {
        throw new IllegalArgumentException(
            rows[0]
                + " must be an integer from 1 to "
                + Integer.MAX_VALUE / 2
                + ", not '"
                + n
                + "'");
      }
    }
    long fewest = Math.min(silverRows(o), silverSmallRows(o));
    int keys = silverWaveKeys(o);
    if (keys < 1 || SilverWaves.updates(keys) + SilverWaves.deletes(keys) > fewest) {
      throw new IllegalArgumentException(
          "--silverWaveKeys must be a positive integer whose 89% (its updates and deletes) is at"
              + " most --silverRows and --silverSmallRows, not '"
              + keys
              + "'");
    }
    if (reconcileRows(o) < 2L * ReconcileBench.PLANTED
        || reconcileRows(o) > Integer.MAX_VALUE / 2) {
      throw new IllegalArgumentException(
          "--reconcileRows must be an integer from "
              + 2 * ReconcileBench.PLANTED
              + " to "
              + Integer.MAX_VALUE / 2
              + ", not '"
              + reconcileRows(o)
              + "'");
    }
    if (tables(o) < 1) {
      throw new IllegalArgumentException(
          "--tables must be a positive integer, not '" + tables(o) + "'");
    }
    if (historyKeys(o) < 100 || historyKeys(o) > Integer.MAX_VALUE / HistoryWaves.VERSIONS) {
      throw new IllegalArgumentException(
          "--historyKeys must be an integer from 100 to "
              + Integer.MAX_VALUE / HistoryWaves.VERSIONS
              + ", not '"
              + historyKeys(o)
              + "'");
    }
    if (o.getHistoryWaves() < 1) {
      throw new IllegalArgumentException(
          "--historyWaves must be a positive integer, not '" + o.getHistoryWaves() + "'");
    }
    if (o.getSilverWaves() < 1) {
      throw new IllegalArgumentException(
          "--silverWaves must be a positive integer, not '" + o.getSilverWaves() + "'");
    }
    Set<String> skip = new TreeSet<>();
    for (String part : o.getSkip().split(",")) {
      String p = part.strip().toLowerCase(Locale.ROOT);
      if (p.isEmpty()) {
        continue;
      }
      if (!PARTS.contains(p)) {
        throw new IllegalArgumentException(
            "--skip takes a comma-separated list of "
                + String.join(", ", new TreeSet<>(PARTS))
                + ", not '"
                + part.strip()
                + "'");
      }
      skip.add(p);
    }
    return skip;
  }

  /** {@code --historyKeys}, else 100,000 (1,000,000 with {@code --large}). */
  static long historyKeys(BenchOptions o) {
    return o.getHistoryKeys() != null ? o.getHistoryKeys() : o.getLarge() ? 1_000_000 : 100_000;
  }

  /** {@code --silverRows}, else 1,000,000 (5,000,000 with {@code --large}). */
  static long silverRows(BenchOptions o) {
    return o.getSilverRows() != null ? o.getSilverRows() : o.getLarge() ? 5_000_000 : 1_000_000;
  }

  /** {@code --silverSmallRows}, else 200,000 (1,000,000 with {@code --large}). */
  static long silverSmallRows(BenchOptions o) {
    return o.getSilverSmallRows() != null
        ? o.getSilverSmallRows()
        : o.getLarge() ? 1_000_000 : 200_000;
  }

  /** {@code --silverWaveKeys}, else 10,000 (50,000 with {@code --large}). */
  static int silverWaveKeys(BenchOptions o) {
    return o.getSilverWaveKeys() != null ? o.getSilverWaveKeys() : o.getLarge() ? 50_000 : 10_000;
  }

  /** {@code --reconcileRows}, else 200,000 (5,000,000 with {@code --large}). */
  static long reconcileRows(BenchOptions o) {
    return o.getReconcileRows() != null ? o.getReconcileRows() : o.getLarge() ? 5_000_000 : 200_000;
  }

  /** {@code --tables}, else 50 (500 with {@code --large}). */
  static int tables(BenchOptions o) {
    return o.getTables() != null ? o.getTables() : o.getLarge() ? 500 : 50;
  }

  private static Path benchDir() {
    String dir = System.getProperty("lakecdc.bench.dir");
    if (dir == null) {
      throw new IllegalArgumentException(
          "the system property lakecdc.bench.dir (the bench module's directory) is not set: run"
              + " the harness with mvn -pl bench -am compile exec:java");
    }
    return Path.of(dir).toAbsolutePath();
  }

  // ---- the measurements -----------------------------------------------------------------------

  private void measure() throws InterruptedException {
    IngestMeasures ingest = new IngestMeasures(context);
    ingest.measure();
    new LatencyMeasures(context).measure();
    new SilverReconcileS3Measures(context).measure(ingest.bronzeDb(), ingest.bronzeRate());
    context.part("other runners");
    new RunnerMeasures(context).measure(ingest.bronzeDb());
    if (ingest.bronzeDb() != null && !context.skip.contains("snapshot")) {
      context.part("snapshot");
      new SnapshotMeasures(context).measure(ingest.bronzeDb());
    }
    if (!context.skip.contains("history")) {
      context.part("history");
      HistoryBench.figures(context);
    }
    context.part(null);
  }

  // ---- output ---------------------------------------------------------------------------------

  /**
   * Prints where the run's time went: each part's wall seconds and the CPU seconds of this JVM and
   * of the child JVMs it ran (databases built in the part included), largest wall time first; a
   * part under a tenth of a second is left out.
   */
  private void printParts() {
    List<Map.Entry<String, double[]>> parts = new ArrayList<>(context.parts.entrySet());
    parts.removeIf(e -> e.getValue()[0] < 0.1);
    if (parts.isEmpty()) {
      return;
    }
    parts.sort((x, y) -> Double.compare(y.getValue()[0], x.getValue()[0]));
    context.out.println("Where the time went (wall s, CPU s of this JVM and its child JVMs):");
    for (Map.Entry<String, double[]> e : parts) {
      context.out.printf(
          Locale.ROOT,
          "  %-24s %7.1f s  %7.1f s CPU%n",
          e.getKey(),
          e.getValue()[0],
          e.getValue()[1]);
    }
    context.out.println();
  }

  private void print() {
    context.out.println();
    if (context.skip.containsAll(
        Set.of("bronze", "parquet", "parquetio", "deltaspark", "overhead", "heap", "latency"))) {
      List<String> parts = new ArrayList<>();
      for (String part : List.of("manytables", "silver", "reconcile", "s3", "history")) {
        if (!context.skip.contains(part)) {
          parts.add(part);
        }
      }
      context.out.println(
          "Benchmark: " + (parts.isEmpty() ? "nothing measured" : String.join(" and ", parts)));
    } else {
      context.out.printf(
          Locale.ROOT,
          "Benchmark: %,d rows (%s), %s%n",
          context.options.getRows(),
          context.options.getRowsPerTransaction() == 0
              ? "one transaction"
              : String.format(
                  Locale.ROOT, "%,d per transaction", context.options.getRowsPerTransaction()),
          context.options.getRepeats() == 1
              ? "one run each"
              : "median of " + context.options.getRepeats() + " runs");
    }
    context.out.printf(
        Locale.ROOT,
        "Measured in %.0f s (databases built in this run included)%n",
        (System.nanoTime() - context.started) / 1e9);
    int w0 = "What".length();
    int w1 = "Time".length();
    for (String[] r : context.table) {
      w0 = Math.max(w0, r[0].length());
      w1 = Math.max(w1, r[1].length());
    }
    String format = "%-" + w0 + "s  %" + w1 + "s  %s%n";
    context.out.printf(format, "What", "Time", "Figure");
    for (String[] r : context.table) {
      context.out.printf(format, (Object[]) r);
    }
    context.out.println();
    printParts();
    for (Map.Entry<String, Double> f : context.figures.entrySet()) {
      context.out.println(figureLine(f.getKey(), f.getValue()));
    }
  }

  /** {@code FIGURE <name> <value>}, the value with four significant digits in plain notation. */
  static String figureLine(String name, double value) {
    return "FIGURE " + name + " " + fmt(value);
  }

  static String fmt(double value) {
    if (Double.isNaN(value) || Double.isInfinite(value)) {
      return String.valueOf(value);
    }
    return new BigDecimal(value).round(new MathContext(4)).stripTrailingZeros().toPlainString();
  }

  /** The median (the mean of the middle two for an even count). */
  static double median(List<Double> values) {
    double[] v = values.stream().mapToDouble(Double::doubleValue).sorted().toArray();
    int n = v.length;
    return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  }

  /** The nearest-rank percentile {@code p} (0–100] of sorted values. */
  static double nearestRank(double[] sorted, int p) {
    int rank = (int) Math.ceil(p / 100.0 * sorted.length);
    return sorted[Math.max(0, rank - 1)];
  }

  private static String firstLine(Throwable e) {
    String message = e.getMessage() == null ? e.toString() : e.getMessage();
    return message.lines().findFirst().orElse(message);
  }
}
