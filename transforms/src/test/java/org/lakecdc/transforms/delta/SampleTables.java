package org.lakecdc.transforms.delta;

import io.delta.kernel.Operation;
import io.delta.kernel.Table;
import io.delta.kernel.defaults.engine.DefaultEngine;
import io.delta.kernel.engine.Engine;
import io.delta.kernel.utils.CloseableIterable;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.beam.sdk.schemas.Schema;
import org.apache.beam.sdk.values.Row;
import org.apache.hadoop.conf.Configuration;
import org.lakecdc.io.mssqlcdc.schema.OutputType;

/**
 * Writes a fixed set of Delta tables through {@link DeltaTables} for an independent reader to check
 * (the {@code delta-spark-check} module runs this in its own JVM, then reads the tables with
 * delta-spark). Usage: {@code SampleTables <directory>}; the directory must not hold the tables
 * yet. Tables, each under the directory:
 *
 * <ul>
 *   <li>{@code types}: a bronze table with one column per output type (comments = the type names),
 *       three rows ({@link #HIGH}, {@link #LOW}, all NULL) in two idempotent commits (app id {@code
 *       sample}, versions 1 and 2, the second replayed and skipped) with domain metadata {@code
 *       lakecdc.position} = {@code {"end_lsn":"0x0000002A000001000021"}}.
 *   <li>{@code control}: a control table rewritten three times; only the row {@code (3, 'third')}
 *       remains.
 *   <li>{@code migrated}: a table created without the {@code mssql_cdc} properties, holding row
 *       {@code ('before')}, migrated to version 1 and given column {@code b INT} (comment {@code
 *       added b}), then row {@code ('after', 2)}.
 *   <li>{@code checkpointed}: a facts table with twelve one-row commits (ids 1 to 12, app id {@code
 *       cp}), so that a checkpoint exists at version 10.
 * </ul>
 */
public final class SampleTables {
  /** The columns of the {@code types} table: {@code c_<type>}, comment = the type's DDL name. */
  public static final List<DeltaColumn> TYPES =
      List.of(
          DeltaColumn.required("c_int", OutputType.INT, "INT"),
          DeltaColumn.nullable("c_boolean", OutputType.BOOLEAN, "BOOLEAN"),
          DeltaColumn.nullable("c_smallint", OutputType.SMALLINT, "SMALLINT"),
          DeltaColumn.nullable("c_bigint", OutputType.BIGINT, "BIGINT"),
          DeltaColumn.nullable("c_float", OutputType.FLOAT, "FLOAT"),
          DeltaColumn.nullable("c_double", OutputType.DOUBLE, "DOUBLE"),
          DeltaColumn.nullable("c_decimal", OutputType.decimal(18, 2), "DECIMAL(18,2)"),
          DeltaColumn.nullable("c_decimal38", OutputType.decimal(38, 10), "DECIMAL(38,10)"),
          DeltaColumn.nullable("c_date", OutputType.DATE, "DATE"),
          DeltaColumn.nullable("c_ntz", OutputType.TIMESTAMP_NTZ, "TIMESTAMP_NTZ"),
          DeltaColumn.nullable("c_ts", OutputType.TIMESTAMP, "TIMESTAMP"),
          DeltaColumn.nullable("c_string", OutputType.STRING, "STRING"),
          DeltaColumn.nullable("c_binary", OutputType.BINARY, "BINARY"));

  private static final Schema TYPES_SCHEMA = DeltaColumn.toBeamSchema(TYPES);

  /** Row {@code c_int = 1}: high values. */
  public static final Row HIGH =
      Row.withSchema(TYPES_SCHEMA)
          .addValues(
              1,
              true,
              Short.MAX_VALUE,
              Long.MAX_VALUE,
              1.5f,
              -2.25e300,
              new BigDecimal("9999999999999999.99"),
              new BigDecimal("1234567890123456789012345678.0123456789"),
              LocalDate.of(9999, 12, 31),
              LocalDateTime.of(2026, 9, 28, 13, 50, 0, 123_456_000),
              Instant.parse("2026-09-28T13:50:00.654321Z"),
              "ünïcødé ✓",
              new byte[] {0, 1, (byte) 0xFF})
          .build();

  /** Row {@code c_int = 2}: low values. */
  public static final Row LOW =
      Row.withSchema(TYPES_SCHEMA)
          .addValues(
              2,
              false,
              Short.MIN_VALUE,
              -1L,
              -0.5f,
              Double.MIN_VALUE,
              new BigDecimal("-0.01"),
              new BigDecimal("0E-10"),
              LocalDate.of(1900, 1, 1),
              LocalDateTime.of(1900, 1, 1, 0, 0, 0, 1_000),
              Instant.parse("1969-12-31T23:59:59.999999Z"),
              "",
              new byte[0])
          .build();

  private SampleTables() {}

  /**
   * Writes the tables.
   *
   * @param args one argument: the directory to write the tables under
   */
  public static void main(String[] args) {
    if (args.length != 1) {
      throw new IllegalArgumentException("Usage: SampleTables <directory>");
    }
    write(Path.of(args[0]));
  }

  /**
   * Writes the tables under a directory.
   *
   * @param dir the directory
   */
  public static void write(Path dir) {
    DeltaTables tables = DeltaTables.create();

    String types = dir.resolve("types").toString();
    tables.createIfAbsent(types, TableDefinition.of(TableKind.BRONZE, TYPES));
    String position = "{\"end_lsn\":\"0x0000002A000001000021\"}";
    tables.append(
        types, TYPES_SCHEMA, List.of(HIGH), "sample", 1, Map.of("lakecdc.position", "{}"));
    Row nulls =
        Row.withSchema(TYPES_SCHEMA).addValue(3).addValues(new Object[TYPES.size() - 1]).build();
    tables.append(
        types,
        TYPES_SCHEMA,
        List.of(LOW, nulls),
        "sample",
        2,
        Map.of("lakecdc.position", position));
    tables.append(types, TYPES_SCHEMA, List.of(HIGH), "sample", 2, Map.of());

    List<DeltaColumn> controlColumns =
        List.of(
            DeltaColumn.required("id", OutputType.BIGINT, "Row id"),
            DeltaColumn.nullable("note", OutputType.STRING, "Note"));
    Schema controlSchema = DeltaColumn.toBeamSchema(controlColumns);
    String control = dir.resolve("control").toString();
    tables.createIfAbsent(control, TableDefinition.of(TableKind.CONTROL, controlColumns));
    tables.rewrite(
        control,
        controlSchema,
        List.of(Row.withSchema(controlSchema).addValues(1L, "first").build()));
    tables.rewrite(
        control,
        controlSchema,
        List.of(Row.withSchema(controlSchema).addValues(2L, "second").build()));
    tables.rewrite(
        control,
        controlSchema,
        List.of(Row.withSchema(controlSchema).addValues(3L, "third").build()));

    String migrated = dir.resolve("migrated").toString();
    DeltaColumn a = DeltaColumn.nullable("a", OutputType.STRING, "column a");
    Engine engine = DefaultEngine.create(new Configuration());
    Table.forPath(engine, migrated)
        .createTransactionBuilder(engine, "sample", Operation.CREATE_TABLE)
        .withSchema(engine, DeltaTypes.toStruct(List.of(a)))
        .withDomainMetadataSupported()
        .build(engine)
        .commit(engine, CloseableIterable.emptyIterable());
    Schema aSchema = DeltaColumn.toBeamSchema(List.of(a));
    tables.append(
        migrated,
        aSchema,
        List.of(Row.withSchema(aSchema).addValue("before").build()),
        null,
        0,
        Map.of());
    tables.open(migrated, TableKind.SILVER);
    DeltaColumn b = DeltaColumn.nullable("b", OutputType.INT, "added b");
    tables.addColumns(migrated, List.of(b));
    Schema abSchema = DeltaColumn.toBeamSchema(List.of(a, b));
    tables.append(
        migrated,
        abSchema,
        List.of(Row.withSchema(abSchema).addValues("after", 2).build()),
        null,
        0,
        Map.of());

    List<DeltaColumn> factColumns = List.of(DeltaColumn.required("id", OutputType.BIGINT, "Id"));
    Schema factSchema = DeltaColumn.toBeamSchema(factColumns);
    String checkpointed = dir.resolve("checkpointed").toString();
    tables.createIfAbsent(checkpointed, TableDefinition.of(TableKind.FACTS, factColumns));
    List<Row> none = new ArrayList<>();
    for (long id = 1; id <= 12; id++) {
      none.clear();
      none.add(Row.withSchema(factSchema).addValue(id).build());
      tables.append(checkpointed, factSchema, none, "cp", id, Map.of());
    }
    if (!Files.exists(
        dir.resolve("checkpointed/_delta_log/00000000000000000010.checkpoint.parquet"))) {
      throw new IllegalStateException("No checkpoint at version 10 in " + checkpointed);
    }
  }
}
