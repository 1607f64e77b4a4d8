package org.lakecdc.io.mssqlcdc.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** docs/scenarios.md C228: identifiers and zone names cannot inject SQL. */
class SqlIdentifiersTest {
  @Test
  void acceptsUnicodeCaptureInstanceAndQuotesItsChangeTable() {
    assertEquals("dbo_Situação", SqlIdentifiers.captureInstance("dbo_Situação"));
    assertEquals("cdc.[dbo_Situação_CT]", SqlIdentifiers.changeTable("dbo_Situação"));
    assertEquals("a".repeat(100), SqlIdentifiers.captureInstance("a".repeat(100)));
  }

  @ParameterizedTest
  @ValueSource(strings = {"dbo_x]; DROP TABLE y --", "dbo_orders\n", "dbo\u0000orders", ""})
  void rejectsCaptureInstanceInjections(String name) {
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> SqlIdentifiers.captureInstance(name));
    assertTrue(e.getMessage().startsWith("Invalid capture instance: '"), e.getMessage());
    assertEquals(1, e.getMessage().lines().count(), "one line even for a control character");
  }

  @Test
  void rejectsA101CharacterCaptureInstance() {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class, () -> SqlIdentifiers.captureInstance("a".repeat(101)));
    assertTrue(e.getMessage().startsWith("Invalid capture instance"));
  }

  @Test
  void rejectsColumnInjectionAndQuotesValidNames() {
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> SqlIdentifiers.quote("a]; --"));
    assertEquals(
        "Invalid column name: 'a]; --' (schema, table and column names are 1 to 128 characters,"
            + " without ']' or control characters)",
        e.getMessage());
    assertEquals("[order id]", SqlIdentifiers.quote("order id"));
    assertEquals("[Preço]", SqlIdentifiers.quote("Preço"));
  }

  @ParameterizedTest
  @ValueSource(strings = {"int]", "int\n", "int; DROP", "INT", "varchar(20) COLLATE x;"})
  void rejectsInvalidSqlTypes(String type) {
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> SqlIdentifiers.sqlType(type));
    assertTrue(e.getMessage().startsWith("Invalid SQL type"), e.getMessage());
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "int",
        "decimal(18,2)",
        "nvarchar(max)",
        "varbinary(16)",
        "datetime2(7)",
        "varchar(20) COLLATE Latin1_General_CI_AS"
      })
  void shouldAcceptSqlTypes(String type) {
    assertEquals(type, SqlIdentifiers.sqlType(type));
  }

  @ParameterizedTest
  @ValueSource(strings = {"UTC]", "UTC\n", "UTC'; DROP", ""})
  void rejectsZoneInjections(String zone) {
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> SqlIdentifiers.timeZone(zone));
    assertTrue(e.getMessage().startsWith("Invalid sourceTimeZone"), e.getMessage());
    assertThrows(IllegalArgumentException.class, () -> SourceTimeZone.parse(zone));
  }

  @Test
  void parsesTheSourceTimeZoneOption() {
    assertTrue(SourceTimeZone.parse(" AUTO ").isAuto());
    assertEquals(SourceTimeZone.utc(), SourceTimeZone.parse("utc"));
    assertEquals(
        java.util.Optional.of("E. South America Standard Time"),
        SourceTimeZone.parse(" E. South America Standard Time ").name());
  }

  @Test
  void quotesZoneNamesAsUnicodeLiterals() {
    assertEquals(
        "N'E. South America Standard Time'",
        SqlIdentifiers.timeZoneLiteral("E. South America Standard Time"));
    assertEquals("N'UTC-02'", SqlIdentifiers.timeZoneLiteral("UTC-02"));
  }

  @Test
  void rejectsNonAsciiOrControlCollations() {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class, () -> SqlIdentifiers.collation("Greek_CI_AS\n"));
    assertTrue(e.getMessage().startsWith("Invalid collation"));
    assertThrows(IllegalArgumentException.class, () -> SqlIdentifiers.collation("Grèek_CI_AS"));
    assertEquals("Latin1_General_CI_AS", SqlIdentifiers.collation("Latin1_General_CI_AS"));
  }

  @Test
  void quotesUserNamesLikeQuotename() {
    assertEquals("[lakecdc_reader]", SqlIdentifiers.quoteUser("lakecdc_reader"));
    assertEquals("[a]]b]", SqlIdentifiers.quoteUser("a]b"));
  }
}
