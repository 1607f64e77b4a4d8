package org.lakecdc.bench;

import io.trino.tpch.Order;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.stream.Stream;
import org.lakecdc.io.mssqlcdc.fake.FakeSqlServer;

/**
 * The latency measurements: continuous mode's latency from a source commit to its row counting in
 * bronze, one table ({@code latency_p50_ms}, {@code latency_p95_ms}, milliseconds, nearest rank);
 * and {@code --tables} tables in one pipeline ({@link ManyTables}): batches per second over the
 * throughput run's wall time ({@code manytables_batches_per_s_<T>}) and the continuous-mode latency
 * of all of them ({@code latency_p50_ms_<T>_tables}, {@code latency_p95_ms_<T>_tables}, ms).
 */
final class LatencyMeasures {
  private final BenchRun context;
  private final BenchOptions options;
  private final PrintStream out;
  private final Map<String, Double> figures;
  private final Set<String> skip;
  private final Path work;

  /** Measures with the options, output and figures of {@code context}. */
  LatencyMeasures(BenchRun context) {
    this.context = context;
    this.options = context.options;
    this.out = context.out;
    this.figures = context.figures;
    this.skip = context.skip;
    this.work = context.work;
  }

  /** (6) continuous-mode latency and (6b) many tables, unless skipped. */
  void measure() throws InterruptedException {
    // (6) continuous-mode latency.
    if (!skip.contains("latency")) {
      context.part("latency");
      double[] latency = latency();
      figures.put("latency_p50_ms", latency[0]);
      figures.put("latency_p95_ms", latency[1]);
      context.row(
          String.format(
              Locale.ROOT,
              "continuous, --pollIntervalSeconds=1, %d transactions: p50",
              options.getLatencyTransactions()),
          Double.NaN,
          "",
          latency[0],
          "ms");
      context.row("  p95", Double.NaN, "", latency[1], "ms");
    }

    // (6b) many tables in one pipeline: batches per second, and continuous-mode latency.
    if (!skip.contains("manytables")) {
      context.part("many tables");
      manyTables(Bench.tables(options));
    }
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
      Path run = context.newRunDir("manytables-" + tables);
      Path probe = run.resolve("probe.properties");
      List<String> args = new ArrayList<>(List.of(probe.toString()));
      args.addAll(ManyTables.jobArgs(db, run, tables, ManyTables.COMMITS_PER_BATCH));
      ChildJvm jvm = context.runJob("DirectRunner", args, run);
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
      double seconds = Long.parseLong(BenchRun.load(probe).getProperty("elapsed_ms")) / 1000.0;
      out.printf(
          Locale.ROOT,
          "  %-24s %d tables, %d batches: %.1f s%n",
          "manytables",
          tables,
          ManyTables.batches(tables),
          seconds);
      rates.add(ManyTables.batches(tables) / seconds);
    }
    double rate = Bench.median(rates);
    figures.put("manytables_batches_per_s_" + tables, rate);
    context.row(
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
    context.row(
        String.format(
            Locale.ROOT,
            "continuous, %d busy tables, %d commits of a row into each: p50",
            tables,
            ManyTables.LATENCY_ROUNDS),
        Double.NaN,
        "",
        latency[0],
        "ms");
    context.row("  p95", Double.NaN, "", latency[1], "ms");
  }

  /** The many-tables latency ({@link ManyTables}); p50 and p95 in ms (nearest rank). */
  private double[] manyTablesLatency(int tables) throws InterruptedException {
    Path run = context.newRunDir("latency-" + tables + "-tables");
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
            context.jobClasspath("DirectRunner"),
            context.jobJvmArgs("DirectRunner"),
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
    return new double[] {Bench.nearestRank(sorted, 50), Bench.nearestRank(sorted, 95)};
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
    Path run = context.newRunDir("latency");
    Path dbDir = run.resolve("db");
    FakeSqlServer db = SourceDatabase.live(dbDir);
    Iterator<Order> orders = Orders.first(n + 1L);
    db.transaction(Instant.now()).insert(Orders.TABLE, Orders.row(orders.next())).commit();
    List<String> args = new ArrayList<>(List.of(run.resolve("probe.properties").toString()));
    args.addAll(BenchRun.jobArgs(dbDir, run, 100, "DirectRunner"));
    args.add("--continuous=true");
    args.add("--pollIntervalSeconds=1");
    args.add("--runForSeconds=" + (300 + 10L * n));
    ChildJvm jvm =
        ChildJvm.start(
            context.jobClasspath("DirectRunner"),
            context.jobJvmArgs("DirectRunner"),
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
    return new double[] {Bench.nearestRank(sorted, 50), Bench.nearestRank(sorted, 95)};
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
}
