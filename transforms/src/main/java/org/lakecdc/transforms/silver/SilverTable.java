package org.lakecdc.transforms.silver;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.beam.sdk.schemas.Schema;
import org.lakecdc.io.mssqlcdc.schema.MetadataColumns;
import org.lakecdc.io.mssqlcdc.schema.OutputType;
import org.lakecdc.transforms.delta.DeltaColumn;
import org.lakecdc.transforms.delta.TableDefinition;
import org.lakecdc.transforms.delta.TableKind;

/**
 * Silver's schema and definition (docs/tables.md "Silver", docs/behaviour.md §10.1): one row per
 * key, the captured columns of the key's latest image, then {@value #START_LSN} and {@value
 * #COMMIT_TS} of that image.
 */
public final class SilverTable {
  /** STRING, not null: {@code __$start_lsn} of the row's image (canonical LSN text). */
  public static final String START_LSN = MetadataColumns.START_LSN;

  /** TIMESTAMP_NTZ, nullable: the commit time (UTC) of the row's {@code _start_lsn}. */
  public static final String COMMIT_TS = MetadataColumns.COMMIT_TS;

  /** Delta's table property that turns deletion vectors on. */
  public static final String ENABLE_DELETION_VECTORS = "delta.enableDeletionVectors";

  /**
   * Silver's table property naming the bronze table it is applied from (normalized path or URI),
   * set when silver is created: a job given silver alone (Reconcile) reads its bronze here.
   */
  public static final String BRONZE = "mssql_cdc.bronze";

  /**
   * Silver's table property naming the capture instances whose bronze rows it holds (every instance
   * of its source table, lower case, sorted, separated by commas), set when silver is created: a
   * job given silver alone (Reconcile) reads its source table here.
   */
  public static final String CAPTURE_INSTANCES = "mssql_cdc.capture_instances";

  static final String START_LSN_COMMENT =
      "__$start_lsn of the row's latest image (0x + 20 upper-case hex digits; text order is commit"
          + " order); on rows from a snapshot the snapshot's LSN";

  static final String COMMIT_TS_COMMENT =
      "Commit time of _start_lsn from cdc.lsn_time_mapping, converted to UTC";

  private SilverTable() {}

  /**
   * The captured columns of a bronze schema: every bronze field except the metadata and bronze
   * columns ({@code _capture_instance, _start_lsn, _seqval, _operation, _command_id, _commit_ts,
   * _batch_id, _snapshot, _chunk}, compared ignoring case), in bronze's order.
   *
   * @param bronzeSchema bronze's row schema
   * @return the field names, bronze's spelling
   */
  public static List<String> capturedColumns(Schema bronzeSchema) {
    List<String> names = new ArrayList<>();
    for (Schema.Field field : bronzeSchema.getFields()) {
      if (!MetadataColumns.isReserved(field.getName())) {
        names.add(field.getName());
      }
    }
    return names;
  }

  /**
   * Silver's row schema: the captured columns (bronze's field types, nullable as in bronze, with
   * bronze's descriptions), then {@value #START_LSN} STRING not null, then {@value #COMMIT_TS}
   * TIMESTAMP_NTZ nullable, both with their comments as descriptions.
   *
   * @param bronzeSchema bronze's row schema
   * @return the schema
   * @throws IllegalArgumentException when bronze has no captured column
   */
  public static Schema schema(Schema bronzeSchema) {
    List<Schema.Field> fields = new ArrayList<>();
    for (String name : capturedColumns(bronzeSchema)) {
      fields.add(bronzeSchema.getField(name));
    }
    if (fields.isEmpty()) {
      throw new IllegalArgumentException(
          "The bronze schema has no captured column (only metadata columns): " + bronzeSchema);
    }
    fields.add(DeltaColumn.required(START_LSN, OutputType.STRING, START_LSN_COMMENT).toBeamField());
    fields.add(
        DeltaColumn.nullable(COMMIT_TS, OutputType.TIMESTAMP_NTZ, COMMIT_TS_COMMENT).toBeamField());
    return Schema.of(fields.toArray(Schema.Field[]::new));
  }

  /**
   * Silver's table definition for {@link org.lakecdc.transforms.delta.DeltaTables#createIfAbsent}:
   * kind {@link TableKind#SILVER} and its table comment, the schema's columns ({@value #START_LSN}
   * and {@value #COMMIT_TS} with their comments, the captured columns with their descriptions if
   * any), and {@value #ENABLE_DELETION_VECTORS} = {@code true}, which makes Kernel create the table
   * at protocol reader 3 / writer 7 with table feature {@code deletionVectors}. No change data
   * feed, no row tracking.
   *
   * @param silverSchema silver's row schema ({@link #schema})
   * @return the definition
   * @throws IllegalArgumentException when the schema lacks {@value #START_LSN} or a field type has
   *     no output type
   */
  public static TableDefinition definition(Schema silverSchema) {
    return definition(silverSchema, Map.of());
  }

  /**
   * {@link #definition(Schema)} of a silver table applied from {@code bronze}, recording it and its
   * capture instances in the table properties {@value #BRONZE} and {@value #CAPTURE_INSTANCES}.
   *
   * @param silverSchema silver's row schema ({@link #schema})
   * @param bronze the bronze table's path or URI
   * @param captureInstances the capture instances whose bronze rows silver holds
   * @return the definition
   */
  public static TableDefinition definition(
      Schema silverSchema, String bronze, java.util.Collection<String> captureInstances) {
    List<String> sorted = new ArrayList<>();
    for (String instance : captureInstances) {
      sorted.add(instance.toLowerCase(java.util.Locale.ROOT));
    }
    java.util.Collections.sort(sorted);
    return definition(
        silverSchema, Map.of(BRONZE, bronze, CAPTURE_INSTANCES, String.join(",", sorted)));
  }

  /**
   * The capture instances a silver table records ({@value #CAPTURE_INSTANCES}), in their recorded
   * order; empty for a silver created before they were recorded.
   *
   * @param properties silver's table properties
   * @return the lower-case names
   */
  public static List<String> captureInstances(Map<String, String> properties) {
    String value = properties.get(CAPTURE_INSTANCES);
    List<String> names = new ArrayList<>();
    if (value != null) {
      for (String name : value.split(",")) {
        if (!name.isBlank()) {
          names.add(name.strip());
        }
      }
    }
    return names;
  }

  private static TableDefinition definition(Schema silverSchema, Map<String, String> recorded) {
    if (!silverSchema.hasField(START_LSN)) {
      throw new IllegalArgumentException(
          "A silver schema needs the column " + START_LSN + ": " + silverSchema);
    }
    List<DeltaColumn> columns = new ArrayList<>();
    for (DeltaColumn column : DeltaColumn.fromBeamSchema(silverSchema)) {
      if (column.name().equals(START_LSN)) {
        columns.add(new DeltaColumn(START_LSN, column.type(), false, START_LSN_COMMENT));
      } else if (column.name().equals(COMMIT_TS)) {
        columns.add(new DeltaColumn(COMMIT_TS, column.type(), true, COMMIT_TS_COMMENT));
      } else {
        columns.add(column);
      }
    }
    return new TableDefinition(
        TableKind.SILVER, columns, TableKind.SILVER.tableComment(), properties(recorded));
  }

  private static Map<String, String> properties(Map<String, String> recorded) {
    Map<String, String> properties = new java.util.LinkedHashMap<>(recorded);
    properties.put(ENABLE_DELETION_VECTORS, "true");
    return properties;
  }
}
