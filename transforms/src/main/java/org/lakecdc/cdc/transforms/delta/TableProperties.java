package org.lakecdc.cdc.transforms.delta;

/**
 * Names of the Delta table properties ({@code metaData.configuration} keys) this project sets on
 * every table it creates (BEHAVIOUR.md 12.3). Delta-spark shows them in {@code SHOW TBLPROPERTIES}.
 */
public final class TableProperties {
  /**
   * The number of migrations of its kind the table has had, a decimal integer; a table without it
   * is at version 0 (BEHAVIOUR.md 12.2). New tables are stamped with their kind's {@link
   * TableKind#currentVersion()}.
   */
  public static final String SCHEMA_VERSION = "mssql_cdc.schema_version";

  /** The table's kind, {@link TableKind#propertyValue()}: {@code bronze}, {@code facts}, ... */
  public static final String TABLE_KIND = "mssql_cdc.table_kind";

  private TableProperties() {}
}
