package org.lakecdc.io.mssqlcdc.client;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.math.BigDecimal;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.util.Arrays;
import java.util.List;
import java.util.TimeZone;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Value mapping of {@link JdbcValues}: what mssql-jdbc hands over becomes the Java value of {@link
 * ChangeRow}, without the JVM's zone. The JVM runs in America/Sao_Paulo here, where 2018-11-04
 * 00:30 did not exist (clocks jumped to 01:00), and the scripted result set fails any read through
 * {@code getTimestamp}, {@code getDate} or {@code getTime}.
 */
class JdbcValuesTest {
  private TimeZone saved;

  @BeforeEach
  void pinAZoneWithAGap() {
    saved = TimeZone.getDefault();
    TimeZone.setDefault(TimeZone.getTimeZone("America/Sao_Paulo"));
  }

  @AfterEach
  void restoreTheZone() {
    TimeZone.setDefault(saved);
  }

  private static Object read(String type, Object driverValue) throws SQLException {
    ResultSet rs =
        ScriptedJdbc.resultSet(ScriptedJdbc.typed(List.of(type), new Object[] {driverValue}), null);
    rs.next();
    return JdbcValues.read(rs, 1, JdbcValues.baseType(type));
  }

  @Test
  void readsLocalTimesAsStoredEvenInAGapOfTheJvmZone() throws SQLException {
    LocalDateTime gap = LocalDateTime.parse("2018-11-04T00:30:00.1234567");
    assertEquals(gap, read("datetime2", gap));
    assertEquals(gap, read("datetime", gap));
    assertEquals(gap, read("smalldatetime", gap));
    assertEquals(LocalDate.parse("2018-11-04"), read("date", LocalDate.parse("2018-11-04")));
  }

  @Test
  void readsDatetimeoffsetAsItsUtcInstant() throws SQLException {
    assertEquals(
        Instant.parse("2026-09-28T16:50:01.1234567Z"),
        read("datetimeoffset", OffsetDateTime.parse("2026-09-28T13:50:01.1234567-03:00")));
    assertEquals(
        Instant.parse("2026-09-27T19:30:00Z"),
        read("datetimeoffset", OffsetDateTime.parse("2026-09-28T01:00:00+05:30")));
  }

  @ParameterizedTest
  @CsvSource({
    "13:50:01.1234567, 13:50:01.1234567",
    "13:50:00, 13:50:00",
    "00:00:00.5, 00:00:00.5",
  })
  void shouldReadTimeAsText(String driverValue, String expected) throws SQLException {
    assertEquals(expected, read("time", LocalTime.parse(driverValue)));
  }

  @Test
  void keepsDecimalsExact() throws SQLException {
    assertEquals(
        new BigDecimal("12345678901234567890.1234567890"),
        read("decimal", new BigDecimal("12345678901234567890.1234567890")));
    assertEquals(new BigDecimal("10.5000"), read("money", new BigDecimal("10.5000")));
    assertEquals(new BigDecimal("0.10"), read("numeric() identity", new BigDecimal("0.10")));
  }

  @Test
  void readsUniqueidentifierInCanonicalUpperCase() throws SQLException {
    assertEquals(
        "6F9619FF-8B86-D011-B42D-00C04FC964FF",
        read("uniqueidentifier", "6f9619ff-8b86-d011-b42d-00c04fc964ff"));
  }

  @Test
  void readsBinaryAsBytes() throws SQLException {
    byte[] bytes = {0, -1, 16, -128};
    assertArrayEquals(bytes, (byte[]) read("varbinary", bytes));
    assertArrayEquals(bytes, (byte[]) read("timestamp", bytes));
    assertArrayEquals(bytes, (byte[]) read("binary", bytes));
  }

  @Test
  void readsNumbersAsTheirJavaTypes() throws SQLException {
    assertEquals(Boolean.TRUE, read("bit", true));
    assertEquals((short) 255, read("tinyint", 255));
    assertEquals((short) -2, read("smallint", -2));
    assertEquals(7, read("int identity", 7));
    assertEquals(1L << 40, read("bigint", 1L << 40));
    assertEquals(1.5f, read("real", 1.5f));
    assertEquals(2.25d, read("float", 2.25d));
    assertEquals("Olá", read("nvarchar", "Olá"));
    assertEquals("<a/>", read("xml", "<a/>"));
  }

  @Test
  void readsSqlNullAsNullForEveryType() throws SQLException {
    for (String type :
        Arrays.asList(
            "bit",
            "tinyint",
            "smallint",
            "int",
            "bigint",
            "real",
            "float",
            "decimal",
            "money",
            "date",
            "datetime",
            "datetime2",
            "datetimeoffset",
            "time",
            "uniqueidentifier",
            "varchar",
            "varbinary")) {
      assertNull(read(type, null), type);
    }
  }

  @Test
  void stripsTheDriversIdentitySuffix() {
    assertEquals("int", JdbcValues.baseType("int identity"));
    assertEquals("decimal", JdbcValues.baseType("decimal() identity"));
    assertEquals("datetime2", JdbcValues.baseType("DATETIME2"));
  }
}
