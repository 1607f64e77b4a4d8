package org.lakecdc.io.mssqlcdc.schema;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/** Tests of {@link ColumnsDdl} and {@link ReservedNames}: scenarios C205, C210, C218. */
class ColumnsDdlTest {
  private static final String C210 =
      "a INT, `b c` DECIMAL(18, 2), `d``e` STRUCT<x: INT, y: INT>, f: STRING, g MAP<INT,INT>";

  private static final String RESERVED_LIST =
      "(reserved, ignoring case: _capture_instance, _start_lsn, _seqval, _operation, _command_id,"
          + " _commit_ts, _batch_id, _snapshot, _chunk)";

  @Test
  void c210NamesAreReadInOrderWithTheirQuotesUndone() {
    assertEquals(List.of("a", "b c", "d`e", "f", "g"), ColumnsDdl.names(C210));
  }

  @Test
  void parseRefusesComplexTypesNamingTheColumn() {
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> ColumnsDdl.parse(C210));
    assertEquals(
        "Column 'd`e' has the complex type STRUCT<x: INT, y: INT>; 'columns' takes scalar types"
            + " only (STRUCT, MAP and ARRAY are not supported)",
        e.getMessage());
    assertEquals(
        "Column 'g' has the complex type MAP<INT,INT>; 'columns' takes scalar types only (STRUCT,"
            + " MAP and ARRAY are not supported)",
        assertThrows(IllegalArgumentException.class, () -> ColumnsDdl.parse("g MAP<INT,INT>"))
            .getMessage());
    assertEquals(
        "Column 'tags' has the complex type array<string>; 'columns' takes scalar types only"
            + " (STRUCT, MAP and ARRAY are not supported)",
        assertThrows(IllegalArgumentException.class, () -> ColumnsDdl.parse("tags array<string>"))
            .getMessage());
  }

  @Test
  void aScalarListParsesIntoColumnSpecs() {
    assertEquals(
        List.of(
            new ColumnSpec("a", OutputType.INT),
            new ColumnSpec("b c", OutputType.decimal(18, 2)),
            new ColumnSpec("d`e", OutputType.STRING),
            new ColumnSpec("f", OutputType.STRING),
            new ColumnSpec("Situação", OutputType.TIMESTAMP_NTZ)),
        ColumnsDdl.parse(
            " a INT, `b c` DECIMAL(18, 2),`d``e`: varchar(10) ,f:STRING,\n Situação timestamp_ntz "));
  }

  @Test
  void formatBackQuotesNamesAndReadsBack() {
    List<ColumnSpec> columns =
        List.of(
            new ColumnSpec("order_id", OutputType.INT),
            new ColumnSpec("amount", OutputType.decimal(18, 2)),
            new ColumnSpec("d`e", OutputType.TIMESTAMP),
            new ColumnSpec("a, b", OutputType.BINARY));
    String ddl = ColumnsDdl.format(columns);
    assertEquals("`order_id` INT, `amount` DECIMAL(18,2), `d``e` TIMESTAMP, `a, b` BINARY", ddl);
    assertEquals(columns, ColumnsDdl.parse(ddl));
    assertEquals("", ColumnsDdl.format(List.of()));
  }

  @ParameterizedTest
  @ValueSource(strings = {"", "   ", "\n\t"})
  void emptyColumnsAreRefused(String ddl) {
    assertEquals(
        "'columns' is empty",
        assertThrows(IllegalArgumentException.class, () -> ColumnsDdl.parse(ddl)).getMessage());
    assertEquals(
        "'columns' is empty",
        assertThrows(IllegalArgumentException.class, () -> ColumnsDdl.parse(null)).getMessage());
  }

  @Test
  void aNameDeclaredTwiceIgnoringCaseIsRefused() {
    assertEquals(
        "Column 'Amount' is declared twice in 'columns' (names are compared ignoring case)",
        assertThrows(
                IllegalArgumentException.class,
                () -> ColumnsDdl.parse("amount DECIMAL(18,2), id INT, Amount DOUBLE"))
            .getMessage());
  }

  @Test
  void syntaxErrorsNameTheEntry() {
    assertEquals(
        "Column 'id' has no type in 'columns'",
        assertThrows(IllegalArgumentException.class, () -> ColumnsDdl.parse("id, amount INT"))
            .getMessage());
    assertEquals(
        "Column 'id' has no type in 'columns'",
        assertThrows(IllegalArgumentException.class, () -> ColumnsDdl.parse("id:")).getMessage());
    assertEquals(
        "Invalid 'columns': an entry is empty in 'id INT,, amount INT'",
        assertThrows(IllegalArgumentException.class, () -> ColumnsDdl.parse("id INT,, amount INT"))
            .getMessage());
    assertEquals(
        "Invalid 'columns': an entry is empty in 'id INT, '",
        assertThrows(IllegalArgumentException.class, () -> ColumnsDdl.parse("id INT, "))
            .getMessage());
    assertEquals(
        "Invalid 'columns': unterminated backtick quote in '`id INT'",
        assertThrows(IllegalArgumentException.class, () -> ColumnsDdl.parse("`id INT"))
            .getMessage());
    assertEquals(
        "Invalid 'columns': an empty column name (``) in '`` INT'",
        assertThrows(IllegalArgumentException.class, () -> ColumnsDdl.parse("`` INT"))
            .getMessage());
    assertEquals(
        "Invalid 'columns': column name 'a];' has characters other than letters, digits and"
            + " underscores; quote it with backticks",
        assertThrows(IllegalArgumentException.class, () -> ColumnsDdl.parse("a]; -- INT"))
            .getMessage());
    assertEquals(
        "Invalid 'columns': unbalanced brackets or quotes in the type of column 'a' in"
            + " 'a DECIMAL(18,2'",
        assertThrows(IllegalArgumentException.class, () -> ColumnsDdl.parse("a DECIMAL(18,2"))
            .getMessage());
    assertEquals(
        "Invalid 'columns': unbalanced brackets or quotes in the type of column 'a' in"
            + " 'a DECIMAL(18,2)), b INT'",
        assertThrows(
                IllegalArgumentException.class, () -> ColumnsDdl.parse("a DECIMAL(18,2)), b INT"))
            .getMessage());
  }

  @Test
  void unknownTypeNamesTheColumn() {
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> ColumnsDdl.parse("id INT, b TINYINT"));
    assertTrue(
        e.getMessage().startsWith("Column 'b' in 'columns': Unknown column type 'TINYINT';"),
        e.getMessage());
    assertEquals(
        "Column 'a' in 'columns': DECIMAL precision must be 1 to 38, not 40",
        assertThrows(IllegalArgumentException.class, () -> ColumnsDdl.parse("a DECIMAL(40, 2)"))
            .getMessage());
  }

  /** C218: a declared column named like a metadata or bronze column fails, naming it. */
  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "id INT, _Seqval STRING | _Seqval",
        "`_batch_id` BIGINT, id INT | _batch_id",
        "id INT, _chunk INT | _chunk",
        "amount DECIMAL(18, 2), _commit_ts TIMESTAMP | _commit_ts",
        "_OPERATION INT, _snapshot STRING, x INT | '_OPERATION, _snapshot'",
      })
  void testReservedNamesInColumns(String ddl, String names) {
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> ColumnsDdl.parse(ddl));
    assertEquals(
        "Source column(s) "
            + names
            + " take the name of a metadata column "
            + RESERVED_LIST
            + "; leave them out of 'columns' (withColumns / --columns)",
        e.getMessage());
    assertTrue(
        Pattern.compile("Source column\\(s\\) " + names + " take the name.*'columns'")
            .matcher(e.getMessage())
            .find());
  }

  @Test
  void capturedReservedNamesAreRefusedNamingTheInstance() {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> ReservedNames.checkCaptured("dbo_orders", List.of("id", "_operation")));
    assertEquals(
        "Source column(s) _operation take the name of a metadata column "
            + RESERVED_LIST
            + "; capture instance dbo_orders captures them: declare the columns to read with"
            + " 'columns' (withColumns / --columns) and leave them out",
        e.getMessage());
    ReservedNames.checkDeclared(List.of("id", "operation", "capture_instance", "_seq"));
  }

  @Test
  void columnNamesAreBackQuotedAndNeverEmpty() {
    assertEquals("`a``b` INT", new ColumnSpec("a`b", OutputType.INT).toDdl());
    assertEquals("`created at`", ColumnSpec.quote("created at"));
    assertEquals(
        "A column name cannot be empty",
        assertThrows(IllegalArgumentException.class, () -> new ColumnSpec("", OutputType.INT))
            .getMessage());
  }
}
