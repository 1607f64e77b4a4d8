package org.lakecdc.deltaspark;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.conf.Configuration;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.util.HadoopInputFile;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.StructField;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;

/**
 * The round-trip matrix of SQL Server values: the pipelines module's {@code ExtremeValuesJob}
 * writes a table holding the minimum, maximum and special values of every SQL Server type through
 * the main job (in its own JVM), and delta-spark 3.3 on Spark 3.5, with its default rebase
 * settings, reads each value back as docs/tables.md ("Extreme values") says it becomes: exactly, or
 * for {@code datetime2(7)} and {@code datetimeoffset(7)} truncated to microseconds. Values the
 * mapping cannot hold fail the run with a one-line error before anything is committed.
 */
@ExtendWith(SharedSpark.class)
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class ExtremeValuesTest {
  @TempDir static Path dir;

  private static SparkSession spark;

  private static final String NINES = "9".repeat(38);

  @BeforeAll
  static void runTheJob(SharedSpark.Holder shared) throws IOException, InterruptedException {
    WriterJvm writer =
        WriterJvm.start("lakecdc.pipelines.dir", "org.lakecdc.pipelines.ExtremeValuesJob", dir);
    spark = shared.session();
    writer.await();
  }

  private static String table(String name) {
    return dir.resolve("delta").resolve(name).toString();
  }

  private static List<Row> rows(String table, String columns) {
    return spark
        .sql("SELECT " + columns + " FROM delta.`" + table(table) + "` ORDER BY id")
        .collectAsList();
  }

  /** A value for comparison: byte arrays as {@link Arrays#toString(byte[])}. */
  private static Object comparable(Object value) {
    return value instanceof byte[] ? Arrays.toString((byte[]) value) : value;
  }

  /** Column name to its values in rows 1 (minimums), 2 (maximums), 3 (specials), 4 (NULL). */
  private static Map<String, List<Object>> expected() {
    Map<String, List<Object>> m = new LinkedHashMap<>();
    m.put(
        "c_date",
        Arrays.asList(
            LocalDate.of(1, 1, 1), LocalDate.of(9999, 12, 31), LocalDate.of(1582, 10, 10), null));
    m.put(
        "c_datetime2",
        Arrays.asList(
            LocalDateTime.of(1, 1, 1, 0, 0),
            LocalDateTime.parse("9999-12-31T23:59:59.999999"),
            LocalDateTime.of(1582, 10, 15, 0, 0),
            null));
    m.put(
        "c_datetime",
        Arrays.asList(
            LocalDateTime.of(1753, 1, 1, 0, 0),
            LocalDateTime.parse("9999-12-31T23:59:59.997"),
            LocalDateTime.parse("1899-12-31T23:59:59.997"),
            null));
    m.put(
        "c_smalldatetime",
        Arrays.asList(
            LocalDateTime.of(1900, 1, 1, 0, 0),
            LocalDateTime.parse("2079-06-06T23:59"),
            LocalDateTime.parse("1900-01-01T00:01"),
            null));
    m.put(
        "c_datetimeoffset",
        Arrays.asList(
            Instant.parse("0001-01-01T14:00:00Z"),
            Instant.parse("9999-12-31T09:59:59.999999Z"),
            Instant.parse("1899-12-31T10:00:00Z"),
            null));
    m.put("c_time", Arrays.asList("00:00:00", "23:59:59.9999999", "00:00:00.0000001", null));
    m.put(
        "c_decimal38_0",
        Arrays.asList(new BigDecimal("-" + NINES), new BigDecimal(NINES), BigDecimal.ZERO, null));
    m.put(
        "c_decimal38_38",
        Arrays.asList(
            new BigDecimal("-0." + NINES),
            new BigDecimal("0." + NINES),
            new BigDecimal("0." + "0".repeat(37) + "1"),
            null));
    m.put("c_float", Arrays.asList(-Double.MAX_VALUE, Double.MAX_VALUE, Double.MIN_NORMAL, null));
    m.put("c_real", Arrays.asList(-Float.MAX_VALUE, Float.MAX_VALUE, Float.MIN_NORMAL, null));
    m.put(
        "c_money",
        Arrays.asList(
            new BigDecimal("-922337203685477.5808"),
            new BigDecimal("922337203685477.5807"),
            new BigDecimal("0.0001"),
            null));
    m.put(
        "c_smallmoney",
        Arrays.asList(
            new BigDecimal("-214748.3648"),
            new BigDecimal("214748.3647"),
            new BigDecimal("-0.0001"),
            null));
    m.put("c_bit", Arrays.asList(false, true, true, null));
    m.put("c_tinyint", Arrays.asList((short) 0, (short) 255, (short) 1, null));
    m.put("c_smallint", Arrays.asList(Short.MIN_VALUE, Short.MAX_VALUE, (short) -1, null));
    m.put("c_int", Arrays.asList(Integer.MIN_VALUE, Integer.MAX_VALUE, 0, null));
    m.put("c_bigint", Arrays.asList(Long.MIN_VALUE, Long.MAX_VALUE, -1L, null));
    m.put(
        "c_uniqueidentifier",
        Arrays.asList(
            "00000000-0000-0000-0000-000000000000",
            "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF",
            "6F9619FF-8B86-D011-B42D-00C04FC964FF",
            null));
    m.put("c_binary", Arrays.asList("[0, 0, 0, 0]", "[-1, -1, -1, -1]", "[1, 0, 0, 0]", null));
    m.put("c_varbinary", Arrays.asList("[0, 0, 0]", "[]", "[0]", null));
    m.put("c_nvarchar", Arrays.asList("", "\uD83D\uDE00 smile", "a\u0000b", null));
    m.put("c_xml", Arrays.asList("<a/>", "<a b=\"\uD83D\uDE00\">&amp;</a>", "", null));
    return m;
  }

  @Test
  void sparkRunsWithItsDefaultRebaseSettings() {
    assertEquals("EXCEPTION", spark.conf().get("spark.sql.parquet.datetimeRebaseModeInRead"));
    assertEquals("EXCEPTION", spark.conf().get("spark.sql.parquet.int96RebaseModeInRead"));
  }

  @Test
  void bronzeHoldingTheFirstDateReadsWithNoSettingChanged() {
    List<Row> rows = rows("dbo_extremes", "id, c_date, c_datetime2, c_datetimeoffset");

    assertEquals(4, rows.size());
    assertEquals(LocalDate.of(1, 1, 1), rows.get(0).get(1));
    assertEquals(LocalDateTime.of(1, 1, 1, 0, 0), rows.get(0).get(2));
    assertEquals(Instant.parse("0001-01-01T14:00:00Z"), rows.get(0).get(3));
  }

  @Test
  void everyValueIsWhatTheMappingDocuments() {
    Map<String, List<Object>> expected = expected();
    List<Row> rows = rows("dbo_extremes", "id, " + String.join(", ", expected.keySet()));

    assertEquals(List.of(1, 2, 3, 4), rows.stream().map(r -> r.get(0)).toList());
    List<Executable> checks = new ArrayList<>();
    int i = 1;
    for (Map.Entry<String, List<Object>> column : expected.entrySet()) {
      int index = i++;
      List<Object> got = new ArrayList<>();
      for (Row row : rows) {
        got.add(comparable(row.get(index)));
      }
      checks.add(() -> assertEquals(column.getValue(), got, column.getKey()));
    }
    assertAll(checks);
  }

  @Test
  void eachSqlServerTypeHasItsMappedColumnType() {
    List<String> types = new ArrayList<>();
    for (StructField field :
        spark.read().format("delta").load(table("dbo_extremes")).schema().fields()) {
      if (field.name().startsWith("c_")) {
        types.add(field.name() + " " + field.dataType().sql());
      }
    }

    assertEquals(
        List.of(
            "c_date DATE",
            "c_datetime2 TIMESTAMP_NTZ",
            "c_datetime TIMESTAMP_NTZ",
            "c_smalldatetime TIMESTAMP_NTZ",
            "c_datetimeoffset TIMESTAMP",
            "c_time STRING",
            "c_decimal38_0 DECIMAL(38,0)",
            "c_decimal38_38 DECIMAL(38,38)",
            "c_float DOUBLE",
            "c_real FLOAT",
            "c_money DECIMAL(19,4)",
            "c_smallmoney DECIMAL(10,4)",
            "c_bit BOOLEAN",
            "c_tinyint SMALLINT",
            "c_smallint SMALLINT",
            "c_int INT",
            "c_bigint BIGINT",
            "c_uniqueidentifier STRING",
            "c_binary BINARY",
            "c_varbinary BINARY",
            "c_nvarchar STRING",
            "c_xml STRING"),
        types);
  }

  @Test
  void theSnapshotRowsAndTheChangeRowsAreBoth() {
    assertEquals(
        List.of("1 0", "2 0", "3 2", "4 2"),
        rows("dbo_extremes", "id, _operation").stream()
            .map(r -> r.get(0) + " " + r.get(1))
            .toList());
  }

  @Test
  void everyDataFileSaysItIsProlepticGregorianTheWaySparkReadsIt() throws IOException {
    List<Row> files =
        spark
            .sql("SELECT DISTINCT _metadata.file_path FROM delta.`" + table("dbo_extremes") + "`")
            .collectAsList();

    Row detail = spark.sql("DESCRIBE DETAIL delta.`" + table("dbo_extremes") + "`").first();
    assertEquals(detail.getLong(detail.fieldIndex("numFiles")), (long) files.size());
    assertTrue(files.size() >= 2, "the snapshot's files and the batch's: " + files);
    for (Row file : files) {
      try (ParquetFileReader reader =
          ParquetFileReader.open(
              HadoopInputFile.fromPath(
                  new org.apache.hadoop.fs.Path(file.getString(0)), new Configuration()))) {
        assertEquals(
            Map.of("org.apache.spark.version", "3.5.0", "writer.model.name", "lakecdc"),
            reader.getFooter().getFileMetaData().getKeyValueMetaData());
      }
    }
  }

  @Test
  void hierarchyidAndSqlVariantHaveNoDefaultMappingAndAreReadWithColumns() throws IOException {
    assertEquals(
        "Column 'node' of capture instance dbo_variants has SQL Server type hierarchyid, which has"
            + " no default mapping; declare the columns to read with 'columns' (withColumns /"
            + " --columns) and leave it out",
        Files.readString(dir.resolve("variants-refused.txt"), StandardCharsets.UTF_8));
    List<Row> rows = rows("dbo_variants", "id, node, v");
    assertEquals(1, rows.size());
    assertEquals(1, rows.get(0).get(0));
    assertEquals("[88]", comparable(rows.get(0).get(1)), "hierarchyid's bytes, as BINARY");
    assertEquals("forty-two", rows.get(0).get(2), "sql_variant's text, as STRING");
  }

  @Test
  void aValueTheMappingCannotHoldFailsTheRunBeforeAnythingIsCommitted() throws IOException {
    assertEquals(
        "Cannot convert column 'dto': value 0000-12-31T10:00:00Z does not fit TIMESTAMP: Delta"
            + " and Spark hold 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999999Z",
        Files.readString(dir.resolve("ancient-refused.txt"), StandardCharsets.UTF_8));
    assertFalse(
        Files.exists(dir.resolve("delta/dbo_ancient/_delta_log/00000000000000000002.json")),
        "no version after the table's creation");
    assertEquals(
        0L,
        spark.sql("SELECT count(*) FROM delta.`" + table("dbo_ancient") + "`").first().getLong(0));
  }
}
