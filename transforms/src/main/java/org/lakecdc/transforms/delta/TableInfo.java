package org.lakecdc.transforms.delta;

import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import org.checkerframework.checker.nullness.qual.Nullable;

/**
 * A table's metadata at one version ({@link DeltaTables#describe}): what delta-spark's {@code
 * DESCRIBE DETAIL}, {@code DESCRIBE TABLE} and {@code SHOW TBLPROPERTIES} show.
 *
 * @param path the table path as given
 * @param version the table version read
 * @param description the table comment (Delta {@code metaData.description}), or null when unset
 * @param properties the table properties ({@code metaData.configuration}), unmodifiable
 * @param columns the columns in order, with their field-metadata comments
 */
public record TableInfo(
    String path,
    long version,
    @Nullable String description,
    Map<String, String> properties,
    List<DeltaColumn> columns) {

  /**
   * Copies the collections.
   *
   * @param path the path
   * @param version the version
   * @param description the table comment
   * @param properties the properties
   * @param columns the columns
   */
  public TableInfo {
    properties = Map.copyOf(properties);
    columns = List.copyOf(columns);
  }

  /**
   * The table's {@link TableProperties#SCHEMA_VERSION}: 0 when absent (docs/tables.md).
   *
   * @return the schema version
   * @throws IncompatibleTableException when the property is not a non-negative decimal integer
   */
  public int schemaVersion() {
    return parseSchemaVersion(path, properties.get(TableProperties.SCHEMA_VERSION));
  }

  /**
   * The table's {@link TableProperties#TABLE_KIND}, when set.
   *
   * @return the raw property value
   */
  public Optional<String> kind() {
    return Optional.ofNullable(properties.get(TableProperties.TABLE_KIND));
  }

  /**
   * The column with this name, compared ignoring case as Delta does.
   *
   * @param name the column name
   * @return the column, or empty
   */
  public Optional<DeltaColumn> column(String name) {
    return columns.stream()
        .filter(c -> c.name().toLowerCase(Locale.ROOT).equals(name.toLowerCase(Locale.ROOT)))
        .findFirst();
  }

  static int parseSchemaVersion(String path, @Nullable String value) {
    if (value == null) {
      return 0;
    }
    try {
      int version = Integer.parseInt(value.strip());
      if (version >= 0) {
        return version;
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    throw new IncompatibleTableException(
        "Delta table "
            + path
            + " has "
            + TableProperties.SCHEMA_VERSION
            + " = '"
            + value
            + "', which is not a non-negative integer");
  }
}
