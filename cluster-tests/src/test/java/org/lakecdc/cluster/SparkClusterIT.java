package org.lakecdc.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
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
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
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
import org.lakecdc.locals3.LocalS3Server;

/**
 * The bundled Spark jar on a Spark 3.5 standalone cluster the test starts: a Master and two Workers
 * of one core each, separate JVMs on loopback, executors launched by the Workers from a Spark home
 * laid out from Maven Central ({@link SparkCluster}). The jar is submitted with {@code
 * templates/spark-submit.sh} and {@code SPARK_MASTER=spark://127.0.0.1:<port>}, as a user would,
 * with the demo's five tables in one pipeline ({@link DemoRun}).
 *
 * <p>The first run goes uninterrupted: it exits with 0, prints the demo's counts per table, and
 * Spark's own event log shows the tasks of dbo_supplier's snapshot and of the stream on both
 * executors (but the one-element step that starts dbo_supplier's stream after its snapshot, which
 * runs on one of them or both). Then, in one more run, an executor is killed with SIGKILL (the
 * Master has its Worker launch a new one), and later a Worker with its executor: the job finishes
 * on what is left (Spark retries the lost tasks) and every table (five bronze, facts, control, five
 * silver) holds what the uninterrupted run's holds, rows from killed task attempts never
 * referenced.
 *
 * <p>The fault run's tables are on {@code s3a://lake/faults} on a {@link LocalS3Server} the test
 * starts on loopback, as a user on EMR or Dataproc has them: the S3 jars reach the driver and the
 * executors with spark-submit's {@code --jars} ({@link SparkCluster#s3Jars()}), the credentials
 * with {@code --hadoopConfFile} (never printed), the other settings with {@code --hadoopConf}. The
 * executors on both Workers commit to the shared facts and control tables, and every commit file of
 * every table reached the server through a conditional PUT ({@code If-None-Match: *}) that won,
 * none through a plain one (the server's own record of its requests).
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Timeout(value = 20, unit = TimeUnit.MINUTES)
class SparkClusterIT {
  /** How long one run may take on a loaded two-core machine. */
  private static final Duration RUN = Duration.ofMinutes(15);

  /** The summary line of each table after an uninterrupted run of the demo (DemoRun's options). */
  private static final List<String> SUMMARY =
      List.of(
          "  dbo_orders    10 batches, 159 change rows (34 inserts, 57 updates in 114 rows, 11"
              + " deletes); batch 9 at 0x0000002A000001000A01;"
              + " finalized_until = 2026-11-01T05:00 UTC",
          "  dbo_lineitem  5 batches, 199 change rows (138 inserts, 14 updates in 28 rows, 33"
              + " deletes); batch 4 at 0x0000002A000001000A01;"
              + " finalized_until = 2026-11-01T05:00 UTC",
          "  dbo_customer  10 batches, 73 change rows (2 inserts, 34 updates in 68 rows, 3"
              + " deletes); batch 9 at 0x0000002A000001000A01;"
              + " finalized_until = 2026-11-01T05:00 UTC",
          "  dbo_part      10 batches, 32 change rows (0 inserts, 16 updates in 32 rows, 0"
              + " deletes); batch 9 at 0x0000002A000001000A01;"
              + " finalized_until = 2026-11-01T05:00 UTC",
          "  dbo_supplier  10 batches, 32 change rows (0 inserts, 16 updates in 32 rows, 0"
              + " deletes); a snapshot of 10 rows; batch 9 at 0x0000002A000001000A01;"
              + " finalized_until = 2026-11-01T05:00 UTC");

  /**
   * Silver's rows per table ({@link DemoRun#TABLES}' order): the keys the stream left (101 keys
   * applied less 11 deleted, 185 less 33, 32 less 3, 16) and dbo_supplier's 10 snapshot keys.
   */
  private static final List<Integer> SILVER_ROWS = List.of(90, 152, 29, 16, 10);

  @TempDir static Path dir;

  /** The fault run's tables: the bucket of {@link #s3}, under this prefix. */
  private static final String BUCKET = "lake";

  private static final String FAULTS = "faults";

  private static LocalS3Server s3;
  private static SparkCluster cluster;
  private static DemoRun uninterrupted;
  private static Map<String, List<String>> expected;

  @BeforeAll
  static void startTheCluster() throws IOException {
    s3 = LocalS3Server.startRecordingRequests(dir.resolve("s3"));
    s3.createBucket(BUCKET);
    // The reader's session reads the fault run's tables through S3A with the job's settings.
    s3.hadoopConf().forEach((k, v) -> spark().sparkContext().hadoopConfiguration().set(k, v));
    cluster = new SparkCluster(dir.resolve("cluster"));
    cluster.start(2);
  }

  @AfterAll
  static void stopTheCluster() {
    if (cluster != null) {
      cluster.close();
    }
    if (s3 != null) {
      s3.close();
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
        printed.contains("5 tables, 45 batches, 495 change rows in "),
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
        List.of("10", "159"),
        List.of(
            lastCsvValue(uninterrupted.dir, "lakecdc_table_dbo_orders", "committed_batches"),
            lastCsvValue(uninterrupted.dir, "lakecdc_table_dbo_orders", "committed_rows")),
        "dbo_orders' committed_batches and committed_rows in Spark's metrics system");
    // The metrics the sink cannot name a file for (the reader's, under long step names) are left
    // out quietly: the home's logging keeps the sink's reporter to errors.
    assertFalse(printed.contains("File name too long"), "the CSV sink's noise:\n" + tail(printed));

    // Spark's own record of where the tasks ran: both executors (one per Worker) ran tasks of
    // dbo_supplier's snapshot, of the stream of the four tables without one, of dbo_supplier's
    // stream after its snapshot, of silver and of the count. The step that starts dbo_supplier's
    // stream once its snapshot is in has one element: its stage's tasks ran on one executor or on
    // both (one run saw [0], the next [0, 1]), so it is only asserted to have run on theirs.
    Map<String, Set<String>> executorsByPipeline = executorsByPipeline(events);
    String start = "Start the stream of dbo_supplier after its snapshot";
    Set<String> startedOn = executorsByPipeline.remove(start);
    assertTrue(
        startedOn != null && !startedOn.isEmpty() && Set.of("0", "1").containsAll(startedOn),
        "the executor ids that ran '" + start + "' (0, 1 or both): " + startedOn);
    Map<String, Set<String>> expectedSpread = new TreeMap<>();
    expectedSpread.put("Snapshot dbo_supplier to bronze", Set.of("0", "1"));
    expectedSpread.put(
        "Read dbo_orders,dbo_lineitem,dbo_customer,dbo_part and write to Delta", Set.of("0", "1"));
    expectedSpread.put("Read dbo_supplier after its snapshot and write to Delta", Set.of("0", "1"));
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
    // Beam's sink writes its counters as gauges of doubles: 10.0.
    return String.valueOf((long) Double.parseDouble(last.substring(last.indexOf(',') + 1)));
  }

  /**
   * The fault run, shared by the two fault tests: one run in which an executor is killed, then a
   * Worker (one run of the demo's stream instead of two).
   */
  private static DemoRun faultRun;

  private static ClusterProcess faultSubmit;

  @Test
  @Order(2)
  void anExecutorKilledMidRunIsReplacedAndTheRunGoesOn() throws Exception {
    Path runDir = dir.resolve("faults");
    faultRun =
        new DemoRun(
            "faults",
            runDir,
            "s3a://" + BUCKET + "/" + FAULTS,
            s3.bucketDirectory(BUCKET).resolve(FAULTS),
            s3Options(runDir));
    faultSubmit =
        cluster.submit(
            "spark-submit",
            faultRun.options,
            faultRun.dir,
            faultRun.dir.resolve("events"),
            SparkCluster.s3Jars());
    awaitBronzeVersion(faultRun, faultSubmit, 3);
    ClusterProcess first = cluster.workers().get(0);
    List<ProcessHandle> executors = SparkCluster.executors(first);
    assertEquals(1, executors.size(), "Worker 1's executors: " + executors);
    long killed = executors.get(0).pid();
    executors.get(0).destroyForcibly();
    // The driver sees its executor go, and the Worker launches a new one for the application.
    ClusterProcess.await(
        "the driver seeing the executor go",
        () -> {
          String out = faultSubmit.output();
          return out.contains("Executor lost")
              || out.contains("Lost executor")
              || out.contains("ExecutorLostFailure");
        },
        RUN,
        faultSubmit);
    ClusterProcess.await(
        "a new executor on Worker 1",
        () -> SparkCluster.executors(first).stream().anyMatch(p -> p.pid() != killed),
        RUN,
        faultSubmit);
  }

  @Test
  @Order(3)
  void thenAWorkerKilledMidRunLeavesTheTablesOfAnUninterruptedRun() throws Exception {
    assertTrue(faultSubmit != null, "the fault run started (the executor was killed first)");
    awaitBronzeVersion(faultRun, faultSubmit, 6);
    ClusterProcess victim = cluster.workers().get(1);
    List<ProcessHandle> itsExecutors = SparkCluster.executors(victim);
    victim.killHard();
    // Without its Worker, the executor ends too (it watches its Worker); as on a lost machine.
    itsExecutors.forEach(ProcessHandle::destroyForcibly);
    int exit = faultSubmit.awaitExit(RUN);
    assertEquals(
        0, exit, "spark-submit's exit code; its output ends:\n" + tail(faultSubmit.output()));
    assertSameTables(faultRun, faultSubmit);
    assertFalse(
        faultSubmit.output().contains(LocalS3Server.SECRET_KEY),
        "the S3 secret key in spark-submit's output");
    assertCommitsWereConditionalPuts(faultSubmit.output());
  }

  /**
   * The fault run's S3 options: the credentials in a {@code core-site.xml}-form file ({@code
   * --hadoopConfFile}, read on the launcher and sent to the executors with the job), the endpoint
   * and the other settings as one {@code --hadoopConf}.
   */
  private static List<String> s3Options(Path runDir) throws IOException {
    Path site = runDir.resolve("lake-site.xml");
    Map<String, String> settings = new TreeMap<>(s3.hadoopConf());
    StringBuilder xml = new StringBuilder("<configuration>\n");
    for (String secret : List.of("fs.s3a.access.key", "fs.s3a.secret.key")) {
      xml.append("  <property><name>")
          .append(secret)
          .append("</name><value>")
          .append(settings.remove(secret))
          .append("</value></property>\n");
    }
    Files.createDirectories(runDir);
    Files.writeString(site, xml.append("</configuration>\n"));
    List<String> entries = new ArrayList<>();
    settings.forEach((k, v) -> entries.add(k + "=" + v));
    return List.of("--hadoopConfFile=" + site, "--hadoopConf=" + String.join(",", entries));
  }

  /**
   * Every commit file of the fault run's tables ({@code <table>/_delta_log/<version>.json} under
   * the bucket) was created by a PUT with {@code If-None-Match: *} that the server answered without
   * an error, and no commit file key was ever PUT without it: the job's log store on S3 is the
   * conditional one on every JVM that committed (launcher, both executors, the replaced one).
   */
  private static void assertCommitsWereConditionalPuts(String printed) throws IOException {
    Pattern commit = Pattern.compile(Pattern.quote(FAULTS) + "/.+/_delta_log/\\d{20}\\.json");
    List<LocalS3Server.Request> requests = s3.requests();
    List<LocalS3Server.Request> puts =
        requests.stream()
            .filter(r -> r.method().equals("PUT") && commit.matcher(r.key()).matches())
            .toList();
    assertEquals(
        List.of(),
        puts.stream().filter(r -> !r.ifNoneMatch()).toList(),
        "commit files PUT without If-None-Match");
    Set<String> won =
        puts.stream()
            .filter(r -> r.status() == 200)
            .map(LocalS3Server.Request::key)
            .collect(Collectors.toCollection(TreeSet::new));
    Path bucket = s3.bucketDirectory(BUCKET);
    Set<String> commitFiles;
    try (Stream<Path> files = Files.walk(bucket.resolve(FAULTS))) {
      commitFiles =
          files
              .map(f -> bucket.relativize(f).toString())
              .filter(k -> commit.matcher(k).matches())
              .collect(Collectors.toCollection(TreeSet::new));
    }
    assertEquals(commitFiles, won, "the commit files and the conditional PUTs that created them");
    long refused = puts.stream().filter(r -> r.status() == 412).count();
    Matcher done = Pattern.compile("Done in [\\d.]+ s").matcher(printed);
    System.out.printf(
        "Fault run on S3 (%s): %d commit files, each created by a conditional PUT; %d conditional"
            + " PUTs refused with 412 (a version another writer had taken); %d requests in all%n",
        done.find() ? done.group() : "no summary", commitFiles.size(), refused, requests.size());
  }

  /**
   * Waits until dbo_orders' bronze log reaches {@code version} (of 10: the stream's 10 batches
   * after the table's creation): the stream is under way, the batches after it still to come.
   */
  private static void awaitBronzeVersion(DemoRun run, ClusterProcess submit, int version) {
    Path commit =
        run.localTable("dbo_orders").resolve(String.format("_delta_log/%020d.json", version));
    ClusterProcess.await(
        "dbo_orders' bronze at version " + version, () -> Files.exists(commit), RUN, submit);
  }

  /**
   * Every table of {@code run} holds the uninterrupted run's rows (timings aside), every data file
   * the tables reference exists (the files of killed task attempts stay unreferenced), and the
   * run's summary has the uninterrupted run's totals.
   */
  private static void assertSameTables(DemoRun run, ClusterProcess submit) {
    assertTrue(expected != null, "the uninterrupted run ran first");
    // Every batch of the uninterrupted run is counted once: as committed by the run, or on the
    // already-written line when a retried attempt found it committed by the killed one.
    String printed = submit.output();
    assertEquals(
        List.of(5L, 45L, 495L),
        totals(printed),
        "the summary's totals of run " + run.name + ":\n" + tail(printed));
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

  private static final Pattern TOTALS =
      Pattern.compile(
          "Done in [\\d.]+ s: ([\\d,]+) tables?, ([\\d,]+) batch(?:es)?, ([\\d,]+) change rows?"
              + " in ");

  private static final Pattern ALREADY_WRITTEN =
      Pattern.compile(
          "(?m)^Found already written: ([\\d,]+) batch(?:es)?, ([\\d,]+) change rows? \\(");

  /**
   * From a run's output: its tables, and its batches and change rows with those of the {@code Found
   * already written} line added (a batch a killed task attempt committed, which its retry found
   * written); empty when the summary line is missing.
   */
  static List<Long> totals(String printed) {
    Matcher summary = TOTALS.matcher(printed);
    if (!summary.find()) {
      return List.of();
    }
    long batches = number(summary.group(2));
    long rows = number(summary.group(3));
    Matcher written = ALREADY_WRITTEN.matcher(printed);
    if (written.find()) {
      batches += number(written.group(1));
      rows += number(written.group(2));
    }
    return List.of(number(summary.group(1)), batches, rows);
  }

  private static long number(String digits) {
    return Long.parseLong(digits.replace(",", ""));
  }

  private static String tail(String text) {
    return ClusterProcess.tail(text);
  }
}
