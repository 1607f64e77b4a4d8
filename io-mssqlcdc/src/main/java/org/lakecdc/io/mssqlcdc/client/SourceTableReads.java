package org.lakecdc.io.mssqlcdc.client;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The part of {@link SqlCdcClient} that reads the tracked source table itself rather than CDC's
 * tables: a snapshot's or a chunk's rows, the key tiles, bounds, slices and buckets that plan them,
 * and row counts ({@link CdcClient}'s source-table methods). Each runs under the session prefix
 * ({@link SqlSession#sourceReadPrefix}: the lock timeout when configured, the requested isolation
 * level, never {@code NOLOCK}); table and column names match as the database's collation does, and
 * key bounds are bound as text and cast to the key columns' declared types ({@link KeyRangeSql}).
 */
abstract class SourceTableReads implements CdcClient {
  /** The client's session: its connection, retries and session settings. */
  final SqlSession session;

  SourceTableReads(SqlSession session) {
    this.session = session;
  }

  /**
   * {@link CdcClient#readTable}: under {@code SET LOCK_TIMEOUT} when configured and the query's
   * isolation level; key bounds bound as text and cast to the key columns' declared types ({@link
   * KeyRangeSql}). Table and column names match as the database's collation does; a column the
   * table no longer has, and a computed column, read NULL.
   *
   * @throws CdcException for an unknown table (or one the login may not SELECT) or key column
   * @throws IllegalArgumentException for a bound of the wrong size, or bounds on a key type they
   *     cannot be cast to
   */
  @Override
  public CloseableIterator<List<Object>> readTable(TableQuery query) {
    SqlIdentifiers.name(query.schema());
    SqlIdentifiers.name(query.table());
    String table = query.schema() + "." + query.table();
    return session.call(
        "Reading " + table,
        c -> {
          Map<String, SourceColumn> columns = sourceColumns(c, query.schema(), query.table());
          List<String> selected = new ArrayList<>();
          int[] position = new int[query.columns().size()];
          for (int i = 0; i < query.columns().size(); i++) {
            SourceColumn col = columns.get(query.columns().get(i).toLowerCase(Locale.ROOT));
            if (col == null || col.computed()) {
              position[i] = -1;
            } else {
              position[i] = selected.size();
              selected.add(col.name());
            }
          }
          List<String> keyNames = new ArrayList<>();
          List<KeyRangeSql.KeyColumn> keys = new ArrayList<>();
          boolean bounded =
              query.lowerInclusive().isPresent() || query.upperExclusive().isPresent();
          for (String k : query.keyColumns()) {
            SourceColumn col = column(columns, query.schema(), query.table(), k);
            keyNames.add(col.name());
            if (bounded) {
              keys.add(col.keyColumn());
            }
          }
          List<KeyRangeSql.Piece> pieces =
              bounded
                  ? KeyRangeSql.pieces(keys, query.lowerInclusive(), query.upperExclusive())
                  : List.of(new KeyRangeSql.Piece("", List.of()));
          if (pieces.isEmpty()) {
            return SqlSession.<List<Object>>emptyIterator();
          }
          String sql =
              session.sourceReadPrefix(query.isolation())
                  + CdcStatements.readTable(
                      query.schema(), query.table(), selected, keyNames, wheres(pieces));
          PreparedStatement ps = SqlSession.prepareStreaming(c, sql);
          ResultSet rs;
          try {
            bind(ps, parameters(pieces));
            rs = ps.executeQuery();
          } catch (SQLException | RuntimeException e) {
            SqlSession.closeQuietly(ps);
            throw e;
          }
          String[] types = SqlSession.types(rs);
          return new SqlSession.ResultIterator<List<Object>>(rs, "Reading " + table) {
            @Override
            List<Object> row(ResultSet r) throws SQLException {
              List<Object> values = new ArrayList<>(position.length);
              for (int p : position) {
                values.add(p < 0 ? null : JdbcValues.read(r, p + 1, types[p]));
              }
              return Collections.unmodifiableList(values);
            }
          };
        });
  }

  /**
   * {@link CdcClient#keyTiles}: one statement: {@code NTILE(n)} over the key columns and the first
   * row of each tile after the first ({@code ROW_NUMBER} per tile), under the lock timeout and
   * {@code isolation}; keys sort in SQL Server's order (NULL first, strings by the column's
   * collation).
   */
  @Override
  public List<List<Object>> keyTiles(
      String schema, String table, List<String> keyColumns, int n, IsolationLevel isolation) {
    if (n < 1) {
      throw new IllegalArgumentException("n must be at least 1, got " + n);
    }
    if (keyColumns.isEmpty()) {
      throw new IllegalArgumentException(
          "Key tiles of " + schema + "." + table + " need at least one key column");
    }
    SqlIdentifiers.name(schema);
    SqlIdentifiers.name(table);
    return session.call(
        "Planning key ranges of " + schema + "." + table,
        c -> {
          List<String> keys = columnNames(keyColumns(c, schema, table, keyColumns));
          String sql =
              session.sourceReadPrefix(isolation) + CdcStatements.keyTiles(schema, table, keys, n);
          List<List<Object>> out = new ArrayList<>();
          try (PreparedStatement ps = c.prepareStatement(sql);
              ResultSet rs = ps.executeQuery()) {
            String[] types = SqlSession.types(rs);
            while (rs.next()) {
              out.add(tuple(rs, types, keys.size()));
            }
          }
          return Collections.unmodifiableList(out);
        });
  }

  /**
   * {@link CdcClient#keyRange}: one statement of two seeks ({@code SELECT (SELECT MIN([k]) ...) AS
   * lo, (SELECT MAX([k]) ...) AS hi}), under the lock timeout and {@code isolation}.
   */
  @Override
  public Optional<List<Object>> keyRange(
      String schema, String table, String keyColumn, IsolationLevel isolation) {
    requireKeyColumns(schema, table, List.of(keyColumn));
    return session.call(
        "Reading the key range of " + schema + "." + table,
        c -> {
          SourceColumn k = keyColumn(c, schema, table, keyColumn);
          String sql =
              session.sourceReadPrefix(isolation) + CdcStatements.keyRange(schema, table, k.name());
          try (PreparedStatement ps = c.prepareStatement(sql);
              ResultSet rs = ps.executeQuery()) {
            if (!rs.next()) {
              return Optional.<List<Object>>empty();
            }
            String[] types = SqlSession.types(rs);
            Object lo = JdbcValues.read(rs, 1, types[0]);
            Object hi = JdbcValues.read(rs, 2, types[1]);
            if (lo == null || hi == null) {
              return Optional.<List<Object>>empty();
            }
            return Optional.of(Collections.unmodifiableList(java.util.Arrays.asList(lo, hi)));
          }
        });
  }

  /**
   * {@link CdcClient#keyMax}: {@code SELECT TOP (1) <keys> ... ORDER BY <keys DESC>}, under the
   * lock timeout and {@code isolation}.
   */
  @Override
  public Optional<List<Object>> keyMax(
      String schema, String table, List<String> keyColumns, IsolationLevel isolation) {
    requireKeyColumns(schema, table, keyColumns);
    return session.call(
        "Reading the last key of " + schema + "." + table,
        c -> {
          List<String> keys = columnNames(keyColumns(c, schema, table, keyColumns));
          String sql =
              session.sourceReadPrefix(isolation) + CdcStatements.keyMax(schema, table, keys);
          try (PreparedStatement ps = c.prepareStatement(sql);
              ResultSet rs = ps.executeQuery()) {
            return rs.next() ? Optional.of(tuple(rs, keys.size())) : Optional.<List<Object>>empty();
          }
        });
  }

  /**
   * {@link CdcClient#keyBound}: the range's seekable pieces ({@link KeyRangeSql}, bounds bound as
   * text and cast to the key columns' declared types from {@code sys.columns}) each take {@code TOP
   * (n + 1)} ordered by the key; the union is ordered and offset by n rows. Under the lock timeout
   * and {@code isolation}.
   *
   * @throws IllegalArgumentException when {@code n < 0}, a bound has the wrong size, or a key type
   *     bounds cannot be cast to
   */
  @Override
  public Optional<List<Object>> keyBound(
      String schema,
      String table,
      List<String> keyColumns,
      Optional<List<Object>> lowerInclusive,
      Optional<List<Object>> upperExclusive,
      long n,
      IsolationLevel isolation) {
    requireKeyColumns(schema, table, keyColumns);
    if (n < 0) {
      throw new IllegalArgumentException("n must be at least 0, got " + n);
    }
    return session.call(
        "Seeking a key bound of " + schema + "." + table,
        c -> {
          List<SourceColumn> columns = keyColumns(c, schema, table, keyColumns);
          List<KeyRangeSql.KeyColumn> keys = new ArrayList<>();
          for (SourceColumn col : columns) {
            keys.add(col.keyColumn());
          }
          List<KeyRangeSql.Piece> pieces = KeyRangeSql.pieces(keys, lowerInclusive, upperExclusive);
          if (pieces.isEmpty()) {
            return Optional.<List<Object>>empty();
          }
          String sql =
              session.sourceReadPrefix(isolation)
                  + CdcStatements.keyBound(schema, table, columnNames(columns), wheres(pieces), n);
          try (PreparedStatement ps = c.prepareStatement(sql)) {
            bind(ps, parameters(pieces));
            try (ResultSet rs = ps.executeQuery()) {
              return rs.next()
                  ? Optional.of(tuple(rs, columns.size()))
                  : Optional.<List<Object>>empty();
            }
          }
        });
  }

  /**
   * {@link CdcClient#keySlices}: one {@code GROUP BY} of {@code k / width} (bigint arithmetic, one
   * slice lower for a negative key with a remainder), bounds bound as text and cast to the column's
   * type (a bound beyond the type's range is left out), under the lock timeout and {@code
   * isolation}.
   *
   * @throws IllegalArgumentException when {@code width < 1} or the column is not {@code tinyint},
   *     {@code smallint}, {@code int} or {@code bigint}
   */
  @Override
  public SortedMap<Long, Long> keySlices(
      String schema,
      String table,
      String keyColumn,
      long width,
      long low,
      long high,
      IsolationLevel isolation) {
    requireGrid(schema, table, keyColumn, width);
    return session.call(
        "Counting key slices of " + schema + "." + table,
        c -> {
          SourceColumn k = keyColumn(c, schema, table, keyColumn);
          long[] range = integerRange(k, "slices need tinyint, smallint, int or bigint");
          KeyRangeSql.KeyColumn key = k.keyColumn();
          List<String> parameters = new ArrayList<>();
          String lower = null;
          String upper = null;
          if (low > range[0]) {
            lower = key.cast();
            parameters.add(Long.toString(Math.min(low, range[1])));
          }
          if (high < range[1]) {
            upper = key.cast();
            parameters.add(Long.toString(Math.max(high, range[0])));
          }
          TreeMap<Long, Long> slices = new TreeMap<>();
          if (low > high) {
            return Collections.unmodifiableSortedMap(slices);
          }
          String sql =
              session.sourceReadPrefix(isolation)
                  + CdcStatements.keySlices(schema, table, k.name(), lower, upper, width);
          try (PreparedStatement ps = c.prepareStatement(sql)) {
            bind(ps, parameters);
            try (ResultSet rs = ps.executeQuery()) {
              while (rs.next()) {
                slices.put(rs.getLong(1), rs.getLong(2));
              }
            }
          }
          return Collections.unmodifiableSortedMap(slices);
        });
  }

  /**
   * {@link CdcClient#keyBuckets}: one {@code GROUP BY} of the ordinal's bucket ({@link
   * CdcStatements#keyBuckets}), the column's type from {@code sys.columns}, under the lock timeout
   * and {@code isolation}.
   */
  @Override
  public SortedMap<Long, KeyBucket> keyBuckets(
      String schema, String table, String keyColumn, long width, IsolationLevel isolation) {
    requireGrid(schema, table, keyColumn, width);
    return session.call(
        "Counting key buckets of " + schema + "." + table,
        c -> {
          SourceColumn k = keyColumn(c, schema, table, keyColumn);
          boolean date = k.type().equalsIgnoreCase("date");
          if (!date) {
            integerRange(k, "buckets need tinyint, smallint, int, bigint or date");
          }
          String sql =
              session.sourceReadPrefix(isolation)
                  + CdcStatements.keyBuckets(schema, table, k.name(), date, width);
          TreeMap<Long, KeyBucket> buckets = new TreeMap<>();
          try (PreparedStatement ps = c.prepareStatement(sql);
              ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
              buckets.put(
                  rs.getLong(1),
                  new KeyBucket(rs.getLong(2), rs.getBigDecimal(3).toBigIntegerExact()));
            }
          }
          return Collections.unmodifiableSortedMap(buckets);
        });
  }

  /**
   * {@link CdcClient#rowCount}: {@code SELECT COUNT_BIG(*)}, under the lock timeout and {@code
   * isolation}.
   */
  @Override
  public long rowCount(String schema, String table, IsolationLevel isolation) {
    SqlIdentifiers.name(schema);
    SqlIdentifiers.name(table);
    return session.call(
        "Counting the rows of " + schema + "." + table,
        c -> {
          try (PreparedStatement ps =
                  c.prepareStatement(
                      session.sourceReadPrefix(isolation) + CdcStatements.rowCount(schema, table));
              ResultSet rs = ps.executeQuery()) {
            rs.next();
            return rs.getLong(1);
          }
        });
  }

  /**
   * {@link CdcClient#rowEstimate}: {@code EXEC sys.sp_spaceused @objname = ?} with {@code
   * [schema].[table]}; the {@code rows} column (char(20), e.g. {@code "1234"} padded with spaces)
   * is read up to its first non-digit.
   *
   * @throws CdcException for an unknown table, or a {@code rows} column without a number
   */
  @Override
  public long rowEstimate(String schema, String table) {
    SqlIdentifiers.name(schema);
    SqlIdentifiers.name(table);
    return session.call(
        "Estimating the rows of " + schema + "." + table,
        c -> {
          try (PreparedStatement ps = c.prepareStatement(CdcStatements.ROW_ESTIMATE)) {
            ps.setString(1, SqlIdentifiers.quote(schema) + "." + SqlIdentifiers.quote(table));
            try (ResultSet rs = ps.executeQuery()) {
              if (!rs.next()) {
                throw new CdcException("sp_spaceused answered no row for " + schema + "." + table);
              }
              return parseRows(rs.getString("rows"), schema + "." + table);
            }
          }
        });
  }

  /** The leading number of sp_spaceused's {@code rows} text ({@code "1234 rows"} reads 1234). */
  static long parseRows(String text, String table) {
    Matcher m = LEADING_NUMBER.matcher(text == null ? "" : text);
    if (!m.lookingAt()) {
      throw new CdcException(
          "sp_spaceused answered rows '" + text + "' for " + table + ", not a number");
    }
    return Long.parseLong(m.group(1));
  }

  private static final Pattern LEADING_NUMBER = Pattern.compile("\\s*(\\d{1,18})");

  private static void requireKeyColumns(String schema, String table, List<String> keyColumns) {
    SqlIdentifiers.name(schema);
    SqlIdentifiers.name(table);
    if (keyColumns.isEmpty()) {
      throw new IllegalArgumentException(
          "Key queries of " + schema + "." + table + " need at least one key column");
    }
    keyColumns.forEach(SqlIdentifiers::name);
  }

  /** The arguments of a count over a grid of one key column: a valid name and a width of 1 up. */
  private static void requireGrid(String schema, String table, String keyColumn, long width) {
    requireKeyColumns(schema, table, List.of(keyColumn));
    if (width < 1) {
      throw new IllegalArgumentException("width must be at least 1, got " + width);
    }
  }

  /** The named column of the source table, as SQL Server spells it. */
  private static SourceColumn keyColumn(Connection c, String schema, String table, String name)
      throws SQLException {
    return column(sourceColumns(c, schema, table), schema, table, name);
  }

  /** The named columns of the source table, as SQL Server spells them. */
  private static List<SourceColumn> keyColumns(
      Connection c, String schema, String table, List<String> keyColumns) throws SQLException {
    Map<String, SourceColumn> columns = sourceColumns(c, schema, table);
    List<SourceColumn> out = new ArrayList<>();
    for (String k : keyColumns) {
      out.add(column(columns, schema, table, k));
    }
    return out;
  }

  /**
   * The column {@code name} (matched ignoring case) of {@code columns}.
   *
   * @throws CdcException when the table has no such column
   */
  private static SourceColumn column(
      Map<String, SourceColumn> columns, String schema, String table, String name) {
    SourceColumn col = columns.get(name.toLowerCase(Locale.ROOT));
    if (col == null) {
      throw new CdcException(
          "Invalid column name '" + name + "' in table '" + schema + "." + table + "'");
    }
    return col;
  }

  /** The WHERE clause of each piece, in order. */
  private static List<String> wheres(List<KeyRangeSql.Piece> pieces) {
    List<String> out = new ArrayList<>();
    for (KeyRangeSql.Piece p : pieces) {
      out.add(p.where());
    }
    return out;
  }

  /** The parameters of all pieces, in the order their clauses are written. */
  private static List<String> parameters(List<KeyRangeSql.Piece> pieces) {
    List<String> out = new ArrayList<>();
    for (KeyRangeSql.Piece p : pieces) {
      out.addAll(p.parameters());
    }
    return out;
  }

  /** Binds {@code parameters} as text to the statement's parameters 1, 2, .... */
  private static void bind(PreparedStatement ps, List<String> parameters) throws SQLException {
    for (int i = 0; i < parameters.size(); i++) {
      ps.setString(i + 1, parameters.get(i));
    }
  }

  private static List<String> columnNames(List<SourceColumn> columns) {
    List<String> out = new ArrayList<>();
    for (SourceColumn col : columns) {
      out.add(col.name());
    }
    return out;
  }

  private static List<Object> tuple(ResultSet rs, int n) throws SQLException {
    return tuple(rs, SqlSession.types(rs), n);
  }

  /** The first {@code n} columns of the current row, read as their {@code types} say. */
  private static List<Object> tuple(ResultSet rs, String[] types, int n) throws SQLException {
    List<Object> out = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      out.add(JdbcValues.read(rs, i + 1, types[i]));
    }
    return Collections.unmodifiableList(out);
  }

  /**
   * {@code [min, max]} of an integer column's type.
   *
   * @param needs what the caller needs, for the message ({@code slices need tinyint, ...})
   * @throws IllegalArgumentException for another type: {@code Key column '<k>' has type <t>;
   *     <needs>}
   */
  private static long[] integerRange(SourceColumn k, String needs) {
    return switch (k.type().toLowerCase(Locale.ROOT)) {
      case "tinyint" -> new long[] {0, 255};
      case "smallint" -> new long[] {Short.MIN_VALUE, Short.MAX_VALUE};
      case "int" -> new long[] {Integer.MIN_VALUE, Integer.MAX_VALUE};
      case "bigint" -> new long[] {Long.MIN_VALUE, Long.MAX_VALUE};
      default ->
          throw new IllegalArgumentException(
              "Key column '" + k.name() + "' has type " + k.type() + "; " + needs);
    };
  }

  /** A row of {@code sys.columns}. */
  record SourceColumn(
      int id,
      String name,
      String type,
      int maxLength,
      int precision,
      int scale,
      String collation,
      boolean computed) {
    KeyRangeSql.KeyColumn keyColumn() {
      return KeyRangeSql.KeyColumn.of(name, type, maxLength, precision, scale, collation);
    }
  }

  /** The source table's columns by lower-case name. */
  static Map<String, SourceColumn> sourceColumns(Connection c, String schema, String table)
      throws SQLException {
    Map<String, SourceColumn> out = new HashMap<>();
    try (PreparedStatement ps = c.prepareStatement(CdcStatements.SOURCE_COLUMNS)) {
      ps.setString(1, SqlIdentifiers.quote(schema) + "." + SqlIdentifiers.quote(table));
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          SourceColumn col =
              new SourceColumn(
                  rs.getInt(1),
                  rs.getString(2),
                  rs.getString(3),
                  rs.getInt(4),
                  rs.getInt(5),
                  rs.getInt(6),
                  rs.getString(7),
                  rs.getBoolean(8));
          out.put(col.name().toLowerCase(Locale.ROOT), col);
        }
      }
    }
    if (out.isEmpty()) {
      throw new CdcException(
          "Invalid object name '"
              + schema
              + "."
              + table
              + "' (no such table, or the login may not SELECT it)");
    }
    return out;
  }
}
