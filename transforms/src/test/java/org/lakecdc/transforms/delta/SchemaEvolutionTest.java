package org.lakecdc.transforms.delta;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.not;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.delta.kernel.Operation;
import io.delta.kernel.Table;
import io.delta.kernel.defaults.engine.DefaultEngine;
import io.delta.kernel.engine.Engine;
import io.delta.kernel.types.DecimalType;
import io.delta.kernel.types.IntegerType;
import io.delta.kernel.types.StructField;
import io.delta.kernel.types.StructType;
import io.delta.kernel.types.TypeChange;
import io.delta.kernel.utils.CloseableIterable;
import java.io.IOException;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.beam.sdk.schemas.Schema;
import org.apache.beam.sdk.values.Row;
import org.apache.hadoop.conf.Configuration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.io.mssqlcdc.client.SchemaChangedError;
import org.lakecdc.io.mssqlcdc.schema.OutputType;

/**
 * {@link DeltaTables#evolveSchema}: columns added, types widened through Delta type widening, and
 * what the table cannot take refused before anything is committed (docs/tables.md "Bronze"; C043,
 * C054, C055).
 */
class SchemaEvolutionTest {
  @TempDir Path dir;

  private final DeltaTables tables = DeltaTables.create();
  private final Engine engine = DefaultEngine.create(new Configuration());

  private String create(String name, DeltaColumn... columns) {
    String path = dir.resolve(name).toString();
    tables.createIfAbsent(path, TableDefinition.of(TableKind.BRONZE, List.of(columns)));
    return path;
  }

  private void append(String path, List<DeltaColumn> columns, Object... values) {
    Schema schema = DeltaColumn.toBeamSchema(columns);
    tables.append(
        path, schema, List.of(Row.withSchema(schema).addValues(values).build()), null, 0, Map.of());
  }

  private List<String> names(String path) {
    return tables.describe(path).columns().stream().map(DeltaColumn::name).toList();
  }

  /** Rows as "column=value, ..." sorted by text. */
  private List<String> rows(String path) {
    List<String> out = new ArrayList<>();
    for (Map<String, Object> row : tables.scan(path)) {
      out.add(
          row.entrySet().stream()
              .map(e -> e.getKey() + "=" + e.getValue())
              .collect(Collectors.joining(", ")));
    }
    out.sort(null);
    return out;
  }

  private StructField kernelField(String path, String name) {
    StructType schema = Table.forPath(engine, path).getLatestSnapshot(engine).getSchema();
    return schema.get(name);
  }

  /** The text of the table's newest log file that holds a {@code metaData} action. */
  private static String lastMetadataCommit(String path) throws IOException {
    try (Stream<Path> files = Files.list(Path.of(path, "_delta_log"))) {
      List<Path> json =
          files
              .filter(p -> p.getFileName().toString().endsWith(".json"))
              .sorted(Comparator.reverseOrder())
              .toList();
      for (Path file : json) {
        String text = Files.readString(file);
        if (text.contains("\"metaData\"")) {
          return text;
        }
      }
    }
    throw new AssertionError("no metaData action in " + path);
  }

  @Test
  void c043MissingColumnsAreAppendedWithTheirCommentsInOneCommitAndOlderRowsReadNull() {
    List<DeltaColumn> before =
        List.of(
            DeltaColumn.nullable("order_id", OutputType.INT, null),
            DeltaColumn.nullable("status", OutputType.STRING, null));
    String path = create("orders", before.toArray(DeltaColumn[]::new));
    append(path, before, 1, "new");
    long version = tables.version(path);
    List<DeltaColumn> after =
        List.of(
            DeltaColumn.nullable("ORDER_ID", OutputType.INT, null),
            DeltaColumn.nullable("status", OutputType.STRING, null),
            DeltaColumn.nullable("note", OutputType.STRING, "a note"),
            DeltaColumn.required("_command_id", OutputType.INT, "statement order"));

    SchemaEvolution evolved = tables.evolveSchema(path, after);

    assertEquals("note, _command_id", evolved.addedNames());
    assertEquals(List.of(), evolved.widened());
    assertEquals(version + 1, evolved.version());
    assertEquals(version + 1, tables.version(path), "one metadata commit");
    assertEquals(List.of("order_id", "status", "note", "_command_id"), names(path));
    TableInfo info = tables.describe(path);
    assertEquals("a note", info.column("note").orElseThrow().comment());
    assertTrue(info.column("_command_id").orElseThrow().nullable(), "added columns are nullable");
    append(path, after, 2, "paid", "gift", 1);
    assertEquals(
        List.of(
            "order_id=1, status=new, note=null, _command_id=null",
            "order_id=2, status=paid, note=gift, _command_id=1"),
        rows(path));
    assertFalse(tables.evolveSchema(path, after).changed(), "nothing left to add");
    assertEquals(version + 2, tables.version(path));
  }

  @Test
  void c054AWideningIsRefusedWithTheStatementThatEnablesTypeWideningThenWidensOnceEnabled()
      throws IOException {
    List<DeltaColumn> narrow =
        List.of(
            DeltaColumn.nullable("order_id", OutputType.INT, null),
            DeltaColumn.nullable("amount", OutputType.decimal(9, 2), "the amount"));
    String path = create("bronze", narrow.toArray(DeltaColumn[]::new));
    append(path, narrow, 1, new BigDecimal("1.25"));
    long version = tables.version(path);
    List<DeltaColumn> wide =
        List.of(
            DeltaColumn.nullable("order_id", OutputType.INT, null),
            DeltaColumn.nullable("amount", OutputType.decimal(18, 4), null));

    SchemaChangedError off =
        assertThrows(SchemaChangedError.class, () -> tables.evolveSchema(path, wide));

    assertEquals(
        "Delta table "
            + path
            + " holds column 'amount' as DECIMAL(9,2), which cannot take DECIMAL(18,4) unchanged,"
            + " and type widening is off on this table. Enable it and run again; the column is"
            + " then widened in a metadata commit and the rows written before read in the new"
            + " type: ALTER TABLE delta.`"
            + path
            + "` SET TBLPROPERTIES ('delta.enableTypeWidening' = 'true'). Delta Kernel 4.4.0"
            + " writes such a table, but only Delta Lake 4.0 or later reads this type change"
            + " (delta-spark 3.x refuses the table once it holds it). Or declare the columns to"
            + " read ('columns': withColumns / --columns) keeping amount DECIMAL(9,2) while the"
            + " values fit, or write a new target.",
        off.getMessage());
    assertEquals(version, tables.version(path), "nothing committed");

    tables.setTableProperties(path, Map.of(TableProperties.ENABLE_TYPE_WIDENING, "true"));
    SchemaEvolution evolved = tables.evolveSchema(path, wide);

    assertEquals("amount DECIMAL(9,2) -> DECIMAL(18,4)", evolved.widenedText());
    assertEquals(List.of(), evolved.added());
    DeltaColumn amount = tables.describe(path).column("amount").orElseThrow();
    assertEquals(OutputType.decimal(18, 4), amount.type());
    assertEquals("the amount", amount.comment(), "the comment stays");
    assertEquals(
        List.of(new TypeChange(new DecimalType(9, 2), new DecimalType(18, 4))),
        kernelField(path, "amount").getTypeChanges());
    assertThat(
        lastMetadataCommit(path),
        containsString(
            "\\\"delta.typeChanges\\\":[{\\\"toType\\\":\\\"decimal(18,4)\\\",\\\"fromType\\\":"
                + "\\\"decimal(9,2)\\\"}]"));
    append(path, wide, 2, new BigDecimal("12345678901234.1234"));
    assertEquals(
        List.of("order_id=1, amount=1.2500", "order_id=2, amount=12345678901234.1234"),
        rows(path),
        "the row written before reads in the wider type");
    assertFalse(tables.evolveSchema(path, wide).changed());
  }

  @Test
  void aShortToIntWideningSaysThatDeltaLake32ReadsIt() {
    String path = create("t", DeltaColumn.nullable("qty", OutputType.SMALLINT, null));

    SchemaChangedError e =
        assertThrows(
            SchemaChangedError.class,
            () ->
                tables.evolveSchema(
                    path, List.of(DeltaColumn.nullable("qty", OutputType.INT, null))));

    assertThat(
        e.getMessage(),
        containsString(
            "holds column 'qty' as SMALLINT, which cannot take INT unchanged, and type widening is"
                + " off"));
    assertThat(
        e.getMessage(),
        containsString(
            "Delta Kernel 4.4.0 writes such a table, and Delta Lake 3.2 or later reads it."));
  }

  @Test
  void aSecondWideningAppendsToTheTypeChangesAndAMigratedCommentKeepsThem() {
    String path =
        create(
            "t",
            DeltaColumn.nullable("id", OutputType.SMALLINT, null),
            DeltaColumn.nullable("amount", OutputType.decimal(9, 2), null));
    tables.setTableProperties(path, Map.of(TableProperties.ENABLE_TYPE_WIDENING, "true"));

    tables.evolveSchema(
        path,
        List.of(
            DeltaColumn.nullable("id", OutputType.INT, null),
            DeltaColumn.nullable("amount", OutputType.decimal(12, 2), null)));
    SchemaEvolution second =
        tables.evolveSchema(
            path,
            List.of(
                DeltaColumn.nullable("id", OutputType.BIGINT, null),
                DeltaColumn.nullable("amount", OutputType.decimal(18, 4), null)));

    assertEquals("id INT -> BIGINT, amount DECIMAL(12,2) -> DECIMAL(18,4)", second.widenedText());
    assertEquals(
        List.of(
            new TypeChange(new DecimalType(9, 2), new DecimalType(12, 2)),
            new TypeChange(new DecimalType(12, 2), new DecimalType(18, 4))),
        kernelField(path, "amount").getTypeChanges());
    assertEquals(2, kernelField(path, "id").getTypeChanges().size());
    StructField commented = DeltaTypes.withComment(kernelField(path, "amount"), "new comment");
    assertEquals(kernelField(path, "amount").getTypeChanges(), commented.getTypeChanges());
  }

  @Test
  void aTypeChangeKernelCannotWidenIsRefusedWithoutSuggestingTypeWidening() {
    String path =
        create(
            "t",
            DeltaColumn.nullable("status", OutputType.STRING, null),
            DeltaColumn.nullable("qty", OutputType.SMALLINT, null));
    tables.setTableProperties(path, Map.of(TableProperties.ENABLE_TYPE_WIDENING, "true"));
    long version = tables.version(path);

    SchemaChangedError string =
        assertThrows(
            SchemaChangedError.class,
            () ->
                tables.evolveSchema(
                    path, List.of(DeltaColumn.nullable("status", OutputType.INT, null))));
    // SMALLINT fits DECIMAL(7,2) by the compatibility rule (5 integer digits), but Delta's type
    // widening takes a short only to a decimal with 10 integer digits.
    SchemaChangedError decimal =
        assertThrows(
            SchemaChangedError.class,
            () ->
                tables.evolveSchema(
                    path, List.of(DeltaColumn.nullable("qty", OutputType.decimal(7, 2), null))));

    assertEquals(
        "Delta table "
            + path
            + " holds column 'status' as STRING, which cannot take INT unchanged, and Delta Kernel"
            + " 4.4.0 cannot widen STRING to INT. Declare the columns to read ('columns':"
            + " withColumns / --columns) keeping status STRING while the values fit, or write a"
            + " new target.",
        string.getMessage());
    assertThat(decimal.getMessage(), containsString("cannot widen SMALLINT to DECIMAL(7,2)"));
    assertThat(decimal.getMessage(), not(containsString("enableTypeWidening")));
    assertEquals(version, tables.version(path));
  }

  @Test
  void rowsOfANarrowerTypeNeedNoChangeAndAreWrittenInTheColumnsType() {
    List<DeltaColumn> wide =
        List.of(
            DeltaColumn.nullable("id", OutputType.BIGINT, null),
            DeltaColumn.nullable("amount", OutputType.decimal(18, 4), null),
            DeltaColumn.nullable("ratio", OutputType.DOUBLE, null),
            DeltaColumn.nullable("at", OutputType.TIMESTAMP_NTZ, null));
    String path = create("t", wide.toArray(DeltaColumn[]::new));
    long version = tables.version(path);
    List<DeltaColumn> narrow =
        List.of(
            DeltaColumn.nullable("id", OutputType.SMALLINT, null),
            DeltaColumn.nullable("amount", OutputType.INT, null),
            DeltaColumn.nullable("ratio", OutputType.FLOAT, null),
            DeltaColumn.nullable("at", OutputType.DATE, null));

    assertFalse(tables.evolveSchema(path, narrow).changed());
    assertEquals(version, tables.version(path));
    append(path, narrow, (short) 7, 12, 0.5f, LocalDate.of(2026, 9, 28));

    Map<String, Object> row = tables.scan(path).get(0);
    assertEquals(7L, row.get("id"));
    assertEquals(new BigDecimal("12.0000"), row.get("amount"));
    assertEquals(0.5d, row.get("ratio"));
    assertEquals(LocalDateTime.of(2026, 9, 28, 0, 0), row.get("at"));
  }

  @Test
  void c055ANameDeltaRefusesWithoutColumnMappingFailsAndNothingIsAdded() {
    String path = create("t", DeltaColumn.nullable("order_id", OutputType.INT, null));
    long version = tables.version(path);

    SchemaChangedError e =
        assertThrows(
            SchemaChangedError.class,
            () ->
                tables.evolveSchema(
                    path,
                    List.of(
                        DeltaColumn.nullable("order_id", OutputType.INT, null),
                        DeltaColumn.nullable("status", OutputType.STRING, null),
                        DeltaColumn.nullable("Qty (kg)", OutputType.decimal(9, 3), null))));

    assertEquals(
        "Delta table "
            + path
            + " can take column(s) 'Qty (kg)' only with column mapping, and column mapping is off"
            + " on this table: without it Delta refuses a space or any of ,;{}()= (or a newline or"
            + " tab) in a column name. Turning it on would not help, because Delta Kernel 4.4.0,"
            + " which writes this table, cannot write tables with column mapping. Declare the"
            + " columns to read without them ('columns': withColumns / --columns), or capture the"
            + " table with a capture instance that leaves them out.",
        e.getMessage());
    assertThat(e.getMessage(), containsString("column(s) 'Qty (kg)' only"));
    assertThat(e.getMessage(), containsString("column mapping is off"));
    assertEquals(List.of("order_id"), names(path), "the schema is unchanged");
    assertEquals(version, tables.version(path));
  }

  @Test
  void theNamesNeedingColumnMappingAreTheOnesKernelRefuses() {
    for (char c : DeltaTypes.CHARS_NEEDING_COLUMN_MAPPING.toCharArray()) {
      String name = "a" + c + "b";
      assertTrue(DeltaTypes.needsColumnMapping(name), name);
      assertThrows(
          RuntimeException.class,
          () -> KernelInternals.validateSchema(new StructType().add(name, IntegerType.INTEGER)),
          name);
    }
    for (String name : List.of("a-b", "Größe", "a.b", "a_b", "[x]")) {
      assertFalse(DeltaTypes.needsColumnMapping(name), name);
      KernelInternals.validateSchema(new StructType().add(name, IntegerType.INTEGER));
    }
  }

  @Test
  void aTableWithColumnMappingIsRefusedBecauseKernelCannotWriteIt() {
    String path = dir.resolve("mapped").toString();
    Table.forPath(engine, path)
        .createTransactionBuilder(engine, "test", Operation.CREATE_TABLE)
        .withSchema(engine, new StructType().add("id", IntegerType.INTEGER))
        .withTableProperties(engine, Map.of(TableProperties.COLUMN_MAPPING_MODE, "name"))
        .build(engine)
        .commit(engine, CloseableIterable.emptyIterable());

    IncompatibleTableException e =
        assertThrows(
            IncompatibleTableException.class,
            () ->
                tables.evolveSchema(
                    path, List.of(DeltaColumn.nullable("id", OutputType.INT, null))));

    assertEquals(
        "Delta table "
            + path
            + " has column mapping ('delta.columnMapping.mode' = 'name'), and Delta Kernel 4.4.0,"
            + " which this project writes with, cannot write tables with column mapping; write a"
            + " new target",
        e.getMessage());
  }

  @Test
  void setTablePropertiesCommitsOnlyAChange() {
    String path = create("t", DeltaColumn.nullable("id", OutputType.INT, null));
    long version = tables.version(path);

    assertEquals(
        version + 1,
        tables.setTableProperties(path, Map.of(TableProperties.ENABLE_TYPE_WIDENING, "true")));
    assertEquals(
        version + 1,
        tables.setTableProperties(path, Map.of(TableProperties.ENABLE_TYPE_WIDENING, "true")));
    assertEquals(
        "true", tables.describe(path).properties().get(TableProperties.ENABLE_TYPE_WIDENING));
    assertNull(tables.describe(path).properties().get(TableProperties.COLUMN_MAPPING_MODE));
  }
}
