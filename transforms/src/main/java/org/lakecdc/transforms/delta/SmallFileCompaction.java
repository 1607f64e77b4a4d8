package org.lakecdc.transforms.delta;

import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The job's own tables stay small (docs/tables.md "Compaction and checkpoints of facts and
 * control"): every batch appends a small file to the shared facts table, so without care its file
 * count, and with it every checkpoint and every cold snapshot load, grows with history. This policy
 * keeps them bounded for the tables whose {@link TableProperties#TABLE_KIND} is {@code facts} or
 * {@code control}:
 *
 * <ul>
 *   <li><b>Checkpoint interval.</b> The job creates them with {@value
 *       #CHECKPOINT_INTERVAL_PROPERTY} = {@value #CHECKPOINT_INTERVAL} ({@link #tableProperties},
 *       in the facts and control tables' definitions), and an existing one without the property
 *       gets it when the job opens it ({@link DeltaTables#createIfAbsent}); a value set by the
 *       table's owner is kept.
 *   <li><b>Compaction by the committer.</b> The writer whose commit lands a version {@code v} with
 *       {@code (v + 1) % }{@value #CHECK_EVERY_VERSIONS}{@code == 0} looks at the table's files
 *       and, when at least {@value #MIN_FILES} are smaller than {@value #TARGET_FILE_BYTES} bytes,
 *       rewrites them into one file ({@link #compact}) and checkpoints the compaction's version: at
 *       the interval {@value #CHECKPOINT_INTERVAL} that is the multiple Kernel checkpoints anyway,
 *       so every checkpoint lists the compacted file, not the small ones. Between two checks at
 *       most {@value #CHECK_EVERY_VERSIONS} files are added, so the table holds at most about 150
 *       small files, plus the 8 MiB files compaction filled.
 * </ul>
 *
 * <p>Exactly once is untouched: the compaction commit has no transaction identifier and removes and
 * adds files with {@code dataChange = false}; the {@code txn} actions and domain metadata of every
 * batch stay in the log and its checkpoints, so a replayed batch is still skipped. It is committed
 * once on the version it listed ({@link DeltaTables#rearrangeFiles}): an append that lands in
 * between makes it fail with nothing visible, and it lists again, at most {@value #MAX_ATTEMPTS}
 * times; an append that starts before it and commits after it is rebased by Kernel (a blind append)
 * or rebuilt by the group commit, and adds its own file. So no append is lost and no row is written
 * twice. A compaction that keeps losing, or fails, is logged and left to the next check: the batch
 * that triggered it has already committed.
 *
 * <p>Thread-safe: of the threads of one JVM that see the same version land (members of one group
 * commit), one checks.
 */
public final class SmallFileCompaction {
  private static final Logger LOG = LoggerFactory.getLogger(SmallFileCompaction.class);

  /** Delta's checkpoint interval property. */
  public static final String CHECKPOINT_INTERVAL_PROPERTY = "delta.checkpointInterval";

  /** The checkpoint interval of facts and control tables, in commits. */
  public static final int CHECKPOINT_INTERVAL = 100;

  /** A commit landing a version one before a multiple of this makes its writer check. */
  public static final int CHECK_EVERY_VERSIONS = 100;

  /** The fewest small files that make a check compact. */
  public static final int MIN_FILES = 50;

  /**
   * A file smaller than this, in bytes, is small, and outputs are packed up to it: 8 MiB, so that a
   * compaction rewrites at most this much whatever the table's history (the file it wrote last is
   * rewritten with the new small files until it reaches this size, then left alone).
   */
  public static final long TARGET_FILE_BYTES = 8L * 1024 * 1024;

  /** Attempts of one compaction that loses to concurrent commits, each listing the files again. */
  public static final int MAX_ATTEMPTS = 3;

  /** Every small file in one output: files are read one after another, never open together. */
  private static final FileCompaction.Limits LIMITS =
      new FileCompaction.Limits(1.0, TARGET_FILE_BYTES, Integer.MAX_VALUE);

  /** Rows in commit order: the files' modification times, then their names. */
  private static final Comparator<DataFileDetail> COMMIT_ORDER =
      Comparator.comparingLong(DataFileDetail::modificationTimeMillis)
          .thenComparing(DataFileDetail::path);

  private final DeltaTables tables;
  private final Map<String, Long> checkedVersions = new ConcurrentHashMap<>();

  SmallFileCompaction(DeltaTables tables) {
    this.tables = Objects.requireNonNull(tables, "tables");
  }

  /**
   * The Delta properties a new table of this kind is created with and an existing one is given when
   * it lacks them: {@value #CHECKPOINT_INTERVAL_PROPERTY} for facts and control, none for the
   * others.
   *
   * @param kind the table kind
   * @return property names and values; empty for bronze, silver and reconcile
   */
  public static Map<String, String> tableProperties(TableKind kind) {
    return applies(kind.propertyValue())
        ? Map.of(CHECKPOINT_INTERVAL_PROPERTY, String.valueOf(CHECKPOINT_INTERVAL))
        : Map.of();
  }

  private static boolean applies(String kind) {
    return TableKind.FACTS.propertyValue().equalsIgnoreCase(kind)
        || TableKind.CONTROL.propertyValue().equalsIgnoreCase(kind);
  }

  /**
   * What {@link #compact} did.
   *
   * @param compaction the compaction's outcome (not committed when fewer than two files were small)
   * @param filesBefore the data files the table held when the last attempt listed them
   * @param filesAfter the data files the table holds after the compaction's commit (or, without a
   *     commit, the files listed)
   * @param attempts the attempts made, from 1
   */
  public record Outcome(
      FileCompaction.Result compaction, int filesBefore, int filesAfter, int attempts) {}

  /**
   * Rewrites every file of the table smaller than {@value #TARGET_FILE_BYTES} bytes into one file
   * (more when the rows exceed the writer's file size), in commit order, in one {@code dataChange =
   * false} commit, then writes a checkpoint at that commit's version unless one exists. Lists again
   * and retries when a commit landed in between, at most {@value #MAX_ATTEMPTS} attempts.
   *
   * @param path the table path or URI
   * @return what was done
   * @throws IllegalStateException when no table exists
   * @throws DeltaConflictException when every attempt lost to a concurrent commit
   */
  public Outcome compact(String path) {
    return compact(path, () -> {});
  }

  /** {@link #compact(String)} running a test hook before each attempt's commit. */
  Outcome compact(String path, Runnable beforeCommit) {
    DeltaConflictException last = null;
    for (int attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      int[] listed = new int[1];
      try {
        FileCompaction.Result result =
            new FileCompaction(tables)
                .compact(
                    path,
                    "Delta table",
                    List.of(),
                    LIMITS,
                    files -> {
                      listed[0] = files.size();
                      return files.stream().sorted(COMMIT_ORDER).toList();
                    },
                    beforeCommit);
        int after = listed[0] - result.filesRemoved() + result.filesAdded();
        if (result.committed()) {
          tables.checkpoint(path, result.version());
          LOG.info(
              "Delta table {}: compacted {} small files into {} ({} rows), version {}",
              path,
              result.filesRemoved(),
              result.filesAdded(),
              result.rowsWritten(),
              result.version());
        }
        return new Outcome(result, listed[0], after, attempt);
      } catch (DeltaConflictException e) {
        LOG.info(
            "Delta table {}: compaction lost to a concurrent commit (attempt {} of {}); listing"
                + " again",
            path,
            attempt,
            MAX_ATTEMPTS);
        last = e;
      }
    }
    throw last;
  }

  /**
   * The check after a commit (see the class comment): compacts when the commit landed a version one
   * before a multiple of {@value #CHECK_EVERY_VERSIONS}, the table is facts or control, no other
   * thread of this JVM checks this version, and at least {@value #MIN_FILES} files are small. Never
   * throws: a failure is logged and left to the next check.
   *
   * @param path the table path or URI
   * @param result the commit's outcome
   */
  void afterCommit(String path, CommitResult result) {
    long version = result.version();
    if (result.status() != CommitResult.Status.COMMITTED
        || (version + 1) % CHECK_EVERY_VERSIONS != 0) {
      return;
    }
    try {
      Map<String, String> properties = tables.propertiesAfterCommit(path, version);
      if (!applies(properties.getOrDefault(TableProperties.TABLE_KIND, ""))
          || !firstToCheck(path, version)) {
        return;
      }
      long small =
          tables.dataFileDetails(path).stream()
              .filter(f -> f.sizeBytes() < TARGET_FILE_BYTES)
              .count();
      if (small >= MIN_FILES) {
        compact(path);
      }
    } catch (RuntimeException e) {
      LOG.warn(
          "Delta table {}: compaction after version {} failed; the next check tries again",
          path,
          version,
          e);
    }
  }

  /** Whether this thread is the first of this JVM to check this version of the table. */
  private boolean firstToCheck(String path, long version) {
    boolean[] mine = new boolean[1];
    checkedVersions.compute(
        path,
        (p, checked) -> {
          if (checked != null && checked >= version) {
            return checked;
          }
          mine[0] = true;
          return version;
        });
    return mine[0];
  }
}
