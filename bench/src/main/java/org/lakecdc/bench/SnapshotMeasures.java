package org.lakecdc.bench;

import java.nio.file.Path;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.lakecdc.transforms.delta.DeltaTables;
import org.lakecdc.transforms.facts.FactsTable;

/**
 * The snapshot figures: the main job bootstrapping a new target from the {@code --rows} orders the
 * source table holds, with a whole snapshot ({@code snapshot_rows_per_s}: rows per second of the
 * job's wall time, one bronze commit) and with a chunked one planned at {@code rows / }{@link
 * #CHUNKS} rows a chunk, {@link #CHUNKS} chunks a wave, read beside the stream ({@code
 * chunked_snapshot_rows_per_s}); each against parquet-java writing the same rows in the same run
 * ({@code snapshot_vs_parquet}, {@code chunked_snapshot_vs_parquet}) and the two against each other
 * ({@code chunked_vs_whole}). Bronze must hold exactly the table's rows after each run (the
 * snapshot's rows; nothing changes after S), the facts table one {@code bootstrap} row of that many
 * rows, and the chunked run's {@code snapshot_chunk} rows (every chunk its completion row counts)
 * that many in all, or the run fails before any figure is printed. Beside each rate, the job JVM's
 * CPU time ({@code chunked_vs_whole_cpu}, the {@code _cores} figures: CPU over wall seconds), which
 * a machine shared with other jobs distorts much less than the wall time. Taken with the bronze
 * figures ({@code --skip=bronze} leaves them out too) on the same database, once per run unless
 * {@code --repeats} asks for more.
 */
final class SnapshotMeasures {
  /**
   * The chunked snapshot's chunks per wave ({@code --chunksPerWave}), and its chunk size's divisor
   * ({@code --snapshotChunkRows} = rows / this, rounded up; the planner's grid over the key's range
   * may make one chunk more).
   */
  static final int CHUNKS = 4;

  private final BenchRun context;

  /** The chunks the last chunked run recorded. */
  private int chunks;

  /** Measures with the options, output and figures of {@code context}. */
  SnapshotMeasures(BenchRun context) {
    this.context = context;
  }

  /**
   * The chunked snapshot's {@code --snapshotChunkRows} for a table of {@code rows} rows: {@link
   * #CHUNKS} chunks of at most that many rows.
   */
  static long chunkRows(long rows) {
    return Math.max(1, (rows + CHUNKS - 1) / CHUNKS);
  }

  /**
   * The job's options of the two runs: a whole bootstrap snapshot, and a chunked one in one wave of
   * {@link #CHUNKS} chunks read beside the stream.
   */
  static Map<String, List<String>> runs(long rows) {
    return Map.of(
        "whole",
        List.of("--bootstrap=true"),
        "chunked",
        List.of(
            "--bootstrap=true",
            "--snapshot=chunked",
            "--snapshotChunkRows=" + chunkRows(rows),
            "--chunksPerWave=" + CHUNKS));
  }

  /**
   * Takes the figures on {@code db} (the bronze measurement's database); the ratios to parquet-java
   * when this run measured it.
   */
  void measure(Path db) throws InterruptedException {
    long rows = context.options.getRows();
    Rate wholeRun = rate("snapshot-whole", db, rows, runs(rows).get("whole"));
    double whole = wholeRun.rowsPerSecond();
    context.figures.put("snapshot_rows_per_s", whole);
    context.row("job, whole bootstrap snapshot, DirectRunner", rows / whole, "s", whole, "rows/s");
    Rate chunkedRun = rate("snapshot-chunked", db, rows, runs(rows).get("chunked"));
    double chunked = chunkedRun.rowsPerSecond();
    context.figures.put("chunked_snapshot_rows_per_s", chunked);
    context.row(
        "job, chunked snapshot, " + chunks + " chunks, " + CHUNKS + " per wave, DirectRunner",
        rows / chunked,
        "s",
        chunked,
        "rows/s");
    Double parquet = context.figures.get("parquet_rows_per_s");
    if (parquet != null) {
      context.figures.put("snapshot_vs_parquet", whole / parquet);
      context.figures.put("chunked_snapshot_vs_parquet", chunked / parquet);
    }
    context.figures.put("chunked_vs_whole", chunked / whole);
    // The same ratio in CPU time (whole's over chunked's), and the cores each job kept busy: on a
    // machine shared with other jobs the wall times also measure what the others left.
    context.figures.put("chunked_vs_whole_cpu", wholeRun.cpuSeconds() / chunkedRun.cpuSeconds());
    context.figures.put("snapshot_cores", wholeRun.cores());
    context.figures.put("chunked_snapshot_cores", chunkedRun.cores());
    if (context.options.getRunners().equals("all")) {
      parallelism(db, rows);
      new SnapshotBesideSmallTables(context).measure(db);
    }
  }

  /**
   * With {@code --runners=all}: the chunked snapshot on the SparkRunner ({@code local[1]} and
   * {@code local[2]}) and the FlinkRunner (parallelism 1 and 2), and each runner's rate at 2 over
   * its rate at 1 ({@code chunked_parallel_2_vs_1_spark}, {@code chunked_parallel_2_vs_1_flink});
   * each run's cores kept busy ({@code chunked_snapshot_cores_<runner>_<p>}) and the CPU seconds at
   * 2 over those at 1 ({@code chunked_parallel_cpu_2_vs_1_<runner>}). Beside the whole job's wall
   * time, the snapshot's own: from the first chunk's read start to the last chunk's bronze commit,
   * by the facts table's {@code snapshot_chunk} rows ({@link #chunkSpanSeconds}; {@code
   * chunked_snapshot_read_s_<runner>_<p>}), and its ratio at 2 over 1 ({@code
   * chunked_parallel_read_2_vs_1_<runner>}: the time 1 reader took over the time 2 took). With
   * {@code --repeats}, the two parallelisms run in turn, a pair per repeat, and each figure is the
   * median of its runs.
   */
  private void parallelism(Path db, long rows) throws InterruptedException {
    List<String> chunkedRun = runs(rows).get("chunked");
    for (String runner : List.of("SparkRunner", "FlinkRunner")) {
      String name = runner.equals("SparkRunner") ? "spark" : "flink";
      Runs[] taken = {null, new Runs(), new Runs()};
      // Parallelism 1 and 2 in turn, each repeat a pair: a machine whose load drifts during the
      // runs then weighs on both alike.
      for (int i = 0; i < context.options.getRepeats(); i++) {
        for (int p = 1; p <= 2; p++) {
          List<String> options = new ArrayList<>(chunkedRun);
          options.add(
              runner.equals("SparkRunner")
                  ? "--sparkMaster=local[" + p + "]"
                  : "--parallelism=" + p);
          String label = "snapshot-chunked-" + name + "-" + p;
          BenchRun.Probe probe = context.job(label, db, 0, runner, rows, null, null, options);
          Path facts = probe.run().resolve("facts");
          checkFacts(facts, rows, true);
          double read = chunkSpanSeconds(DeltaTables.create().scan(facts.toString()));
          context.out.printf(
              Locale.ROOT, "  %-24s first chunk read to last chunk commit: %.1f s%n", label, read);
          taken[p].rates.add(rows / probe.seconds());
          taken[p].cpu.add(probe.cpuSeconds());
          taken[p].cores.add(probe.cores());
          taken[p].read.add(read);
        }
      }
      double[] rates = new double[3];
      double[] cpuSeconds = new double[3];
      double[] readSeconds = new double[3];
      for (int p = 1; p <= 2; p++) {
        rates[p] = Bench.median(taken[p].rates);
        cpuSeconds[p] = Bench.median(taken[p].cpu);
        readSeconds[p] = Bench.median(taken[p].read);
        context.figures.put("chunked_snapshot_rows_per_s_" + name + "_" + p, rates[p]);
        context.figures.put(
            "chunked_snapshot_cores_" + name + "_" + p, Bench.median(taken[p].cores));
        context.figures.put("chunked_snapshot_read_s_" + name + "_" + p, readSeconds[p]);
        context.row(
            "job, chunked snapshot, " + runner + ", parallelism " + p,
            rows / rates[p],
            "s",
            rates[p],
            "rows/s");
      }
      context.figures.put("chunked_parallel_2_vs_1_" + name, rates[2] / rates[1]);
      context.figures.put("chunked_parallel_cpu_2_vs_1_" + name, cpuSeconds[2] / cpuSeconds[1]);
      context.figures.put("chunked_parallel_read_2_vs_1_" + name, readSeconds[1] / readSeconds[2]);
    }
  }

  /**
   * What the runs at one parallelism measured, one value per run: rows per second of the job's wall
   * time, the job JVM's CPU seconds, the cores it kept busy, and the snapshot's own seconds.
   */
  private static final class Runs {
    final List<Double> rates = new ArrayList<>();
    final List<Double> cpu = new ArrayList<>();
    final List<Double> cores = new ArrayList<>();
    final List<Double> read = new ArrayList<>();
  }

  /**
   * The snapshot's own time in a run's facts rows: seconds from the earliest {@code snapshot_chunk}
   * row's {@code started_at} (its read's start) to the latest {@code started_at} plus {@code
   * duration_ms} (its bronze commit's end), what a user watching the load sees, without the job's
   * start, planning and end. Times are the rows' UTC timestamps, milliseconds.
   *
   * @param scanned the facts table's rows
   * @throws IllegalStateException when no {@code snapshot_chunk} row has both times
   */
  static double chunkSpanSeconds(List<Map<String, Object>> scanned) {
    long first = Long.MAX_VALUE;
    long last = Long.MIN_VALUE;
    for (Map<String, Object> row : scanned) {
      Object started = row.get(FactsTable.STARTED_AT);
      if ("snapshot_chunk".equals(row.get(FactsTable.EVENT))
          && (started instanceof LocalDateTime || started instanceof Instant)
          && row.get(FactsTable.DURATION_MS) instanceof Number duration) {
        long start =
            (started instanceof LocalDateTime t ? t.toInstant(ZoneOffset.UTC) : (Instant) started)
                .toEpochMilli();
        first = Math.min(first, start);
        last = Math.max(last, start + duration.longValue());
      }
    }
    if (first == Long.MAX_VALUE) {
      throw new IllegalStateException(
          "no snapshot_chunk facts row has a started_at and a duration_ms");
    }
    return (last - first) / 1000.0;
  }

  /**
   * The medians of {@code --repeats} runs: rows per second of wall time, the job JVM's CPU seconds,
   * and the cores it kept busy (CPU over wall time).
   */
  record Rate(double rowsPerSecond, double cpuSeconds, double cores) {}

  /** The median rate of {@code --repeats} runs, each checked to hold {@code rows} bronze rows. */
  private Rate rate(String label, Path db, long rows, List<String> options)
      throws InterruptedException {
    List<Double> rates = new ArrayList<>();
    List<Double> cpu = new ArrayList<>();
    List<Double> cores = new ArrayList<>();
    for (int i = 0; i < context.options.getRepeats(); i++) {
      BenchRun.Probe p = context.job(label, db, 0, "DirectRunner", rows, null, null, options);
      chunks = checkFacts(p.run().resolve("facts"), rows, label.endsWith("chunked"));
      rates.add(rows / p.seconds());
      cpu.add(p.cpuSeconds());
      cores.add(p.cores());
    }
    return new Rate(Bench.median(rates), Bench.median(cpu), Bench.median(cores));
  }

  /**
   * Checks the snapshot's facts rows: one {@code bootstrap} row of {@code rows} rows, and for a
   * chunked snapshot as many {@code snapshot_chunk} rows as its completion row's {@code chunks},
   * whose rows add up to {@code rows}.
   *
   * @return the chunks recorded (0 for a whole snapshot)
   * @throws IllegalStateException naming what differs
   */
  static int checkFacts(Path facts, long rows, boolean chunked) {
    List<Map<String, Object>> scanned = DeltaTables.create().scan(facts.toString());
    List<Long> bootstrap = new ArrayList<>();
    String detail = "";
    List<Long> chunkRows = new ArrayList<>();
    for (Map<String, Object> row : scanned) {
      Object event = row.get(FactsTable.EVENT);
      if (FactsTable.EVENT_BOOTSTRAP.equals(event)) {
        bootstrap.add((Long) row.get(FactsTable.ROWS));
        detail = String.valueOf(row.get(FactsTable.DETAIL));
      } else if ("snapshot_chunk".equals(event)) {
        chunkRows.add((Long) row.get(FactsTable.ROWS));
      }
    }
    if (!bootstrap.equals(List.of(rows))) {
      throw new IllegalStateException(
          "the facts table "
              + facts
              + " records bootstrap rows "
              + bootstrap
              + ", not ["
              + rows
              + "]");
    }
    if (!chunked) {
      return 0;
    }
    long read = chunkRows.stream().mapToLong(Long::longValue).sum();
    String planned = "\"chunks\":" + chunkRows.size() + ",";
    if (chunkRows.isEmpty() || read != rows || !detail.contains(planned)) {
      throw new IllegalStateException(
          "the facts table "
              + facts
              + " records "
              + chunkRows.size()
              + " chunks of "
              + read
              + " rows in all and the completion "
              + detail
              + ", not every planned chunk of "
              + rows
              + " rows");
    }
    return chunkRows.size();
  }
}
