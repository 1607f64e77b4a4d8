package org.lakecdc.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.spark.sql.Row;
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
 * The bundled Flink jar on a Flink 1.19 session cluster the test starts: a JobManager and two
 * TaskManagers of two slots each, separate JVMs on loopback, from a Flink home laid out from Maven
 * Central ({@link FlinkCluster}). The jar is submitted with {@code templates/flink-run.sh} ({@code
 * flink run}, Flink's {@code CliFrontend}), the demo's five tables in one pipeline ({@link
 * DemoRun}) in continuous mode, stopped with {@code flink cancel}.
 *
 * <p>The first run goes uninterrupted: the stream's subtasks run on both TaskManagers (the
 * JobManager's REST API says where), each table's Beam counters reach Flink's Prometheus reporter,
 * the tables hold the demo's changes, and {@code flink cancel} ends the job and the client. Then a
 * TaskManager is killed with SIGKILL in the middle of a run: Flink's restart strategy restarts the
 * job on the other TaskManager and every table ends as in the uninterrupted run.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Timeout(value = 20, unit = TimeUnit.MINUTES)
class FlinkClusterIT {
  private static final Duration RUN = Duration.ofMinutes(15);

  /** Each table's last batch (DemoRun's demo, as every runner numbers it). */
  private static final Map<String, Integer> LAST_BATCH =
      Map.of(
          "dbo_orders", 9,
          "dbo_lineitem", 4,
          "dbo_customer", 9,
          "dbo_part", 9,
          "dbo_supplier", 9);

  /** Bronze rows per table: the change rows (and dbo_supplier's bootstrap snapshot). */
  private static final Map<String, Integer> BRONZE_ROWS =
      Map.of(
          "dbo_orders", 159,
          "dbo_lineitem", 199,
          "dbo_customer", 73,
          "dbo_part", 32,
          "dbo_supplier", 10 + 32);

  /**
   * Each silver table's {@code applied_lsn} once it holds all of bronze: the LSN of the table's
   * last change (the same on every runner).
   */
  static final Map<String, String> SILVER_APPLIED_LSN =
      Map.of(
          "dbo_orders", "0x0000002A000001000A01",
          "dbo_lineitem", "0x0000002A000001000A01",
          "dbo_customer", "0x0000002A000001000A01",
          "dbo_part", "0x0000002A000001000971",
          "dbo_supplier", "0x0000002A000001000901");

  @TempDir static Path dir;

  private static FlinkCluster cluster;
  private static Map<String, List<String>> expected;

  @BeforeAll
  static void startTheCluster() throws Exception {
    cluster = new FlinkCluster(dir.resolve("cluster"));
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

  /** Every table's last batch committed: its facts row is in the facts table. */
  private static boolean allBatchesCommitted(DemoRun run) {
    for (Map.Entry<String, Integer> last : LAST_BATCH.entrySet()) {
      if (!Readers.factsHaveBatch(run.localTable("facts"), last.getKey(), last.getValue())) {
        return false;
      }
    }
    return true;
  }

  /**
   * Every silver table holds all of bronze: its last commit's {@code applied_lsn} is the table's
   * last change. In the continuous form silver applies on its own clock (every {@code
   * --silverIntervalSeconds}, one apply at a time per subtask), and {@code flink cancel} ends the
   * job without the launcher's apply after the pipeline: a silver table is left where its last
   * timed apply left it (one never applied yet has neither its table nor its control row), until
   * the next run applies the rest.
   */
  private static boolean silverCaughtUp(DemoRun run) {
    for (Map.Entry<String, String> lsn : SILVER_APPLIED_LSN.entrySet()) {
      String applied = Readers.silverAppliedLsn(run.localTable("silver/" + lsn.getKey()));
      if (!lsn.getValue().equals(applied)) {
        return false;
      }
    }
    return true;
  }

  /**
   * Every silver table's control row records the last apply: its {@code applied_lsn} is {@link
   * #SILVER_APPLIED_LSN}'s and its {@code finalized_until} its bronze table's. A silver apply
   * commits silver first and writes its control row after, so the row can lag the commit that
   * {@link #silverCaughtUp} sees.
   */
  private static boolean controlCaughtUp(DemoRun run) {
    Map<String, List<String>> rows = new TreeMap<>();
    for (Row row :
        spark()
            .read()
            .format("delta")
            .load(run.tables().get("table_finalization"))
            .collectAsList()) {
      rows.put(
          row.getAs("table_name"),
          List.of(
              String.valueOf(row.<Object>getAs("applied_lsn")),
              String.valueOf(row.<Object>getAs("finalized_until"))));
    }
    for (Map.Entry<String, String> lsn : SILVER_APPLIED_LSN.entrySet()) {
      List<String> silver = rows.get(run.tables().get("silver/" + lsn.getKey()));
      List<String> bronze = rows.get(run.tables().get(lsn.getKey()));
      if (silver == null
          || bronze == null
          || !silver.get(0).equals(lsn.getValue())
          || !silver.get(1).equals(bronze.get(1))) {
        return false;
      }
    }
    return true;
  }

  /**
   * The id of the RUNNING job of the continuous pipeline: the one whose vertices include the
   * stream's ({@code Follow <tables> and write to Delta as batches arrive/…}); a new table's
   * bootstrap snapshot is a branch of that job.
   */
  private static String runningJob(ClusterProcess client) {
    List<String> running = new ArrayList<>();
    ClusterProcess.await(
        "the continuous pipeline's job running",
        () -> {
          running.clear();
          JsonNode jobs = cluster.rest("/jobs/overview");
          if (jobs != null) {
            for (JsonNode job : jobs.get("jobs")) {
              String id = job.get("jid").asText();
              JsonNode details = cluster.rest("/jobs/" + id);
              if (job.get("state").asText().equals("RUNNING") && details != null) {
                for (JsonNode vertex : details.path("vertices")) {
                  if (vertex.path("name").asText().startsWith("Follow ")) {
                    running.add(id);
                    break;
                  }
                }
              }
            }
          }
          return running.size() == 1;
        },
        RUN,
        client);
    return running.get(0);
  }

  /**
   * The TaskManager ids that run subtasks of each of the job's vertices of parallelism 2 or more,
   * by vertex name. A vertex of parallelism 1 (Flink runs Beam's {@code Impulse}, the start of a
   * new table's snapshot branch, as such a source) runs on one TaskManager by definition.
   */
  private static Map<String, Set<String>> taskManagersByVertex(String job) {
    Map<String, Set<String>> out = new TreeMap<>();
    for (JsonNode vertex : cluster.rest("/jobs/" + job).get("vertices")) {
      if (vertex.path("parallelism").asInt(2) < 2) {
        continue;
      }
      Set<String> ids = new TreeSet<>();
      JsonNode tms =
          cluster.rest("/jobs/" + job + "/vertices/" + vertex.get("id").asText() + "/taskmanagers");
      for (JsonNode tm : tms.get("taskmanagers")) {
        ids.add(tm.get("taskmanager-id").asText());
      }
      out.put(vertex.get("name").asText(), ids);
    }
    return out;
  }

  @Test
  @Order(1)
  void fiveTablesContinuouslyOnBothTaskManagersStoppedByFlinkCancel() throws Exception {
    DemoRun run =
        new DemoRun("uninterrupted", dir.resolve("uninterrupted"), List.of("--continuous=true"));
    ClusterProcess client = cluster.run("flink-run", run.options, run.dir);
    String job = runningJob(client);
    ClusterProcess.await(
        "every table's last batch in bronze", () -> allBatchesCommitted(run), RUN, client);
    ClusterProcess.await("every silver table up to bronze", () -> silverCaughtUp(run), RUN, client);
    List<Path> control = List.of(run.localTable("table_finalization"));
    ClusterProcess.await(
        "every silver table's control row at its last apply",
        whenChanged(control, () -> controlCaughtUp(run)),
        Duration.ofMinutes(2),
        client);

    Map<String, Set<String>> where = taskManagersByVertex(job);
    Set<String> both = new TreeSet<>();
    where.values().forEach(both::addAll);
    assertEquals(2, both.size(), "TaskManagers running the stream: " + where);
    long onBoth = where.values().stream().filter(ids -> ids.size() == 2).count();
    assertEquals(where.size(), onBoth, "every vertex has a subtask on each TaskManager: " + where);

    // Each table's Beam counters, through Flink's metric system, on the TaskManagers' Prometheus
    // endpoints (summed over the subtasks that ran the table's committer).
    String batches =
        "flink_taskmanager_job_task_operator_lakecdc_table_dbo_orders_committed_batches";
    String rows = "flink_taskmanager_job_task_operator_lakecdc_table_dbo_orders_committed_rows";
    StringBuilder scraped = new StringBuilder();
    ClusterProcess.await(
        "dbo_orders' 10 batches and 159 rows on the Prometheus endpoints",
        () -> {
          scraped.setLength(0);
          for (ClusterProcess tm : cluster.taskManagers()) {
            scraped.append(cluster.scrape(tm));
          }
          writeQuietly(run.dir.resolve("prometheus.txt"), scraped.toString());
          return counter(scraped.toString(), batches) == 10
              && counter(scraped.toString(), rows) == 159;
        },
        Duration.ofMinutes(2),
        client);

    ClusterProcess cancel = cluster.flink("flink-cancel", run.dir, "cancel", job);
    assertEquals(0, cancel.awaitExit(Duration.ofMinutes(2)), cancel.output());
    // `flink run` waits for the job: a cancelled job is its job's failure, so the client ends with
    // the job's one error line and exit code 1, and without the NoClassDefFoundError of a Hadoop
    // shutdown hook (ShutdownHookManager$2) that a client printed at its exit once.
    int exit = client.awaitExit(Duration.ofMinutes(3));
    String printed = client.output();
    assertEquals(1, exit, "the client's output after the cancel:\n" + ClusterProcess.tail(printed));
    assertTrue(
        printed.contains("error: RuntimeException: Pipeline execution failed"),
        ClusterProcess.tail(printed));
    assertFalse(printed.contains("NoClassDefFoundError"), ClusterProcess.tail(printed));

    expected = run.contents(spark());
    for (Map.Entry<String, Integer> bronze : BRONZE_ROWS.entrySet()) {
      assertEquals(
          bronze.getValue(), expected.get(bronze.getKey()).size(), bronze.getKey() + " rows");
    }
    // The control table: a row for each of the five bronze and the five silver tables, all there
    // after the cancel because the cancel came after silver's last apply.
    assertEquals(10, expected.get("table_finalization").size(), "control rows");
  }

  @Test
  @Order(2)
  void aTaskManagerKilledMidRunLeavesTheTablesOfAnUninterruptedRun() throws Exception {
    DemoRun run =
        new DemoRun(
            "taskmanager-killed", dir.resolve("taskmanager-killed"), List.of("--continuous=true"));
    ClusterProcess client = cluster.run("flink-run", run.options, run.dir);
    String job = runningJob(client);
    // dbo_orders' bronze at version 4 of 10: the stream under way, most batches still to come.
    Path version = run.localTable("dbo_orders").resolve("_delta_log/00000000000000000004.json");
    ClusterProcess.await(
        "dbo_orders' bronze at version 4", () -> Files.exists(version), RUN, client);
    cluster.taskManagers().get(1).killHard();
    assertTrue(expected != null, "the uninterrupted run ran first");
    ClusterProcess.await(
        "every table's last batch in bronze and every silver table up to bronze",
        () -> allBatchesCommitted(run) && silverCaughtUp(run),
        RUN,
        client);
    // The control rows of the last silver applies follow their silver commits: read again until
    // they are in, for at most a minute, then compare table by table.
    List<Map<String, List<String>>> read = new ArrayList<>();
    try {
      ClusterProcess.await(
          "the tables of the uninterrupted run",
          whenChanged(
              run.localTables(),
              () -> {
                read.clear();
                read.add(run.contents(spark()));
                return expected.equals(read.get(0));
              }),
          Duration.ofMinutes(1),
          client);
    } catch (AssertionError stillDifferent) {
      // the comparison below names the table that differs
    }
    for (String table : expected.keySet()) {
      assertEquals(expected.get(table), read.get(0).get(table), table + " of run " + run.name);
    }
    JsonNode restarts = cluster.rest("/jobs/" + job);
    ClusterProcess cancel = cluster.flink("flink-cancel", run.dir, "cancel", job);
    assertEquals(0, cancel.awaitExit(Duration.ofMinutes(2)), cancel.output());
    client.awaitExit(Duration.ofMinutes(3));
    Files.writeString(run.dir.resolve("job.json"), restarts.toString());
  }

  /**
   * {@code condition} on delta-spark's reads of {@code tables}, evaluated again only once a commit
   * of one of them is new ({@link Readers#logVersions}): a poll four times a second would otherwise
   * read the tables with Spark over and over while nothing in them changed.
   */
  private static BooleanSupplier whenChanged(List<Path> tables, BooleanSupplier condition) {
    List<List<String>> seen = new ArrayList<>();
    return () -> {
      List<String> now = Readers.logVersions(tables);
      if (!seen.isEmpty() && seen.get(0).equals(now)) {
        return false;
      }
      seen.clear();
      seen.add(now);
      return condition.getAsBoolean();
    };
  }

  /** Writes {@code text} to {@code file} for a look after a failure; a failure to write is left. */
  private static void writeQuietly(Path file, String text) {
    try {
      Files.writeString(file, text);
    } catch (IOException e) {
      // only a diagnostic
    }
  }

  /** The sum of the samples of the metric {@code name} in Prometheus text. */
  private static long counter(String scraped, String name) {
    Matcher m =
        Pattern.compile("(?m)^" + Pattern.quote(name) + "\\{[^}]*\\} ([0-9.E]+)$").matcher(scraped);
    long sum = 0;
    while (m.find()) {
      sum += (long) Double.parseDouble(m.group(1));
    }
    return sum;
  }
}
