package org.lakecdc.io.mssqlcdc.client;

import java.util.Locale;
import java.util.regex.Pattern;

/**
 * The one validator of everything the T-SQL client inlines into a statement (docs/sql-server.md
 * "Identifiers in statements"): capture instance names, schema, table and column names, time-zone
 * names, SQL type names and collations. Values that pass are bracket-quoted ({@link
 * #quote(String)}) or inlined as validated literals; everything else (LSNs, key bounds, capture
 * instance names given to CDC procedures) is bound as a parameter.
 *
 * <p>Every check throws {@link IllegalArgumentException} whose message starts with what was invalid
 * ({@code Invalid capture instance}, {@code Invalid column name}, {@code Invalid sourceTimeZone},
 * {@code Invalid SQL type}, {@code Invalid collation}) and names the value, so an injection attempt
 * is refused before any statement is built (docs/scenarios.md C228).
 */
public final class SqlIdentifiers {
  /**
   * The longest capture instance name SQL Server accepts: {@code sys.sp_cdc_enable_table} limits
   * {@code @capture_instance} to 100 characters so that {@code <name>_CT} fits a {@code sysname}.
   */
  public static final int MAX_CAPTURE_INSTANCE_LENGTH = 100;

  /** The longest identifier SQL Server accepts ({@code sysname} is {@code nvarchar(128)}). */
  public static final int MAX_NAME_LENGTH = 128;

  /** A Windows time-zone name as {@code sys.time_zone_info} lists them, or {@code UTC}. */
  private static final Pattern TIME_ZONE = Pattern.compile("[A-Za-z0-9 ._+\\-/()]+");

  /** A collation name ({@code sys.fn_helpcollations()}): ASCII letters, digits, underscores. */
  private static final Pattern COLLATION = Pattern.compile("[A-Za-z0-9_]+");

  /**
   * A type a key bound is cast to: a lower-case base type name, an optional {@code (max)}, {@code
   * (n)} or {@code (p,s)}, and for character types an optional {@code COLLATE <collation>}.
   */
  private static final Pattern SQL_TYPE =
      Pattern.compile(
          "[a-z][a-z0-9_]*(\\((max|\\d{1,4}|\\d{1,2},\\d{1,2})\\))?( COLLATE [A-Za-z0-9_]+)?");

  private SqlIdentifiers() {}

  /**
   * Checks a capture instance name: non-empty, at most {@value #MAX_CAPTURE_INSTANCE_LENGTH}
   * characters, no {@code ]}, no control characters. Unicode letters are allowed ({@code
   * dbo_Situação} is a valid name).
   *
   * @param name the capture instance name
   * @return {@code name}
   * @throws IllegalArgumentException {@code Invalid capture instance: '<name>' (...)}
   */
  public static String captureInstance(String name) {
    if (name == null
        || name.isEmpty()
        || name.length() > MAX_CAPTURE_INSTANCE_LENGTH
        || name.indexOf(']') >= 0
        || hasControlCharacter(name)) {
      throw new IllegalArgumentException(
          "Invalid capture instance: '"
              + printable(name)
              + "' (a capture instance name is 1 to "
              + MAX_CAPTURE_INSTANCE_LENGTH
              + " characters, without ']' or control characters)");
    }
    return name;
  }

  /**
   * Checks a schema, table or column name: non-empty, at most {@value #MAX_NAME_LENGTH} characters,
   * no {@code ]}, no control characters.
   *
   * @param name the name
   * @return {@code name}
   * @throws IllegalArgumentException {@code Invalid column name: '<name>' (...)}
   */
  public static String name(String name) {
    if (name == null
        || name.isEmpty()
        || name.length() > MAX_NAME_LENGTH
        || name.indexOf(']') >= 0
        || hasControlCharacter(name)) {
      throw new IllegalArgumentException(
          "Invalid column name: '"
              + printable(name)
              + "' (schema, table and column names are 1 to "
              + MAX_NAME_LENGTH
              + " characters, without ']' or control characters)");
    }
    return name;
  }

  /**
   * Bracket-quotes a schema, table or column name after {@link #name(String)} checked it: {@code
   * order id} becomes {@code [order id]}.
   *
   * @param name the name
   * @return the quoted identifier
   * @throws IllegalArgumentException when the name is invalid
   */
  public static String quote(String name) {
    return "[" + name(name) + "]";
  }

  /**
   * The change table of a capture instance as T-SQL names it: {@code cdc.[<name>_CT]}.
   *
   * @param captureInstance the capture instance name
   * @return {@code cdc.[<captureInstance>_CT]}
   * @throws IllegalArgumentException when the name is invalid
   */
  public static String changeTable(String captureInstance) {
    return "cdc.[" + captureInstance(captureInstance) + "_CT]";
  }

  /**
   * Checks a time-zone name (a Windows zone name such as {@code E. South America Standard Time}, or
   * {@code UTC}) against {@code ^[A-Za-z0-9 ._+\-/()]+$}; a name detected from the server passes
   * the same check before it is inlined.
   *
   * @param zone the zone name
   * @return {@code zone}
   * @throws IllegalArgumentException {@code Invalid sourceTimeZone: '<zone>' (...)}
   */
  public static String timeZone(String zone) {
    if (zone == null || !TIME_ZONE.matcher(zone).matches()) {
      throw new IllegalArgumentException(
          "Invalid sourceTimeZone: '"
              + printable(zone)
              + "' (expected auto, UTC or a Windows time-zone name such as 'E. South America"
              + " Standard Time', letters, digits, spaces and . _ + - / ( ) only)");
    }
    return zone;
  }

  /**
   * A time-zone name as an {@code nvarchar} literal, {@code N'<zone>'}, after {@link
   * #timeZone(String)} checked it (the pattern admits no quote).
   *
   * @param zone the zone name
   * @return the literal
   * @throws IllegalArgumentException when the name is invalid
   */
  public static String timeZoneLiteral(String zone) {
    return "N'" + timeZone(zone) + "'";
  }

  /**
   * Checks a SQL type a key bound is cast to, e.g. {@code int}, {@code decimal(18,2)}, {@code
   * varchar(20) COLLATE Latin1_General_CI_AS}, {@code nvarchar(max)}.
   *
   * @param type the type text
   * @return {@code type}
   * @throws IllegalArgumentException {@code Invalid SQL type: '<type>'}
   */
  public static String sqlType(String type) {
    if (type == null || !SQL_TYPE.matcher(type).matches()) {
      throw new IllegalArgumentException(
          "Invalid SQL type: '"
              + printable(type)
              + "' (expected a lower-case type name, optional (max), (n) or (p,s) and COLLATE"
              + " <collation>)");
    }
    return type;
  }

  /**
   * Checks a collation name against {@code ^[A-Za-z0-9_]+$} (ASCII only).
   *
   * @param collation the collation name, e.g. {@code Latin1_General_CI_AS}
   * @return {@code collation}
   * @throws IllegalArgumentException {@code Invalid collation: '<collation>'}
   */
  public static String collation(String collation) {
    if (collation == null || !COLLATION.matcher(collation).matches()) {
      throw new IllegalArgumentException(
          "Invalid collation: '" + printable(collation) + "' (ASCII letters, digits and _ only)");
    }
    return collation;
  }

  /**
   * A database user name for a message such as the GRANT the client prints: bracket-quoted with
   * {@code ]} doubled, as T-SQL's {@code QUOTENAME} does.
   *
   * @param user the user name, as {@code USER_NAME()} returns it
   * @return the quoted name
   */
  public static String quoteUser(String user) {
    return "[" + user.replace("]", "]]") + "]";
  }

  private static boolean hasControlCharacter(String s) {
    return s.codePoints().anyMatch(Character::isISOControl);
  }

  /** The value with control characters shown as {@code \\uXXXX}, so the message stays one line. */
  private static String printable(String s) {
    if (s == null) {
      return "null";
    }
    StringBuilder out = new StringBuilder();
    s.codePoints()
        .forEach(
            c -> {
              if (Character.isISOControl(c)) {
                out.append(String.format(Locale.ROOT, "\\u%04X", c));
              } else {
                out.appendCodePoint(c);
              }
            });
    return out.toString();
  }
}
