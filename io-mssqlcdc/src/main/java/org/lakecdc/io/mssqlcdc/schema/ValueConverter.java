package org.lakecdc.io.mssqlcdc.schema;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.RoundingMode;
import java.nio.charset.StandardCharsets;
import java.time.DateTimeException;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Casts the Java values a CDC client returns (see {@code ChangeRow}: Boolean, Short, Integer, Long,
 * Float, Double, BigDecimal, LocalDate, LocalDateTime, Instant, String, byte[]) to the value of the
 * Beam field of an output type ({@link OutputType} class table). Every row is cast to the declared
 * output schema before it is emitted (docs/tables.md "Extreme values"); with the {@code columns}
 * option the declared types are the user's own conversions.
 *
 * <p>Rules, by target type ({@code null} stays {@code null} for every target):
 *
 * <ul>
 *   <li><b>SMALLINT, INT, BIGINT</b>: integers, and BigDecimal, Float, Double or decimal text with
 *       no fractional part, when the value is in range; Boolean as 1 or 0. Anything needing
 *       rounding or out of range fails.
 *   <li><b>FLOAT, DOUBLE</b>: any number, Boolean (1, 0), or numeric text ({@code NaN}, {@code
 *       Infinity}, {@code -Infinity} accepted), as the nearest binary floating-point value (these
 *       types are approximate); a finite value too large for FLOAT fails. Float to DOUBLE widens
 *       the binary value exactly.
 *   <li><b>DECIMAL(p,s)</b>: any number, Boolean (1, 0) or decimal text, set exactly to scale s
 *       (trailing zeros may be dropped or added, nothing rounded); a value needing rounding or with
 *       more than {@code p - s} integer digits fails. Float and Double are read by their shortest
 *       decimal text ({@code 0.1} is 0.1). The result always passes Beam's {@code
 *       FixedPrecisionNumeric} check.
 *   <li><b>BOOLEAN</b>: Boolean; the numbers 1 and 0; text {@code true}/{@code false}, {@code
 *       t}/{@code f}, {@code yes}/{@code no}, {@code y}/{@code n}, {@code 1}/{@code 0} (trimmed,
 *       any case).
 *   <li><b>DATE</b>: LocalDate; LocalDateTime's date (the time is dropped, as SQL Server's and
 *       Spark's casts do); an Instant's or OffsetDateTime's UTC date; date or date-time text (see
 *       below).
 *   <li><b>TIMESTAMP_NTZ</b>: LocalDateTime truncated to microseconds ({@code datetime2(7)}'s 100
 *       ns digit is dropped, as the drivers do); LocalDate at midnight; an Instant or
 *       OffsetDateTime as its UTC local time (the library never converts between zones otherwise);
 *       date-time text.
 *   <li><b>TIMESTAMP</b>: Instant, OffsetDateTime or ZonedDateTime truncated to microseconds; a
 *       LocalDateTime or LocalDate (midnight) read as UTC; date-time text, including the {@code
 *       datetimeoffset} text some drivers return ({@code 2026-09-28 13:50:01.1234567 -03:00} is
 *       2026-09-28T16:50:01.123456Z), text without an offset read as UTC.
 *   <li><b>STRING</b>: String unchanged (a lone UTF-16 surrogate, which has no UTF-8 form, fails);
 *       otherwise the canonical text: Boolean {@code true}/{@code false}; integers in decimal;
 *       Float/Double by {@code Float.toString}/{@code Double.toString}; BigDecimal {@code
 *       toPlainString} (scale kept, {@code 12.30}); LocalDate {@code 2026-09-28}; LocalDateTime
 *       {@code 2026-09-28T13:50:01.1234567} (seconds always, fraction only when not zero, all its
 *       digits); LocalTime {@code 13:50:01.1234567}; Instant {@code 2026-09-28T16:50:01.123456Z}
 *       (ISO-8601 UTC); OffsetDateTime ISO-8601 with offset; byte[] {@code 0x} and upper-case hex
 *       (SQL Server's style 1); UUID upper-case (SQL Server's {@code uniqueidentifier} text).
 *   <li><b>BINARY</b>: byte[] unchanged (not copied); String as its UTF-8 bytes.
 * </ul>
 *
 * <p>DATE, TIMESTAMP_NTZ and TIMESTAMP values must lie in 0001-01-01 to 9999-12-31 (TIMESTAMP: in
 * UTC, to 9999-12-31T23:59:59.999999Z), the range Delta and Spark define; others fail rather than
 * reach a table that readers would show wrongly.
 *
 * <p>Date-time text: {@code yyyy-MM-dd}, optionally followed by {@code T} or a space and {@code
 * HH:mm[:ss[.f...]]} (1 to 9 fraction digits), optionally followed (spaces allowed) by {@code Z} or
 * an offset {@code +hh:mm}, {@code +hhmm} or {@code +hh}; surrounding whitespace ignored. A date
 * alone is midnight.
 *
 * <p>Errors ({@link IllegalArgumentException}, one line):
 *
 * <ul>
 *   <li>{@code Cannot convert column '<c>': a value of Java type <class> cannot be cast to <type>}
 *       when the Java type has no conversion to the target;
 *   <li>{@code Cannot convert column '<c>': value '<text>' cannot be read as <type>} for text that
 *       does not parse;
 *   <li>{@code Cannot convert column '<c>': value <v> does not fit <type>} (range), or {@code ...
 *       does not fit <type> without rounding}, or {@code ... does not fit <type>: more than <n>
 *       digits before the decimal point};
 *   <li>{@code Cannot convert column '<c>': value <v> [(<converted>)] does not fit <type>: Delta
 *       and Spark hold <first> to <last>} for a DATE, TIMESTAMP_NTZ or TIMESTAMP outside the range
 *       Delta and Spark define: 0001-01-01 to 9999-12-31 (TIMESTAMP: in UTC, so a {@code
 *       datetimeoffset} of {@code 0001-01-01T00:00:00+14:00}, 0000-12-31T10:00:00Z, fails);
 *   <li>{@code Cannot convert column '<c>': value '<text>' does not fit <type>: the unpaired UTF-16
 *       surrogate U+<hex> at index <i> has no UTF-8 form} for STRING, and BINARY from text.
 * </ul>
 */
public final class ValueConverter {
  private static final Pattern DATE_TIME_TEXT =
      Pattern.compile(
          "(\\d{4})-(\\d{2})-(\\d{2})"
              + "(?:[Tt ](\\d{2}):(\\d{2})(?::(\\d{2})(?:\\.(\\d{1,9}))?)?)?"
              + "\\s*([Zz]|[+-]\\d{2}(?::?\\d{2})?)?");

  private static final Pattern NON_FINITE_TEXT =
      Pattern.compile("([+-]?)(nan|inf|infinity)", Pattern.CASE_INSENSITIVE);

  private static final char[] HEX = "0123456789ABCDEF".toCharArray();

  /** The first DATE Delta and Spark hold (and SQL Server's {@code date}). */
  public static final LocalDate MIN_DATE = LocalDate.of(1, 1, 1);

  /** The last DATE Delta and Spark hold (and SQL Server's {@code date}). */
  public static final LocalDate MAX_DATE = LocalDate.of(9999, 12, 31);

  /** The first TIMESTAMP_NTZ Delta and Spark hold. */
  public static final LocalDateTime MIN_LOCAL_DATE_TIME = MIN_DATE.atStartOfDay();

  /** The last TIMESTAMP_NTZ Delta and Spark hold (microseconds). */
  public static final LocalDateTime MAX_LOCAL_DATE_TIME = MAX_DATE.atTime(23, 59, 59, 999_999_000);

  /** The first TIMESTAMP (UTC) Delta and Spark hold. */
  public static final Instant MIN_INSTANT = MIN_LOCAL_DATE_TIME.toInstant(ZoneOffset.UTC);

  /** The last TIMESTAMP (UTC) Delta and Spark hold (microseconds). */
  public static final Instant MAX_INSTANT = MAX_LOCAL_DATE_TIME.toInstant(ZoneOffset.UTC);

  private ValueConverter() {}

  /**
   * Casts one client value to the Beam value of {@code target} (rules in the class comment).
   *
   * @param clientValue the value the CDC client returned, or null
   * @param target the output type of the column
   * @param column the column name, for error messages
   * @return null, or a Boolean, Short, Integer, Long, Float, Double, BigDecimal (of the target
   *     scale), LocalDate, LocalDateTime (microseconds), Instant (microseconds), String or byte[]
   * @throws IllegalArgumentException when the value cannot be cast exactly (messages in the class
   *     comment)
   */
  public static Object toBeamValue(Object clientValue, OutputType target, String column) {
    Objects.requireNonNull(target, "target");
    if (clientValue == null) {
      return null;
    }
    switch (target.kind()) {
      case BOOLEAN:
        return toBoolean(clientValue, target, column);
      case SMALLINT:
        return (short) toLongInRange(clientValue, target, column, Short.MIN_VALUE, Short.MAX_VALUE);
      case INT:
        return (int)
            toLongInRange(clientValue, target, column, Integer.MIN_VALUE, Integer.MAX_VALUE);
      case BIGINT:
        return toLongInRange(clientValue, target, column, Long.MIN_VALUE, Long.MAX_VALUE);
      case FLOAT:
        return toFloat(clientValue, target, column);
      case DOUBLE:
        return toDouble(clientValue, target, column);
      case DECIMAL:
        return toDecimal(clientValue, target, column);
      case DATE:
        return toDate(clientValue, target, column);
      case TIMESTAMP_NTZ:
        return toLocalDateTime(clientValue, target, column);
      case TIMESTAMP:
        return toInstant(clientValue, target, column);
      case STRING:
        return toText(clientValue, target, column);
      case BINARY:
        return toBytes(clientValue, target, column);
      default:
        throw new IllegalStateException("Unhandled kind " + target.kind());
    }
  }

  /**
   * Casts the captured values of one row, position by position, with {@link #toBeamValue}.
   *
   * @param clientValues the values in the order of {@code columns} (nulls allowed)
   * @param columns the output columns
   * @return a new list of Beam values (nulls kept)
   * @throws IllegalArgumentException when the sizes differ or a value cannot be cast
   */
  public static List<Object> toBeamValues(List<?> clientValues, List<ColumnSpec> columns) {
    if (clientValues.size() != columns.size()) {
      throw new IllegalArgumentException(
          "A row has "
              + clientValues.size()
              + " captured values for "
              + columns.size()
              + " columns ("
              + ColumnsDdl.format(columns)
              + ")");
    }
    List<Object> out = new ArrayList<>(columns.size());
    for (int i = 0; i < columns.size(); i++) {
      ColumnSpec column = columns.get(i);
      out.add(toBeamValue(clientValues.get(i), column.type(), column.name()));
    }
    return out;
  }

  // ---- numbers

  private static long toLongInRange(
      Object value, OutputType target, String column, long min, long max) {
    long v;
    if (value instanceof Long
        || value instanceof Integer
        || value instanceof Short
        || value instanceof Byte) {
      v = ((Number) value).longValue();
    } else {
      BigDecimal d = exactDigits(value, target, column, 0, 19);
      try {
        v = d.longValueExact();
      } catch (ArithmeticException e) {
        throw doesNotFit(value, target, column);
      }
    }
    if (v < min || v > max) {
      throw doesNotFit(value, target, column);
    }
    return v;
  }

  private static Float toFloat(Object value, OutputType target, String column) {
    if (value instanceof Float) {
      return (Float) value;
    }
    double d = toDouble(value, target, column);
    float f = (float) d;
    if (Float.isInfinite(f) && !Double.isInfinite(d)) {
      throw doesNotFit(value, target, column);
    }
    return f;
  }

  private static Double toDouble(Object value, OutputType target, String column) {
    if (value instanceof Double) {
      return (Double) value;
    }
    if (value instanceof Float) {
      return ((Float) value).doubleValue();
    }
    if (value instanceof String) {
      Matcher m = NON_FINITE_TEXT.matcher(((String) value).strip());
      if (m.matches()) {
        if (m.group(2).equalsIgnoreCase("nan")) {
          return Double.NaN;
        }
        return m.group(1).equals("-") ? Double.NEGATIVE_INFINITY : Double.POSITIVE_INFINITY;
      }
    }
    BigDecimal d = toBigDecimal(value, target, column);
    double result = d.doubleValue();
    if (Double.isInfinite(result)) {
      throw doesNotFit(value, target, column);
    }
    return result;
  }

  private static BigDecimal toDecimal(Object value, OutputType target, String column) {
    return exactDigits(value, target, column, target.scale(), target.precision() - target.scale());
  }

  /**
   * The value as a BigDecimal of exactly {@code scale}, when that needs no rounding and the value
   * has at most {@code maxIntegerDigits} digits before the decimal point. Checks the digits before
   * calling {@code setScale}, so text such as {@code 1e999999999} fails at once instead of
   * expanding to a billion digits.
   *
   * <p>A value whose scale is at most {@code scale} (a decimal column's own values, text of the
   * column's scale) is widened as it is: its digits before the decimal point, {@code precision -
   * scale}, are the same with or without its trailing zeros, so it needs no {@code
   * stripTrailingZeros} (which divides by ten once per zero, and whose branch on a first value
   * ending in zero threw away the row path's compiled code).
   */
  private static BigDecimal exactDigits(
      Object value, OutputType target, String column, int scale, int maxIntegerDigits) {
    BigDecimal d = toBigDecimal(value, target, column);
    if (d.signum() == 0) {
      return BigDecimal.ZERO.setScale(scale);
    }
    BigDecimal stripped = d.scale() <= scale ? d : d.stripTrailingZeros();
    if (stripped.scale() > scale) {
      throw new IllegalArgumentException(
          prefix(column)
              + "value "
              + shown(value)
              + " does not fit "
              + target
              + " without rounding");
    }
    long integerDigits = (long) stripped.precision() - stripped.scale();
    if (integerDigits > maxIntegerDigits) {
      if (target.isDecimal()) {
        throw new IllegalArgumentException(
            prefix(column)
                + "value "
                + shown(value)
                + " does not fit "
                + target
                + ": more than "
                + maxIntegerDigits
                + " digits before the decimal point");
      }
      throw doesNotFit(value, target, column);
    }
    return stripped.setScale(scale, RoundingMode.UNNECESSARY);
  }

  /** Any number, Boolean or decimal text as an exact BigDecimal. */
  private static BigDecimal toBigDecimal(Object value, OutputType target, String column) {
    if (value instanceof BigDecimal) {
      return (BigDecimal) value;
    }
    if (value instanceof Long
        || value instanceof Integer
        || value instanceof Short
        || value instanceof Byte) {
      return BigDecimal.valueOf(((Number) value).longValue());
    }
    if (value instanceof BigInteger) {
      return new BigDecimal((BigInteger) value);
    }
    if (value instanceof Double || value instanceof Float) {
      double d = ((Number) value).doubleValue();
      if (Double.isNaN(d) || Double.isInfinite(d)) {
        throw doesNotFit(value, target, column);
      }
      return value instanceof Float
          ? new BigDecimal(Float.toString((Float) value))
          : BigDecimal.valueOf(d);
    }
    if (value instanceof Boolean) {
      return (Boolean) value ? BigDecimal.ONE : BigDecimal.ZERO;
    }
    if (value instanceof String) {
      try {
        return new BigDecimal(((String) value).strip());
      } catch (NumberFormatException e) {
        throw cannotRead((String) value, target, column);
      }
    }
    throw cannotCast(value, target, column);
  }

  private static Boolean toBoolean(Object value, OutputType target, String column) {
    if (value instanceof Boolean) {
      return (Boolean) value;
    }
    if (value instanceof String) {
      switch (((String) value).strip().toLowerCase(Locale.ROOT)) {
        case "true":
        case "t":
        case "yes":
        case "y":
        case "1":
          return true;
        case "false":
        case "f":
        case "no":
        case "n":
        case "0":
          return false;
        default:
          throw cannotRead((String) value, target, column);
      }
    }
    if (value instanceof Number) {
      BigDecimal d = toBigDecimal(value, target, column);
      if (d.compareTo(BigDecimal.ONE) == 0) {
        return true;
      }
      if (d.signum() == 0) {
        return false;
      }
      throw doesNotFit(value, target, column);
    }
    throw cannotCast(value, target, column);
  }

  // ---- dates and times

  private static LocalDate toDate(Object value, OutputType target, String column) {
    LocalDate result;
    if (value instanceof LocalDate) {
      result = (LocalDate) value;
    } else if (value instanceof LocalDateTime) {
      result = ((LocalDateTime) value).toLocalDate();
    } else if (value instanceof String) {
      result = parseDateTime((String) value, target, column).toLocalDate();
    } else {
      Instant instant = instantOf(value);
      if (instant == null) {
        throw cannotCast(value, target, column);
      }
      result = LocalDate.ofInstant(instant, ZoneOffset.UTC);
    }
    if (result.isBefore(MIN_DATE) || result.isAfter(MAX_DATE)) {
      throw outOfRange(value, result, target, column, MIN_DATE + " to " + MAX_DATE);
    }
    return result;
  }

  private static LocalDateTime toLocalDateTime(Object value, OutputType target, String column) {
    LocalDateTime result;
    if (value instanceof LocalDateTime) {
      result = (LocalDateTime) value;
    } else if (value instanceof LocalDate) {
      result = ((LocalDate) value).atStartOfDay();
    } else if (value instanceof String) {
      result = parseDateTime((String) value, target, column);
    } else {
      Instant instant = instantOf(value);
      if (instant == null) {
        throw cannotCast(value, target, column);
      }
      result = LocalDateTime.ofInstant(instant, ZoneOffset.UTC);
    }
    result = result.truncatedTo(ChronoUnit.MICROS);
    if (result.isBefore(MIN_LOCAL_DATE_TIME) || result.isAfter(MAX_LOCAL_DATE_TIME)) {
      throw outOfRange(
          value, result, target, column, MIN_LOCAL_DATE_TIME + " to " + MAX_LOCAL_DATE_TIME);
    }
    return result;
  }

  private static Instant toInstant(Object value, OutputType target, String column) {
    Instant result = instantOf(value);
    if (result == null) {
      if (value instanceof LocalDateTime) {
        result = ((LocalDateTime) value).toInstant(ZoneOffset.UTC);
      } else if (value instanceof LocalDate) {
        result = ((LocalDate) value).atStartOfDay().toInstant(ZoneOffset.UTC);
      } else if (value instanceof String) {
        result = parseDateTime((String) value, target, column).toInstant(ZoneOffset.UTC);
      } else {
        throw cannotCast(value, target, column);
      }
    }
    result = result.truncatedTo(ChronoUnit.MICROS);
    if (result.isBefore(MIN_INSTANT) || result.isAfter(MAX_INSTANT)) {
      throw outOfRange(value, result, target, column, MIN_INSTANT + " to " + MAX_INSTANT);
    }
    return result;
  }

  /** The instant of an Instant, OffsetDateTime or ZonedDateTime; null for other values. */
  private static Instant instantOf(Object value) {
    if (value instanceof Instant) {
      return (Instant) value;
    }
    if (value instanceof OffsetDateTime) {
      return ((OffsetDateTime) value).toInstant();
    }
    if (value instanceof ZonedDateTime) {
      return ((ZonedDateTime) value).toInstant();
    }
    return null;
  }

  /**
   * Parses date-time text (class comment) to a local date-time; text with an offset becomes its UTC
   * local time. Not truncated.
   */
  private static LocalDateTime parseDateTime(String text, OutputType target, String column) {
    Matcher m = DATE_TIME_TEXT.matcher(text.strip());
    if (!m.matches()) {
      throw cannotRead(text, target, column);
    }
    try {
      LocalDate date =
          LocalDate.of(
              Integer.parseInt(m.group(1)),
              Integer.parseInt(m.group(2)),
              Integer.parseInt(m.group(3)));
      LocalTime time = LocalTime.MIDNIGHT;
      if (m.group(4) != null) {
        int nanos = 0;
        if (m.group(7) != null) {
          StringBuilder fraction = new StringBuilder(m.group(7));
          while (fraction.length() < 9) {
            fraction.append('0');
          }
          nanos = Integer.parseInt(fraction.toString());
        }
        time =
            LocalTime.of(
                Integer.parseInt(m.group(4)),
                Integer.parseInt(m.group(5)),
                m.group(6) == null ? 0 : Integer.parseInt(m.group(6)),
                nanos);
      }
      LocalDateTime local = LocalDateTime.of(date, time);
      if (m.group(8) == null) {
        return local;
      }
      ZoneOffset offset =
          m.group(8).equalsIgnoreCase("Z") ? ZoneOffset.UTC : ZoneOffset.of(m.group(8));
      return LocalDateTime.ofInstant(local.toInstant(offset), ZoneOffset.UTC);
    } catch (DateTimeException e) {
      throw cannotRead(text, target, column);
    }
  }

  // ---- text and bytes

  private static String toText(Object value, OutputType target, String column) {
    if (value instanceof String) {
      return checkUtf16((String) value, target, column);
    }
    if (value instanceof BigDecimal) {
      return ((BigDecimal) value).toPlainString();
    }
    if (value instanceof Boolean
        || value instanceof Long
        || value instanceof Integer
        || value instanceof Short
        || value instanceof Byte
        || value instanceof BigInteger
        || value instanceof Float
        || value instanceof Double
        || value instanceof LocalDate
        || value instanceof Instant) {
      return value.toString();
    }
    if (value instanceof LocalDateTime) {
      return DateTimeFormatter.ISO_LOCAL_DATE_TIME.format((LocalDateTime) value);
    }
    if (value instanceof LocalTime) {
      return DateTimeFormatter.ISO_LOCAL_TIME.format((LocalTime) value);
    }
    if (value instanceof OffsetDateTime) {
      return DateTimeFormatter.ISO_OFFSET_DATE_TIME.format((OffsetDateTime) value);
    }
    if (value instanceof byte[]) {
      return hex((byte[]) value);
    }
    if (value instanceof UUID) {
      return value.toString().toUpperCase(Locale.ROOT);
    }
    throw cannotCast(value, target, column);
  }

  private static byte[] toBytes(Object value, OutputType target, String column) {
    if (value instanceof byte[]) {
      return (byte[]) value;
    }
    if (value instanceof String) {
      return checkUtf16((String) value, target, column).getBytes(StandardCharsets.UTF_8);
    }
    throw cannotCast(value, target, column);
  }

  /**
   * The text itself when every UTF-16 surrogate in it is paired: a lone surrogate (which {@code
   * nvarchar} can hold, being UCS-2) has no UTF-8 form, and Parquet's STRING and the UTF-8 bytes of
   * BINARY would silently replace it with {@code ?}.
   */
  private static String checkUtf16(String text, OutputType target, String column) {
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if (Character.isHighSurrogate(c)
          && i + 1 < text.length()
          && Character.isLowSurrogate(text.charAt(i + 1))) {
        i++;
      } else if (Character.isSurrogate(c)) {
        throw new IllegalArgumentException(
            prefix(column)
                + "value "
                + shown(text)
                + " does not fit "
                + target
                + ": the unpaired UTF-16 surrogate U+"
                + Integer.toHexString(c).toUpperCase(Locale.ROOT)
                + " at index "
                + i
                + " has no UTF-8 form");
      }
    }
    return text;
  }

  private static String hex(byte[] bytes) {
    char[] out = new char[2 + 2 * bytes.length];
    out[0] = '0';
    out[1] = 'x';
    for (int i = 0; i < bytes.length; i++) {
      out[2 + 2 * i] = HEX[(bytes[i] >> 4) & 0xF];
      out[3 + 2 * i] = HEX[bytes[i] & 0xF];
    }
    return new String(out);
  }

  // ---- errors

  private static String prefix(String column) {
    return "Cannot convert column '" + column + "': ";
  }

  private static String shown(Object value) {
    if (value instanceof BigDecimal) {
      return ((BigDecimal) value).toPlainString();
    }
    if (value instanceof String) {
      return "'" + value + "'";
    }
    return String.valueOf(value);
  }

  private static IllegalArgumentException doesNotFit(
      Object value, OutputType target, String column) {
    return new IllegalArgumentException(
        prefix(column) + "value " + shown(value) + " does not fit " + target);
  }

  private static IllegalArgumentException outOfRange(
      Object value, Object converted, OutputType target, String column, String range) {
    String shownValue = shown(value);
    String convertedText = String.valueOf(converted);
    return new IllegalArgumentException(
        prefix(column)
            + "value "
            + shownValue
            + (shownValue.equals(convertedText) ? "" : " (" + convertedText + ")")
            + " does not fit "
            + target
            + ": Delta and Spark hold "
            + range);
  }

  private static IllegalArgumentException cannotRead(
      String text, OutputType target, String column) {
    return new IllegalArgumentException(
        prefix(column) + "value '" + text + "' cannot be read as " + target);
  }

  private static IllegalArgumentException cannotCast(
      Object value, OutputType target, String column) {
    return new IllegalArgumentException(
        prefix(column)
            + "a value of Java type "
            + value.getClass().getName()
            + " cannot be cast to "
            + target);
  }
}
