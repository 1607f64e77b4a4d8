package org.lakecdc.transforms.delta;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.startsWith;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.delta.kernel.data.ColumnarBatch;
import io.delta.kernel.data.FilteredColumnarBatch;
import io.delta.kernel.defaults.engine.DefaultEngine;
import io.delta.kernel.defaults.engine.hadoopio.HadoopFileIO;
import io.delta.kernel.engine.FileReadResult;
import io.delta.kernel.expressions.Column;
import io.delta.kernel.types.IntegerType;
import io.delta.kernel.types.StructType;
import io.delta.kernel.utils.CloseableIterator;
import io.delta.kernel.utils.DataFileStatus;
import io.delta.kernel.utils.FileStatus;
import java.io.IOException;
import java.math.BigDecimal;
import java.nio.file.Path;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.beam.sdk.schemas.Schema;
import org.apache.beam.sdk.values.Row;
import org.apache.hadoop.conf.Configuration;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.metadata.ParquetMetadata;
import org.apache.parquet.hadoop.util.HadoopInputFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.io.mssqlcdc.schema.OutputType;

/**
 * The project's Parquet writer: the footer Spark reads the calendar from, and everything else as
 * Kernel's own writer writes it (schema, statistics, values, file rolling).
 */
class ParquetDataFilesTest {
  @TempDir Path dir;

  /** One column of every output type, the extremes of the SQL Server types they hold. */
  private static final List<DeltaColumn> COLUMNS =
      List.of(
          DeltaColumn.required("id", OutputType.BIGINT, null),
          DeltaColumn.nullable("flag", OutputType.BOOLEAN, null),
          DeltaColumn.nullable("small", OutputType.SMALLINT, null),
          DeltaColumn.nullable("whole", OutputType.INT, null),
          DeltaColumn.nullable("single", OutputType.FLOAT, null),
          DeltaColumn.nullable("dbl", OutputType.DOUBLE, null),
          DeltaColumn.nullable("dec9", OutputType.decimal(9, 2), null),
          DeltaColumn.nullable("money", OutputType.decimal(19, 4), null),
          DeltaColumn.nullable("dec38", OutputType.decimal(38, 0), null),
          DeltaColumn.nullable("frac38", OutputType.decimal(38, 38), null),
          DeltaColumn.nullable("day", OutputType.DATE, null),
          DeltaColumn.nullable("local", OutputType.TIMESTAMP_NTZ, null),
          DeltaColumn.nullable("instant", OutputType.TIMESTAMP, null),
          DeltaColumn.nullable("text", OutputType.STRING, null),
          DeltaColumn.nullable("bytes", OutputType.BINARY, null));

  private static final Schema SCHEMA = DeltaColumn.toBeamSchema(COLUMNS);

  private static final StructType KERNEL_SCHEMA = DeltaTypes.toStruct(COLUMNS);

  private static List<Row> rows() {
    String nines = "9".repeat(38);
    return List.of(
        Row.withSchema(SCHEMA)
            .addValues(
                Long.MIN_VALUE,
                true,
                Short.MIN_VALUE,
                Integer.MIN_VALUE,
                -Float.MAX_VALUE,
                -Double.MAX_VALUE,
                new BigDecimal("-9999999.99"),
                new BigDecimal("-922337203685477.5808"),
                new BigDecimal("-" + nines),
                new BigDecimal("-0." + nines),
                LocalDate.of(1, 1, 1),
                LocalDateTime.of(1, 1, 1, 0, 0),
                Instant.parse("0001-01-01T14:00:00Z"),
                "\uD83D\uDE00",
                new byte[] {0, 0, 0})
            .build(),
        Row.withSchema(SCHEMA)
            .addValues(
                Long.MAX_VALUE,
                false,
                Short.MAX_VALUE,
                Integer.MAX_VALUE,
                Float.MAX_VALUE,
                Double.MAX_VALUE,
                new BigDecimal("9999999.99"),
                new BigDecimal("922337203685477.5807"),
                new BigDecimal(nines),
                new BigDecimal("0." + nines),
                LocalDate.of(9999, 12, 31),
                LocalDateTime.of(9999, 12, 31, 23, 59, 59, 999_999_000),
                Instant.parse("9999-12-31T09:59:59.999999Z"),
                "",
                new byte[0])
            .build(),
        Row.withSchema(SCHEMA)
            .addValues(
                0L, null, null, null, null, null, null, null, null, null, null, null, null, null,
                null)
            .build());
  }

  private static List<Column> allColumns() {
    List<Column> columns = new ArrayList<>();
    for (String name : KERNEL_SCHEMA.fieldNames()) {
      columns.add(new Column(name));
    }
    return columns;
  }

  private static CloseableIterator<FilteredColumnarBatch> batches() {
    return RowBatches.plan("test", KERNEL_SCHEMA, SCHEMA).batches(rows().iterator());
  }

  private static ParquetMetadata footer(String path) throws IOException {
    try (ParquetFileReader reader =
        ParquetFileReader.open(
            HadoopInputFile.fromPath(new org.apache.hadoop.fs.Path(path), new Configuration()))) {
      return reader.getFooter();
    }
  }

  @Test
  void everyDataFileTellsSparkItsDatesAndTimestampsAreProlepticGregorian() throws IOException {
    DeltaTables tables = DeltaTables.create();
    String path = dir.resolve("extremes").toString();
    tables.createIfAbsent(path, TableDefinition.of(TableKind.BRONZE, COLUMNS));

    List<DataFileAction> files = tables.writeDataFiles(path, SCHEMA, rows());

    assertEquals(1, files.size());
    assertEquals(
        Map.of("org.apache.spark.version", "3.5.0", "writer.model.name", "lakecdc"),
        footer(files.get(0).path()).getFileMetaData().getKeyValueMetaData(),
        "Spark 3.5 reads CORRECTED (no rebase) from a version >= 3.0.0 and no"
            + " org.apache.spark.legacyDateTime / legacyINT96 key");
  }

  @Test
  void schemaStatisticsAndValuesAreThoseOfKernelsOwnWriter() throws IOException {
    Configuration conf = new Configuration();
    String ours = dir.resolve("ours").toString();
    String kernels = dir.resolve("kernels").toString();

    List<DataFileStatus> written;
    try (CloseableIterator<FilteredColumnarBatch> data = batches()) {
      written = new ParquetDataFiles(new HadoopFileIO(conf), conf).write(ours, data, allColumns());
    }
    List<DataFileStatus> reference = new ArrayList<>();
    DefaultEngine engine = DefaultEngine.create(conf);
    try (CloseableIterator<FilteredColumnarBatch> data = batches();
        CloseableIterator<DataFileStatus> files =
            engine.getParquetHandler().writeParquetFiles(kernels, data, allColumns())) {
      files.forEachRemaining(reference::add);
    }

    assertEquals(1, written.size());
    assertEquals(1, reference.size());
    DataFileStatus mine = written.get(0);
    DataFileStatus theirs = reference.get(0);
    assertThat(mine.getPath(), startsWith("file:" + ours + "/"));
    assertEquals(
        footer(theirs.getPath()).getFileMetaData().getSchema(),
        footer(mine.getPath()).getFileMetaData().getSchema());
    assertEquals(
        Map.of(
            "io.delta.kernel.default-parquet-writer",
            "Kernel-Defaults-4.4.0",
            "writer.model.name",
            "delta-kernel-default-parquet-writer"),
        footer(theirs.getPath()).getFileMetaData().getKeyValueMetaData(),
        "what Kernel's writer stores, and Spark does not recognise");
    assertEquals(
        theirs.getStatistics().orElseThrow().serializeAsJson(KERNEL_SCHEMA),
        mine.getStatistics().orElseThrow().serializeAsJson(KERNEL_SCHEMA));
    assertEquals(3L, mine.getStatistics().orElseThrow().getNumRecords());
    assertEquals(values(engine, theirs), values(engine, mine));
    assertEquals(
        Arrays.asList(
            Long.MAX_VALUE,
            false,
            Short.MAX_VALUE,
            Integer.MAX_VALUE,
            Float.MAX_VALUE,
            Double.MAX_VALUE,
            new BigDecimal("9999999.99"),
            new BigDecimal("922337203685477.5807"),
            new BigDecimal("9".repeat(38)),
            new BigDecimal("0." + "9".repeat(38)),
            LocalDate.of(9999, 12, 31),
            LocalDateTime.of(9999, 12, 31, 23, 59, 59, 999_999_000),
            Instant.parse("9999-12-31T09:59:59.999999Z"),
            "",
            "[]"),
        values(engine, mine).get(1));
  }

  /**
   * Rows whose statistics a reader does not take as written: a NaN of FLOAT, signed zeros of DOUBLE
   * (parquet-java's reader drops a NaN's statistics and reads a zero min as -0.0 and a zero max as
   * +0.0), a string of 5,000 characters (min and max over 4 KiB are not stored), a column of nulls
   * only.
   */
  private static List<Row> edgeRows() {
    String longText = "x".repeat(5_000);
    List<Row> rows = new ArrayList<>();
    Object[][] values = {
      {1L, 0.0f, -0.0d, "a", null},
      {2L, Float.NaN, 0.0d, longText, null},
      {3L, -0.0f, 0.0d, "b", null},
    };
    for (Object[] v : values) {
      List<Object> row = new ArrayList<>(Arrays.asList(new Object[SCHEMA.getFieldCount()]));
      row.set(0, v[0]);
      row.set(4, v[1]);
      row.set(5, v[2]);
      row.set(13, v[3]);
      row.set(14, v[4]);
      rows.add(Row.withSchema(SCHEMA).attachValues(row));
    }
    return rows;
  }

  @Test
  void statisticsFromTheWritersFooterAreThoseReadBackFromTheFile() throws IOException {
    Configuration conf = new Configuration();
    HadoopFileIO fileIO = new HadoopFileIO(conf);
    RowRecords records = new RowRecords(RowBatches.plan("test", KERNEL_SCHEMA, SCHEMA));
    ParquetDataFiles.Files files =
        new ParquetDataFiles(fileIO, conf)
            .openRecords(dir.resolve("edges").toString(), allColumns(), KERNEL_SCHEMA, records);
    long number = 0;
    for (Row row : edgeRows()) {
      records.next(number++, SCHEMA.getFieldCount(), List.of());
      files.writeRecord(row);
    }
    DataFileStatus written = files.finish().get(0);

    String readBack =
        KernelInternals.dataFileStatistics(
                fileIO, written.getPath(), written.getSize(), KERNEL_SCHEMA, allColumns())
            .serializeAsJson(KERNEL_SCHEMA);
    assertEquals(readBack, written.getStatistics().orElseThrow().serializeAsJson(KERNEL_SCHEMA));
    // The rules above did apply: no statistics at all for the column with a NaN and the
    // 5,000-character one, signed zeros, min and max null for the columns of nulls only.
    String before = "\"flag\":null,\"small\":null,\"whole\":null,";
    String after =
        ",\"dec9\":null,\"money\":null,\"dec38\":null,\"frac38\":null,\"day\":null,"
            + "\"local\":null,\"instant\":null,\"bytes\":null";
    assertEquals(
        "{\"numRecords\":3,\"minValues\":{\"id\":1,"
            + before
            + "\"dbl\":-0.0"
            + after
            + "},\"maxValues\":{\"id\":3,"
            + before
            + "\"dbl\":0.0"
            + after
            + "},\"nullCount\":{\"id\":0,\"flag\":3,\"small\":3,\"whole\":3,\"dbl\":0,"
            + "\"dec9\":3,\"money\":3,\"dec38\":3,\"frac38\":3,\"day\":3,\"local\":3,"
            + "\"instant\":3,\"bytes\":3}}",
        readBack);
  }

  /** The rows of a file as read by Kernel, byte arrays as {@link Arrays#toString(byte[])}. */
  private static List<List<Object>> values(DefaultEngine engine, DataFileStatus file)
      throws IOException {
    List<List<Object>> rows = new ArrayList<>();
    try (CloseableIterator<FileReadResult> read =
        engine
            .getParquetHandler()
            .readParquetFiles(
                KernelIterators.<FileStatus>single(file), KERNEL_SCHEMA, Optional.empty())) {
      while (read.hasNext()) {
        ColumnarBatch batch = read.next().getData();
        try (CloseableIterator<io.delta.kernel.data.Row> it =
            new FilteredColumnarBatch(batch, Optional.empty()).getRows()) {
          while (it.hasNext()) {
            io.delta.kernel.data.Row row = it.next();
            List<Object> values = new ArrayList<>();
            for (int i = 0; i < KERNEL_SCHEMA.length(); i++) {
              Object value = RowBatches.javaValue("test", row, i);
              values.add(value instanceof byte[] ? Arrays.toString((byte[]) value) : value);
            }
            rows.add(values);
          }
        }
      }
    }
    return rows;
  }

  /** The rows written record by record ({@link RowRecords}), each cut after field {@code from}. */
  private static DataFileStatus writeRecords(String directory, int from) throws IOException {
    Configuration conf = new Configuration();
    RowRecords records = new RowRecords(RowBatches.plan("test", KERNEL_SCHEMA, SCHEMA));
    ParquetDataFiles.Files files =
        new ParquetDataFiles(new HadoopFileIO(conf), conf)
            .openRecords(directory, allColumns(), KERNEL_SCHEMA, records);
    Schema head = new Schema(SCHEMA.getFields().subList(0, from));
    long number = 0;
    for (Row row : rows()) {
      List<Object> values = row.getValues();
      Row first = Row.withSchema(head).attachValues(new ArrayList<>(values.subList(0, from)));
      records.next(number++, from, values.subList(from, values.size()));
      files.writeRecord(first);
    }
    List<DataFileStatus> written = files.finish();
    assertEquals(1, written.size());
    return written.get(0);
  }

  @Test
  void rowsWrittenRecordByRecordMakeTheFileTheirKernelBatchesMake() throws IOException {
    Configuration conf = new Configuration();
    List<DataFileStatus> batched;
    try (CloseableIterator<FilteredColumnarBatch> data = batches()) {
      batched =
          new ParquetDataFiles(new HadoopFileIO(conf), conf)
              .write(dir.resolve("batched").toString(), data, allColumns());
    }
    DataFileStatus whole = writeRecords(dir.resolve("whole").toString(), SCHEMA.getFieldCount());
    DataFileStatus cut = writeRecords(dir.resolve("cut").toString(), 12);

    byte[] expected =
        java.nio.file.Files.readAllBytes(Path.of(java.net.URI.create(batched.get(0).getPath())));
    assertEquals(
        Arrays.toString(expected),
        Arrays.toString(
            java.nio.file.Files.readAllBytes(Path.of(java.net.URI.create(whole.getPath())))));
    assertEquals(
        Arrays.toString(expected),
        Arrays.toString(
            java.nio.file.Files.readAllBytes(Path.of(java.net.URI.create(cut.getPath())))));
    assertEquals(
        batched.get(0).getStatistics().orElseThrow().serializeAsJson(KERNEL_SCHEMA),
        cut.getStatistics().orElseThrow().serializeAsJson(KERNEL_SCHEMA));
    assertEquals(3L, cut.getStatistics().orElseThrow().getNumRecords());
    assertEquals(
        Arrays.asList(
            Long.MIN_VALUE,
            true,
            Short.MIN_VALUE,
            Integer.MIN_VALUE,
            -Float.MAX_VALUE,
            -Double.MAX_VALUE,
            new BigDecimal("-9999999.99"),
            new BigDecimal("-922337203685477.5808"),
            new BigDecimal("-" + "9".repeat(38)),
            new BigDecimal("-0." + "9".repeat(38)),
            LocalDate.of(1, 1, 1),
            LocalDateTime.of(1, 1, 1, 0, 0),
            Instant.parse("0001-01-01T14:00:00Z"),
            "\uD83D\uDE00",
            "[0, 0, 0]"),
        values(DefaultEngine.create(conf), cut).get(0));
  }

  @Test
  void aValueOfTheWrongTypeIsNamedWithItsColumn() throws IOException {
    Configuration conf = new Configuration();
    RowRecords records = new RowRecords(RowBatches.plan("test", KERNEL_SCHEMA, SCHEMA));
    ParquetDataFiles.Files files =
        new ParquetDataFiles(new HadoopFileIO(conf), conf)
            .openRecords(dir.resolve("wrong").toString(), allColumns(), KERNEL_SCHEMA, records);
    Row row = rows().get(2);
    List<Object> values = new ArrayList<>(row.getValues());
    values.set(3, "seven");
    records.next(5, SCHEMA.getFieldCount(), List.of());

    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> files.writeRecord(Row.withSchema(SCHEMA).attachValues(values)));
    files.abandon(e);

    assertEquals(
        "Delta table test column 'whole' (INT) cannot hold the String value seven", e.getMessage());
  }

  @Test
  void aNewFileStartsOnceTheTargetSizeIsBuffered() throws IOException {
    Configuration conf = new Configuration();
    conf.set(ParquetDataFiles.TARGET_FILE_SIZE_CONF, "1");
    String ours = dir.resolve("rolled").toString();

    List<DataFileStatus> written;
    try (CloseableIterator<FilteredColumnarBatch> data = batches()) {
      written = new ParquetDataFiles(new HadoopFileIO(conf), conf).write(ours, data, List.of());
    }

    assertEquals(3, written.size());
    for (DataFileStatus file : written) {
      assertEquals(1L, file.getStatistics().orElseThrow().getNumRecords());
      assertThat(file.getPath(), startsWith("file:" + ours + "/"));
    }
  }

  @Test
  void aNestedColumnIsRefusedBeforeAnythingIsWritten() {
    StructType nested =
        new StructType().add("point", new StructType().add("x", IntegerType.INTEGER));

    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> ParquetDataFiles.parquetSchema(nested));

    assertThat(e.getMessage(), startsWith("Column 'point' has type struct"));
  }

  @Test
  void decimalBytesAreTheFewestThatHoldThePrecision() {
    assertEquals(9, ParquetDataFiles.decimalBytes(19));
    assertEquals(16, ParquetDataFiles.decimalBytes(38));
    assertEquals(1, ParquetDataFiles.decimalBytes(2));
    assertEquals(2, ParquetDataFiles.decimalBytes(3));
  }
}
