package org.lakecdc.transforms.delta;

import java.io.Serializable;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * What a new table is created with ({@link DeltaTables#createIfAbsent}): its kind, columns, table
 * comment and extra table properties. The kind's {@link TableProperties#SCHEMA_VERSION} and {@link
 * TableProperties#TABLE_KIND} are always added; the table is unpartitioned, has no column mapping,
 * change data feed or constraints (Kernel cannot write tables with those) and supports domain
 * metadata.
 *
 * @param kind the table kind
 * @param columns the columns in order; at least one, names unique ignoring case
 * @param tableComment the table comment (Delta {@code metaData.description})
 * @param properties extra table properties; must not set the two {@code mssql_cdc.*} properties
 *     above
 */
public record TableDefinition(
    TableKind kind, List<DeltaColumn> columns, String tableComment, Map<String, String> properties)
    implements Serializable {

  /**
   * Checks and copies the components.
   *
   * @param kind the table kind
   * @param columns the columns
   * @param tableComment the table comment
   * @param properties extra table properties
   * @throws NullPointerException when a component is null
   * @throws IllegalArgumentException when there is no column, two names are equal ignoring case, or
   *     a property sets {@link TableProperties#SCHEMA_VERSION} or {@link
   *     TableProperties#TABLE_KIND}
   */
  public TableDefinition {
    Objects.requireNonNull(kind, "kind");
    Objects.requireNonNull(tableComment, "tableComment");
    columns = List.copyOf(columns);
    properties = Map.copyOf(properties);
    if (columns.isEmpty()) {
      throw new IllegalArgumentException("A Delta table needs at least one column");
    }
    Set<String> seen = new HashSet<>();
    for (DeltaColumn column : columns) {
      if (!seen.add(column.name().toLowerCase(Locale.ROOT))) {
        throw new IllegalArgumentException(
            "Column '" + column.name() + "' appears twice (Delta compares names ignoring case)");
      }
    }
    for (String key : List.of(TableProperties.SCHEMA_VERSION, TableProperties.TABLE_KIND)) {
      if (properties.containsKey(key)) {
        throw new IllegalArgumentException(
            "Table property " + key + " is set from the table kind; do not pass it");
      }
    }
  }

  /**
   * A definition with the kind's table comment and no extra properties.
   *
   * @param kind the table kind
   * @param columns the columns in order
   * @return the definition
   */
  public static TableDefinition of(TableKind kind, List<DeltaColumn> columns) {
    return new TableDefinition(kind, columns, kind.tableComment(), Map.of());
  }
}
