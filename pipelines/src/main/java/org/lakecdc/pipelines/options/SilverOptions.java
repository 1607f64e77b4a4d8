package org.lakecdc.pipelines.options;

import org.apache.beam.sdk.options.Default;
import org.apache.beam.sdk.options.Description;
import org.apache.beam.sdk.options.PipelineOptions;

/**
 * How a silver table is keyed and applied, shared by the main job ({@link CdcToDeltaOptions}, with
 * {@code --silver}) and {@code ApplyChanges} ({@link ApplyChangesOptions}); docs/options.md
 * ("Silver") is the reference.
 */
public interface SilverOptions extends PipelineOptions {
  @Description(
      "Silver's key columns, comma-separated captured columns (order_id or o_id,line). Default:"
          + " the columns of the unique index the capture instance uses (its table's primary key).")
  @Accepts("captured columns separated by commas")
  String getKeys();

  void setKeys(String value);

  @Description(
      "Silver: at most this many bronze rows one wave of an apply holds in memory; a larger"
          + " change is applied in several waves (commits).")
  @Default.Integer(100000)
  @Accepts("a positive integer")
  int getSilverWaveRows();

  void setSilverWaveRows(int value);
}
