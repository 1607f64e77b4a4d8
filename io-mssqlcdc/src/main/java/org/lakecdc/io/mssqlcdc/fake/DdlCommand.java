package org.lakecdc.io.mssqlcdc.fake;

import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.lakecdc.io.mssqlcdc.schema.SqlServerType;

/**
 * What a DDL command text does to a table's columns, as far as the fake models it: {@code ADD
 * <column> <type>}, {@code DROP COLUMN <column>} and {@code ALTER COLUMN <column> <type>} (one
 * column per command; names bare or in brackets), the type optionally followed by {@code COLLATE
 * <name>} ({@link #collation}, null when absent). Any other command is only recorded in {@code
 * cdc.ddl_history}.
 */
record DdlCommand(Kind kind, String column, SqlServerType type, String collation) {
  enum Kind {
    ADD_COLUMN,
    DROP_COLUMN,
    ALTER_COLUMN,
    OTHER
  }

  private static final String NAME = "(\\[(?:[^\\]]|\\]\\])+\\]|[A-Za-z_@#][\\w@#$]*)";
  private static final String TYPE =
      "([A-Za-z][A-Za-z0-9_]*(?:\\s*\\(\\s*(?:max|\\d+)\\s*(?:,\\s*\\d+\\s*)?\\))?)"
          + "(?:\\s+COLLATE\\s+([A-Za-z0-9_]+))?";

  private static final Pattern DROP =
      Pattern.compile(
          "\\bDROP\\s+COLUMN\\s+(?:IF\\s+EXISTS\\s+)?" + NAME, Pattern.CASE_INSENSITIVE);
  private static final Pattern ALTER =
      Pattern.compile("\\bALTER\\s+COLUMN\\s+" + NAME + "\\s+" + TYPE, Pattern.CASE_INSENSITIVE);
  private static final Pattern ADD =
      Pattern.compile(
          "\\bADD\\s+(?:COLUMN\\s+)?"
              + "(?!(?:CONSTRAINT|PRIMARY|UNIQUE|FOREIGN|CHECK|DEFAULT|INDEX|PERIOD)\\b)"
              + NAME
              + "\\s+"
              + TYPE,
          Pattern.CASE_INSENSITIVE);

  /** Recognises the column effect of a command. */
  static DdlCommand parse(String command) {
    Matcher m = DROP.matcher(command);
    if (m.find()) {
      return new DdlCommand(Kind.DROP_COLUMN, unquote(m.group(1)), null, null);
    }
    m = ALTER.matcher(command);
    if (m.find()) {
      return new DdlCommand(
          Kind.ALTER_COLUMN, unquote(m.group(1)), SqlServerType.parse(m.group(2)), m.group(3));
    }
    m = ADD.matcher(command);
    if (m.find()) {
      return new DdlCommand(
          Kind.ADD_COLUMN, unquote(m.group(1)), SqlServerType.parse(m.group(2)), m.group(3));
    }
    return new DdlCommand(Kind.OTHER, null, null, null);
  }

  /** {@code [a]]b]} → {@code a]b}; a bare name stays. */
  static String unquote(String name) {
    if (name.startsWith("[") && name.endsWith("]")) {
      return name.substring(1, name.length() - 1).replace("]]", "]");
    }
    return name;
  }

  /** {@code a]b} → {@code [a]]b]}. */
  static String quote(String name) {
    return "[" + name.replace("]", "]]") + "]";
  }

  /**
   * The command text the typed helpers record, e.g. {@code ALTER TABLE [dbo].[orders] ADD [note]
   * varchar(100)}.
   */
  static String text(Catalog.Table table, Kind kind, String column, SqlServerType type) {
    String prefix = "ALTER TABLE " + quote(table.schema) + "." + quote(table.name) + " ";
    switch (kind) {
      case ADD_COLUMN:
        return prefix + "ADD " + quote(column) + " " + type.toString().toLowerCase(Locale.ROOT);
      case DROP_COLUMN:
        return prefix + "DROP COLUMN " + quote(column);
      case ALTER_COLUMN:
        return prefix + "ALTER COLUMN " + quote(column) + " " + type;
      default:
        throw new IllegalArgumentException("No command text for " + kind);
    }
  }
}
