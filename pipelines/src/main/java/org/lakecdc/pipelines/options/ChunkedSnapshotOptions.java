package org.lakecdc.pipelines.options;

import org.apache.beam.sdk.options.Default;
import org.apache.beam.sdk.options.Description;
import org.apache.beam.sdk.options.PipelineOptions;

/**
 * The options of chunked snapshots (docs/behaviour.md §6.7-§6.10; docs/tables.md "Chunked
 * snapshots"), shared by {@code CdcToDelta} (a new target's bootstrap) and {@link Backfill} (the
 * waves).
 */
public interface ChunkedSnapshotOptions extends PipelineOptions {
  @Description(
      "How a new target's bootstrap snapshot is taken: whole reads the table in one commit before"
          + " the stream starts; chunked opens a snapshot at S, starts the stream at S at once and"
          + " reads the table in key-range chunks (one bronze commit each) in waves beside the"
          + " stream (--backfill) or with the Backfill job. A chunked snapshot needs the facts"
          + " table and cannot be combined with --seedTable. A target with a recorded snapshot"
          + " (whole or chunked, open or complete) is not new, whatever a later run's --snapshot.")
  @Default.Enum("WHOLE")
  @Accepts("whole or chunked")
  SnapshotMode getSnapshot();

  void setSnapshot(SnapshotMode value);

  @Description(
      "With --snapshot=chunked: the most source rows per chunk when the snapshot is planned (its"
          + " first wave). A plan is made once: a later value is ignored, with a printed line.")
  @Default.Long(1_000_000)
  @Accepts("a positive integer")
  long getSnapshotChunkRows();

  void setSnapshotChunkRows(long value);

  @Description(
      "With --snapshot=chunked: chunks per wave, fixed with the plan (wave w is chunks w*k to"
          + " (w+1)*k-1); a later value is ignored, with a printed line.")
  @Default.Integer(4)
  @Accepts("a positive integer")
  int getChunksPerWave();

  void setChunksPerWave(int value);

  @Description(
      "With --snapshot=chunked: true reads the snapshot's remaining chunks in the main job's"
          + " pipeline, beside the stream; false leaves them to the Backfill job.")
  @Default.Boolean(true)
  boolean getBackfill();

  void setBackfill(boolean value);

  @Description("At most this many waves of an open chunked snapshot per run; 0 reads to the end.")
  @Default.Integer(0)
  @Accepts("0 (to the end) or a positive integer")
  int getMaxWaves();

  void setMaxWaves(int value);
}
