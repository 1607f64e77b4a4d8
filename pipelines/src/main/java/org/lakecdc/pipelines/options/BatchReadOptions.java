package org.lakecdc.pipelines.options;

import org.apache.beam.sdk.options.Default;
import org.apache.beam.sdk.options.Description;
import org.apache.beam.sdk.options.PipelineOptions;

/**
 * Where a read of the change tables starts and how it is cut into batches, shared by {@code
 * CdcToDelta} (and {@code Backfill}) and {@code PrintChanges}.
 */
public interface BatchReadOptions extends PipelineOptions {
  @Description(
      "Where to start: 'earliest' (the oldest change CDC holds), 'latest' (skip the history) or"
          + " the last processed LSN, e.g. 0x0000002A000001000001. CdcToDelta: where a new target"
          + " starts with --bootstrap=false, ignored once the target has a position. Default:"
          + " earliest.")
  // No @Default: CdcToDelta tells an unset --startingLsn from 'earliest' (it is refused with
  // --bootstrap=true).
  String getStartingLsn();

  void setStartingLsn(String value);

  @Description(
      "At most this many commits of cdc.lsn_time_mapping per batch (CdcToDelta: each batch is one"
          + " bronze commit and one facts row); 0 reads up to max_lsn in one batch.")
  @Default.Integer(100)
  @Accepts("a positive integer, or 0 to read up to max_lsn")
  int getMaxCommitsPerBatch();

  void setMaxCommitsPerBatch(int value);
}
