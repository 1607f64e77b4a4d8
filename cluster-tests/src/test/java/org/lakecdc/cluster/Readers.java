package org.lakecdc.cluster;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.apache.spark.sql.SparkSession;

/** How the tests read what the clusters wrote: delta-spark, and the Delta log's own records. */
final class Readers {
  private Readers() {}

  /**
   * The test JVM's local Spark session with Delta (two cores: the two test classes, which run at
   * the same time, read at once rather than queue behind each other): one for the JVM, shared by
   * the test classes (which may run at the same time), ended with the JVM. A test that reads an
   * object store sets the store's settings in its Hadoop configuration before its first read.
   */
  static synchronized SparkSession spark() {
    SparkSession.Builder builder =
        SparkSession.builder()
            .master("local[2]")
            .appName("cluster-tests reader")
            .config("spark.ui.enabled", "false")
            .config("spark.driver.host", "127.0.0.1")
            .config("spark.driver.bindAddress", "127.0.0.1")
            .config("spark.sql.shuffle.partitions", "1")
            // Small tables read a few times: rebuild a Delta snapshot in one task (not 50),
            // evaluate plans without compiling code for each query, and plan once.
            .config("spark.databricks.delta.snapshotPartitions", "1")
            .config("spark.sql.codegen.wholeStage", "false")
            // Nor code for each projection and predicate: Spark's interpreted forms of them.
            // Generating and compiling that code (Janino) made about 30 % of this JVM's JFR
            // samples; reading a run's 13 tables three times in a JVM of its own took 33.5 s of
            // CPU without it, 36 to 40 s with it.
            .config("spark.sql.codegen.factoryMode", "NO_CODEGEN")
            .config("spark.sql.adaptive.enabled", "false")
            .config("spark.sql.session.timeZone", "UTC")
            .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
            .config(
                "spark.sql.catalog.spark_catalog",
                "org.apache.spark.sql.delta.catalog.DeltaCatalog");
    return builder.getOrCreate();
  }

  /**
   * The newest commit file of each local Delta table of {@code tables} (its {@code _delta_log}'s
   * greatest {@code <version>.json} with its size in bytes, "" while it has none), in {@code
   * tables}' order: what a delta-spark read of the tables returns changes only when this does, so a
   * poll that reads the tables reads them again only then.
   */
  static List<String> logVersions(List<Path> tables) {
    List<String> out = new ArrayList<>();
    for (Path table : tables) {
      Path log = table.resolve("_delta_log");
      if (!Files.isDirectory(log)) {
        out.add("");
        continue;
      }
      try (Stream<Path> files = Files.list(log)) {
        Path newest =
            files
                .filter(f -> f.getFileName().toString().endsWith(".json"))
                .max(Comparator.naturalOrder())
                .orElse(null);
        out.add(newest == null ? "" : newest.getFileName() + " " + Files.size(newest));
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    return out;
  }

  /**
   * Whether the facts table at {@code facts} (a local path) has committed the facts row of batch
   * {@code batch} of the table whose app id is {@code appId}: a commit of its log carries the
   * transaction id {@code <appId>#facts@…} at version {@code batch}, which the committer writes
   * with that row.
   */
  static boolean factsHaveBatch(Path facts, String appId, int batch) {
    Path log = facts.resolve("_delta_log");
    if (!Files.isDirectory(log)) {
      return false;
    }
    Pattern txn =
        Pattern.compile(
            "\"txn\":\\{\"appId\":\""
                + Pattern.quote(appId)
                + "#facts@[^\"]*\",\"version\":"
                + batch
                + ",");
    try (Stream<Path> files = Files.list(log)) {
      return files
          .filter(f -> f.getFileName().toString().endsWith(".json"))
          .anyMatch(
              f -> {
                try {
                  return txn.matcher(Files.readString(f)).find();
                } catch (IOException e) {
                  return false; // being written: read again next time
                }
              });
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * The {@code applied_lsn} that the silver table at {@code silver} (a local path) last recorded
   * (its {@code mssql_cdc.silver} domain metadata, which every silver commit writes), or null while
   * the table has no commit with it.
   */
  static String silverAppliedLsn(Path silver) {
    Path log = silver.resolve("_delta_log");
    if (!Files.isDirectory(log)) {
      return null;
    }
    Pattern applied =
        Pattern.compile(
            "\"domain\":\"mssql_cdc\\.silver\",\"configuration\":\"\\{\\\\\"applied_lsn\\\\\":\\\\\"(0x[0-9A-F]{20})");
    List<Path> newestFirst;
    try (Stream<Path> files = Files.list(log)) {
      newestFirst =
          files
              .filter(f -> f.getFileName().toString().endsWith(".json"))
              .sorted(Comparator.reverseOrder())
              .toList();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    for (Path commit : newestFirst) {
      try {
        Matcher m = applied.matcher(Files.readString(commit));
        if (m.find()) {
          return m.group(1);
        }
      } catch (IOException e) {
        return null; // being written: read again next time
      }
    }
    return null;
  }
}
