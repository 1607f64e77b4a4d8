package org.lakecdc.io.mssqlcdc.schema;

import java.io.Serializable;
import java.util.Locale;
import java.util.Objects;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.beam.sdk.schemas.Schema;
import org.apache.beam.sdk.schemas.Schema.FieldType;
import org.apache.beam.sdk.schemas.logicaltypes.Date;
import org.apache.beam.sdk.schemas.logicaltypes.DateTime;
import org.apache.beam.sdk.schemas.logicaltypes.FixedPrecisionNumeric;
import org.apache.beam.sdk.schemas.logicaltypes.MicrosInstant;
import org.apache.beam.sdk.schemas.logicaltypes.SqlTypes;
import org.apache.beam.sdk.values.Row;

/**
 * The type of an output column: the Delta (Spark) type a captured column is written as, named with
 * Spark DDL names (docs/tables.md "Extreme values"). Immutable value type; equal when kind,
 * precision and scale are equal.
 *
 * <p>The kinds, their Beam field types ({@link #toBeamFieldType()}) and the Java values of those
 * fields:
 *
 * <table>
 *   <caption>Output types</caption>
 *   <tr><th>DDL</th><th>Beam field type</th><th>Java value</th></tr>
 *   <tr><td>BOOLEAN</td><td>BOOLEAN</td><td>Boolean</td></tr>
 *   <tr><td>SMALLINT</td><td>INT16</td><td>Short</td></tr>
 *   <tr><td>INT</td><td>INT32</td><td>Integer</td></tr>
 *   <tr><td>BIGINT</td><td>INT64</td><td>Long</td></tr>
 *   <tr><td>FLOAT</td><td>FLOAT</td><td>Float</td></tr>
 *   <tr><td>DOUBLE</td><td>DOUBLE</td><td>Double</td></tr>
 *   <tr><td>DECIMAL(p,s)</td><td>{@link FixedPrecisionNumeric}{@code (p,s)}</td>
 *       <td>BigDecimal of scale s</td></tr>
 *   <tr><td>DATE</td><td>{@link SqlTypes#DATE}</td><td>LocalDate</td></tr>
 *   <tr><td>TIMESTAMP_NTZ</td><td>{@link SqlTypes#DATETIME}</td>
 *       <td>LocalDateTime, microseconds, no zone</td></tr>
 *   <tr><td>TIMESTAMP</td><td>{@link SqlTypes#TIMESTAMP} (MicrosInstant)</td>
 *       <td>Instant (UTC), microseconds</td></tr>
 *   <tr><td>STRING</td><td>STRING</td><td>String</td></tr>
 *   <tr><td>BINARY</td><td>BYTES</td><td>byte[]</td></tr>
 * </table>
 *
 * <p>TIMESTAMP_NTZ holds SQL Server {@code datetime}, {@code datetime2} and {@code smalldatetime}
 * values as stored (never converted between zones); TIMESTAMP holds {@code datetimeoffset} values
 * as UTC instants.
 */
public final class OutputType implements Serializable {
  private static final long serialVersionUID = 1L;

  /** The largest DECIMAL precision Spark and SQL Server allow. */
  public static final int MAX_DECIMAL_PRECISION = 38;

  /** The kind of an output type; DECIMAL carries a precision and a scale. */
  public enum Kind {
    /** True or false. */
    BOOLEAN,
    /** Signed 16-bit integer. */
    SMALLINT,
    /** Signed 32-bit integer. */
    INT,
    /** Signed 64-bit integer. */
    BIGINT,
    /** IEEE 754 single precision. */
    FLOAT,
    /** IEEE 754 double precision. */
    DOUBLE,
    /** Exact decimal with a precision and a scale. */
    DECIMAL,
    /** Calendar date, no zone. */
    DATE,
    /** Local date-time, no zone, microseconds. */
    TIMESTAMP_NTZ,
    /** UTC instant, microseconds. */
    TIMESTAMP,
    /** Unicode text. */
    STRING,
    /** Byte string. */
    BINARY
  }

  /** BOOLEAN: SQL Server {@code bit}. */
  public static final OutputType BOOLEAN = new OutputType(Kind.BOOLEAN, 0, 0);

  /** SMALLINT (signed 16-bit): SQL Server {@code tinyint} and {@code smallint}. */
  public static final OutputType SMALLINT = new OutputType(Kind.SMALLINT, 0, 0);

  /** INT (signed 32-bit): SQL Server {@code int}. */
  public static final OutputType INT = new OutputType(Kind.INT, 0, 0);

  /** BIGINT (signed 64-bit): SQL Server {@code bigint}. */
  public static final OutputType BIGINT = new OutputType(Kind.BIGINT, 0, 0);

  /** FLOAT (IEEE 754 single precision): SQL Server {@code real}. */
  public static final OutputType FLOAT = new OutputType(Kind.FLOAT, 0, 0);

  /** DOUBLE (IEEE 754 double precision): SQL Server {@code float}. */
  public static final OutputType DOUBLE = new OutputType(Kind.DOUBLE, 0, 0);

  /** DATE: a calendar date without zone. */
  public static final OutputType DATE = new OutputType(Kind.DATE, 0, 0);

  /** TIMESTAMP_NTZ: a local date-time without zone, microsecond precision. */
  public static final OutputType TIMESTAMP_NTZ = new OutputType(Kind.TIMESTAMP_NTZ, 0, 0);

  /** TIMESTAMP: an instant on the UTC time line, microsecond precision. */
  public static final OutputType TIMESTAMP = new OutputType(Kind.TIMESTAMP, 0, 0);

  /** STRING: Unicode text. */
  public static final OutputType STRING = new OutputType(Kind.STRING, 0, 0);

  /** BINARY: a byte string. */
  public static final OutputType BINARY = new OutputType(Kind.BINARY, 0, 0);

  private static final String ACCEPTED =
      "BOOLEAN, SMALLINT (SHORT), INT (INTEGER), BIGINT (LONG), FLOAT (REAL), DOUBLE,"
          + " DECIMAL(p,s) (NUMERIC, DEC; DECIMAL alone is DECIMAL(10,0)), DATE, TIMESTAMP_NTZ,"
          + " TIMESTAMP (TIMESTAMP_LTZ), STRING (VARCHAR(n), CHAR(n)), BINARY";

  private static final Pattern DECIMAL_FORM =
      Pattern.compile(
          "(?:DECIMAL|DEC|NUMERIC)\\s*(?:\\(\\s*(\\d+)\\s*(?:,\\s*(\\d+)\\s*)?\\))?",
          Pattern.CASE_INSENSITIVE);

  private static final Pattern CHAR_FORM =
      Pattern.compile("(?:VARCHAR|CHAR|CHARACTER)\\s*\\(\\s*\\d+\\s*\\)", Pattern.CASE_INSENSITIVE);

  private final Kind kind;
  private final int precision;
  private final int scale;

  private OutputType(Kind kind, int precision, int scale) {
    this.kind = kind;
    this.precision = precision;
    this.scale = scale;
  }

  /**
   * DECIMAL(precision, scale).
   *
   * @param precision total number of decimal digits, 1 to 38
   * @param scale digits after the decimal point, 0 to {@code precision}
   * @return the decimal type
   * @throws IllegalArgumentException when precision or scale is out of range
   */
  public static OutputType decimal(int precision, int scale) {
    if (precision < 1 || precision > MAX_DECIMAL_PRECISION) {
      throw new IllegalArgumentException(
          "DECIMAL precision must be 1 to " + MAX_DECIMAL_PRECISION + ", not " + precision);
    }
    if (scale < 0 || scale > precision) {
      throw new IllegalArgumentException(
          "DECIMAL scale must be 0 to the precision (" + precision + "), not " + scale);
    }
    return new OutputType(Kind.DECIMAL, precision, scale);
  }

  /**
   * Parses a Spark DDL type name, ignoring case and whitespace: {@code BOOLEAN}, {@code SMALLINT}
   * or {@code SHORT}, {@code INT} or {@code INTEGER}, {@code BIGINT} or {@code LONG}, {@code FLOAT}
   * or {@code REAL}, {@code DOUBLE}, {@code DECIMAL}/{@code NUMERIC}/{@code DEC} with {@code
   * (p,s)}, {@code (p)} (scale 0) or nothing ({@code (10,0)}, Spark's default), {@code DATE},
   * {@code TIMESTAMP_NTZ}, {@code TIMESTAMP} or {@code TIMESTAMP_LTZ}, {@code STRING}, {@code
   * VARCHAR(n)} or {@code CHAR(n)} (read as STRING), {@code BINARY}.
   *
   * @param text the type text, e.g. {@code "decimal(18, 2)"}
   * @return the type
   * @throws IllegalArgumentException {@code Unknown column type '<text>'; accepted (any case): ...}
   *     for any other text, or the {@link #decimal} message for a bad precision or scale
   */
  public static OutputType parse(String text) {
    String t = text == null ? "" : text.strip();
    switch (t.toUpperCase(Locale.ROOT)) {
      case "BOOLEAN":
        return BOOLEAN;
      case "SMALLINT":
      case "SHORT":
        return SMALLINT;
      case "INT":
      case "INTEGER":
        return INT;
      case "BIGINT":
      case "LONG":
        return BIGINT;
      case "FLOAT":
      case "REAL":
        return FLOAT;
      case "DOUBLE":
        return DOUBLE;
      case "DATE":
        return DATE;
      case "TIMESTAMP_NTZ":
        return TIMESTAMP_NTZ;
      case "TIMESTAMP":
      case "TIMESTAMP_LTZ":
        return TIMESTAMP;
      case "STRING":
        return STRING;
      case "BINARY":
        return BINARY;
      default:
        break;
    }
    Matcher m = DECIMAL_FORM.matcher(t);
    if (m.matches()) {
      if (m.group(1) == null) {
        return decimal(10, 0);
      }
      if (m.group(1).length() > 3) {
        throw new IllegalArgumentException(
            "DECIMAL precision must be 1 to " + MAX_DECIMAL_PRECISION + ", not " + m.group(1));
      }
      int p = Integer.parseInt(m.group(1));
      if (m.group(2) != null && m.group(2).length() > 3) {
        throw new IllegalArgumentException(
            "DECIMAL scale must be 0 to the precision (" + p + "), not " + m.group(2));
      }
      int s = m.group(2) == null ? 0 : Integer.parseInt(m.group(2));
      return decimal(p, s);
    }
    if (CHAR_FORM.matcher(t).matches()) {
      return STRING;
    }
    throw new IllegalArgumentException(
        "Unknown column type '" + text + "'; accepted (any case): " + ACCEPTED);
  }

  /**
   * The kind of this type.
   *
   * @return the kind
   */
  public Kind kind() {
    return kind;
  }

  /**
   * Whether this is a DECIMAL.
   *
   * @return true for DECIMAL(p,s)
   */
  public boolean isDecimal() {
    return kind == Kind.DECIMAL;
  }

  /**
   * Whether this is an integer type.
   *
   * @return true for SMALLINT, INT and BIGINT
   */
  public boolean isInteger() {
    return kind == Kind.SMALLINT || kind == Kind.INT || kind == Kind.BIGINT;
  }

  /**
   * The precision of a DECIMAL.
   *
   * @return total number of decimal digits, 1 to 38
   * @throws IllegalStateException when this is not a DECIMAL
   */
  public int precision() {
    checkDecimal();
    return precision;
  }

  /**
   * The scale of a DECIMAL.
   *
   * @return digits after the decimal point
   * @throws IllegalStateException when this is not a DECIMAL
   */
  public int scale() {
    checkDecimal();
    return scale;
  }

  private void checkDecimal() {
    if (kind != Kind.DECIMAL) {
      throw new IllegalStateException(this + " has no precision or scale");
    }
  }

  /**
   * The nullable Beam field type holding values of this type (see the class table): DECIMAL(p,s) is
   * the logical type {@code FixedPrecisionNumeric.of(p, s)}, DATE {@link SqlTypes#DATE},
   * TIMESTAMP_NTZ {@link SqlTypes#DATETIME}, TIMESTAMP {@link SqlTypes#TIMESTAMP}.
   *
   * @return the Beam field type, nullable
   */
  public FieldType toBeamFieldType() {
    FieldType base;
    switch (kind) {
      case BOOLEAN:
        base = FieldType.BOOLEAN;
        break;
      case SMALLINT:
        base = FieldType.INT16;
        break;
      case INT:
        base = FieldType.INT32;
        break;
      case BIGINT:
        base = FieldType.INT64;
        break;
      case FLOAT:
        base = FieldType.FLOAT;
        break;
      case DOUBLE:
        base = FieldType.DOUBLE;
        break;
      case DECIMAL:
        base = FieldType.logicalType(FixedPrecisionNumeric.of(precision, scale));
        break;
      case DATE:
        base = FieldType.logicalType(SqlTypes.DATE);
        break;
      case TIMESTAMP_NTZ:
        base = FieldType.logicalType(SqlTypes.DATETIME);
        break;
      case TIMESTAMP:
        base = FieldType.logicalType(SqlTypes.TIMESTAMP);
        break;
      case STRING:
        base = FieldType.STRING;
        break;
      case BINARY:
        base = FieldType.BYTES;
        break;
      default:
        throw new IllegalStateException("Unhandled kind " + kind);
    }
    return base.withNullable(true);
  }

  /**
   * The output type of a Beam field type, the inverse of {@link #toBeamFieldType()}; nullability is
   * ignored.
   *
   * @param fieldType a Beam field type {@link #toBeamFieldType()} produces
   * @return the output type
   * @throws IllegalArgumentException {@code Beam field type <type> has no output type; ...} for any
   *     other field type (e.g. INT8, a plain DECIMAL without precision, Joda DATETIME, ROW)
   */
  public static OutputType fromBeamFieldType(FieldType fieldType) {
    Objects.requireNonNull(fieldType, "fieldType");
    switch (fieldType.getTypeName()) {
      case BOOLEAN:
        return BOOLEAN;
      case INT16:
        return SMALLINT;
      case INT32:
        return INT;
      case INT64:
        return BIGINT;
      case FLOAT:
        return FLOAT;
      case DOUBLE:
        return DOUBLE;
      case STRING:
        return STRING;
      case BYTES:
        return BINARY;
      case LOGICAL_TYPE:
        Schema.LogicalType<?, ?> logical = fieldType.getLogicalType();
        String id = logical.getIdentifier();
        if (FixedPrecisionNumeric.IDENTIFIER.equals(id)) {
          Row argument = logical.getArgument();
          Integer p = argument == null ? null : argument.getInt32("precision");
          Integer s = argument == null ? null : argument.getInt32("scale");
          if (p != null && s != null && p > 0) {
            return decimal(p, s);
          }
        } else if (Date.IDENTIFIER.equals(id)) {
          return DATE;
        } else if (DateTime.IDENTIFIER.equals(id)) {
          return TIMESTAMP_NTZ;
        } else if (MicrosInstant.IDENTIFIER.equals(id)) {
          return TIMESTAMP;
        }
        break;
      default:
        break;
    }
    throw new IllegalArgumentException(
        "Beam field type "
            + fieldType
            + " has no output type; accepted: BOOLEAN, INT16, INT32, INT64, FLOAT, DOUBLE, STRING,"
            + " BYTES and the logical types FixedPrecisionNumeric(p,s), SqlTypes.DATE,"
            + " SqlTypes.DATETIME, SqlTypes.TIMESTAMP");
  }

  /**
   * The canonical Spark DDL text: {@code BOOLEAN}, {@code SMALLINT}, {@code INT}, {@code BIGINT},
   * {@code FLOAT}, {@code DOUBLE}, {@code DECIMAL(p,s)} (no space), {@code DATE}, {@code
   * TIMESTAMP_NTZ}, {@code TIMESTAMP}, {@code STRING}, {@code BINARY}. {@link #parse} reads it
   * back.
   */
  @Override
  public String toString() {
    return kind == Kind.DECIMAL ? "DECIMAL(" + precision + "," + scale + ")" : kind.name();
  }

  @Override
  public boolean equals(Object o) {
    if (this == o) {
      return true;
    }
    if (!(o instanceof OutputType)) {
      return false;
    }
    OutputType other = (OutputType) o;
    return kind == other.kind && precision == other.precision && scale == other.scale;
  }

  @Override
  public int hashCode() {
    return Objects.hash(kind, precision, scale);
  }
}
