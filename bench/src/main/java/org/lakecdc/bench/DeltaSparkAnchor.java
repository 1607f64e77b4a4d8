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
 * The delta-spark anchor: the bench-spark module's {@code DeltaSparkAppend} in its own JVM (Spark
 * 3.5 {@code local[2]}, delta-spark 3.3, Spark's Parquet 1.13 on a class path of its own),
 * appending the rows of a Parquet file to new Delta tables.
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
    Path sparkModule = benchDir.resolveSibling("bench-spark").resolve("target");
    List<String> jvmArgs = new ArrayList<>(List.of("-Xmx4g"));
    for (String p : ChildJvm.SPARK_ADD_OPENS) {
      jvmArgs.add("--add-opens=java.base/" + p + "=ALL-UNNAMED");
    }
    ChildJvm jvm =
        ChildJvm.start(
            ChildJvm.classpath(
                sparkModule.resolve("spark-classpath.txt"), sparkModule.resolve("classes")),
            jvmArgs,
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
}
