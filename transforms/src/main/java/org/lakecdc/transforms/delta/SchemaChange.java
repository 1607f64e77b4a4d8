package org.lakecdc.transforms.delta;

import java.io.Serializable;
import java.util.List;
import java.util.Objects;

/**
 * One metadata-only change a {@link Migration} makes to a table: add nullable columns, rewrite a
 * column comment, rewrite the table comment. Each is idempotent, so a migration interrupted before
 * its stamp runs again on the next open without harm (docs/tables.md; C134, C135). None rewrites
 * data files: a column added to a table reads as NULL in the rows written before it (the Delta rule
 * for a column missing from a data file).
 */
public sealed interface SchemaChange extends Serializable
    permits SchemaChange.AddColumns, SchemaChange.SetColumnComment, SchemaChange.SetTableComment {

  /**
   * Appends nullable columns after the existing ones, skipping any the table already has (names
   * compared ignoring case, as Delta does).
   *
   * @param columns the columns to add, each nullable
   */
  record AddColumns(List<DeltaColumn> columns) implements SchemaChange {
    /**
     * Checks and copies the columns.
     *
     * @param columns the columns to add
     * @throws IllegalArgumentException when a column is not nullable (existing rows have no value
     *     for it)
     */
    public AddColumns {
      columns = List.copyOf(columns);
      for (DeltaColumn column : columns) {
        if (!column.nullable()) {
          throw new IllegalArgumentException(
              "Column '" + column.name() + "' must be nullable to be added to an existing table");
        }
      }
    }
  }

  /**
   * Sets the comment of an existing column; does nothing when the table has no such column (an
   * optional column, such as {@code _command_id}, may be absent).
   *
   * @param column the column name, compared ignoring case
   * @param comment the new comment
   */
  record SetColumnComment(String column, String comment) implements SchemaChange {
    /**
     * Checks the components.
     *
     * @param column the column name
     * @param comment the new comment
     * @throws NullPointerException when a component is null
     */
    public SetColumnComment {
      Objects.requireNonNull(column, "column");
      Objects.requireNonNull(comment, "comment");
    }
  }

  /**
   * Sets the table comment (Delta {@code metaData.description}).
   *
   * @param comment the new table comment
   */
  record SetTableComment(String comment) implements SchemaChange {
    /**
     * Checks the component.
     *
     * @param comment the new table comment
     * @throws NullPointerException when the comment is null
     */
    public SetTableComment {
      Objects.requireNonNull(comment, "comment");
    }
  }
}
