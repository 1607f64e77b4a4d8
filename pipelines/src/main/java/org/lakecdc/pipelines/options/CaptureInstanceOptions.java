package org.lakecdc.pipelines.options;

import org.apache.beam.sdk.options.Default;
import org.apache.beam.sdk.options.Description;
import org.apache.beam.sdk.options.PipelineOptions;

/**
 * The one capture instance a command works on ({@code --captureInstance}), shared by {@code
 * CdcToDelta}, {@code Backfill}, {@code PrintChanges}, {@code ApplyChanges}, {@code Reconcile} and
 * {@code Simulator}.
 */
public interface CaptureInstanceOptions extends PipelineOptions {
  @Description(
      "Capture instance (SQL Server's default name is <schema>_<table>). CdcToDelta, Backfill and"
          + " PrintChanges read it (one table; not with --tables); ApplyChanges applies its bronze"
          + " table; Reconcile proves its silver table; Simulator: commit counts only the"
          + " transactions with changes in it, cleanup cleans it up, enable-instance names the new"
          + " instance (default <schema>_<table>), disable-instance drops it.")
  @Default.String("dbo_orders")
  String getCaptureInstance();

  void setCaptureInstance(String value);
}
