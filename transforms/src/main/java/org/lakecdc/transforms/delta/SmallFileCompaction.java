package org.lakecdc.transforms.delta;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadPoolExecutor;
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
 *   <li><b>Compaction beside the committers.</b> A commit of this JVM that lands a version {@code
 *       v} with {@code (v + 1) % }{@value #CHECK_EVERY_VERSIONS}{@code == 0} hands the table to the
 *       background thread of its {@link DeltaTables} and returns at once: the committer never waits
 *       for it. That thread looks at the table's files and, when at least {@value #MIN_FILES} are
 *       smaller than {@value #TARGET_FILE_BYTES} bytes, rewrites them into one file ({@link
 *       #compact}; at most {@value #MAX_FILES_PER_RUN} files per run, the oldest first, further
 *       runs following at once while a run was full) and checkpoints the compaction's version (with
 *       no other writer that is version {@code v + 1}, the multiple of the interval {@value
 *       #CHECKPOINT_INTERVAL} Kernel checkpoints anyway, so the checkpoint lists the compacted
 *       file, not the small ones). One compaction of a table at a time: a check while one is queued
 *       or running is dropped (the running one lists the files when it starts). Between two checks
 *       at most {@value #CHECK_EVERY_VERSIONS} files are added, so the table holds at most about
 *       150 small files, plus the 8 MiB files compaction filled.
 * </ul>
 *
 * <p>The background thread is a daemon made on demand, one per {@link DeltaTables}, that ends after
 * {@value #IDLE_SECONDS} s without work; {@link #awaitIdle} waits until nothing is queued or
 * running (the job calls it at the end of a run, tests before they look). A process killed
 * mid-compaction leaves the table as it was: the compaction's file is an uncommitted orphan.
 *
 * <p>Exactly once is untouched: the compaction commit has no transaction identifier and removes and
 * adds files with {@code dataChange = false}; the {@code txn} actions and domain metadata of every
 * batch stay in the log and its checkpoints, so a replayed batch is still skipped. It is committed
 * once on the version it listed ({@link DeltaTables#rearrangeFiles}): an append that lands in
 * between makes it fail with nothing visible; the background compaction then commits the same files
 * on the new version when every file it rewrote is still there unchanged ({@link #MAX_REBASES}
 * times at most), and otherwise lists again, at most {@value #MAX_ATTEMPTS} times; an append that
 * starts before it and commits after it is rebased by Kernel (a blind append) or rebuilt by the
 * group commit, and adds its own file. So no append is lost and no row is written twice. A
 * compaction that keeps losing, or fails, is logged and left to the next check: the batch that
 * triggered it has already committed, and no error reaches a committer.
 *
 * <p>Thread-safe: of the threads of one JVM that see the same version land (members of one group
 * commit), one checks.
 */
public final class SmallFileCompaction {
  private static final Logger LOG = LoggerFactory.getLogger(SmallFileCompaction.class);

  /**
   * The retries' lines: under {@code org.lakecdc.detail}, which the jobs' logging writes to the log
   * file only (a lost race is routine with many committers, not an event for the console).
   */
  private static final Logger RETRIES =
      LoggerFactory.getLogger("org.lakecdc.detail." + SmallFileCompaction.class.getSimpleName());

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

  /**
   * Commits on a newer version of one background attempt whose files are still in the table, after
   * it lost to commits that only added files (busy committers land a version every few hundred
   * milliseconds, while rewriting a table's small files takes longer).
   */
  public static final int MAX_REBASES = 20;

  /**
   * The most files one background compaction run rewrites, the oldest first: a long history left
   * un-compacted (thousands of one-row files) is taken in runs of this many, each its own commit,
   * one after another on the background thread, so each run is short enough to land beside busy
   * committers and the table shrinks from the first run on.
   */
  public static final int MAX_FILES_PER_RUN = 1_000;

  /** Seconds the background thread waits for work before it ends. */
  public static final int IDLE_SECONDS = 5;

  /** Rows in commit order: the files' modification times, then their names. */
  private static final Comparator<DataFileDetail> COMMIT_ORDER =
      Comparator.comparingLong(DataFileDetail::modificationTimeMillis)
          .thenComparing(DataFileDetail::path);

  private final DeltaTables tables;
  private final Map<String, Long> checkedVersions = new ConcurrentHashMap<>();

  /** The compaction queued or running per table path: at most one each. */
  private final Map<String, CompletableFuture<Void>> pending = new ConcurrentHashMap<>();

  /** One daemon thread, started on demand and ended after {@value #IDLE_SECONDS} s idle. */
  private final ThreadPoolExecutor background;

  /** {@value #CHECK_EVERY_VERSIONS} and {@value #MIN_FILES}, smaller in tests. */
  private volatile int checkEvery = CHECK_EVERY_VERSIONS;

  private volatile int minFiles = MIN_FILES;

  private volatile int maxRebases = MAX_REBASES;

  private volatile int maxFilesPerRun = MAX_FILES_PER_RUN;

  /** A test hook run before each background attempt's commit. */
  private volatile Runnable beforeBackgroundCommit = () -> {};

  SmallFileCompaction(DeltaTables tables) {
    this.tables = Objects.requireNonNull(tables, "tables");
    this.background = BackgroundThread.start("lakecdc-compaction", IDLE_SECONDS);
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
    return compact(path, beforeCommit, false);
  }

  /**
   * {@link #compact(String, Runnable)}; with {@code rebase}, an attempt that loses to a concurrent
   * commit first tries to commit the files it wrote on the new version ({@link #commitRebasing}),
   * and lists and rewrites again only when that is not possible.
   */
  Outcome compact(String path, Runnable beforeCommit, boolean rebase) {
    return compact(path, beforeCommit, rebase, Integer.MAX_VALUE);
  }

  /**
   * {@link #compact(String, Runnable, boolean)} rewriting at most {@code maxFiles} of the small
   * files, the oldest (in commit order) first.
   */
  Outcome compact(String path, Runnable beforeCommit, boolean rebase, int maxFiles) {
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
                      return files.stream()
                          .filter(f -> f.sizeBytes() < TARGET_FILE_BYTES)
                          .sorted(COMMIT_ORDER)
                          .limit(maxFiles)
                          .toList();
                    },
                    (removed, added) -> commitRebasing(path, removed, added, beforeCommit, rebase));
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
        RETRIES.info(
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
   * Commits a compaction's files. Without {@code rebase}, once on the version the removed files
   * were listed at. With it, when a commit landed in between, up to {@value #MAX_REBASES} times
   * more on the latest version, each time only if the commits in between left the table's columns
   * as they were and every removed file in the table unchanged (same path, no rows deleted since):
   * the appends of facts and the batches of other tables only add files, so the rows the written
   * files hold are still exactly the rows of the files they replace. A control rewrite removes
   * them, and then the compaction lists again.
   */
  private CommitResult commitRebasing(
      String path,
      List<DataFileDetail> removed,
      List<DataFileAction> added,
      Runnable beforeCommit,
      boolean rebase) {
    List<DeltaColumn> columns = rebase ? tables.describe(path).columns() : List.of();
    List<DataFileDetail> current = removed;
    for (int rebases = 0; ; rebases++) {
      beforeCommit.run();
      try {
        return tables.rearrangeFiles(
            path, current.stream().map(DataFileDetail::scanFile).toList(), added);
      } catch (DeltaConflictException lost) {
        if (!rebase || rebases >= maxRebases) {
          throw lost;
        }
        current = stillInTable(path, removed, columns).orElseThrow(() -> lost);
        RETRIES.info(
            "Delta table {}: compaction lost to a concurrent commit that left its files; committing"
                + " on version {}",
            path,
            current.get(0).scanFile().version());
      }
    }
  }

  /** The removed files as listed now, when every one is unchanged and so are the columns. */
  private Optional<List<DataFileDetail>> stillInTable(
      String path, List<DataFileDetail> removed, List<DeltaColumn> columns) {
    Map<String, DataFileDetail> now = new HashMap<>();
    for (DataFileDetail file : tables.dataFileDetails(path)) {
      now.put(file.path(), file);
    }
    if (!tables.describe(path).columns().equals(columns)) {
      return Optional.empty();
    }
    List<DataFileDetail> again = new ArrayList<>(removed.size());
    for (DataFileDetail file : removed) {
      DataFileDetail latest = now.get(file.path());
      if (latest == null
          || latest.deletedRows() != file.deletedRows()
          || !Objects.equals(latest.deletionVectorPath(), file.deletionVectorPath())) {
        return Optional.empty();
      }
      again.add(latest);
    }
    return Optional.of(again);
  }

  /**
   * The check after a commit (see the class comment): when the commit landed a version one before a
   * multiple of {@value #CHECK_EVERY_VERSIONS}, the table is facts or control, no other thread of
   * this JVM checks this version and no compaction of the table is queued or running, hands the
   * table to the background thread, which compacts when at least {@value #MIN_FILES} files are
   * small. Returns at once and never throws: a failure is logged and left to the next check.
   *
   * @param path the table path or URI
   * @param result the commit's outcome
   */
  void afterCommit(String path, CommitResult result) {
    long version = result.version();
    if (result.status() != CommitResult.Status.COMMITTED || (version + 1) % checkEvery != 0) {
      return;
    }
    try {
      Map<String, String> properties = tables.propertiesAfterCommit(path, version);
      if (!applies(properties.getOrDefault(TableProperties.TABLE_KIND, ""))
          || !firstToCheck(path, version)) {
        return;
      }
      CompletableFuture<Void> task = new CompletableFuture<>();
      if (pending.putIfAbsent(path, task) != null) {
        LOG.debug("Delta table {}: a compaction is already queued or running", path);
        return;
      }
      background.execute(() -> runCheck(path, version, task));
    } catch (RuntimeException e) {
      pending.remove(path);
      LOG.warn(
          "Delta table {}: compaction after version {} failed; the next check tries again",
          path,
          version,
          e);
    }
  }

  /**
   * The background check of one table: compacts when enough files are small, in runs of at most
   * {@value #MAX_FILES_PER_RUN} files, one after another while a run was full and enough small
   * files are left; never throws.
   */
  private void runCheck(String path, long version, CompletableFuture<Void> task) {
    try {
      int cap = maxFilesPerRun;
      while (smallFiles(path) >= minFiles) {
        Outcome run = compact(path, beforeBackgroundCommit, true, cap);
        if (!run.compaction().committed() || run.compaction().filesRemoved() < cap) {
          break;
        }
      }
    } catch (RuntimeException e) {
      LOG.warn(
          "Delta table {}: compaction after version {} failed; the next check tries again",
          path,
          version,
          e);
    } finally {
      pending.remove(path, task);
      task.complete(null);
    }
  }

  private long smallFiles(String path) {
    return tables.dataFileDetails(path).stream()
        .filter(f -> f.sizeBytes() < TARGET_FILE_BYTES)
        .count();
  }

  /**
   * Waits until no compaction of these tables is queued or running (a check handed over while it
   * waits is waited for too).
   *
   * @throws InterruptedException when the waiting thread is interrupted
   */
  void awaitIdle() throws InterruptedException {
    BackgroundThread.awaitIdle(pending, "compaction");
  }

  /**
   * Checks after versions one before a multiple of {@code versions}, from {@code files} (tests).
   */
  void checkEvery(int versions, int files) {
    this.checkEvery = versions;
    this.minFiles = files;
  }

  /** Sets the most files of one background compaction run (tests). */
  void maxFilesPerRun(int files) {
    this.maxFilesPerRun = files;
  }

  /** Sets the rebases of one background attempt (tests). */
  void maxRebases(int rebases) {
    this.maxRebases = rebases;
  }

  /** Sets the hook run before each background attempt's commit (tests). */
  void beforeBackgroundCommit(Runnable hook) {
    this.beforeBackgroundCommit = Objects.requireNonNull(hook, "hook");
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
