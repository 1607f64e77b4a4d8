package org.lakecdc.transforms.bronze;

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
 * @param appId the app id of the target the batch belongs to
 * @param failure null for a committed (or replayed) batch; for the batch at which the target's read
 *     stopped because the table failed, the failure as {@code <ErrorClass>: <message>} (nothing of
 *     it was committed but its {@code table_failed} facts row)
 */
public record CommittedBatch(
    long batchId,
    BatchStats stats,
    String endLsn,
    Instant endCommitTime,
    long bronzeVersion,
    boolean skipped,
    @Nullable LocalDateTime verdict,
    long bytesWritten,
    String appId,
    @Nullable String failure)
    implements Serializable {
  /** Whether the target's table failed at this batch ({@link #failure()} is set). */
  public boolean failed() {
    return failure != null;
  }
}
