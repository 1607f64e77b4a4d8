package org.lakecdc.io.mssqlcdc.source;

import java.io.Serializable;
import java.util.Comparator;
import org.apache.beam.sdk.values.Row;
import org.lakecdc.io.mssqlcdc.schema.MetadataColumns;

/**
 * The order of a table's changes (docs/tables.md "Bronze"): {@code (_start_lsn, _command_id,
 * _seqval, _operation)}, NULLs first (snapshot rows have NULL {@code _seqval} and {@code
 * _command_id}); without a {@code _command_id} column {@code (_start_lsn, _seqval, _operation)}.
 * {@code _command_id} is numbered per capture instance, but all rows of one commit come from one
 * instance, so the key orders rows across a capture-instance switch too. LSN texts are fixed-width
 * upper-case hex, so comparing them as strings is comparing LSNs.
 */
public final class ChangeOrdering implements Comparator<Row>, Serializable {
  private static final long serialVersionUID = 1L;

  private static final Comparator<String> TEXT = Comparator.nullsFirst(Comparator.naturalOrder());
  private static final Comparator<Integer> NUMBER =
      Comparator.nullsFirst(Comparator.naturalOrder());

  @Override
  public int compare(Row a, Row b) {
    int c =
        TEXT.compare(
            a.getString(MetadataColumns.START_LSN), b.getString(MetadataColumns.START_LSN));
    if (c != 0) {
      return c;
    }
    if (a.getSchema().hasField(MetadataColumns.COMMAND_ID)
        && b.getSchema().hasField(MetadataColumns.COMMAND_ID)) {
      c =
          NUMBER.compare(
              a.getInt32(MetadataColumns.COMMAND_ID), b.getInt32(MetadataColumns.COMMAND_ID));
      if (c != 0) {
        return c;
      }
    }
    c = TEXT.compare(a.getString(MetadataColumns.SEQVAL), b.getString(MetadataColumns.SEQVAL));
    if (c != 0) {
      return c;
    }
    return NUMBER.compare(
        a.getInt32(MetadataColumns.OPERATION), b.getInt32(MetadataColumns.OPERATION));
  }
}
