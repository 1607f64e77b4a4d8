package org.lakecdc.transforms.delta;

import io.delta.kernel.data.ColumnVector;
import io.delta.kernel.data.ColumnarBatch;
import io.delta.kernel.data.FilteredColumnarBatch;
import io.delta.kernel.defaults.engine.fileio.FileIO;
import io.delta.kernel.expressions.Column;
import io.delta.kernel.statistics.DataFileStatistics;
import io.delta.kernel.types.BinaryType;
import io.delta.kernel.types.BooleanType;
import io.delta.kernel.types.ByteType;
import io.delta.kernel.types.DataType;
import io.delta.kernel.types.DateType;
import io.delta.kernel.types.DecimalType;
import io.delta.kernel.types.DoubleType;
import io.delta.kernel.types.FloatType;
import io.delta.kernel.types.IntegerType;
import io.delta.kernel.types.LongType;
import io.delta.kernel.types.ShortType;
import io.delta.kernel.types.StringType;
import io.delta.kernel.types.StructField;
import io.delta.kernel.types.StructType;
import io.delta.kernel.types.TimestampNTZType;
import io.delta.kernel.types.TimestampType;
import io.delta.kernel.utils.CloseableIterator;
import io.delta.kernel.utils.DataFileStatus;
import io.delta.kernel.utils.FileStatus;
import java.io.IOException;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.apache.hadoop.conf.Configuration;
import org.apache.parquet.column.ParquetProperties.WriterVersion;
import org.apache.parquet.hadoop.ParquetOutputFormat;
import org.apache.parquet.hadoop.ParquetWriter;
import org.apache.parquet.hadoop.api.WriteSupport;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;
import org.apache.parquet.hadoop.metadata.ParquetMetadata;
import org.apache.parquet.hadoop.util.HadoopOutputFile;
import org.apache.parquet.io.LocalOutputFile;
import org.apache.parquet.io.api.Binary;
import org.apache.parquet.io.api.RecordConsumer;
import org.apache.parquet.schema.LogicalTypeAnnotation;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName;
import org.apache.parquet.schema.Type;
import org.apache.parquet.schema.Type.Repetition;
import org.apache.parquet.schema.Types;

/**
 * Writes the physical batches of a Kernel append ({@code Transaction.transformLogicalData}) as
 * Parquet data files in a table directory, exactly as Kernel's default engine does, except that
 * every file's footer says its dates and timestamps are in the proleptic Gregorian calendar in the
 * way Spark 3 recognises.
 *
 * <h2>Why this writer exists</h2>
 *
 * <p>Spark 3 (and so delta-spark and Databricks) decides how to read a Parquet DATE or TIMESTAMP
 * column from the footer's key-value metadata ({@code DataSourceUtils.datetimeRebaseSpec} and
 * {@code int96RebaseSpec} in Spark 3.5's {@code sql/core}): with a key {@value #SPARK_VERSION_KEY},
 * a version of at least 3.0.0 (3.1.0 for INT96) and no {@code org.apache.spark.legacyDateTime} (or
 * {@code org.apache.spark.legacyINT96}) key, the values are read as they are (CORRECTED, proleptic
 * Gregorian). The version is compared as text; the keys are the constants of Spark's {@code
 * org.apache.spark.sql} package object, checked in the bytecode of spark-sql_2.12 3.5.3 as well as
 * in Spark's source. With no version key Spark falls back to {@code
 * spark.sql.parquet.datetimeRebaseModeInRead}, whose default EXCEPTION fails every query that meets
 * a date before 1582-10-15 or a timestamp before 1900-01-01T00:00:00Z ({@code
 * INCONSISTENT_BEHAVIOR_CROSS_VERSION.READ_ANCIENT_DATETIME}). Spark 3's own writer stores the
 * version key and, in its default CORRECTED write mode, neither legacy key. Kernel 4.4's writer
 * stores only {@code io.delta.kernel.default-parquet-writer}, and takes no extra metadata: its
 * {@code WriteSupport} is private, fixes the footer map, and Kernel's {@code ParquetWriter} builder
 * reads no metadata from the configuration. Kernel does write values in the proleptic Gregorian
 * calendar (days and microseconds since 1970-01-01 of {@link java.time}), so the footer is the only
 * thing missing.
 *
 * <p>This class therefore drives parquet-hadoop's {@link ParquetWriter} itself: the Parquet schema
 * is Kernel's ({@code ParquetSchemaUtils.toParquetSchema} in kernel-defaults 4.4.0: message {@code
 * DefaultKernelSchema}; BYTE, SHORT and INT as plain INT32; DATE as INT32 {@code DATE}; TIMESTAMP
 * and TIMESTAMP_NTZ as INT64 {@code TIMESTAMP(MICROS)} adjusted to UTC or not; DECIMAL as INT32 up
 * to 9 digits, INT64 up to 18, else FIXED_LEN_BYTE_ARRAY of the fewest bytes; STRING as BINARY
 * {@code STRING}; nullable as OPTIONAL), the values are written as Kernel's {@code
 * ParquetColumnWriters} write them, files are named and rolled as Kernel names and rolls them
 * ({@code <uuid>-<nnn>.parquet}, a new file once {@value #TARGET_FILE_SIZE_CONF} bytes, 128 MiB by
 * default, are buffered), the same {@code parquet.*} Hadoop settings apply, and the statistics are
 * Kernel's own ({@link KernelInternals#dataFileStatistics}). Only flat schemas of the primitive
 * types above are written (every table of this project); a nested column is refused before any file
 * is created.
 *
 * <p>The footer's key-value metadata is exactly {@value #SPARK_VERSION_KEY} = {@value
 * #SPARK_VERSION} and {@code writer.model.name} = {@value #WRITER_NAME} (parquet-hadoop adds the
 * latter from {@link WriteSupport#getName()}). Delta checkpoints are still written by Kernel's own
 * handler: they hold no DATE or TIMESTAMP column, so no reader asks about their calendar.
 */
final class ParquetDataFiles {
  /** The footer key Spark reads the writer's Spark version from. */
  static final String SPARK_VERSION_KEY = "org.apache.spark.version";

  /**
   * The Spark version written: a Spark 3.5 writer in its default CORRECTED modes, whose files Spark
   * 3.x and 4.x read without rebasing (Spark compares the text with "3.0.0" and "3.1.0").
   */
  static final String SPARK_VERSION = "3.5.0";

  /** The write support's name, stored by parquet-hadoop as {@code writer.model.name}. */
  static final String WRITER_NAME = "lakecdc";

  /** Kernel's target file size setting, which this writer honours the same way. */
  static final String TARGET_FILE_SIZE_CONF =
      "delta.kernel.default.parquet.writer.targetMaxFileSize";

  /** Kernel's default target file size: 128 MiB. */
  static final long DEFAULT_TARGET_FILE_SIZE = 128L * 1024 * 1024;

  /** The Parquet message name Kernel gives its schemas. */
  static final String MESSAGE_NAME = "DefaultKernelSchema";

  private final FileIO fileIO;
  private final Configuration hadoopConf;

  /** Whether {@code file:} paths are Hadoop's own local file system ({@link LocalFiles}). */
  private final boolean hadoopLocal;

  ParquetDataFiles(FileIO fileIO, Configuration hadoopConf) {
    this.fileIO = fileIO;
    this.hadoopConf = hadoopConf;
    this.hadoopLocal = LocalFileLogStore.isHadoopLocal(hadoopConf);
  }

  /**
   * Writes the selected rows of the batches into new files in {@code directory}: {@link #open},
   * each batch in turn, {@link Files#finish}. Batches are pulled one at a time, so memory holds one
   * batch and the open file's buffered row group, whatever the number of rows.
   *
   * @param directory the target directory (Kernel's {@code DataWriteContext.getTargetDirectory})
   * @param data the physical batches, all of one schema; closed by the caller
   * @param statsColumns the columns to collect statistics for
   * @return one status per file written, with its statistics; empty when no row is selected
   * @throws IllegalArgumentException when the batches' schema has a type this writer does not
   *     write, or the batches differ in schema
   * @throws IOException when writing or reading back a file fails
   */
  List<DataFileStatus> write(
      String directory, CloseableIterator<FilteredColumnarBatch> data, List<Column> statsColumns)
      throws IOException {
    Files files = open(directory, statsColumns);
    try {
      while (data.hasNext()) {
        files.write(data.next());
      }
      return files.finish();
    } catch (IOException | RuntimeException | Error e) {
      files.abandon(e);
      throw e;
    }
  }

  /**
   * Starts writing files into {@code directory}, batch by batch ({@link Files#write}), rolling to a
   * new file once {@value #TARGET_FILE_SIZE_CONF} bytes (128 MiB by default) are buffered.
   *
   * @param directory the target directory (Kernel's {@code DataWriteContext.getTargetDirectory})
   * @param statsColumns the columns to collect statistics for
   * @return the writer; no file is created before the first selected row
   */
  Files open(String directory, List<Column> statsColumns) {
    long target =
        fileIO.getConf(TARGET_FILE_SIZE_CONF).map(Long::valueOf).orElse(DEFAULT_TARGET_FILE_SIZE);
    return new Files(directory, statsColumns, target);
  }

  /**
   * Starts writing files into {@code directory} record by record ({@link Files#writeRecord}): each
   * record's fields are written by {@code fields}, columns of {@code schema}, into files that roll
   * as {@link #open}'s do. The files are those batches of the same values would give: the same
   * Parquet schema, footer, encodings and statistics.
   *
   * @param directory the target directory (Kernel's {@code DataWriteContext.getTargetDirectory})
   * @param statsColumns the columns to collect statistics for
   * @param schema the files' columns (flat, of the types {@link #parquetSchema} writes)
   * @param fields writes one record's non-null values
   * @return the writer; no file is created before the first record
   * @throws IllegalArgumentException when the schema has a type this writer does not write
   */
  Files openRecords(
      String directory, List<Column> statsColumns, StructType schema, RecordFields fields) {
    long target =
        fileIO.getConf(TARGET_FILE_SIZE_CONF).map(Long::valueOf).orElse(DEFAULT_TARGET_FILE_SIZE);
    return new Files(
        directory,
        statsColumns,
        target,
        schema,
        new RecordWriteSupport(parquetSchema(schema), fields));
  }

  /**
   * Writes the fields of one record between Parquet's {@code startMessage} and {@code endMessage}:
   * for each non-null value, {@code startField}, the value, {@code endField}, in column order.
   */
  interface RecordFields {
    /**
     * Writes {@code record}'s fields.
     *
     * @throws IllegalArgumentException when a value does not fit its column
     */
    void write(RecordConsumer consumer, Object record);
  }

  /**
   * The files of one write, written batch by batch: at most one file is open, and it holds the rows
   * of the current row group in memory. Used by one thread.
   */
  final class Files {
    private final String directory;
    private final List<Column> statsColumns;
    private final long target;
    private final List<DataFileStatus> done = new ArrayList<>();
    private StructType schema;
    private FlatWriteSupport support;
    private ParquetWriter<Object> writer;
    private String path;
    private long rows;
    private int fileNumber;
    private boolean finished;

    private Files(String directory, List<Column> statsColumns, long target) {
      this.directory = directory;
      this.statsColumns = statsColumns;
      this.target = target;
    }

    private Files(
        String directory,
        List<Column> statsColumns,
        long target,
        StructType schema,
        FlatWriteSupport support) {
      this(directory, statsColumns, target);
      this.schema = schema;
      this.support = support;
    }

    /**
     * Writes the batch's selected rows, closing the open file and starting a new one whenever the
     * open file reaches the target size.
     *
     * @throws IllegalArgumentException when the batch's schema has a type this writer does not
     *     write, or differs from the schema of the batches before
     * @throws IOException when writing or reading back a file fails
     */
    void write(FilteredColumnarBatch batch) throws IOException {
      if (finished) {
        throw new IllegalStateException("The files of this write are already finished");
      }
      ColumnarBatch columns = batch.getData();
      int size = columns.getSize();
      if (size == 0) {
        return;
      }
      if (support == null) {
        schema = columns.getSchema();
        support = new BatchWriteSupport(schema, parquetSchema(schema));
      } else if (!(support instanceof BatchWriteSupport)) {
        throw new IllegalStateException("These files are written record by record, not by batch");
      } else if (!schema.equals(columns.getSchema())) {
        throw new IllegalArgumentException(
            "Batches of one write differ in schema: " + schema + " and " + columns.getSchema());
      }
      ((BatchWriteSupport) support).batch = columns;
      Optional<ColumnVector> selection = batch.getSelectionVector();
      for (int row = 0; row < size; row++) {
        if (selection.isPresent()
            && (selection.get().isNullAt(row) || !selection.get().getBoolean(row))) {
          continue;
        }
        writeRecord(row);
      }
    }

    /**
     * Writes one record of a write opened with {@link #openRecords}: its fields as the write's
     * {@link RecordFields} give them, the file rolled as {@link #write} rolls it.
     *
     * @throws IllegalStateException after {@link #finish}, or for files written by batch
     * @throws IllegalArgumentException when a value does not fit its column
     * @throws IOException when writing or reading back a file fails
     */
    void writeRecord(Object record) throws IOException {
      if (finished) {
        throw new IllegalStateException("The files of this write are already finished");
      }
      if (writer == null) {
        path =
            new org.apache.hadoop.fs.Path(
                    directory, String.format("%s-%03d.parquet", UUID.randomUUID(), fileNumber++))
                .toString();
        rows = 0;
        writer = createWriter(path, support);
      }
      writer.write(record);
      rows++;
      if (writer.getDataSize() >= target) {
        closeFile();
      }
    }

    /** The number of files closed so far (the open one not counted). */
    int closedFiles() {
      return done.size();
    }

    /**
     * Closes the open file.
     *
     * @return one status per file written, in write order, with its statistics; empty when no row
     *     was selected
     * @throws IOException when closing or reading back a file fails
     */
    List<DataFileStatus> finish() throws IOException {
      if (!finished) {
        closeFile();
        finished = true;
      }
      return List.copyOf(done);
    }

    /**
     * Gives up after {@code failure}: closes the open file, adding a failure to close to {@code
     * failure}. Files already written stay as orphans that no commit adds ({@code VACUUM} removes
     * them).
     */
    void abandon(Throwable failure) {
      finished = true;
      ParquetWriter<Object> open = writer;
      writer = null;
      if (open != null) {
        try {
          open.close();
        } catch (IOException | RuntimeException e) {
          failure.addSuppressed(e);
        }
      }
    }

    private void closeFile() throws IOException {
      ParquetWriter<Object> open = writer;
      if (open == null) {
        return;
      }
      writer = null;
      open.close();
      done.add(status(path, schema, rows, statsColumns, open.getFooter()));
    }
  }

  private ParquetWriter<Object> createWriter(String path, FlatWriteSupport support)
      throws IOException {
    Builder builder = new Builder(outputFile(path), support);
    // The builder's own default is a new Configuration, which parses core-default.xml and
    // core-site.xml again for every file (most of a small file's cost); this one is parsed once.
    builder.withConf(hadoopConf);
    fileIO
        .getConf(ParquetOutputFormat.COMPRESSION)
        .ifPresent(c -> builder.withCompressionCodec(CompressionCodecName.fromConf(c)));
    fileIO
        .getConf(ParquetOutputFormat.BLOCK_SIZE)
        .map(Long::parseLong)
        .ifPresent(builder::withRowGroupSize);
    fileIO
        .getConf(ParquetOutputFormat.PAGE_SIZE)
        .map(Integer::parseInt)
        .ifPresent(builder::withPageSize);
    fileIO
        .getConf(ParquetOutputFormat.DICTIONARY_PAGE_SIZE)
        .map(Integer::parseInt)
        .ifPresent(builder::withDictionaryPageSize);
    fileIO
        .getConf(ParquetOutputFormat.MAX_PADDING_BYTES)
        .map(Integer::parseInt)
        .ifPresent(builder::withMaxPaddingSize);
    fileIO
        .getConf(ParquetOutputFormat.ENABLE_DICTIONARY)
        .map(Boolean::parseBoolean)
        .ifPresent(builder::withDictionaryEncoding);
    fileIO
        .getConf(ParquetOutputFormat.VALIDATION)
        .map(Boolean::parseBoolean)
        .ifPresent(builder::withValidation);
    fileIO
        .getConf(ParquetOutputFormat.WRITER_VERSION)
        .map(WriterVersion::fromString)
        .ifPresent(builder::withWriterVersion);
    return builder.build();
  }

  /**
   * Where a data file is written: a {@code file:} path through {@code java.nio} ({@link
   * LocalOutputFile}) when Hadoop's own local file system serves the scheme, because without
   * Hadoop's native library that file system forks a {@code chmod} process for every file it
   * creates; any other path through Hadoop ({@link HadoopOutputFile}, with the job's
   * configuration). The bytes are the same; no Hadoop checksum sidecar is written beside a local
   * file (readers do not need one).
   */
  private org.apache.parquet.io.OutputFile outputFile(String path) throws IOException {
    java.nio.file.Path local = LocalFiles.of(path, hadoopLocal);
    if (local != null) {
      java.nio.file.Files.createDirectories(local.getParent());
      return new LocalOutputFile(local);
    }
    return HadoopOutputFile.fromPath(new org.apache.hadoop.fs.Path(path), hadoopConf);
  }

  /**
   * The file's status as Kernel builds it: qualified path, size, time, Kernel's statistics, taken
   * from the footer its writer returned ({@link KernelInternals#dataFileStatistics(ParquetMetadata,
   * StructType, List)}; read back from the file only where that Kernel method is missing).
   */
  private DataFileStatus status(
      String path, StructType schema, long rows, List<Column> statsColumns, ParquetMetadata footer)
      throws IOException {
    FileStatus file = LocalFiles.status(fileIO, hadoopLocal, path);
    String resolved = fileIO.resolvePath(path);
    DataFileStatistics statistics;
    if (statsColumns.isEmpty()) {
      statistics = new DataFileStatistics(rows, Map.of(), Map.of(), Map.of(), Optional.empty());
    } else {
      Optional<DataFileStatistics> fromFooter =
          KernelInternals.dataFileStatistics(footer, schema, statsColumns);
      statistics =
          fromFooter.isPresent()
              ? fromFooter.get()
              : KernelInternals.dataFileStatistics(
                  fileIO, resolved, file.getSize(), schema, statsColumns);
    }
    return new DataFileStatus(
        resolved, file.getSize(), file.getModificationTime(), Optional.ofNullable(statistics));
  }

  /**
   * The Parquet schema Kernel 4.4 writes for a flat schema (see the class comment).
   *
   * @throws IllegalArgumentException for a nested or other type this writer does not write
   */
  static MessageType parquetSchema(StructType schema) {
    List<Type> fields = new ArrayList<>();
    for (StructField field : schema.fields()) {
      fields.add(parquetType(field));
    }
    return new MessageType(MESSAGE_NAME, fields);
  }

  /**
   * The Parquet type Kernel 4.4 writes for a flat column (see the class comment).
   *
   * @throws IllegalArgumentException for a nested or other type this writer does not write
   */
  static Type parquetType(StructField field) {
    Repetition repetition = field.isNullable() ? Repetition.OPTIONAL : Repetition.REQUIRED;
    String name = field.getName();
    DataType type = field.getDataType();
    if (type instanceof BooleanType) {
      return Types.primitive(PrimitiveTypeName.BOOLEAN, repetition).named(name);
    } else if (type instanceof ByteType
        || type instanceof ShortType
        || type instanceof IntegerType) {
      return Types.primitive(PrimitiveTypeName.INT32, repetition).named(name);
    } else if (type instanceof LongType) {
      return Types.primitive(PrimitiveTypeName.INT64, repetition).named(name);
    } else if (type instanceof FloatType) {
      return Types.primitive(PrimitiveTypeName.FLOAT, repetition).named(name);
    } else if (type instanceof DoubleType) {
      return Types.primitive(PrimitiveTypeName.DOUBLE, repetition).named(name);
    } else if (type instanceof DecimalType) {
      DecimalType decimal = (DecimalType) type;
      LogicalTypeAnnotation annotation =
          LogicalTypeAnnotation.decimalType(decimal.getScale(), decimal.getPrecision());
      if (decimal.getPrecision() <= 9) {
        return Types.primitive(PrimitiveTypeName.INT32, repetition).as(annotation).named(name);
      } else if (decimal.getPrecision() <= 18) {
        return Types.primitive(PrimitiveTypeName.INT64, repetition).as(annotation).named(name);
      }
      return Types.primitive(PrimitiveTypeName.FIXED_LEN_BYTE_ARRAY, repetition)
          .as(annotation)
          .length(decimalBytes(decimal.getPrecision()))
          .named(name);
    } else if (type instanceof StringType) {
      return Types.primitive(PrimitiveTypeName.BINARY, repetition)
          .as(LogicalTypeAnnotation.stringType())
          .named(name);
    } else if (type instanceof BinaryType) {
      return Types.primitive(PrimitiveTypeName.BINARY, repetition).named(name);
    } else if (type instanceof DateType) {
      return Types.primitive(PrimitiveTypeName.INT32, repetition)
          .as(LogicalTypeAnnotation.dateType())
          .named(name);
    } else if (type instanceof TimestampType || type instanceof TimestampNTZType) {
      return Types.primitive(PrimitiveTypeName.INT64, repetition)
          .as(
              LogicalTypeAnnotation.timestampType(
                  type instanceof TimestampType, LogicalTypeAnnotation.TimeUnit.MICROS))
          .named(name);
    }
    throw new IllegalArgumentException(
        "Column '"
            + name
            + "' has type "
            + type
            + ", which the Parquet writer does not write; accepted: BOOLEAN, BYTE, SHORT, INT,"
            + " LONG, FLOAT, DOUBLE, DECIMAL, STRING, BINARY, DATE, TIMESTAMP, TIMESTAMP_NTZ");
  }

  /** The fewest bytes of a two's complement integer holding every unscaled value of a precision. */
  static int decimalBytes(int precision) {
    BigInteger limit = BigInteger.TEN.pow(precision);
    int bytes = 1;
    while (BigInteger.TWO.pow(8 * bytes - 1).compareTo(limit) < 0) {
      bytes++;
    }
    return bytes;
  }

  /** The write support of this class's files: their schema, footer and name. */
  private abstract static class FlatWriteSupport extends WriteSupport<Object> {
    private final MessageType parquetSchema;
    RecordConsumer consumer;

    FlatWriteSupport(MessageType parquetSchema) {
      this.parquetSchema = parquetSchema;
    }

    @Override
    public String getName() {
      return WRITER_NAME;
    }

    @Override
    public WriteContext init(Configuration configuration) {
      return new WriteContext(parquetSchema, Map.of(SPARK_VERSION_KEY, SPARK_VERSION));
    }

    @Override
    public void prepareForWrite(RecordConsumer recordConsumer) {
      this.consumer = recordConsumer;
    }
  }

  /** Writes each record by its {@link RecordFields}. */
  private static final class RecordWriteSupport extends FlatWriteSupport {
    private final RecordFields fields;

    RecordWriteSupport(MessageType parquetSchema, RecordFields fields) {
      super(parquetSchema);
      this.fields = fields;
    }

    @Override
    public void write(Object record) {
      consumer.startMessage();
      fields.write(consumer, record);
      consumer.endMessage();
    }
  }

  /** Writes row {@code i} of the current batch as one Parquet record. */
  private static final class BatchWriteSupport extends FlatWriteSupport {
    private final StructType schema;
    private ColumnarBatch batch;

    BatchWriteSupport(StructType schema, MessageType parquetSchema) {
      super(parquetSchema);
      this.schema = schema;
    }

    @Override
    public void write(Object rowId) {
      int row = (Integer) rowId;
      consumer.startMessage();
      for (int c = 0; c < schema.length(); c++) {
        ColumnVector vector = batch.getColumnVector(c);
        if (vector.isNullAt(row)) {
          continue;
        }
        String name = schema.at(c).getName();
        consumer.startField(name, c);
        writeValue(schema.at(c).getDataType(), vector, row, c);
        consumer.endField(name, c);
      }
      consumer.endMessage();
    }

    private void writeValue(DataType type, ColumnVector vector, int row, int column) {
      if (type instanceof BooleanType) {
        consumer.addBoolean(vector.getBoolean(row));
      } else if (type instanceof ByteType) {
        consumer.addInteger(vector.getByte(row));
      } else if (type instanceof ShortType) {
        consumer.addInteger(vector.getShort(row));
      } else if (type instanceof IntegerType || type instanceof DateType) {
        consumer.addInteger(vector.getInt(row));
      } else if (type instanceof LongType
          || type instanceof TimestampType
          || type instanceof TimestampNTZType) {
        consumer.addLong(vector.getLong(row));
      } else if (type instanceof FloatType) {
        consumer.addFloat(vector.getFloat(row));
      } else if (type instanceof DoubleType) {
        consumer.addDouble(vector.getDouble(row));
      } else if (type instanceof DecimalType) {
        writeDecimal((DecimalType) type, vector.getDecimal(row), column);
      } else if (type instanceof StringType) {
        consumer.addBinary(RowRecords.utf8(vector.getString(row)));
      } else if (type instanceof BinaryType) {
        consumer.addBinary(Binary.fromConstantByteArray(vector.getBinary(row)));
      } else {
        throw new IllegalStateException("Unchecked column type " + type);
      }
    }

    private void writeDecimal(DecimalType type, BigDecimal value, int column) {
      ParquetDataFiles.writeDecimal(consumer, schema.at(column).getName(), type, value);
    }
  }

  /**
   * Adds a decimal's unscaled value as Kernel writes it: INT32 up to 9 digits, INT64 up to 18, else
   * sign-extended big-endian bytes of {@link #decimalBytes} length.
   *
   * @throws IllegalArgumentException when the value is not at the type's scale or has more digits
   *     than its precision ({@code Column '<name>': decimal <value> ...})
   */
  static void writeDecimal(
      RecordConsumer consumer, String column, DecimalType type, BigDecimal value) {
    if (value.scale() != type.getScale()) {
      throw new IllegalArgumentException(
          "Column '"
              + column
              + "': decimal "
              + value.toPlainString()
              + " is not at the column's scale "
              + type.getScale());
    }
    BigInteger unscaled = value.unscaledValue();
    if (type.getPrecision() <= 9) {
      consumer.addInteger(unscaled.intValueExact());
    } else if (type.getPrecision() <= 18) {
      consumer.addLong(unscaled.longValueExact());
    } else {
      int length = decimalBytes(type.getPrecision());
      byte[] bytes = unscaled.toByteArray();
      if (bytes.length > length) {
        throw new IllegalArgumentException(
            "Column '"
                + column
                + "': decimal "
                + value.toPlainString()
                + " has more than "
                + type.getPrecision()
                + " digits");
      }
      byte[] fixed = new byte[length];
      Arrays.fill(fixed, 0, length - bytes.length, (byte) (unscaled.signum() < 0 ? -1 : 0));
      System.arraycopy(bytes, 0, fixed, length - bytes.length, bytes.length);
      consumer.addBinary(Binary.fromConstantByteArray(fixed));
    }
  }

  /** parquet-hadoop's writer builder over this class's write support. */
  private static final class Builder extends ParquetWriter.Builder<Object, Builder> {
    private final FlatWriteSupport support;

    Builder(org.apache.parquet.io.OutputFile file, FlatWriteSupport support) {
      super(file);
      this.support = support;
    }

    @Override
    protected Builder self() {
      return this;
    }

    @Override
    protected WriteSupport<Object> getWriteSupport(Configuration conf) {
      return support;
    }
  }
}
