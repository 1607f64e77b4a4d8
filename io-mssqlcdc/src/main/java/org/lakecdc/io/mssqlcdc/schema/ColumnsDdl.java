package org.lakecdc.io.mssqlcdc.schema;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Reads and writes the Spark DDL column lists of the {@code columns} option (docs/options.md,
 * docs/tables.md "Extreme values"), e.g. {@code order_id INT, `created at` TIMESTAMP_NTZ, amount:
 * DECIMAL(18, 2)}.
 *
 * <p>Syntax: entries separated by commas; each entry is a name, an optional colon, and a type.
 * Backticks quote a name (any characters; a doubled backtick inside stands for one); an unquoted
 * name is letters, digits and underscores. Commas inside {@code <>} and {@code ()} (and inside
 * backticks) do not separate entries. Types are read by {@link OutputType#parse}; the complex types
 * {@code STRUCT}, {@code MAP} and {@code ARRAY} are not output types.
 *
 * <p>{@link #format} writes the canonical text: back-quoted names and canonical types separated by
 * {@code ", "}, e.g. {@code `order_id` INT, `amount` DECIMAL(18,2)}; {@link #parse} reads it back.
 */
public final class ColumnsDdl {
  private static final Pattern UNQUOTED_NAME = Pattern.compile("[\\p{L}\\p{N}_]+");
  private static final Pattern COMPLEX_TYPE =
      Pattern.compile("(?i)(STRUCT|MAP|ARRAY)\\s*(<.*)?", Pattern.DOTALL);

  private ColumnsDdl() {}

  /**
   * Parses a {@code columns} DDL list into column specs, in the order written.
   *
   * @param ddl the DDL text
   * @return the columns, at least one
   * @throws IllegalArgumentException with one of these messages:
   *     <ul>
   *       <li>{@code 'columns' is empty} for null, empty or blank text;
   *       <li>{@code Invalid 'columns': ...} for a syntax error (an empty entry, an unterminated
   *           backtick, unbalanced brackets, an unquoted name with other characters);
   *       <li>{@code Column '<name>' has no type in 'columns'};
   *       <li>{@code Column '<name>' has the complex type <type>; 'columns' takes scalar types only
   *           (STRUCT, MAP and ARRAY are not supported)};
   *       <li>{@code Column '<name>' in 'columns': <the OutputType.parse message>};
   *       <li>{@code Column '<name>' is declared twice in 'columns' (names are compared ignoring
   *           case)};
   *       <li>the {@link ReservedNames#checkDeclared} message for a reserved name.
   *     </ul>
   */
  public static List<ColumnSpec> parse(String ddl) {
    List<ColumnSpec> columns = new ArrayList<>();
    Set<String> seen = new HashSet<>();
    for (Entry entry : split(ddl)) {
      OutputType type = type(entry);
      if (!seen.add(entry.name.toLowerCase(Locale.ROOT))) {
        throw new IllegalArgumentException(
            "Column '"
                + entry.name
                + "' is declared twice in 'columns' (names are compared ignoring case)");
      }
      columns.add(new ColumnSpec(entry.name, type));
    }
    ReservedNames.checkDeclared(columns.stream().map(ColumnSpec::name).toList());
    return List.copyOf(columns);
  }

  /**
   * The column names of a DDL list, in order, without reading the types (so complex types are
   * accepted here). {@code "a INT, `b c` DECIMAL(18, 2), `d``e` STRUCT<x: INT, y: INT>, f: STRING,
   * g MAP<INT,INT>"} gives {@code [a, b c, d`e, f, g]}.
   *
   * @param ddl the DDL text
   * @return the names as written (unquoted)
   * @throws IllegalArgumentException for empty text or a syntax error, as {@link #parse}
   */
  public static List<String> names(String ddl) {
    return split(ddl).stream().map(e -> e.name).toList();
  }

  /**
   * Writes columns as canonical DDL: {@code `order_id` INT, `amount` DECIMAL(18,2)}.
   *
   * @param columns the columns
   * @return the DDL text; empty for no columns
   */
  public static String format(List<ColumnSpec> columns) {
    Objects.requireNonNull(columns, "columns");
    StringBuilder out = new StringBuilder();
    for (ColumnSpec column : columns) {
      if (out.length() > 0) {
        out.append(", ");
      }
      out.append(column.toDdl());
    }
    return out.toString();
  }

  private static OutputType type(Entry entry) {
    if (COMPLEX_TYPE.matcher(entry.type).matches()) {
      throw new IllegalArgumentException(
          "Column '"
              + entry.name
              + "' has the complex type "
              + entry.type
              + "; 'columns' takes scalar types only (STRUCT, MAP and ARRAY are not supported)");
    }
    try {
      return OutputType.parse(entry.type);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "Column '" + entry.name + "' in 'columns': " + e.getMessage(), e);
    }
  }

  private static final class Entry {
    final String name;
    final String type;

    Entry(String name, String type) {
      this.name = name;
      this.type = type;
    }
  }

  private static List<Entry> split(String ddl) {
    if (ddl == null || ddl.isBlank()) {
      throw new IllegalArgumentException("'columns' is empty");
    }
    List<Entry> entries = new ArrayList<>();
    int n = ddl.length();
    int i = 0;
    while (true) {
      i = skipWhitespace(ddl, i);
      if (i >= n || ddl.charAt(i) == ',') {
        throw new IllegalArgumentException("Invalid 'columns': an entry is empty in '" + ddl + "'");
      }
      String name;
      if (ddl.charAt(i) == '`') {
        StringBuilder quoted = new StringBuilder();
        int j = i + 1;
        while (true) {
          if (j >= n) {
            throw new IllegalArgumentException(
                "Invalid 'columns': unterminated backtick quote in '" + ddl + "'");
          }
          char c = ddl.charAt(j);
          if (c == '`') {
            if (j + 1 < n && ddl.charAt(j + 1) == '`') {
              quoted.append('`');
              j += 2;
              continue;
            }
            j++;
            break;
          }
          quoted.append(c);
          j++;
        }
        name = quoted.toString();
        if (name.isEmpty()) {
          throw new IllegalArgumentException(
              "Invalid 'columns': an empty column name (``) in '" + ddl + "'");
        }
        i = j;
      } else {
        int j = i;
        while (j < n
            && !Character.isWhitespace(ddl.charAt(j))
            && ddl.charAt(j) != ':'
            && ddl.charAt(j) != ',') {
          j++;
        }
        name = ddl.substring(i, j);
        if (!UNQUOTED_NAME.matcher(name).matches()) {
          throw new IllegalArgumentException(
              "Invalid 'columns': column name '"
                  + name
                  + "' has characters other than letters, digits and underscores;"
                  + " quote it with backticks");
        }
        i = j;
      }
      i = skipWhitespace(ddl, i);
      if (i < n && ddl.charAt(i) == ':') {
        i++;
      }
      int start = i;
      int depth = 0;
      boolean inQuote = false;
      while (i < n) {
        char c = ddl.charAt(i);
        if (inQuote) {
          if (c == '`') {
            inQuote = false;
          }
        } else if (c == '`') {
          inQuote = true;
        } else if (c == '<' || c == '(') {
          depth++;
        } else if (c == '>' || c == ')') {
          depth--;
          if (depth < 0) {
            break;
          }
        } else if (c == ',' && depth == 0) {
          break;
        }
        i++;
      }
      String type = ddl.substring(start, Math.min(i, n)).strip();
      if (depth != 0 || inQuote) {
        throw new IllegalArgumentException(
            "Invalid 'columns': unbalanced brackets or quotes in the type of column '"
                + name
                + "' in '"
                + ddl
                + "'");
      }
      if (type.isEmpty()) {
        throw new IllegalArgumentException("Column '" + name + "' has no type in 'columns'");
      }
      entries.add(new Entry(name, type));
      if (i >= n) {
        return entries;
      }
      i++; // the comma
    }
  }

  private static int skipWhitespace(String text, int i) {
    while (i < text.length() && Character.isWhitespace(text.charAt(i))) {
      i++;
    }
    return i;
  }
}
