package org.lakecdc.transforms.delta;

import io.delta.kernel.types.DecimalType;
import io.delta.kernel.types.StructField;
import io.delta.kernel.types.StructType;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.List;
import org.apache.beam.sdk.values.Row;
import org.apache.parquet.io.api.Binary;
import org.apache.parquet.io.api.RecordConsumer;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.io.mssqlcdc.schema.OutputType;

/**
 * Beam rows written straight into Parquet records of a table's columns, without the Kernel batch
 * {@link RowBatches} builds: one value writer per column, chosen once from the column's type, takes
 * the row's Java value and adds it to the record in the form Kernel's batches would have held it
 * (DATE as days since 1970-01-01, TIMESTAMP and TIMESTAMP_NTZ as microseconds since
 * 1970-01-01T00:00 UTC, DECIMAL's unscaled value at the column's scale, STRING as its UTF-8 bytes).
 * The files are the same, value for value, as those written from {@link RowBatches}' batches; the
 * errors are the same messages.
 *
 * <p>A record is a row of the plan's row schema, or a row whose fields are the first of that schema
 * followed by {@link #trailing} values (the bronze columns a sink adds to a change row, without
 * copying the row). Not thread-safe: one per write.
 */
final class RowRecords implements ParquetDataFiles.RecordFields {
  /** Adds one non-null value of a column to the record. */
  private interface ValueWriter {
    void add(RecordConsumer consumer, Object value);
  }

  private final RowBatches plan;
  private final String[] names;
  private final boolean[] nullable;
  private final int[] fieldIndex;
  private final boolean[] widened;
  private final OutputType[] types;
  private final ValueWriter[] writers;

  private List<@Nullable Object> trailing = List.of();
  private int trailingFrom = Integer.MAX_VALUE;
  private long rowNumber;

  /** The records of {@code plan}'s rows, in its table's columns. */
  RowRecords(RowBatches plan) {
    this.plan = plan;
    StructType schema = plan.tableSchema();
    int n = schema.length();
    names = new String[n];
    nullable = new boolean[n];
    fieldIndex = new int[n];
    widened = new boolean[n];
    types = new OutputType[n];
    writers = new ValueWriter[n];
    for (int c = 0; c < n; c++) {
      StructField column = schema.at(c);
      names[c] = column.getName();
      nullable[c] = column.isNullable();
      fieldIndex[c] = plan.fieldIndex(c);
      widened[c] = plan.widened(c);
      types[c] = plan.columnType(c);
      writers[c] = writer(column, types[c]);
    }
  }

  /**
   * The record written next: row {@code number} of the write (counted from 0, named in errors),
   * whose fields from {@code from} on are {@code values} instead of the row's own.
   *
   * @param number the row's number in the write
   * @param from the first field taken from {@code values}; the row's field count when none is
   * @param values the values of the fields from {@code from} on
   */
  void next(long number, int from, List<@Nullable Object> values) {
    rowNumber = number;
    trailingFrom = from;
    trailing = values;
  }

  @Override
  public void write(RecordConsumer consumer, Object record) {
    Row row = (Row) record;
    for (int c = 0; c < names.length; c++) {
      int f = fieldIndex[c];
      Object value =
          f < 0 ? null : f < trailingFrom ? row.getValue(f) : trailing.get(f - trailingFrom);
      if (value == null) {
        if (!nullable[c]) {
          throw plan.nullInNotNull(names[c], rowNumber);
        }
        continue;
      }
      if (widened[c]) {
        value = RowBatches.widen(value, types[c]);
      }
      consumer.startField(names[c], c);
      try {
        writers[c].add(consumer, value);
      } catch (ClassCastException | ArithmeticException e) {
        throw plan.cannotHold(names[c], types[c], value, e);
      }
      consumer.endField(names[c], c);
    }
  }

  /** The value writer of a column, by its output type (the Kernel type it maps to). */
  private ValueWriter writer(StructField column, OutputType type) {
    String name = column.getName();
    switch (type.kind()) {
      case BOOLEAN:
        return (consumer, value) -> consumer.addBoolean((Boolean) value);
      case SMALLINT:
        return (consumer, value) -> consumer.addInteger((Short) value);
      case INT:
        return (consumer, value) -> consumer.addInteger((Integer) value);
      case BIGINT:
        return (consumer, value) -> consumer.addLong((Long) value);
      case FLOAT:
        return (consumer, value) -> consumer.addFloat((Float) value);
      case DOUBLE:
        return (consumer, value) -> consumer.addDouble((Double) value);
      case DECIMAL:
        DecimalType decimal = (DecimalType) column.getDataType();
        return (consumer, value) ->
            ParquetDataFiles.writeDecimal(
                consumer, name, decimal, plan.decimal(name, type, (BigDecimal) value));
      case DATE:
        return (consumer, value) ->
            consumer.addInteger(Math.toIntExact(((LocalDate) value).toEpochDay()));
      case TIMESTAMP_NTZ:
        return new LocalTimestampWriter();
      case TIMESTAMP:
        return (consumer, value) -> {
          Instant instant = (Instant) value;
          consumer.addLong(RowBatches.micros(instant.getEpochSecond(), instant.getNano()));
        };
      case STRING:
        return new StringWriter();
      case BINARY:
        return (consumer, value) ->
            consumer.addBinary(Binary.fromConstantByteArray((byte[]) value));
      default:
        throw new IllegalStateException("Unhandled output type " + type);
    }
  }

  /**
   * A STRING column's writer: a string's UTF-8 bytes are encoded once for a run of rows that hold
   * the same {@link String} instance (the capture instance of every change row, the start LSN's
   * text that the rows of one commit share), and again for any other instance, equal or not. The
   * binary is immutable, so Parquet may keep it (dictionary, statistics) while it is reused.
   */
  private static final class StringWriter implements ValueWriter {
    private @Nullable String last;
    private @Nullable Binary lastBytes;

    @Override
    public void add(RecordConsumer consumer, Object value) {
      String text = (String) value;
      Binary bytes = lastBytes;
      if (text != last || bytes == null) {
        bytes = utf8(text);
        last = text;
        lastBytes = bytes;
      }
      consumer.addBinary(bytes);
    }
  }

  /**
   * A TIMESTAMP_NTZ column's writer: the microseconds are computed once for a run of rows holding
   * equal date-times (the commit time that the rows of one commit share).
   */
  private static final class LocalTimestampWriter implements ValueWriter {
    private @Nullable LocalDateTime last;
    private long lastMicros;

    @Override
    public void add(RecordConsumer consumer, Object value) {
      LocalDateTime local = (LocalDateTime) value;
      if (!local.equals(last)) {
        lastMicros = RowBatches.micros(local.toEpochSecond(ZoneOffset.UTC), local.getNano());
        last = local;
      }
      consumer.addLong(lastMicros);
    }
  }

  /**
   * A string's UTF-8 bytes as a Parquet binary backed by a byte array: the bytes {@code
   * Binary.fromString} holds, without its byte-buffer wrapper, whose comparisons (min and max
   * statistics, dictionary lookups) go byte by byte through the buffer.
   */
  static Binary utf8(String value) {
    return Binary.fromConstantByteArray(value.getBytes(StandardCharsets.UTF_8));
  }
}
