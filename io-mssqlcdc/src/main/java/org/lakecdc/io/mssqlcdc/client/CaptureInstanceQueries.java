package org.lakecdc.io.mssqlcdc.client;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.io.mssqlcdc.schema.CapturedColumn;
import org.lakecdc.io.mssqlcdc.schema.SqlServerType;

/**
 * The reads of CDC's metadata about capture instances for {@link SqlCdcClient}: every instance
 * {@code sys.sp_cdc_help_change_data_capture} lists, and an instance's captured columns ({@code
 * sys.sp_cdc_get_captured_columns}, computed ones marked from {@code sys.columns}), each typed as
 * {@link SqlServerType}.
 */
final class CaptureInstanceQueries {
  /** {@code [name]} items of {@code index_column_list}, {@code ]]} escaping a {@code ]}. */
  private static final Pattern BRACKETED = Pattern.compile("\\[((?:[^\\]]|\\]\\])*)\\]");

  private CaptureInstanceQueries() {}

  /** Every capture instance {@code sys.sp_cdc_help_change_data_capture} lists. */
  static List<CaptureInstance> help(Connection c) throws SQLException {
    List<CaptureInstance> out = new ArrayList<>();
    try (PreparedStatement ps = c.prepareStatement(CdcStatements.HELP_CHANGE_DATA_CAPTURE);
        ResultSet rs = ps.executeQuery()) {
      while (rs.next()) {
        byte[] start = rs.getBytes("start_lsn");
        Optional<Lsn> startLsn = start == null ? Optional.empty() : Optional.of(Lsn.ofBytes(start));
        out.add(
            new CaptureInstance(
                rs.getString("capture_instance"),
                rs.getString("source_schema"),
                rs.getString("source_table"),
                startLsn.filter(l -> !l.isZero()),
                Optional.ofNullable(rs.getObject("create_date", LocalDateTime.class)),
                indexColumns(rs.getString("index_column_list"))));
      }
    }
    return out;
  }

  /**
   * The names of {@code index_column_list}, e.g. {@code [order_id], [line]}.
   *
   * @param list the list, or null
   * @return the names in order; empty for null
   */
  static List<String> indexColumns(String list) {
    List<String> out = new ArrayList<>();
    if (list == null) {
      return out;
    }
    Matcher m = BRACKETED.matcher(list);
    while (m.find()) {
      out.add(m.group(1).replace("]]", "]"));
    }
    return out;
  }

  static List<CapturedColumn> captured(Connection c, String name) throws SQLException {
    List<CapturedColumn> columns = new ArrayList<>();
    List<Integer> ids = new ArrayList<>();
    String schema = null;
    String table = null;
    try (PreparedStatement ps = c.prepareStatement(CdcStatements.CAPTURED_COLUMNS)) {
      ps.setString(1, name);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          schema = rs.getString("source_schema");
          table = rs.getString("source_table");
          ids.add(rs.getInt("column_id"));
          columns.add(
              new CapturedColumn(
                  rs.getString("column_name"),
                  rs.getInt("column_ordinal"),
                  capturedType(
                      rs.getString("data_type"),
                      toInteger(rs.getObject("character_maximum_length")),
                      toInteger(rs.getObject("numeric_precision")),
                      toInteger(rs.getObject("numeric_scale")),
                      toInteger(rs.getObject("datetime_precision"))),
                  false));
        }
      }
    }
    if (schema != null) {
      Set<Integer> computed = new HashSet<>();
      for (SourceTableReads.SourceColumn col :
          SourceTableReads.sourceColumns(c, schema, table).values()) {
        if (col.computed()) {
          computed.add(col.id());
        }
      }
      for (int i = 0; i < columns.size(); i++) {
        CapturedColumn col = columns.get(i);
        if (computed.contains(ids.get(i))) {
          columns.set(i, new CapturedColumn(col.name(), col.ordinal(), col.type(), true));
        }
      }
    }
    columns.sort(Comparator.comparingInt(CapturedColumn::ordinal));
    return columns;
  }

  private static Integer toInteger(Object value) {
    return value == null ? null : ((Number) value).intValue();
  }

  /**
   * A captured column's type from {@code sys.sp_cdc_get_captured_columns}.
   *
   * @param dataType {@code data_type}
   * @param maxLength {@code character_maximum_length} (-1 for {@code max}), or null
   * @param precision {@code numeric_precision}, or null
   * @param scale {@code numeric_scale}, or null
   * @param datetimePrecision {@code datetime_precision}, or null
   * @return {@code varchar(20)}, {@code decimal(18,2)}, {@code datetime2(7)}, {@code int}, ...
   */
  static SqlServerType capturedType(
      String dataType,
      Integer maxLength,
      Integer precision,
      Integer scale,
      Integer datetimePrecision) {
    String name = dataType.strip().toLowerCase(Locale.ROOT);
    switch (name) {
      case "decimal":
      case "numeric":
        return SqlServerType.of(name, precision, scale);
      case "char":
      case "varchar":
      case "nchar":
      case "nvarchar":
      case "binary":
      case "varbinary":
        return new SqlServerType(name, maxLength, null);
      case "datetime2":
      case "datetimeoffset":
      case "time":
        return new SqlServerType(name, datetimePrecision, null);
      default:
        return SqlServerType.of(name);
    }
  }
}
