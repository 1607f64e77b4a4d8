package org.lakecdc.io.mssqlcdc.schema;

import java.io.Serializable;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A SQL Server column type as {@code sys.sp_cdc_get_captured_columns} reports it: the base type
 * name (lower case, e.g. {@code decimal}, {@code nvarchar}, {@code datetime2}) and, where the type
 * has them, precision and scale ({@code decimal(18,2)}: 18, 2; {@code datetime2(7)}: scale 7).
 *
 * <p>Text form: {@code name}, {@code name(p)} or {@code name(p,s)}; {@code (max)} is kept as
 * precision {@code -1}. {@link #parse(String)} reads that form, case-insensitively.
 *
 * @param name the base type name, lower case
 * @param precision precision or length in the parentheses, or null when absent; -1 for {@code max}
 * @param scale scale, or null when absent
 */
public record SqlServerType(String name, Integer precision, Integer scale) implements Serializable {
  private static final Pattern FORM =
      Pattern.compile(
          "\\s*([A-Za-z][A-Za-z0-9_ ]*?)\\s*(?:\\(\\s*(max|\\d+)\\s*(?:,\\s*(\\d+)\\s*)?\\))?\\s*",
          Pattern.CASE_INSENSITIVE);

  /**
   * Base types a key bound can be cast to from text ({@code CAST(? AS <type>)}, {@code
   * CONVERT(<type>, ?, 1)} for binary; docs/behaviour.md §6.3): a key-range read over a column of
   * another type is not possible.
   */
  private static final Set<String> BOUND_CASTABLE =
      Set.of(
          "bit",
          "tinyint",
          "smallint",
          "int",
          "bigint",
          "decimal",
          "numeric",
          "money",
          "smallmoney",
          "real",
          "float",
          "date",
          "datetime",
          "datetime2",
          "smalldatetime",
          "datetimeoffset",
          "time",
          "char",
          "varchar",
          "nchar",
          "nvarchar",
          "binary",
          "varbinary",
          "uniqueidentifier");

  public SqlServerType {
    Objects.requireNonNull(name, "name");
    name = name.strip().toLowerCase(Locale.ROOT);
  }

  /** A type without precision or scale, e.g. {@code int}. */
  public static SqlServerType of(String name) {
    return new SqlServerType(name, null, null);
  }

  /** A type with precision and scale, e.g. {@code decimal(18,2)}. */
  public static SqlServerType of(String name, int precision, int scale) {
    return new SqlServerType(name, precision, scale);
  }

  /**
   * Parses {@code name}, {@code name(p)}, {@code name(max)} or {@code name(p,s)}.
   *
   * @throws IllegalArgumentException {@code Invalid SQL type: '<text>'} for any other text
   */
  public static SqlServerType parse(String text) {
    Matcher m = FORM.matcher(text == null ? "" : text);
    if (!m.matches()) {
      throw new IllegalArgumentException("Invalid SQL type: '" + text + "'");
    }
    Integer precision = null;
    if (m.group(2) != null) {
      precision = m.group(2).equalsIgnoreCase("max") ? -1 : Integer.parseInt(m.group(2));
    }
    Integer scale = m.group(3) == null ? null : Integer.parseInt(m.group(3));
    return new SqlServerType(m.group(1), precision, scale);
  }

  /**
   * Whether a key bound of base type {@code baseType} (any case) can be cast from its text form, so
   * that a key-range read over a column of that type is possible.
   */
  public static boolean boundCastable(String baseType) {
    return BOUND_CASTABLE.contains(baseType.toLowerCase(Locale.ROOT));
  }

  @Override
  public String toString() {
    if (precision == null) {
      return name;
    }
    String p = precision == -1 ? "max" : precision.toString();
    return scale == null ? name + "(" + p + ")" : name + "(" + p + "," + scale + ")";
  }
}
