package org.lakecdc.pipelines.options;

import org.apache.beam.sdk.options.Default;
import org.apache.beam.sdk.options.Description;
import org.apache.beam.sdk.options.PipelineOptions;
import org.lakecdc.transforms.finalization.Granularity;

/**
 * The period of the completeness verdict ({@code --granularity}), shared by {@code CdcToDelta}
 * (bronze's verdict) and {@code ApplyChanges} (silver's, which follows bronze's).
 */
public interface GranularityOptions extends PipelineOptions {
  @Description(
      "Period of the completeness verdict finalized_until: minute, hour or day (ApplyChanges: the"
          + " one bronze's job uses).")
  @Default.Enum("HOUR")
  @Accepts("'minute', 'hour' or 'day'")
  Granularity getGranularity();

  void setGranularity(Granularity value);
}
