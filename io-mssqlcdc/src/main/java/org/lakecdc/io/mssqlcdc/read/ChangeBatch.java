package org.lakecdc.io.mssqlcdc.read;

import java.io.Serializable;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import org.apache.beam.sdk.coders.Coder;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;

/**
 * One batch the reader has emitted: every change row of the table with commit LSN in {@code
 * [fromLsn, toLsn]}, in at most {@code maxCommitsPerBatch} commits of {@code cdc.lsn_time_mapping}.
 * Emitted after the batch's rows, with the timestamp of its end commit. A batch can hold no rows
 * (idle entries, other tables' commits); its end still moves the position, the watermark and, in
 * the sink, the completeness verdict.
 *
 * @param captureInstance the capture instance the read was configured with
 * @param fromLsn first LSN of the batch ({@code fn_cdc_increment_lsn} of the previous end)
 * @param toLsn the batch's end: a commit LSN from {@code cdc.lsn_time_mapping}, inclusive; the last
 *     processed LSN once the batch is written
 * @param toCommitTime UTC commit time of {@code toLsn}
 * @param rows change rows in the batch
 * @param readInstances the capture instances the batch read, oldest first (two when it crossed a
 *     newer instance's start LSN)
 * @param sequence the batch's number within its read, from 0, in LSN order with no gap ({@link
 *     org.lakecdc.io.mssqlcdc.lsn.LsnRange#firstBatch()}): a sink commits batch {@code n} after
 *     batch {@code n - 1}, and knows none lies between them
 * @param source what the reader saw of the source while reading the batch
 * @param failure null for a batch that was read; for a read that stopped at this batch because the
 *     table failed ({@link TableFailure}, only with {@code MssqlCdcIO.readAll()}): why. Such a
 *     batch holds no row and ends the table's batches: {@code toLsn} and {@code toCommitTime} are
 *     the batch the read attempted, or the last processed LSN when no end was found yet; a sink
 *     commits nothing from it on, and records the failure
 */
public record ChangeBatch(
    String captureInstance,
    Lsn fromLsn,
    Lsn toLsn,
    Instant toCommitTime,
    long rows,
    List<String> readInstances,
    long sequence,
    BatchSource source,
    @Nullable TableFailure failure)
    implements Serializable {
  /** A batch that was read (no failure). */
  public ChangeBatch(
      String captureInstance,
      Lsn fromLsn,
      Lsn toLsn,
      Instant toCommitTime,
      long rows,
      List<String> readInstances,
      long sequence,
      BatchSource source) {
    this(
        captureInstance, fromLsn, toLsn, toCommitTime, rows, readInstances, sequence, source, null);
  }

  /**
   * The batch at which the read of {@code captureInstance} stopped because of {@code failure}: no
   * row, nothing measured.
   */
  public static ChangeBatch failed(
      String captureInstance,
      Lsn fromLsn,
      Lsn toLsn,
      Instant toCommitTime,
      long sequence,
      TableFailure failure) {
    return new ChangeBatch(
        captureInstance,
        fromLsn,
        toLsn,
        toCommitTime,
        0,
        List.of(captureInstance),
        sequence,
        BatchSource.NONE,
        Objects.requireNonNull(failure, "failure"));
  }

  /**
   * The coder of batches: one JSON object (UTF-8, length-prefixed) with LSNs as canonical text and
   * times as ISO-8601 UTC instants. Text rather than Java serialization, so state that holds
   * batches (a Flink savepoint, the continuous committer's bag) survives a change of the classes
   * and can be read by a person.
   *
   * @return the coder
   */
  public static Coder<ChangeBatch> coder() {
    return ChangeBatchCoder.of();
  }

  /** Whether the table failed at this batch ({@link #failure()} is set). */
  public boolean failed() {
    return failure != null;
  }

  public ChangeBatch {
    Objects.requireNonNull(captureInstance, "captureInstance");
    Objects.requireNonNull(fromLsn, "fromLsn");
    Objects.requireNonNull(toLsn, "toLsn");
    Objects.requireNonNull(toCommitTime, "toCommitTime");
    readInstances = List.copyOf(readInstances);
    Objects.requireNonNull(source, "source");
    if (sequence < 0) {
      throw new IllegalArgumentException("sequence must be 0 or more, not " + sequence);
    }
  }
}
