package org.lakecdc.transforms.delta;

import io.delta.kernel.types.StructField;
import java.io.IOException;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.net.URI;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.apache.hadoop.conf.Configuration;
import org.apache.parquet.HadoopReadOptions;
import org.apache.parquet.column.ColumnDescriptor;
import org.apache.parquet.column.ColumnReader;
import org.apache.parquet.column.impl.ColumnReadStoreImpl;
import org.apache.parquet.column.page.PageReadStore;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.metadata.BlockMetaData;
import org.apache.parquet.hadoop.metadata.FileMetaData;
import org.apache.parquet.hadoop.util.HadoopInputFile;
import org.apache.parquet.io.InputFile;
import org.apache.parquet.io.LocalInputFile;
import org.apache.parquet.io.api.Converter;
import org.apache.parquet.io.api.GroupConverter;
import org.apache.parquet.io.api.PrimitiveConverter;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.PrimitiveType;
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName;
import org.apache.parquet.schema.Type;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.io.mssqlcdc.schema.OutputType;

/**
 * Reads some columns of the rows at some positions of one Parquet data file with parquet-java's
 * column readers, for {@link TableDeletionVectors#readLiveRowsAt}: a row group holding no wanted
 * row is not read at all, and in one that does, each column's values before, between and after the
 * wanted rows are stepped over (their levels read, their bytes skipped, a dictionary page decoded
 * once per column chunk) and only the wanted rows' values are decoded and converted. Kernel's
 * default Parquet reader, which this stands in for, assembles every row of the file into column
 * vectors first; for a wave that wants 1 % of a file's rows that assembly was most of its cost.
 *
 * <p>Only files laid out as {@link ParquetDataFiles} (and Kernel's own writer) lay them out are
 * read here: flat, each wanted column present under its table name with exactly the Parquet type
 * that writer gives the column's Delta type, and no Spark legacy-calendar key in the footer. For
 * any other file (another writer's layout, a column added after the file was written, a widened
 * type, column mapping) {@link #read} returns false before visiting a row and the caller reads the
 * file with Kernel. The values are those {@code RowBatches.javaValue} gives for Kernel's rows:
 * Boolean, Short, Integer, Long, Float, Double, BigDecimal (the column's scale), LocalDate,
 * LocalDateTime (TIMESTAMP_NTZ), Instant (TIMESTAMP, UTC), String, byte[] (a copy), null for NULL.
 * Memory: one row group's column chunks of the wanted columns (as Kernel's reader) plus the wanted
 * rows' values of that row group.
 */
final class ParquetRowsAt {
  /** Spark's footer keys that mark dates and timestamps written in the legacy hybrid calendar. */
  private static final List<String> LEGACY_CALENDAR_KEYS =
      List.of("org.apache.spark.legacyDateTime", "org.apache.spark.legacyINT96");

  /** Kernel's field metadata key of a column-mapped column's physical name. */
  private static final String PHYSICAL_NAME_KEY = "delta.columnMapping.physicalName";

  private ParquetRowsAt() {}

  /** Receives each wanted row: its position in the file and its values, in the fields' order. */
  interface RowAt {
    void visit(long position, @Nullable Object[] values);
  }

  /**
   * Visits the rows at {@code positions} of a data file, in ascending order; positions past the
   * file's last row are ignored.
   *
   * @param conf the tables' Hadoop configuration (file systems, Parquet read settings)
   * @param file the data file's absolute path or URI
   * @param fields the table's columns to read, in the order of the values
   * @param types each field's output type
   * @param positions the wanted row positions, ascending, from 0
   * @param visitor receives each wanted row
   * @return false, having visited nothing, when the file's layout is not one this reader reads
   * @throws IOException when the file cannot be read
   */
  static boolean read(
      Configuration conf,
      String file,
      List<StructField> fields,
      OutputType[] types,
      long[] positions,
      RowAt visitor)
      throws IOException {
    try (ParquetFileReader reader =
        ParquetFileReader.open(inputFile(conf, file), HadoopReadOptions.builder(conf).build())) {
      FileMetaData meta = reader.getFooter().getFileMetaData();
      for (String key : LEGACY_CALENDAR_KEYS) {
        if (meta.getKeyValueMetaData().containsKey(key)) {
          return false;
        }
      }
      MessageType fileSchema = meta.getSchema();
      ColumnDescriptor[] columns = new ColumnDescriptor[fields.size()];
      Map<String, Type> requested = new java.util.LinkedHashMap<>();
      for (int i = 0; i < columns.length; i++) {
        StructField field = fields.get(i);
        String name = field.getName();
        if (field.getMetadata().contains(PHYSICAL_NAME_KEY)
            || !fileSchema.containsField(name)
            || !sameType(fileSchema.getType(name), field)) {
          return false;
        }
        requested.put(name, fileSchema.getType(name));
        columns[i] = fileSchema.getColumnDescription(new String[] {name});
      }
      MessageType readSchema =
          new MessageType(fileSchema.getName(), new ArrayList<>(requested.values()));
      reader.setRequestedSchema(readSchema);
      String createdBy = meta.getCreatedBy();
      int next = 0;
      long start = 0;
      for (BlockMetaData block : reader.getRowGroups()) {
        if (next == positions.length) {
          break;
        }
        long end = start + block.getRowCount();
        int from = next;
        while (next < positions.length && positions[next] < end) {
          next++;
        }
        if (from == next) {
          reader.skipNextRowGroup();
        } else {
          PageReadStore pages = reader.readNextRowGroup();
          ColumnReadStoreImpl store =
              new ColumnReadStoreImpl(pages, NO_VALUES, readSchema, createdBy);
          @Nullable Object[][] rows = new Object[next - from][columns.length];
          Map<ColumnDescriptor, Integer> done = new HashMap<>();
          for (int c = 0; c < columns.length; c++) {
            Integer same = done.putIfAbsent(columns[c], c);
            if (same != null) {
              for (@Nullable Object[] row : rows) {
                row[c] = row[same];
              }
            } else {
              fill(
                  store.getColumnReader(columns[c]),
                  types[c],
                  positions,
                  from,
                  next,
                  start,
                  rows,
                  c);
            }
          }
          for (int k = from; k < next; k++) {
            visitor.visit(positions[k], rows[k - from]);
          }
        }
        start = end;
      }
      return true;
    }
  }

  /**
   * Reads one column of a row group: steps over the rows before each wanted one and puts the wanted
   * ones' values into {@code rows[k][c]}.
   */
  private static void fill(
      ColumnReader column,
      OutputType type,
      long[] positions,
      int from,
      int to,
      long start,
      @Nullable Object[][] rows,
      int c) {
    int present = column.getDescriptor().getMaxDefinitionLevel();
    PrimitiveTypeName physical = column.getDescriptor().getPrimitiveType().getPrimitiveTypeName();
    long row = start;
    for (int k = from; k < to; k++) {
      long target = positions[k];
      while (row < target) {
        if (column.getCurrentDefinitionLevel() == present) {
          column.skip();
        }
        column.consume();
        row++;
      }
      rows[k - from][c] =
          column.getCurrentDefinitionLevel() == present ? value(column, type, physical) : null;
      if (k + 1 < to) {
        column.consume();
        row++;
      }
    }
  }

  /** The current value of a column as {@code RowBatches.javaValue} gives it. */
  private static Object value(ColumnReader column, OutputType type, PrimitiveTypeName physical) {
    switch (type.kind()) {
      case BOOLEAN:
        return column.getBoolean();
      case SMALLINT:
        return (short) column.getInteger();
      case INT:
        return column.getInteger();
      case BIGINT:
        return column.getLong();
      case FLOAT:
        return column.getFloat();
      case DOUBLE:
        return column.getDouble();
      case DECIMAL:
        if (physical == PrimitiveTypeName.INT32) {
          return BigDecimal.valueOf(column.getInteger(), type.scale());
        } else if (physical == PrimitiveTypeName.INT64) {
          return BigDecimal.valueOf(column.getLong(), type.scale());
        }
        return new BigDecimal(new BigInteger(column.getBinary().getBytes()), type.scale());
      case DATE:
        return LocalDate.ofEpochDay(column.getInteger());
      case TIMESTAMP_NTZ:
        return RowBatches.timestampNtz(column.getLong());
      case TIMESTAMP:
        return RowBatches.timestamp(column.getLong());
      case STRING:
        return column.getBinary().toStringUsingUTF8();
      case BINARY:
        return column.getBinary().getBytes().clone();
      default:
        throw new IllegalStateException("Unhandled output type " + type);
    }
  }

  /** Whether a file's column has the Parquet type {@link ParquetDataFiles} writes for the field. */
  private static boolean sameType(Type actual, StructField field) {
    if (!actual.isPrimitive() || actual.isRepetition(Type.Repetition.REPEATED)) {
      return false;
    }
    PrimitiveType expected;
    try {
      expected = ParquetDataFiles.parquetType(field).asPrimitiveType();
    } catch (IllegalArgumentException e) {
      return false;
    }
    PrimitiveType found = actual.asPrimitiveType();
    return found.getPrimitiveTypeName() == expected.getPrimitiveTypeName()
        && found.getTypeLength() == expected.getTypeLength()
        && Objects.equals(found.getLogicalTypeAnnotation(), expected.getLogicalTypeAnnotation());
  }

  /**
   * The file to read: a {@code file:} path through {@code java.nio} when Hadoop's own local file
   * system serves the scheme (as {@link ParquetDataFiles} writes them), any other through Hadoop.
   */
  private static InputFile inputFile(Configuration conf, String file) throws IOException {
    org.apache.hadoop.fs.Path path = new org.apache.hadoop.fs.Path(file);
    URI uri = path.toUri();
    if ("file".equalsIgnoreCase(uri.getScheme()) && LocalFileLogStore.isHadoopLocal(conf)) {
      return new LocalInputFile(java.nio.file.Path.of(URI.create("file://" + uri.getRawPath())));
    }
    return HadoopInputFile.fromPath(path, conf);
  }

  /** Column readers need converters; values are read through the readers, never converted. */
  private static final GroupConverter NO_VALUES =
      new GroupConverter() {
        private final PrimitiveConverter none = new PrimitiveConverter() {};

        @Override
        public Converter getConverter(int fieldIndex) {
          return none;
        }

        @Override
        public void start() {}

        @Override
        public void end() {}
      };
}
