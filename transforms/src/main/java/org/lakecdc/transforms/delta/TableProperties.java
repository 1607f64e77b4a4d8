package org.lakecdc.transforms.delta;

/**
 * Names of the Delta table properties ({@code metaData.configuration} keys) this project sets on
 * every table it creates (docs/tables.md), and of the Delta properties it reads but never sets.
 * Delta-spark shows them in {@code SHOW TBLPROPERTIES}.
 */
public final class TableProperties {
  /**
   * The number of migrations of its kind the table has had, a decimal integer; a table without it
   * is at version 0 (docs/tables.md). New tables are stamped with their kind's {@link
   * TableKind#currentVersion()}.
   */
  public static final String SCHEMA_VERSION = "mssql_cdc.schema_version";

  /** The table's kind, {@link TableKind#propertyValue()}: {@code bronze}, {@code facts}, ... */
  public static final String TABLE_KIND = "mssql_cdc.table_kind";

  /**
   * Delta's type widening switch, {@code true} to allow widening a column's type (table feature
   * {@code typeWidening}). Never set by this project: the table's owner opts in ({@code ALTER TABLE
   * ... SET TBLPROPERTIES ('delta.enableTypeWidening' = 'true')}), and {@link
   * DeltaTables#evolveSchema} then widens columns.
   */
  public static final String ENABLE_TYPE_WIDENING = "delta.enableTypeWidening";

  /**
   * Delta's column mapping mode ({@code none}, {@code name}, {@code id}). Never set by this
   * project: Delta Kernel 4.4 cannot write tables with column mapping.
   */
  public static final String COLUMN_MAPPING_MODE = "delta.columnMapping.mode";

  private TableProperties() {}
}
