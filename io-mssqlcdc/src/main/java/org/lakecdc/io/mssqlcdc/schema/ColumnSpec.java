package org.lakecdc.io.mssqlcdc.schema;

import java.io.Serializable;
import java.util.Objects;

/**
 * One captured column of the output schema: its name (as SQL Server spells it, or as declared in
 * the {@code columns} option) and its output type.
 *
 * @param name the column name; not empty; any characters (DDL text back-quotes it)
 * @param type the output type
 */
public record ColumnSpec(String name, OutputType type) implements Serializable {
  /**
   * Checks the components.
   *
   * @param name the column name; not empty
   * @param type the output type
   * @throws NullPointerException when a component is null
   * @throws IllegalArgumentException when the name is empty
   */
  public ColumnSpec {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(type, "type");
    if (name.isEmpty()) {
      throw new IllegalArgumentException("A column name cannot be empty");
    }
  }

  /**
   * The column as one Spark DDL entry: the back-quoted name (a backtick inside is doubled), a space
   * and the canonical type, e.g. {@code `amount` DECIMAL(18,2)}.
   *
   * @return the DDL entry
   */
  public String toDdl() {
    return quote(name) + " " + type;
  }

  /**
   * Back-quotes a column name for Spark DDL, doubling any backtick inside: {@code d`e} becomes
   * {@code `d``e`}.
   *
   * @param name the column name
   * @return the quoted name
   */
  public static String quote(String name) {
    return "`" + name.replace("`", "``") + "`";
  }
}
