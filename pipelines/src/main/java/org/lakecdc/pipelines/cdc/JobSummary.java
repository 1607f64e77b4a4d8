package org.lakecdc.pipelines.cdc;

import java.time.LocalDateTime;
import java.util.Map;
import java.util.Optional;
import org.lakecdc.transforms.position.StreamPosition;

/**
 * What a run did.
 *
 * @param batches batches committed by this run (its bronze commits made); never one of {@code
 *     skippedBatches}
 * @param rowsByOperation change rows written by this run: delete, insert, update (after-images) and
 *     all rows; never those of {@code skippedBatches}
 * @param snapshotRows rows of a snapshot taken by this run, or -1 when none was taken
 * @param snapshotSeconds wall seconds of that snapshot (the bootstrap snapshot or the seed copy,
 *     written and committed), 0 when none was taken
 * @param position the target's position after the run
 * @param verdict the target's verdict after the run, UTC
 * @param streamSeconds wall seconds of the stream phase: from reading {@code max_lsn} after the
 *     start position to the end of the change pipeline (its batches read and committed); the sum of
 *     the phases of repeated bounded runs
 * @param seconds wall seconds of the run, everything included
 * @param skippedBatches batches this run read and found already written (committed by a concurrent
 *     run of the same target, or by an earlier attempt of a retried task): their bronze commits
 *     skipped. A batch an earlier run committed to bronze but not to facts is not among them: the
 *     launcher writes its facts row before the run.
 * @param skippedRows the change rows of {@code skippedBatches}, as this run read them
 * @param foundSnapshotRows rows of the snapshot this run read and found already written (another
 *     run of the same target, or an earlier attempt of a retried task, committed the snapshot of
 *     the same S first: this run's commit was skipped), or -1 when it found none; never counted in
 *     {@code snapshotRows}
 */
public record JobSummary(
    long batches,
    Map<String, Long> rowsByOperation,
    long snapshotRows,
    double snapshotSeconds,
    Optional<StreamPosition> position,
    Optional<LocalDateTime> verdict,
    double streamSeconds,
    double seconds,
    long skippedBatches,
    long skippedRows,
    long foundSnapshotRows) {
  /** A summary of a run that found no batch and no snapshot already written. */
  public JobSummary(
      long batches,
      Map<String, Long> rowsByOperation,
      long snapshotRows,
      double snapshotSeconds,
      Optional<StreamPosition> position,
      Optional<LocalDateTime> verdict,
      double streamSeconds,
      double seconds) {
    this(
        batches,
        rowsByOperation,
        snapshotRows,
        snapshotSeconds,
        position,
        verdict,
        streamSeconds,
        seconds,
        0,
        0,
        -1);
  }

  /** This summary with the rows of a snapshot the run found already written (-1: none). */
  public JobSummary withFoundSnapshotRows(long rows) {
    return with(seconds, rows);
  }

  /** This summary with the run's wall seconds {@code total}, every count kept. */
  JobSummary withSeconds(double total) {
    return with(total, foundSnapshotRows);
  }

  private JobSummary with(double total, long found) {
    return new JobSummary(
        batches,
        rowsByOperation,
        snapshotRows,
        snapshotSeconds,
        position,
        verdict,
        streamSeconds,
        total,
        skippedBatches,
        skippedRows,
        found);
  }

  /** All change rows written by the run. */
  public long rows() {
    return rowsByOperation.getOrDefault("rows", 0L);
  }

  /** This run followed by {@code later}: counts added, the later position and verdict. */
  JobSummary plus(JobSummary later) {
    Map<String, Long> sum = new java.util.TreeMap<>(rowsByOperation);
    later.rowsByOperation().forEach((k, v) -> sum.merge(k, v, Long::sum));
    boolean ours = snapshotRows >= 0;
    return new JobSummary(
        batches + later.batches(),
        sum,
        ours ? snapshotRows : later.snapshotRows(),
        ours ? snapshotSeconds : later.snapshotSeconds(),
        later.position().isPresent() ? later.position() : position,
        later.verdict().isPresent() ? later.verdict() : verdict,
        streamSeconds + later.streamSeconds(),
        seconds + later.seconds(),
        skippedBatches + later.skippedBatches(),
        skippedRows + later.skippedRows(),
        foundSnapshotRows >= 0 ? foundSnapshotRows : later.foundSnapshotRows());
  }
}
