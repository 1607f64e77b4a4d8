package org.lakecdc.bench.spark;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * The delta-spark anchor of the silver figures (run by {@code org.lakecdc.bench.Bench} in its own
 * JVM): Spark 3.5 on {@code local[2]} with delta-spark 3.3 applies the benchmark's waves of latest
 * images to a copy of the initial silver table with {@code MERGE INTO}, the statement a delta-spark
 * user would write for silver's rule (docs/behaviour.md §10.3): a key whose row has an older {@code
 * _start_lsn} is deleted or updated, an absent key is inserted unless the image is a delete, an
 * image not newer than the row changes nothing. Keys match null-safely ({@code <=>}), as silver's.
 * The table has deletion vectors on (silver's definition), so delta-spark's MERGE writes them too.
 *
 * <p>Each wave is a Parquet file {@code <wave dir>/wave-<i>.parquet} (i from 1): the silver columns
 * and a BOOLEAN {@code _delete}. It is read and cached first (its count forces that); only the
 * {@code MERGE} is timed. Afterwards the table's rows are counted and, when a silver table is
 * given, compared with it as multisets of rows (their row counts, and the sums of a 64-bit hash of
 * each row's columns, {@link #digest}).
 *
 * <p>Usage: {@code DeltaSparkMerge <table> <wave dir> <waves> <comma-separated keys> [<silver
 * table>]}. Prints one line per wave, {@code DELTASPARK_MERGE wave=<i> seconds=<s>} (the MERGE's
 * wall time), then {@code DELTASPARK_COUNT rows=<n>}, then with a silver table {@code
 * DELTASPARK_COMPARE silver_rows=<n> merged_digest=<d> silver_digest=<d>}.
 */
public final class DeltaSparkMerge {
  private DeltaSparkMerge() {}

  /**
   * Runs the merges.
   *
   * @param args the table directory, the wave directory, the number of waves (a positive integer),
   *     the key columns (comma-separated), optionally the silver table to compare with
   */
  public static void main(String[] args) {
    if (args.length != 4 && args.length != 5) {
      throw new IllegalArgumentException(
          "usage: DeltaSparkMerge <table> <wave dir> <waves> <keys> [<silver table>]");
    }
    String table = Path.of(args[0]).toAbsolutePath().toString();
    Path waveDir = Path.of(args[1]).toAbsolutePath();
    int waves = Integer.parseInt(args[2]);
    List<String> keys = Arrays.asList(args[3].split(","));
    SparkSession spark = session("lakecdc-bench-delta-spark-merge");
    try {
      String[] columns = spark.read().format("delta").load(table).columns();
      String sql = mergeStatement(table, columns, keys);
      waves(spark, waveDir, waves, List.of(sql));
      if (args.length == 5) {
        compare(spark, table, Path.of(args[4]).toAbsolutePath().toString(), columns);
      } else {
        System.out.println(
            "DELTASPARK_COUNT rows="
                + digest(spark.read().format("delta").load(table), columns)[0]);
      }
    } finally {
      spark.stop();
    }
  }

  /**
   * Per wave file {@code <wave dir>/wave-<i>.parquet} (i from 1 to {@code waves}): reads and caches
   * it as the temporary view {@code wave}, then runs the statements in order, timed together, and
   * prints {@code DELTASPARK_MERGE wave=<i> seconds=<s>}.
   */
  static void waves(SparkSession spark, Path waveDir, int waves, List<String> statements) {
    for (int i = 1; i <= waves; i++) {
      Dataset<Row> wave =
          spark.read().parquet(waveDir.resolve("wave-" + i + ".parquet").toString()).cache();
      wave.count();
      wave.createOrReplaceTempView("wave");
      long start = System.nanoTime();
      for (String sql : statements) {
        spark.sql(sql).collect();
      }
      double seconds = (System.nanoTime() - start) / 1e9;
      System.out.println("DELTASPARK_MERGE wave=" + i + " seconds=" + seconds);
      wave.unpersist();
    }
  }

  /** Spark on {@code local[2]} with delta-spark's extension and catalog, UTC, the UI off. */
  static SparkSession session(String appName) {
    return SparkSession.builder()
        .master("local[2]")
        .appName(appName)
        .config("spark.ui.enabled", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.shuffle.partitions", "8")
        .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
        .config(
            "spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog")
        .getOrCreate();
  }

  /**
   * Prints {@code DELTASPARK_COUNT rows=<n>} of {@code table}, then {@code DELTASPARK_COMPARE
   * silver_rows=<n> merged_digest=<d> silver_digest=<d>} with {@code other}'s rows and both digests
   * over {@code columns}.
   */
  static void compare(SparkSession spark, String table, String other, String[] columns) {
    String[] mergedDigest = digest(spark.read().format("delta").load(table), columns);
    System.out.println("DELTASPARK_COUNT rows=" + mergedDigest[0]);
    String[] otherDigest = digest(spark.read().format("delta").load(other), columns);
    System.out.println(
        "DELTASPARK_COMPARE silver_rows="
            + otherDigest[0]
            + " merged_digest="
            + mergedDigest[1]
            + " silver_digest="
            + otherDigest[1]);
  }

  /**
   * The MERGE of one wave (temporary view {@code wave}) into the table: the images newer than the
   * row of their key replace it or delete it; an image of an absent key is inserted unless it is a
   * delete.
   */
  static String mergeStatement(String table, String[] columns, List<String> keys) {
    List<String> on = new ArrayList<>();
    for (String k : keys) {
      on.add("t." + quote(k) + " <=> w." + quote(k));
    }
    List<String> set = new ArrayList<>();
    List<String> values = new ArrayList<>();
    for (String c : columns) {
      set.add(quote(c) + " = w." + quote(c));
      values.add("w." + quote(c));
    }
    String newer = "t._start_lsn < w._start_lsn";
    return "MERGE INTO delta.`"
        + table
        + "` t USING wave w ON "
        + String.join(" AND ", on)
        + " WHEN MATCHED AND w._delete AND "
        + newer
        + " THEN DELETE"
        + " WHEN MATCHED AND NOT w._delete AND "
        + newer
        + " THEN UPDATE SET "
        + String.join(", ", set)
        + " WHEN NOT MATCHED AND NOT w._delete THEN INSERT ("
        + String.join(", ", Arrays.stream(columns).map(DeltaSparkMerge::quote).toList())
        + ") VALUES ("
        + String.join(", ", values)
        + ")";
  }

  /**
   * A table's row count and the digest of its rows as a multiset: the sum over rows of {@code
   * xxhash64} of all the columns (as DECIMAL(38,0), so it cannot overflow). Equal multisets give
   * equal digests; different ones differ but with a chance of 2^-64. One scan, no shuffle.
   */
  static String[] digest(Dataset<Row> table, String[] columns) {
    String all = String.join(", ", Arrays.stream(columns).map(DeltaSparkMerge::quote).toList());
    Row r =
        table
            .selectExpr(
                "count(*) AS n", "sum(CAST(xxhash64(" + all + ") AS DECIMAL(38,0))) AS digest")
            .collectAsList()
            .get(0);
    return new String[] {String.valueOf(r.getLong(0)), String.valueOf(r.get(1))};
  }

  static String quote(String name) {
    return "`" + name.replace("`", "``") + "`";
  }
}
