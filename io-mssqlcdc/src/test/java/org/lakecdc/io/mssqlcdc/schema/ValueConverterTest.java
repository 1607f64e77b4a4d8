package org.lakecdc.io.mssqlcdc.schema;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;

/** Tests of {@link ValueConverter}: docs/tables.md "Extreme values", scenarios C211 and C234. */
class ValueConverterTest {

  private static Object cast(Object value, String type) {
    return ValueConverter.toBeamValue(value, OutputType.parse(type), "c");
  }

  private static String error(Object value, String type) {
    return assertThrows(IllegalArgumentException.class, () -> cast(value, type)).getMessage();
  }

  @ParameterizedTest
  @EnumSource(OutputType.Kind.class)
  void nullStaysNull(OutputType.Kind kind) {
    OutputType type =
        kind == OutputType.Kind.DECIMAL ? OutputType.decimal(18, 2) : OutputType.parse(kind.name());
    assertNull(ValueConverter.toBeamValue(null, type, "c"));
  }

  /** C211: the values a real server returns for every mapped type, cast to their mapped types. */
  @Test
  void c211ValuesKeepTheirTypesUnderTheDefaultMapping() {
    assertEquals((short) 200, cast((short) 200, "SMALLINT")); // tinyint 200
    assertEquals(9000000000L, cast(9000000000L, "BIGINT"));
    assertEquals(1.5f, cast(1.5f, "FLOAT"));
    assertEquals(2.25d, cast(2.25d, "DOUBLE"));
    assertEquals(true, cast(true, "BOOLEAN"));
    assertEquals(42, cast(42, "INT"));

    assertEquals(new BigDecimal("12.34"), cast(new BigDecimal("12.34"), "DECIMAL(18,2)"));
    assertEquals(
        new BigDecimal("1.0000000001"), cast(new BigDecimal("1.0000000001"), "DECIMAL(38,10)"));
    assertEquals(new BigDecimal("12.3456"), cast(new BigDecimal("12.3456"), "DECIMAL(19,4)"));
    assertEquals(new BigDecimal("1.2345"), cast(new BigDecimal("1.2345"), "DECIMAL(10,4)"));

    assertEquals(
        LocalDateTime.parse("2026-09-28T13:50:01.123"),
        cast(LocalDateTime.parse("2026-09-28T13:50:01.123"), "TIMESTAMP_NTZ")); // datetime
    assertEquals(
        LocalDateTime.parse("2026-09-28T13:50:01.123456"),
        cast(LocalDateTime.parse("2026-09-28T13:50:01.1234567"), "TIMESTAMP_NTZ")); // datetime2(7)
    assertEquals(
        LocalDateTime.parse("2026-09-28T13:50:00"),
        cast(LocalDateTime.parse("2026-09-28T13:50:00"), "TIMESTAMP_NTZ")); // smalldatetime
    assertEquals(
        Instant.parse("2026-09-28T16:50:01.123456Z"),
        cast(Instant.parse("2026-09-28T16:50:01.1234567Z"), "TIMESTAMP")); // datetimeoffset(7)
    assertEquals(LocalDate.parse("2026-09-28"), cast(LocalDate.parse("2026-09-28"), "DATE"));

    assertEquals("13:50:01.123456700", cast("13:50:01.123456700", "STRING")); // time(7)
    assertEquals("olá", cast("olá", "STRING"));
    assertEquals(
        "6F9619FF-8B86-D011-B42D-00C04FC964FF",
        cast("6F9619FF-8B86-D011-B42D-00C04FC964FF", "STRING"));
    byte[] bytes = {0x00, 0x01, (byte) 0x80, (byte) 0xFF};
    assertSame(bytes, cast(bytes, "BINARY"));
    assertArrayEquals(bytes, (byte[]) cast(bytes, "BINARY"));
    byte[] rowversion = {0, 0, 0, 0, 0, 0, 0x07, (byte) 0xD1};
    assertEquals(8, ((byte[]) cast(rowversion, "BINARY")).length);
  }

  /** C234: datetimeoffset text becomes its UTC instant, microseconds. */
  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "2026-09-28 13:50:01.1234567 -03:00 | 2026-09-28T16:50:01.123456Z",
        "2026-09-28 01:00:00 +05:30 | 2026-09-27T19:30:00Z",
        "2026-09-28T13:50:01Z | 2026-09-28T13:50:01Z",
        "2026-09-28 13:50:01 | 2026-09-28T13:50:01Z",
        "2026-09-28T13:50:01.5+0100 | 2026-09-28T12:50:01.500Z",
        "' 2026-09-28 13:50:01.123 +00:00 ' | 2026-09-28T13:50:01.123Z",
        "2026-09-28 13:50 -03 | 2026-09-28T16:50:00Z",
        "2026-09-28 | 2026-09-28T00:00:00Z",
      })
  void testC234DatetimeoffsetTextToTimestamp(String text, String instant) {
    assertEquals(Instant.parse(instant), cast(text, "TIMESTAMP"));
  }

  @Test
  void integersWidenExactly() {
    assertEquals(Integer.valueOf(200), cast((short) 200, "INT"));
    assertEquals(Long.valueOf(200), cast((short) 200, "BIGINT"));
    assertEquals(Long.valueOf(-7), cast(-7, "BIGINT"));
    assertEquals(Double.valueOf(200), cast((short) 200, "DOUBLE"));
    assertEquals(Double.valueOf(2147483647), cast(Integer.MAX_VALUE, "DOUBLE"));
    assertEquals(Float.valueOf(3), cast(3, "FLOAT"));
    assertEquals(new BigDecimal("200.00"), cast((short) 200, "DECIMAL(5,2)"));
    assertEquals(new BigDecimal("2147483647"), cast(Integer.MAX_VALUE, "DECIMAL(10,0)"));
    assertEquals(new BigDecimal("-9223372036854775808"), cast(Long.MIN_VALUE, "DECIMAL(20,0)"));
    assertEquals(Double.valueOf(1.5), cast(1.5f, "DOUBLE"));
    assertEquals(Double.valueOf(0.1f), cast(0.1f, "DOUBLE")); // the float's binary value
  }

  @Test
  void narrowingIsExactOrFailsNamingTheValue() {
    assertEquals((short) 12, cast(12L, "SMALLINT"));
    assertEquals(12, cast(new BigDecimal("12.000"), "INT"));
    assertEquals(12L, cast(12.0d, "BIGINT"));
    assertEquals((short) -5, cast(" -5 ", "SMALLINT"));
    assertEquals(new BigInteger("12").intValue(), cast(new BigInteger("12"), "INT"));
    assertEquals(
        "Cannot convert column 'c': value 70000 does not fit SMALLINT", error(70000, "SMALLINT"));
    assertEquals(
        "Cannot convert column 'c': value 9000000000 does not fit INT", error(9000000000L, "INT"));
    assertEquals(
        "Cannot convert column 'c': value 12.5 does not fit INT without rounding",
        error(new BigDecimal("12.5"), "INT"));
    assertEquals(
        "Cannot convert column 'c': value 1.0E20 does not fit BIGINT", error(1e20, "BIGINT"));
    assertEquals("Cannot convert column 'c': value NaN does not fit INT", error(Double.NaN, "INT"));
    assertEquals(
        "Cannot convert column 'c': value 'twelve' cannot be read as INT", error("twelve", "INT"));
    assertEquals(
        "Cannot convert column 'c': value 1.0E300 does not fit FLOAT", error(1e300, "FLOAT"));
    assertEquals(Float.POSITIVE_INFINITY, cast(Double.POSITIVE_INFINITY, "FLOAT"));
    assertEquals(Double.NEGATIVE_INFINITY, cast("-Infinity", "DOUBLE"));
    assertEquals(Double.NaN, cast("NaN", "DOUBLE"));
    assertEquals(Double.valueOf(1500), cast("1.5e3", "DOUBLE"));
  }

  @Test
  void decimalsOfAtMostTheTargetScaleKeepTheirTrailingZerosAndTheirLimits() {
    assertEquals(new BigDecimal("120.50"), cast("120.50", "DECIMAL(5,2)"));
    assertEquals(new BigDecimal("-120.50"), cast(new BigDecimal("-120.5"), "DECIMAL(5,2)"));
    assertEquals(new BigDecimal("100.00"), cast(new BigDecimal("1E+2"), "DECIMAL(5,2)"));
    assertEquals(new BigDecimal("100.00"), cast("100.0", "DECIMAL(5,2)"));
    assertEquals(100L, cast(new BigDecimal("1E+2"), "BIGINT"));
    assertEquals(
        "Cannot convert column 'c': value '1000.0' does not fit DECIMAL(5,2): more than 3 digits"
            + " before the decimal point",
        error("1000.0", "DECIMAL(5,2)"));
    assertEquals(
        "Cannot convert column 'c': value 1000 does not fit DECIMAL(5,2): more than 3 digits"
            + " before the decimal point",
        error(new BigDecimal("1.0E+3"), "DECIMAL(5,2)"));
  }

  @Test
  void decimalsAreSetExactlyToTheTargetScale() {
    assertEquals(new BigDecimal("12.30"), cast(new BigDecimal("12.3"), "DECIMAL(18,2)"));
    assertEquals(new BigDecimal("12.30"), cast(new BigDecimal("12.3000"), "DECIMAL(18,2)"));
    assertEquals(new BigDecimal("12.3400"), cast(new BigDecimal("12.34"), "DECIMAL(20,4)"));
    assertEquals(new BigDecimal("0.10"), cast(0.1d, "DECIMAL(5,2)"));
    assertEquals(new BigDecimal("0.10"), cast(0.1f, "DECIMAL(5,2)"));
    assertEquals(new BigDecimal("12.25"), cast("12.25", "DECIMAL(18,2)"));
    assertEquals(new BigDecimal("1.0"), cast(true, "DECIMAL(2,1)"));
    assertEquals(new BigDecimal("999.99"), cast(new BigDecimal("999.99"), "DECIMAL(5,2)"));
    assertEquals(new BigDecimal("0.00"), cast(new BigDecimal("0E-10"), "DECIMAL(5,2)"));
    assertEquals(
        "Cannot convert column 'c': value 12.345 does not fit DECIMAL(18,2) without rounding",
        error(new BigDecimal("12.345"), "DECIMAL(18,2)"));
    assertEquals(
        "Cannot convert column 'c': value 1000.00 does not fit DECIMAL(5,2): more than 3 digits"
            + " before the decimal point",
        error(new BigDecimal("1000.00"), "DECIMAL(5,2)"));
    assertEquals(
        "Cannot convert column 'c': value 100000 does not fit DECIMAL(4,0): more than 4 digits"
            + " before the decimal point",
        error(100000, "DECIMAL(4,0)"));
    assertEquals(
        "Cannot convert column 'c': value 1000 does not fit DECIMAL(3,0): more than 3 digits"
            + " before the decimal point",
        error(new BigDecimal("1E+3"), "DECIMAL(3,0)"));
    assertEquals(
        "Cannot convert column 'c': value Infinity does not fit DECIMAL(18,2)",
        error(Double.POSITIVE_INFINITY, "DECIMAL(18,2)"));
    assertEquals(
        "Cannot convert column 'c': value '12,5' cannot be read as DECIMAL(18,2)",
        error("12,5", "DECIMAL(18,2)"));
  }

  /** Huge exponents fail at once instead of expanding to billions of digits. */
  @Test
  void hugeExponentsFailFast() {
    assertEquals(
        "Cannot convert column 'c': value '1e999999999' does not fit DECIMAL(38,10): more than 28"
            + " digits before the decimal point",
        error("1e999999999", "DECIMAL(38,10)"));
    assertEquals(
        "Cannot convert column 'c': value '1e-999999999' does not fit DECIMAL(38,10) without"
            + " rounding",
        error("1e-999999999", "DECIMAL(38,10)"));
    assertEquals(
        "Cannot convert column 'c': value '1e999999999' does not fit BIGINT",
        error("1e999999999", "BIGINT"));
    assertEquals(
        "Cannot convert column 'c': value 9223372036854775808 does not fit BIGINT",
        error(new BigDecimal("9223372036854775808"), "BIGINT"));
    assertEquals(
        "Cannot convert column 'c': value '1e999999999' does not fit DOUBLE",
        error("1e999999999", "DOUBLE"));
    assertEquals(new BigDecimal("1200"), cast("1.2E+3", "DECIMAL(4,0)"));
    assertEquals(1200L, cast("1.2E+3", "BIGINT"));
  }

  @Test
  void booleansConvertFromTextAndNumbersAndToIntegers() {
    assertEquals(true, cast(" YES ", "BOOLEAN"));
    assertEquals(false, cast("f", "BOOLEAN"));
    assertEquals(true, cast((short) 1, "BOOLEAN"));
    assertEquals(false, cast(new BigDecimal("0.00"), "BOOLEAN"));
    assertEquals((short) 1, cast(true, "SMALLINT"));
    assertEquals(0, cast(false, "INT"));
    assertEquals("Cannot convert column 'c': value 2 does not fit BOOLEAN", error(2, "BOOLEAN"));
    assertEquals(
        "Cannot convert column 'c': value 'maybe' cannot be read as BOOLEAN",
        error("maybe", "BOOLEAN"));
  }

  @Test
  void datesAndTimesConvertBetweenTheirTypesInUtc() {
    assertEquals(
        LocalDateTime.parse("2026-09-28T00:00:00"),
        cast(LocalDate.parse("2026-09-28"), "TIMESTAMP_NTZ"));
    assertEquals(
        LocalDate.parse("2026-09-28"),
        cast(LocalDateTime.parse("2026-09-28T23:59:59.999"), "DATE"));
    assertEquals(
        LocalDate.parse("2026-09-27"), cast(Instant.parse("2026-09-27T23:59:59Z"), "DATE"));
    assertEquals(
        LocalDateTime.parse("2026-09-28T16:50:01.123456"),
        cast(Instant.parse("2026-09-28T16:50:01.1234567Z"), "TIMESTAMP_NTZ"));
    assertEquals(
        Instant.parse("2026-09-28T13:50:01.123456Z"),
        cast(LocalDateTime.parse("2026-09-28T13:50:01.1234567"), "TIMESTAMP"));
    assertEquals(
        Instant.parse("2026-09-28T03:00:00Z"),
        cast(OffsetDateTime.parse("2026-09-28T00:00:00-03:00"), "TIMESTAMP"));
    assertEquals(
        Instant.parse("2026-09-28T00:00:00Z"), cast(LocalDate.parse("2026-09-28"), "TIMESTAMP"));
    assertEquals(
        LocalDateTime.parse("2026-09-28T13:50:01.123456"),
        cast("2026-09-28 13:50:01.1234567", "TIMESTAMP_NTZ"));
    assertEquals(
        LocalDateTime.parse("2026-09-28T16:50:01"),
        cast("2026-09-28T13:50:01-03:00", "TIMESTAMP_NTZ"));
    assertEquals(LocalDate.parse("2026-09-28"), cast("2026-09-28", "DATE"));
    assertEquals(LocalDate.parse("2026-09-28"), cast("2026-09-28 13:50:01", "DATE"));
    // A pre-1970 instant truncates toward the past, as Beam's MicrosInstant stores it.
    assertEquals(
        Instant.parse("1969-12-31T23:59:59.999999Z"),
        cast(Instant.parse("1969-12-31T23:59:59.9999999Z"), "TIMESTAMP"));
    assertEquals(
        "Cannot convert column 'c': value '2026-02-30' cannot be read as DATE",
        error("2026-02-30", "DATE"));
    assertEquals(
        "Cannot convert column 'c': value '28/09/2026' cannot be read as TIMESTAMP",
        error("28/09/2026", "TIMESTAMP"));
    assertEquals(
        "Cannot convert column 'c': value '2026-09-28 13:50:01 +25:00' cannot be read as TIMESTAMP",
        error("2026-09-28 13:50:01 +25:00", "TIMESTAMP"));
    assertEquals(
        "Cannot convert column 'c': a value of Java type java.lang.Integer cannot be cast to DATE",
        error(20260928, "DATE"));
    assertEquals(
        "Cannot convert column 'c': a value of Java type java.time.LocalDate cannot be cast to"
            + " BINARY",
        error(LocalDate.parse("2026-09-28"), "BINARY"));
  }

  @Test
  void valuesConvertToTheirCanonicalText() {
    assertEquals("true", cast(true, "STRING"));
    assertEquals("200", cast((short) 200, "STRING"));
    assertEquals("9000000000", cast(9000000000L, "STRING"));
    assertEquals("1.5", cast(1.5f, "STRING"));
    assertEquals("2.25", cast(2.25d, "STRING"));
    assertEquals("12.30", cast(new BigDecimal("12.30"), "STRING"));
    assertEquals("1000", cast(new BigDecimal("1E+3"), "STRING"));
    assertEquals("2026-09-28", cast(LocalDate.parse("2026-09-28"), "STRING"));
    assertEquals("2026-09-28T13:50:00", cast(LocalDateTime.parse("2026-09-28T13:50:00"), "STRING"));
    assertEquals(
        "2026-09-28T13:50:01.1234567",
        cast(LocalDateTime.parse("2026-09-28T13:50:01.1234567"), "STRING"));
    assertEquals("13:50:01.1234567", cast(LocalTime.parse("13:50:01.1234567"), "STRING"));
    assertEquals(
        "2026-09-28T16:50:01.123456Z",
        cast(Instant.parse("2026-09-28T16:50:01.123456Z"), "STRING"));
    assertEquals(
        "2026-09-28T13:50:01-03:00",
        cast(OffsetDateTime.parse("2026-09-28T13:50:01-03:00"), "STRING"));
    assertEquals("0x0001ABFF", cast(new byte[] {0, 1, (byte) 0xAB, (byte) 0xFF}, "STRING"));
    assertEquals("0x", cast(new byte[0], "STRING"));
    assertEquals(
        "6F9619FF-8B86-D011-B42D-00C04FC964FF",
        cast(UUID.fromString("6f9619ff-8b86-d011-b42d-00c04fc964ff"), "STRING"));
    assertArrayEquals(
        new byte[] {'o', 'l', (byte) 0xC3, (byte) 0xA1}, (byte[]) cast("olá", "BINARY"));
    assertEquals(
        "Cannot convert column 'c': a value of Java type java.lang.Object cannot be cast to STRING",
        error(new Object(), "STRING"));
  }

  @Test
  void aRowOfValuesConvertsColumnByColumn() {
    List<ColumnSpec> columns =
        List.of(
            new ColumnSpec("qty", OutputType.SMALLINT),
            new ColumnSpec("amount", OutputType.decimal(18, 2)),
            new ColumnSpec("note", OutputType.STRING));
    assertEquals(
        Arrays.asList((short) 3, new BigDecimal("12.30"), null),
        ValueConverter.toBeamValues(
            Arrays.asList((short) 3, new BigDecimal("12.3"), null), columns));
    assertEquals(
        "Cannot convert column 'amount': value 12.345 does not fit DECIMAL(18,2) without rounding",
        assertThrows(
                IllegalArgumentException.class,
                () ->
                    ValueConverter.toBeamValues(
                        Arrays.asList((short) 3, new BigDecimal("12.345"), "x"), columns))
            .getMessage());
    assertEquals(
        "A row has 2 captured values for 3 columns (`qty` SMALLINT, `amount` DECIMAL(18,2),"
            + " `note` STRING)",
        assertThrows(
                IllegalArgumentException.class,
                () -> ValueConverter.toBeamValues(List.of(1, 2), columns))
            .getMessage());
  }

  /** The extremes SQL Server stores in each date and time type, as Delta holds them. */
  @Test
  void theExtremesOfEveryDateAndTimeTypeFit() {
    assertEquals(LocalDate.of(1, 1, 1), cast(LocalDate.of(1, 1, 1), "DATE"));
    assertEquals(LocalDate.of(1582, 10, 10), cast(LocalDate.of(1582, 10, 10), "DATE"));
    assertEquals(LocalDate.of(9999, 12, 31), cast(LocalDate.of(9999, 12, 31), "DATE"));
    assertEquals(
        LocalDateTime.of(1, 1, 1, 0, 0), cast(LocalDateTime.of(1, 1, 1, 0, 0), "TIMESTAMP_NTZ"));
    assertEquals(
        LocalDateTime.of(9999, 12, 31, 23, 59, 59, 999_999_000),
        cast(LocalDateTime.of(9999, 12, 31, 23, 59, 59, 999_999_900), "TIMESTAMP_NTZ"),
        "datetime2(7) 9999-12-31 23:59:59.9999999 truncated to microseconds");
    assertEquals(
        Instant.parse("0001-01-01T14:00:00Z"),
        cast(OffsetDateTime.parse("0001-01-01T00:00:00-14:00"), "TIMESTAMP"));
    assertEquals(
        Instant.parse("9999-12-31T09:59:59.999999Z"),
        cast(OffsetDateTime.parse("9999-12-31T23:59:59.9999999+14:00"), "TIMESTAMP"));
  }

  @Test
  void datesAndTimesOutsideDeltasRangeFailNamingColumnValueAndRange() {
    assertEquals(
        "Cannot convert column 'c': value -0001-12-31 does not fit DATE: Delta and Spark hold"
            + " 0001-01-01 to 9999-12-31",
        error(LocalDate.of(-1, 12, 31), "DATE"));
    assertEquals(
        "Cannot convert column 'c': value '0000-12-31' (0000-12-31) does not fit DATE: Delta and"
            + " Spark hold 0001-01-01 to 9999-12-31",
        error("0000-12-31", "DATE"));
    assertEquals(
        "Cannot convert column 'c': value +10000-01-01T00:00 does not fit TIMESTAMP_NTZ: Delta and"
            + " Spark hold 0001-01-01T00:00 to 9999-12-31T23:59:59.999999",
        error(LocalDateTime.of(10000, 1, 1, 0, 0), "TIMESTAMP_NTZ"));
    assertEquals(
        "Cannot convert column 'c': value 0001-01-01T00:00+14:00 (0000-12-31T10:00:00Z) does not"
            + " fit TIMESTAMP: Delta and Spark hold 0001-01-01T00:00:00Z to"
            + " 9999-12-31T23:59:59.999999Z",
        error(OffsetDateTime.parse("0001-01-01T00:00:00+14:00"), "TIMESTAMP"));
    assertEquals(
        "Cannot convert column 'c': value 9999-12-31T23:59:59-14:00 (+10000-01-01T13:59:59Z) does"
            + " not fit TIMESTAMP: Delta and Spark hold 0001-01-01T00:00:00Z to"
            + " 9999-12-31T23:59:59.999999Z",
        error(OffsetDateTime.parse("9999-12-31T23:59:59-14:00"), "TIMESTAMP"));
    assertEquals(
        "Cannot convert column 'c': value 0000-12-31T10:00:00Z (0000-12-31) does not fit DATE:"
            + " Delta and Spark hold 0001-01-01 to 9999-12-31",
        error(Instant.parse("0000-12-31T10:00:00Z"), "DATE"));
  }

  @Test
  void textOutsideTheBasicPlaneIsKeptAndALoneSurrogateFails() {
    assertEquals("smile \uD83D\uDE00", cast("smile \uD83D\uDE00", "STRING"));
    assertEquals("", cast("", "STRING"));
    assertArrayEquals(
        new byte[] {(byte) 0xF0, (byte) 0x9F, (byte) 0x98, (byte) 0x80},
        (byte[]) cast("\uD83D\uDE00", "BINARY"));
    assertEquals(
        "Cannot convert column 'c': value 'a\uD83Db' does not fit STRING: the unpaired UTF-16"
            + " surrogate U+D83D at index 1 has no UTF-8 form",
        error("a\uD83Db", "STRING"));
    assertEquals(
        "Cannot convert column 'c': value '\uDE00' does not fit BINARY: the unpaired UTF-16"
            + " surrogate U+DE00 at index 0 has no UTF-8 form",
        error("\uDE00", "BINARY"));
  }
}
