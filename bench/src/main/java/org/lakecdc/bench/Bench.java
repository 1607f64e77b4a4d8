package org.lakecdc.bench;

import io.trino.tpch.Order;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.math.MathContext;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.lakecdc.io.mssqlcdc.fake.FakeSqlServer;
import org.lakecdc.locals3.LocalS3Server;
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
          "manytables");

  private static final String JOB_MAIN = "org.lakecdc.pipelines.CdcToDelta";

  /** The most rows the ParquetIO anchor is run with (see {@link #parquetIo}). */
  static final long PARQUETIO_MAX_ROWS = 200_000;

  private final BenchOptions options;
  private final PrintStream out;
  private final Path benchDir;
  private final Path work;
  private final Set<String> skip;
  private final Map<String, Double> figures = new LinkedHashMap<>();
  private final long started = System.nanoTime();
  private final List<String[]> table = new ArrayList<>();
  private int runNumber;

  private Bench(BenchOptions options, PrintStream out, Path benchDir, Set<String> skip) {
    this.options = options;
    this.out = out;
    this.benchDir = benchDir;
    this.work =
        options.getWorkDir() != null
            ? Path.of(options.getWorkDir()).toAbsolutePath()
            : benchDir.resolve("target/bench-work");
    this.skip = skip;
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
      bench = new Bench(options, out, benchDir(), validate(options));
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
    long rows = options.getRows();
    int perTransaction = options.getRowsPerTransaction();
    boolean bronzeRuns = !skip.contains("bronze");
    Path db = null;
    if (bronzeRuns || !skip.contains("heap") || !skip.contains("parquetio")) {
      long t = System.nanoTime();
      db = SourceDatabase.ensure(work, rows, perTransaction);
      out.printf(
          Locale.ROOT,
          "Source: %,d orders in %s (%s), ready in %.1f s%n",
          rows,
          db,
          perTransaction == 0
              ? "one transaction"
              : String.format("%,d per transaction", perTransaction),
          (System.nanoTime() - t) / 1e9);
    }

    // (1) the job's bronze ingest, one batch; its heap is the one-batch heap figure.
    double bronze = Double.NaN;
    List<Double> heaps = new ArrayList<>();
    if (bronzeRuns) {
      List<Double> rates = new ArrayList<>();
      for (int i = 0; i < options.getRepeats(); i++) {
        Probe p = job("bronze", db, 0, "DirectRunner", rows);
        rates.add(rows / p.seconds());
        heaps.add(p.heapMb());
      }
      bronze = median(rates);
      figures.put("bronze_rows_per_s", bronze);
      row("job, DirectRunner, maxCommitsPerBatch=0", rows / bronze, "s", bronze, "rows/s");
    }

    // (2) parquet-java, and (3) delta-spark appending the rows of the same file.
    Path parquetFile = work.resolve("parquet/orders-" + rows + "-" + perTransaction + ".parquet");
    if (!skip.contains("parquet") || !skip.contains("deltaspark")) {
      List<Order> orders = new ArrayList<>();
      for (Iterator<Order> it = Orders.first(rows); it.hasNext(); ) {
        orders.add(it.next());
      }
      List<Double> parquetRates = new ArrayList<>();
      int runs = skip.contains("parquet") ? 1 : options.getRepeats();
      for (int i = 0; i < runs; i++) {
        parquetRates.add(rows / ParquetAnchor.write(orders, perTransaction, parquetFile));
        out.printf(
            Locale.ROOT,
            "  %-24s one file, snappy: %s rows/s%n",
            "parquet",
            fmt(parquetRates.get(i)));
      }
      if (!skip.contains("parquet")) {
        double parquet = median(parquetRates);
        figures.put("parquet_rows_per_s", parquet);
        if (bronzeRuns) {
          figures.put("bronze_vs_parquet", bronze / parquet);
        }
        row("parquet-java, one local file, snappy", rows / parquet, "s", parquet, "rows/s");
      }
    }
    if (!skip.contains("deltaspark")) {
      double spark = deltaSpark(parquetFile, rows);
      figures.put("deltaspark_rows_per_s", spark);
      if (bronzeRuns) {
        figures.put("bronze_vs_deltaspark", bronze / spark);
      }
      row("delta-spark 3.3 append, Spark local[2]", rows / spark, "s", spark, "rows/s");
    }

    // (3b) Beam's own ParquetIO writing the same change rows, read by MssqlCdcIO on the same
    // runner.
    if (!skip.contains("parquetio") && rows > PARQUETIO_MAX_ROWS) {
      // Beam's DirectRunner keeps the whole output of the read's bundle before ParquetIO's write
      // sees it: at 1,000,000 rows the anchor's JVM passed 7 GB and never wrote a file.
      out.printf(
          Locale.ROOT,
          "  %-24s not measured at %,d rows: the DirectRunner holds the read's whole output in"
              + " memory before ParquetIO writes it; measure it with --rows=%d%n",
          "parquetio",
          rows,
          PARQUETIO_MAX_ROWS);
    } else if (!skip.contains("parquetio")) {
      List<Double> rates = new ArrayList<>();
      for (int i = 0; i < options.getRepeats(); i++) {
        rates.add(rows / parquetIo(db, rows));
      }
      double parquetIo = median(rates);
      figures.put("parquetio_rows_per_s", parquetIo);
      if (bronzeRuns) {
        figures.put("bronze_vs_parquetio", bronze / parquetIo);
      }
      row(
          "MssqlCdcIO.read + ParquetIO.sink, DirectRunner",
          rows / parquetIo,
          "s",
          parquetIo,
          "rows/s");
    }

    // (4) per-batch fixed cost: K one-row commits in K batches against the same in one batch.
    if (!skip.contains("overhead")) {
      int k = options.getOverheadCommits();
      Path small = SourceDatabase.ensure(work, k, 1);
      Probe many = job("overhead-batches", small, 1, "DirectRunner", k);
      Probe one = job("overhead-one-batch", small, 0, "DirectRunner", k);
      double ms = batchOverheadMs(many.seconds(), one.seconds(), k);
      figures.put("batch_overhead_ms", ms);
      row(
          String.format(Locale.ROOT, "%d commits of 1 row, maxCommitsPerBatch=1 vs 0", k),
          many.seconds(),
          "s vs " + fmt(one.seconds()) + " s",
          ms,
          "ms per batch");
    }

    // (5) peak heap per batch size.
    if (!skip.contains("heap")) {
      for (int m : new int[] {100, 10_000}) {
        List<Double> h = new ArrayList<>();
        for (int i = 0; i < options.getRepeats(); i++) {
          h.add(job("heap-" + m, db, m, "DirectRunner", rows).heapMb());
        }
        figures.put("heap_mb_batch_" + m, median(h));
        row("job heap after GC, maxCommitsPerBatch=" + m, Double.NaN, "", median(h), "MB");
      }
      if (bronzeRuns) {
        figures.put("heap_mb_one_batch", median(heaps));
        row("job heap after GC, maxCommitsPerBatch=0", Double.NaN, "", median(heaps), "MB");
      }
    }

    // (6) continuous-mode latency.
    if (!skip.contains("latency")) {
      double[] latency = latency();
      figures.put("latency_p50_ms", latency[0]);
      figures.put("latency_p95_ms", latency[1]);
      row(
          String.format(
              Locale.ROOT,
              "continuous, --pollIntervalSeconds=1, %d transactions: p50",
              options.getLatencyTransactions()),
          Double.NaN,
          "",
          latency[0],
          "ms");
      row("  p95", Double.NaN, "", latency[1], "ms");
    }

    // (6b) many tables in one pipeline: batches per second, and continuous-mode latency.
    if (!skip.contains("manytables")) {
      manyTables(tables(options));
    }

    // (7) silver: waves of latest images merged into silver, and delta-spark's MERGE of them.
    if (!skip.contains("silver")) {
      silver();
    }

    // (8) Reconcile: a table of N rows with 10 planted differences.
    if (!skip.contains("reconcile")) {
      reconcile();
    }

    // (9) S3: commits on the local S3 server, and the job's bronze ingest there.
    if (!skip.contains("s3")) {
      s3(bronzeRuns ? db : null, rows, bronze);
    }

    // (10) the other runners.
    if (options.getRunners().equals("all")) {
      for (String runner : List.of("SparkRunner", "FlinkRunner")) {
        List<Double> r = new ArrayList<>();
        for (int i = 0; i < options.getRepeats(); i++) {
          r.add(rows / job("bronze-" + runner, db, 0, runner, rows).seconds());
        }
        String name = "bronze_rows_per_s_" + (runner.equals("SparkRunner") ? "spark" : "flink");
        figures.put(name, median(r));
        row(
            "job, " + runner + ", maxCommitsPerBatch=0",
            rows / median(r),
            "s",
            median(r),
            "rows/s");
      }
    }
  }

  /**
   * The S3 figures: commits per second and p50 latency of one writer and of {@value
   * S3Bench#WRITERS} concurrent writers on the local S3 server, and the job's bronze ingest with
   * its tables there against the local-disk rate of this run.
   */
  private void s3(Path db, long rows, double localBronze) throws InterruptedException {
    Path run = newRunDir("s3");
    try (LocalS3Server server = LocalS3Server.start(run.resolve("buckets"))) {
      server.createBucket("lake");
      String classpath = jobClasspath("DirectRunner");
      S3Bench.Commits one = S3Bench.run(server, classpath, "one-writer/facts", 1, run);
      figures.put("s3_commits_per_s", one.perSecond());
      figures.put("s3_commit_p50_ms", median(one.latenciesMs()));
      row(
          String.format(Locale.ROOT, "S3 (local server), 1 writer, %d appends", S3Bench.APPENDS),
          S3Bench.APPENDS / one.perSecond(),
          "s, p50 " + fmt(median(one.latenciesMs())) + " ms",
          one.perSecond(),
          "commits/s");
      S3Bench.Commits many = S3Bench.run(server, classpath, "writers/facts", S3Bench.WRITERS, run);
      figures.put("s3_commits_per_s_" + S3Bench.WRITERS + "_writers", many.perSecond());
      figures.put("s3_commit_p50_ms_" + S3Bench.WRITERS + "_writers", median(many.latenciesMs()));
      row(
          String.format(
              Locale.ROOT,
              "S3 (local server), %d writers x %d appends, one table",
              S3Bench.WRITERS,
              S3Bench.APPENDS),
          S3Bench.WRITERS * S3Bench.APPENDS / many.perSecond(),
          "s, p50 " + fmt(median(many.latenciesMs())) + " ms",
          many.perSecond(),
          "commits/s");
      if (db != null) {
        String root = "s3a://lake/bronze-run";
        Probe p =
            job(
                "bronze-s3",
                db,
                0,
                "DirectRunner",
                rows,
                root,
                server.bucketDirectory("lake").resolve("bronze-run/bronze"),
                List.of(server.hadoopConfOption()));
        double rate = rows / p.seconds();
        figures.put("s3_bronze_rows_per_s", rate);
        figures.put("s3_bronze_vs_local", rate / localBronze);
        row("job on S3 (local server), maxCommitsPerBatch=0", p.seconds(), "s", rate, "rows/s");
      }
    } catch (java.io.IOException e) {
      throw new UncheckedIOException("Cannot start the local S3 server", e);
    }
  }

  /** The silver figures ({@link SilverBench}). */
  private void silver() throws InterruptedException {
    long big = silverRows(options);
    long small = silverSmallRows(options);
    int keys = silverWaveKeys(options);
    boolean spark = !skip.contains("deltasparkmerge");
    SilverBench.Result r =
        new SilverBench(
                benchDir,
                newRunDir("silver"),
                options.getJobHeap(),
                options.getSilverJfr() == null
                    ? null
                    : Path.of(options.getSilverJfr()).toAbsolutePath(),
                out)
            .measure(big, small, keys, options.getSilverWaves(), spark);
    String waves =
        String.format(
            Locale.ROOT, "median of %d warm waves of %,d keys", options.getSilverWaves(), keys);
    figures.put("silver_wave_s", r.waveSeconds());
    row(
        String.format(Locale.ROOT, "silver, %s into %,d rows", waves, big),
        r.waveSeconds(),
        "s",
        r.waveSeconds(),
        "s");
    if (spark) {
      figures.put("deltaspark_merge_s", r.deltaSparkSeconds());
      figures.put("silver_vs_deltaspark_merge", r.deltaSparkSeconds() / r.waveSeconds());
      row(
          String.format(Locale.ROOT, "delta-spark 3.3 MERGE, the same waves, Spark local[2]"),
          r.deltaSparkSeconds(),
          "s",
          r.deltaSparkSeconds() / r.waveSeconds(),
          "x silver's time");
    }
    figures.put("silver_wave_s_1m", r.smallWaveSeconds());
    figures.put("silver_wave_s_5m", r.waveSeconds());
    figures.put("silver_wave_5m_vs_1m", r.waveSeconds() / r.smallWaveSeconds());
    row(
        String.format(Locale.ROOT, "silver, %s into %,d rows", waves, small),
        r.smallWaveSeconds(),
        "s",
        r.waveSeconds() / r.smallWaveSeconds(),
        String.format(Locale.ROOT, "(%,d rows' wave / this)", big));
    figures.put("silver_wave_cpu_s_1m", r.smallWaveCpuSeconds());
    figures.put("silver_wave_cpu_s_5m", r.waveCpuSeconds());
    figures.put("silver_wave_cpu_5m_vs_1m", r.waveCpuSeconds() / r.smallWaveCpuSeconds());
    row(
        String.format(
            Locale.ROOT, "silver, CPU time of those waves into %,d / %,d rows", small, big),
        r.smallWaveCpuSeconds(),
        "s / " + fmt(r.waveCpuSeconds()) + " s",
        r.waveCpuSeconds() / r.smallWaveCpuSeconds(),
        "(ratio)");
    figures.put("silver_cold_wave_s", r.coldSeconds());
    row(
        String.format(Locale.ROOT, "silver, a fresh JVM's first wave into %,d rows", big),
        r.coldSeconds(),
        "s",
        r.coldSeconds(),
        "s");
  }

  /**
   * The reconcile figures ({@link ReconcileBench}): the median of {@code --repeats} runs' seconds,
   * and N per second of it.
   */
  private void reconcile() throws InterruptedException {
    long n = reconcileRows(options);
    ReconcileBench bench = new ReconcileBench(benchDir, work, options.getJobHeap(), out);
    long t = System.nanoTime();
    Path built = bench.ensure(n);
    out.printf(
        Locale.ROOT,
        "Reconcile: %,d rows, %d differences planted, in %s, ready in %.1f s%n",
        n,
        ReconcileBench.PLANTED,
        built,
        (System.nanoTime() - t) / 1e9);
    List<Double> seconds = new ArrayList<>();
    for (int i = 0; i < options.getRepeats(); i++) {
      seconds.add(bench.reconcile(built, n, newRunDir("reconcile")).seconds());
    }
    double s = median(seconds);
    figures.put("reconcile_rows_per_s", n / s);
    figures.put("reconcile_" + sizeLabel(n) + "_seconds", s);
    row(
        String.format(
            Locale.ROOT,
            "Reconcile --sample=1, %,d rows, the %d planted differences found",
            n,
            ReconcileBench.PLANTED),
        s,
        "s",
        n / s,
        "rows/s");
  }

  /** {@code 5m} for 5,000,000, {@code 250k} for 250,000, else the number. */
  static String sizeLabel(long n) {
    if (n % 1_000_000 == 0) {
      return n / 1_000_000 + "m";
    }
    return n % 1000 == 0 ? n / 1000 + "k" : String.valueOf(n);
  }

  /** What the job JVM measured. */
  record Probe(double seconds, double heapMb) {}

  /**
   * Runs the job once in its own JVM on a new set of tables and checks that bronze holds {@code
   * expectedRows} rows.
   */
  private Probe job(String label, Path db, int maxCommitsPerBatch, String runner, long expectedRows)
      throws InterruptedException {
    return job(label, db, maxCommitsPerBatch, runner, expectedRows, null, null, List.of());
  }

  /**
   * {@link #job(String, Path, int, String, long)} with the tables under {@code tableRoot} (a URI;
   * null: the run directory), bronze counted at {@code bronzeOnDisk}, and more options.
   */
  private Probe job(
      String label,
      Path db,
      int maxCommitsPerBatch,
      String runner,
      long expectedRows,
      String tableRoot,
      Path bronzeOnDisk,
      List<String> more)
      throws InterruptedException {
    Path run = newRunDir(label);
    Path probe = run.resolve("probe.properties");
    List<String> args = new ArrayList<>(List.of(probe.toString()));
    List<String> job = jobArgs(db, run, maxCommitsPerBatch, runner);
    if (tableRoot != null) {
      job.replaceAll(
          a ->
              a.startsWith("--target=")
                  ? "--target=" + tableRoot + "/bronze"
                  : a.startsWith("--factsTable=")
                      ? "--factsTable=" + tableRoot + "/facts"
                      : a.startsWith("--controlTable=")
                          ? "--controlTable=" + tableRoot + "/control"
                          : a);
    }
    job.addAll(more);
    args.addAll(job);
    ChildJvm jvm =
        ChildJvm.start(
            jobClasspath(runner),
            jobJvmArgs(runner),
            JobProbe.class.getName(),
            args,
            run.resolve("job-output.log"));
    jvm.await(6 * 3600);
    long bronzeRows =
        new BronzeTable(bronzeOnDisk != null ? bronzeOnDisk : run.resolve("bronze")).rows();
    if (bronzeRows != expectedRows) {
      throw new IllegalStateException(
          "the job's bronze table holds "
              + bronzeRows
              + " rows, not the "
              + expectedRows
              + " inserted; see "
              + jvm.log());
    }
    Properties p = new Properties();
    try {
      p.load(Files.newBufferedReader(probe, StandardCharsets.UTF_8));
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot read the job's measures " + probe, e);
    }
    double seconds = Long.parseLong(p.getProperty("elapsed_ms")) / 1000.0;
    double heapMb = Long.parseLong(p.getProperty("heap_after_gc_max_bytes")) / (1024.0 * 1024);
    out.printf(
        Locale.ROOT,
        "  %-24s %s, maxCommitsPerBatch=%d: %.1f s, heap after GC %.0f MB%n",
        label,
        runner,
        maxCommitsPerBatch,
        seconds,
        heapMb);
    return new Probe(seconds, heapMb);
  }

  /** The job's command line for a run directory (its tables and log file live there). */
  private static List<String> jobArgs(Path db, Path run, int maxCommitsPerBatch, String runner) {
    List<String> args =
        new ArrayList<>(
            List.of(
                "--fakePath=" + db,
                "--captureInstance=" + Orders.CAPTURE_INSTANCE,
                "--target=" + run.resolve("bronze"),
                "--factsTable=" + run.resolve("facts"),
                "--controlTable=" + run.resolve("control"),
                "--bootstrap=false",
                "--maxCommitsPerBatch=" + maxCommitsPerBatch,
                "--logFile=" + run.resolve("job.log"),
                "--runner=" + runner));
    if (runner.equals("SparkRunner")) {
      args.add("--sparkMaster=local[2]");
    } else if (runner.equals("FlinkRunner")) {
      args.add("--flinkMaster=[local]");
      args.add("--parallelism=2");
    }
    return args;
  }

  private String jobClasspath(String runner) {
    Path target = benchDir.resolve("target");
    return ChildJvm.classpath(
        target.resolve(
            runner.equals("DirectRunner") ? "job-classpath.txt" : "job-classpath-all-runners.txt"),
        target.resolve("classes"));
  }

  private List<String> jobJvmArgs(String runner) {
    List<String> args = new ArrayList<>(List.of("-Xmx" + options.getJobHeap()));
    if (!runner.equals("DirectRunner")) {
      for (String p : ChildJvm.SPARK_ADD_OPENS) {
        args.add("--add-opens=java.base/" + p + "=ALL-UNNAMED");
      }
    }
    return args;
  }

  /** delta-spark's append rate (median of the repeats), in its own JVM. */
  private double deltaSpark(Path parquetFile, long rows) throws InterruptedException {
    Path run = newRunDir("deltaspark");
    List<Double> rates = new ArrayList<>();
    for (double seconds :
        DeltaSparkAnchor.append(benchDir, parquetFile, rows, run, options.getRepeats())) {
      rates.add(rows / seconds);
    }
    out.printf(
        Locale.ROOT, "  %-24s Spark local[2]: %s rows/s%n", "deltaspark", fmt(median(rates)));
    return median(rates);
  }

  /**
   * One run of the ParquetIO anchor ({@link ParquetIoAnchor}) in its own JVM with the job's class
   * path and heap; checks that its files hold exactly {@code rows} rows.
   *
   * @return the seconds it took (its main's start to the pipeline's end)
   */
  private double parquetIo(Path db, long rows) throws InterruptedException {
    Path run = newRunDir("parquetio");
    Path result = run.resolve("probe.properties");
    ChildJvm jvm =
        ChildJvm.start(
            jobClasspath("DirectRunner"),
            jobJvmArgs("DirectRunner"),
            ParquetIoAnchor.class.getName(),
            List.of(result.toString(), db.toString(), run.resolve("files").toString()),
            run.resolve("job-output.log"));
    jvm.await(6 * 3600);
    Properties p = load(result);
    long written = Long.parseLong(p.getProperty("rows"));
    if (written != rows) {
      throw new IllegalStateException(
          "ParquetIO's files hold "
              + written
              + " rows, not the "
              + rows
              + " inserted; see "
              + jvm.log());
    }
    double seconds = Long.parseLong(p.getProperty("elapsed_ms")) / 1000.0;
    out.printf(Locale.ROOT, "  %-24s DirectRunner: %.1f s%n", "parquetio", seconds);
    return seconds;
  }

  private static Properties load(Path file) {
    Properties p = new Properties();
    try {
      p.load(Files.newBufferedReader(file, StandardCharsets.UTF_8));
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot read the measures " + file, e);
    }
    return p;
  }

  /**
   * The many-tables figures ({@link ManyTables}): {@code manytables_batches_per_s_<T>} (the
   * throughput run's batches over its wall time) and {@code latency_p50_ms_<T>_tables}, {@code
   * latency_p95_ms_<T>_tables}.
   */
  private void manyTables(int tables) throws InterruptedException {
    long t = System.nanoTime();
    Path db = ManyTables.ensure(work, tables);
    out.printf(
        Locale.ROOT,
        "Many tables: %d tables, %d transactions of a row into each, in %s, ready in %.1f s%n",
        tables,
        ManyTables.TRANSACTIONS,
        db,
        (System.nanoTime() - t) / 1e9);
    List<Double> rates = new ArrayList<>();
    for (int i = 0; i < options.getRepeats(); i++) {
      Path run = newRunDir("manytables-" + tables);
      Path probe = run.resolve("probe.properties");
      List<String> args = new ArrayList<>(List.of(probe.toString()));
      args.addAll(ManyTables.jobArgs(db, run, tables, ManyTables.COMMITS_PER_BATCH));
      ChildJvm jvm =
          ChildJvm.start(
              jobClasspath("DirectRunner"),
              jobJvmArgs("DirectRunner"),
              JobProbe.class.getName(),
              args,
              run.resolve("job-output.log"));
      jvm.await(6 * 3600);
      for (int table = 0; table < tables; table++) {
        long rows = new BronzeTable(ManyTables.bronze(run, table)).rows();
        if (rows != ManyTables.TRANSACTIONS) {
          throw new IllegalStateException(
              "the bronze table of "
                  + ManyTables.captureInstance(table)
                  + " holds "
                  + rows
                  + " rows, not the "
                  + ManyTables.TRANSACTIONS
                  + " inserted; see "
                  + jvm.log());
        }
      }
      double seconds = Long.parseLong(load(probe).getProperty("elapsed_ms")) / 1000.0;
      out.printf(
          Locale.ROOT,
          "  %-24s %d tables, %d batches: %.1f s%n",
          "manytables",
          tables,
          ManyTables.batches(tables),
          seconds);
      rates.add(ManyTables.batches(tables) / seconds);
    }
    double rate = median(rates);
    figures.put("manytables_batches_per_s_" + tables, rate);
    row(
        String.format(
            Locale.ROOT,
            "%d tables, %d commits of a row into each, maxCommitsPerBatch=%d: batches",
            tables,
            ManyTables.TRANSACTIONS,
            ManyTables.COMMITS_PER_BATCH),
        ManyTables.batches(tables) / rate,
        "s",
        rate,
        "batches/s");

    double[] latency = manyTablesLatency(tables);
    figures.put("latency_p50_ms_" + tables + "_tables", latency[0]);
    figures.put("latency_p95_ms_" + tables + "_tables", latency[1]);
    row(
        String.format(
            Locale.ROOT,
            "continuous, %d busy tables, %d commits of a row into each: p50",
            tables,
            ManyTables.LATENCY_ROUNDS),
        Double.NaN,
        "",
        latency[0],
        "ms");
    row("  p95", Double.NaN, "", latency[1], "ms");
  }

  /** The many-tables latency ({@link ManyTables}); p50 and p95 in ms (nearest rank). */
  private double[] manyTablesLatency(int tables) throws InterruptedException {
    Path run = newRunDir("latency-" + tables + "-tables");
    Path dbDir = run.resolve("db");
    FakeSqlServer db = ManyTables.create(dbDir, tables);
    Iterator<Order> orders = Orders.first((long) tables * (1 + ManyTables.LATENCY_ROUNDS));
    FakeSqlServer.Transaction first = db.transaction(Instant.now());
    for (int table = 0; table < tables; table++) {
      first.insert(ManyTables.table(table), Orders.row(orders.next()));
    }
    first.commit();
    List<String> args = new ArrayList<>(List.of(run.resolve("probe.properties").toString()));
    args.addAll(ManyTables.jobArgs(dbDir, run, tables, 100));
    args.add("--continuous=true");
    args.add("--pollIntervalSeconds=1");
    args.add("--runForSeconds=" + (600 + 60L * ManyTables.LATENCY_ROUNDS));
    ChildJvm jvm =
        ChildJvm.start(
            jobClasspath("DirectRunner"),
            jobJvmArgs("DirectRunner"),
            JobProbe.class.getName(),
            args,
            run.resolve("job-output.log"));
    List<BronzeTable> bronze = new ArrayList<>();
    List<Path> logs = new ArrayList<>();
    for (int table = 0; table < tables; table++) {
      bronze.add(new BronzeTable(ManyTables.bronze(run, table)));
      logs.add(ManyTables.bronze(run, table).resolve("_delta_log"));
    }
    List<Double> latencies = new ArrayList<>();
    try {
      long[] committed = new long[tables];
      awaitAll(bronze, logs, 1, committed, 600, jvm, null);
      Random random = new Random(42);
      for (int round = 1; round <= ManyTables.LATENCY_ROUNDS; round++) {
        Thread.sleep(200 + random.nextInt(1000));
        FakeSqlServer.Transaction tx = db.transaction(Instant.now());
        for (int table = 0; table < tables; table++) {
          tx.insert(ManyTables.table(table), Orders.row(orders.next()));
        }
        tx.commit();
        java.util.Arrays.fill(committed, System.nanoTime());
        awaitAll(bronze, logs, 1 + round, committed, 120, jvm, latencies);
      }
    } finally {
      jvm.stop(60);
    }
    double[] sorted = latencies.stream().mapToDouble(Double::doubleValue).sorted().toArray();
    out.printf(
        Locale.ROOT,
        "  %-24s %d tables x %d rounds: %d latencies, min %d ms, max %d ms%n",
        "latency",
        tables,
        ManyTables.LATENCY_ROUNDS,
        sorted.length,
        Math.round(sorted[0]),
        Math.round(sorted[sorted.length - 1]));
    return new double[] {nearestRank(sorted, 50), nearestRank(sorted, 95)};
  }

  /**
   * Waits until every table's bronze holds {@code rows} rows, sweeping their logs every 10 ms for a
   * new commit file (only then counting rows); adds each table's time from {@code committed[t]} to
   * the sweep that saw its row to {@code latencies} (when not null).
   */
  private static void awaitAll(
      List<BronzeTable> bronze,
      List<Path> logs,
      long rows,
      long[] committed,
      long timeoutSeconds,
      ChildJvm jvm,
      List<Double> latencies)
      throws InterruptedException {
    long deadline = System.nanoTime() + timeoutSeconds * 1_000_000_000L;
    int n = bronze.size();
    boolean[] done = new boolean[n];
    long[] seen = new long[n];
    java.util.Arrays.fill(seen, -2);
    int left = n;
    while (left > 0) {
      for (int t = 0; t < n; t++) {
        if (done[t]) {
          continue;
        }
        long version = latestCommit(logs.get(t));
        if (version != seen[t]) {
          seen[t] = version;
          if (version >= 0 && bronze.get(t).rows() >= rows) {
            done[t] = true;
            left--;
            if (latencies != null) {
              latencies.add((System.nanoTime() - committed[t]) / 1e6);
            }
          }
        }
      }
      if (left == 0) {
        return;
      }
      if (!jvm.isAlive()) {
        throw new IllegalStateException(
            "the continuous job stopped before every bronze table held "
                + rows
                + " rows; see "
                + jvm.log());
      }
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(
            left
                + " bronze tables did not hold "
                + rows
                + " rows within "
                + timeoutSeconds
                + " s; see "
                + jvm.log());
      }
      Thread.sleep(10);
    }
  }

  /**
   * Continuous mode: the job follows a new database with {@code --pollIntervalSeconds=1}; once its
   * first row is in bronze, transactions of one row are committed one at a time, each after a
   * random pause of 0.2–1.2 s (so commits fall anywhere in the poll interval), and each one's time
   * from the commit returning to its row counting in bronze is taken. Returns p50 and p95 in ms
   * (nearest rank).
   */
  private double[] latency() throws InterruptedException {
    int n = options.getLatencyTransactions();
    Path run = newRunDir("latency");
    Path dbDir = run.resolve("db");
    FakeSqlServer db = SourceDatabase.live(dbDir);
    Iterator<Order> orders = Orders.first(n + 1L);
    db.transaction(Instant.now()).insert(Orders.TABLE, Orders.row(orders.next())).commit();
    List<String> args = new ArrayList<>(List.of(run.resolve("probe.properties").toString()));
    args.addAll(jobArgs(dbDir, run, 100, "DirectRunner"));
    args.add("--continuous=true");
    args.add("--pollIntervalSeconds=1");
    args.add("--runForSeconds=" + (300 + 10L * n));
    ChildJvm jvm =
        ChildJvm.start(
            jobClasspath("DirectRunner"),
            jobJvmArgs("DirectRunner"),
            JobProbe.class.getName(),
            args,
            run.resolve("job-output.log"));
    BronzeTable bronze = new BronzeTable(run.resolve("bronze"));
    Path log = run.resolve("bronze/_delta_log");
    List<Double> latencies = new ArrayList<>();
    try {
      awaitRows(bronze, log, 1, 300, jvm);
      Random random = new Random(42);
      for (int i = 1; i <= n; i++) {
        Thread.sleep(200 + random.nextInt(1000));
        db.transaction(Instant.now()).insert(Orders.TABLE, Orders.row(orders.next())).commit();
        long committed = System.nanoTime();
        awaitRows(bronze, log, 1 + i, 60, jvm);
        latencies.add((System.nanoTime() - committed) / 1e6);
      }
    } finally {
      jvm.stop(60);
    }
    double[] sorted = latencies.stream().mapToDouble(Double::doubleValue).sorted().toArray();
    StringBuilder milliseconds = new StringBuilder();
    for (double latency : sorted) {
      milliseconds.append(milliseconds.length() == 0 ? "" : ", ").append(Math.round(latency));
    }
    out.printf(Locale.ROOT, "  %-24s %d transactions: %s ms%n", "latency", n, milliseconds);
    return new double[] {nearestRank(sorted, 50), nearestRank(sorted, 95)};
  }

  /**
   * Waits until bronze holds {@code rows} rows, polling its log every 10 ms for a new commit file
   * (and only then counting its rows).
   */
  private static void awaitRows(
      BronzeTable bronze, Path log, long rows, long timeoutSeconds, ChildJvm jvm)
      throws InterruptedException {
    long deadline = System.nanoTime() + timeoutSeconds * 1_000_000_000L;
    long seen = -1;
    while (System.nanoTime() < deadline) {
      long version = latestCommit(log);
      if (version != seen) {
        seen = version;
        if (version >= 0 && bronze.rows() >= rows) {
          return;
        }
      }
      if (!jvm.isAlive()) {
        throw new IllegalStateException(
            "the continuous job stopped before bronze held " + rows + " rows; see " + jvm.log());
      }
      Thread.sleep(10);
    }
    throw new IllegalStateException(
        "bronze did not hold " + rows + " rows within " + timeoutSeconds + " s; see " + jvm.log());
  }

  /**
   * The highest version with a commit file ({@code <20 digits>.json}) in a Delta log directory; -1
   * when there is none yet. A writer's temporary files are not commits.
   */
  static long latestCommit(Path log) {
    if (!Files.isDirectory(log)) {
      return -1;
    }
    try (Stream<Path> files = Files.list(log)) {
      return files
          .map(p -> p.getFileName().toString())
          .filter(n -> n.matches("[0-9]{20}\\.json"))
          .mapToLong(n -> Long.parseLong(n.substring(0, 20)))
          .max()
          .orElse(-1);
    } catch (IOException e) {
      return -1;
    }
  }

  private Path newRunDir(String label) {
    Path dir =
        work.resolve("runs").resolve(String.format(Locale.ROOT, "%02d-%s", ++runNumber, label));
    SourceDatabase.delete(dir);
    try {
      Files.createDirectories(dir);
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot create " + dir, e);
    }
    return dir;
  }

  // ---- output ---------------------------------------------------------------------------------

  private void row(String what, double seconds, String secondsUnit, double value, String unit) {
    table.add(
        new String[] {
          what,
          Double.isNaN(seconds) ? "" : fmt(seconds) + " " + secondsUnit,
          fmt(value) + " " + unit
        });
  }

  private void print() {
    out.println();
    if (skip.containsAll(
        Set.of("bronze", "parquet", "parquetio", "deltaspark", "overhead", "heap", "latency"))) {
      List<String> parts = new ArrayList<>();
      for (String part : List.of("manytables", "silver", "reconcile", "s3")) {
        if (!skip.contains(part)) {
          parts.add(part);
        }
      }
      out.println(
          "Benchmark: " + (parts.isEmpty() ? "nothing measured" : String.join(" and ", parts)));
    } else {
      out.printf(
          Locale.ROOT,
          "Benchmark: %,d rows (%s), %s%n",
          options.getRows(),
          options.getRowsPerTransaction() == 0
              ? "one transaction"
              : String.format(Locale.ROOT, "%,d per transaction", options.getRowsPerTransaction()),
          options.getRepeats() == 1
              ? "one run each"
              : "median of " + options.getRepeats() + " runs");
    }
    out.printf(
        Locale.ROOT,
        "Measured in %.0f s (databases built in this run included)%n",
        (System.nanoTime() - started) / 1e9);
    int w0 = "What".length();
    int w1 = "Time".length();
    for (String[] r : table) {
      w0 = Math.max(w0, r[0].length());
      w1 = Math.max(w1, r[1].length());
    }
    String format = "%-" + w0 + "s  %" + w1 + "s  %s%n";
    out.printf(format, "What", "Time", "Figure");
    for (String[] r : table) {
      out.printf(format, (Object[]) r);
    }
    out.println();
    for (Map.Entry<String, Double> f : figures.entrySet()) {
      out.println(figureLine(f.getKey(), f.getValue()));
    }
  }

  /** {@code FIGURE <name> <value>}, the value with four significant digits in plain notation. */
  static String figureLine(String name, double value) {
    return "FIGURE " + name + " " + fmt(value);
  }

  private static String fmt(double value) {
    if (Double.isNaN(value) || Double.isInfinite(value)) {
      return String.valueOf(value);
    }
    return new BigDecimal(value).round(new MathContext(4)).stripTrailingZeros().toPlainString();
  }

  /**
   * The fixed cost of a batch: {@code k} one-row commits read in {@code k} batches took {@code
   * manySeconds}, the same commits in one batch {@code oneSeconds}; the difference is {@code k - 1}
   * batches' fixed cost (start-up, pipeline construction and the rows cancel out).
   *
   * @return milliseconds per batch
   */
  static double batchOverheadMs(double manySeconds, double oneSeconds, int k) {
    return (manySeconds - oneSeconds) * 1000 / (k - 1);
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
