package org.lakecdc.io.mssqlcdc.schema;

/**
 * A captured column has a SQL Server type with no default output type (docs/tables.md "Extreme
 * values"): {@code sql_variant}, {@code geography}, {@code geometry}, {@code hierarchyid}, CLR
 * types and any other type not in the mapping of {@link TypeMapping}. The fix is to declare the
 * columns to read with the {@code columns} option ({@code withColumns(...)}, {@code --columns}) and
 * leave the column out.
 *
 * <p>Message, one line: {@code Column '<column>' has SQL Server type <type>, which has no default
 * mapping; declare the columns to read with 'columns' (withColumns / --columns) and leave it out};
 * with a capture instance known, {@code Column '<column>' of capture instance <ci> has ...}.
 */
public class UnsupportedTypeException extends IllegalArgumentException {
  private static final long serialVersionUID = 1L;

  private final String column;
  private final SqlServerType sqlServerType;
  private final String captureInstance;

  /**
   * An unsupported type of a column whose capture instance is not known here.
   *
   * @param column the column name as SQL Server spells it
   * @param sqlServerType the column's SQL Server type
   */
  public UnsupportedTypeException(String column, SqlServerType sqlServerType) {
    this(column, sqlServerType, null);
  }

  private UnsupportedTypeException(
      String column, SqlServerType sqlServerType, String captureInstance) {
    super(message(column, sqlServerType, captureInstance));
    this.column = column;
    this.sqlServerType = sqlServerType;
    this.captureInstance = captureInstance;
  }

  private static String message(String column, SqlServerType type, String captureInstance) {
    return "Column '"
        + column
        + "'"
        + (captureInstance == null ? "" : " of capture instance " + captureInstance)
        + " has SQL Server type "
        + type
        + ", which has no default mapping; declare the columns to read with 'columns'"
        + " (withColumns / --columns) and leave it out";
  }

  /**
   * The same error, naming the capture instance that captures the column.
   *
   * @param captureInstance the capture instance name
   * @return a new exception whose message names the capture instance
   */
  public UnsupportedTypeException inCaptureInstance(String captureInstance) {
    UnsupportedTypeException e =
        new UnsupportedTypeException(column, sqlServerType, captureInstance);
    e.setStackTrace(getStackTrace());
    return e;
  }

  /**
   * The column with the unsupported type.
   *
   * @return the column name as SQL Server spells it
   */
  public String column() {
    return column;
  }

  /**
   * The unsupported type.
   *
   * @return the column's SQL Server type
   */
  public SqlServerType sqlServerType() {
    return sqlServerType;
  }

  /**
   * The capture instance that captures the column.
   *
   * @return the capture instance name, or null when not known
   */
  public String captureInstance() {
    return captureInstance;
  }
}
