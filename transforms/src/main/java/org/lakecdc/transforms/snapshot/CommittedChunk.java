package org.lakecdc.transforms.snapshot;

import java.io.Serializable;

/**
 * The outcome of one chunk of a chunked snapshot, emitted by the chunk committer after the chunk's
 * bronze commit and its {@code snapshot_chunk} facts row (and, after the plan's last chunk, the
 * snapshot's completion row).
 *
 * @param appId the generation's app id (the silver apply's key)
 * @param snapshot S, canonical text
 * @param chunk the chunk's index
 * @param wave the chunk's wave
 * @param rows the chunk's rows
 * @param stamp the chunk's stamp L, canonical text
 * @param bronzeVersion the bronze version of its commit (an empty chunk commits too, with no data
 *     file), or -1 when it was committed before (a replay)
 * @param skipped true when the chunk was already in the tables
 * @param completed true when this chunk completed the snapshot (its completion row is written)
 */
public record CommittedChunk(
    String appId,
    String snapshot,
    int chunk,
    int wave,
    long rows,
    String stamp,
    long bronzeVersion,
    boolean skipped,
    boolean completed)
    implements Serializable {
  private static final long serialVersionUID = 1L;
}
