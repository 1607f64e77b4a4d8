package org.lakecdc.io.mssqlcdc.schema;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Tests of {@link TypeCompatibility#fits} (docs/tables.md "Schema evolution of bronze") and {@link
 * TypeCompatibility#holds} (docs/options.md, {@code --columns}).
 */
class TypeCompatibilityTest {

  @ParameterizedTest(name = "fits({0}, {1}) = {2}")
  @CsvSource(
      delimiter = '|',
      value = {
        // equal types
        "INT | INT | true",
        "STRING | STRING | true",
        "BINARY | BINARY | true",
        "TIMESTAMP | TIMESTAMP | true",
        "DECIMAL(18,2) | DECIMAL(18,2) | true",
        // integer widening, never narrowing
        "SMALLINT | INT | true",
        "SMALLINT | BIGINT | true",
        "INT | BIGINT | true",
        "BIGINT | INT | false",
        "INT | SMALLINT | false",
        "BIGINT | SMALLINT | false",
        // float, date
        "FLOAT | DOUBLE | true",
        "DOUBLE | FLOAT | false",
        "DATE | TIMESTAMP_NTZ | true",
        "TIMESTAMP_NTZ | DATE | false",
        "DATE | TIMESTAMP | false",
        "TIMESTAMP_NTZ | TIMESTAMP | false",
        "TIMESTAMP | TIMESTAMP_NTZ | false",
        // smallint and int to double, not bigint
        "SMALLINT | DOUBLE | true",
        "INT | DOUBLE | true",
        "BIGINT | DOUBLE | false",
        "SMALLINT | FLOAT | false",
        "INT | FLOAT | false",
        // integer to decimal: p - s >= 5 / 10 / 20
        "SMALLINT | DECIMAL(5,0) | true",
        "SMALLINT | DECIMAL(4,0) | false",
        "SMALLINT | DECIMAL(7,2) | true",
        "SMALLINT | DECIMAL(6,2) | false",
        "INT | DECIMAL(10,0) | true",
        "INT | DECIMAL(9,0) | false",
        "INT | DECIMAL(12,2) | true",
        "INT | DECIMAL(11,2) | false",
        "BIGINT | DECIMAL(20,0) | true",
        "BIGINT | DECIMAL(19,0) | false",
        "BIGINT | DECIMAL(38,18) | true",
        "BIGINT | DECIMAL(38,19) | false",
        // decimal to decimal: s2 >= s1 and p2 - s2 >= p1 - s1
        "DECIMAL(18,2) | DECIMAL(20,4) | true",
        "DECIMAL(9,2) | DECIMAL(18,4) | true",
        "DECIMAL(18,2) | DECIMAL(10,2) | false",
        "DECIMAL(9,2) | DECIMAL(9,3) | false",
        "DECIMAL(9,3) | DECIMAL(9,2) | false",
        "DECIMAL(10,2) | DECIMAL(11,3) | true",
        "DECIMAL(19,4) | DECIMAL(18,4) | false",
        "DECIMAL(10,4) | DECIMAL(19,4) | true",
        // decimal to integer or floating point never fits
        "DECIMAL(5,0) | INT | false",
        "DECIMAL(5,0) | DOUBLE | false",
        "FLOAT | DECIMAL(38,10) | false",
        // nothing crosses to or from STRING, BINARY, BOOLEAN
        "INT | STRING | false",
        "STRING | BINARY | false",
        "BINARY | STRING | false",
        "BOOLEAN | SMALLINT | false",
        "SMALLINT | BOOLEAN | false",
      })
  void testFits(String older, String newer, boolean expected) {
    assertEquals(
        expected, TypeCompatibility.fits(OutputType.parse(older), OutputType.parse(newer)));
  }

  @ParameterizedTest(name = "holds({0}, {1}) = {2}")
  @CsvSource(
      delimiter = '|',
      value = {
        // the case: o_orderstatus char(1) declared INT
        "INT | char(1) | false",
        "STRING | char(1) | true",
        "BINARY | char(1) | true",
        "BINARY | uniqueidentifier | false",
        // STRING holds everything, even a type without a default mapping
        "STRING | int | true",
        "STRING | datetime2(7) | true",
        "STRING | varbinary(max) | true",
        "DATE | hierarchyid | true",
        // what fits holds; narrower never
        "BIGINT | int | true",
        "INT | bigint | false",
        "SMALLINT | tinyint | true",
        "DECIMAL(18,2) | decimal(15,2) | true",
        "DECIMAL(10,2) | decimal(15,2) | false",
        "DECIMAL(19,4) | money | true",
        "INT | decimal(10,0) | false",
        "BOOLEAN | tinyint | false",
        "DATE | int | false",
        // approximate numbers, bit
        "DOUBLE | decimal(15,2) | true",
        "DOUBLE | bigint | true",
        "FLOAT | int | true",
        "FLOAT | float | false",
        "DOUBLE | char(1) | false",
        "INT | bit | true",
        "DECIMAL(1,0) | bit | true",
        "DECIMAL(2,2) | bit | false",
        "BOOLEAN | bit | true",
        // dates and times
        "TIMESTAMP | date | true",
        "TIMESTAMP | datetime | true",
        "TIMESTAMP_NTZ | datetimeoffset | true",
        "DATE | datetime2(7) | true",
        "DATE | datetimeoffset | true",
        "TIMESTAMP_NTZ | time | false",
        "DATE | char(10) | false",
      })
  void testHolds(String declared, String captured, boolean expected) {
    assertEquals(
        expected,
        TypeCompatibility.holds(OutputType.parse(declared), SqlServerType.parse(captured)));
  }
}
