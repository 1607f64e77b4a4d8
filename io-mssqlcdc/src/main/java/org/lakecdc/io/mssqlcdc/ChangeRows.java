package org.lakecdc.io.mssqlcdc;

import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import org.apache.beam.sdk.schemas.Schema;
import org.apache.beam.sdk.values.Row;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.io.mssqlcdc.client.ChangeRow;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.io.mssqlcdc.schema.ColumnSpec;
import org.lakecdc.io.mssqlcdc.schema.MetadataColumns;
import org.lakecdc.io.mssqlcdc.schema.ValueConverter;

/**
 * Builds Beam {@link Row}s of the output schema, for change rows and snapshot rows alike: the six
 * metadata columns ({@code _command_id} only when read), then the captured columns cast to their
 * declared types (docs/tables.md "Extreme values"). {@code _commit_ts} is the UTC commit time as a
 * zone-less date-time.
 */
final class ChangeRows {
  private ChangeRows() {}

  /** A change row: its LSN, seqval, operation and command id, and its captured values. */
  /**
   * The approximate size of a change row as read, in bytes ({@link BatchSource#readBytes()}): per
   * value its length in characters (text), its length (binary), 16 (decimals) or 8 (numbers, dates,
   * times, anything else); NULL counts 0. The metadata columns count 10 ({@code __$start_lsn}) + 10
   * ({@code __$seqval}) + 4 + 4 + 8.
   */
  static long approximateBytes(org.lakecdc.io.mssqlcdc.client.ChangeRow change) {
    long bytes = 36;
    for (Object value : change.values()) {
      if (value == null) {
        continue;
      }
      if (value instanceof String) {
        bytes += ((String) value).length();
      } else if (value instanceof byte[]) {
        bytes += ((byte[]) value).length;
      } else if (value instanceof java.math.BigDecimal) {
        bytes += 16;
      } else {
        bytes += 8;
      }
    }
    return bytes;
  }

  static Row toRow(
      Schema schema,
      List<ColumnSpec> columns,
      String captureInstance,
      ChangeRow change,
      boolean includeCommandId) {
    return build(
        schema,
        columns,
        captureInstance,
        change.startLsn().toString(),
        change.seqval().toString(),
        change.operation(),
        change.commandId(),
        change.commitTime(),
        change.values(),
        includeCommandId);
  }

  /**
   * A snapshot row (docs/tables.md "Bronze"): {@code _start_lsn} = the snapshot LSN S, {@code
   * _seqval} NULL, {@code _operation} 0, {@code _command_id} NULL, {@code _commit_ts} = the commit
   * time of S; {@code values} are the source table's current values of {@code columns}, in order.
   */
  static Row snapshotRow(
      Schema schema,
      List<ColumnSpec> columns,
      String captureInstance,
      Lsn snapshotLsn,
      Instant commitTime,
      List<Object> values,
      boolean includeCommandId) {
    return build(
        schema,
        columns,
        captureInstance,
        snapshotLsn.toString(),
        null,
        MetadataColumns.OP_SNAPSHOT,
        null,
        commitTime,
        values,
        includeCommandId);
  }

  private static Row build(
      Schema schema,
      List<ColumnSpec> columns,
      String captureInstance,
      String startLsn,
      @Nullable String seqval,
      int operation,
      @Nullable Integer commandId,
      Instant commitTime,
      List<Object> captured,
      boolean includeCommandId) {
    List<Object> values = new ArrayList<>(schema.getFieldCount());
    values.add(captureInstance);
    values.add(startLsn);
    values.add(seqval);
    values.add(operation);
    if (includeCommandId) {
      values.add(commandId);
    }
    values.add(LocalDateTime.ofInstant(commitTime, ZoneOffset.UTC));
    for (int i = 0; i < columns.size(); i++) {
      ColumnSpec column = columns.get(i);
      values.add(ValueConverter.toBeamValue(captured.get(i), column.type(), column.name()));
    }
    // The values already have the schema's Java types (ValueConverter's contract, tested per SQL
    // Server type), so they are attached without Row.Builder's per-value type matching, which
    // cost a quarter of the reading stage's CPU.
    return Row.withSchema(schema).attachValues(values);
  }
}
