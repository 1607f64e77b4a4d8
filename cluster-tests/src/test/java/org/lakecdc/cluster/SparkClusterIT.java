package org.lakecdc.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The bundled Spark jar on a Spark 3.5 standalone cluster the test starts: a Master and two Workers
 * of one core each, separate JVMs on loopback, executors launched by the Workers from a Spark home
 * laid out from Maven Central ({@link SparkCluster}). The jar is submitted with {@code
 * templates/spark-submit.sh} and {@code SPARK_MASTER=spark://127.0.0.1:<port>}, as a user would,
 * with the demo's five tables in one pipeline ({@link DemoRun}).
 *
 * <p>The first run goes uninterrupted: it exits with 0, prints the demo's counts per table, and
 * Spark's own event log shows the tasks of dbo_supplier's snapshot and of the stream on both
 * executors. Then a Worker is killed with SIGKILL in the middle of a run, and, in another run, an
 * executor: each time the job finishes on what is left (Spark retries the lost tasks; the Master
 * replaces a lost executor) and every table (five bronze, facts, control, five silver) holds what
 * the uninterrupted run's holds, rows from killed task attempts never referenced.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Timeout(value = 20, unit = TimeUnit.MINUTES)
class SparkClusterIT {
  /** How long one run may take on a loaded two-core machine. */
  private static final Duration RUN = Duration.ofMinutes(15);

  /** The summary line of each table after an uninterrupted run of the demo (DemoRun's options). */
  private static final List<String> SUMMARY =
      List.of(
          "  dbo_orders    19 batches, 323 change rows (67 inserts, 120 updates in 240 rows, 16"
              + " deletes); batch 18 at 0x0000002A000001001371;"
              + " finalized_until = 2026-11-01T06:00 UTC",
          "  dbo_lineitem  10 batches, 401 change rows (268 inserts, 42 updates in 84 rows, 49"
              + " deletes); batch 9 at 0x0000002A000001001371;"
              + " finalized_until = 2026-11-01T06:00 UTC",
          "  dbo_customer  19 batches, 141 change rows (4 inserts, 67 updates in 134 rows, 3"
              + " deletes); batch 18 at 0x0000002A000001001371;"
              + " finalized_until = 2026-11-01T06:00 UTC",
          "  dbo_part      19 batches, 96 change rows (0 inserts, 48 updates in 96 rows, 0"
              + " deletes); batch 18 at 0x0000002A000001001371;"
              + " finalized_until = 2026-11-01T06:00 UTC",
          "  dbo_supplier  19 batches, 56 change rows (0 inserts, 28 updates in 56 rows, 0"
              + " deletes); a snapshot of 10 rows; batch 18 at 0x0000002A000001001371;"
              + " finalized_until = 2026-11-01T06:00 UTC");

  /**
   * Silver's rows per table ({@link DemoRun#TABLES}' order): the keys the stream left (194 keys
   * applied less 16 deleted, 358 less 49, 53 less 3, 41) and dbo_supplier's 10 snapshot keys.
   */
  private static final List<Integer> SILVER_ROWS = List.of(178, 309, 50, 41, 10);

  @TempDir static Path dir;

  private static SparkCluster cluster;
  private static DemoRun uninterrupted;
  private static Map<String, List<String>> expected;

  @BeforeAll
  static void startTheCluster() throws IOException {
    cluster = new SparkCluster(dir.resolve("cluster"));
    cluster.start(2);
  }

  @AfterAll
  static void stopTheCluster() {
    if (cluster != null) {
      cluster.close();
    }
  }

  private static SparkSession spark() {
    return Readers.spark();
  }

  @Test
  @Order(1)
  void fiveTablesInOnePipelineRunOnBothWorkers() throws Exception {
    uninterrupted = new DemoRun("uninterrupted", dir.resolve("uninterrupted"), List.of());
    Path events = uninterrupted.dir.resolve("events");
    ClusterProcess run =
        cluster.submit("spark-submit", uninterrupted.options, uninterrupted.dir, events);
    int exit = run.awaitExit(RUN);
    String printed = run.output();
    assertEquals(0, exit, "spark-submit's exit code; its output ends:\n" + tail(printed));
    assertTrue(
        printed.contains("5 tables, 86 batches, 1,017 change rows in "),
        "the summary's totals:\n" + tail(printed));
    for (String line : SUMMARY) {
      assertTrue(printed.contains(line + "\n"), line + "\nnot in:\n" + tail(printed));
    }

    expected = uninterrupted.contents(spark());
    for (String ci : DemoRun.TABLES) {
      List<String> bronze = expected.get(ci);
      assertEquals(
          bronze.size(), new TreeSet<>(bronze).size(), ci + ": no bronze row written twice");
    }

    // Each table's Beam counters in Spark's metrics system (its CSV sink on the driver).
    assertEquals(
        List.of("19", "323"),
        List.of(
            lastCsvValue(uninterrupted.dir, "lakecdc_table_dbo_orders", "committed_batches"),
            lastCsvValue(uninterrupted.dir, "lakecdc_table_dbo_orders", "committed_rows")),
        "dbo_orders' committed_batches and committed_rows in Spark's metrics system");

    // Spark's own record of where the tasks ran: both executors (one per Worker) ran tasks of
    // dbo_supplier's snapshot and of the stream of all five.
    Map<String, Set<String>> executorsByPipeline = executorsByPipeline(events);
    Map<String, Set<String>> expectedSpread = new TreeMap<>();
    expectedSpread.put("Snapshot dbo_supplier to bronze", Set.of("0", "1"));
    expectedSpread.put(
        "Read dbo_orders,dbo_lineitem,dbo_customer,dbo_part,dbo_supplier and write to Delta",
        Set.of("0", "1"));
    expectedSpread.put("Apply changes to silver", Set.of("0", "1"));
    expectedSpread.put("Count committed batches", Set.of("0", "1"));
    assertEquals(expectedSpread, executorsByPipeline, "executor ids that ran tasks, by transform");

    // Silver holds one row per key the stream changed (dbo_supplier: its snapshot's 10 keys).
    assertEquals(
        SILVER_ROWS,
        DemoRun.TABLES.stream().map(ci -> expected.get("silver/" + ci).size()).toList(),
        "silver rows of " + DemoRun.TABLES);
    // The control table: a row for each of the five bronze and the five silver tables.
    assertEquals(10, expected.get("table_finalization").size(), "control rows");
  }

  /**
   * The last value the driver's CSV sink wrote for the Beam metric {@code namespace}/{@code name}
   * (one file per metric, {@code <app>.driver.<app name>.Beam.<step>.<namespace>.<name>.csv}, the
   * namespace's dots as underscores; rows {@code t,value}).
   */
  private static String lastCsvValue(Path runDir, String namespace, String name)
      throws IOException {
    Path metrics = SparkCluster.metrics(runDir);
    List<Path> files;
    try (Stream<Path> all = Files.list(metrics)) {
      files =
          all.filter(
                  f -> {
                    String n = f.getFileName().toString();
                    return n.contains("." + namespace + ".") && n.endsWith("." + name + ".csv");
                  })
              .toList();
    }
    if (files.size() != 1) {
      try (Stream<Path> all = Files.list(metrics)) {
        throw new AssertionError(
            "not one CSV file of "
                + namespace
                + " "
                + name
                + " among: "
                + all.map(f -> f.getFileName().toString())
                    .filter(n -> n.contains("lakecdc"))
                    .toList());
      }
    }
    List<String> rows = Files.readAllLines(files.get(0));
    String last = rows.get(rows.size() - 1);
    // Beam's sink writes its counters as gauges of doubles: 19.0.
    return String.valueOf((long) Double.parseDouble(last.substring(last.indexOf(',') + 1)));
  }

  @Test
  @Order(2)
  void aWorkerKilledMidRunLeavesTheTablesOfAnUninterruptedRun() throws Exception {
    DemoRun run = new DemoRun("worker-killed", dir.resolve("worker-killed"), List.of());
    ClusterProcess submit =
        cluster.submit("spark-submit", run.options, run.dir, run.dir.resolve("events"));
    awaitBatchesCommitted(run, submit);
    ClusterProcess victim = cluster.workers().get(1);
    List<ProcessHandle> itsExecutors = SparkCluster.executors(victim);
    victim.killHard();
    // Without its Worker, the executor ends too (it watches its Worker); as on a lost machine.
    itsExecutors.forEach(ProcessHandle::destroyForcibly);
    int exit = submit.awaitExit(RUN);
    assertEquals(0, exit, "spark-submit's exit code; its output ends:\n" + tail(submit.output()));
    assertSameTables(run, submit);
    cluster.startWorker(); // two Workers again for the next run
  }

  @Test
  @Order(3)
  void anExecutorKilledMidRunLeavesTheTablesOfAnUninterruptedRun() throws Exception {
    DemoRun run = new DemoRun("executor-killed", dir.resolve("executor-killed"), List.of());
    ClusterProcess submit =
        cluster.submit("spark-submit", run.options, run.dir, run.dir.resolve("events"));
    awaitBatchesCommitted(run, submit);
    ProcessHandle executor =
        cluster.workers().stream()
            .filter(w -> w.process.isAlive())
            .flatMap(w -> SparkCluster.executors(w).stream())
            .findFirst()
            .orElseThrow(() -> new AssertionError("no executor running"));
    executor.destroyForcibly();
    int exit = submit.awaitExit(RUN);
    assertEquals(0, exit, "spark-submit's exit code; its output ends:\n" + tail(submit.output()));
    assertTrue(
        submit.output().contains("Executor lost")
            || submit.output().contains("Lost executor")
            || submit.output().contains("ExecutorLostFailure"),
        "the driver saw the executor go");
    assertSameTables(run, submit);
  }

  /**
   * Waits until dbo_orders' bronze holds its bootstrap and a few batches (its Delta log at version
   * 8 of about 23): the stream is under way, most batches still to come.
   */
  private static void awaitBatchesCommitted(DemoRun run, ClusterProcess submit) {
    Path version = run.localTable("dbo_orders").resolve("_delta_log/00000000000000000008.json");
    ClusterProcess.await(
        "dbo_orders' bronze at version 8", () -> Files.exists(version), RUN, submit);
  }

  /**
   * Every table of {@code run} holds the uninterrupted run's rows (timings aside), every data file
   * the tables reference exists (the files of killed task attempts stay unreferenced), and the
   * run's summary has the uninterrupted run's totals.
   */
  private static void assertSameTables(DemoRun run, ClusterProcess submit) {
    assertTrue(expected != null, "the uninterrupted run ran first");
    // The summary counts what the run committed, the killed attempts' batches included.
    assertTrue(
        submit.output().contains("5 tables, 86 batches, 1,017 change rows in "),
        "the summary's totals of run " + run.name + ":\n" + tail(submit.output()));
    Map<String, List<String>> actual = run.contents(spark());
    for (String table : expected.keySet()) {
      assertEquals(expected.get(table), actual.get(table), table + " of run " + run.name);
    }
  }

  /**
   * From a Spark event log directory: the ids of the executors that ran tasks, by the first part of
   * the transform names of the stages' RDDs (Beam names each RDD after its transform).
   */
  static Map<String, Set<String>> executorsByPipeline(Path events) throws IOException {
    ObjectMapper json = new ObjectMapper();
    Map<Integer, Set<String>> transformsByStage = new TreeMap<>();
    Map<String, Set<String>> out = new TreeMap<>();
    List<Path> logs;
    try (Stream<Path> files = Files.list(events)) {
      logs = files.toList();
    }
    assertEquals(1, logs.size(), "one Spark application for the run: " + logs);
    for (String line : Files.readAllLines(logs.get(0))) {
      JsonNode event = json.readTree(line);
      String kind = event.get("Event").asText();
      if (kind.equals("SparkListenerStageSubmitted")) {
        JsonNode stage = event.get("Stage Info");
        Set<String> transforms = new TreeSet<>();
        for (JsonNode rdd : stage.get("RDD Info")) {
          String name = rdd.get("Name").asText();
          if (name.contains("/")) {
            transforms.add(name.substring(0, name.indexOf('/')));
          }
        }
        transformsByStage.put(stage.get("Stage ID").asInt(), transforms);
      } else if (kind.equals("SparkListenerTaskEnd")
          && event.get("Task End Reason").get("Reason").asText().equals("Success")) {
        String executor = event.get("Task Info").get("Executor ID").asText();
        for (String transform : transformsByStage.get(event.get("Stage ID").asInt())) {
          out.computeIfAbsent(transform, t -> new TreeSet<>()).add(executor);
        }
      }
    }
    return out;
  }

  private static String tail(String text) {
    return ClusterProcess.tail(text);
  }
}
