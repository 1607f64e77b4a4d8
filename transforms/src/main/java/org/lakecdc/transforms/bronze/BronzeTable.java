package org.lakecdc.transforms.bronze;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.beam.sdk.schemas.Schema;
import org.apache.beam.sdk.values.Row;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.io.mssqlcdc.schema.MetadataColumns;
import org.lakecdc.io.mssqlcdc.schema.OutputType;
import org.lakecdc.transforms.delta.DeltaColumn;
import org.lakecdc.transforms.delta.DeltaTables;
import org.lakecdc.transforms.delta.SchemaEvolution;
import org.lakecdc.transforms.delta.TableDefinition;
import org.lakecdc.transforms.delta.TableKind;

/**
 * The bronze table of one source table: the append-only change log (docs/tables.md "Bronze").
 * Columns: the change rows' metadata columns, the captured columns, then {@code _batch_id INT},
 * {@code _snapshot STRING}, {@code _chunk INT} (docs/behaviour.md §5.7). Every metadata and bronze
 * column has a comment; captured columns have none.
 *
 * <p>The table is created with the change schema of its first run. A later run's change schema may
 * have more columns (a newer capture instance captures them; the inferred schema is the union of
 * the table's instances) or wider types: {@link #evolve} adds and widens them before the run writes
 * (docs/tables.md "Bronze"; C043, C054, C055).
 */
public final class BronzeTable {
  private static final Map<String, String> COMMENTS =
      Map.of(
          MetadataColumns.CAPTURE_INSTANCE,
          "SQL Server capture instance the row was read from (the newer one from its start LSN on)",
          MetadataColumns.START_LSN,
          "__$start_lsn: commit LSN, 0x + 20 upper-case hex digits; text order is commit order;"
              + " on snapshot rows the snapshot's LSN",
          MetadataColumns.SEQVAL,
          "__$seqval: order of the change within its transaction (tie-breaker); NULL on snapshot"
              + " rows",
          MetadataColumns.OPERATION,
          "0 snapshot row, 1 delete, 2 insert, 3 update before-image, 4 update after-image",
          MetadataColumns.COMMAND_ID,
          "__$command_id: order of the statement within its transaction, numbered per capture"
              + " instance; NULL on snapshot rows",
          MetadataColumns.COMMIT_TS,
          "Commit time of _start_lsn from cdc.lsn_time_mapping, converted to UTC",
          MetadataColumns.BATCH_ID,
          "Batch that wrote the row (with the job's app id, the facts table's batch_id); NULL on"
              + " snapshot rows",
          MetadataColumns.SNAPSHOT,
          "On snapshot rows: the LSN S of the snapshot they belong to; NULL on change rows",
          MetadataColumns.CHUNK,
          "Chunk number of a chunked snapshot's rows; NULL otherwise");

  private BronzeTable() {}

  /**
   * The bronze row schema for change rows of {@code changeSchema} (as {@code MssqlCdcIO} emits
   * them): the same fields, then {@code _batch_id}, {@code _snapshot}, {@code _chunk}.
   */
  public static Schema schema(Schema changeSchema) {
    return DeltaColumn.toBeamSchema(columns(changeSchema));
  }

  /** The bronze table's definition: columns with comments, the bronze kind's comment. */
  public static TableDefinition definition(Schema changeSchema) {
    return TableDefinition.of(TableKind.BRONZE, columns(changeSchema));
  }

  /**
   * Makes an existing bronze table take the bronze rows of {@code changeSchema} ({@link
   * DeltaTables#evolveSchema} with the columns of {@link #definition}): columns it lacks are
   * appended, nullable, with their comments (rows written before read them as NULL); a column whose
   * type cannot hold the change rows' type is widened when the table has type widening on. Columns
   * the change schema no longer has stay (NULL from then on). One metadata commit, or none.
   *
   * @param tables the Delta tables
   * @param path the bronze table; it must exist
   * @param changeSchema the change rows' schema
   * @return what was added and widened
   * @throws org.lakecdc.io.mssqlcdc.client.SchemaChangedError before anything is committed, when a
   *     new column's name needs column mapping or a type needs a widening the table cannot take
   *     (see {@link DeltaTables#evolveSchema} for the messages)
   */
  public static SchemaEvolution evolve(DeltaTables tables, String path, Schema changeSchema) {
    return tables.evolveSchema(path, columns(changeSchema));
  }

  private static List<DeltaColumn> columns(Schema changeSchema) {
    List<DeltaColumn> columns = new ArrayList<>();
    for (Schema.Field field : changeSchema.getFields()) {
      OutputType type = OutputType.fromBeamFieldType(field.getType());
      String comment = COMMENTS.get(field.getName());
      columns.add(new DeltaColumn(field.getName(), type, field.getType().getNullable(), comment));
    }
    columns.add(
        DeltaColumn.nullable(
            MetadataColumns.BATCH_ID, OutputType.INT, COMMENTS.get(MetadataColumns.BATCH_ID)));
    columns.add(
        DeltaColumn.nullable(
            MetadataColumns.SNAPSHOT, OutputType.STRING, COMMENTS.get(MetadataColumns.SNAPSHOT)));
    columns.add(
        DeltaColumn.nullable(
            MetadataColumns.CHUNK, OutputType.INT, COMMENTS.get(MetadataColumns.CHUNK)));
    return columns;
  }

  /**
   * A bronze row: the change (or snapshot) row's values, then the three bronze columns.
   *
   * @param bronzeSchema the schema from {@link #schema(Schema)}
   * @param change a row of the change schema
   * @param batchId the batch number, or null for snapshot rows
   * @param snapshot the snapshot LSN text for snapshot rows, or null
   * @param chunk the chunk number, or null
   */
  public static Row toBronzeRow(
      Schema bronzeSchema,
      Row change,
      @Nullable Integer batchId,
      @Nullable String snapshot,
      @Nullable Integer chunk) {
    List<Object> values = new ArrayList<>(change.getValues());
    values.add(batchId);
    values.add(snapshot);
    values.add(chunk);
    return Row.withSchema(bronzeSchema).attachValues(values);
  }
}
