package org.lakecdc.deltaspark;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.locals3.LocalS3Server;

/**
 * delta-spark reads, from the local S3 server through S3A, the tables the main job wrote there
 * ({@code S3SampleJob} of s3-tests, in its own JVM): bronze's change rows, the facts and control
 * rows, and silver with the deletion vector of its second wave applied.
 */
@ExtendWith(SharedSpark.class)
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class S3TablesTest {
  private static final String ROOT = "s3a://lake/spark";

  @TempDir static Path dir;
  private static LocalS3Server server;
  private static SharedSpark.Holder spark;

  @BeforeAll
  static void writeTables(SharedSpark.Holder holder) throws Exception {
    server = LocalS3Server.start(dir.resolve("s3"));
    server.createBucket("lake");
    List<String> args = new ArrayList<>(List.of(ROOT));
    server.hadoopConf().forEach((k, v) -> args.add(k + "=" + v));
    WriterJvm.start(
            "lakecdc.s3tests.dir",
            "org.lakecdc.pipelines.S3SampleJob",
            dir.resolve("writer"),
            args.toArray(String[]::new))
        .await();
    spark = holder;
    SparkSession session = spark.session();
    server.hadoopConf().forEach((k, v) -> session.sparkContext().hadoopConfiguration().set(k, v));
  }

  @AfterAll
  static void stopServer() {
    if (server != null) {
      server.close();
    }
  }

  private static List<Row> read(String table) {
    return spark.session().read().format("delta").load(ROOT + "/" + table).collectAsList();
  }

  @Test
  void deltaSparkReadsBronzeFactsControlAndSilverFromS3() {
    assertEquals(31, read("dbo_orders").size());
    assertEquals(
        List.of("0:28", "1:3"),
        read("facts").stream()
            .filter(r -> r.isNullAt(r.fieldIndex("event")))
            .map(r -> r.getLong(r.fieldIndex("batch_id")) + ":" + r.getLong(r.fieldIndex("rows")))
            .sorted()
            .toList());
    // One control row for bronze's verdict, one for silver's position.
    assertEquals(
        List.of(ROOT + "/dbo_orders", ROOT + "/silver/dbo_orders"),
        read("table_finalization").stream()
            .map(r -> r.getString(r.fieldIndex("table_name")))
            .sorted()
            .toList());
    Map<Integer, String> silver = new TreeMap<>();
    for (Row r : read("silver/dbo_orders")) {
      silver.put(r.getInt(r.fieldIndex("order_id")), r.getString(r.fieldIndex("status")));
    }
    Map<Integer, String> expected = new TreeMap<>();
    for (int t = 0; t < 8; t++) {
      for (int i = 0; i < 3; i++) {
        expected.put(t * 100 + i, "new");
      }
    }
    expected.put(900, "new");
    expected.remove(1);
    expected.remove(200);
    expected.put(0, "paid");
    expected.put(100, "paid");
    assertEquals(expected, silver);
  }
}
