package org.lakecdc.io.mssqlcdc;

import java.io.Serializable;
import java.util.List;
import java.util.Objects;
import org.apache.beam.sdk.schemas.Schema;
import org.lakecdc.io.mssqlcdc.client.CdcClientFactory;
import org.lakecdc.io.mssqlcdc.client.IsolationLevel;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.io.mssqlcdc.schema.ColumnSpec;

/**
 * The resolved configuration of one snapshot read, shipped to workers with its DoFns: the snapshot
 * LSN is recorded and the output schema fixed before the pipeline runs.
 *
 * @param captureInstance the capture instance the snapshot is taken for ({@code _capture_instance})
 * @param clientFactory opens each reading DoFn instance's client ({@link WorkerClient}, kept until
 *     teardown)
 * @param snapshotLsn S, stamped as {@code _start_lsn} on every row
 * @param numPartitions key ranges wanted, at least 1
 * @param isolation isolation level of the planning query and of every range read
 * @param includeCommandId whether the schema has {@code _command_id} (NULL on snapshot rows)
 * @param columns the captured columns read, in output order
 * @param schema the output row schema, the change read's
 */
record SnapshotSpec(
    String captureInstance,
    CdcClientFactory clientFactory,
    Lsn snapshotLsn,
    int numPartitions,
    IsolationLevel isolation,
    boolean includeCommandId,
    List<ColumnSpec> columns,
    Schema schema)
    implements Serializable {
  SnapshotSpec {
    Objects.requireNonNull(captureInstance, "captureInstance");
    Objects.requireNonNull(clientFactory, "clientFactory");
    Objects.requireNonNull(snapshotLsn, "snapshotLsn");
    Objects.requireNonNull(isolation, "isolation");
    columns = List.copyOf(columns);
    Objects.requireNonNull(schema, "schema");
  }

  /** Names of the captured columns, in output order. */
  List<String> columnNames() {
    return columns.stream().map(ColumnSpec::name).toList();
  }
}
