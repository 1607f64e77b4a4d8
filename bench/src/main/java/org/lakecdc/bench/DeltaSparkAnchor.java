package org.lakecdc.bench;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * The delta-spark anchors: the bench-spark module's {@code DeltaSparkAppend} and {@code
 * DeltaSparkMerge} in their own JVM (Spark 3.5 {@code local[2]}, delta-spark 3.3, Spark's Parquet
 * 1.13 on a class path of its own), appending the rows of a Parquet file to new Delta tables, and
 * merging waves of silver images into a copy of a silver table.
 */
final class DeltaSparkAnchor {
  private DeltaSparkAnchor() {}

  /**
   * Appends the file's rows {@code repeats} times, each to a new table {@code <run>/table-<i>}.
   *
   * @param benchDir the bench module's directory (bench-spark is its sibling)
   * @param parquetFile the rows
   * @param rows the rows the file holds (checked against what Spark appended)
   * @param run the run directory (tables and {@code spark-output.log})
   * @param repeats appends, at least 1
   * @return each append's wall time in seconds
   * @throws IllegalStateException when the JVM fails, or appends another number of rows
   */
  static List<Double> append(Path benchDir, Path parquetFile, long rows, Path run, int repeats)
      throws InterruptedException {
    ChildJvm jvm =
        start(
            benchDir,
            "org.lakecdc.bench.spark.DeltaSparkAppend",
            List.of(
                parquetFile.toString(), run.resolve("table").toString(), String.valueOf(repeats)),
            run.resolve("spark-output.log"));
    jvm.await(3 * 3600);
    List<Double> seconds = new ArrayList<>();
    try (Stream<String> lines = Files.lines(jvm.log(), StandardCharsets.UTF_8)) {
      for (String line : (Iterable<String>) lines::iterator) {
        if (!line.startsWith("DELTASPARK ")) {
          continue;
        }
        String[] f = line.split(" ");
        long n = Long.parseLong(f[1].substring("rows=".length()));
        if (n != rows) {
          throw new IllegalStateException(
              "delta-spark appended " + n + " rows, not " + rows + "; see " + jvm.log());
        }
        seconds.add(Double.parseDouble(f[2].substring("seconds=".length())));
      }
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot read " + jvm.log(), e);
    }
    if (seconds.size() != repeats) {
      throw new IllegalStateException(
          "delta-spark printed "
              + seconds.size()
              + " timings, not "
              + repeats
              + "; see "
              + jvm.log());
    }
    return seconds;
  }

  /**
   * What {@code DeltaSparkMerge} did: each wave's MERGE time, the merged table's rows, and the
   * comparison with the silver table.
   *
   * @param seconds each wave's MERGE wall time, in wave order
   * @param rows the merged table's rows afterwards
   * @param silverRows the silver table's rows, as delta-spark reads them
   * @param sameRows whether the two tables' rows are equal as multisets (their digests: the sums of
   *     a 64-bit hash of each row's columns)
   */
  record MergeResult(List<Double> seconds, long rows, long silverRows, boolean sameRows) {}

  /**
   * Merges the waves {@code <waveDir>/wave-1.parquet} .. {@code wave-<waves>.parquet} into {@code
   * table} with delta-spark's {@code MERGE INTO} (bench-spark's {@code DeltaSparkMerge}), then
   * counts it and compares it with {@code silver}.
   *
   * @param benchDir the bench module's directory (bench-spark is its sibling)
   * @param table the Delta table to merge into (a copy of silver's initial table)
   * @param waveDir the wave files ({@link WaveFile})
   * @param waves the number of waves, at least 1
   * @param keys the key columns
   * @param silver the silver table to compare with afterwards
   * @param log the JVM's output
   * @return the timings, counts and comparison
   * @throws IllegalStateException when the JVM fails or prints another number of timings
   */
  static MergeResult merge(
      Path benchDir, Path table, Path waveDir, int waves, List<String> keys, Path silver, Path log)
      throws InterruptedException {
    return merge(
        "org.lakecdc.bench.spark.DeltaSparkMerge",
        benchDir,
        table,
        waveDir,
        waves,
        keys,
        silver,
        log);
  }

  /**
   * Applies the waves of new versions {@code <waveDir>/wave-1.parquet} .. {@code
   * wave-<waves>.parquet} to {@code table} with delta-spark's two-step SCD type 2 update
   * (bench-spark's {@code DeltaSparkHistoryMerge}: a {@code MERGE} closing the keys' current
   * versions, then an {@code INSERT} of the new ones), then counts it and compares it with {@code
   * history}.
   *
   * @param benchDir the bench module's directory (bench-spark is its sibling)
   * @param table the Delta table to update (a copy of the history as built)
   * @param waveDir the wave files ({@link WaveFile}, the history's columns)
   * @param waves the number of waves, at least 1
   * @param keys the key columns
   * @param history the history table to compare with afterwards
   * @param log the JVM's output
   * @return each wave's MERGE and INSERT time, the counts and the comparison ({@link
   *     MergeResult#silverRows()} is the history's rows)
   * @throws IllegalStateException when the JVM fails or prints another number of timings
   */
  static MergeResult historyMerge(
      Path benchDir, Path table, Path waveDir, int waves, List<String> keys, Path history, Path log)
      throws InterruptedException {
    return merge(
        "org.lakecdc.bench.spark.DeltaSparkHistoryMerge",
        benchDir,
        table,
        waveDir,
        waves,
        keys,
        history,
        log);
  }

  private static MergeResult merge(
      String mainClass,
      Path benchDir,
      Path table,
      Path waveDir,
      int waves,
      List<String> keys,
      Path silver,
      Path log)
      throws InterruptedException {
    ChildJvm jvm =
        start(
            benchDir,
            mainClass,
            List.of(
                table.toString(),
                waveDir.toString(),
                String.valueOf(waves),
                String.join(",", keys),
                silver.toString()),
            log);
    jvm.await(6 * 3600);
    List<Double> seconds = new ArrayList<>();
    long rows = -1;
    String[] compare = null;
    for (String line : lines(jvm.log())) {
      String[] f = line.split(" ");
      if (line.startsWith("DELTASPARK_MERGE ")) {
        seconds.add(Double.parseDouble(value(f[2], "seconds")));
      } else if (line.startsWith("DELTASPARK_COUNT ")) {
        rows = Long.parseLong(value(f[1], "rows"));
      } else if (line.startsWith("DELTASPARK_COMPARE ")) {
        compare =
            new String[] {
              value(f[1], "silver_rows"), value(f[2], "merged_digest"), value(f[3], "silver_digest")
            };
      }
    }
    if (seconds.size() != waves || rows < 0 || compare == null) {
      throw new IllegalStateException(
          "delta-spark printed "
              + seconds.size()
              + " MERGE timings of "
              + waves
              + (rows < 0 ? ", no count" : "")
              + (compare == null ? ", no comparison" : "")
              + "; see "
              + jvm.log());
    }
    return new MergeResult(
        seconds, rows, Long.parseLong(compare[0]), compare[1].equals(compare[2]));
  }

  private static ChildJvm start(Path benchDir, String mainClass, List<String> args, Path log) {
    Path sparkModule = benchDir.resolveSibling("bench-spark").resolve("target");
    List<String> jvmArgs = new ArrayList<>(List.of("-Xmx4g"));
    for (String p : ChildJvm.SPARK_ADD_OPENS) {
      jvmArgs.add("--add-opens=java.base/" + p + "=ALL-UNNAMED");
    }
    return ChildJvm.start(
        ChildJvm.classpath(
            sparkModule.resolve("spark-classpath.txt"), sparkModule.resolve("classes")),
        jvmArgs,
        mainClass,
        args,
        log);
  }

  /** The value of a {@code name=value} field. */
  static String value(String field, String name) {
    if (!field.startsWith(name + "=")) {
      throw new IllegalStateException("expected " + name + "=..., not " + field);
    }
    return field.substring(name.length() + 1);
  }

  static List<String> lines(Path log) {
    try {
      return Files.readAllLines(log, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot read " + log, e);
    }
  }
}
