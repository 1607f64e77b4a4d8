package org.lakecdc.io.mssqlcdc.schema;

import java.util.ArrayList;
import java.util.List;

/**
 * Refuses source columns named like a metadata or bronze column (docs/tables.md "Bronze"): {@code
 * _capture_instance}, {@code _start_lsn}, {@code _seqval}, {@code _operation}, {@code _command_id},
 * {@code _commit_ts}, {@code _batch_id}, {@code _snapshot} and {@code _chunk}, compared ignoring
 * case ({@link MetadataColumns#isReserved}). Such a column would collide with the column this
 * project adds, so the load fails instead; the fix is to leave the column out through the {@code
 * columns} option.
 *
 * <p>Messages (one line; names in the order given, as spelled by the source):
 *
 * <ul>
 *   <li>declared: {@code Source column(s) <names> take the name of a metadata column (reserved,
 *       ignoring case: <list>); leave them out of 'columns' (withColumns / --columns)}
 *   <li>captured: {@code Source column(s) <names> take the name of a metadata column (reserved,
 *       ignoring case: <list>); capture instance <ci> captures them: declare the columns to read
 *       with 'columns' (withColumns / --columns) and leave them out}
 * </ul>
 */
public final class ReservedNames {
  /** Every reserved name in output order: the six metadata columns, then the bronze columns. */
  static final List<String> IN_ORDER =
      List.of(
          MetadataColumns.CAPTURE_INSTANCE,
          MetadataColumns.START_LSN,
          MetadataColumns.SEQVAL,
          MetadataColumns.OPERATION,
          MetadataColumns.COMMAND_ID,
          MetadataColumns.COMMIT_TS,
          MetadataColumns.BATCH_ID,
          MetadataColumns.SNAPSHOT,
          MetadataColumns.CHUNK);

  private ReservedNames() {}

  /**
   * Checks the column names of the {@code columns} option.
   *
   * @param names the declared column names
   * @throws IllegalArgumentException when a name is reserved; the message ends pointing at {@code
   *     'columns'}
   */
  public static void checkDeclared(List<String> names) {
    check(names, "leave them out of 'columns' (withColumns / --columns)");
  }

  /**
   * Checks the columns a capture instance captures, before they are inferred into the schema.
   *
   * @param captureInstance the capture instance that captures {@code names}
   * @param names the captured column names
   * @throws IllegalArgumentException when a name is reserved; the message names the capture
   *     instance and points at {@code 'columns'}
   */
  public static void checkCaptured(String captureInstance, List<String> names) {
    check(
        names,
        "capture instance "
            + captureInstance
            + " captures them: declare the columns to read with 'columns'"
            + " (withColumns / --columns) and leave them out");
  }

  /** Checks output column names whose origin is unknown here (the change schema's own check). */
  static void checkOutput(List<String> names) {
    check(
        names,
        "declare the columns to read with 'columns' (withColumns / --columns) and leave them out");
  }

  private static void check(List<String> names, String fix) {
    List<String> taken = new ArrayList<>();
    for (String name : names) {
      if (MetadataColumns.isReserved(name)) {
        taken.add(name);
      }
    }
    if (!taken.isEmpty()) {
      throw new IllegalArgumentException(
          "Source column(s) "
              + String.join(", ", taken)
              + " take the name of a metadata column (reserved, ignoring case: "
              + String.join(", ", IN_ORDER)
              + "); "
              + fix);
    }
  }
}
