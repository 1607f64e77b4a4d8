package org.lakecdc.io.mssqlcdc.schema;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.util.stream.Stream;
import org.apache.beam.sdk.schemas.Schema.FieldType;
import org.apache.beam.sdk.schemas.logicaltypes.FixedPrecisionNumeric;
import org.apache.beam.sdk.schemas.logicaltypes.SqlTypes;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;

/** Tests of {@link OutputType}: DDL names, canonical text and the Beam field types. */
class OutputTypeTest {

  @ParameterizedTest(name = "{0} -> {1}")
  @CsvSource(
      delimiter = '|',
      value = {
        "BOOLEAN | BOOLEAN",
        "boolean | BOOLEAN",
        "SMALLINT | SMALLINT",
        "short | SMALLINT",
        "INT | INT",
        "Integer | INT",
        "'  int  ' | INT",
        "BIGINT | BIGINT",
        "long | BIGINT",
        "FLOAT | FLOAT",
        "real | FLOAT",
        "DOUBLE | DOUBLE",
        "DECIMAL(18, 2) | DECIMAL(18,2)",
        "decimal ( 18 , 2 ) | DECIMAL(18,2)",
        "DECIMAL | DECIMAL(10,0)",
        "DECIMAL(7) | DECIMAL(7,0)",
        "NUMERIC(38,10) | DECIMAL(38,10)",
        "dec(5,5) | DECIMAL(5,5)",
        "DATE | DATE",
        "TIMESTAMP_NTZ | TIMESTAMP_NTZ",
        "timestamp_ntz | TIMESTAMP_NTZ",
        "TIMESTAMP | TIMESTAMP",
        "TIMESTAMP_LTZ | TIMESTAMP",
        "STRING | STRING",
        "VARCHAR(20) | STRING",
        "varchar ( 20 ) | STRING",
        "CHAR(3) | STRING",
        "BINARY | BINARY",
      })
  void testParseAcceptsSparkDdlNames(String text, String canonical) {
    OutputType type = OutputType.parse(text);
    assertEquals(canonical, type.toString());
    assertEquals(type, OutputType.parse(type.toString()));
  }

  @Test
  void parseUnknownTypeNamesTheTextAndListsTheAccepted() {
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> OutputType.parse("TINYINT"));
    assertEquals(
        "Unknown column type 'TINYINT'; accepted (any case): BOOLEAN, SMALLINT (SHORT),"
            + " INT (INTEGER), BIGINT (LONG), FLOAT (REAL), DOUBLE, DECIMAL(p,s) (NUMERIC, DEC;"
            + " DECIMAL alone is DECIMAL(10,0)), DATE, TIMESTAMP_NTZ, TIMESTAMP (TIMESTAMP_LTZ),"
            + " STRING (VARCHAR(n), CHAR(n)), BINARY",
        e.getMessage());
    for (String bad : new String[] {"", "VARCHAR", "DECIMAL(18,", "STRUCT<a: INT>", "INT INT"}) {
      assertThrows(IllegalArgumentException.class, () -> OutputType.parse(bad), bad);
    }
  }

  @Test
  void decimalPrecisionAndScaleAreChecked() {
    assertEquals(
        "DECIMAL precision must be 1 to 38, not 39",
        assertThrows(IllegalArgumentException.class, () -> OutputType.parse("DECIMAL(39,2)"))
            .getMessage());
    assertEquals(
        "DECIMAL precision must be 1 to 38, not 0",
        assertThrows(IllegalArgumentException.class, () -> OutputType.decimal(0, 0)).getMessage());
    assertEquals(
        "DECIMAL scale must be 0 to the precision (5), not 6",
        assertThrows(IllegalArgumentException.class, () -> OutputType.parse("DECIMAL(5,6)"))
            .getMessage());
    assertEquals(
        "DECIMAL precision must be 1 to 38, not 99999999999",
        assertThrows(IllegalArgumentException.class, () -> OutputType.parse("DECIMAL(99999999999)"))
            .getMessage());
  }

  @Test
  void onlyDecimalsHavePrecisionAndScale() {
    OutputType d = OutputType.decimal(18, 2);
    assertEquals(18, d.precision());
    assertEquals(2, d.scale());
    assertTrue(d.isDecimal());
    assertFalse(d.isInteger());
    assertTrue(OutputType.SMALLINT.isInteger());
    assertEquals(
        "INT has no precision or scale",
        assertThrows(IllegalStateException.class, OutputType.INT::precision).getMessage());
  }

  @Test
  void typesAreEqualByValueAndSerializable() throws Exception {
    assertEquals(OutputType.decimal(18, 2), OutputType.parse("numeric(18,2)"));
    assertEquals(
        OutputType.decimal(18, 2).hashCode(), OutputType.parse("DECIMAL(18,2)").hashCode());
    assertNotEquals(OutputType.decimal(18, 2), OutputType.decimal(18, 3));
    assertNotEquals(OutputType.TIMESTAMP, OutputType.TIMESTAMP_NTZ);

    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
      out.writeObject(OutputType.decimal(20, 4));
    }
    try (ObjectInputStream in =
        new ObjectInputStream(new ByteArrayInputStream(bytes.toByteArray()))) {
      assertEquals(OutputType.decimal(20, 4), in.readObject());
    }
  }

  static Stream<Arguments> beamFieldTypes() {
    return Stream.of(
        Arguments.of(OutputType.BOOLEAN, FieldType.BOOLEAN),
        Arguments.of(OutputType.SMALLINT, FieldType.INT16),
        Arguments.of(OutputType.INT, FieldType.INT32),
        Arguments.of(OutputType.BIGINT, FieldType.INT64),
        Arguments.of(OutputType.FLOAT, FieldType.FLOAT),
        Arguments.of(OutputType.DOUBLE, FieldType.DOUBLE),
        Arguments.of(
            OutputType.decimal(18, 2), FieldType.logicalType(FixedPrecisionNumeric.of(18, 2))),
        Arguments.of(OutputType.DATE, FieldType.logicalType(SqlTypes.DATE)),
        Arguments.of(OutputType.TIMESTAMP_NTZ, FieldType.logicalType(SqlTypes.DATETIME)),
        Arguments.of(OutputType.TIMESTAMP, FieldType.logicalType(SqlTypes.TIMESTAMP)),
        Arguments.of(OutputType.STRING, FieldType.STRING),
        Arguments.of(OutputType.BINARY, FieldType.BYTES));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("beamFieldTypes")
  void eachTypeMapsToANullableBeamFieldTypeAndBack(OutputType type, FieldType expected) {
    FieldType actual = type.toBeamFieldType();
    assertTrue(actual.getNullable());
    assertEquals(expected.withNullable(true), actual);
    assertEquals(type, OutputType.fromBeamFieldType(actual));
    assertEquals(type, OutputType.fromBeamFieldType(expected));
  }

  @Test
  void decimalFieldTypesDifferByPrecisionAndScale() {
    assertNotEquals(
        OutputType.decimal(18, 2).toBeamFieldType(), OutputType.decimal(18, 4).toBeamFieldType());
    assertEquals(
        OutputType.decimal(38, 10),
        OutputType.fromBeamFieldType(OutputType.decimal(38, 10).toBeamFieldType()));
  }

  @Test
  void fromBeamFieldTypeRejectsOtherTypes() {
    for (FieldType other :
        new FieldType[] {
          FieldType.BYTE, FieldType.DECIMAL, FieldType.DATETIME, FieldType.array(FieldType.INT32)
        }) {
      IllegalArgumentException e =
          assertThrows(IllegalArgumentException.class, () -> OutputType.fromBeamFieldType(other));
      assertTrue(e.getMessage().startsWith("Beam field type "), e.getMessage());
      assertTrue(e.getMessage().contains("has no output type; accepted: BOOLEAN"), e.getMessage());
    }
  }
}
