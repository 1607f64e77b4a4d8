package org.lakecdc.transforms.delta;

import io.delta.kernel.Scan;
import io.delta.kernel.Snapshot;
import io.delta.kernel.Table;
import io.delta.kernel.TransactionCommitResult;
import io.delta.kernel.data.FilteredColumnarBatch;
import io.delta.kernel.defaults.engine.hadoopio.HadoopFileIO;
import io.delta.kernel.engine.Engine;
import io.delta.kernel.exceptions.TableNotFoundException;
import io.delta.kernel.hook.PostCommitHook;
import io.delta.kernel.utils.CloseableIterator;
import io.delta.kernel.utils.FileStatus;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.hadoop.conf.Configuration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Kernel engine of one set of Delta tables and the cache of their latest snapshots: every other
 * part of the tables (commits, scans, lifecycle, deletion vectors) reads a table through here.
 *
 * <p>Reading a table's latest snapshot from the log (Kernel's {@code getLatestSnapshot}: list the
 * log, read the last checkpoint and the commits after it) is the main fixed cost of a small commit,
 * so the latest snapshot read or committed per path (Kernel's post-commit snapshot) is kept and
 * reused while it is still the latest: while the log has no commit file of the next version and the
 * commit file of its version is unchanged (two file status calls), and until a checkpoint is
 * written (the kept snapshot would replay the log from its older checkpoint). Thread-safe.
 */
final class TableSnapshots {
  private static final Logger LOG = LoggerFactory.getLogger(TableSnapshots.class);

  /** The {@code commitInfo.engineInfo} of our commits (Kernel prefixes its own version). */
  static final String ENGINE_INFO = "lakecdc";

  private final ReportingEngine engine;
  private final Configuration hadoopConf;
  private final HadoopFileIO fileIO;

  /** Whether {@code file:} paths are Hadoop's own local file system ({@link #hasNoLocalLog}). */
  private final boolean localFileSystem;

  private final AtomicLong snapshotLoads = new AtomicLong();
  private final AtomicLong clusteringCarried = new AtomicLong();

  /**
   * The latest snapshot read or committed per table path, with the status of its version's commit
   * file; reused while it is still the table's latest ({@link #isLatest}).
   */
  private final Map<String, KnownSnapshot> snapshots = new ConcurrentHashMap<>();

  /** Object-store tables this instance has read: one missing now is a listing gone wrong. */
  private final Set<String> seenOnObjectStore = ConcurrentHashMap.newKeySet();

  /** The checkpoints written after their commits ({@link CheckpointTiming#IN_BACKGROUND}). */
  private final BackgroundCheckpoints checkpoints;

  private record KnownSnapshot(Snapshot snapshot, FileStatus commitFile) {}

  /** Receives the scan files of a scan with the scan's state. */
  interface ScanFileConsumer {
    void accept(io.delta.kernel.data.Row scanState, io.delta.kernel.data.Row scanFile);
  }

  /**
   * The engine on this Hadoop configuration. Unless it names a log store for {@code file:} or
   * {@code s3a:}, {@link LocalFileLogStore} is set in it for local tables and {@link
   * S3ConditionalLogStore} for {@code s3a:} (the configuration is changed, not copied).
   */
  TableSnapshots(Configuration hadoopConf) {
    if (LocalFileLogStore.isHadoopLocal(hadoopConf)) {
      hadoopConf.setIfUnset(LocalFileLogStore.CONF_KEY, LocalFileLogStore.class.getName());
    }
    // s3a: commits with conditional PUTs, safe with any number of writers (S3ConditionalLogStore).
    hadoopConf.setIfUnset(S3ConditionalLogStore.CONF_KEY, S3ConditionalLogStore.class.getName());
    this.hadoopConf = hadoopConf;
    this.localFileSystem = LocalFileLogStore.isHadoopLocal(hadoopConf);
    this.fileIO = new HadoopFileIO(hadoopConf);
    this.engine = ReportingEngine.on(fileIO);
    this.checkpoints = new BackgroundCheckpoints(engine, snapshots::remove);
  }

  Engine engine() {
    return engine;
  }

  Configuration hadoopConf() {
    return hadoopConf;
  }

  HadoopFileIO fileIO() {
    return fileIO;
  }

  /** How many times a table's latest snapshot was read from its log (reuses not counted). */
  long loads() {
    return snapshotLoads.get();
  }

  /**
   * How many snapshots Kernel has read from a log for these tables, through this cache or not
   * (latest and as of a version; Kernel's snapshot reports).
   */
  long kernelReads() {
    return engine.snapshotReads();
  }

  /** Drops the kept snapshot of a path: the next call reads the table again. */
  void forget(String path) {
    snapshots.remove(path);
  }

  /** The table's latest snapshot, or {@code No Delta table at <path>} when none exists. */
  Snapshot require(String path) {
    return latest(path).orElseThrow(() -> new IllegalStateException("No Delta table at " + path));
  }

  /**
   * The snapshot of a version: the kept latest one when it is that version, else read from the log.
   */
  Snapshot at(String path, long version) {
    Snapshot latest = require(path);
    if (latest.getVersion() == version) {
      return latest;
    }
    try {
      return Table.forPath(engine, path).getSnapshotAsOfVersion(engine, version);
    } catch (TableNotFoundException e) {
      throw new IllegalStateException("No Delta table at " + path, e);
    } catch (RuntimeException e) {
      throw new IllegalStateException(
          "Delta table " + path + " cannot be read at version " + version + ": " + e.getMessage(),
          e);
    }
  }

  /** Every scan file of a scan; with {@code includeStats} their {@code add.stats} too. */
  void forEachScanFile(Scan scan, boolean includeStats, ScanFileConsumer consumer) {
    io.delta.kernel.data.Row scanState = scan.getScanState(engine);
    try (CloseableIterator<FilteredColumnarBatch> batches =
        scan.getScanFiles(engine, includeStats)) {
      while (batches.hasNext()) {
        try (CloseableIterator<io.delta.kernel.data.Row> files = batches.next().getRows()) {
          while (files.hasNext()) {
            consumer.accept(scanState, files.next());
          }
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot list the data files of " + scan, e);
    }
  }

  /** Every scan file of a scan, without statistics. */
  void forEachScanFile(Scan scan, ScanFileConsumer consumer) {
    forEachScanFile(scan, false, consumer);
  }

  /**
   * The table's latest snapshot: the one last read or committed when it is still the latest, else
   * read from the log.
   */
  Optional<Snapshot> latest(String path) {
    KnownSnapshot known = snapshots.get(path);
    if (known != null && isLatest(known)) {
      return Optional.of(known.snapshot());
    }
    if (hasNoLocalLog(path)) {
      snapshots.remove(path);
      return Optional.empty();
    }
    snapshotLoads.incrementAndGet();
    Snapshot snapshot;
    try {
      // A listing of an object store can miss a file just written: retried (KernelRetries).
      snapshot =
          KernelRetries.call(
              path,
              "loading the latest snapshot",
              () -> {
                try {
                  return Table.forPath(engine, path).getLatestSnapshot(engine);
                } catch (TableNotFoundException e) {
                  if (!seenOnObjectStore.contains(path)) {
                    throw e;
                  }
                  // This instance has read the table before: an object store's listing of its log
                  // came back empty under load (seen with a local S3 server), retried. No cause
                  // attached: a TableNotFoundException in the chain would make it fatal.
                  throw new UncheckedIOException(
                      new IOException(
                          "Delta table "
                              + path
                              + " was read before, but a listing of its _delta_log found no"
                              + " commit"));
                }
              });
    } catch (TableNotFoundException e) {
      snapshots.remove(path);
      return Optional.empty();
    }
    remember(path, snapshot);
    return Optional.of(snapshot);
  }

  /**
   * Whether {@code path} is a table on Hadoop's own local file system without a {@code _delta_log}
   * directory: no table, as Kernel would find by listing the log (and then make a snapshot error
   * report and throw), found with one {@code java.nio} check. A planning run asks this of every new
   * table several times. False for every other path, which Kernel reads as before.
   */
  private boolean hasNoLocalLog(String path) {
    if (!localFileSystem) {
      return false;
    }
    try {
      java.net.URI uri = new org.apache.hadoop.fs.Path(fileIO.resolvePath(path)).toUri();
      return "file".equals(uri.getScheme())
          && !java.nio.file.Files.isDirectory(java.nio.file.Path.of(uri.getPath(), "_delta_log"));
    } catch (IOException | RuntimeException e) {
      return false;
    }
  }

  /** Keeps {@code snapshot} as the latest of {@code path} (not when its commit file is gone). */
  private void remember(String path, Snapshot snapshot) {
    try {
      FileStatus commitFile =
          LocalFiles.status(fileIO, localFileSystem, commitFile(snapshot, snapshot.getVersion()));
      snapshots.put(path, new KnownSnapshot(snapshot, commitFile));
      if (path.indexOf("://") > 0 && !path.startsWith("file:")) {
        seenOnObjectStore.add(path);
      }
    } catch (IOException e) {
      // A log whose commit file of the latest version was cleaned up (a checkpoint holds it):
      // nothing to compare later, so the snapshot is read again next time.
      snapshots.remove(path);
    }
  }

  /**
   * Whether a snapshot is still its table's latest: no commit file of the next version exists, and
   * the commit file of its own version is the one it was read from (same size and modification
   * time; a table deleted and created again at the path has new commit files). Delta versions are
   * contiguous and commit files are never rewritten, so this is what listing the log would tell.
   */
  private boolean isLatest(KnownSnapshot known) {
    Snapshot snapshot = known.snapshot();
    try {
      LocalFiles.status(fileIO, localFileSystem, commitFile(snapshot, snapshot.getVersion() + 1));
      return false;
    } catch (FileNotFoundException e) {
      // No next version: compare the current one below.
    } catch (IOException e) {
      return false;
    }
    return sameCommitFile(known);
  }

  /**
   * Whether the commit file of a kept snapshot's version is the one it was read from (same size and
   * modification time): the table at the path is still the one the snapshot is of.
   */
  private boolean sameCommitFile(KnownSnapshot known) {
    Snapshot snapshot = known.snapshot();
    try {
      FileStatus current =
          LocalFiles.status(fileIO, localFileSystem, commitFile(snapshot, snapshot.getVersion()));
      return current.getSize() == known.commitFile().getSize()
          && current.getModificationTime() == known.commitFile().getModificationTime();
    } catch (IOException e) {
      return false;
    }
  }

  /**
   * The kept snapshot of a path when it is of this version and its table is still the one it was
   * read from (one file status call), whether or not newer versions exist: a version's snapshot
   * never changes. Empty otherwise (the caller reads that version from the log).
   */
  Optional<Snapshot> keptAt(String path, long version) {
    KnownSnapshot known = snapshots.get(path);
    if (known == null || known.snapshot().getVersion() != version || !sameCommitFile(known)) {
      return Optional.empty();
    }
    return Optional.of(known.snapshot());
  }

  /** The path of the commit file ({@code _delta_log/<version, 20 digits>.json}) of a version. */
  private static String commitFile(Snapshot snapshot, long version) {
    String table = snapshot.getPath();
    return (table.endsWith("/") ? table : table + "/")
        + "_delta_log/"
        + String.format(Locale.ROOT, "%020d.json", version);
  }

  /**
   * Keeps the snapshot Kernel built after our commit, when it built one. When the kept snapshot it
   * follows (the commit's read snapshot) knows the table's clustering columns, the new one takes
   * them ({@link KernelInternals#carryClusteringColumns}): the next commit's report needs them, and
   * a new snapshot would read every domain metadata action since the checkpoint to find them.
   */
  void rememberCommitted(String path, TransactionCommitResult result) {
    result
        .getPostCommitSnapshot()
        .ifPresent(
            snapshot -> {
              KnownSnapshot before = snapshots.get(path);
              if (before != null
                  && KernelInternals.carryClusteringColumns(before.snapshot(), snapshot)) {
                clusteringCarried.incrementAndGet();
              }
              remember(path, snapshot);
            });
  }

  /** How many post-commit snapshots took their clustering columns from the one before. */
  long clusteringCarried() {
    return clusteringCarried.get();
  }

  /**
   * Runs the checkpoint Kernel offers after a commit every {@code delta.checkpointInterval}
   * versions, now ({@link CheckpointTiming#IN_COMMIT}) or on the background thread ({@link
   * CheckpointTiming#IN_BACKGROUND}, {@link BackgroundCheckpoints}). Version checksums ({@code
   * <version>.crc}, the other post-commit hooks) are not written: Kernel derives each from the one
   * before and from the actions it knows of, and the schema migrations commit their metadata as raw
   * actions (the migrator), which a derived checksum would miss. A failed checkpoint is logged and
   * skipped: the commit itself has succeeded.
   */
  void runPostCommitHooks(String path, TransactionCommitResult result, CheckpointTiming timing) {
    for (PostCommitHook hook : result.getPostCommitHooks()) {
      if (hook.getType() != PostCommitHook.PostCommitHookType.CHECKPOINT) {
        continue;
      }
      if (timing == CheckpointTiming.IN_BACKGROUND) {
        checkpoints.submit(path, result.getVersion(), hook);
        continue;
      }
      try {
        hook.threadSafeInvoke(engine);
        // The kept snapshot replays the log from the checkpoint it was read with, a longer log
        // with every commit: the next call reads the table again, from the new checkpoint.
        snapshots.remove(path);
      } catch (IOException | RuntimeException e) {
        LOG.warn(
            "Delta table {}: checkpoint at version {} failed; the next one will be tried",
            path,
            result.getVersion(),
            e);
      }
    }
  }

  /**
   * {@link #runPostCommitHooks(String, TransactionCommitResult, CheckpointTiming)} in the commit.
   */
  void runPostCommitHooks(String path, TransactionCommitResult result) {
    runPostCommitHooks(path, result, CheckpointTiming.IN_COMMIT);
  }

  /** The background checkpoints of these tables, for tests' hooks. */
  BackgroundCheckpoints backgroundCheckpoints() {
    return checkpoints;
  }

  /** Waits until no background checkpoint is queued or running. */
  void awaitCheckpoints() throws InterruptedException {
    checkpoints.awaitIdle();
  }

  /**
   * The table properties as of a version this instance just committed: from the kept snapshot when
   * it is that version (no file is read), else from the latest snapshot.
   */
  Map<String, String> propertiesAfterCommit(String path, long version) {
    KnownSnapshot known = snapshots.get(path);
    if (known != null && known.snapshot().getVersion() == version) {
      return known.snapshot().getTableProperties();
    }
    return require(path).getTableProperties();
  }

  /** Writes a checkpoint at the version unless one exists there; true when this call wrote it. */
  boolean checkpoint(String path, long version) {
    try {
      io.delta.kernel.Table.forPath(engine, path).checkpoint(engine, version);
      snapshots.remove(path);
      return true;
    } catch (io.delta.kernel.exceptions.CheckpointAlreadyExistsException e) {
      return false;
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(
          "Cannot write a checkpoint of Delta table " + path + " at version " + version, e);
    }
  }

  /**
   * The highest transaction version committed by {@code appId} on the table's latest snapshot.
   *
   * @return empty when the app id never committed
   * @throws IllegalStateException when no table exists
   */
  OptionalLong latestTransactionVersion(String path, String appId) {
    Optional<Long> version = require(path).getLatestTransactionVersion(engine, appId);
    return version.map(OptionalLong::of).orElse(OptionalLong.empty());
  }
}
