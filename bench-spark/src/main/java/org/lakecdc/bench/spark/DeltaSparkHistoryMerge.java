package org.lakecdc.bench.spark;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.spark.sql.SparkSession;

/**
 * The delta-spark anchor of the history figure (run by {@code org.lakecdc.bench.Bench} in its own
 * JVM): Spark 3.5 on {@code local[2]} with delta-spark 3.3 applies the benchmark's waves of new
 * versions to a copy of the history table as it was built, with the standard two-step SCD type 2
 * update a delta-spark user would write: a {@code MERGE INTO} that matches each wave key's current
 * version ({@code _valid_to_lsn IS NULL}) and closes it at the new version's {@code
 * _valid_from_lsn} and {@code _valid_from_ts}, then an {@code INSERT} of the new versions. The
 * table has deletion vectors on (the history's definition), so the MERGE writes them too.
 *
 * <p>Each wave is a Parquet file {@code <wave dir>/wave-<i>.parquet} (i from 1): the history
 * columns of the versions the wave opens (and a {@code _delete} flag, ignored). It is read and
 * cached first; the {@code MERGE} and the {@code INSERT} together are timed. Afterwards the table
 * is counted and compared with the history as multisets of rows ({@link DeltaSparkMerge#digest}).
 *
 * <p>Usage: {@code DeltaSparkHistoryMerge <table> <wave dir> <waves> <comma-separated keys>
 * <history table>}. Prints {@code DELTASPARK_MERGE wave=<i> seconds=<s>} per wave, then {@code
 * DELTASPARK_COUNT rows=<n>} and {@code DELTASPARK_COMPARE silver_rows=<n> merged_digest=<d>
 * silver_digest=<d>} (the history's rows and digest, in the silver anchor's words).
 */
public final class DeltaSparkHistoryMerge {
  private DeltaSparkHistoryMerge() {}

  /**
   * Runs the waves.
   *
   * @param args the table directory, the wave directory, the number of waves (a positive integer),
   *     the key columns (comma-separated), the history table to compare with
   */
  public static void main(String[] args) {
    if (args.length != 5) {
      throw new IllegalArgumentException(
          "usage: DeltaSparkHistoryMerge <table> <wave dir> <waves> <keys> <history table>");
    }
    String table = Path.of(args[0]).toAbsolutePath().toString();
    Path waveDir = Path.of(args[1]).toAbsolutePath();
    int waves = Integer.parseInt(args[2]);
    List<String> keys = Arrays.asList(args[3].split(","));
    SparkSession spark = DeltaSparkMerge.session("lakecdc-bench-delta-spark-history-merge");
    try {
      String[] columns = spark.read().format("delta").load(table).columns();
      String close = closeStatement(table, keys);
      String insert = insertStatement(table, columns);
      DeltaSparkMerge.waves(spark, waveDir, waves, List.of(close, insert));
      DeltaSparkMerge.compare(spark, table, Path.of(args[4]).toAbsolutePath().toString(), columns);
    } finally {
      spark.stop();
    }
  }

  /**
   * The MERGE closing, for each version of the wave (temporary view {@code wave}), its key's
   * current version at the new version's start.
   */
  static String closeStatement(String table, List<String> keys) {
    List<String> on = new ArrayList<>();
    for (String k : keys) {
      on.add("t." + DeltaSparkMerge.quote(k) + " = w." + DeltaSparkMerge.quote(k));
    }
    return "MERGE INTO delta.`"
        + table
        + "` t USING wave w ON "
        + String.join(" AND ", on)
        + " AND t._valid_to_lsn IS NULL"
        + " WHEN MATCHED THEN UPDATE SET _valid_to_lsn = w._valid_from_lsn,"
        + " _valid_to_ts = w._valid_from_ts";
  }

  /** The INSERT of the wave's versions. */
  static String insertStatement(String table, String[] columns) {
    String list = String.join(", ", Arrays.stream(columns).map(DeltaSparkMerge::quote).toList());
    return "INSERT INTO delta.`" + table + "` (" + list + ") SELECT " + list + " FROM wave";
  }
}
