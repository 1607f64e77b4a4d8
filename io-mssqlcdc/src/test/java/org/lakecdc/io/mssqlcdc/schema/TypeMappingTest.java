package org.lakecdc.io.mssqlcdc.schema;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/** Tests of {@link TypeMapping}: docs/tables.md "Extreme values", scenarios C206, C211, C212. */
class TypeMappingTest {

  /**
   * docs/tables.md "Extreme values", every SQL Server type listed, in the forms the procedure
   * reports.
   */
  @ParameterizedTest(name = "{0} -> {1}")
  @CsvSource(
      delimiter = '|',
      value = {
        "bit | BOOLEAN",
        "tinyint | SMALLINT",
        "smallint | SMALLINT",
        "int | INT",
        "bigint | BIGINT",
        "real | FLOAT",
        "float | DOUBLE",
        "float(53) | DOUBLE",
        "float(25) | DOUBLE",
        "float(24) | FLOAT",
        "float(1) | FLOAT",
        "decimal(18,2) | DECIMAL(18,2)",
        "numeric(38,10) | DECIMAL(38,10)",
        "decimal(5) | DECIMAL(5,0)",
        "decimal | DECIMAL(18,0)",
        "numeric | DECIMAL(18,0)",
        "money | DECIMAL(19,4)",
        "smallmoney | DECIMAL(10,4)",
        "date | DATE",
        "datetime | TIMESTAMP_NTZ",
        "datetime2 | TIMESTAMP_NTZ",
        "datetime2(7) | TIMESTAMP_NTZ",
        "smalldatetime | TIMESTAMP_NTZ",
        "datetimeoffset | TIMESTAMP",
        "datetimeoffset(7) | TIMESTAMP",
        "time | STRING",
        "time(7) | STRING",
        "char(10) | STRING",
        "varchar(50) | STRING",
        "varchar(max) | STRING",
        "nchar(10) | STRING",
        "nvarchar(100) | STRING",
        "nvarchar(max) | STRING",
        "text | STRING",
        "ntext | STRING",
        "xml | STRING",
        "uniqueidentifier | STRING",
        "sysname | STRING",
        "binary(16) | BINARY",
        "varbinary(max) | BINARY",
        "image | BINARY",
        "timestamp | BINARY",
        "rowversion | BINARY",
        "INT | INT",
        "DateTime2(3) | TIMESTAMP_NTZ",
      })
  void testDefaultMapping(String sqlServerType, String outputType) {
    assertEquals(
        OutputType.parse(outputType),
        TypeMapping.outputType("c", SqlServerType.parse(sqlServerType)));
  }

  @Test
  void mappingReturnsTheConstants() {
    assertSame(OutputType.SMALLINT, TypeMapping.outputType("c_tiny", SqlServerType.of("tinyint")));
    assertEquals(
        OutputType.decimal(18, 2),
        TypeMapping.outputType("amount", SqlServerType.of("decimal", 18, 2)));
  }

  @Test
  void geographyHasNoDefaultMapping() {
    UnsupportedTypeException e =
        assertThrows(
            UnsupportedTypeException.class,
            () -> TypeMapping.outputType("shape", SqlServerType.of("geography")));
    assertEquals(
        "Column 'shape' has SQL Server type geography, which has no default mapping; declare the"
            + " columns to read with 'columns' (withColumns / --columns) and leave it out",
        e.getMessage());
    assertTrue(Pattern.compile("geography.*'columns'").matcher(e.getMessage()).find());
    assertEquals("shape", e.column());
    assertEquals(SqlServerType.of("geography"), e.sqlServerType());
    assertEquals(null, e.captureInstance());
    assertTrue(e instanceof IllegalArgumentException);
  }

  @ParameterizedTest
  @ValueSource(strings = {"sql_variant", "geometry", "hierarchyid", "MyClrType", "vector(3)"})
  void unsupportedTypesNameColumnAndType(String sqlServerType) {
    SqlServerType type = SqlServerType.parse(sqlServerType);
    UnsupportedTypeException e =
        assertThrows(UnsupportedTypeException.class, () -> TypeMapping.outputType("c", type));
    assertEquals(
        "Column 'c' has SQL Server type "
            + type
            + ", which has no default mapping; declare the columns to read with 'columns'"
            + " (withColumns / --columns) and leave it out",
        e.getMessage());
  }

  @Test
  void anUnsupportedTypeNamesItsCaptureInstance() {
    UnsupportedTypeException e =
        new UnsupportedTypeException("shape", SqlServerType.of("geometry"))
            .inCaptureInstance("dbo_orders");
    assertEquals(
        "Column 'shape' of capture instance dbo_orders has SQL Server type geometry, which has no"
            + " default mapping; declare the columns to read with 'columns' (withColumns /"
            + " --columns) and leave it out",
        e.getMessage());
    assertEquals("dbo_orders", e.captureInstance());
  }

  @Test
  void decimalOutOfRangeNamesTheColumn() {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> TypeMapping.outputType("amount", SqlServerType.of("decimal", 40, 2)));
    assertEquals(
        "Column 'amount' has SQL Server type decimal(40,2): DECIMAL precision must be 1 to 38,"
            + " not 40",
        e.getMessage());
  }
}
