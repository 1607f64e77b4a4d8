package org.lakecdc.transforms.write;

import java.io.Serializable;
import java.time.Instant;
import java.time.LocalDateTime;
import org.checkerframework.checker.nullness.qual.Nullable;

/**
 * The outcome of one batch's commits, emitted by the committer after the verdict moved.
 *
 * @param batchId the batch number
 * @param stats the batch's rows
 * @param endLsn the batch's end LSN, canonical text
 * @param endCommitTime the end commit time (UTC)
 * @param bronzeVersion the bronze table version of its commit, or -1 when none was made (no rows,
 *     or already committed)
 * @param skipped true when the batch was already in the tables (a replay)
 * @param verdict the verdict after the batch, UTC
 * @param bytesWritten bytes of the data files committed
 */
public record CommittedBatch(
    long batchId,
    BatchStats stats,
    String endLsn,
    Instant endCommitTime,
    long bronzeVersion,
    boolean skipped,
    @Nullable LocalDateTime verdict,
    long bytesWritten)
    implements Serializable {}
