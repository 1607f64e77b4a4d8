package org.lakecdc.io.mssqlcdc.source;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.lakecdc.io.mssqlcdc.client.SchemaChangedError;
import org.lakecdc.io.mssqlcdc.schema.CapturedColumn;
import org.lakecdc.io.mssqlcdc.schema.ColumnSpec;
import org.lakecdc.io.mssqlcdc.schema.OutputType;
import org.lakecdc.io.mssqlcdc.schema.SqlServerType;
import org.lakecdc.io.mssqlcdc.schema.UnsupportedTypeException;

/**
 * Tests of {@link CapturedSchema#infer}: docs/tables.md "Bronze", scenarios C033, C034, C036, C205,
 * C206, C208, C219.
 */
class CapturedSchemaTest {

  private static CapturedColumn col(String name, int ordinal, String sqlServerType) {
    return new CapturedColumn(name, ordinal, SqlServerType.parse(sqlServerType), false);
  }

  private static CapturedColumn computed(String name, int ordinal, String sqlServerType) {
    return new CapturedColumn(name, ordinal, SqlServerType.parse(sqlServerType), true);
  }

  private static InstanceColumns instance(String name, CapturedColumn... columns) {
    return new InstanceColumns(name, List.of(columns));
  }

  /** The v1 instance of the switch scenarios (C033, C034). */
  private static InstanceColumns ordersV1() {
    return instance(
        "dbo_orders",
        col("order_id", 1, "int"),
        col("status", 2, "varchar(20)"),
        col("amount", 3, "decimal(18,2)"),
        col("updated_at", 4, "datetime2(7)"));
  }

  @Test
  void c205ColumnsComeInOrdinalOrder() {
    CapturedSchema schema =
        CapturedSchema.infer(
            List.of(
                instance(
                    "dbo_orders",
                    col("amount", 2, "decimal(18,2)"),
                    col("order_id", 1, "int"),
                    col("status", 3, "varchar(50)"),
                    col("created at", 4, "datetime2(7)"),
                    col("flag", 5, "bit"),
                    col("qty", 6, "tinyint"))));
    assertEquals(
        List.of(
            new ColumnSpec("order_id", OutputType.INT),
            new ColumnSpec("amount", OutputType.decimal(18, 2)),
            new ColumnSpec("status", OutputType.STRING),
            new ColumnSpec("created at", OutputType.TIMESTAMP_NTZ),
            new ColumnSpec("flag", OutputType.BOOLEAN),
            new ColumnSpec("qty", OutputType.SMALLINT)),
        schema.columns());
    assertEquals(
        "`order_id` INT, `amount` DECIMAL(18,2), `status` STRING, `created at` TIMESTAMP_NTZ,"
            + " `flag` BOOLEAN, `qty` SMALLINT",
        schema.ddl());
    assertEquals(List.of(), schema.warnings());
  }

  @Test
  void computedColumnsAreLeftOutWithAWarning() {
    CapturedSchema schema =
        CapturedSchema.infer(
            List.of(
                instance(
                    "dbo_orders",
                    col("order_id", 1, "int"),
                    computed("total", 3, "decimal(19,4)"),
                    col("price", 2, "money"),
                    computed("label", 4, "geography"))));
    assertEquals("`order_id` INT, `price` DECIMAL(19,4)", schema.ddl());
    assertEquals(
        List.of(
            "Computed column(s) total, label of capture instance dbo_orders are left out of the"
                + " inferred schema: CDC stores NULL for computed columns in every change row"),
        schema.warnings());
  }

  /** C033: the newer instance adds a column, drops one and widens a decimal. */
  @Test
  void theNewerInstanceAddsAndWidensColumnsOfTheUnion() {
    CapturedSchema schema =
        CapturedSchema.infer(
            List.of(
                ordersV1(),
                instance(
                    "dbo_orders_v2",
                    col("order_id", 1, "int"),
                    col("status", 2, "varchar(20)"),
                    col("amount", 3, "decimal(20,4)"),
                    col("note", 4, "nvarchar(100)"))));
    assertEquals(
        "`order_id` INT, `status` STRING, `amount` DECIMAL(20,4), `updated_at` TIMESTAMP_NTZ,"
            + " `note` STRING",
        schema.ddl());
  }

  @Test
  void newerWidensIntToBigint() {
    CapturedSchema schema =
        CapturedSchema.infer(
            List.of(
                instance("dbo_t", col("id", 1, "int"), col("qty", 2, "tinyint")),
                instance("dbo_t_v2", col("ID", 1, "bigint"), col("qty", 2, "int"))));
    assertEquals(
        List.of(new ColumnSpec("id", OutputType.BIGINT), new ColumnSpec("qty", OutputType.INT)),
        schema.columns());
  }

  @Test
  void newerNarrowsBigintToIntFails() {
    SchemaChangedError e =
        assertThrows(
            SchemaChangedError.class,
            () ->
                CapturedSchema.infer(
                    List.of(
                        instance("dbo_t", col("id", 1, "bigint")),
                        instance("dbo_t_v2", col("id", 1, "int")))));
    assertEquals(
        "Capture instances dbo_t and dbo_t_v2 type column 'id' as BIGINT and INT: the newer type"
            + " does not hold every value of the older one; pass 'columns' (withColumns /"
            + " --columns) with a type holding both, or disable the older instance once the stream"
            + " has read past the newer one's start",
        e.getMessage());
  }

  /** C034. */
  @Test
  void c034NarrowerDecimalInTheNewerInstanceFails() {
    SchemaChangedError e =
        assertThrows(
            SchemaChangedError.class,
            () ->
                CapturedSchema.infer(
                    List.of(
                        ordersV1(),
                        instance(
                            "dbo_orders_v2",
                            col("order_id", 1, "int"),
                            col("amount", 2, "decimal(10,2)")))));
    assertTrue(
        e.getMessage().contains("'amount' as DECIMAL(18,2) and DECIMAL(10,2)"), e.getMessage());
    assertTrue(e.getMessage().startsWith("Capture instances dbo_orders and dbo_orders_v2 "));
  }

  /** C036: union by name in capture order, the wider type wins; a scale change fails. */
  @Test
  void c036TheUnionTakesTheWiderTypeAndTheNewColumnOfTheNewerInstance() {
    InstanceColumns v1 =
        instance("dbo_orders", col("id", 1, "int"), col("amount", 2, "decimal(9,2)"));
    CapturedSchema schema =
        CapturedSchema.infer(
            List.of(
                v1,
                instance(
                    "dbo_orders_v2",
                    col("id", 1, "int"),
                    col("amount", 2, "decimal(18,4)"),
                    col("note", 3, "varchar(100)"))));
    assertEquals("`id` INT, `amount` DECIMAL(18,4), `note` STRING", schema.ddl());

    SchemaChangedError e =
        assertThrows(
            SchemaChangedError.class,
            () ->
                CapturedSchema.infer(
                    List.of(
                        v1,
                        instance(
                            "dbo_orders_v2",
                            col("id", 1, "int"),
                            col("amount", 2, "decimal(9,3)")))));
    assertTrue(
        e.getMessage().contains("'amount' as DECIMAL(9,2) and DECIMAL(9,3)"), e.getMessage());
  }

  /** Three instances: each type is compared with the newest type seen before it. */
  @Test
  void threeInstancesCompareWithTheNewestTypeSeen() {
    CapturedSchema schema =
        CapturedSchema.infer(
            List.of(
                instance("t_v1", col("id", 1, "int"), col("x", 2, "smallint")),
                instance("t_v2", col("id", 1, "int")),
                instance("t_v3", col("id", 1, "int"), col("x", 2, "bigint"))));
    assertEquals("`id` INT, `x` BIGINT", schema.ddl());

    SchemaChangedError e =
        assertThrows(
            SchemaChangedError.class,
            () ->
                CapturedSchema.infer(
                    List.of(
                        instance("t_v1", col("x", 1, "int")),
                        instance("t_v2", col("x", 1, "bigint")),
                        instance("t_v3", col("x", 1, "int")))));
    assertTrue(
        e.getMessage()
            .startsWith("Capture instances t_v2 and t_v3 type column 'x' as BIGINT and INT:"),
        e.getMessage());
  }

  /** C206, C036: an unmappable type names the column, the instance and 'columns'. */
  @Test
  void geographyInTheOlderInstanceFailsNamingIt() {
    UnsupportedTypeException e =
        assertThrows(
            UnsupportedTypeException.class,
            () ->
                CapturedSchema.infer(
                    List.of(
                        instance("dbo_places", col("id", 1, "int"), col("shape", 2, "geography")),
                        instance("dbo_places_v2", col("id", 1, "int")))));
    assertEquals(
        "Column 'shape' of capture instance dbo_places has SQL Server type geography, which has no"
            + " default mapping; declare the columns to read with 'columns' (withColumns /"
            + " --columns) and leave it out",
        e.getMessage());
    assertTrue(Pattern.compile("geography.*'columns'").matcher(e.getMessage()).find());
  }

  /** C219: inferred columns are checked for reserved names too. */
  @Test
  void c219AReservedNameInACaptureInstanceIsRefused() {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () ->
                CapturedSchema.infer(
                    List.of(
                        instance("dbo_orders", col("id", 1, "int"), col("_operation", 2, "int")))));
    assertTrue(
        Pattern.compile("_operation take the name.*capture instance")
            .matcher(e.getMessage())
            .find(),
        e.getMessage());
    assertEquals(
        "Source column(s) _operation take the name of a metadata column (reserved, ignoring case:"
            + " _capture_instance, _start_lsn, _seqval, _operation, _command_id, _commit_ts,"
            + " _batch_id, _snapshot, _chunk); capture instance dbo_orders captures them: declare"
            + " the columns to read with 'columns' (withColumns / --columns) and leave them out",
        e.getMessage());
  }

  @Test
  void aComputedReservedNameIsLeftOutNotRefused() {
    CapturedSchema schema =
        CapturedSchema.infer(
            List.of(instance("dbo_t", col("id", 1, "int"), computed("_chunk", 2, "int"))));
    assertEquals("`id` INT", schema.ddl());
  }

  /** C208: no captured columns means 'columns' is required. */
  @Test
  void unknownColumnsRequireColumns() {
    assertEquals(
        "Capture instance dbo_orders reports no captured columns; 'columns' is required: declare"
            + " the columns to read (withColumns / --columns)",
        assertThrows(
                IllegalArgumentException.class,
                () -> CapturedSchema.infer(List.of(instance("dbo_orders"))))
            .getMessage());
    assertEquals(
        "No capture instance to infer the columns from; 'columns' is required: declare the columns"
            + " to read (withColumns / --columns)",
        assertThrows(IllegalArgumentException.class, () -> CapturedSchema.infer(new ArrayList<>()))
            .getMessage());
    assertEquals(
        "The capture instances of the table (a, b) capture only computed columns; 'columns' is"
            + " required: declare the columns to read (withColumns / --columns)",
        assertThrows(
                IllegalArgumentException.class,
                () ->
                    CapturedSchema.infer(
                        List.of(
                            instance("a", computed("x", 1, "int")),
                            instance("b", computed("x", 1, "int")))))
            .getMessage());
  }

  @Test
  void namesEqualIgnoringCaseInOneInstanceAreRefused() {
    assertEquals(
        "Capture instance dbo_t captures columns Id and id, equal ignoring case, which output"
            + " columns cannot be; declare the columns to read with 'columns' (withColumns /"
            + " --columns) and leave one out",
        assertThrows(
                IllegalArgumentException.class,
                () ->
                    CapturedSchema.infer(
                        List.of(instance("dbo_t", col("Id", 1, "int"), col("id", 2, "int")))))
            .getMessage());
  }
}
