package org.lakecdc.pipelines.options;

import org.apache.beam.sdk.options.Default;
import org.apache.beam.sdk.options.Description;

/**
 * How silver tables are kept current, shared by the main job ({@link CdcToDeltaOptions}, with
 * {@code --silver}) and {@code ApplyChanges} ({@link ApplyChangesOptions}); docs/options.md
 * ("Silver") is the reference.
 */
public interface SilverOptions extends SilverTableOptions {
  @Description(
      "With --tables (CdcToDelta: or --tablesFile): each table's silver path or URI; {ci} is"
          + " replaced by the capture instance in lower case. Must contain {ci}. Unset in"
          + " CdcToDelta: no silver (a table's own --silver in --tablesFile still gives it one).")
  String getSilverTemplate();

  void setSilverTemplate(String value);

  @Description(
      "Silver: at most this many bronze rows one wave of an apply holds in memory; a larger"
          + " change is applied in several waves (commits).")
  @Default.Integer(100000)
  @Accepts("a positive integer")
  int getSilverWaveRows();

  void setSilverWaveRows(int value);
}
