package org.lakecdc.io.mssqlcdc.snapshot;

import org.apache.beam.sdk.transforms.DoFn;
import org.lakecdc.io.mssqlcdc.client.CdcClient;

/**
 * The first step of a snapshot: for the capture instance (the element) opens a client, plans the
 * key ranges with {@link SnapshotPlanner} and emits them. Reads no row of the table.
 */
final class PlanSnapshotRangesFn extends DoFn<String, SnapshotRange> {
  private final SnapshotSpec spec;

  PlanSnapshotRangesFn(SnapshotSpec spec) {
    this.spec = spec;
  }

  @ProcessElement
  public void processElement(OutputReceiver<SnapshotRange> out) {
    try (CdcClient client = spec.source().clientFactory().open()) {
      for (SnapshotRange range : SnapshotPlanner.plan(client, spec)) {
        out.output(range);
      }
    }
  }
}
