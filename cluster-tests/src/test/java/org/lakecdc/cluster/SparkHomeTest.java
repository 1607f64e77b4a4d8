package org.lakecdc.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The Spark home the clusters start from ({@link SparkCluster}) carries one Parquet, Spark 3.5.3's
 * own ({@code spark-parquet.version}, 1.13.1), as a distribution's {@code jars/} does: Spark's
 * readers and writers on the executors load it, and the lakecdc jar brings its own Parquet 1.16
 * relocated, so a second version in {@code jars/} would only mix classes of two releases on the
 * executors' class path.
 */
class SparkHomeTest {
  private static final Pattern PARQUET = Pattern.compile("(parquet-[a-z-]+)-([0-9][0-9.]*)\\.jar");

  @Test
  void theSparkHomeJarsHoldSparksOwnParquetOnly() throws IOException {
    Path jars = Path.of(System.getProperty("lakecdc.sparkHomeJars"));
    String version = System.getProperty("lakecdc.sparkParquetVersion");
    Map<String, String> parquet = new TreeMap<>();
    try (Stream<Path> files = Files.list(jars)) {
      for (Path f : (Iterable<Path>) files::iterator) {
        Matcher m = PARQUET.matcher(f.getFileName().toString());
        if (m.matches()) {
          parquet.put(m.group(1), m.group(2));
        }
      }
    }
    Map<String, String> expected = new TreeMap<>();
    for (String artifact :
        new String[] {
          "parquet-column",
          "parquet-common",
          "parquet-encoding",
          "parquet-format-structures",
          "parquet-hadoop",
          "parquet-jackson"
        }) {
      expected.put(artifact, version);
    }
    assertEquals(expected, parquet, "the Parquet jars of " + jars);
  }
}
