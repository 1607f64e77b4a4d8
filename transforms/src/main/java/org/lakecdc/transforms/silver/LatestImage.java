package org.lakecdc.transforms.silver;

import java.util.Comparator;
import java.util.Map;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.io.mssqlcdc.schema.MetadataColumns;

/**
 * Which bronze row of a key is its latest image (docs/behaviour.md §10.2 step 14, §10.3): rows
 * ranked by {@code _start_lsn} desc, {@code _command_id} desc nulls last (when bronze has the
 * column), {@code _seqval} desc nulls last, {@code _operation} desc; rank 1 wins. Operation 1 and 3
 * delete the key, 0, 2 and 4 upsert it: for an update that keeps its key the 4 of the same command
 * outranks the 3, so a 3 is latest only when the update moved the row to another key.
 *
 * <p>Rows are bronze rows as {@link org.lakecdc.transforms.delta.DeltaTables#scanAtVersion} reads
 * them: {@code _start_lsn} and {@code _seqval} are LSN texts ({@code 0x} + 20 upper-case hex
 * digits, so text order is LSN order), {@code _command_id} and {@code _operation} integers.
 */
public final class LatestImage {
  private LatestImage() {}

  /**
   * The ranking order, ascending: the latest image is the maximum.
   *
   * @param withCommandId whether bronze has {@code _command_id} (else it is not compared)
   * @return a comparator of bronze rows
   */
  public static Comparator<Map<String, Object>> order(boolean withCommandId) {
    Comparator<Map<String, Object>> order =
        Comparator.comparing(
            (Map<String, Object> row) -> (String) row.get(MetadataColumns.START_LSN),
            Comparator.nullsFirst(Comparator.naturalOrder()));
    if (withCommandId) {
      order =
          order.thenComparing(
              row -> number(row.get(MetadataColumns.COMMAND_ID)),
              Comparator.nullsFirst(Comparator.naturalOrder()));
    }
    return order
        .thenComparing(
            row -> (String) row.get(MetadataColumns.SEQVAL),
            Comparator.nullsFirst(Comparator.<String>naturalOrder()))
        .thenComparing(
            row -> number(row.get(MetadataColumns.OPERATION)),
            Comparator.nullsFirst(Comparator.<Long>naturalOrder()));
  }

  /**
   * Whether a latest image of this operation deletes its key.
   *
   * @param operation the bronze {@code _operation}: 0 snapshot, 1 delete, 2 insert, 3 update
   *     before-image, 4 update after-image
   * @return true for 1 and 3
   */
  public static boolean deletes(int operation) {
    return operation == MetadataColumns.OP_DELETE || operation == MetadataColumns.OP_UPDATE_BEFORE;
  }

  private static @Nullable Long number(@Nullable Object value) {
    return value == null ? null : ((Number) value).longValue();
  }
}
