package org.lakecdc.deltaspark;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.contains;
import static org.hamcrest.Matchers.hasItem;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.io.IOException;
import java.math.BigDecimal;
import java.nio.file.Path;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.delta.DeltaLog;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import scala.collection.JavaConverters;

/**
 * delta-spark 3.3 (Spark 3.5) reads the tables our Delta Kernel layer writes. The tables are those
 * of the transforms module's {@code SampleTables}, written by a separate JVM on the transforms test
 * classpath (Kernel 4.4 needs Parquet 1.16, Spark 3.5 ships 1.13); the expected values below repeat
 * {@code SampleTables}' documented content.
 */
@ExtendWith(SharedSpark.class)
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class DeltaSparkReadsKernelTablesTest {
  @TempDir static Path dir;

  private static SparkSession spark;

  @BeforeAll
  static void writeTables(SharedSpark.Holder shared) throws IOException, InterruptedException {
    WriterJvm writer =
        WriterJvm.start("lakecdc.transforms.dir", "org.lakecdc.transforms.delta.SampleTables", dir);
    spark = shared.session();
    writer.await();
  }

  private static String table(String name) {
    return dir.resolve(name).toString();
  }

  private static Row detail(String name) {
    return spark.sql("DESCRIBE DETAIL delta.`" + table(name) + "`").first();
  }

  private static List<Row> rowsOf(String name, String orderBy) {
    return spark.read().format("delta").load(table(name)).orderBy(orderBy).collectAsList();
  }

  @Test
  void typesCommentsAndPropertiesAreWhatKernelWrote() {
    StructType schema = spark.read().format("delta").load(table("types")).schema();
    List<String> described = new ArrayList<>();
    for (StructField field : schema.fields()) {
      described.add(
          field.name()
              + " "
              + field.dataType().sql()
              + " "
              + field.nullable()
              + " "
              + field.getComment().get());
    }

    assertEquals(
        List.of(
            "c_int INT false INT",
            "c_boolean BOOLEAN true BOOLEAN",
            "c_smallint SMALLINT true SMALLINT",
            "c_bigint BIGINT true BIGINT",
            "c_float FLOAT true FLOAT",
            "c_double DOUBLE true DOUBLE",
            "c_decimal DECIMAL(18,2) true DECIMAL(18,2)",
            "c_decimal38 DECIMAL(38,10) true DECIMAL(38,10)",
            "c_date DATE true DATE",
            "c_ntz TIMESTAMP_NTZ true TIMESTAMP_NTZ",
            "c_ts TIMESTAMP true TIMESTAMP",
            "c_string STRING true STRING",
            "c_binary BINARY true BINARY"),
        described);
    Row detail = detail("types");
    assertThat(
        detail.getString(detail.fieldIndex("description")),
        org.hamcrest.Matchers.startsWith("Append-only SQL Server CDC change log"));
    Map<String, String> properties =
        JavaConverters.mapAsJavaMap(detail.getMap(detail.fieldIndex("properties")));
    assertEquals("1", properties.get("mssql_cdc.schema_version"));
    assertEquals("bronze", properties.get("mssql_cdc.table_kind"));
  }

  @Test
  void everyValueReadsBackAsWritten() {
    List<Row> rows = rowsOf("types", "c_int");

    assertEquals(3, rows.size());
    Row high = rows.get(0);
    assertEquals(1, high.getInt(0));
    assertEquals(true, high.getBoolean(1));
    assertEquals(Short.MAX_VALUE, high.getShort(2));
    assertEquals(Long.MAX_VALUE, high.getLong(3));
    assertEquals(1.5f, high.getFloat(4));
    assertEquals(-2.25e300, high.getDouble(5));
    assertEquals(new BigDecimal("9999999999999999.99"), high.getDecimal(6));
    assertEquals(new BigDecimal("1234567890123456789012345678.0123456789"), high.getDecimal(7));
    assertEquals(LocalDate.of(9999, 12, 31), high.getLocalDate(8));
    assertEquals(LocalDateTime.of(2026, 9, 28, 13, 50, 0, 123_456_000), high.get(9));
    assertEquals(Instant.parse("2026-09-28T13:50:00.654321Z"), high.getInstant(10));
    assertEquals("ünïcødé ✓", high.getString(11));
    assertArrayEquals(new byte[] {0, 1, (byte) 0xFF}, (byte[]) high.get(12));

    Row low = rows.get(1);
    assertEquals(2, low.getInt(0));
    assertEquals(false, low.getBoolean(1));
    assertEquals(Short.MIN_VALUE, low.getShort(2));
    assertEquals(-1L, low.getLong(3));
    assertEquals(-0.5f, low.getFloat(4));
    assertEquals(Double.MIN_VALUE, low.getDouble(5));
    assertEquals(new BigDecimal("-0.01"), low.getDecimal(6));
    assertEquals(0, BigDecimal.ZERO.compareTo(low.getDecimal(7)));
    assertEquals(LocalDate.of(1900, 1, 1), low.getLocalDate(8));
    assertEquals(LocalDateTime.of(1900, 1, 1, 0, 0, 0, 1_000), low.get(9));
    assertEquals(Instant.parse("1969-12-31T23:59:59.999999Z"), low.getInstant(10));
    assertEquals("", low.getString(11));
    assertArrayEquals(new byte[0], (byte[]) low.get(12));

    Row nulls = rows.get(2);
    assertEquals(3, nulls.getInt(0));
    for (int i = 1; i < nulls.size(); i++) {
      assertNull(nulls.get(i), "field " + i);
    }
  }

  @Test
  void transactionIdsAreDeltaSparksToo() {
    // A replayed batch was skipped: the highest version of app id "sample" is 2, and the table
    // has exactly the three rows of batches 1 and 2.
    Object version =
        DeltaLog.forTable(spark, table("types"))
            .unsafeVolatileSnapshot()
            .transactions()
            .get("sample")
            .get();

    assertEquals(2L, version);
    List<String> operations =
        spark
            .sql("DESCRIBE HISTORY delta.`" + table("types") + "`")
            .orderBy("version")
            .select("operation")
            .as(org.apache.spark.sql.Encoders.STRING())
            .collectAsList();
    assertEquals(List.of("CREATE TABLE", "Manual Update", "WRITE", "WRITE"), operations);
  }

  @Test
  void aRewrittenTableHoldsOnlyTheLastRows() {
    List<Row> rows = rowsOf("control", "id");

    assertEquals(1, rows.size());
    assertEquals(3L, rows.get(0).getLong(0));
    assertEquals("third", rows.get(0).getString(1));
    Row detail = detail("control");
    assertEquals(1L, detail.getLong(detail.fieldIndex("numFiles")));
  }

  @Test
  void addedColumnsAndMigrationStampsAreSeen() {
    StructType schema = spark.read().format("delta").load(table("migrated")).schema();
    List<Row> rows = rowsOf("migrated", "a");

    assertThat(List.of(schema.fieldNames()), contains("a", "b"));
    assertEquals("added b", schema.fields()[1].getComment().get());
    assertEquals(DataTypes.IntegerType, schema.fields()[1].dataType());
    assertEquals(2, rows.size());
    assertEquals("after", rows.get(0).getString(0));
    assertEquals(2, rows.get(0).getInt(1));
    assertEquals("before", rows.get(1).getString(0));
    assertNull(rows.get(1).get(1));
    Row detail = detail("migrated");
    Map<String, String> properties =
        JavaConverters.mapAsJavaMap(detail.getMap(detail.fieldIndex("properties")));
    assertEquals("1", properties.get("mssql_cdc.schema_version"));
    assertEquals("silver", properties.get("mssql_cdc.table_kind"));
    assertThat(
        detail.getString(detail.fieldIndex("description")),
        org.hamcrest.Matchers.startsWith("Current state of the SQL Server table"));
  }

  @Test
  void aCheckpointedTableReadsAndSparkCanAppendToIt() {
    List<Long> ids =
        rowsOf("checkpointed", "id").stream()
            .map(r -> r.getLong(0))
            .sorted(Comparator.naturalOrder())
            .collect(java.util.stream.Collectors.toList());
    assertEquals(List.of(1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L, 10L, 11L, 12L), ids);

    StructType schema =
        new StructType(
            new StructField[] {DataTypes.createStructField("id", DataTypes.LongType, false)});
    Dataset<Row> extra = spark.createDataFrame(List.of(RowFactory.create(13L)), schema);
    extra.write().format("delta").mode("append").save(table("checkpointed"));

    List<Row> after = rowsOf("checkpointed", "id");
    assertEquals(13, after.size());
    assertThat(
        spark
            .sql("DESCRIBE HISTORY delta.`" + table("checkpointed") + "`")
            .select("engineInfo")
            .as(org.apache.spark.sql.Encoders.STRING())
            .collectAsList(),
        hasItem(org.hamcrest.Matchers.startsWith("Kernel-4.4.0/lakecdc")));
  }
}
