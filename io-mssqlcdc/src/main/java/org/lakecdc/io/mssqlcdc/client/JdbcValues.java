package org.lakecdc.io.mssqlcdc.client;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.format.DateTimeFormatter;
import java.util.Locale;

/**
 * Reads one column of a JDBC row as the Java value {@link ChangeRow} documents, by the column's SQL
 * Server type, never through the JVM's default zone, so that no value depends on the machine it is
 * read on ({@code getTimestamp} would shift local times that do not exist in the JVM's zone):
 *
 * <table>
 *   <caption>SQL Server type to Java value</caption>
 *   <tr><th>SQL Server</th><th>Java</th><th>read with</th></tr>
 *   <tr><td>bit</td><td>Boolean</td><td>getBoolean</td></tr>
 *   <tr><td>tinyint, smallint</td><td>Short</td><td>getShort</td></tr>
 *   <tr><td>int</td><td>Integer</td><td>getInt</td></tr>
 *   <tr><td>bigint</td><td>Long</td><td>getLong</td></tr>
 *   <tr><td>real</td><td>Float</td><td>getFloat</td></tr>
 *   <tr><td>float</td><td>Double</td><td>getDouble</td></tr>
 *   <tr><td>decimal, numeric, money, smallmoney</td><td>BigDecimal, exact, the column's
 *       scale</td><td>getBigDecimal</td></tr>
 *   <tr><td>date</td><td>LocalDate</td><td>getObject(LocalDate)</td></tr>
 *   <tr><td>datetime, datetime2, smalldatetime</td><td>LocalDateTime as stored, no
 *       zone</td><td>getObject(LocalDateTime)</td></tr>
 *   <tr><td>datetimeoffset</td><td>Instant (UTC)</td><td>getObject(OffsetDateTime)</td></tr>
 *   <tr><td>time</td><td>String, ISO-8601 local time ({@code 13:50:01.1234567}; seconds always,
 *       fraction only when non-zero)</td><td>getObject(LocalTime)</td></tr>
 *   <tr><td>uniqueidentifier</td><td>String, canonical upper case</td><td>getString</td></tr>
 *   <tr><td>char, varchar, nchar, nvarchar, text, ntext, xml, sysname, sql_variant and any other
 *       type</td><td>String</td><td>getString</td></tr>
 *   <tr><td>binary, varbinary, image, timestamp, rowversion, hierarchyid, geography,
 *       geometry</td><td>byte[]</td><td>getBytes</td></tr>
 * </table>
 *
 * <p>mssql-jdbc 13 reads {@code getObject(i, LocalDateTime.class)} straight from the wire value
 * without a calendar (Microsoft docs "Using basic data types", "Supported java.time types"). SQL
 * NULL is null for every type.
 */
final class JdbcValues {
  /** {@code 13:50:01}, {@code 13:50:01.5}, {@code 13:50:01.1234567}: the fake's text of a time. */
  private static final DateTimeFormatter TIME = DateTimeFormatter.ISO_LOCAL_TIME;

  private JdbcValues() {}

  /**
   * The SQL Server base type of a result column from {@code ResultSetMetaData.getColumnTypeName}:
   * lower case, without mssql-jdbc's {@code identity} suffix or parentheses ({@code "decimal()
   * identity"} is {@code decimal}).
   *
   * @param jdbcTypeName the driver's type name
   * @return the base type name
   */
  static String baseType(String jdbcTypeName) {
    String t = jdbcTypeName.strip().toLowerCase(Locale.ROOT);
    int cut = t.length();
    for (int i = 0; i < t.length(); i++) {
      char c = t.charAt(i);
      if (c == ' ' || c == '(') {
        cut = i;
        break;
      }
    }
    return t.substring(0, cut);
  }

  /**
   * Reads a column.
   *
   * @param rs the result set, on a row
   * @param column the 1-based column index
   * @param type the column's base type ({@link #baseType(String)})
   * @return the value per the class table, or null for SQL NULL
   * @throws SQLException when the driver cannot read the value
   */
  static Object read(ResultSet rs, int column, String type) throws SQLException {
    switch (type) {
      case "bit":
        {
          boolean v = rs.getBoolean(column);
          return rs.wasNull() ? null : v;
        }
      case "tinyint":
      case "smallint":
        {
          short v = rs.getShort(column);
          return rs.wasNull() ? null : v;
        }
      case "int":
        {
          int v = rs.getInt(column);
          return rs.wasNull() ? null : v;
        }
      case "bigint":
        {
          long v = rs.getLong(column);
          return rs.wasNull() ? null : v;
        }
      case "real":
        {
          float v = rs.getFloat(column);
          return rs.wasNull() ? null : v;
        }
      case "float":
        {
          double v = rs.getDouble(column);
          return rs.wasNull() ? null : v;
        }
      case "decimal":
      case "numeric":
      case "money":
      case "smallmoney":
        return rs.getBigDecimal(column);
      case "date":
        return rs.getObject(column, LocalDate.class);
      case "datetime":
      case "datetime2":
      case "smalldatetime":
        return rs.getObject(column, LocalDateTime.class);
      case "datetimeoffset":
        {
          OffsetDateTime v = rs.getObject(column, OffsetDateTime.class);
          return v == null ? null : v.toInstant();
        }
      case "time":
        {
          LocalTime v = rs.getObject(column, LocalTime.class);
          return v == null ? null : TIME.format(v);
        }
      case "uniqueidentifier":
        {
          String v = rs.getString(column);
          return v == null ? null : v.toUpperCase(Locale.ROOT);
        }
      case "binary":
      case "varbinary":
      case "image":
      case "timestamp":
      case "rowversion":
      case "hierarchyid":
      case "geography":
      case "geometry":
        return rs.getBytes(column);
      default:
        return rs.getString(column);
    }
  }
}
