package org.lakecdc.io.mssqlcdc.fake;

import java.text.CollationKey;
import java.text.Collator;
import java.text.Normalizer;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Pattern;
import org.lakecdc.io.mssqlcdc.schema.SqlServerType;

/**
 * How the fake compares the values of a character column, as SQL Server does under the column's
 * collation (docs/fake-format.md "Collations"). The collation is known by its SQL Server name; the
 * fake reads only the name's comparison flags:
 *
 * <ul>
 *   <li>{@code _BIN} or {@code _BIN2}: UTF-16 code unit order ({@link String#compareTo}); SQL
 *       Server's {@code _BIN2} order for {@code nvarchar}, and for {@code varchar} wherever the
 *       code page and Unicode agree (ASCII). {@code _BIN} is modelled as {@code _BIN2}.
 *   <li>otherwise {@code _CI}/{@code _CS} (case-insensitive/-sensitive) and {@code _AI}/{@code _AS}
 *       (accent-insensitive/-sensitive), both required: the JDK's root-locale {@link Collator} at
 *       strength {@link Collator#SECONDARY} (case-insensitive) or {@link Collator#TERTIARY}
 *       (case-sensitive, lower case first), with canonical decomposition; accent-insensitive
 *       collations first drop every combining mark of the value's NFD form ({@code 'é' = 'e'}).
 *       Strength {@link Collator#PRIMARY} is not used: the JDK ignores spaces and hyphens there
 *       ({@code 'a b' = 'ab'}), which no SQL Server collation does.
 * </ul>
 *
 * <p>Under every collation trailing spaces (U+0020) do not count, as SQL Server pads the shorter
 * value with spaces before comparing: {@code 'ab' = 'ab '}. Values keep their stored form; only
 * comparisons use the collation. Immutable and thread-safe.
 */
final class Collation {
  /** SQL Server's default collation of a new install (US English): the fake's default too. */
  static final String DEFAULT_NAME = "SQL_Latin1_General_CP1_CI_AS";

  /** The types that have a collation. */
  private static final Set<String> CHARACTER_TYPES =
      Set.of("char", "varchar", "nchar", "nvarchar", "text", "ntext", "sysname");

  private static final Pattern NAME = Pattern.compile("[A-Za-z0-9]+(?:_[A-Za-z0-9]+)*");
  private static final Pattern COMBINING_MARKS = Pattern.compile("\\p{M}+");

  /** {@link #DEFAULT_NAME} (after the patterns {@link #parse} uses). */
  static final Collation DEFAULT = parse(DEFAULT_NAME);

  private final String name;
  private final boolean binary;
  private final boolean caseSensitive;
  private final boolean accentSensitive;

  /** The JDK collator of a non-binary collation (its own instance: compares are synchronized). */
  private final Collator collator;

  private Collation(String name, boolean binary, boolean caseSensitive, boolean accentSensitive) {
    this.name = name;
    this.binary = binary;
    this.caseSensitive = caseSensitive;
    this.accentSensitive = accentSensitive;
    if (binary) {
      this.collator = null;
    } else {
      Collator c = Collator.getInstance(Locale.ROOT);
      c.setDecomposition(Collator.CANONICAL_DECOMPOSITION);
      c.setStrength(caseSensitive ? Collator.TERTIARY : Collator.SECONDARY);
      this.collator = c;
    }
  }

  /**
   * The collation of a SQL Server collation name, e.g. {@code SQL_Latin1_General_CP1_CI_AS}, {@code
   * Latin1_General_100_CS_AS_SC_UTF8}, {@code Latin1_General_BIN2}.
   *
   * @param name the collation name; its flags are matched ignoring case
   * @return the collation, named as given
   * @throws IllegalArgumentException when the name has neither {@code _BIN}/{@code _BIN2} nor both
   *     a {@code _CI}/{@code _CS} and an {@code _AI}/{@code _AS} part
   */
  static Collation parse(String name) {
    if (name == null || !NAME.matcher(name).matches()) {
      throw unknown(name);
    }
    Boolean caseSensitive = null;
    Boolean accentSensitive = null;
    boolean binary = false;
    String[] parts = name.toUpperCase(Locale.ROOT).split("_");
    for (int i = 1; i < parts.length; i++) {
      switch (parts[i]) {
        case "BIN":
        case "BIN2":
          binary = true;
          break;
        case "CI":
          caseSensitive = caseSensitive == null ? Boolean.FALSE : null;
          break;
        case "CS":
          caseSensitive = caseSensitive == null ? Boolean.TRUE : null;
          break;
        case "AI":
          accentSensitive = accentSensitive == null ? Boolean.FALSE : null;
          break;
        case "AS":
          accentSensitive = accentSensitive == null ? Boolean.TRUE : null;
          break;
        default:
          break;
      }
    }
    if (binary) {
      return new Collation(name, true, true, true);
    }
    if (caseSensitive == null || accentSensitive == null) {
      throw unknown(name);
    }
    return new Collation(name, false, caseSensitive, accentSensitive);
  }

  private static IllegalArgumentException unknown(String name) {
    return new IllegalArgumentException(
        "Collation '"
            + name
            + "' is not understood by the fake: give a SQL Server collation name with _CI or _CS"
            + " and _AI or _AS (e.g. SQL_Latin1_General_CP1_CI_AS), or one ending _BIN or _BIN2");
  }

  /** True when values of this type have a collation ({@code char}, {@code nvarchar}, ...). */
  static boolean applies(SqlServerType type) {
    return CHARACTER_TYPES.contains(type.name());
  }

  /**
   * The collation a column of {@code type} declared with {@code name} has.
   *
   * @param column the column name, for messages
   * @param name the declared collation name, or null for {@link #DEFAULT} (character types) or none
   *     (other types)
   * @return the collation, or null for a type without one
   * @throws IllegalArgumentException for a name on a type without collation, or an unknown name
   */
  static Collation of(String column, SqlServerType type, String name) {
    if (!applies(type)) {
      if (name != null) {
        throw new IllegalArgumentException(
            "Column '"
                + column
                + "' ("
                + type
                + ") cannot have collation '"
                + name
                + "': only char, varchar, nchar, nvarchar, text, ntext and sysname columns have one");
      }
      return null;
    }
    return name == null ? DEFAULT : parse(name);
  }

  /** The name, as declared. */
  String name() {
    return name;
  }

  boolean binary() {
    return binary;
  }

  boolean caseSensitive() {
    return caseSensitive;
  }

  boolean accentSensitive() {
    return accentSensitive;
  }

  /**
   * The form two values are compared in: {@link String} for a binary collation, {@link
   * CollationKey} otherwise. Two values are equal under the collation exactly when their sort keys
   * are {@link Object#equals equal}, and sort keys order as the values do, with equal hash codes
   * for equal keys.
   */
  Comparable<?> sortKey(String value) {
    String padded = stripTrailingSpaces(value);
    if (binary) {
      return padded;
    }
    if (!accentSensitive) {
      padded =
          COMBINING_MARKS.matcher(Normalizer.normalize(padded, Normalizer.Form.NFD)).replaceAll("");
    }
    return collator.getCollationKey(padded);
  }

  /** Compares two values under this collation: negative, zero or positive. */
  @SuppressWarnings({"unchecked", "rawtypes"})
  int compare(String a, String b) {
    return ((Comparable) sortKey(a)).compareTo(sortKey(b));
  }

  private static String stripTrailingSpaces(String value) {
    int end = value.length();
    while (end > 0 && value.charAt(end - 1) == ' ') {
      end--;
    }
    return end == value.length() ? value : value.substring(0, end);
  }

  @Override
  public String toString() {
    return name;
  }
}
