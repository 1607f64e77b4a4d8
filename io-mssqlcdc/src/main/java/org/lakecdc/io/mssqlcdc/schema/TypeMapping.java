package org.lakecdc.io.mssqlcdc.schema;

import java.util.Objects;

/**
 * The default mapping of SQL Server column types to output types (docs/tables.md "Extreme values"),
 * used when the captured columns are inferred from {@code sys.sp_cdc_get_captured_columns}.
 *
 * <table>
 *   <caption>SQL Server type to output type</caption>
 *   <tr><th>SQL Server</th><th>Output</th></tr>
 *   <tr><td>bit</td><td>BOOLEAN</td></tr>
 *   <tr><td>tinyint, smallint</td><td>SMALLINT (0..255 does not fit a signed byte)</td></tr>
 *   <tr><td>int</td><td>INT</td></tr>
 *   <tr><td>bigint</td><td>BIGINT</td></tr>
 *   <tr><td>real, float(1..24)</td><td>FLOAT</td></tr>
 *   <tr><td>float, float(25..53)</td><td>DOUBLE</td></tr>
 *   <tr><td>decimal(p,s), numeric(p,s)</td><td>DECIMAL(p,s); no precision: (18,0), SQL Server's
 *       default; no scale: 0</td></tr>
 *   <tr><td>money</td><td>DECIMAL(19,4)</td></tr>
 *   <tr><td>smallmoney</td><td>DECIMAL(10,4)</td></tr>
 *   <tr><td>date</td><td>DATE</td></tr>
 *   <tr><td>datetime, datetime2, smalldatetime</td><td>TIMESTAMP_NTZ (as stored, never converted
 *       to UTC)</td></tr>
 *   <tr><td>datetimeoffset</td><td>TIMESTAMP (UTC instant)</td></tr>
 *   <tr><td>time</td><td>STRING</td></tr>
 *   <tr><td>char, varchar, nchar, nvarchar, text, ntext, xml, uniqueidentifier, sysname</td>
 *       <td>STRING</td></tr>
 *   <tr><td>binary, varbinary, image, timestamp, rowversion</td><td>BINARY</td></tr>
 * </table>
 *
 * <p>Alias types map through their base type, which the procedure reports; {@code sysname} (alias
 * of {@code nvarchar(128)}) is also accepted by name. Any other type ({@code sql_variant}, {@code
 * geography}, {@code geometry}, {@code hierarchyid}, CLR types) has no default mapping.
 */
public final class TypeMapping {
  /** The precision SQL Server gives a {@code decimal} or {@code numeric} declared without one. */
  static final int SQL_SERVER_DEFAULT_DECIMAL_PRECISION = 18;

  /** {@code float(n)} with {@code n <= 24} is stored as {@code real} (4 bytes). */
  private static final int REAL_MAX_MANTISSA_BITS = 24;

  private TypeMapping() {}

  /**
   * The output type of a captured column.
   *
   * @param columnName the column name, for the error message
   * @param type the column's SQL Server type as {@code sys.sp_cdc_get_captured_columns} reports it
   * @return the output type per the class table
   * @throws UnsupportedTypeException for a type with no default mapping, naming the column and the
   *     type and pointing at the {@code columns} option
   * @throws IllegalArgumentException for a {@code decimal}/{@code numeric} precision or scale out
   *     of the 1..38 / 0..p range
   */
  public static OutputType outputType(String columnName, SqlServerType type) {
    Objects.requireNonNull(columnName, "columnName");
    Objects.requireNonNull(type, "type");
    switch (type.name()) {
      case "bit":
        return OutputType.BOOLEAN;
      case "tinyint":
      case "smallint":
        return OutputType.SMALLINT;
      case "int":
        return OutputType.INT;
      case "bigint":
        return OutputType.BIGINT;
      case "real":
        return OutputType.FLOAT;
      case "float":
        return type.precision() != null
                && type.precision() > 0
                && type.precision() <= REAL_MAX_MANTISSA_BITS
            ? OutputType.FLOAT
            : OutputType.DOUBLE;
      case "decimal":
      case "numeric":
        return decimal(columnName, type);
      case "money":
        return OutputType.decimal(19, 4);
      case "smallmoney":
        return OutputType.decimal(10, 4);
      case "date":
        return OutputType.DATE;
      case "datetime":
      case "datetime2":
      case "smalldatetime":
        return OutputType.TIMESTAMP_NTZ;
      case "datetimeoffset":
        return OutputType.TIMESTAMP;
      case "time":
      case "char":
      case "varchar":
      case "nchar":
      case "nvarchar":
      case "text":
      case "ntext":
      case "xml":
      case "uniqueidentifier":
      case "sysname":
        return OutputType.STRING;
      case "binary":
      case "varbinary":
      case "image":
      case "timestamp":
      case "rowversion":
        return OutputType.BINARY;
      default:
        throw new UnsupportedTypeException(columnName, type);
    }
  }

  private static OutputType decimal(String columnName, SqlServerType type) {
    int precision =
        type.precision() == null ? SQL_SERVER_DEFAULT_DECIMAL_PRECISION : type.precision();
    int scale = type.scale() == null ? 0 : type.scale();
    try {
      return OutputType.decimal(precision, scale);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "Column '" + columnName + "' has SQL Server type " + type + ": " + e.getMessage(), e);
    }
  }
}
