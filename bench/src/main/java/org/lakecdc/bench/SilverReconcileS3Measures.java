package org.lakecdc.bench;

import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.lakecdc.locals3.LocalS3Server;

/**
 * The measurements past bronze: the silver engine's waves ({@link SilverBench}; seconds per wave,
 * CPU seconds, and delta-spark's MERGE of the same waves), the Reconcile job on a table with
 * planted differences ({@link ReconcileBench}; seconds and rows per second), and S3 on the local
 * server ({@link S3Bench}; commits per second, p50 commit latency in ms, and the job's bronze
 * ingest there in rows per second against the local-disk rate).
 */
final class SilverReconcileS3Measures {
  private final BenchRun context;
  private final BenchOptions options;
  private final PrintStream out;
  private final Map<String, Double> figures;
  private final Set<String> skip;
  private final Path work;
  private final Path benchDir;

  /** Measures with the options, output and figures of {@code context}. */
  SilverReconcileS3Measures(BenchRun context) {
    this.context = context;
    this.options = context.options;
    this.out = context.out;
    this.figures = context.figures;
    this.skip = context.skip;
    this.work = context.work;
    this.benchDir = context.benchDir;
  }

  /**
   * (7) silver, (8) Reconcile and (9) S3, unless skipped.
   *
   * @param db the database bronze was measured on; null: the job's ingest on S3 is not measured
   * @param bronze the job's bronze rate on local disk, rows per second
   */
  void measure(Path db, double bronze) throws InterruptedException {
    // (7) silver: waves of latest images merged into silver, and delta-spark's MERGE of them.
    if (!skip.contains("silver")) {
      context.part("silver");
      silver();
    }

    // (8) Reconcile: a table of N rows with 10 planted differences.
    if (!skip.contains("reconcile")) {
      context.part("reconcile");
      reconcile();
    }

    // (9) S3: commits on the local S3 server, and the job's bronze ingest there.
    if (!skip.contains("s3")) {
      context.part("s3");
      s3(db, options.getRows(), bronze);
    }
  }

  /**
   * The S3 figures: commits per second and p50 latency of one writer and of {@value
   * S3Bench#WRITERS} concurrent writers on the local S3 server, and the job's bronze ingest with
   * its tables there against the local-disk rate of this run.
   */
  private void s3(Path db, long rows, double localBronze) throws InterruptedException {
    Path run = context.newRunDir("s3");
    try (LocalS3Server server = LocalS3Server.start(run.resolve("buckets"))) {
      server.createBucket("lake");
      String classpath = context.jobClasspath("DirectRunner");
      S3Bench.Commits one = S3Bench.run(server, classpath, "one-writer/facts", 1, run);
      figures.put("s3_commits_per_s", one.perSecond());
      figures.put("s3_commit_p50_ms", Bench.median(one.latenciesMs()));
      context.row(
          String.format(Locale.ROOT, "S3 (local server), 1 writer, %d appends", S3Bench.APPENDS),
          S3Bench.APPENDS / one.perSecond(),
          "s, p50 " + Bench.fmt(Bench.median(one.latenciesMs())) + " ms",
          one.perSecond(),
          "commits/s");
      S3Bench.Commits many = S3Bench.run(server, classpath, "writers/facts", S3Bench.WRITERS, run);
      figures.put("s3_commits_per_s_" + S3Bench.WRITERS + "_writers", many.perSecond());
      figures.put(
          "s3_commit_p50_ms_" + S3Bench.WRITERS + "_writers", Bench.median(many.latenciesMs()));
      context.row(
          String.format(
              Locale.ROOT,
              "S3 (local server), %d writers x %d appends, one table",
              S3Bench.WRITERS,
              S3Bench.APPENDS),
          S3Bench.WRITERS * S3Bench.APPENDS / many.perSecond(),
          "s, p50 " + Bench.fmt(Bench.median(many.latenciesMs())) + " ms",
          many.perSecond(),
          "commits/s");
      if (db != null) {
        String root = "s3a://lake/bronze-run";
        BenchRun.Probe p =
            context.job(
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
        context.row(
            "job on S3 (local server), maxCommitsPerBatch=0", p.seconds(), "s", rate, "rows/s");
      }
    } catch (java.io.IOException e) {
      throw new UncheckedIOException("Cannot start the local S3 server", e);
    }
  }

  /** The silver figures ({@link SilverBench}). */
  private void silver() throws InterruptedException {
    long big = Bench.silverRows(options);
    long small = Bench.silverSmallRows(options);
    int keys = Bench.silverWaveKeys(options);
    boolean spark = !skip.contains("deltasparkmerge");
    SilverBench.Result r =
        new SilverBench(
                benchDir,
                context.newRunDir("silver"),
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
    context.row(
        String.format(Locale.ROOT, "silver, %s into %,d rows", waves, big),
        r.waveSeconds(),
        "s",
        r.waveSeconds(),
        "s");
    if (spark) {
      figures.put("deltaspark_merge_s", r.deltaSparkSeconds());
      figures.put("silver_vs_deltaspark_merge", r.deltaSparkSeconds() / r.waveSeconds());
      context.row(
          String.format(Locale.ROOT, "delta-spark 3.3 MERGE, the same waves, Spark local[2]"),
          r.deltaSparkSeconds(),
          "s",
          r.deltaSparkSeconds() / r.waveSeconds(),
          "x silver's time");
    }
    figures.put("silver_wave_s_1m", r.smallWaveSeconds());
    figures.put("silver_wave_s_5m", r.waveSeconds());
    figures.put("silver_wave_5m_vs_1m", r.waveSeconds() / r.smallWaveSeconds());
    context.row(
        String.format(Locale.ROOT, "silver, %s into %,d rows", waves, small),
        r.smallWaveSeconds(),
        "s",
        r.waveSeconds() / r.smallWaveSeconds(),
        String.format(Locale.ROOT, "(%,d rows' wave / this)", big));
    figures.put("silver_wave_cpu_s_1m", r.smallWaveCpuSeconds());
    figures.put("silver_wave_cpu_s_5m", r.waveCpuSeconds());
    figures.put("silver_wave_cpu_5m_vs_1m", r.waveCpuSeconds() / r.smallWaveCpuSeconds());
    context.row(
        String.format(
            Locale.ROOT, "silver, CPU time of those waves into %,d / %,d rows", small, big),
        r.smallWaveCpuSeconds(),
        "s / " + Bench.fmt(r.waveCpuSeconds()) + " s",
        r.waveCpuSeconds() / r.smallWaveCpuSeconds(),
        "(ratio)");
    figures.put("silver_cold_wave_s", r.coldSeconds());
    context.row(
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
    long n = Bench.reconcileRows(options);
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
      seconds.add(bench.reconcile(built, n, context.newRunDir("reconcile")).seconds());
    }
    double s = Bench.median(seconds);
    figures.put("reconcile_rows_per_s", n / s);
    figures.put("reconcile_" + sizeLabel(n) + "_seconds", s);
    context.row(
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
}
