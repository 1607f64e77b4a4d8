package org.lakecdc.transforms.silver;

import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.transforms.delta.DataFileDetail;
import org.lakecdc.transforms.delta.DeltaTables;
import org.lakecdc.transforms.delta.FileCompaction;
import org.lakecdc.transforms.delta.VacuumResult;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps silver's files few and its deleted rows purged (docs/behaviour.md §10.6): {@link #compact}
 * rewrites files whose deletion vectors delete a large fraction of their rows and bin-packs small
 * files (the one file each wave adds) into files near a target size; {@link #vacuum} deletes the
 * data files and deletion vector files no readable version references. Kernel's checkpoint (every
 * {@code delta.checkpointInterval} commits, 10 by default) runs after every commit, compaction's
 * included ({@link DeltaTables#rearrangeFiles}), which keeps the log short.
 *
 * <p>Compaction changes no row: the rows of the files it removes (deletion vectors applied) are
 * exactly the rows of the files it adds, and both actions say {@code dataChange = false}. It is one
 * commit with {@code withMaxRetries(0)} on the version it listed; a wave committed meanwhile makes
 * it fail with {@link org.lakecdc.transforms.delta.DeltaConflictException} and nothing visible, so
 * it is safe beside the silver committer (which then simply wins). Run it between waves, by the
 * committer or on a schedule.
 *
 * <p>Memory: rows stream file by file into the Parquet writer, a batch at a time; with keys, the
 * files of one output are merged by key (each input open at one Parquet batch), never sorted in
 * memory. At most {@link CompactionOptions#maxFilesPerBin} inputs are open at once.
 *
 * <p>Thread-safe (no state beyond its {@link DeltaTables}).
 */
public final class SilverMaintenance {
  private static final Logger LOG = LoggerFactory.getLogger(SilverMaintenance.class);

  /** Delta's default retention of removed files ({@code delta.deletedFileRetentionDuration}). */
  public static final Duration DEFAULT_RETENTION = Duration.ofDays(7);

  private final DeltaTables tables;
  private final Clock clock;

  /**
   * Maintenance on the system clock (UTC).
   *
   * @param tables the Delta tables
   */
  public SilverMaintenance(DeltaTables tables) {
    this(tables, Clock.systemUTC());
  }

  /**
   * Maintenance whose vacuum measures the retention back from this clock.
   *
   * @param tables the Delta tables
   * @param clock the clock {@link #vacuum} reads "now" from
   */
  public SilverMaintenance(DeltaTables tables, Clock clock) {
    this.tables = Objects.requireNonNull(tables, "tables");
    this.clock = Objects.requireNonNull(clock, "clock");
  }

  /**
   * What {@link #compact} rewrites.
   *
   * @param deletedFractionThreshold a file whose deletion vector deletes at least this fraction of
   *     its rows ({@code cardinality / numRecords}) is rewritten without them; in {@code (0, 1]}
   * @param targetFileBytes the size, in bytes, that files are packed up to: files smaller than it
   *     are bin-packed together into outputs whose inputs add up to at most this (inputs with
   *     deleted rows counted at their live fraction); at least 1
   * @param maxFilesPerBin the most files one output is written from (each is open at once while
   *     their rows are merged by key); at least 2
   */
  public record CompactionOptions(
      double deletedFractionThreshold, long targetFileBytes, int maxFilesPerBin) {
    /** Threshold 0.2, target 128 MiB (Kernel's default file size), 100 files per output. */
    public static final CompactionOptions DEFAULTS =
        new CompactionOptions(0.2, 128L * 1024 * 1024, 100);

    /**
     * Checks the values.
     *
     * @param deletedFractionThreshold the threshold
     * @param targetFileBytes the target size
     * @param maxFilesPerBin the files per output
     * @throws IllegalArgumentException naming the value and what is accepted
     */
    public CompactionOptions {
      // FileCompaction's limits check the same values with the same messages.
      new FileCompaction.Limits(deletedFractionThreshold, targetFileBytes, maxFilesPerBin);
    }

    /** These options as the limits of {@link FileCompaction}. */
    FileCompaction.Limits limits() {
      return new FileCompaction.Limits(deletedFractionThreshold, targetFileBytes, maxFilesPerBin);
    }
  }

  /**
   * What one {@link #compact} did.
   *
   * @param committed true when it committed; false when no file needed rewriting
   * @param version the version it committed, else the table's version it looked at
   * @param filesRemoved data files it removed
   * @param filesAdded data files it added
   * @param rowsWritten rows written into the added files (equal to the live rows of the removed
   *     ones)
   * @param deletedRowsPurged rows the removed files' deletion vectors deleted, gone from storage
   */
  public record CompactionResult(
      boolean committed,
      long version,
      int filesRemoved,
      int filesAdded,
      long rowsWritten,
      long deletedRowsPurged) {}

  /**
   * {@link #compact(String, List, CompactionOptions)} with {@link CompactionOptions#DEFAULTS}.
   *
   * @param silverPath silver's path or URI
   * @param keys the key columns (outputs are sorted by them); empty for no sorting
   * @return what was done
   */
  public CompactionResult compact(String silverPath, List<String> keys) {
    return compact(silverPath, keys, CompactionOptions.DEFAULTS);
  }

  /**
   * Compacts silver's latest version in one commit. Selected: every file whose deleted fraction is
   * at least the threshold, and every file smaller than the target. The selected files, in the
   * log's order, are packed into bins of at most {@code targetFileBytes} (estimated live bytes) and
   * {@code maxFilesPerBin} files; a bin of one file is rewritten only when its deleted fraction
   * passes the threshold (else nothing would be gained). Each bin's live rows, read through Kernel
   * with the deletion vectors applied (delta-spark's included), are written to new files (cut at
   * the writer's file size) merged by key when keys are given: sorted by key when every input is
   * (as every silver file is), key values ascending, NULL first. Then one commit removes the bins'
   * files and adds the new ones, both {@code dataChange = false} ({@link
   * DeltaTables#rearrangeFiles}).
   *
   * @param silverPath silver's path or URI
   * @param keys the key columns (silver column names, matched ignoring case); empty for no sorting
   * @param options what is rewritten
   * @return what was done; not committed when nothing needed rewriting
   * @throws IllegalArgumentException when a key is not a column of silver
   * @throws IllegalStateException when no table exists, or a file's rows read back differ in count
   *     from its statistics less its deletion vector (nothing is committed)
   * @throws org.lakecdc.transforms.delta.DeltaConflictException when another commit landed after
   *     the version compaction listed: nothing is visible; the files it wrote stay orphans that
   *     {@link #vacuum} deletes
   */
  public CompactionResult compact(String silverPath, List<String> keys, CompactionOptions options) {
    return compact(silverPath, keys, options, () -> {});
  }

  /**
   * {@link #compact(String, List, CompactionOptions)} never packing files of different kinds into
   * one output ({@link FileCompaction#bins(List, FileCompaction.Limits, Function)}): a history's
   * compaction keeps the files of closed versions apart from those of current ones (kinds from
   * {@code org.lakecdc.transforms.history.HistoryTable#fileKind}).
   *
   * @param path the table's path or URI
   * @param keys the key columns (outputs are sorted by them); empty for no sorting
   * @param options what is rewritten
   * @param kinds each file's kind (compared with {@code equals}); null when not known, and then the
   *     file is rewritten only alone, when its deleted fraction passes the threshold
   * @return what was done; not committed when nothing needed rewriting
   * @throws IllegalArgumentException when a key is not a column of the table
   * @throws IllegalStateException when no table exists, or a file's rows read back differ in count
   *     from its statistics less its deletion vector (nothing is committed)
   * @throws org.lakecdc.transforms.delta.DeltaConflictException when another commit landed after
   *     the version compaction listed: nothing is visible
   */
  public CompactionResult compact(
      String path,
      List<String> keys,
      CompactionOptions options,
      Function<DataFileDetail, @Nullable Object> kinds) {
    return compact(path, keys, options, kinds, () -> {});
  }

  /** {@link #compact(String, List, CompactionOptions)} running a test hook before the commit. */
  CompactionResult compact(
      String silverPath, List<String> keys, CompactionOptions options, Runnable beforeCommit) {
    return compact(silverPath, keys, options, file -> Boolean.TRUE, beforeCommit);
  }

  private CompactionResult compact(
      String silverPath,
      List<String> keys,
      CompactionOptions options,
      Function<DataFileDetail, @Nullable Object> kinds,
      Runnable beforeCommit) {
    Objects.requireNonNull(options, "options");
    FileCompaction.Result result =
        new FileCompaction(tables)
            .compact(
                silverPath,
                "Silver table",
                keys,
                options.limits(),
                files -> files,
                kinds,
                beforeCommit);
    if (result.committed()) {
      LOG.debug(
          "Silver table {}: compacted {} files ({} deleted rows purged) into {} files of {} rows,"
              + " version {}",
          silverPath,
          result.filesRemoved(),
          result.deletedRowsPurged(),
          result.filesAdded(),
          result.rowsWritten(),
          result.version());
    }
    return new CompactionResult(
        result.committed(),
        result.version(),
        result.filesRemoved(),
        result.filesAdded(),
        result.rowsWritten(),
        result.deletedRowsPurged());
  }

  /**
   * Deletes the data files and deletion vector files of silver that no version within the retention
   * references ({@link DeltaTables#vacuum} with cutoff = now - retention): every version committed
   * within the retention, and the one in force at its start, stays readable by time travel; files
   * not committed yet (written within the retention) are kept. {@code _delta_log} is never touched.
   *
   * @param silverPath silver's path or URI
   * @param retention how long removed files stay; not negative. Delta's default is {@link
   *     #DEFAULT_RETENTION}; shorter than the longest write to the table is unsafe (a write in
   *     flight may lose its files)
   * @param dryRun true to delete nothing and return what would be deleted
   * @return the files deleted (or to delete), with their total size
   * @throws IllegalArgumentException when the retention is negative
   * @throws IllegalStateException when no table exists
   * @throws java.io.UncheckedIOException when listing, reading the log or deleting fails
   */
  public VacuumResult vacuum(String silverPath, Duration retention, boolean dryRun) {
    if (retention.isNegative()) {
      throw new IllegalArgumentException("retention must not be negative, was " + retention);
    }
    return tables.vacuum(silverPath, clock.instant().minus(retention), dryRun);
  }
}
