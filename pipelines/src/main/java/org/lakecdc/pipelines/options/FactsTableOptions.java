package org.lakecdc.pipelines.options;

import org.apache.beam.sdk.options.Default;
import org.apache.beam.sdk.options.Description;
import org.apache.beam.sdk.options.PipelineOptions;

/**
 * The facts table the main job writes ({@code --factsTable}), shared by {@code CdcToDelta} and
 * {@code Backfill} (which write it), {@code Status} and {@code Reconcile} (which read it).
 */
public interface FactsTableOptions extends PipelineOptions {
  @Description(
      "Path or URI of the facts Delta table (may be shared by several targets). CdcToDelta and"
          + " Backfill write it; Status reads it; Reconcile checks bronze's newest chunked snapshot"
          + " against its snapshot_chunk rows (no checks when it does not exist).")
  @Default.String("lakecdc-demo/delta/facts")
  String getFactsTable();

  void setFactsTable(String value);
}
