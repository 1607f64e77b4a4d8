package org.lakecdc.transforms.delta;

import io.delta.kernel.types.StructField;
import java.io.IOException;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.net.URI;
import java.nio.ByteBuffer;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.apache.hadoop.conf.Configuration;
import org.apache.parquet.HadoopReadOptions;
import org.apache.parquet.bytes.ByteBufferInputStream;
import org.apache.parquet.bytes.BytesUtils;
import org.apache.parquet.column.ColumnDescriptor;
import org.apache.parquet.column.Dictionary;
import org.apache.parquet.column.Encoding;
import org.apache.parquet.column.ValuesType;
import org.apache.parquet.column.page.DataPage;
import org.apache.parquet.column.page.DataPageV1;
import org.apache.parquet.column.page.DataPageV2;
import org.apache.parquet.column.page.DictionaryPage;
import org.apache.parquet.column.page.PageReadStore;
import org.apache.parquet.column.page.PageReader;
import org.apache.parquet.column.values.ValuesReader;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.metadata.BlockMetaData;
import org.apache.parquet.hadoop.metadata.FileMetaData;
import org.apache.parquet.hadoop.util.HadoopInputFile;
import org.apache.parquet.io.InputFile;
import org.apache.parquet.io.LocalInputFile;
import org.apache.parquet.io.api.Binary;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.PrimitiveType;
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName;
import org.apache.parquet.schema.Type;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.io.mssqlcdc.schema.OutputType;

/**
 * Reads some columns of the rows at some positions of one Parquet data file with parquet-java's
 * column readers, for {@link TableDeletionVectors#readLiveRowsAt}: a row group holding no wanted
 * row is not read at all, and in one that does, each column's values before and between the wanted
 * rows are stepped over a run at a time ({@link HybridRuns}: a run-length run of definition levels
 * or dictionary ids in one step, a bit-packed run by offset arithmetic; fixed-width plain values by
 * their byte count; pages after the last wanted row not decoded; a dictionary page decoded once per
 * column chunk) and only the wanted rows' values are decoded and converted. Kernel's default
 * Parquet reader, which this stands in for, assembles every row of the file into column vectors
 * first; for a wave that wants 1 % of a file's rows that assembly was most of its cost.
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
                  pages.getPageReader(columns[c]),
                  columns[c],
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
   * Reads one column chunk of a row group: steps over the rows before each wanted one a run of
   * levels and values at a time (pages before a wanted row's page are not decoded at all) and puts
   * the wanted ones' values into {@code rows[k][c]}.
   */
  private static void fill(
      PageReader pages,
      ColumnDescriptor descriptor,
      OutputType type,
      long[] positions,
      int from,
      int to,
      long start,
      @Nullable Object[][] rows,
      int c)
      throws IOException {
    DictionaryPage dictionaryPage = pages.readDictionaryPage();
    Dictionary dictionary =
        dictionaryPage == null
            ? null
            : dictionaryPage.getEncoding().initDictionary(descriptor, dictionaryPage);
    PageCursor page = null;
    long pageEnd = start;
    for (int k = from; k < to; k++) {
      long target = positions[k];
      while (target >= pageEnd) {
        DataPage next = pages.readPage();
        if (next == null) {
          throw new IOException(
              "Parquet column "
                  + Arrays.toString(descriptor.getPath())
                  + " ends at row "
                  + pageEnd
                  + ", before row "
                  + target);
        }
        long first = pageEnd;
        pageEnd += next.getValueCount();
        if (target < pageEnd) {
          page = new PageCursor(next, first, descriptor, dictionary);
        }
      }
      rows[k - from][c] = page.at(target, type);
    }
  }

  /**
   * One data page of a flat column being read forwards: its definition levels (none for a required
   * column) and its values, dictionary ids or values of another encoding (parquet-java's reader of
   * that encoding, whose {@code skip(n)} steps over fixed-width values at once).
   */
  private static final class PageCursor {
    private final int maxDefinition;
    private final @Nullable HybridRuns levels;
    private final @Nullable ValuesReader otherLevels;
    private final @Nullable HybridRuns ids;
    private final @Nullable Dictionary dictionary;
    private final @Nullable ValuesReader values;
    private final PrimitiveTypeName physical;
    private long row;

    PageCursor(
        DataPage page, long first, ColumnDescriptor descriptor, @Nullable Dictionary dictionary)
        throws IOException {
      this.row = first;
      this.maxDefinition = descriptor.getMaxDefinitionLevel();
      this.physical = descriptor.getPrimitiveType().getPrimitiveTypeName();
      this.dictionary = dictionary;
      int count = page.getValueCount();
      int levelWidth = BytesUtils.getWidthFromMaxInt(maxDefinition);
      ByteBufferInputStream in;
      Encoding encoding;
      HybridRuns runs = null;
      ValuesReader other = null;
      if (page instanceof DataPageV1 v1) {
        // Flat columns only (repetition level 0): no repetition levels are stored.
        in = v1.getBytes().toInputStream();
        if (maxDefinition > 0) {
          if (v1.getDlEncoding() == Encoding.RLE) {
            int length = BytesUtils.readIntLittleEndian(in);
            runs = new HybridRuns(in.slice(length), levelWidth);
          } else {
            other = v1.getDlEncoding().getValuesReader(descriptor, ValuesType.DEFINITION_LEVEL);
            other.initFromPage(count, in);
          }
        }
        encoding = v1.getValueEncoding();
      } else {
        DataPageV2 v2 = (DataPageV2) page;
        if (maxDefinition > 0) {
          ByteBufferInputStream levelBytes = v2.getDefinitionLevels().toInputStream();
          runs = new HybridRuns(levelBytes.slice(levelBytes.available()), levelWidth);
        }
        in = v2.getData().toInputStream();
        encoding = v2.getDataEncoding();
      }
      this.levels = runs;
      this.otherLevels = other;
      if (encoding.usesDictionary()) {
        if (dictionary == null) {
          throw new IOException(
              "Parquet column "
                  + Arrays.toString(descriptor.getPath())
                  + " has a dictionary-encoded page but no dictionary page");
        }
        ByteBuffer idBytes = in.slice(in.available());
        int width = idBytes.get() & 0xFF;
        this.ids = new HybridRuns(idBytes, width);
        this.values = null;
      } else {
        this.ids = null;
        this.values = encoding.getValuesReader(descriptor, ValuesType.VALUES);
        this.values.initFromPage(count, in);
      }
    }

    /** The value at row {@code target} (at or after the cursor), converted; null for NULL. */
    @Nullable Object at(long target, OutputType type) {
      int gap = (int) (target - row);
      int present;
      if (levels != null) {
        present = levels.count(gap, maxDefinition);
      } else if (otherLevels != null) {
        present = 0;
        for (int i = 0; i < gap; i++) {
          if (otherLevels.readInteger() == maxDefinition) {
            present++;
          }
        }
      } else {
        present = gap;
      }
      if (ids != null) {
        ids.skip(present);
      } else if (present > 0) {
        values.skip(present);
      }
      row = target + 1;
      int level =
          levels != null
              ? levels.next()
              : otherLevels != null ? otherLevels.readInteger() : maxDefinition;
      if (level != maxDefinition) {
        return null;
      }
      return value(ids != null ? decoded(ids.next()) : raw(), type);
    }

    private Object decoded(int id) {
      return switch (physical) {
        case BOOLEAN -> dictionary.decodeToBoolean(id);
        case INT32 -> dictionary.decodeToInt(id);
        case INT64 -> dictionary.decodeToLong(id);
        case FLOAT -> dictionary.decodeToFloat(id);
        case DOUBLE -> dictionary.decodeToDouble(id);
        default -> dictionary.decodeToBinary(id);
      };
    }

    private Object raw() {
      return switch (physical) {
        case BOOLEAN -> values.readBoolean();
        case INT32 -> values.readInteger();
        case INT64 -> values.readLong();
        case FLOAT -> values.readFloat();
        case DOUBLE -> values.readDouble();
        default -> values.readBytes();
      };
    }

    /** A value as {@code RowBatches.javaValue} gives it, from its Parquet primitive. */
    private Object value(Object raw, OutputType type) {
      switch (type.kind()) {
        case BOOLEAN:
        case INT:
        case BIGINT:
        case FLOAT:
        case DOUBLE:
          return raw;
        case SMALLINT:
          return (short) (int) (Integer) raw;
        case DECIMAL:
          if (physical == PrimitiveTypeName.INT32) {
            return BigDecimal.valueOf((Integer) raw, type.scale());
          } else if (physical == PrimitiveTypeName.INT64) {
            return BigDecimal.valueOf((Long) raw, type.scale());
          }
          return new BigDecimal(new BigInteger(((Binary) raw).getBytes()), type.scale());
        case DATE:
          return LocalDate.ofEpochDay((Integer) raw);
        case TIMESTAMP_NTZ:
          return RowBatches.timestampNtz((Long) raw);
        case TIMESTAMP:
          return RowBatches.timestamp((Long) raw);
        case STRING:
          return ((Binary) raw).toStringUsingUTF8();
        case BINARY:
          return ((Binary) raw).getBytes().clone();
        default:
          throw new IllegalStateException("Unhandled output type " + type);
      }
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
}
