package org.lakecdc.io.mssqlcdc.fake;

import java.util.Objects;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.lakecdc.io.mssqlcdc.schema.SqlServerType;

/**
 * A column of a source table the fake creates ({@link FakeSqlServer#createTable}): its name as SQL
 * Server spells it, its SQL Server type, whether it is computed, and the collation of a character
 * column. The fake cannot evaluate a computed column's expression: such a column reads NULL in the
 * source table, and CDC stores NULL for it in every change row, as SQL Server does.
 *
 * <p>A character column ({@code char}, {@code varchar}, {@code nchar}, {@code nvarchar}, {@code
 * text}, {@code ntext}, {@code sysname}) compares its values under its collation (key order, key
 * uniqueness, key ranges; docs/fake-format.md "Collations"): {@code SQL_Latin1_General_CP1_CI_AS}
 * (SQL Server's default install collation: case-insensitive, accent-sensitive) unless declared with
 * {@link #collate} or a {@code COLLATE} clause in the type text.
 *
 * @param name the column name; matched ignoring case, like SQL Server's default collation
 * @param type the SQL Server type, e.g. {@code decimal(18,2)}
 * @param computed true for a computed column
 * @param collation the declared collation name, e.g. {@code Latin1_General_BIN2}; null for the
 *     default (character types) or none (other types)
 */
public record ColumnDefinition(
    String name, SqlServerType type, boolean computed, String collation) {
  private static final Pattern COLLATE =
      Pattern.compile("(.*?)\\s+COLLATE\\s+(\\S+)\\s*", Pattern.CASE_INSENSITIVE | Pattern.DOTALL);

  /**
   * Checks that name and type are present and that a declared collation fits the type; the type is
   * checked when the table is created.
   *
   * @param name the column name
   * @param type the SQL Server type
   * @param computed true for a computed column
   * @param collation the declared collation name, or null
   * @throws IllegalArgumentException for a collation on a type without one ({@code int}, ...) or a
   *     collation name without {@code _CI}/{@code _CS} and {@code _AI}/{@code _AS} nor {@code
   *     _BIN}/{@code _BIN2}
   */
  public ColumnDefinition {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(type, "type");
    Collation.of(name, type, collation);
  }

  /**
   * A column with the default collation (for a character type).
   *
   * @param name the column name
   * @param type the SQL Server type
   * @param computed true for a computed column
   */
  public ColumnDefinition(String name, SqlServerType type, boolean computed) {
    this(name, type, computed, null);
  }

  /**
   * A regular column.
   *
   * @param name the column name
   * @param type the type text, e.g. {@code "varchar(20)"}, {@code "decimal(18,2)"}, optionally with
   *     a collation: {@code "varchar(20) COLLATE Latin1_General_BIN2"}
   * @return the column
   * @throws IllegalArgumentException when the type text does not parse, or the collation does not
   *     fit (see the constructor)
   */
  public static ColumnDefinition of(String name, String type) {
    Matcher m = COLLATE.matcher(type);
    if (m.matches()) {
      return new ColumnDefinition(name, SqlServerType.parse(m.group(1)), false, m.group(2));
    }
    return new ColumnDefinition(name, SqlServerType.parse(type), false, null);
  }

  /**
   * A regular column of a parsed type.
   *
   * @param name the column name
   * @param type the SQL Server type
   * @return the column
   */
  public static ColumnDefinition of(String name, SqlServerType type) {
    return new ColumnDefinition(name, type, false, null);
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
    return new ColumnDefinition(name, SqlServerType.parse(type), true, null);
  }

  /**
   * This column with a declared collation ({@code COLLATE <name>}).
   *
   * @param collationName a SQL Server collation name, e.g. {@code SQL_Latin1_General_CP1_CS_AS},
   *     {@code Latin1_General_100_CI_AI}, {@code Latin1_General_BIN2}
   * @return the column with that collation
   * @throws IllegalArgumentException when this column's type has no collation, or the name has
   *     neither {@code _CI}/{@code _CS} and {@code _AI}/{@code _AS} nor {@code _BIN}/{@code _BIN2}
   */
  public ColumnDefinition collate(String collationName) {
    Objects.requireNonNull(collationName, "collationName");
    return new ColumnDefinition(name, type, computed, collationName);
  }
}
