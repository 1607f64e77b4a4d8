package org.lakecdc.io.mssqlcdc.source;

import java.util.List;
import java.util.Objects;
import org.lakecdc.io.mssqlcdc.schema.CapturedColumn;

/**
 * The columns one capture instance captures, as {@code sys.sp_cdc_get_captured_columns} reports
 * them (with {@code sys.columns.is_computed}): the input of {@link CapturedSchema#infer}.
 *
 * @param captureInstance the capture instance name, e.g. {@code dbo_orders}
 * @param columns its captured columns, in any order (sorted by ordinal when inferred)
 */
record InstanceColumns(String captureInstance, List<CapturedColumn> columns) {
  /**
   * Checks and copies the components.
   *
   * @param captureInstance the capture instance name
   * @param columns its captured columns
   * @throws NullPointerException when a component or a column is null
   */
  InstanceColumns {
    Objects.requireNonNull(captureInstance, "captureInstance");
    columns = List.copyOf(columns);
  }
}
