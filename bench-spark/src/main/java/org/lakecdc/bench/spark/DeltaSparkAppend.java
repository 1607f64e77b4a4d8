package org.lakecdc.bench.spark;

import java.nio.file.Path;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * The delta-spark anchor of the benchmark (run by {@code org.lakecdc.bench.Bench} in its own JVM):
 * Spark 3.5 on {@code local[2]} with delta-spark 3.3 appends the rows of a Parquet file to a Delta
 * table. The rows are read and cached in memory first, and the table is created empty with their
 * schema first; only the append is timed. Each repeat appends to a new table.
 *
 * <p>Usage: {@code DeltaSparkAppend <parquet file> <table directory prefix> <repeats>}. Prints one
 * line per repeat, {@code DELTASPARK rows=<n> seconds=<s>} (the append's wall time in seconds).
 */
public final class DeltaSparkAppend {
  private DeltaSparkAppend() {}

  /**
   * Runs the appends.
   *
   * @param args the Parquet file, the table directory prefix ({@code -<repeat>} is appended), the
   *     number of repeats (a positive integer)
   */
  public static void main(String[] args) {
    if (args.length != 3) {
      throw new IllegalArgumentException(
          "usage: DeltaSparkAppend <parquet file> <table directory prefix> <repeats>");
    }
    String input = Path.of(args[0]).toAbsolutePath().toString();
    String prefix = Path.of(args[1]).toAbsolutePath().toString();
    int repeats = Integer.parseInt(args[2]);
    SparkSession spark =
        SparkSession.builder()
            .master("local[2]")
            .appName("lakecdc-bench-delta-spark")
            .config("spark.ui.enabled", "false")
            .config("spark.driver.host", "127.0.0.1")
            .config("spark.driver.bindAddress", "127.0.0.1")
            .config("spark.sql.session.timeZone", "UTC")
            .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
            .config(
                "spark.sql.catalog.spark_catalog",
                "org.apache.spark.sql.delta.catalog.DeltaCatalog")
            .getOrCreate();
    try {
      Dataset<Row> rows = spark.read().parquet(input).cache();
      long count = rows.count();
      for (int i = 1; i <= repeats; i++) {
        String table = prefix + "-" + i;
        rows.limit(0).write().format("delta").mode("overwrite").save(table);
        long start = System.nanoTime();
        rows.write().format("delta").mode("append").save(table);
        double seconds = (System.nanoTime() - start) / 1e9;
        System.out.println("DELTASPARK rows=" + count + " seconds=" + seconds);
      }
    } finally {
      spark.stop();
    }
  }
}
