package org.lakecdc.pipelines.options;

import org.apache.beam.sdk.options.Description;
import org.apache.beam.sdk.options.PipelineOptions;

/**
 * The bronze table a command reads ({@code --bronze}), shared by {@code ApplyChanges} (which
 * applies it to silver) and {@code Reconcile} (whose changes after silver's position are in
 * flight).
 */
public interface BronzeTableOptions extends PipelineOptions {
  @Description(
      "Path or URI of the bronze Delta table to read (one table): ApplyChanges applies it to"
          + " silver; for Reconcile, its changes after silver's applied_lsn are in flight."
          + " Default: lakecdc-demo/delta/<captureInstance in lower case>.")
  String getBronze();

  void setBronze(String value);
}
