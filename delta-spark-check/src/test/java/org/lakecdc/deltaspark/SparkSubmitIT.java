package org.lakecdc.deltaspark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The bundled Spark jar ({@code spark-jar/target/lakecdc-spark-<version>.jar}) under Spark's own
 * {@code org.apache.spark.deploy.SparkSubmit}, as {@code templates/spark-submit.sh} runs it: in a
 * JVM whose class path is a Spark 3.5 cluster's (this module's: Spark 3.5.3 with Parquet 1.13.1,
 * Jackson 2.15.2 and protobuf 3.19, Guava 14.0.1 as Spark ships it, and delta-spark 3.3.2 with its
 * delta-storage 3.3.2), all of them before the jar. The main job, with its defaults in an empty
 * working directory, builds a small demo database (TPC-H, which uses Guava), bootstraps the target
 * with a snapshot pipeline and streams the demo's later transactions in batches, on {@code
 * local[2]}; it must exit with 0 and leave the tables the DirectRunner writes for the same (seeded)
 * demo, read back here with delta-spark. Before the jar relocated Guava, the job failed with {@code
 * NoSuchMethodError: Preconditions.checkState(boolean, String, long)} (Beam's GCS options) or,
 * building the demo, {@code IncompatibleClassChangeError} in Guava's {@code Suppliers}. Besides,
 * every class the jar shares with that class path must be of a library left unrelocated on purpose
 * (its version there is compatible), so a new dependency that clashes fails here before it fails on
 * a cluster.
 *
 * <p>An integration test (failsafe, {@code mvn verify}): the jar is built in the package phase of
 * the spark-jar module, before this module.
 */
@ExtendWith(SharedSpark.class)
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class SparkSubmitIT {
  /** The demo's arguments: a small database, several batches. */
  private static final List<String> JOB_ARGS =
      List.of(
          "--runner=SparkRunner",
          "--demoScale=0.001",
          "--demoTransactions=40",
          "--maxCommitsPerBatch=10");

  /** The simulator's LSNs of this demo: this prefix + 4 hex digits. */
  private static final String LSN = "0x0000002A00000100";

  @TempDir static Path dir;

  private static SparkSession spark;
  private static String printed;

  @BeforeAll
  static void submitTheJar(SharedSpark.Holder shared) throws IOException, InterruptedException {
    Path jar = Path.of(System.getProperty("lakecdc.sparkJar"));
    Path classpathFile = Path.of(System.getProperty("lakecdc.sparkClasspath"));
    if (!Files.isRegularFile(jar) || !Files.isRegularFile(classpathFile)) {
      throw new IllegalStateException(
          jar
              + " or "
              + classpathFile
              + " is missing: run SparkSubmitIT in a build that packages spark-jar"
              + " (mvn -pl delta-spark-check -am verify)");
    }
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.add("-Xmx1g");
    command.add("-XX:TieredStopAtLevel=1");
    // What Spark's launcher script adds on Java 17.
    for (String option : System.getProperty("lakecdc.sparkAddOpens").trim().split("\\s+")) {
      command.add(option);
    }
    command.addAll(
        List.of(
            "-cp",
            Files.readString(classpathFile, StandardCharsets.UTF_8).strip(),
            "org.apache.spark.deploy.SparkSubmit",
            "--master",
            "local[2]",
            "--conf",
            "spark.ui.enabled=false",
            "--conf",
            "spark.driver.host=127.0.0.1",
            "--conf",
            "spark.driver.bindAddress=127.0.0.1",
            "--class",
            "org.lakecdc.pipelines.CdcToDelta",
            jar.toAbsolutePath().toString()));
    command.addAll(JOB_ARGS);
    Path log = dir.resolve("spark-submit.log");
    Process process =
        new ProcessBuilder(command)
            .directory(dir.toFile())
            .redirectErrorStream(true)
            .redirectOutput(log.toFile())
            .start();
    spark = shared.session();
    if (!process.waitFor(10, TimeUnit.MINUTES)) {
      process.destroyForcibly();
      throw new IllegalStateException("spark-submit did not finish in 10 minutes; see " + log);
    }
    printed = Files.readString(log, StandardCharsets.UTF_8);
    assertEquals(0, process.exitValue(), "spark-submit's exit code; its output:\n" + printed);
  }

  private static String table(String name) {
    return dir.resolve("lakecdc-demo/delta").resolve(name).toString();
  }

  private static List<String> lines(List<Row> rows) {
    return rows.stream()
        .map(
            r -> {
              List<String> values = new ArrayList<>();
              for (int i = 0; i < r.size(); i++) {
                values.add(String.valueOf(r.get(i)));
              }
              return String.join(" ", values);
            })
        .collect(Collectors.toList());
  }

  /**
   * The libraries the jar may carry unrelocated although the cluster has them too (its copy wins):
   * the same version there, or a compatible later one (spark-jar/pom.xml gives the reasons), as the
   * package prefixes of their classes.
   */
  private static final Set<String> SHARED_WITH_THE_CLUSTER =
      new TreeSet<>(
          List.of(
              "com/codahale/metrics/",
              "com/fasterxml/jackson/",
              "com/github/luben/zstd/",
              "com/google/gson/",
              "javax/annotation/",
              "org/apache/avro/",
              "org/apache/commons/",
              "org/apache/logging/log4j/",
              "org/joda/time/",
              "org/roaringbitmap/",
              "org/slf4j/",
              "org/xerial/snappy/"));

  /** The class entries of a jar, without the META-INF/versions/N/ prefix of multi-release ones. */
  private static Set<String> classes(Path jar) throws IOException {
    Set<String> out = new TreeSet<>();
    try (ZipFile zip = new ZipFile(jar.toFile())) {
      for (ZipEntry entry : java.util.Collections.list(zip.entries())) {
        String name = entry.getName();
        if (name.endsWith(".class") && !name.endsWith("module-info.class")) {
          out.add(name.replaceFirst("^META-INF/versions/\\d+/", ""));
        }
      }
    }
    return out;
  }

  @Test
  void everyClassTheClusterAlsoHasIsOfALibraryLeftUnrelocatedOnPurpose() throws IOException {
    Set<String> cluster = new TreeSet<>();
    for (String jar :
        Files.readString(Path.of(System.getProperty("lakecdc.sparkClasspath")))
            .strip()
            .split(File.pathSeparator)) {
      if (jar.endsWith(".jar")) {
        cluster.addAll(classes(Path.of(jar)));
      }
    }
    Set<String> shared = new TreeSet<>();
    Set<String> clashing = new TreeSet<>();
    for (String name : classes(Path.of(System.getProperty("lakecdc.sparkJar")))) {
      if (cluster.contains(name)) {
        SHARED_WITH_THE_CLUSTER.stream()
            .filter(name::startsWith)
            .findFirst()
            .ifPresentOrElse(shared::add, () -> clashing.add(name));
      }
    }
    assertEquals(
        Set.of(),
        clashing,
        "classes of the jar that the cluster's copies would replace: relocate their library in"
            + " spark-jar/pom.xml (or, if the cluster's version is compatible, list it here)");
    assertEquals(SHARED_WITH_THE_CLUSTER, shared, "each library listed is still shared");
  }

  @Test
  void theDemoWasBuiltInTheSubmittedJob() {
    // The working directory was empty: the job built the demo (TPC-H, which needs Guava 20+).
    assertTrue(
        Files.isRegularFile(dir.resolve("lakecdc-demo/source/cdc.lsn_time_mapping.jsonl")),
        printed);
  }

  @Test
  void bronzeHoldsTheSnapshotAndEveryChangeOnceInItsBatch() {
    List<Row> rows =
        spark
            .read()
            .format("delta")
            .load(table("dbo_orders"))
            .groupBy("_operation", "_batch_id")
            .count()
            .orderBy("_operation", "_batch_id")
            .collectAsList();
    assertEquals(
        List.of("0 null 1515", "1 2 1", "2 1 7", "2 2 2", "3 1 1", "3 2 7", "4 1 1", "4 2 7"),
        lines(rows),
        "rows by operation and batch (0 = snapshot)");
    long distinct =
        spark
            .read()
            .format("delta")
            .load(table("dbo_orders"))
            .select("_start_lsn", "_seqval", "_operation", "o_orderkey")
            .distinct()
            .count();
    assertEquals(1515 + 26, distinct, "no row twice");
  }

  @Test
  void factsHoldTheBootstrapAndOneRowPerBatch() {
    List<Row> rows =
        spark
            .read()
            .format("delta")
            .load(table("facts"))
            .selectExpr(
                "app_id",
                "batch_id",
                "event",
                "rows",
                "inserts",
                "updates",
                "deletes",
                "min_lsn",
                "max_lsn",
                "end_lsn",
                "target")
            .orderBy("batch_id", "event")
            .collectAsList();
    // The job names its target by its absolute path, however it was given (TablePaths).
    String target = table("dbo_orders");
    assertEquals(
        List.of(
            "dbo_orders null bootstrap 1515 null null null " + (LSN + "0131 ").repeat(3) + target,
            // The whole bootstrap's full open row, written before it read (the mode lock,
            // docs/behaviour.md §6.10).
            "dbo_orders null snapshot_open 0 null null null "
                + (LSN + "0131 ").repeat(2)
                + "null "
                + target,
            "dbo_orders 0 null 0 0 0 0 null null " + LSN + "01D1 " + target,
            "dbo_orders 1 null 9 7 1 0 " + LSN + "0201 " + LSN + "0281 " + LSN + "0281 " + target,
            "dbo_orders 2 null 17 2 7 1 " + LSN + "0291 " + LSN + "0331 " + LSN + "0331 " + target),
        lines(rows));
  }

  @Test
  void theVerdictIsTheLastBatchThatMovedItTruncatedToTheHour() {
    Row control =
        spark
            .read()
            .format("delta")
            .load(table("table_finalization"))
            .selectExpr("table_name", "finalized_until", "end_lsn", "end_commit_ts")
            .collectAsList()
            .get(0);
    assertEquals(table("dbo_orders"), control.getString(0));
    assertEquals(LSN + "0281", control.getString(2), "batch 1 moved it; batch 2 is in its hour");
    LocalDateTime endCommit = (LocalDateTime) control.get(3);
    assertEquals(endCommit.truncatedTo(ChronoUnit.HOURS), control.get(1));
    assertEquals(
        List.of(endCommit.toString()),
        lines(
            spark
                .read()
                .format("delta")
                .load(table("facts"))
                .where("batch_id = 1")
                .select("end_commit_ts")
                .collectAsList()),
        "the control row's end is batch 1's");
  }
}
