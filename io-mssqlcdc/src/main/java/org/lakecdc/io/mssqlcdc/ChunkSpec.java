package org.lakecdc.io.mssqlcdc;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import org.apache.beam.sdk.schemas.Schema;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.io.mssqlcdc.client.CdcClientFactory;
import org.lakecdc.io.mssqlcdc.client.IsolationLevel;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.io.mssqlcdc.schema.ColumnSpec;

/**
 * The resolved configuration of a chunked snapshot read ({@link MssqlCdcIO.SnapshotChunks}),
 * shipped to workers with its DoFn: the source table and key, the output schema and S are fixed
 * when the pipeline is built.
 *
 * @param captureInstance the capture instance ({@code _capture_instance})
 * @param clientFactory opens the reading DoFn's client
 * @param snapshotLsn S: no chunk's stamp may be below it
 * @param sourceSchema the tracked table's schema
 * @param sourceTable the tracked table
 * @param keyColumns the key columns the chunks' bounds are over
 * @param isolation the isolation level of every chunk's reads
 * @param includeCommandId whether the schema has {@code _command_id}
 * @param columns the captured columns read, in output order
 * @param schema the output row schema, the change read's
 * @param openEndAfter the keyset MAX an open last chunk's end is sought after, or null
 */
record ChunkSpec(
    String captureInstance,
    CdcClientFactory clientFactory,
    Lsn snapshotLsn,
    String sourceSchema,
    String sourceTable,
    List<String> keyColumns,
    IsolationLevel isolation,
    boolean includeCommandId,
    List<ColumnSpec> columns,
    Schema schema,
    @Nullable List<Object> openEndAfter)
    implements Serializable {
  ChunkSpec {
    Objects.requireNonNull(captureInstance, "captureInstance");
    Objects.requireNonNull(clientFactory, "clientFactory");
    Objects.requireNonNull(snapshotLsn, "snapshotLsn");
    Objects.requireNonNull(sourceSchema, "sourceSchema");
    Objects.requireNonNull(sourceTable, "sourceTable");
    keyColumns = List.copyOf(keyColumns);
    Objects.requireNonNull(isolation, "isolation");
    columns = List.copyOf(columns);
    Objects.requireNonNull(schema, "schema");
    openEndAfter =
        openEndAfter == null ? null : Collections.unmodifiableList(new ArrayList<>(openEndAfter));
  }

  /** Names of the captured columns, in output order. */
  List<String> columnNames() {
    return columns.stream().map(ColumnSpec::name).toList();
  }
}
