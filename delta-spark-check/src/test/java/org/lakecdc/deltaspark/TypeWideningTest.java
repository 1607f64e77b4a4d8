package org.lakecdc.deltaspark;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.delta.DeltaLog;
import org.apache.spark.sql.types.DataTypes;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import scala.collection.JavaConverters;

/**
 * C054 across engines: the main job refuses a type bronze cannot take and gives the statement that
 * enables Delta type widening; delta-spark 3.3 runs that very statement on the table Kernel wrote
 * (it sets the table feature {@code typeWidening-preview}); the job then widens the column through
 * Kernel. The job runs in its own JVM (the pipelines module's {@code WideningJob}, phases {@code
 * before} and {@code after}) on two targets: {@code short} widens SMALLINT to INT, which
 * delta-spark 3.3 reads; {@code decimal} widens DECIMAL(9,2) to DECIMAL(18,4), which only Delta
 * Lake 4.0 reads: delta-spark 3.3 refuses that table, as the job's message says it will (Kernel
 * itself reads it: {@code BronzeSchemaEvolutionJobTest}).
 */
@ExtendWith(SharedSpark.class)
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class TypeWideningTest {
  @TempDir static Path dir;

  private static SparkSession spark;
  private static final Map<String, String> statements = new TreeMap<>();

  @BeforeAll
  static void refuseEnableAndWiden(SharedSpark.Holder shared)
      throws IOException, InterruptedException {
    WriterJvm before =
        WriterJvm.start(
            "lakecdc.pipelines.dir", "org.lakecdc.pipelines.WideningJob", dir, "before");
    spark = shared.session();
    before.await();
    for (String target : List.of("decimal", "short")) {
      String refusal =
          Files.readString(dir.resolve(target).resolve("refusal.txt"), StandardCharsets.UTF_8);
      Matcher m =
          Pattern.compile("ALTER TABLE delta\\.`[^`]+` SET TBLPROPERTIES \\([^)]*\\)")
              .matcher(refusal);
      assertTrue(m.find(), refusal);
      statements.put(target, m.group());
      spark.sql(m.group());
    }
    WriterJvm after =
        WriterJvm.start("lakecdc.pipelines.dir", "org.lakecdc.pipelines.WideningJob", dir, "after");
    after.await();
  }

  private static String bronze(String target) {
    return dir.resolve(target).resolve("delta/dbo_orders").toString();
  }

  @Test
  void theRefusalsGaveTheStatementForTheirTable() {
    for (String target : List.of("decimal", "short")) {
      assertEquals(
          "ALTER TABLE delta.`"
              + bronze(target)
              + "` SET TBLPROPERTIES ('delta.enableTypeWidening' = 'true')",
          statements.get(target));
    }
  }

  @Test
  void deltaSpark33ReadsAShortToIntWideningAndEveryRowInIt() {
    var table = spark.read().format("delta").load(bronze("short"));
    assertEquals(DataTypes.IntegerType, table.schema().apply("qty").dataType());
    Map<Integer, Integer> qty = new TreeMap<>();
    for (Row r : table.select("order_id", "qty").collectAsList()) {
      qty.put(r.getInt(0), r.getInt(1));
    }
    assertEquals(Map.of(0, 7, 1, 8, 2, 70000), qty);
  }

  @Test
  void deltaSpark33RefusesADecimalWideningAndAsksForDelta40() {
    Exception e =
        assertThrows(
            Exception.class, () -> spark.read().format("delta").load(bronze("decimal")).count());
    assertThat(e.getMessage(), containsString("DELTA_UNSUPPORTED_TYPE_CHANGE_IN_PREVIEW"));
    assertThat(
        e.getMessage(),
        containsString("Field amount was changed from DECIMAL(9,2) to DECIMAL(18,4)"));
    assertThat(e.getMessage(), containsString("upgrade to Delta 4.0 or higher"));
  }

  @Test
  void bothTablesHaveTypeWideningAndTheChangeIsRecordedAsDeltaSpecifies() {
    Map<String, String[]> changes =
        Map.of(
            "decimal", new String[] {"amount", "decimal(9,2)", "decimal(18,4)"},
            "short", new String[] {"qty", "short", "integer"});
    for (Map.Entry<String, String[]> e : changes.entrySet()) {
      var snapshot =
          DeltaLog.forTable(spark, bronze(e.getKey()))
              .update(false, scala.Option.empty(), scala.Option.empty());
      List<String> features =
          JavaConverters.seqAsJavaList(snapshot.protocol().readerFeatureNames().toSeq());
      assertTrue(
          features.stream().anyMatch(f -> f.startsWith("typeWidening")),
          e.getKey() + " reader features: " + features);
      String[] change = e.getValue();
      String metadata = snapshot.metadata().schema().apply(change[0]).metadata().json();
      assertThat(metadata, containsString("\"delta.typeChanges\":[{"));
      assertThat(metadata, containsString("\"fromType\":\"" + change[1] + "\""));
      assertThat(metadata, containsString("\"toType\":\"" + change[2] + "\""));
      assertEquals(
          "true", snapshot.metadata().configuration().get("delta.enableTypeWidening").get());
    }
  }
}
