package org.lakecdc.transforms.delta;

import static org.lakecdc.transforms.delta.TableSnapshots.ENGINE_INFO;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.delta.kernel.Operation;
import io.delta.kernel.Snapshot;
import io.delta.kernel.Transaction;
import io.delta.kernel.TransactionCommitResult;
import io.delta.kernel.engine.Engine;
import io.delta.kernel.exceptions.ConcurrentTransactionException;
import io.delta.kernel.exceptions.ConcurrentWriteException;
import io.delta.kernel.exceptions.MaxCommitRetryLimitReachedException;
import io.delta.kernel.transaction.UpdateTableTransactionBuilder;
import io.delta.kernel.utils.CloseableIterable;
import java.io.IOException;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.beam.sdk.schemas.Schema;
import org.apache.beam.sdk.values.Row;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writing and committing Delta tables: data files written without a commit, idempotent appends
 * tagged with a transaction identifier, rewrites of small tables, rearrangements (compaction) and
 * the commit-once rule of every commit that removes files ({@code withMaxRetries(0)}: Kernel's
 * conflict resolution does not check removed files). The public contract of each method is the
 * tables' method of the same name (docs/architecture.md "Delta tables"). Thread-safe.
 */
final class TableCommits {
  private static final Logger LOG = LoggerFactory.getLogger(TableCommits.class);

  /**
   * The lines of transactions found already committed (a replay: another run or an earlier attempt
   * committed them): under {@code org.lakecdc.detail}, log file only.
   */
  private static final Logger ALREADY_COMMITTED =
      LoggerFactory.getLogger("org.lakecdc.detail." + TableCommits.class.getSimpleName());

  /**
   * Attempts of an append that loses to a concurrent metadata or protocol change ({@code
   * ConcurrentWriteException} after Kernel's own conflict resolution), each on a fresh snapshot.
   */
  static final int MAX_APPEND_ATTEMPTS = 5;

  private static final ObjectMapper JSON = new ObjectMapper();

  private final TableSnapshots snapshots;
  private final Engine engine;
  private final ParquetDataFiles parquet;
  private final Clock clock;

  /** Per table path, the plan of its last data file writer ({@link #openDataFileWriter}). */
  private final Map<String, KnownPlan> writePlans = new ConcurrentHashMap<>();

  TableCommits(TableSnapshots snapshots, ParquetDataFiles parquet, Clock clock) {
    this.snapshots = snapshots;
    this.engine = snapshots.engine();
    this.parquet = parquet;
    this.clock = clock;
  }

  /** Writes rows as data files of the table without committing them. */
  public List<DataFileAction> writeDataFiles(String path, Schema rowSchema, Iterable<Row> rows) {
    Snapshot snapshot = snapshots.require(path);
    Transaction txn =
        snapshot.buildUpdateTableTransaction(ENGINE_INFO, Operation.WRITE).build(engine);
    return writeDataFiles(path, txn, rowSchema, rows);
  }

  List<DataFileAction> writeDataFiles(
      String path, Transaction txn, Schema rowSchema, Iterable<Row> rows) {
    // The writer checks the rows' schema against the table's before any row (also for no rows).
    try (DataFileWriter writer =
        new DataFileWriter(
            path,
            engine,
            DataFileWriter.Plan.of(path, engine, txn, rowSchema),
            rowSchema,
            parquet)) {
      Iterator<Row> iterator = rows.iterator();
      while (iterator.hasNext()) {
        writer.write(iterator.next());
      }
      return writer.finish();
    }
  }

  /**
   * A writer of rows pushed one at a time, on the latest snapshot; nothing is committed. The
   * writer's plan (Kernel's write transaction state and context, the rows' fields matched to the
   * columns) is the one of the table's last writer while the table's metadata and protocol and the
   * rows' schema are the same ({@link KernelInternals#writeShape}): a batch after a commit that
   * only added files does not parse the table schema again.
   */
  public DataFileWriter openDataFileWriter(String path, Schema rowSchema) {
    Snapshot snapshot = snapshots.require(path);
    Object shape = KernelInternals.writeShape(snapshot);
    KnownPlan known = writePlans.get(path);
    DataFileWriter.Plan plan;
    if (known != null && known.shape().equals(shape) && known.rowSchema().equals(rowSchema)) {
      plan = known.plan();
    } else {
      Transaction txn =
          snapshot.buildUpdateTableTransaction(ENGINE_INFO, Operation.WRITE).build(engine);
      plan = DataFileWriter.Plan.of(path, engine, txn, rowSchema);
      writePlans.put(path, new KnownPlan(shape, rowSchema, plan));
    }
    return new DataFileWriter(path, engine, plan, rowSchema, parquet);
  }

  /** The plan of a table's last data file writer and what it was made for. */
  private record KnownPlan(Object shape, Schema rowSchema, DataFileWriter.Plan plan) {}

  /** Commits data files with a transaction identifier and domain metadata (an append). */
  public CommitResult commit(
      String path,
      List<DataFileAction> files,
      @Nullable String appId,
      long txnVersion,
      Map<String, String> domainMetadata) {
    return commit(path, files, appId, txnVersion, domainMetadata, () -> {});
  }

  /** {@link #commit(String, List, String, long, Map)} writing its checkpoint as {@code timing}. */
  public CommitResult commit(
      String path,
      List<DataFileAction> files,
      @Nullable String appId,
      long txnVersion,
      Map<String, String> domainMetadata,
      CheckpointTiming timing) {
    return commit(path, files, appId, txnVersion, domainMetadata, () -> {}, null, timing);
  }

  /**
   * {@link #commit(String, List, String, long, Map)} running a test hook between building the first
   * attempt's transaction and committing it, where a concurrent writer can interfere.
   */
  CommitResult commit(
      String path,
      List<DataFileAction> files,
      @Nullable String appId,
      long txnVersion,
      Map<String, String> domainMetadata,
      Runnable beforeFirstCommit) {
    return commit(
        path,
        files,
        appId,
        txnVersion,
        domainMetadata,
        beforeFirstCommit,
        null,
        CheckpointTiming.IN_COMMIT);
  }

  /**
   * {@link #commit(String, List, String, long, Map, Runnable)} whose first attempt commits {@code
   * firstTransaction} (built by the caller on the latest snapshot with the same transaction
   * identifier) when given, instead of building one on a snapshot read again; the checkpoint Kernel
   * offers after it is written as {@code timing}.
   */
  private CommitResult commit(
      String path,
      List<DataFileAction> files,
      @Nullable String appId,
      long txnVersion,
      Map<String, String> domainMetadata,
      Runnable beforeFirstCommit,
      @Nullable Transaction firstTransaction,
      CheckpointTiming timing) {
    List<io.delta.kernel.data.Row> actions = new ArrayList<>(files.size());
    for (DataFileAction file : files) {
      actions.add(KernelInternals.addActionFromJson(file.actionJson()));
    }
    Map<String, String> domains = new LinkedHashMap<>(domainMetadata);
    RuntimeException last = null;
    try (KernelRetries.Attempts transientFailures = new KernelRetries.Attempts(path, "an append")) {
      for (int attempt = 1; attempt <= MAX_APPEND_ATTEMPTS; attempt++) {
        Transaction txn;
        if (attempt == 1 && firstTransaction != null && transientFailures.failures() == 0) {
          txn = firstTransaction;
        } else {
          try {
            txn = transaction(snapshots.require(path), appId, txnVersion).build(engine);
          } catch (ConcurrentTransactionException e) {
            return alreadyCommitted(path, appId, txnVersion, snapshots.require(path).getVersion());
          } catch (RuntimeException e) {
            if (!KernelRetries.isRetryable(e)) {
              throw e;
            }
            snapshots.forget(path);
            transientFailures.pauseOrThrow(e);
            attempt--;
            continue;
          }
        }
        domains.forEach(txn::addDomainMetadata);
        if (attempt == 1 && transientFailures.failures() == 0) {
          beforeFirstCommit.run();
        }
        try {
          TransactionCommitResult result =
              txn.commit(
                  engine,
                  CloseableIterable.inMemoryIterable(KernelIterators.of(actions.iterator())));
          snapshots.rememberCommitted(path, result);
          snapshots.runPostCommitHooks(path, result, timing);
          return new CommitResult(
              CommitResult.Status.COMMITTED, result.getVersion(), files.size(), 0);
        } catch (ConcurrentTransactionException e) {
          return alreadyCommitted(path, appId, txnVersion, snapshots.require(path).getVersion());
        } catch (RuntimeException e) {
          if (e instanceof ConcurrentWriteException
              || !KernelRetries.isRetryableCommit(e, appId != null)) {
            if (e instanceof ConcurrentWriteException cwe) {
              LOG.info(
                  "Delta table {}: append (appId {}, version {}) lost to a concurrent change"
                      + " (attempt {} of {}): {}",
                  path,
                  appId,
                  txnVersion,
                  attempt,
                  MAX_APPEND_ATTEMPTS,
                  cwe.getMessage());
              last = cwe;
              continue;
            }
            throw e;
          }
          // A transient failure of the store or of a listing: the next attempt starts from a fresh
          // snapshot, whose transaction identifier tells whether this one was committed after all.
          snapshots.forget(path);
          transientFailures.pauseOrThrow(e);
          attempt--;
        }
      }
    }
    throw new DeltaConflictException(
        "Delta table "
            + path
            + ": the append of appId "
            + appId
            + " version "
            + txnVersion
            + " lost to concurrent changes "
            + MAX_APPEND_ATTEMPTS
            + " times",
        last);
  }

  /** An append's transaction on {@code snapshot}, tagged {@code (appId, txnVersion)} if given. */
  private static UpdateTableTransactionBuilder transaction(
      Snapshot snapshot, @Nullable String appId, long txnVersion) {
    UpdateTableTransactionBuilder builder =
        snapshot.buildUpdateTableTransaction(ENGINE_INFO, Operation.WRITE);
    return appId == null ? builder : builder.withTransactionId(appId, txnVersion);
  }

  CommitResult alreadyCommitted(
      String path, @Nullable String appId, long txnVersion, long tableVersion) {
    ALREADY_COMMITTED.info(
        "Delta table {}: transaction (appId {}, version {}) is already committed; skipped",
        path,
        appId,
        txnVersion);
    return new CommitResult(CommitResult.Status.ALREADY_COMMITTED, tableVersion, 0, 0);
  }

  /** Writes the rows and commits them in this process, reading the latest snapshot once. */
  public CommitResult append(
      String path,
      Schema rowSchema,
      Iterable<Row> rows,
      @Nullable String appId,
      long txnVersion,
      Map<String, String> domainMetadata) {
    Transaction txn;
    try {
      // Building reads the snapshot's transaction identifiers (from a checkpoint an object store
      // may be listing or replacing): retried from a fresh snapshot (KernelRetries).
      txn =
          KernelRetries.call(
              path,
              "starting an append",
              () -> {
                try {
                  return transaction(snapshots.require(path), appId, txnVersion).build(engine);
                } catch (ConcurrentTransactionException e) {
                  throw e; // committed before: the kept snapshot says so, and stays
                } catch (RuntimeException e) {
                  snapshots.forget(path);
                  throw e;
                }
              });
    } catch (ConcurrentTransactionException e) {
      return alreadyCommitted(path, appId, txnVersion, snapshots.require(path).getVersion());
    }
    List<DataFileAction> files = writeDataFiles(path, txn, rowSchema, rows);
    return commit(
        path, files, appId, txnVersion, domainMetadata, () -> {}, txn, CheckpointTiming.IN_COMMIT);
  }

  /** Replaces all rows of a small table with these rows in one commit. */
  public CommitResult rewrite(
      String path, Schema rowSchema, Iterable<Row> rows, @Nullable String appId, long txnVersion) {
    return rewrite(path, rowSchema, rows, appId, txnVersion, () -> {});
  }

  /** {@link #rewrite(String, Schema, Iterable, String, long)} running a test hook before commit. */
  CommitResult rewrite(
      String path,
      Schema rowSchema,
      Iterable<Row> rows,
      @Nullable String appId,
      long txnVersion,
      Runnable beforeCommit) {
    return rewrite(path, -1, rowSchema, rows, appId, txnVersion, Map.of(), beforeCommit);
  }

  /**
   * The rewrite, on the latest snapshot, which must be {@code readVersion} when that is not -1: the
   * files removed are those of the version whose content the caller's rows replace.
   */
  private CommitResult rewrite(
      String path,
      long readVersion,
      Schema rowSchema,
      Iterable<Row> rows,
      @Nullable String appId,
      long txnVersion,
      Map<String, String> domainMetadata,
      Runnable beforeCommit) {
    Snapshot snapshot = snapshots.require(path);
    if (readVersion >= 0 && snapshot.getVersion() != readVersion) {
      throw conflict(path, readVersion, snapshot.getVersion(), null);
    }
    Optional<Transaction> built = commitOnceTransaction(snapshot, appId, txnVersion);
    if (built.isEmpty()) {
      return alreadyCommitted(path, appId, txnVersion, snapshot.getVersion());
    }
    Transaction txn = built.get();
    long now = clock.millis();
    List<io.delta.kernel.data.Row> actions = new ArrayList<>();
    snapshots.forEachScanFile(
        snapshot.getScanBuilder().build(),
        (scanState, scanFile) -> actions.add(KernelInternals.removeAction(scanFile, now)));
    int removed = actions.size();
    List<DataFileAction> added = writeDataFiles(path, txn, rowSchema, rows);
    for (DataFileAction file : added) {
      actions.add(KernelInternals.addActionFromJson(file.actionJson()));
    }
    domainMetadata.forEach(txn::addDomainMetadata);
    beforeCommit.run();
    return commitOnce(
        path,
        txn,
        actions,
        appId,
        txnVersion,
        added.size(),
        removed,
        "the rewrite read version "
            + snapshot.getVersion()
            + " but another commit landed first; re-read the table and rewrite again");
  }

  /**
   * Commits a transaction built with {@code withMaxRetries(0)} (a rewrite, a rearrangement, a
   * deletion-vector wave: Kernel's conflict resolution does not check removed files, so such a
   * commit is never rebased), runs the post-commit hooks and says what was committed.
   *
   * @param conflict the message after {@code Delta table <path>: } when another commit landed first
   * @throws DeltaConflictException when another commit landed first
   */
  CommitResult commitOnce(
      String path,
      Transaction txn,
      List<io.delta.kernel.data.Row> actions,
      @Nullable String appId,
      long txnVersion,
      int filesAdded,
      int filesRemoved,
      String conflict) {
    try {
      TransactionCommitResult result =
          txn.commit(
              engine, CloseableIterable.inMemoryIterable(KernelIterators.of(actions.iterator())));
      snapshots.rememberCommitted(path, result);
      snapshots.runPostCommitHooks(path, result);
      return new CommitResult(
          CommitResult.Status.COMMITTED, result.getVersion(), filesAdded, filesRemoved);
    } catch (ConcurrentTransactionException e) {
      return alreadyCommitted(path, appId, txnVersion, snapshots.require(path).getVersion());
    } catch (MaxCommitRetryLimitReachedException | ConcurrentWriteException e) {
      throw new DeltaConflictException("Delta table " + path + ": " + conflict, e);
    } catch (RuntimeException e) {
      if (!KernelRetries.isRetryable(e)) {
        throw e;
      }
      // A transient failure of the store: the commit may or may not have landed. The callers of
      // these commits re-read the table and recompute on a conflict, which covers both; with a
      // transaction identifier, one that landed is reported as such.
      snapshots.forget(path);
      if (appId != null) {
        Snapshot latest = snapshots.require(path);
        if (holds(latest, appId, txnVersion)) {
          return alreadyCommitted(path, appId, txnVersion, latest.getVersion());
        }
      }
      throw new DeltaConflictException(
          "Delta table "
              + path
              + ": the commit failed on the way ("
              + e
              + "); re-read the table and commit again",
          e);
    }
  }

  /** {@link #rewrite(String, Schema, Iterable, String, long)} without a transaction identifier. */
  public CommitResult rewrite(String path, Schema rowSchema, Iterable<Row> rows) {
    return rewrite(path, rowSchema, rows, null, 0);
  }

  /** A rewrite on exactly the version read, with domain metadata, committed once. */
  public CommitResult rewrite(
      String path,
      long readVersion,
      Schema rowSchema,
      Iterable<Row> rows,
      @Nullable String appId,
      long txnVersion,
      Map<String, String> domainMetadata) {
    Optional<CommitResult> moved =
        onReadVersion(path, snapshots.require(path), readVersion, appId, txnVersion);
    if (moved.isPresent()) {
      return moved.get();
    }
    return rewrite(path, readVersion, rowSchema, rows, appId, txnVersion, domainMetadata, () -> {});
  }

  /**
   * Checks that {@code latest} is still the version {@code readVersion} a commit-once caller read.
   *
   * @return empty when it is; the already-committed result when the table moved on and holds {@code
   *     (appId, txnVersion)}
   * @throws DeltaConflictException when the table moved on otherwise
   */
  Optional<CommitResult> onReadVersion(
      String path, Snapshot latest, long readVersion, @Nullable String appId, long txnVersion) {
    if (latest.getVersion() == readVersion) {
      return Optional.empty();
    }
    if (appId != null && holds(latest, appId, txnVersion)) {
      return Optional.of(alreadyCommitted(path, appId, txnVersion, latest.getVersion()));
    }
    throw conflict(path, readVersion, latest.getVersion(), null);
  }

  /** Whether {@code snapshot} holds transaction {@code (appId, txnVersion)} or a later one. */
  private boolean holds(Snapshot snapshot, String appId, long txnVersion) {
    Optional<Long> committed = snapshot.getLatestTransactionVersion(engine, appId);
    return committed.isPresent() && committed.get() >= txnVersion;
  }

  /**
   * A commit-once transaction ({@code withMaxRetries(0)}) on {@code snapshot}, tagged {@code
   * (appId, txnVersion)} if given.
   *
   * @return empty when building finds that transaction already committed
   */
  Optional<Transaction> commitOnceTransaction(
      Snapshot snapshot, @Nullable String appId, long txnVersion) {
    try {
      return Optional.of(transaction(snapshot, appId, txnVersion).withMaxRetries(0).build(engine));
    } catch (ConcurrentTransactionException e) {
      return Optional.empty();
    }
  }

  /** Replaces data files by files holding the same rows (compaction), in one commit. */
  public CommitResult rearrangeFiles(
      String path, List<ScanFile> removed, List<DataFileAction> added) {
    if (removed.isEmpty()) {
      throw new IllegalArgumentException(
          "Delta table " + path + ": a rearrangement removes at least one file");
    }
    long readVersion = removed.get(0).version();
    for (ScanFile file : removed) {
      if (file.version() != readVersion || !file.tablePath().equals(path)) {
        throw new IllegalArgumentException(
            "Delta table "
                + path
                + ": the files to remove must be listed at one version of this table, got "
                + file.tablePath()
                + " version "
                + file.version()
                + " and version "
                + readVersion);
      }
    }
    Snapshot snapshot = snapshots.require(path);
    if (snapshot.getVersion() != readVersion) {
      throw new DeltaConflictException(
          "Delta table "
              + path
              + ": the rearrangement read version "
              + readVersion
              + " but the table is at version "
              + snapshot.getVersion()
              + "; list the files again",
          null);
    }
    Transaction txn =
        snapshot
            .buildUpdateTableTransaction(ENGINE_INFO, Operation.MANUAL_UPDATE)
            .withMaxRetries(0)
            .build(engine);
    long now = clock.millis();
    List<io.delta.kernel.data.Row> actions = new ArrayList<>(removed.size() + added.size());
    for (ScanFile file : removed) {
      actions.add(
          KernelInternals.removeAction(KernelInternals.scanFileFromJson(file.json()), now, false));
    }
    for (DataFileAction file : added) {
      actions.add(KernelInternals.addActionFromJson(withoutDataChange(file.actionJson())));
    }
    return commitOnce(
        path,
        txn,
        actions,
        null,
        0,
        added.size(),
        removed.size(),
        "the rearrangement read version "
            + readVersion
            + " but another commit landed first; list the files again");
  }

  /** An {@code add} action's JSON ({@code {"add":{...}}}) with {@code dataChange} false. */
  private static String withoutDataChange(String addJson) {
    try {
      ObjectNode action = (ObjectNode) JSON.readTree(addJson);
      ((ObjectNode) action.get("add")).put("dataChange", false);
      return JSON.writeValueAsString(action);
    } catch (IOException | ClassCastException | NullPointerException e) {
      throw new IllegalArgumentException("Not a Delta add action: " + addJson, e);
    }
  }

  static DeltaConflictException conflict(
      String path, long readVersion, long latestVersion, @Nullable Exception cause) {
    return new DeltaConflictException(
        "Delta table " + path + ": " + conflictMessage(readVersion, latestVersion), cause);
  }

  static String conflictMessage(long readVersion, long latestVersion) {
    return "the merge read version "
        + readVersion
        + " but another commit landed first"
        + (latestVersion >= 0 ? " (the table is at version " + latestVersion + ")" : "")
        + "; re-read the table and merge again";
  }
}
