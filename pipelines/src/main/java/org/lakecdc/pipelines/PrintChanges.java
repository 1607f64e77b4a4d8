package org.lakecdc.pipelines;

import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.metrics.MetricNameFilter;
import org.apache.beam.sdk.metrics.MetricQueryResults;
import org.apache.beam.sdk.metrics.MetricResult;
import org.apache.beam.sdk.metrics.MetricsFilter;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.Top;
import org.apache.beam.sdk.values.PCollectionTuple;
import org.apache.beam.sdk.values.Row;
import org.lakecdc.io.mssqlcdc.MssqlCdcIO;
import org.lakecdc.io.mssqlcdc.SourceConfiguration;
import org.lakecdc.io.mssqlcdc.client.CdcClient;
import org.lakecdc.io.mssqlcdc.client.CdcException;
import org.lakecdc.io.mssqlcdc.fake.FakeCdcClientFactory;
import org.lakecdc.io.mssqlcdc.read.ChangeBatch;
import org.lakecdc.io.mssqlcdc.read.StartingLsn;
import org.lakecdc.io.mssqlcdc.source.ChangeOrdering;
import org.lakecdc.pipelines.cli.CommandLine;
import org.lakecdc.pipelines.cli.ConsoleLogging;
import org.lakecdc.pipelines.cli.JobExit;
import org.lakecdc.pipelines.demo.DemoDatabase;
import org.lakecdc.pipelines.options.PrintChangesOptions;
import org.lakecdc.transforms.Counts;

/**
 * Reads one capture instance of the simulator with {@link MssqlCdcIO} in its bounded form and
 * prints what it read: each batch (LSN interval, end commit time in UTC, rows), a sample of change
 * rows, and the rows by operation. With no arguments it reads {@code dbo_orders} of the demo
 * database in {@code lakecdc-demo/source}, building that database first when it is absent.
 *
 * <p>Bad option values and an unknown capture instance end the program with a one-line message
 * naming the option or value and what is accepted (exit code 2); a failed read (for example {@code
 * DataLossError} after CDC cleanup), and any other failure, {@link OutOfMemoryError} and every
 * other {@link Error} included, prints its cause on one line and exits with code 1 ({@link
 * JobExit}; {@code --verbose} prints the stack trace before it).
 */
public final class PrintChanges {
  private PrintChanges() {}

  /** Entry point; see {@link PrintChangesOptions} for the options. Exits the JVM with the code. */
  public static void main(String[] args) {
    JobExit.main(() -> run(args, System.err));
  }

  /**
   * Runs a command line and returns its exit code instead of exiting (what {@link #main} runs).
   *
   * @param args the command line
   * @param err where the {@code error:} line goes
   * @return {@link JobExit#OK}, {@link JobExit#BAD_OPTION} or {@link JobExit#FAILED}
   */
  static int run(String[] args, PrintStream err) {
    PrintChangesOptions options;
    StartingLsn start;
    try {
      options = CommandLine.parse(args, PrintChangesOptions.class);
      start =
          StartingLsn.parse(
              options.getStartingLsn() == null ? "earliest" : options.getStartingLsn());
      if (options.getMaxCommitsPerBatch() < 0) {
        throw new IllegalArgumentException(
            "--maxCommitsPerBatch must be a positive integer, or 0 to read up to max_lsn, not '"
                + options.getMaxCommitsPerBatch()
                + "'");
      }
      if (options.getSampleRows() < 0) {
        throw new IllegalArgumentException(
            "--sampleRows must be 0 or a positive integer, not '" + options.getSampleRows() + "'");
      }
      if (options.getFakePath() != null && options.getFakePath().isBlank()) {
        throw new IllegalArgumentException("--fakePath must not be empty");
      }
      DemoDatabase.requireSource(fakePath(options), options.getBuildDemo());
      if (options.getDemoTransactions() < 0) {
        throw new IllegalArgumentException(
            "--demoTransactions must be 0 or a positive integer, not '"
                + options.getDemoTransactions()
                + "'");
      }
      if (!(options.getDemoScale() > 0 && options.getDemoScale() <= 1)) {
        throw new IllegalArgumentException(
            "--demoScale must be a TPC-H scale factor in (0, 1], not '"
                + CommandLine.typed(options, "demoScale", options.getDemoScale())
                + "'");
      }
    } catch (IllegalArgumentException e) {
      err.println("error: " + firstLine(e));
      return JobExit.BAD_OPTION;
    }
    try {
      ConsoleLogging.startFile(options);
      run(options, start);
    } catch (IllegalArgumentException | CdcException e) {
      err.println("error: " + firstLine(e));
      return JobExit.BAD_OPTION;
    } catch (Throwable t) {
      return JobExit.report(t, err, options.getVerbose());
    }
    return JobExit.OK;
  }

  private static String firstLine(Throwable e) {
    String message = e.getMessage() == null ? e.toString() : e.getMessage();
    return message.lines().findFirst().orElse(message);
  }

  static void run(PrintChangesOptions options, StartingLsn start) {
    Path source = fakePath(options);
    long began = System.nanoTime();
    DemoDatabase.Summary demo =
        DemoDatabase.ensure(source, options.getDemoScale(), options.getDemoTransactions());
    if (demo.created()) {
      DemoDatabase.continueHistory(
          source, options.getDemoTransactions(), options.getCaptureInstance(), System.out);
    }
    if (demo.created()) {
      System.out.printf(
          "%s in %.1f s%n", demo.builtText(source), (System.nanoTime() - began) / 1e9);
    } else {
      System.out.printf("Reading the CDC database in %s%n", source.toAbsolutePath());
    }

    if (start.kind() == StartingLsn.Kind.EXPLICIT) {
      try (CdcClient client = new FakeCdcClientFactory(source.toString()).open()) {
        StartingLsn.checkExplicit(client, options.getCaptureInstance(), start.lsn().get());
      }
    }
    MssqlCdcIO.Read read =
        MssqlCdcIO.read()
            .withSourceConfiguration(
                SourceConfiguration.create(options.getCaptureInstance())
                    .withClientFactory(new FakeCdcClientFactory(source.toString())))
            .withStartingLsn(start);
    if (options.getMaxCommitsPerBatch() > 0) {
      read = read.withMaxCommitsPerBatch(options.getMaxCommitsPerBatch());
    }
    Pipeline pipeline = Pipeline.create(options);
    PCollectionTuple out =
        pipeline.apply("Read " + options.getCaptureInstance(), read.withBatches());
    out.get(MssqlCdcIO.BATCHES).apply("Print batches", ParDo.of(new PrintBatch()));
    if (options.getSampleRows() > 0) {
      out.get(MssqlCdcIO.CHANGES)
          .apply("First rows in change order", Top.of(options.getSampleRows(), new EarliestFirst()))
          .apply("Print rows", ParDo.of(new PrintRow()));
    }
    long started = System.nanoTime();
    PipelineResult result = JobExit.run(pipeline);
    double seconds = (System.nanoTime() - started) / 1e9;
    printSummary(result, seconds);
  }

  private static void printSummary(PipelineResult result, double seconds) {
    MetricQueryResults metrics =
        result
            .metrics()
            .queryMetrics(
                MetricsFilter.builder()
                    .addNameFilter(MetricNameFilter.inNamespace("mssqlcdc"))
                    .build());
    Map<String, Long> counters = new TreeMap<>();
    for (MetricResult<Long> counter : metrics.getCounters()) {
      counters.merge(counter.getName().getName(), counter.getAttempted(), Long::sum);
    }
    long rows =
        counters.entrySet().stream()
            .filter(e -> e.getKey().startsWith("rows_read_"))
            .mapToLong(Map.Entry::getValue)
            .sum();
    List<String> byOperation = new ArrayList<>();
    for (String op : List.of("insert", "update_before", "update_after", "delete")) {
      byOperation.add(op + " " + counters.getOrDefault("rows_read_" + op, 0L));
    }
    System.out.printf(
        "Read %s in %s (%s) in %.1f s: %,.0f change rows/s%n",
        Counts.of(rows, "change row", "change rows"),
        Counts.of(counters.getOrDefault("batches_read", 0L), "batch", "batches"),
        String.join(", ", byOperation),
        seconds,
        rows / Math.max(seconds, 1e-3));
  }

  /** Reverses {@link ChangeOrdering}, so {@code Top.of} keeps the earliest changes. */
  static final class EarliestFirst implements java.util.Comparator<Row>, java.io.Serializable {
    private final ChangeOrdering order = new ChangeOrdering();

    @Override
    public int compare(Row a, Row b) {
      return order.compare(b, a);
    }
  }

  /** Prints one line per batch. */
  static final class PrintBatch extends DoFn<ChangeBatch, Void> {
    @ProcessElement
    public void process(@Element ChangeBatch batch) {
      System.out.printf(
          "batch %s..%s  end commit %s UTC  %s  (%s)%n",
          batch.fromLsn(),
          batch.toLsn(),
          batch.toCommitTime(),
          Counts.of(batch.rows(), "row", "rows"),
          String.join(", ", batch.readInstances()));
    }
  }

  /** Prints the first change rows. */
  static final class PrintRow extends DoFn<List<Row>, Void> {
    @ProcessElement
    public void process(@Element List<Row> rows) {
      System.out.println(
          "first change rows ("
              + String.join(
                  ", ", rows.isEmpty() ? List.of() : rows.get(0).getSchema().getFieldNames())
              + "):");
      for (Row row : rows) {
        System.out.println("  " + row.getValues());
      }
    }
  }

  /** {@code --fakePath}, or the demo's default directory when it is not given. */
  private static Path fakePath(PrintChangesOptions options) {
    return options.getFakePath() == null
        ? DemoDatabase.DEFAULT_DIRECTORY
        : Path.of(options.getFakePath());
  }
}
