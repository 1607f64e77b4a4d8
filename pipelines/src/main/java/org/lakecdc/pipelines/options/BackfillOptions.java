package org.lakecdc.pipelines.options;

import org.apache.beam.sdk.options.Description;

/**
 * Options of {@code Backfill}: the source and target options of the main job ({@link
 * CdcToDeltaOptions}: the same target, facts table and app id as the run that opened the snapshot),
 * the chunked snapshot options, and the backfill's own limits. docs/options.md is the reference.
 */
public interface BackfillOptions extends CdcToDeltaOptions {
  @Description(
      "Stop starting waves after this many seconds (a wave that started is committed); unset or 0:"
          + " no limit.")
  @Accepts("0 (no limit) or a positive integer")
  Long getMaxSeconds();

  void setMaxSeconds(Long value);

  @Description(
      "Start a wave only while the stream's newest batch facts row gives a retention headroom, less"
          + " that row's age, of at least this many hours (else the run pauses: waiting_headroom,"
          + " or waiting_metrics when no batch row has one). Unset: no throttle.")
  @Accepts("0 or a positive number of hours")
  Double getMinHeadroomHours();

  void setMinHeadroomHours(Double value);
}
