package org.lakecdc.io.mssqlcdc;

import java.io.Serializable;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.apache.beam.sdk.schemas.Schema;
import org.joda.time.Duration;
import org.lakecdc.io.mssqlcdc.client.CdcClientFactory;
import org.lakecdc.io.mssqlcdc.schema.ColumnSpec;
import org.lakecdc.io.mssqlcdc.schema.OutputType;

/**
 * The resolved configuration of one change read, shipped to workers with the DoFn: everything is
 * validated and the output schema is fixed before the pipeline runs.
 *
 * @param captureInstance the capture instance the read was configured with
 * @param clientFactory opens each reading DoFn instance's client ({@link WorkerClient}, kept until
 *     teardown)
 * @param startingLsn where a new read starts
 * @param maxCommitsPerBatch commits of {@code cdc.lsn_time_mapping} per batch, or 0 for no limit
 * @param numPartitions parts the initial range is split into for parallel reading, at least 1
 * @param minRowsPerPartition floor of change rows per part
 * @param includeCommandId whether {@code __$command_id} is read into {@code _command_id}
 * @param columns the captured columns read, in output order
 * @param schema the output row schema (metadata columns, then {@code columns})
 * @param pollInterval how long the continuous form waits when caught up
 * @param stopCondition when the continuous form stops
 * @param schemaChangePolicy what DDL in a batch's range does (docs/scenarios.md "Schema change")
 * @param dataLossPolicy what a batch whose changes were purged does ({@link DataLossPolicy})
 * @param columnsDeclared whether {@code columns} were declared rather than inferred
 * @param knownInstances the table's capture instances when the pipeline was built, oldest first:
 *     the schema accounts for them; a newer one gets the switch check (docs/sql-server.md
 *     "Switching to a new capture instance")
 * @param expectedTypes per column read (lower-cased name), the type its captured type must still
 *     fit after DDL (docs/scenarios.md "Schema change")
 */
record ReadSpec(
    String captureInstance,
    CdcClientFactory clientFactory,
    StartingLsn startingLsn,
    int maxCommitsPerBatch,
    int numPartitions,
    long minRowsPerPartition,
    boolean includeCommandId,
    List<ColumnSpec> columns,
    Schema schema,
    Duration pollInterval,
    StopCondition stopCondition,
    SchemaChangePolicy schemaChangePolicy,
    DataLossPolicy dataLossPolicy,
    boolean columnsDeclared,
    List<String> knownInstances,
    Map<String, OutputType> expectedTypes)
    implements Serializable {
  ReadSpec {
    Objects.requireNonNull(captureInstance, "captureInstance");
    Objects.requireNonNull(clientFactory, "clientFactory");
    Objects.requireNonNull(startingLsn, "startingLsn");
    columns = List.copyOf(columns);
    Objects.requireNonNull(schema, "schema");
    Objects.requireNonNull(pollInterval, "pollInterval");
    Objects.requireNonNull(stopCondition, "stopCondition");
    Objects.requireNonNull(schemaChangePolicy, "schemaChangePolicy");
    Objects.requireNonNull(dataLossPolicy, "dataLossPolicy");
    knownInstances = List.copyOf(knownInstances);
    expectedTypes = Map.copyOf(expectedTypes);
  }

  /** Names of the captured columns, in output order. */
  List<String> columnNames() {
    return columns.stream().map(ColumnSpec::name).toList();
  }
}
