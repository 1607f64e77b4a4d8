package org.lakecdc.bench;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * With {@code --runners=all}: the same bronze run on the three runners, started the same way, and
 * one huge batch read in two parts against one on Spark.
 *
 * <p>The run is {@code bronze_rows_per_s}'s: the job reading the N orders as one batch ({@code
 * --maxCommitsPerBatch=0}) into new tables, timed inside its JVM from its {@code main} to its exit.
 * It runs on the DirectRunner, the SparkRunner ({@code --sparkMaster=local[2]}) and the FlinkRunner
 * ({@code --flinkMaster=[local] --parallelism=2}), each in a JVM with the same class path (every
 * runner's: {@code job-classpath-all-runners.txt}) and the same JVM options ({@code --jobHeap},
 * {@code --jobJvmOptions}, Spark's {@code --add-opens}), so that only the runner differs. The runs
 * are interleaved (Direct, Spark, Flink, then again for each of {@code --repeats}) so that a change
 * of the machine's load falls on all three. Per runner ({@code direct_all_runners}, {@code spark},
 * {@code flink}), medians of the repeats:
 *
 * <ul>
 *   <li>{@code bronze_rows_per_s_<runner>}: N over the job's wall seconds;
 *   <li>{@code bronze_stream_rows_per_s_<runner>}: the stream phase alone, the rate of the job's
 *       own summary line ({@link BenchRun#streamRate});
 *   <li>{@code bronze_cpu_s_<runner>}: the job JVM's CPU seconds (every thread, GC and JIT);
 * </ul>
 *
 * and the ratios to the DirectRunner of the same run: {@code spark_vs_direct}, {@code
 * flink_vs_direct} (whole job, rates), {@code spark_stream_vs_direct}, {@code
 * flink_stream_vs_direct} (stream phase, rates), {@code spark_vs_direct_cpu}, {@code
 * flink_vs_direct_cpu} (Direct's CPU seconds over the runner's). Each is at least 1 when the runner
 * is at least as fast (or as cheap) as Direct.
 *
 * <p>Then the same run on Spark {@code local[2]} with {@code --numPartitions=2} (the one batch read
 * in two parts, in parallel): {@code bronze_rows_per_s_spark_partitions_2}, {@code
 * bronze_stream_rows_per_s_spark_partitions_2}, and its rates over {@code --numPartitions=1}'s (the
 * Spark runs above): {@code spark_partitions_2_vs_1}, {@code spark_partitions_2_vs_1_stream}.
 *
 * <p>Every run's bronze table must hold exactly N rows, or the run fails ({@link BenchRun#job}).
 */
final class RunnerMeasures {
  private final BenchRun context;

  /** Measures with the options, output and figures of {@code context}. */
  RunnerMeasures(BenchRun context) {
    this.context = context;
  }

  /**
   * Takes the figures of the class comment when {@code --runners=all}; nothing otherwise.
   *
   * @param db the source database of {@code --rows} orders (null: none was built, nothing done)
   * @throws InterruptedException when waiting for a job's JVM is interrupted
   */
  void measure(Path db) throws InterruptedException {
    if (!context.options.getRunners().equals("all") || db == null) {
      return;
    }
    long rows = context.options.getRows();
    Map<String, Runs> byRunner = new LinkedHashMap<>();
    byRunner.put("direct_all_runners", new Runs());
    byRunner.put("spark", new Runs());
    byRunner.put("flink", new Runs());
    for (int i = 0; i < context.options.getRepeats(); i++) {
      for (Map.Entry<String, Runs> e : byRunner.entrySet()) {
        String runner = runnerClass(e.getKey());
        e.getValue()
            .add(
                rows,
                context.job(
                    "bronze-" + runner + (e.getKey().equals("direct_all_runners") ? "-all" : ""),
                    db,
                    0,
                    runner,
                    rows,
                    null,
                    null,
                    List.of(),
                    true));
      }
    }
    Runs direct = byRunner.get("direct_all_runners");
    for (Map.Entry<String, Runs> e : byRunner.entrySet()) {
      String name = e.getKey();
      Runs r = e.getValue();
      r.put(name, "job, " + runnerClass(name) + ", every runner's class path");
      if (!name.startsWith("direct")) {
        context.figures.put(name + "_vs_direct", r.rate() / direct.rate());
        if (!Double.isNaN(r.streamRate() / direct.streamRate())) {
          context.figures.put(name + "_stream_vs_direct", r.streamRate() / direct.streamRate());
        }
        context.figures.put(name + "_vs_direct_cpu", direct.cpu() / r.cpu());
      }
    }

    Runs two = new Runs();
    for (int i = 0; i < context.options.getRepeats(); i++) {
      two.add(
          rows,
          context.job(
              "bronze-SparkRunner-partitions-2",
              db,
              0,
              "SparkRunner",
              rows,
              null,
              null,
              List.of("--numPartitions=2"),
              true));
    }
    two.put("spark_partitions_2", "job, SparkRunner local[2], numPartitions=2");
    Runs one = byRunner.get("spark");
    context.figures.put("spark_partitions_2_vs_1", two.rate() / one.rate());
    if (!Double.isNaN(two.streamRate() / one.streamRate())) {
      context.figures.put("spark_partitions_2_vs_1_stream", two.streamRate() / one.streamRate());
    }
  }

  /** The runner's class name for a figure's runner name. */
  private static String runnerClass(String name) {
    return name.startsWith("direct")
        ? "DirectRunner"
        : name.equals("spark") ? "SparkRunner" : "FlinkRunner";
  }

  /** One runner's runs: rates, stream rates and CPU seconds; the figures are their medians. */
  private final class Runs {
    private final List<Double> rates = new ArrayList<>();
    private final List<Double> streamRates = new ArrayList<>();
    private final List<Double> cpu = new ArrayList<>();

    void add(long rows, BenchRun.Probe p) {
      rates.add(rows / p.seconds());
      streamRates.add(p.streamRowsPerSecond());
      cpu.add(p.cpuSeconds());
    }

    double rate() {
      return Bench.median(rates);
    }

    /** The stream phase's median rate; NaN when a run's output had no summary line. */
    double streamRate() {
      return streamRates.stream().anyMatch(r -> Double.isNaN(r))
          ? Double.NaN
          : Bench.median(streamRates);
    }

    double cpu() {
      return Bench.median(cpu);
    }

    /** Puts this runner's three figures ({@code name} their suffix) and its table rows. */
    void put(String name, String what) {
      long rows = context.options.getRows();
      context.figures.put("bronze_rows_per_s_" + name, rate());
      context.row(what, rows / rate(), "s", rate(), "rows/s");
      if (!Double.isNaN(streamRate())) {
        context.figures.put("bronze_stream_rows_per_s_" + name, streamRate());
        context.row(
            "  of it the stream phase (job's summary)",
            rows / streamRate(),
            "s",
            streamRate(),
            "rows/s");
      }
      context.figures.put("bronze_cpu_s_" + name, cpu());
      context.row("  CPU of the job's JVM", Double.NaN, "", cpu(), "s");
    }
  }
}
