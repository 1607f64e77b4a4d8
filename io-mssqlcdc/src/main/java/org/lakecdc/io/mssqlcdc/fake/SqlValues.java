package org.lakecdc.io.mssqlcdc.fake;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.BooleanNode;
import com.fasterxml.jackson.databind.node.DoubleNode;
import com.fasterxml.jackson.databind.node.FloatNode;
import com.fasterxml.jackson.databind.node.IntNode;
import com.fasterxml.jackson.databind.node.LongNode;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.ShortNode;
import com.fasterxml.jackson.databind.node.TextNode;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.Month;
import java.time.OffsetDateTime;
import java.time.Year;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.Arrays;
import java.util.Base64;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import org.lakecdc.io.mssqlcdc.schema.SqlServerType;

/**
 * Values of SQL Server columns in the fake: checking and normalising what a test writes, the JSON
 * form in the directory, and the Java form a reader returns ({@link
 * org.lakecdc.io.mssqlcdc.client.ChangeRow} documents it).
 *
 * <p>Three forms of one value:
 *
 * <ul>
 *   <li><em>stored</em> (in memory in the writer): the reader's Java type, except that {@code
 *       datetimeoffset} keeps its offset as an {@link OffsetDateTime};
 *   <li><em>JSON</em>: numbers for integer, bit (true/false) and floating types; text for decimals
 *       ({@code "10.50"}), dates and times (ISO), {@code datetimeoffset} (ISO with offset), {@code
 *       uniqueidentifier} (upper case), strings; base64 for binary types;
 *   <li><em>read</em>: {@link #readerValue} of the stored form ({@code datetimeoffset} as a UTC
 *       {@link Instant}).
 * </ul>
 *
 * <p>Normalising follows SQL Server's assignment rules where they are cheap to model: decimals are
 * rounded half-up to the column's scale and fail on overflow, {@code char(n)}/{@code nchar(n)} are
 * padded with spaces and {@code binary(n)} with zero bytes, longer values than {@code (n)} fail
 * ("would be truncated"), integers must be in range. {@code datetime2(p)} fractions are kept as
 * given.
 */
final class SqlValues {
  /** The Java-side family of a SQL Server type. */
  enum Family {
    BOOLEAN,
    SHORT,
    INT,
    LONG,
    FLOAT,
    DOUBLE,
    DECIMAL,
    DATE,
    DATETIME,
    DATETIMEOFFSET,
    TIME,
    STRING,
    UUID,
    BINARY
  }

  private static final Map<String, Family> FAMILIES =
      Map.ofEntries(
          Map.entry("bit", Family.BOOLEAN),
          Map.entry("tinyint", Family.SHORT),
          Map.entry("smallint", Family.SHORT),
          Map.entry("int", Family.INT),
          Map.entry("bigint", Family.LONG),
          Map.entry("real", Family.FLOAT),
          Map.entry("float", Family.DOUBLE),
          Map.entry("decimal", Family.DECIMAL),
          Map.entry("numeric", Family.DECIMAL),
          Map.entry("money", Family.DECIMAL),
          Map.entry("smallmoney", Family.DECIMAL),
          Map.entry("date", Family.DATE),
          Map.entry("datetime", Family.DATETIME),
          Map.entry("datetime2", Family.DATETIME),
          Map.entry("smalldatetime", Family.DATETIME),
          Map.entry("datetimeoffset", Family.DATETIMEOFFSET),
          Map.entry("time", Family.TIME),
          Map.entry("char", Family.STRING),
          Map.entry("varchar", Family.STRING),
          Map.entry("nchar", Family.STRING),
          Map.entry("nvarchar", Family.STRING),
          Map.entry("text", Family.STRING),
          Map.entry("ntext", Family.STRING),
          Map.entry("xml", Family.STRING),
          Map.entry("sysname", Family.STRING),
          Map.entry("sql_variant", Family.STRING),
          Map.entry("uniqueidentifier", Family.UUID),
          Map.entry("binary", Family.BINARY),
          Map.entry("varbinary", Family.BINARY),
          Map.entry("image", Family.BINARY),
          Map.entry("timestamp", Family.BINARY),
          Map.entry("rowversion", Family.BINARY),
          Map.entry("hierarchyid", Family.BINARY),
          Map.entry("geography", Family.BINARY),
          Map.entry("geometry", Family.BINARY));

  private static final DateTimeFormatter LOCAL_DATE_TIME = DateTimeFormatter.ISO_LOCAL_DATE_TIME;
  private static final DateTimeFormatter OFFSET_DATE_TIME = DateTimeFormatter.ISO_OFFSET_DATE_TIME;

  private SqlValues() {}

  /**
   * The family of a type.
   *
   * @throws IllegalArgumentException for a type name the fake does not know
   */
  static Family family(SqlServerType type) {
    Family family = FAMILIES.get(type.name());
    if (family == null) {
      throw new IllegalArgumentException(
          "Unsupported SQL Server type '" + type + "'; the fake knows " + FAMILIES.keySet());
    }
    return family;
  }

  /** True for {@code text}, {@code ntext} and {@code image}: NULL in CDC operations 1 and 3. */
  static boolean isLegacyLob(SqlServerType type) {
    return type.name().equals("text") || type.name().equals("ntext") || type.name().equals("image");
  }

  /**
   * True for {@code varchar(max)}, {@code nvarchar(max)} and {@code varbinary(max)}: NULL in CDC
   * operation 3 unless the update changed the column.
   */
  static boolean isMaxLob(SqlServerType type) {
    return Integer.valueOf(-1).equals(type.precision())
        && (type.name().equals("varchar")
            || type.name().equals("nvarchar")
            || type.name().equals("varbinary"));
  }

  /**
   * Checks and normalises a value a test writes into its stored form.
   *
   * @param column the column name, for messages
   * @throws IllegalArgumentException when the value does not convert to the type, is out of range
   *     or too long
   */
  static Object normalize(String column, SqlServerType type, Object value) {
    return normalize(column, type, null, value);
  }

  /**
   * {@link #normalize(String, SqlServerType, Object)} with the type's family already looked up
   * ({@code family}), or null to look it up; the same value and the same errors.
   */
  private static Object normalize(String column, SqlServerType type, Family family, Object value) {
    if (value == null) {
      return null;
    }
    try {
      return normalizeNonNull(type, family == null ? family(type) : family, value);
    } catch (ArithmeticException | DateTimeParseException | IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "Column '"
              + column
              + "' ("
              + type
              + ") cannot take "
              + value.getClass().getSimpleName()
              + " value '"
              + display(value)
              + "': "
              + e.getMessage(),
          e);
    }
  }

  private static Object normalizeNonNull(SqlServerType type, Family family, Object value) {
    switch (family) {
      case BOOLEAN:
        if (value instanceof Boolean) {
          return value;
        }
        if (value instanceof Number || value instanceof String) {
          String text = value.toString().strip();
          if (text.equalsIgnoreCase("true")) {
            return Boolean.TRUE;
          }
          if (text.equalsIgnoreCase("false")) {
            return Boolean.FALSE;
          }
          return new BigDecimal(text).signum() != 0;
        }
        break;
      case SHORT:
        {
          long v = integral(value);
          long min = type.name().equals("tinyint") ? 0 : Short.MIN_VALUE;
          long max = type.name().equals("tinyint") ? 255 : Short.MAX_VALUE;
          checkRange(v, min, max, type);
          return (short) v;
        }
      case INT:
        {
          if (value instanceof Integer) {
            return value;
          }
          long v = integral(value);
          checkRange(v, Integer.MIN_VALUE, Integer.MAX_VALUE, type);
          return (int) v;
        }
      case LONG:
        return value instanceof Long ? value : integral(value);
      case FLOAT:
        if (value instanceof Number) {
          return ((Number) value).floatValue();
        }
        if (value instanceof String) {
          return Float.parseFloat(((String) value).strip());
        }
        break;
      case DOUBLE:
        if (value instanceof Number) {
          return ((Number) value).doubleValue();
        }
        if (value instanceof String) {
          return Double.parseDouble(((String) value).strip());
        }
        break;
      case DECIMAL:
        if (value instanceof Number || value instanceof String) {
          return decimal(type, value);
        }
        break;
      case DATE:
        if (value instanceof LocalDate) {
          return value;
        }
        if (value instanceof String) {
          return LocalDate.parse(((String) value).strip());
        }
        break;
      case DATETIME:
        if (value instanceof LocalDateTime) {
          return value;
        }
        if (value instanceof String) {
          return LocalDateTime.parse(((String) value).strip().replace(' ', 'T'));
        }
        break;
      case DATETIMEOFFSET:
        if (value instanceof OffsetDateTime) {
          return value;
        }
        if (value instanceof Instant) {
          return ((Instant) value).atOffset(ZoneOffset.UTC);
        }
        if (value instanceof ZonedDateTime) {
          return ((ZonedDateTime) value).toOffsetDateTime();
        }
        if (value instanceof String) {
          return OffsetDateTime.parse(((String) value).strip());
        }
        break;
      case TIME:
        if (value instanceof LocalTime) {
          return DateTimeFormatter.ISO_LOCAL_TIME.format((LocalTime) value);
        }
        if (value instanceof String) {
          return DateTimeFormatter.ISO_LOCAL_TIME.format(LocalTime.parse(((String) value).strip()));
        }
        break;
      case STRING:
        if (value instanceof CharSequence || value instanceof Character) {
          return sized(type, value.toString());
        }
        break;
      case UUID:
        if (value instanceof UUID || value instanceof String) {
          return UUID.fromString(value.toString().strip()).toString().toUpperCase(Locale.ROOT);
        }
        break;
      case BINARY:
        if (value instanceof byte[]) {
          return sized(type, ((byte[]) value).clone());
        }
        break;
      default:
        break;
    }
    throw new IllegalArgumentException("unsupported Java type for this column");
  }

  private static long integral(Object value) {
    if (value instanceof Integer || value instanceof Long || value instanceof Short) {
      return ((Number) value).longValue();
    }
    if (value instanceof Byte) {
      return (Byte) value;
    }
    if (value instanceof Number || value instanceof String) {
      return new BigDecimal(value.toString().strip()).longValueExact();
    }
    throw new IllegalArgumentException("not an integer");
  }

  private static void checkRange(long v, long min, long max, SqlServerType type) {
    if (v < min || v > max) {
      throw new IllegalArgumentException("Arithmetic overflow: " + v + " is outside " + type);
    }
  }

  private static BigDecimal decimal(SqlServerType type, Object value) {
    BigDecimal d =
        value instanceof BigDecimal ? (BigDecimal) value : new BigDecimal(value.toString().strip());
    int precision;
    int scale;
    if (type.name().equals("money")) {
      precision = 19;
      scale = 4;
    } else if (type.name().equals("smallmoney")) {
      precision = 10;
      scale = 4;
    } else {
      precision = type.precision() == null ? 18 : type.precision();
      scale = type.scale() == null ? 0 : type.scale();
    }
    BigDecimal scaled = d.setScale(scale, RoundingMode.HALF_UP);
    if (scaled.precision() - scaled.scale() > precision - scale) {
      throw new ArithmeticException("Arithmetic overflow converting " + d + " to " + type);
    }
    return scaled;
  }

  private static String sized(SqlServerType type, String text) {
    Integer length = type.precision();
    if (length == null || length < 0) {
      return text;
    }
    if (text.length() > length) {
      throw new IllegalArgumentException(
          "String or binary data would be truncated (" + text.length() + " > " + length + ")");
    }
    if (type.name().equals("char") || type.name().equals("nchar")) {
      return text + " ".repeat(length - text.length());
    }
    return text;
  }

  private static byte[] sized(SqlServerType type, byte[] bytes) {
    Integer length = type.precision();
    if (length == null || length < 0) {
      return bytes;
    }
    if (bytes.length > length) {
      throw new IllegalArgumentException(
          "String or binary data would be truncated (" + bytes.length + " > " + length + ")");
    }
    return type.name().equals("binary") ? Arrays.copyOf(bytes, length) : bytes;
  }

  /** The JSON form of a stored value. */
  static JsonNode toJson(SqlServerType type, Object stored) {
    if (stored == null) {
      return NullNode.getInstance();
    }
    switch (family(type)) {
      case BOOLEAN:
        return BooleanNode.valueOf((Boolean) stored);
      case SHORT:
        return ShortNode.valueOf((Short) stored);
      case INT:
        return IntNode.valueOf((Integer) stored);
      case LONG:
        return LongNode.valueOf((Long) stored);
      case FLOAT:
        return FloatNode.valueOf((Float) stored);
      case DOUBLE:
        return DoubleNode.valueOf((Double) stored);
      case DECIMAL:
        return TextNode.valueOf(((BigDecimal) stored).toPlainString());
      case DATE:
        return TextNode.valueOf(stored.toString());
      case DATETIME:
        return TextNode.valueOf(LOCAL_DATE_TIME.format((LocalDateTime) stored));
      case DATETIMEOFFSET:
        return TextNode.valueOf(OFFSET_DATE_TIME.format((OffsetDateTime) stored));
      case BINARY:
        return TextNode.valueOf(Base64.getEncoder().encodeToString((byte[]) stored));
      default:
        return TextNode.valueOf((String) stored);
    }
  }

  /**
   * Reads a JSON value into its stored form, leniently (an export may write a decimal as a number
   * or a bit as 0/1).
   *
   * @param column the column name, for messages
   * @throws IllegalArgumentException when the JSON value does not fit the type
   */
  static Object fromJson(String column, SqlServerType type, JsonNode node) {
    if (node == null || node.isNull() || node.isMissingNode()) {
      return null;
    }
    Family family = family(type);
    Object scalar;
    if (family == Family.BINARY) {
      try {
        scalar = Base64.getDecoder().decode(node.asText());
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException(
            "Column '" + column + "' (" + type + ") holds invalid base64 '" + node.asText() + "'",
            e);
      }
    } else if (family == Family.STRING || family == Family.TIME || family == Family.UUID) {
      scalar = node.asText();
    } else if (node.isBoolean()) {
      scalar = node.booleanValue();
    } else if (node.isIntegralNumber() && node.canConvertToLong()) {
      scalar = node.longValue();
    } else if (node.isNumber()) {
      scalar = node.decimalValue();
    } else {
      scalar = node.asText();
    }
    return normalize(column, type, scalar);
  }

  /**
   * {@link #fromJson} of a scalar a streaming parse already took out of the JSON: a {@link String}
   * (a JSON string), a {@link Long} (a JSON integer that fits a {@code long}) or a {@link Boolean};
   * null for JSON null. The same value and the same errors as {@link #fromJson} of the node those
   * tokens make, without building the node.
   *
   * @param column the column name, for messages
   * @param family {@link #family} of {@code type}, looked up once per column by the caller
   * @throws IllegalArgumentException when the value does not fit the type
   */
  static Object fromScalar(String column, SqlServerType type, Family family, Object scalar) {
    if (scalar == null) {
      return null;
    }
    if (family == Family.BINARY) {
      String text = scalar.toString();
      try {
        scalar = Base64.getDecoder().decode(text);
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException(
            "Column '" + column + "' (" + type + ") holds invalid base64 '" + text + "'", e);
      }
    } else if (family == Family.STRING || family == Family.TIME || family == Family.UUID) {
      scalar = scalar.toString();
    }
    if (family == Family.DATE && scalar instanceof String text) {
      LocalDate date = isoDate(text);
      if (date != null) {
        return date;
      }
    }
    return normalize(column, type, family, scalar);
  }

  /**
   * {@code uuuu-MM-dd} with a four-digit year read without a formatter; null for any other text and
   * for a day the month does not have (which {@link LocalDate#parse} then reads or refuses with its
   * message). Days 29 to 31 are checked against the month's length in that year (ISO, proleptic
   * Gregorian: what {@code LocalDate.parse} accepts), so that no valid date takes the formatter.
   */
  static LocalDate isoDate(String text) {
    if (text.length() != 10 || text.charAt(4) != '-' || text.charAt(7) != '-') {
      return null;
    }
    int year = digits(text, 0, 4);
    int month = digits(text, 5, 7);
    int day = digits(text, 8, 10);
    if (year < 0 || month < 1 || month > 12 || day < 1) {
      return null;
    }
    if (day > 28 && day > Month.of(month).length(Year.isLeap(year))) {
      return null;
    }
    return LocalDate.of(year, month, day);
  }

  private static int digits(String text, int from, int to) {
    int v = 0;
    for (int i = from; i < to; i++) {
      char c = text.charAt(i);
      if (c < '0' || c > '9') {
        return -1;
      }
      v = v * 10 + (c - '0');
    }
    return v;
  }

  /** The Java value a reader returns for a stored value ({@link Instant} for datetimeoffset). */
  static Object readerValue(Object stored) {
    if (stored instanceof OffsetDateTime) {
      return ((OffsetDateTime) stored).toInstant();
    }
    if (stored instanceof byte[]) {
      return ((byte[]) stored).clone();
    }
    return stored;
  }

  /**
   * SQL equality of two stored values of one column: binary by content, decimals by value,
   * datetimeoffset by instant; two NULLs are equal here (an unchanged NULL is not a change).
   */
  static boolean same(Object a, Object b) {
    if (a == null || b == null) {
      return a == b;
    }
    if (a instanceof byte[] && b instanceof byte[]) {
      return Arrays.equals((byte[]) a, (byte[]) b);
    }
    if (a instanceof BigDecimal && b instanceof BigDecimal) {
      return ((BigDecimal) a).compareTo((BigDecimal) b) == 0;
    }
    if (a instanceof OffsetDateTime && b instanceof OffsetDateTime) {
      return ((OffsetDateTime) a).isEqual((OffsetDateTime) b);
    }
    return a.equals(b);
  }

  /**
   * Orders two stored values of one column: NULL first, binary unsigned byte by byte,
   * datetimeoffset by instant, everything else by its natural order (strings in UTF-16 code unit
   * order, collation sort keys by their collation). Keys are compared through {@link KeyTuple},
   * which hands this method a character column's {@link Collation#sortKey} instead of the value.
   */
  @SuppressWarnings({"unchecked", "rawtypes"})
  static int compare(Object a, Object b) {
    if (a == null || b == null) {
      return a == null ? (b == null ? 0 : -1) : 1;
    }
    if (a instanceof byte[] && b instanceof byte[]) {
      return Arrays.compareUnsigned((byte[]) a, (byte[]) b);
    }
    if (a instanceof OffsetDateTime && b instanceof OffsetDateTime) {
      return ((OffsetDateTime) a).toInstant().compareTo(((OffsetDateTime) b).toInstant());
    }
    if (a instanceof Comparable && a.getClass() == b.getClass()) {
      return ((Comparable) a).compareTo(b);
    }
    throw new IllegalArgumentException(
        "Cannot compare " + a.getClass().getSimpleName() + " with " + b.getClass().getSimpleName());
  }

  private static String display(Object value) {
    return value instanceof byte[]
        ? Base64.getEncoder().encodeToString((byte[]) value)
        : "" + value;
  }
}
