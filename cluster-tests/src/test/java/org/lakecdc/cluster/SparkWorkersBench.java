package org.lakecdc.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
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
 * FIGURE spark-workers=<n> run=<i> wall_s=<s> done_s=<s>} (the submission's wall time, and the
 * job's own {@code Done in} time without the JVM's start), and the end {@code FIGURE spark-workers
 * ratio_1_over_2=<r>} from the medians of the job's times.
 */
class SparkWorkersBench {
  private static final Pattern DONE = Pattern.compile("(?m)^Done in ([0-9.]+) s");

  @TempDir static Path dir;

  @Test
  void aChunkedSnapshotOnTwoOneCoreWorkersAgainstOne() throws Exception {
    String scale = System.getProperty("cluster.bench.scale", "0.02");
    String chunkRows = System.getProperty("cluster.bench.chunkRows", "10000");
    int rounds = Integer.parseInt(System.getProperty("cluster.bench.rounds", "2"));
    Path source = dir.resolve("source");
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
        "FIGURE spark-workers ratio_1_over_2=%.2f median_done_s_1=%.1f median_done_s_2=%.1f"
            + " scale=%s chunk_rows=%s%n",
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
      cluster.start(workers);
      long start = System.nanoTime();
      ClusterProcess submit =
          cluster.submit("spark-submit", options, runDir, runDir.resolve("events"));
      int exit = submit.awaitExit(Duration.ofMinutes(30));
      double wall = (System.nanoTime() - start) / 1e9;
      String printed = submit.output();
      assertEquals(0, exit, "run " + i + ":\n" + ClusterProcess.tail(printed));
      Matcher m = DONE.matcher(printed);
      assertTrue(m.find(), "no 'Done in' line:\n" + ClusterProcess.tail(printed));
      double doneSeconds = Double.parseDouble(m.group(1));
      System.out.printf(
          Locale.ROOT,
          "FIGURE spark-workers=%d run=%d kind=%s wall_s=%.1f done_s=%.1f%n",
          workers,
          i,
          kind,
          wall,
          doneSeconds);
      return doneSeconds;
    }
  }

  private static double median(List<Double> values) {
    List<Double> sorted = values.stream().sorted().toList();
    int n = sorted.size();
    return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
  }
}
