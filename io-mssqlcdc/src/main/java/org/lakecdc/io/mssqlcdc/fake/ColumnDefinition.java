package org.lakecdc.io.mssqlcdc.fake;

import java.util.Objects;
import org.lakecdc.io.mssqlcdc.schema.SqlServerType;

/**
 * A column of a source table the fake creates ({@link FakeSqlServer#createTable}): its name as SQL
 * Server spells it, its SQL Server type, and whether it is computed. The fake cannot evaluate a
 * computed column's expression: such a column reads NULL in the source table, and CDC stores NULL
 * for it in every change row, as SQL Server does.
 *
 * @param name the column name; matched ignoring case, like SQL Server's default collation
 * @param type the SQL Server type, e.g. {@code decimal(18,2)}
 * @param computed true for a computed column
 */
public record ColumnDefinition(String name, SqlServerType type, boolean computed) {
  /**
   * Checks that name and type are present; the type is checked when the table is created.
   *
   * @param name the column name
   * @param type the SQL Server type
   * @param computed true for a computed column
   */
  public ColumnDefinition {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(type, "type");
  }

  /**
   * A regular column.
   *
   * @param name the column name
   * @param type the type text, e.g. {@code "varchar(20)"}, {@code "decimal(18,2)"}
   * @return the column
   * @throws IllegalArgumentException when the type text does not parse
   */
  public static ColumnDefinition of(String name, String type) {
    return new ColumnDefinition(name, SqlServerType.parse(type), false);
  }

  /**
   * A regular column of a parsed type.
   *
   * @param name the column name
   * @param type the SQL Server type
   * @return the column
   */
  public static ColumnDefinition of(String name, SqlServerType type) {
    return new ColumnDefinition(name, type, false);
  }

  /**
   * A computed column (NULL in the source table and in every change row).
   *
   * @param name the column name
   * @param type the type text of the computed value, e.g. {@code "decimal(19,2)"}
   * @return the column
   * @throws IllegalArgumentException when the type text does not parse
   */
  public static ColumnDefinition computed(String name, String type) {
    return new ColumnDefinition(name, SqlServerType.parse(type), true);
  }
}
