package org.lakecdc.io.mssqlcdc.schema;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigDecimal;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.beam.sdk.coders.RowCoder;
import org.apache.beam.sdk.schemas.Schema;
import org.apache.beam.sdk.schemas.Schema.FieldType;
import org.apache.beam.sdk.schemas.logicaltypes.SqlTypes;
import org.apache.beam.sdk.util.CoderUtils;
import org.apache.beam.sdk.values.Row;
import org.junit.jupiter.api.Test;

/** Tests of {@link ChangeSchema}: docs/tables.md "Bronze", scenarios C204, C219, C231, C232. */
class ChangeSchemaTest {
  private static final List<ColumnSpec> ORDERS =
      List.of(
          new ColumnSpec("order_id", OutputType.INT),
          new ColumnSpec("status", OutputType.STRING),
          new ColumnSpec("amount", OutputType.decimal(18, 2)),
          new ColumnSpec("updated_at", OutputType.TIMESTAMP_NTZ));

  @Test
  void theSchemaHasTheMetadataColumnsThenTheCapturedOnes() {
    Schema schema = ChangeSchema.of(ORDERS, true);
    assertEquals(
        List.of(
            "_capture_instance",
            "_start_lsn",
            "_seqval",
            "_operation",
            "_command_id",
            "_commit_ts",
            "order_id",
            "status",
            "amount",
            "updated_at"),
        schema.getFieldNames());
    assertEquals(FieldType.STRING, schema.getField("_capture_instance").getType());
    assertEquals(FieldType.STRING, schema.getField("_start_lsn").getType());
    assertEquals(FieldType.STRING.withNullable(true), schema.getField("_seqval").getType());
    assertEquals(FieldType.INT32, schema.getField("_operation").getType());
    assertEquals(FieldType.INT32.withNullable(true), schema.getField("_command_id").getType());
    assertEquals(FieldType.logicalType(SqlTypes.DATETIME), schema.getField("_commit_ts").getType());
    for (ColumnSpec column : ORDERS) {
      assertEquals(column.type().toBeamFieldType(), schema.getField(column.name()).getType());
      assertTrue(schema.getField(column.name()).getType().getNullable());
    }
    assertTrue(ChangeSchema.hasCommandId(schema));
    assertEquals(6, ChangeSchema.capturedOffset(schema));
    assertEquals(ORDERS, ChangeSchema.capturedColumns(schema));
  }

  /** C231, C232: includeCommandId=false removes the column. */
  @Test
  void theSchemaLeavesCommandIdOutWhenItIsNotRead() {
    Schema schema = ChangeSchema.of(ORDERS, false);
    assertEquals(
        List.of(
            "_capture_instance",
            "_start_lsn",
            "_seqval",
            "_operation",
            "_commit_ts",
            "order_id",
            "status",
            "amount",
            "updated_at"),
        schema.getFieldNames());
    assertFalse(schema.hasField("_command_id"));
    assertFalse(ChangeSchema.hasCommandId(schema));
    assertEquals(5, ChangeSchema.capturedOffset(schema));
    assertEquals(5, ChangeSchema.metadataFieldCount(false));
    assertEquals(6, ChangeSchema.metadataFieldCount(true));
    assertEquals(ORDERS, ChangeSchema.capturedColumns(schema));
    assertEquals(ChangeSchema.metadataFields(false), schema.getFields().subList(0, 5));
  }

  @Test
  void reservedAndDuplicateNamesAreRefused() {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () ->
                ChangeSchema.of(
                    List.of(
                        new ColumnSpec("id", OutputType.INT),
                        new ColumnSpec("_Commit_TS", OutputType.TIMESTAMP)),
                    true));
    assertEquals(
        "Source column(s) _Commit_TS take the name of a metadata column (reserved, ignoring case:"
            + " _capture_instance, _start_lsn, _seqval, _operation, _command_id, _commit_ts,"
            + " _batch_id, _snapshot, _chunk); declare the columns to read with 'columns'"
            + " (withColumns / --columns) and leave them out",
        e.getMessage());
    assertEquals(
        "Column 'ID' appears twice in the captured columns (names are compared ignoring case)",
        assertThrows(
                IllegalArgumentException.class,
                () ->
                    ChangeSchema.of(
                        List.of(
                            new ColumnSpec("id", OutputType.INT),
                            new ColumnSpec("ID", OutputType.BIGINT)),
                        true))
            .getMessage());
    assertEquals(
        "A change schema needs at least one captured column",
        assertThrows(IllegalArgumentException.class, () -> ChangeSchema.of(List.of(), true))
            .getMessage());
  }

  @Test
  void capturedColumnsRefusesOtherSchemas() {
    Schema other = Schema.builder().addStringField("x").build();
    assertThrows(IllegalArgumentException.class, () -> ChangeSchema.capturedColumns(other));
  }

  /**
   * C204-like row through Beam: the converted values build a Row of the change schema and survive a
   * RowCoder round trip (Beam's logical types accept them, FixedPrecisionNumeric included).
   */
  @Test
  void convertedValuesRoundTripThroughRowCoder() throws Exception {
    List<ColumnSpec> columns =
        List.of(
            new ColumnSpec("order_id", OutputType.INT),
            new ColumnSpec("status", OutputType.STRING),
            new ColumnSpec("amount", OutputType.decimal(18, 2)),
            new ColumnSpec("updated_at", OutputType.TIMESTAMP_NTZ),
            new ColumnSpec("qty", OutputType.SMALLINT),
            new ColumnSpec("big", OutputType.decimal(38, 10)),
            new ColumnSpec("day", OutputType.DATE),
            new ColumnSpec("at", OutputType.TIMESTAMP),
            new ColumnSpec("raw", OutputType.BINARY),
            new ColumnSpec("flag", OutputType.BOOLEAN),
            new ColumnSpec("ratio", OutputType.FLOAT),
            new ColumnSpec("score", OutputType.DOUBLE),
            new ColumnSpec("total", OutputType.BIGINT));
    Schema schema = ChangeSchema.of(columns, true);
    List<Object> client =
        Arrays.asList(
            1,
            "paid",
            new BigDecimal("12.25"),
            LocalDateTime.parse("2026-09-28T13:50:01.123456700"),
            (short) 200,
            new BigDecimal("1.0000000001"),
            LocalDate.parse("2026-09-28"),
            Instant.parse("2026-09-28T16:50:01.123456789Z"),
            new byte[] {0, (byte) 0xFF, 0x10},
            true,
            1.5f,
            2.25d,
            9000000000L);
    List<Object> values = ValueConverter.toBeamValues(client, columns);
    List<Object> all = new ArrayList<>();
    all.add("dbo_orders");
    all.add("0x0000002A000001000001");
    all.add("0x0000002A000001000003");
    all.add(4);
    all.add(2);
    all.add(LocalDateTime.parse("2026-09-28T13:50:00"));
    all.addAll(values);
    Row row = Row.withSchema(schema).addValues(all).build();

    RowCoder coder = RowCoder.of(schema);
    Row decoded = CoderUtils.decodeFromByteArray(coder, CoderUtils.encodeToByteArray(coder, row));
    assertEquals(new BigDecimal("12.25"), decoded.getDecimal("amount"));
    assertEquals(new BigDecimal("1.0000000001"), decoded.getDecimal("big"));
    assertEquals(
        LocalDateTime.parse("2026-09-28T13:50:01.123456"),
        decoded.getLogicalTypeValue("updated_at", LocalDateTime.class));
    assertEquals(
        Instant.parse("2026-09-28T16:50:01.123456Z"),
        decoded.getLogicalTypeValue("at", Instant.class));
    assertEquals(
        LocalDate.parse("2026-09-28"), decoded.getLogicalTypeValue("day", LocalDate.class));
    assertEquals(Short.valueOf((short) 200), decoded.getInt16("qty"));
    assertArrayEquals(new byte[] {0, (byte) 0xFF, 0x10}, decoded.getBytes("raw"));
    assertEquals(9000000000L, decoded.getInt64("total"));
    assertEquals(row, decoded);

    Row withNulls =
        Row.withSchema(schema)
            .addValues("dbo_orders", "0x0000002A000001000001", null, 0, null)
            .addValue(LocalDateTime.parse("2026-09-28T13:50:00"))
            .addValues(new Object[columns.size()])
            .build();
    assertEquals(
        withNulls,
        CoderUtils.decodeFromByteArray(coder, CoderUtils.encodeToByteArray(coder, withNulls)));
  }
}
