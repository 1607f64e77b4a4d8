package org.lakecdc.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import org.junit.jupiter.api.Test;

/**
 * The Spark home the clusters start from ({@link SparkCluster}) carries one Parquet, Spark 3.5.3's
 * own ({@code spark-parquet.version}, 1.13.1), as a distribution's {@code jars/} does: Spark's
 * readers and writers on the executors load it, and the lakecdc jar brings its own Parquet 1.16
 * relocated, so a second version in {@code jars/} would only mix classes of two releases on the
 * executors' class path. Beside it, the S3 jars a job on {@code s3a://} tables takes with {@code
 * --jars} ({@link SparkCluster#s3Jars()}) add no class the home's {@code jars/} has: a second copy
 * of a class on the driver's and the executors' class path (another Netty, SLF4J or Commons Lang)
 * would be the home's or the added one's depending on the class loader that asks.
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

  @Test
  void theS3JarsAddNoClassTheSparkHomeHas() throws IOException {
    Set<String> home = classes(Path.of(System.getProperty("lakecdc.sparkHomeJars")));
    Path s3Jars = Path.of(System.getProperty("lakecdc.sparkS3Jars"));
    Set<String> added = classes(s3Jars);
    assertTrue(
        added.contains("org/apache/hadoop/fs/s3a/S3AFileSystem.class")
            && added.contains("software/amazon/awssdk/services/s3/S3Client.class")
            && added.contains("software/amazon/awssdk/http/apache5/Apache5HttpClient.class"),
        "S3A, the SDK v2's S3 client and its Apache 5 transport in " + s3Jars);
    added.retainAll(home);
    assertEquals(Set.of(), added, "classes both in the Spark home's jars/ and in " + s3Jars);
  }

  /** The class files of the jars in {@code dir} (module descriptors and META-INF/ left out). */
  private static Set<String> classes(Path dir) throws IOException {
    Set<String> out = new TreeSet<>();
    try (Stream<Path> files = Files.list(dir)) {
      for (Path f : (Iterable<Path>) files::iterator) {
        if (!f.getFileName().toString().endsWith(".jar")) {
          continue;
        }
        try (ZipFile jar = new ZipFile(f.toFile())) {
          jar.stream()
              .map(ZipEntry::getName)
              .filter(
                  n ->
                      n.endsWith(".class")
                          && !n.startsWith("META-INF/")
                          && !n.endsWith("module-info.class"))
              .forEach(out::add);
        }
      }
    }
    return out;
  }
}
