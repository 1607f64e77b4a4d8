package org.lakecdc.transforms.history;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.beam.sdk.schemas.Schema;
import org.lakecdc.io.mssqlcdc.schema.MetadataColumns;
import org.lakecdc.io.mssqlcdc.schema.OutputType;
import org.lakecdc.transforms.delta.DataFileDetail;
import org.lakecdc.transforms.delta.DeltaColumn;
import org.lakecdc.transforms.delta.TableDefinition;
import org.lakecdc.transforms.delta.TableKind;
import org.lakecdc.transforms.silver.SilverTable;

/**
 * The history table's columns and definition (docs/tables.md "History"): the captured columns of
 * bronze in bronze's order, then {@value #VALID_FROM_LSN}, {@value #VALID_FROM_TS}, {@value
 * #VALID_TO_LSN}, {@value #VALID_TO_TS}, {@value #DELETED}, the bronze ordering key of the change
 * that opened the version ({@value #COMMAND_ID}, {@value #SEQVAL}, {@value #OPERATION}; with
 * {@value #VALID_FROM_LSN} it is bronze's {@code (_start_lsn, _command_id, _seqval, _operation)}),
 * and {@value #LOST_FROM_LSN}. LSNs are {@code 0x} + 20 upper-case hex digits (text order is commit
 * order); times are commit times in UTC ({@code TIMESTAMP_NTZ}). Deletion vectors on.
 */
public final class HistoryTable {
  /** The LSN the version became current at: its change's {@code _start_lsn}, or the snapshot's. */
  public static final String VALID_FROM_LSN = "_valid_from_lsn";

  /** The commit time (UTC) of {@value #VALID_FROM_LSN}. */
  public static final String VALID_FROM_TS = "_valid_from_ts";

  /** The LSN of the change that closed the version; NULL while it is current. */
  public static final String VALID_TO_LSN = "_valid_to_lsn";

  /** The commit time (UTC) of {@value #VALID_TO_LSN}; NULL while the version is current. */
  public static final String VALID_TO_TS = "_valid_to_ts";

  /** True on a version a delete closed (the key has no current version after it). */
  public static final String DELETED = "_deleted";

  /** {@code _command_id} of the change that opened the version (NULL for a snapshot's). */
  public static final String COMMAND_ID = MetadataColumns.COMMAND_ID;

  /** {@code _seqval} of the change that opened the version (NULL for a snapshot's). */
  public static final String SEQVAL = MetadataColumns.SEQVAL;

  /** {@code _operation} of the change that opened the version (0 for a snapshot's). */
  public static final String OPERATION = MetadataColumns.OPERATION;

  /**
   * On a version a re-snapshot closed: the last LSN the history had applied before the changes it
   * never saw, so the version really ended somewhere in ({@value #LOST_FROM_LSN}, {@value
   * #VALID_TO_LSN}]; NULL on every other version.
   */
  public static final String LOST_FROM_LSN = "_lost_from_lsn";

  /** The history table's property naming the bronze table it is applied from, set at creation. */
  public static final String BRONZE = "mssql_cdc.bronze";

  /** The history table's property naming the capture instances it holds, set at creation. */
  public static final String CAPTURE_INSTANCES = "mssql_cdc.capture_instances";

  /** The history table's property listing its tracked columns ({@code *} for all), at creation. */
  public static final String HISTORY_COLUMNS = "mssql_cdc.history_columns";

  private HistoryTable() {}

  /**
   * What the versions in one data file of a history are. Waves and snapshots write the versions
   * they close and the ones they open into files apart, and a row is never changed in place (a
   * version that ends is deleted by a deletion vector and written again, closed, elsewhere), so a
   * file's live rows are all closed or all current; only a history written before waves kept them
   * apart has files mixing both.
   */
  public enum FileKind {
    /** Every row has a {@value #VALID_TO_LSN}: ended versions only. */
    CLOSED,
    /**
     * Every row was written current ({@value #VALID_TO_LSN} NULL); those since ended are deleted.
     */
    CURRENT,
    /** Both: a file of a history written before closed and current versions were kept apart. */
    MIXED
  }

  /**
   * The kind of a history data file, from its statistics: {@value #VALID_TO_LSN}'s null count
   * against the file's row count (both over all the rows the file holds, deleted ones included).
   * Compaction bins each kind on its own, so its outputs keep the kind.
   *
   * @param file a data file of a history table
   * @return {@link FileKind#CLOSED} when the column counts no null, {@link FileKind#CURRENT} when
   *     every row's is null, else {@link FileKind#MIXED}; also {@link FileKind#MIXED} when the
   *     statistics do not say (no statistics, or {@value #VALID_TO_LSN} beyond the columns they
   *     cover, as in a history of more than 29 captured columns): such files are packed with each
   *     other as before kinds were kept apart, so their number stays bounded
   */
  public static FileKind fileKind(DataFileDetail file) {
    long rows = file.numRecords();
    long nulls = file.nullCount(VALID_TO_LSN);
    if (rows < 0 || nulls < 0) {
      return FileKind.MIXED;
    }
    return nulls == 0 ? FileKind.CLOSED : nulls == rows ? FileKind.CURRENT : FileKind.MIXED;
  }

  /**
   * The row schema of the history of a bronze table: the captured columns (bronze's types,
   * nullable), {@value #VALID_FROM_LSN} STRING not null, {@value #VALID_FROM_TS}, {@value
   * #VALID_TO_LSN}, {@value #VALID_TO_TS}, {@value #DELETED} BOOLEAN not null, {@value #COMMAND_ID}
   * INT, {@value #SEQVAL} STRING, {@value #OPERATION} INT, {@value #LOST_FROM_LSN} STRING.
   *
   * @param bronzeSchema bronze's row schema
   * @return the schema
   * @throws IllegalArgumentException when bronze has no captured column
   */
  public static Schema schema(Schema bronzeSchema) {
    List<Schema.Field> fields = new ArrayList<>();
    for (String name : SilverTable.capturedColumns(bronzeSchema)) {
      fields.add(bronzeSchema.getField(name));
    }
    if (fields.isEmpty()) {
      throw new IllegalArgumentException(
          "The bronze schema has no captured column (only metadata columns): " + bronzeSchema);
    }
    fields.add(
        DeltaColumn.required(
                VALID_FROM_LSN,
                OutputType.STRING,
                "LSN from which this version is current (the change's __$start_lsn, or the"
                    + " snapshot's LSN)")
            .toBeamField());
    fields.add(
        DeltaColumn.nullable(
                VALID_FROM_TS, OutputType.TIMESTAMP_NTZ, "Commit time of _valid_from_lsn, UTC")
            .toBeamField());
    fields.add(
        DeltaColumn.nullable(
                VALID_TO_LSN,
                OutputType.STRING,
                "LSN of the change that ended this version; NULL while it is current")
            .toBeamField());
    fields.add(
        DeltaColumn.nullable(
                VALID_TO_TS,
                OutputType.TIMESTAMP_NTZ,
                "Commit time of _valid_to_lsn, UTC; NULL while current")
            .toBeamField());
    fields.add(
        DeltaColumn.required(DELETED, OutputType.BOOLEAN, "True when a delete ended this version")
            .toBeamField());
    fields.add(
        DeltaColumn.nullable(
                COMMAND_ID, OutputType.INT, "_command_id of the change that opened this version")
            .toBeamField());
    fields.add(
        DeltaColumn.nullable(
                SEQVAL, OutputType.STRING, "_seqval of the change that opened this version")
            .toBeamField());
    fields.add(
        DeltaColumn.nullable(
                OPERATION,
                OutputType.INT,
                "_operation of the change that opened this version (0: a snapshot)")
            .toBeamField());
    fields.add(
        DeltaColumn.nullable(
                LOST_FROM_LSN,
                OutputType.STRING,
                "On a version a re-snapshot ended: the last LSN applied before changes were lost;"
                    + " the version ended somewhere in (_lost_from_lsn, _valid_to_lsn]")
            .toBeamField());
    return Schema.of(fields.toArray(Schema.Field[]::new));
  }

  /**
   * The history table's definition: kind {@link TableKind#HISTORY}, the schema's columns, deletion
   * vectors on, and the bronze table, capture instances and tracked columns it is built from in its
   * properties.
   *
   * @param historySchema {@link #schema}
   * @param bronze the bronze table's path or URI
   * @param captureInstances the capture instances whose rows it holds
   * @param historyColumns the tracked columns, empty for all
   * @return the definition
   */
  public static TableDefinition definition(
      Schema historySchema,
      String bronze,
      Collection<String> captureInstances,
      List<String> historyColumns) {
    List<String> sorted = new ArrayList<>();
    for (String instance : captureInstances) {
      sorted.add(instance.toLowerCase(Locale.ROOT));
    }
    Collections.sort(sorted);
    Map<String, String> properties = new LinkedHashMap<>();
    properties.put(BRONZE, bronze);
    properties.put(CAPTURE_INSTANCES, String.join(",", sorted));
    properties.put(
        HISTORY_COLUMNS, historyColumns.isEmpty() ? "*" : String.join(",", historyColumns));
    properties.put(SilverTable.ENABLE_DELETION_VECTORS, "true");
    return new TableDefinition(
        TableKind.HISTORY,
        DeltaColumn.fromBeamSchema(historySchema),
        TableKind.HISTORY.tableComment(),
        properties);
  }
}
