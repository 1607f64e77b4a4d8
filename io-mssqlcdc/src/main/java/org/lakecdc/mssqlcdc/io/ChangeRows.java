package org.lakecdc.mssqlcdc.io;

import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import org.apache.beam.sdk.schemas.Schema;
import org.apache.beam.sdk.values.Row;
import org.lakecdc.mssqlcdc.client.ChangeRow;
import org.lakecdc.mssqlcdc.schema.ColumnSpec;
import org.lakecdc.mssqlcdc.schema.ValueConverter;

/**
 * Turns a {@link ChangeRow} into a Beam {@link Row} of the output schema: the six metadata columns
 * ({@code _command_id} only when read), then the captured columns cast to their declared types
 * (BEHAVIOUR.md invariant 7). {@code _commit_ts} is the UTC commit time as a zone-less date-time.
 */
final class ChangeRows {
  private ChangeRows() {}

  static Row toRow(
      Schema schema,
      List<ColumnSpec> columns,
      String captureInstance,
      ChangeRow change,
      boolean includeCommandId) {
    List<Object> values = new ArrayList<>(schema.getFieldCount());
    values.add(captureInstance);
    values.add(change.startLsn().toString());
    values.add(change.seqval().toString());
    values.add(change.operation());
    if (includeCommandId) {
      values.add(change.commandId());
    }
    values.add(LocalDateTime.ofInstant(change.commitTime(), ZoneOffset.UTC));
    for (int i = 0; i < columns.size(); i++) {
      ColumnSpec column = columns.get(i);
      values.add(ValueConverter.toBeamValue(change.values().get(i), column.type(), column.name()));
    }
    return Row.withSchema(schema).addValues(values).build();
  }
}
