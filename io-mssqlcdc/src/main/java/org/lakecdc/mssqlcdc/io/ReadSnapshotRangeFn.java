package org.lakecdc.mssqlcdc.io;

import java.util.List;
import org.apache.beam.sdk.metrics.Counter;
import org.apache.beam.sdk.metrics.Metrics;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.values.Row;
import org.joda.time.Instant;
import org.lakecdc.mssqlcdc.client.CdcClient;
import org.lakecdc.mssqlcdc.client.CloseableIterator;

/**
 * Reads one {@link SnapshotRange} of the source table ({@link CdcClient#readTable}, streamed under
 * the configured isolation level, never NOLOCK) and emits each row as a snapshot row of the change
 * schema ({@link ChangeRows#snapshotRow}), timestamped with the UTC commit time of S. Counts rows
 * in the {@code mssqlcdc/snapshot_rows} counter. Opens and closes its own client.
 */
final class ReadSnapshotRangeFn extends DoFn<SnapshotRange, Row> {
  private final SnapshotSpec spec;
  private final Counter rows = Metrics.counter(ReadChangesAction.NAMESPACE, "snapshot_rows");

  ReadSnapshotRangeFn(SnapshotSpec spec) {
    this.spec = spec;
  }

  @ProcessElement
  public void processElement(@Element SnapshotRange range, OutputReceiver<Row> out) {
    List<String> columns = spec.columnNames();
    Instant timestamp = new Instant(range.commitTime().toEpochMilli());
    try (CdcClient client = spec.clientFactory().open();
        CloseableIterator<List<Object>> values =
            client.readTable(range.query(columns, spec.isolation()))) {
      while (values.hasNext()) {
        out.outputWithTimestamp(
            ChangeRows.snapshotRow(
                spec.schema(),
                spec.columns(),
                spec.captureInstance(),
                spec.snapshotLsn(),
                range.commitTime(),
                values.next(),
                spec.includeCommandId()),
            timestamp);
        rows.inc();
      }
    }
  }
}
