package org.lakecdc.io.mssqlcdc.client;

import java.math.BigDecimal;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import org.lakecdc.io.mssqlcdc.schema.SqlServerType;

/**
 * Builds the WHERE conditions of a key-range read {@code lower <= (k1..kn) < upper} of a source
 * table as disjoint pieces SQL Server can seek (docs/architecture.md "Data flow"): each piece has
 * equalities on leading key columns and one range on the next; their {@code UNION ALL} holds every
 * row of the range exactly once.
 *
 * <p>Tuples compare column by column with NULL first, as {@code ORDER BY} sorts. For a NULL bound
 * value, {@code =} is {@code IS NULL}, {@code >} is {@code IS NOT NULL}, {@code >=} always holds
 * and {@code <} never does; {@code < x} for a non-NULL x also takes NULL ({@code (k < x OR k IS
 * NULL)}). With p leading values equal in both bounds, from {@code (x, y)} to {@code (u, v)} the
 * pieces are {@code a = x AND b >= y}, {@code a > x AND a < u}, {@code a = u AND b < v}
 * (generalised to n columns). Under a case-insensitive collation two bounds can differ in Java and
 * be equal in SQL Server, so the lower pieces also require {@code (keys) < upper} and the upper
 * pieces {@code k(p+1) > x(p+1)}: every row still comes once.
 *
 * <p>Bound values are parameters bound as text and cast to the key's declared type: {@code CAST(?
 * AS <type>)}, {@code CAST(? COLLATE <collation> AS <type>)} for character keys (so the code page
 * is the column's), {@code CONVERT(<type>, ?, 1)} from {@code 0x} hex for binary keys. Text forms:
 * {@code datetime}/{@code smalldatetime} ISO-8601 with milliseconds, {@code datetime2} with 7
 * fractional digits, {@code datetimeoffset} ISO-8601 at {@code +00:00}, decimals in plain notation,
 * bit as 1/0, others their string form.
 */
final class KeyRangeSql {
  private static final DateTimeFormatter DATETIME =
      DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSS", Locale.ROOT);
  private static final DateTimeFormatter DATETIME2 =
      DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSSSSSS", Locale.ROOT);

  private KeyRangeSql() {}

  /**
   * A key column with what its bounds are cast to.
   *
   * @param name the column name (checked)
   * @param baseType the base type, lower case ({@code TYPE_NAME(system_type_id)})
   * @param declaredType the type a bound is cast to, e.g. {@code decimal(18,2)} (checked)
   * @param collation the column's collation for character types, else null (checked)
   */
  record KeyColumn(String name, String baseType, String declaredType, String collation) {
    KeyColumn {
      SqlIdentifiers.name(name);
      SqlIdentifiers.sqlType(declaredType);
      if (collation != null) {
        SqlIdentifiers.collation(collation);
      }
    }

    /**
     * The key column of a {@code sys.columns} row.
     *
     * @param name the column name
     * @param baseType {@code TYPE_NAME(system_type_id)}
     * @param maxLength {@code max_length} in bytes, -1 for {@code (max)}
     * @param precision {@code precision}
     * @param scale {@code scale}
     * @param collation {@code collation_name}, null for non-character types
     * @throws IllegalArgumentException when bounds cannot be cast to the type
     */
    static KeyColumn of(
        String name, String baseType, int maxLength, int precision, int scale, String collation) {
      String base = baseType.toLowerCase(Locale.ROOT);
      if (!SqlServerType.boundCastable(base)) {
        throw new IllegalArgumentException(
            "Key column '" + name + "' has type " + base + ", which key bounds cannot be cast to");
      }
      String declared;
      switch (base) {
        case "char", "varchar", "binary", "varbinary" ->
            declared = base + "(" + (maxLength < 0 ? "max" : Integer.toString(maxLength)) + ")";
        case "nchar", "nvarchar" ->
            declared = base + "(" + (maxLength < 0 ? "max" : Integer.toString(maxLength / 2)) + ")";
        case "decimal", "numeric" -> declared = base + "(" + precision + "," + scale + ")";
        case "datetime2", "datetimeoffset", "time" -> declared = base + "(" + scale + ")";
        default -> declared = base;
      }
      boolean character = base.endsWith("char");
      if (character && collation == null) {
        throw new IllegalArgumentException(
            "Key column '" + name + "' has no collation in sys.columns; it cannot be ranged");
      }
      return new KeyColumn(name, base, declared, character ? collation : null);
    }

    /** The parameter cast to the declared type. */
    String cast() {
      if (baseType.equals("binary") || baseType.equals("varbinary")) {
        return "CONVERT(" + declaredType + ", ?, 1)";
      }
      if (collation != null) {
        return "CAST(? COLLATE " + collation + " AS " + declaredType + ")";
      }
      return "CAST(? AS " + declaredType + ")";
    }

    /** The text a bound value is bound as. */
    String text(Object value) {
      if (value instanceof Boolean) {
        return ((Boolean) value) ? "1" : "0";
      }
      if (value instanceof BigDecimal) {
        return ((BigDecimal) value).toPlainString();
      }
      if (value instanceof LocalDateTime) {
        return (baseType.equals("datetime2") ? DATETIME2 : DATETIME).format((LocalDateTime) value);
      }
      if (value instanceof Instant) {
        return DATETIME2.format(LocalDateTime.ofInstant((Instant) value, ZoneOffset.UTC))
            + "+00:00";
      }
      if (value instanceof LocalDate) {
        return value.toString();
      }
      if (value instanceof byte[]) {
        return "0x" + HexFormat.of().withUpperCase().formatHex((byte[]) value);
      }
      return value.toString();
    }
  }

  /**
   * One piece: its WHERE condition ({@code ""} for the whole table) and parameter texts.
   *
   * @param where the condition
   * @param parameters the texts bound to its {@code ?}s, in order
   */
  record Piece(String where, List<String> parameters) {}

  /** A condition with its parameters; null condition = always true. */
  private record Condition(String sql, List<String> parameters) {
    static final Condition TRUE = new Condition(null, List.of());
  }

  /**
   * The pieces of a key range.
   *
   * @param keys the key columns, at least one
   * @param lower the first key tuple (inclusive), empty for the start of the table (NULL keys too)
   * @param upper the first key tuple after the range, empty for the end of the table
   * @return the disjoint pieces; empty when the range holds no key ({@code lower == upper})
   * @throws IllegalArgumentException when a bound has the wrong number of values
   */
  static List<Piece> pieces(
      List<KeyColumn> keys, Optional<List<Object>> lower, Optional<List<Object>> upper) {
    int n = keys.size();
    if (n == 0) {
      throw new IllegalArgumentException("A key range needs at least one key column");
    }
    lower.ifPresent(b -> checkSize(keys, b));
    upper.ifPresent(b -> checkSize(keys, b));
    List<List<Condition>> pieces = new ArrayList<>();
    if (lower.isEmpty() && upper.isEmpty()) {
      return List.of(new Piece("", List.of()));
    }
    if (lower.isEmpty()) {
      List<Object> u = upper.get();
      for (int j = 0; j < n; j++) {
        List<Condition> piece = equalities(keys, u, j);
        piece.add(less(keys.get(j), u.get(j)));
        pieces.add(piece);
      }
    } else if (upper.isEmpty()) {
      List<Object> x = lower.get();
      for (int j = n - 1; j >= 0; j--) {
        List<Condition> piece = equalities(keys, x, j);
        piece.add(j == n - 1 ? atLeast(keys.get(j), x.get(j)) : greater(keys.get(j), x.get(j)));
        pieces.add(piece);
      }
    } else {
      List<Object> x = lower.get();
      List<Object> u = upper.get();
      int p = 0;
      while (p < n && same(x.get(p), u.get(p))) {
        p++;
      }
      if (p == n) {
        return List.of();
      }
      Condition belowUpper = tupleLess(keys, u);
      for (int j = n - 1; j >= p + 1; j--) {
        List<Condition> piece = equalities(keys, x, j);
        piece.add(j == n - 1 ? atLeast(keys.get(j), x.get(j)) : greater(keys.get(j), x.get(j)));
        piece.add(belowUpper);
        pieces.add(piece);
      }
      List<Condition> middle = equalities(keys, x, p);
      middle.add(p == n - 1 ? atLeast(keys.get(p), x.get(p)) : greater(keys.get(p), x.get(p)));
      middle.add(less(keys.get(p), u.get(p)));
      pieces.add(middle);
      Condition aboveLower = greater(keys.get(p), x.get(p));
      for (int j = p + 1; j <= n - 1; j++) {
        List<Condition> piece = equalities(keys, u, j);
        piece.add(less(keys.get(j), u.get(j)));
        piece.add(aboveLower);
        pieces.add(piece);
      }
    }
    List<Piece> out = new ArrayList<>();
    for (List<Condition> piece : pieces) {
      combine(piece).ifPresent(out::add);
    }
    return out;
  }

  private static void checkSize(List<KeyColumn> keys, List<Object> bound) {
    if (bound.size() != keys.size()) {
      throw new IllegalArgumentException(
          "A key bound needs " + keys.size() + " value(s), got " + bound.size());
    }
  }

  /** {@code k1 = v1 AND ... AND k(count) = v(count)}. */
  private static List<Condition> equalities(List<KeyColumn> keys, List<Object> values, int count) {
    List<Condition> out = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      out.add(equal(keys.get(i), values.get(i)));
    }
    return out;
  }

  private static Condition equal(KeyColumn k, Object v) {
    String column = SqlIdentifiers.quote(k.name());
    return v == null
        ? new Condition(column + " IS NULL", List.of())
        : new Condition(column + " = " + k.cast(), List.of(k.text(v)));
  }

  private static Condition greater(KeyColumn k, Object v) {
    String column = SqlIdentifiers.quote(k.name());
    return v == null
        ? new Condition(column + " IS NOT NULL", List.of())
        : new Condition(column + " > " + k.cast(), List.of(k.text(v)));
  }

  private static Condition atLeast(KeyColumn k, Object v) {
    return v == null
        ? Condition.TRUE
        : new Condition(SqlIdentifiers.quote(k.name()) + " >= " + k.cast(), List.of(k.text(v)));
  }

  /** {@code k < v} with NULL first; null when it never holds ({@code v} NULL). */
  private static Condition less(KeyColumn k, Object v) {
    if (v == null) {
      return null;
    }
    String column = SqlIdentifiers.quote(k.name());
    return new Condition(
        "(" + column + " < " + k.cast() + " OR " + column + " IS NULL)", List.of(k.text(v)));
  }

  /** {@code (k1..kn) < (u1..un)} as one condition; null when it never holds. */
  private static Condition tupleLess(List<KeyColumn> keys, List<Object> u) {
    List<String> terms = new ArrayList<>();
    List<String> parameters = new ArrayList<>();
    for (int j = 0; j < keys.size(); j++) {
      List<Condition> term = equalities(keys, u, j);
      term.add(less(keys.get(j), u.get(j)));
      Optional<Piece> combined = combine(term);
      if (combined.isPresent()) {
        terms.add("(" + combined.get().where() + ")");
        parameters.addAll(combined.get().parameters());
      }
    }
    return terms.isEmpty()
        ? null
        : new Condition("(" + String.join(" OR ", terms) + ")", parameters);
  }

  /** The AND of conditions; empty when one never holds. */
  private static Optional<Piece> combine(List<Condition> conditions) {
    List<String> sql = new ArrayList<>();
    List<String> parameters = new ArrayList<>();
    for (Condition c : conditions) {
      if (c == null) {
        return Optional.empty();
      }
      if (c.sql() != null) {
        sql.add(c.sql());
        parameters.addAll(c.parameters());
      }
    }
    return Optional.of(new Piece(String.join(" AND ", sql), parameters));
  }

  private static boolean same(Object a, Object b) {
    if (a instanceof byte[] && b instanceof byte[]) {
      return Arrays.equals((byte[]) a, (byte[]) b);
    }
    if (a instanceof BigDecimal && b instanceof BigDecimal) {
      return ((BigDecimal) a).compareTo((BigDecimal) b) == 0;
    }
    return Objects.equals(a, b);
  }
}
