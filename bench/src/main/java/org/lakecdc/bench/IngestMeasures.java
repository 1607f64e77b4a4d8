package org.lakecdc.bench;

import io.trino.tpch.Order;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Set;

/**
 * The bronze-ingest measurements: the source database of {@code --rows} orders; the job's bronze
 * ingest in one batch on the DirectRunner ({@code bronze_rows_per_s}, rows per second; its stream
 * phase alone by the job's summary, {@code bronze_stream_rows_per_s}); the anchors on the same
 * rows: parquet-java ({@code parquet_rows_per_s}), delta-spark 3.3 ({@code deltaspark_rows_per_s})
 * and Beam's ParquetIO ({@code parquetio_rows_per_s}), each with the job's rate over theirs; the
 * per-batch fixed cost ({@code batch_overhead_ms}, milliseconds per batch); the job's peak heap
 * after GC per batch size ({@code heap_mb_batch_<m>}, {@code heap_mb_one_batch}, MiB). The job on
 * the SparkRunner and the FlinkRunner is {@link RunnerMeasures}'. Each figure is the median of
 * {@code --repeats} runs.
 */
final class IngestMeasures {
  /** The most rows the ParquetIO anchor is run with (see {@link #parquetIo}). */
  static final long PARQUETIO_MAX_ROWS = 200_000;

  private final BenchRun context;
  private final BenchOptions options;
  private final PrintStream out;
  private final Map<String, Double> figures;
  private final Set<String> skip;
  private final Path work;
  private final Path benchDir;

  /** Whether the job's bronze ingest was measured. */
  private boolean bronzeRuns;

  /** The source database of {@code --rows} orders; null when nothing needed it. */
  private Path db;

  /** The job's bronze rate, rows per second; NaN when not measured. */
  private double bronze = Double.NaN;

  /**
   * The job's stream phase by its own summary, change rows per second (median of the bronze runs);
   * NaN when not measured.
   */
  private double bronzeStream = Double.NaN;

  /** Measures with the options, output and figures of {@code context}. */
  IngestMeasures(BenchRun context) {
    this.context = context;
    this.options = context.options;
    this.out = context.out;
    this.figures = context.figures;
    this.skip = context.skip;
    this.work = context.work;
    this.benchDir = context.benchDir;
  }

  /** The source, then (1) bronze, (2) parquet, (3) delta-spark, (3b) ParquetIO, (4), (5). */
  void measure() throws InterruptedException {
    long rows = options.getRows();
    int perTransaction = options.getRowsPerTransaction();
    bronzeRuns = !skip.contains("bronze");
    if (bronzeRuns
        || !skip.contains("heap")
        || !skip.contains("parquetio")
        || !skip.contains("parquet")) {
      context.part("source database");
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
    List<Double> heaps = new ArrayList<>();
    if (bronzeRuns) {
      context.part("bronze");
      List<Double> rates = new ArrayList<>();
      List<Double> streamRates = new ArrayList<>();
      for (int i = 0; i < options.getRepeats(); i++) {
        BenchRun.Probe p = context.job("bronze", db, 0, "DirectRunner", rows);
        rates.add(rows / p.seconds());
        heaps.add(p.heapMb());
        if (!Double.isNaN(p.streamRowsPerSecond())) {
          streamRates.add(p.streamRowsPerSecond());
        }
      }
      bronze = Bench.median(rates);
      figures.put("bronze_rows_per_s", bronze);
      context.row("job, DirectRunner, maxCommitsPerBatch=0", rows / bronze, "s", bronze, "rows/s");
      if (streamRates.size() == rates.size()) {
        bronzeStream = Bench.median(streamRates);
        figures.put("bronze_stream_rows_per_s", bronzeStream);
        context.row(
            "  of it the stream phase (job's summary)",
            rows / bronzeStream,
            "s",
            bronzeStream,
            "rows/s");
      }
    }

    // (2) parquet-java, and (3) delta-spark appending the rows of the same file.
    Path parquetFile = work.resolve("parquet/orders-" + rows + "-" + perTransaction + ".parquet");
    if (!skip.contains("parquet") || !skip.contains("deltaspark")) {
      context.part("parquet, bronze write");
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
            Bench.fmt(parquetRates.get(i)));
      }
      if (!skip.contains("parquet")) {
        double parquet = Bench.median(parquetRates);
        figures.put("parquet_rows_per_s", parquet);
        if (bronzeRuns) {
          figures.put("bronze_vs_parquet", bronze / parquet);
          if (!Double.isNaN(bronzeStream)) {
            figures.put("bronze_stream_vs_parquet", bronzeStream / parquet);
          }
        }
        context.row("parquet-java, one local file, snappy", rows / parquet, "s", parquet, "rows/s");
        coldParquet(rows, perTransaction);
        bronzeWrite(orders, perTransaction, parquet);
      }
    }
    if (!skip.contains("deltaspark")) {
      context.part("delta-spark append");
      double spark = deltaSpark(parquetFile, rows);
      figures.put("deltaspark_rows_per_s", spark);
      if (bronzeRuns) {
        figures.put("bronze_vs_deltaspark", bronze / spark);
      }
      context.row("delta-spark 3.3 append, Spark local[2]", rows / spark, "s", spark, "rows/s");
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
      context.part("parquetio");
      List<Double> rates = new ArrayList<>();
      for (int i = 0; i < options.getRepeats(); i++) {
        rates.add(rows / parquetIo(db, rows));
      }
      double parquetIo = Bench.median(rates);
      figures.put("parquetio_rows_per_s", parquetIo);
      if (bronzeRuns) {
        figures.put("bronze_vs_parquetio", bronze / parquetIo);
      }
      context.row(
          "MssqlCdcIO.read + ParquetIO.sink, DirectRunner",
          rows / parquetIo,
          "s",
          parquetIo,
          "rows/s");
    }

    // (4) per-batch fixed cost: K one-row commits in K batches against the same in one batch.
    if (!skip.contains("overhead")) {
      context.part("overhead");
      int k = options.getOverheadCommits();
      Path small = SourceDatabase.ensure(work, k, 1);
      BenchRun.Probe many = context.job("overhead-batches", small, 1, "DirectRunner", k);
      BenchRun.Probe one = context.job("overhead-one-batch", small, 0, "DirectRunner", k);
      double ms = batchOverheadMs(many.seconds(), one.seconds(), k);
      figures.put("batch_overhead_ms", ms);
      context.row(
          String.format(Locale.ROOT, "%d commits of 1 row, maxCommitsPerBatch=1 vs 0", k),
          many.seconds(),
          "s vs " + Bench.fmt(one.seconds()) + " s",
          ms,
          "ms per batch");
    }

    // (5) peak heap per batch size.
    if (!skip.contains("heap")) {
      context.part("heap");
      for (int m : new int[] {100, 10_000}) {
        List<Double> h = new ArrayList<>();
        for (int i = 0; i < options.getRepeats(); i++) {
          h.add(context.job("heap-" + m, db, m, "DirectRunner", rows).heapMb());
        }
        figures.put("heap_mb_batch_" + m, Bench.median(h));
        context.row(
            "job heap after GC, maxCommitsPerBatch=" + m, Double.NaN, "", Bench.median(h), "MB");
      }
      if (bronzeRuns) {
        figures.put("heap_mb_one_batch", Bench.median(heaps));
        context.row(
            "job heap after GC, maxCommitsPerBatch=0", Double.NaN, "", Bench.median(heaps), "MB");
      }
    }
  }

  /**
   * (2b) The bronze write path alone against parquet-java ({@link BronzeWriteProbe}): {@code
   * bronze_write_rows_per_s} and {@code bronze_write_vs_parquet}, each run's table checked.
   */
  /**
   * parquet-java in a fresh JVM of the job's class path and JVM options ({@link
   * ParquetAnchor#main}), {@code --repeats} times: {@code parquet_cold_rows_per_s} (the median),
   * and the job's rate over it, {@code bronze_vs_parquet_cold}. The write alone is timed, as in the
   * harness's JVM, but its code runs cold, as the job's does.
   */
  private void coldParquet(long rows, int perTransaction) throws InterruptedException {
    List<Double> rates = new ArrayList<>();
    for (int i = 0; i < options.getRepeats(); i++) {
      // Beside the harness's own file (as bronze-write), not a numbered run: the runs after it keep
      // their numbers. The child replaces the result file, or fails.
      Path run = work.resolve("parquet-cold");
      Path result = run.resolve("result.properties");
      ChildJvm.start(
              context.jobClasspath("DirectRunner"),
              context.jobJvmArgs("DirectRunner"),
              ParquetAnchor.class.getName(),
              List.of(
                  run.resolve("orders.parquet").toString(),
                  Long.toString(rows),
                  Integer.toString(perTransaction),
                  result.toString()),
              run.resolve("output.log"))
          .await(3600);
      double seconds = Double.parseDouble(BenchRun.load(result).getProperty("seconds"));
      rates.add(rows / seconds);
      out.printf(
          Locale.ROOT,
          "  %-24s one file, snappy, a fresh JVM: %s rows/s%n",
          "parquet-cold",
          Bench.fmt(rows / seconds));
    }
    double cold = Bench.median(rates);
    figures.put("parquet_cold_rows_per_s", cold);
    if (bronzeRuns) {
      figures.put("bronze_vs_parquet_cold", bronze / cold);
    }
    context.row("parquet-java, a fresh JVM", rows / cold, "s", cold, "rows/s");
  }

  private void bronzeWrite(List<Order> orders, int perTransaction, double parquet) {
    org.apache.beam.sdk.schemas.Schema schema = BronzeWriteProbe.changeSchema(db);
    List<org.apache.beam.sdk.values.Row> changes =
        BronzeWriteProbe.changeRows(schema, orders, perTransaction);
    List<Double> rates = new ArrayList<>();
    for (int i = 0; i < options.getRepeats(); i++) {
      rates.add(
          changes.size() / BronzeWriteProbe.write(schema, changes, work.resolve("bronze-write")));
      out.printf(
          Locale.ROOT,
          "  %-24s the bronze sink, rows in memory: %s rows/s%n",
          "bronze-write",
          Bench.fmt(rates.get(i)));
    }
    double rate = Bench.median(rates);
    figures.put("bronze_write_rows_per_s", rate);
    figures.put("bronze_write_vs_parquet", rate / parquet);
    context.row("bronze sink, change rows in memory", changes.size() / rate, "s", rate, "rows/s");
  }

  /** The database bronze was measured on; null when bronze was skipped. */
  Path bronzeDb() {
    return bronzeRuns ? db : null;
  }

  /** The job's bronze rate on local disk, rows per second; NaN when bronze was skipped. */
  double bronzeRate() {
    return bronze;
  }

  /** delta-spark's append rate (median of the repeats), in its own JVM. */
  private double deltaSpark(Path parquetFile, long rows) throws InterruptedException {
    Path run = context.newRunDir("deltaspark");
    List<Double> rates = new ArrayList<>();
    for (double seconds :
        DeltaSparkAnchor.append(benchDir, parquetFile, rows, run, options.getRepeats())) {
      rates.add(rows / seconds);
    }
    out.printf(
        Locale.ROOT,
        "  %-24s Spark local[2]: %s rows/s%n",
        "deltaspark",
        Bench.fmt(Bench.median(rates)));
    return Bench.median(rates);
  }

  /**
   * One run of the ParquetIO anchor ({@link ParquetIoAnchor}) in its own JVM with the job's class
   * path and heap; checks that its files hold exactly {@code rows} rows.
   *
   * @return the seconds it took (its main's start to the pipeline's end)
   */
  private double parquetIo(Path db, long rows) throws InterruptedException {
    Path run = context.newRunDir("parquetio");
    Path result = run.resolve("probe.properties");
    ChildJvm jvm =
        ChildJvm.start(
            context.jobClasspath("DirectRunner"),
            context.jobJvmArgs("DirectRunner"),
            ParquetIoAnchor.class.getName(),
            List.of(result.toString(), db.toString(), run.resolve("files").toString()),
            run.resolve("job-output.log"));
    jvm.await(6 * 3600);
    Properties p = BenchRun.load(result);
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
}
