package org.lakecdc.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The 2-vs-1 worker figure: the wall time of one chunked bootstrap snapshot of the demo's {@code
 * dbo_lineitem} on a Spark standalone cluster ({@link SparkCluster}) with two one-core Workers
 * against one. A measurement, not a test of the build: failsafe runs it only when it is named,
 *
 * <pre>
 * mvn -B -pl cluster-tests -am verify -Dtest=none -Dsurefire.failIfNoSpecifiedTests=false \
 *     -Dit.test=SparkWorkersBench -Dcluster.bench.scale=0.02
 * </pre>
 *
 * <p>It builds the demo's database once (scale {@code cluster.bench.scale}, 0.02 unless given:
 * about 120,000 line items; 20 change transactions, the second 10 committed during the first run),
 * then runs the job {@code cluster.bench.rounds} times (2) on each cluster size, alternating (one
 * Worker, two, one, two, ...), each run a new cluster and a new target: {@code --snapshot=chunked},
 * chunks of {@code cluster.bench.chunkRows} rows (10,000), four per wave. Each run prints {@code
 * FIGURE spark-workers=<n> run=<i> wall_s=<s> pipeline_s=<s> done_s=<s> driver_cpu_s=<s>
 * executors_cpu_s=<s>}: the submission's wall time; the pipeline's time on the cluster (its Spark
 * jobs, first submitted to last completed, from the event log); the job's own {@code Done in} (less
 * than the pipeline's time in a run of one table: 5.0 s of 13.6 s once); and the CPU seconds of the
 * driver's and of the executors' JVMs. The end {@code FIGURE spark-workers ratio_1_over_2=<r>} is
 * from the medians of the pipeline times. Each run's event log and driver output are kept in {@code
 * target/spark-workers-bench/run-<i>}.
 */
class SparkWorkersBench {
  private static final Pattern DONE = Pattern.compile("(?m)^Done in ([0-9.]+) s");

  private static final Pattern JOB_START =
      Pattern.compile("\"Event\":\"SparkListenerJobStart\".*\"Submission Time\":([0-9]+)");

  private static final Pattern JOB_END =
      Pattern.compile("\"Event\":\"SparkListenerJobEnd\".*\"Completion Time\":([0-9]+)");

  @TempDir static Path dir;

  @Test
  void aChunkedSnapshotOnTwoOneCoreWorkersAgainstOne() throws Exception {
    String scale = System.getProperty("cluster.bench.scale", "0.02");
    String chunkRows = System.getProperty("cluster.bench.chunkRows", "10000");
    int rounds = Integer.parseInt(System.getProperty("cluster.bench.rounds", "2"));
    Path source = dir.resolve("source");
    Path kept = Path.of("target", "spark-workers-bench");
    if (Files.exists(kept)) {
      try (var old = Files.walk(kept)) {
        old.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
    // The demo's database, built by a run of the job that writes nothing else worth keeping.
    run(0, 1, source, scale, chunkRows, "warm-up");
    Map<Integer, List<Double>> done = new TreeMap<>();
    int run = 1;
    for (int round = 0; round < rounds; round++) {
      for (int workers : new int[] {1, 2}) {
        done.computeIfAbsent(workers, w -> new ArrayList<>())
            .add(run(run++, workers, source, scale, chunkRows, "measured"));
      }
    }
    double one = median(done.get(1));
    double two = median(done.get(2));
    System.out.printf(
        Locale.ROOT,
        "FIGURE spark-workers ratio_1_over_2=%.2f median_pipeline_s_1=%.1f"
            + " median_pipeline_s_2=%.1f scale=%s chunk_rows=%s%n",
        one / two,
        one,
        two,
        scale,
        chunkRows);
    assertTrue(one > 0 && two > 0, "both sizes measured: " + done);
  }

  /** One run on a new cluster of {@code workers} Workers; returns the job's {@code Done in} s. */
  private static double run(
      int i, int workers, Path source, String scale, String chunkRows, String kind)
      throws IOException, InterruptedException {
    Path runDir = dir.resolve("run-" + i);
    Files.createDirectories(runDir);
    Path lake = runDir.resolve("lake");
    Path options = runDir.resolve("bench.options");
    Files.write(
        options,
        List.of(
            "--fakePath=" + source,
            "--buildDemo=true",
            "--demoScale=" + scale,
            "--demoTransactions=20",
            "--captureInstance=dbo_lineitem",
            "--target=" + lake.resolve("dbo_lineitem"),
            "--factsTable=" + lake.resolve("facts"),
            "--controlTable=" + lake.resolve("table_finalization"),
            "--snapshot=chunked",
            "--snapshotChunkRows=" + chunkRows,
            "--chunksPerWave=4"));
    try (SparkCluster cluster = new SparkCluster(runDir.resolve("cluster"))) {
      boolean jfr = Boolean.getBoolean("cluster.bench.jfr");
      if (jfr) {
        // Each executor writes executor.jfr in its own working directory under its Worker's.
        cluster.javaOptions(
            "-XX:StartFlightRecording=filename="
                + runDir.resolve("driver.jfr")
                + ",settings=profile",
            "-XX:StartFlightRecording=filename=executor.jfr,settings=profile");
      }
      cluster.start(workers);
      long start = System.nanoTime();
      ClusterProcess submit =
          cluster.submit("spark-submit", options, runDir, runDir.resolve("events"));
      CpuSampler cpu = new CpuSampler(submit, cluster.workers());
      int exit;
      try {
        exit = submit.awaitExit(Duration.ofMinutes(30));
      } finally {
        cpu.stop();
      }
      double wall = (System.nanoTime() - start) / 1e9;
      // The executors end after the driver (their Workers stop them) and write their recordings
      // as they end.
      for (int wait = 0; jfr && wait < 60 && anyExecutor(cluster); wait++) {
        Thread.sleep(500);
      }
      keep(runDir, i);
      String printed = submit.output();
      assertEquals(0, exit, "run " + i + ":\n" + ClusterProcess.tail(printed));
      Matcher m = DONE.matcher(printed);
      assertTrue(m.find(), "no 'Done in' line:\n" + ClusterProcess.tail(printed));
      double doneSeconds = Double.parseDouble(m.group(1));
      double pipelineSeconds = pipelineSeconds(runDir.resolve("events"));
      System.out.printf(
          Locale.ROOT,
          "FIGURE spark-workers=%d run=%d kind=%s wall_s=%.1f pipeline_s=%.1f done_s=%.1f"
              + " driver_cpu_s=%.1f executors_cpu_s=%.1f%n",
          workers,
          i,
          kind,
          wall,
          pipelineSeconds,
          doneSeconds,
          cpu.driverSeconds(),
          cpu.executorSeconds());
      return pipelineSeconds;
    }
  }

  private static boolean anyExecutor(SparkCluster cluster) {
    return cluster.workers().stream().anyMatch(w -> !SparkCluster.executors(w).isEmpty());
  }

  /**
   * The seconds from the submission of the application's first Spark job to the completion of its
   * last, from its event log in {@code events}: the pipeline's work on the cluster (the snapshot's
   * chunk reads and commits, executors registering while the first job waits for them), without the
   * driver JVM's start and the launcher's planning before the pipeline.
   */
  private static double pipelineSeconds(Path events) throws IOException {
    long first = Long.MAX_VALUE;
    long last = Long.MIN_VALUE;
    try (var files = Files.list(events)) {
      for (Path f : (Iterable<Path>) files::iterator) {
        try (var lines = Files.lines(f)) {
          for (String line : (Iterable<String>) lines::iterator) {
            Matcher start = JOB_START.matcher(line);
            if (start.find()) {
              first = Math.min(first, Long.parseLong(start.group(1)));
            }
            Matcher end = JOB_END.matcher(line);
            if (end.find()) {
              last = Math.max(last, Long.parseLong(end.group(1)));
            }
          }
        }
      }
    }
    assertTrue(first <= last, "no Spark job in the event log of " + events);
    return (last - first) / 1000.0;
  }

  /**
   * Copies a run's event log and driver output to {@code target/spark-workers-bench/run-<i>} (the
   * run's directory is a temporary one), for a look at where its tasks ran and waited.
   */
  private static void keep(Path runDir, int i) throws IOException {
    Path kept = Path.of("target", "spark-workers-bench", "run-" + i);
    Files.createDirectories(kept);
    try (var files = Files.walk(runDir)) {
      int n = 0;
      for (Path f : (Iterable<Path>) files::iterator) {
        if (f.getFileName().toString().endsWith(".jfr")) {
          Files.copy(
              f, kept.resolve((n++) + "-" + f.getFileName()), StandardCopyOption.REPLACE_EXISTING);
        }
      }
    }
    try (var files = Files.walk(runDir.resolve("events"))) {
      for (Path f : (Iterable<Path>) files::iterator) {
        if (Files.isRegularFile(f)) {
          Files.copy(f, kept.resolve(f.getFileName()), StandardCopyOption.REPLACE_EXISTING);
        }
      }
    }
    Path log = runDir.resolve("spark-submit.log");
    if (Files.exists(log)) {
      Files.copy(log, kept.resolve("spark-submit.log"), StandardCopyOption.REPLACE_EXISTING);
    }
  }

  /**
   * The CPU time of a run's driver (the submission's JVM) and of its executors (the Workers' child
   * JVMs), sampled every 200 ms while they live: the last sample of each process counts, so a
   * process's last 200 ms may be missing.
   */
  private static final class CpuSampler {
    private final Map<Long, Duration> driver = new ConcurrentHashMap<>();
    private final Map<Long, Duration> executors = new ConcurrentHashMap<>();
    private final Thread thread;
    private volatile boolean stopped;

    CpuSampler(ClusterProcess submit, List<ClusterProcess> workers) {
      thread =
          new Thread(
              () -> {
                while (!stopped) {
                  sample(submit.selfAndDescendants(), driver);
                  for (ClusterProcess w : workers) {
                    sample(SparkCluster.executors(w), executors);
                  }
                  try {
                    Thread.sleep(200);
                  } catch (InterruptedException e) {
                    return;
                  }
                }
              },
              "cpu-sampler");
      thread.setDaemon(true);
      thread.start();
    }

    private static void sample(List<ProcessHandle> processes, Map<Long, Duration> into) {
      for (ProcessHandle p : processes) {
        p.info().totalCpuDuration().ifPresent(d -> into.put(p.pid(), d));
      }
    }

    void stop() throws InterruptedException {
      stopped = true;
      thread.join();
    }

    double driverSeconds() {
      return seconds(driver);
    }

    double executorSeconds() {
      return seconds(executors);
    }

    private static double seconds(Map<Long, Duration> cpu) {
      return cpu.values().stream().mapToLong(Duration::toMillis).sum() / 1000.0;
    }
  }

  private static double median(List<Double> values) {
    List<Double> sorted = values.stream().sorted().toList();
    int n = sorted.size();
    return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
  }
}
