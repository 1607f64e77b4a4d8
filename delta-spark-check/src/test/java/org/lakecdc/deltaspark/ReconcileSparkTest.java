package org.lakecdc.deltaspark;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The delta-spark check of docs/scenarios.md §12: after a run of the main job with silver (the
 * pipelines module's {@code ReconcileSparkJob}, its own JVM, on the DirectRunner) reconciles clean,
 * delta-spark 3.3 changes one column of one silver row ({@code UPDATE … SET status = 'lost' WHERE
 * order_id = 15}), and the {@code Reconcile} job then reports exactly that key as {@code
 * RECORD_DIFF} naming {@code status}, with exit code 4 and nothing else.
 */
@ExtendWith(SharedSpark.class)
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class ReconcileSparkTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir Path dir;

  /** The record's lines: step, exit code, the reconcile's JSON. */
  private List<String[]> record() throws IOException {
    List<String[]> out = new ArrayList<>();
    for (String line : Files.readAllLines(dir.resolve("reconcile.tsv"), StandardCharsets.UTF_8)) {
      out.add(line.split("\t", 3));
    }
    return out;
  }

  @Test
  void reportsTheRowDeltaSparkChangedAsARecordDiff(SharedSpark.Holder shared)
      throws IOException, InterruptedException {
    WriterJvm setup =
        WriterJvm.start(
            "lakecdc.pipelines.dir", "org.lakecdc.pipelines.ReconcileSparkJob", dir, "setup");
    SparkSession spark = shared.session();
    setup.await();
    String[] clean = record().get(0);
    JsonNode c = JSON.readTree(clean[2]);
    assertEquals("setup 0 {}", clean[0] + " " + clean[1] + " " + c.get("failures"));
    assertEquals(c.get("buckets").asInt(), c.get("match").asInt());
    String silver = dir.resolve("delta/silver/dbo_orders").toString();
    spark.sql("UPDATE delta.`" + silver + "` SET status = 'lost' WHERE order_id = 15");
    List<String> changed = new ArrayList<>();
    for (Row r :
        spark
            .sql("SELECT order_id, status FROM delta.`" + silver + "` WHERE status = 'lost'")
            .collectAsList()) {
      changed.add(r.mkString(" "));
    }
    assertEquals(List.of("15 lost"), changed);
    WriterJvm.start(
            "lakecdc.pipelines.dir", "org.lakecdc.pipelines.ReconcileSparkJob", dir, "reconcile")
        .await();
    String[] after = record().get(1);
    JsonNode a = JSON.readTree(after[2]);
    assertEquals("reconcile 4", after[0] + " " + after[1]);
    assertEquals("{\"RECORD_DIFF\":1}", a.get("failures").toString());
    assertEquals(0, a.get("mismatch").asInt(), "counts and key sums are unchanged");
    assertEquals(1, a.get("keys").size());
    JsonNode key = a.get("keys").get(0);
    assertEquals(
        "{\"order_id\":15} RECORD_DIFF 10 20",
        key.get("key").asText()
            + " "
            + key.get("failure_type").asText()
            + " "
            + key.get("bucket_lo").asText()
            + " "
            + key.get("bucket_hi").asText());
    assertEquals(
        "[\"status\"]", JSON.readTree(key.get("detail").asText()).get("columns").toString());
  }
}
