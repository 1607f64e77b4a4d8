package org.lakecdc.pipelines.options;

import org.apache.beam.sdk.options.Default;
import org.apache.beam.sdk.options.Description;
import org.apache.beam.sdk.options.PipelineOptions;

/**
 * The period of the completeness verdict ({@code --granularity}), shared by {@code CdcToDelta}
 * (bronze's verdict) and {@code ApplyChanges} (silver's, which follows bronze's).
 */
public interface GranularityOptions extends PipelineOptions {
  @Description(
      "Period of the completeness verdict finalized_until: minute, hour or day (ApplyChanges: the"
          + " one bronze's job uses).")
  @Default.String("hour")
  String getGranularity();

  void setGranularity(String value);
}
