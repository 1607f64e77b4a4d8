package org.lakecdc.io.mssqlcdc.schema;

import java.util.Objects;

/**
 * A column a capture instance captures, as {@code sys.sp_cdc_get_captured_columns} reports it, plus
 * whether the source column is computed ({@code sys.columns.is_computed}; CDC stores NULL for
 * computed columns in every change row).
 *
 * @param name the column name as SQL Server spells it
 * @param ordinal {@code column_ordinal}, 1-based position in the change table
 * @param type the SQL Server type (base type for alias types such as {@code sysname})
 * @param computed true for a computed column
 */
public record CapturedColumn(String name, int ordinal, SqlServerType type, boolean computed) {
  public CapturedColumn {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(type, "type");
  }
}
