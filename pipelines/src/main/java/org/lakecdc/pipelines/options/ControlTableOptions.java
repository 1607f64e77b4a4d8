package org.lakecdc.pipelines.options;

import org.apache.beam.sdk.options.Default;
import org.apache.beam.sdk.options.Description;
import org.apache.beam.sdk.options.PipelineOptions;

/**
 * The control table the main job writes ({@code --controlTable}), shared by {@code CdcToDelta} and
 * {@code Backfill} (which write it) and {@code Status} (which reads it).
 */
public interface ControlTableOptions extends PipelineOptions {
  @Description(
      "Path or URI of the control Delta table table_finalization (may be shared by several"
          + " targets). CdcToDelta and Backfill write it; Status reads it.")
  @Default.String("lakecdc-demo/delta/table_finalization")
  String getControlTable();

  void setControlTable(String value);
}
