package org.lakecdc.transforms.delta;

import io.delta.kernel.data.ColumnVector;
import io.delta.kernel.data.ColumnarBatch;
import io.delta.kernel.data.FilteredColumnarBatch;
import io.delta.kernel.data.Row;
import io.delta.kernel.types.DataType;
import io.delta.kernel.types.StructField;
import io.delta.kernel.types.StructType;
import io.delta.kernel.utils.CloseableIterator;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.Optional;
import org.apache.beam.sdk.schemas.Schema;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.io.mssqlcdc.schema.OutputType;
import org.lakecdc.io.mssqlcdc.schema.TypeCompatibility;

/**
 * Beam {@link org.apache.beam.sdk.values.Row}s as Kernel columnar batches in a table's schema, the
 * input of {@code Transaction.transformLogicalData}. Fields are matched to columns by name,
 * ignoring case; a table column the rows lack is NULL. Values are stored as Kernel reads them: DATE
 * as days since 1970-01-01, TIMESTAMP and TIMESTAMP_NTZ as microseconds since 1970-01-01T00:00 UTC
 * (sub-microsecond digits are dropped toward the earlier microsecond), DECIMAL at the column's
 * scale. A field whose type the column holds unchanged ({@link TypeCompatibility#fits}, e.g. INT
 * rows into a BIGINT column widened before) is converted to the column's type.
 */
final class RowBatches {
  /** Rows per Kernel batch: bounds the memory held while Parquet pages fill. */
  static final int BATCH_ROWS = 4096;

  private final String path;
  private final StructType tableSchema;

  /** For each table column, the index of the Beam field that feeds it, or -1. */
  private final int[] fieldIndex;

  private final OutputType[] columnTypes;

  /** For each table column, the output type of the Beam field that feeds it, or null. */
  private final OutputType[] fieldTypes;

  private RowBatches(
      String path,
      StructType tableSchema,
      int[] fieldIndex,
      OutputType[] columnTypes,
      OutputType[] fieldTypes) {
    this.path = path;
    this.tableSchema = tableSchema;
    this.fieldIndex = fieldIndex;
    this.columnTypes = columnTypes;
    this.fieldTypes = fieldTypes;
  }

  /**
   * Matches a Beam schema to a table schema.
   *
   * @throws IncompatibleTableException when a field has no column, a field's output type is one its
   *     column does not hold unchanged, or a NOT NULL column has no field
   */
  static RowBatches plan(String path, StructType tableSchema, Schema rowSchema) {
    int[] fieldIndex = new int[tableSchema.length()];
    Arrays.fill(fieldIndex, -1);
    OutputType[] columnTypes = new OutputType[tableSchema.length()];
    OutputType[] fieldTypes = new OutputType[tableSchema.length()];
    for (int c = 0; c < tableSchema.length(); c++) {
      StructField column = tableSchema.at(c);
      OutputType type = DeltaTypes.fromKernel(column.getDataType());
      if (type == null) {
        throw new IncompatibleTableException(
            "Delta table "
                + path
                + " has column '"
                + column.getName()
                + "' of type "
                + column.getDataType()
                + ", which this project does not write");
      }
      columnTypes[c] = type;
    }
    for (int f = 0; f < rowSchema.getFieldCount(); f++) {
      Schema.Field field = rowSchema.getField(f);
      int c = DeltaTypes.indexOfIgnoreCase(tableSchema, field.getName());
      if (c < 0) {
        throw new IncompatibleTableException(
            "Delta table "
                + path
                + " has no column '"
                + field.getName()
                + "' for the rows' field of that name; add it first (DeltaTables.addColumns)");
      }
      if (fieldIndex[c] >= 0) {
        throw new IllegalArgumentException(
            "Fields '"
                + rowSchema.getField(fieldIndex[c]).getName()
                + "' and '"
                + field.getName()
                + "' both match column '"
                + tableSchema.at(c).getName()
                + "' (Delta compares names ignoring case)");
      }
      OutputType fieldType;
      try {
        fieldType = OutputType.fromBeamFieldType(field.getType());
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("Field '" + field.getName() + "': " + e.getMessage(), e);
      }
      if (!fieldType.equals(columnTypes[c]) && !TypeCompatibility.fits(fieldType, columnTypes[c])) {
        throw new IncompatibleTableException(
            "Delta table "
                + path
                + " column '"
                + tableSchema.at(c).getName()
                + "' is "
                + columnTypes[c]
                + ", but the rows' field '"
                + field.getName()
                + "' is "
                + fieldType
                + ", which it does not hold unchanged; widen the column first"
                + " (DeltaTables.evolveSchema) or write a new table");
      }
      fieldIndex[c] = f;
      fieldTypes[c] = fieldType;
    }
    for (int c = 0; c < tableSchema.length(); c++) {
      if (fieldIndex[c] < 0 && !tableSchema.at(c).isNullable()) {
        throw new IncompatibleTableException(
            "Delta table "
                + path
                + " column '"
                + tableSchema.at(c).getName()
                + "' is NOT NULL, but the rows have no field for it");
      }
    }
    return new RowBatches(path, tableSchema, fieldIndex, columnTypes, fieldTypes);
  }

  /** Lazily cuts the rows into batches of at most {@link #BATCH_ROWS} rows. */
  CloseableIterator<FilteredColumnarBatch> batches(Iterator<org.apache.beam.sdk.values.Row> rows) {
    return new CloseableIterator<>() {
      private long rowNumber = 0;

      @Override
      public boolean hasNext() {
        return rows.hasNext();
      }

      @Override
      public FilteredColumnarBatch next() {
        if (!rows.hasNext()) {
          throw new NoSuchElementException();
        }
        List<org.apache.beam.sdk.values.Row> chunk = new ArrayList<>(BATCH_ROWS);
        while (rows.hasNext() && chunk.size() < BATCH_ROWS) {
          chunk.add(rows.next());
        }
        ColumnarBatch batch = toBatch(chunk, rowNumber);
        rowNumber += chunk.size();
        return new FilteredColumnarBatch(batch, Optional.empty());
      }

      @Override
      public void close() {}
    };
  }

  /**
   * One batch of the rows of {@code chunk} (at most {@link #BATCH_ROWS} rows, by convention), the
   * first being row {@code firstRow} of the write (named in errors).
   *
   * @throws IllegalArgumentException when a value does not fit its column
   */
  FilteredColumnarBatch batch(List<org.apache.beam.sdk.values.Row> chunk, long firstRow) {
    return new FilteredColumnarBatch(toBatch(chunk, firstRow), Optional.empty());
  }

  private ColumnarBatch toBatch(List<org.apache.beam.sdk.values.Row> chunk, long firstRow) {
    int size = chunk.size();
    List<ColumnVector> vectors = new ArrayList<>(tableSchema.length());
    for (int c = 0; c < tableSchema.length(); c++) {
      StructField column = tableSchema.at(c);
      Object[] values = new Object[size];
      int f = fieldIndex[c];
      boolean widened = f >= 0 && !fieldTypes[c].equals(columnTypes[c]);
      for (int r = 0; r < size; r++) {
        Object value = f < 0 ? null : chunk.get(r).getValue(f);
        if (value == null) {
          if (!column.isNullable()) {
            throw nullInNotNull(column.getName(), firstRow + r);
          }
        } else {
          if (widened) {
            value = widen(value, columnTypes[c]);
          }
          values[r] = toKernelValue(column.getName(), columnTypes[c], value);
        }
      }
      vectors.add(new ValueVector(column.getDataType(), values));
    }
    return new ValueBatch(tableSchema, vectors, size);
  }

  private Object toKernelValue(String column, OutputType type, Object value) {
    try {
      switch (type.kind()) {
        case BOOLEAN:
          return (Boolean) value;
        case SMALLINT:
          return (Short) value;
        case INT:
          return (Integer) value;
        case BIGINT:
          return (Long) value;
        case FLOAT:
          return (Float) value;
        case DOUBLE:
          return (Double) value;
        case DECIMAL:
          return decimal(column, type, (BigDecimal) value);
        case DATE:
          return Math.toIntExact(((LocalDate) value).toEpochDay());
        case TIMESTAMP_NTZ:
          LocalDateTime local = (LocalDateTime) value;
          return micros(local.toEpochSecond(ZoneOffset.UTC), local.getNano());
        case TIMESTAMP:
          Instant instant = (Instant) value;
          return micros(instant.getEpochSecond(), instant.getNano());
        case STRING:
          return (String) value;
        case BINARY:
          return (byte[]) value;
        default:
          throw new IllegalStateException("Unhandled output type " + type);
      }
    } catch (ClassCastException | ArithmeticException e) {
      throw cannotHold(column, type, value, e);
    }
  }

  /** The error of a value of the wrong Java type or out of its column's range. */
  IllegalArgumentException cannotHold(
      String column, OutputType type, Object value, RuntimeException cause) {
    return new IllegalArgumentException(
        "Delta table "
            + path
            + " column '"
            + column
            + "' ("
            + type
            + ") cannot hold the "
            + value.getClass().getSimpleName()
            + " value "
            + value,
        cause);
  }

  /** The error of a NULL in a NOT NULL column; {@code row} counts from 0 in the write. */
  IllegalArgumentException nullInNotNull(String column, long row) {
    return new IllegalArgumentException(
        "Delta table "
            + path
            + " column '"
            + column
            + "' is NOT NULL, but row "
            + row
            + " of this write has NULL");
  }

  /** The table's schema, whose columns the batches and records have. */
  StructType tableSchema() {
    return tableSchema;
  }

  /** The index of the rows' field feeding table column {@code c}, or -1 (always NULL). */
  int fieldIndex(int c) {
    return fieldIndex[c];
  }

  /** The output type of table column {@code c}. */
  OutputType columnType(int c) {
    return columnTypes[c];
  }

  /**
   * Whether the rows' field feeding column {@code c} has another type, widened ({@link #widen}).
   */
  boolean widened(int c) {
    return fieldIndex[c] >= 0 && !fieldTypes[c].equals(columnTypes[c]);
  }

  /**
   * A value of a type that {@code to} holds unchanged ({@link TypeCompatibility#fits}) as the Java
   * value of {@code to}: integers and floats widened, integers as decimals, a date as its midnight.
   * Decimals keep their value (the column's scale is applied later).
   */
  static Object widen(Object value, OutputType to) {
    switch (to.kind()) {
      case INT:
        return ((Number) value).intValue();
      case BIGINT:
        return ((Number) value).longValue();
      case DOUBLE:
        return ((Number) value).doubleValue();
      case DECIMAL:
        return value instanceof BigDecimal
            ? value
            : BigDecimal.valueOf(((Number) value).longValue());
      case TIMESTAMP_NTZ:
        return value instanceof LocalDate ? ((LocalDate) value).atStartOfDay() : value;
      default:
        return value;
    }
  }

  /**
   * The decimal at the column's scale.
   *
   * @throws IllegalArgumentException when that needs rounding or more digits than its precision
   */
  BigDecimal decimal(String column, OutputType type, BigDecimal value) {
    BigDecimal scaled;
    try {
      scaled = value.setScale(type.scale(), RoundingMode.UNNECESSARY);
    } catch (ArithmeticException e) {
      throw new IllegalArgumentException(
          "Delta table "
              + path
              + " column '"
              + column
              + "' ("
              + type
              + ") cannot hold "
              + value.toPlainString()
              + " without rounding",
          e);
    }
    if (scaled.precision() > type.precision()) {
      throw new IllegalArgumentException(
          "Delta table "
              + path
              + " column '"
              + column
              + "' ("
              + type
              + ") cannot hold "
              + value.toPlainString()
              + ": more than "
              + type.precision()
              + " digits");
    }
    return scaled;
  }

  /** Microseconds since 1970-01-01T00:00, sub-microsecond digits dropped toward the earlier one. */
  static long micros(long epochSecond, int nanos) {
    return Math.addExact(Math.multiplyExact(epochSecond, 1_000_000L), nanos / 1_000);
  }

  /** A column of values already in Kernel's Java form; null is NULL. */
  private static final class ValueVector implements ColumnVector {
    private final DataType type;
    private final Object[] values;

    ValueVector(DataType type, Object[] values) {
      this.type = type;
      this.values = values;
    }

    @Override
    public DataType getDataType() {
      return type;
    }

    @Override
    public int getSize() {
      return values.length;
    }

    @Override
    public void close() {}

    @Override
    public boolean isNullAt(int rowId) {
      return values[rowId] == null;
    }

    @Override
    public boolean getBoolean(int rowId) {
      return (Boolean) values[rowId];
    }

    @Override
    public short getShort(int rowId) {
      return (Short) values[rowId];
    }

    @Override
    public int getInt(int rowId) {
      return (Integer) values[rowId];
    }

    @Override
    public long getLong(int rowId) {
      return (Long) values[rowId];
    }

    @Override
    public float getFloat(int rowId) {
      return (Float) values[rowId];
    }

    @Override
    public double getDouble(int rowId) {
      return (Double) values[rowId];
    }

    @Override
    public byte[] getBinary(int rowId) {
      return (byte[]) values[rowId];
    }

    @Override
    public String getString(int rowId) {
      return (String) values[rowId];
    }

    @Override
    public BigDecimal getDecimal(int rowId) {
      return (BigDecimal) values[rowId];
    }
  }

  /** A batch of {@link ValueVector}s in the table's schema. */
  private static final class ValueBatch implements ColumnarBatch {
    private final StructType schema;
    private final List<ColumnVector> vectors;
    private final int size;

    ValueBatch(StructType schema, List<ColumnVector> vectors, int size) {
      this.schema = schema;
      this.vectors = vectors;
      this.size = size;
    }

    @Override
    public StructType getSchema() {
      return schema;
    }

    @Override
    public ColumnVector getColumnVector(int ordinal) {
      return vectors.get(ordinal);
    }

    @Override
    public int getSize() {
      return size;
    }
  }

  /**
   * The value of one column of a Kernel row as a plain Java value: Boolean, Short, Integer, Long,
   * Float, Double, BigDecimal, LocalDate, LocalDateTime (TIMESTAMP_NTZ, UTC wall time), Instant
   * (TIMESTAMP), String, byte[]; null for NULL.
   *
   * @throws IncompatibleTableException for a type without an output type
   */
  static @Nullable Object javaValue(String path, Row row, int ordinal) {
    if (row.isNullAt(ordinal)) {
      return null;
    }
    return javaValue(DeltaTypes.outputType(path, row.getSchema().at(ordinal)), row, ordinal);
  }

  /**
   * The value of one column of a Kernel row as a plain Java value, as {@link #javaValue(String,
   * Row, int)} gives it, for a column whose output type the caller already knows.
   *
   * @param type the column's output type
   * @throws IllegalStateException for an output type this method does not read
   */
  static @Nullable Object javaValue(OutputType type, Row row, int ordinal) {
    if (row.isNullAt(ordinal)) {
      return null;
    }
    switch (type.kind()) {
      case BOOLEAN:
        return row.getBoolean(ordinal);
      case SMALLINT:
        return row.getShort(ordinal);
      case INT:
        return row.getInt(ordinal);
      case BIGINT:
        return row.getLong(ordinal);
      case FLOAT:
        return row.getFloat(ordinal);
      case DOUBLE:
        return row.getDouble(ordinal);
      case DECIMAL:
        return row.getDecimal(ordinal);
      case DATE:
        return LocalDate.ofEpochDay(row.getInt(ordinal));
      case TIMESTAMP_NTZ:
        return timestampNtz(row.getLong(ordinal));
      case TIMESTAMP:
        return timestamp(row.getLong(ordinal));
      case STRING:
        return row.getString(ordinal);
      case BINARY:
        return row.getBinary(ordinal);
      default:
        throw new IllegalStateException("Unhandled output type " + type);
    }
  }

  /** A TIMESTAMP_NTZ value (microseconds since 1970-01-01T00:00, no zone) as a LocalDateTime. */
  static LocalDateTime timestampNtz(long micros) {
    return LocalDateTime.ofEpochSecond(
        Math.floorDiv(micros, 1_000_000L),
        (int) Math.floorMod(micros, 1_000_000L) * 1_000,
        ZoneOffset.UTC);
  }

  /** A TIMESTAMP value (microseconds since 1970-01-01T00:00Z) as an Instant. */
  static Instant timestamp(long micros) {
    return Instant.ofEpochSecond(
        Math.floorDiv(micros, 1_000_000L), Math.floorMod(micros, 1_000_000L) * 1_000L);
  }
}
