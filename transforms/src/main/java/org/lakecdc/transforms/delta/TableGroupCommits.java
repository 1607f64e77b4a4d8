package org.lakecdc.transforms.delta;

import static org.lakecdc.transforms.delta.TableSnapshots.ENGINE_INFO;

import io.delta.kernel.Operation;
import io.delta.kernel.Snapshot;
import io.delta.kernel.Transaction;
import io.delta.kernel.TransactionCommitResult;
import io.delta.kernel.engine.Engine;
import io.delta.kernel.exceptions.ConcurrentTransactionException;
import io.delta.kernel.exceptions.ConcurrentWriteException;
import io.delta.kernel.exceptions.MaxCommitRetryLimitReachedException;
import io.delta.kernel.utils.CloseableIterable;
import java.time.Clock;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.beam.sdk.schemas.Schema;
import org.apache.beam.sdk.values.Row;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Group commit of small identified appends to one table (the shared facts table's rows of many
 * targets' batches): while one writer's commit is in flight, the appends of other writers of the
 * same table in this JVM queue, and the next commit takes them all, one data file and one Delta
 * commit for the lot. A writer alone commits alone, at once.
 *
 * <h2>Exactly once per (app id, version)</h2>
 *
 * <p>Every member of a group carries its own transaction identifier {@code (appId, txnVersion)}:
 * the first through Kernel's {@code withTransactionId}, the others as {@code txn} actions of the
 * same commit (Delta allows one per app id in a commit; Kernel reads them all back, in {@code
 * getLatestTransactionVersion}, in its conflict checks and in checkpoints). A group is built on a
 * snapshot on which no member's identifier has reached its version (members that have are reported
 * {@link CommitResult.Status#ALREADY_COMMITTED} and left out), and committed with {@code
 * withMaxRetries(0)}: it lands as exactly the version after that snapshot or not at all. Another
 * commit in between (any writer, any JVM) makes it fail; the group is then checked again on the new
 * snapshot, so a member another writer committed meanwhile is left out, never written twice. A
 * commit whose outcome is unknown (a transient store failure) is checked the same way: a member
 * found committed was committed by it. The members' domain metadata go in the same commit, atomic
 * with their rows.
 *
 * <p>At most one member per app id is in a group (one writer's appends are sequential anyway); all
 * members of a group have the same row schema. A committer round ({@link #appendAll}) queues the
 * members of many app ids at once: they go into one group, together with whatever else waits.
 * Thread-safe.
 */
final class TableGroupCommits {
  private static final Logger LOG = LoggerFactory.getLogger(TableGroupCommits.class);

  /**
   * Attempts of one group: each lost one means another commit landed (progress), and each rechecks
   * the members on the new snapshot. As many as Kernel's own default commit retries.
   */
  static final int MAX_ATTEMPTS = 200;

  private final TableSnapshots snapshots;
  private final TableCommits commits;
  private final Engine engine;
  private final Clock clock;
  private final Map<String, Queue> queues = new ConcurrentHashMap<>();

  /** One identified append of a group. */
  record Member(
      Schema rowSchema,
      List<Row> rows,
      String appId,
      long txnVersion,
      Map<String, String> domainMetadata) {}

  /** A member waiting for (or holding) its table's commit, and how it ended. */
  private static final class Pending {
    final Member member;
    boolean done;
    CommitResult result;
    RuntimeException failure;

    Pending(Member member) {
      this.member = member;
    }
  }

  /** The waiting members of one table and whether a commit of it is in flight. */
  private static final class Queue {
    final ArrayDeque<Pending> waiting = new ArrayDeque<>();
    boolean inFlight;
  }

  TableGroupCommits(TableSnapshots snapshots, TableCommits commits, Clock clock) {
    this.snapshots = snapshots;
    this.commits = commits;
    this.engine = snapshots.engine();
    this.clock = clock;
  }

  /**
   * Appends these rows to the table at {@code path} in the next group commit, as one member tagged
   * {@code (appId, txnVersion)} with its domain metadata ({@link #append(String, Member,
   * Runnable)}).
   */
  CommitResult append(
      String path,
      Schema rowSchema,
      List<Row> rows,
      String appId,
      long txnVersion,
      Map<String, String> domainMetadata,
      Runnable beforeCommit) {
    return append(
        path,
        new Member(rowSchema, List.copyOf(rows), appId, txnVersion, Map.copyOf(domainMetadata)),
        beforeCommit);
  }

  /**
   * Appends {@code member}'s rows to the table at {@code path} in the next group commit, and
   * returns when that is committed (or found committed before).
   *
   * @param beforeCommit a test hook run by the writer that commits a group, before each attempt
   * @return this member's outcome: the group's version and data files when committed
   * @throws DeltaConflictException when the group lost {@value #MAX_ATTEMPTS} times in a row
   * @throws IllegalStateException when the thread is interrupted while its append waits
   */
  CommitResult append(String path, Member member, Runnable beforeCommit) {
    return appendAll(path, List.of(member), beforeCommit).get(0);
  }

  /**
   * Appends every member's rows to the table at {@code path} in the next group commit, all of them
   * in the same one (with the appends of other writers waiting then), and returns when that is
   * committed: one data file and one Delta commit for a committer's whole round.
   *
   * @param members appends of distinct app ids, all of one row schema
   * @param beforeCommit a test hook run by the writer that commits a group, before each attempt
   * @return each member's outcome, in the order of {@code members}
   * @throws IllegalArgumentException when two members share an app id or their schemas differ
   * @throws DeltaConflictException when the group lost {@value #MAX_ATTEMPTS} times in a row
   * @throws IllegalStateException when the thread is interrupted while its appends wait
   */
  List<CommitResult> appendAll(String path, List<Member> members, Runnable beforeCommit) {
    Set<String> distinct = new HashSet<>();
    for (Member m : members) {
      if (!distinct.add(m.appId())) {
        throw new IllegalArgumentException(
            "Two appends of app id " + m.appId() + " to " + path + " in one group commit");
      }
      if (!m.rowSchema().equals(members.get(0).rowSchema())) {
        throw new IllegalArgumentException(
            "Appends of different row schemas to " + path + " in one group commit");
      }
    }
    Queue queue = queues.computeIfAbsent(path, p -> new Queue());
    List<Pending> mine = new ArrayList<>();
    for (Member m : members) {
      mine.add(new Pending(m));
    }
    List<Pending> group;
    synchronized (queue) {
      queue.waiting.addAll(mine);
      queue.notifyAll(); // a test may wait for appends to queue (awaitWaiting)
      while (!allDone(mine) && queue.inFlight) {
        try {
          queue.wait();
        } catch (InterruptedException e) {
          queue.waiting.removeAll(mine);
          Thread.currentThread().interrupt();
          Member first = members.get(0);
          throw new IllegalStateException(
              "Interrupted while the append of app id "
                  + first.appId()
                  + " version "
                  + first.txnVersion()
                  + " to "
                  + path
                  + " waited for its commit",
              e);
        }
      }
      if (allDone(mine)) {
        return outcomes(mine);
      }
      queue.inFlight = true;
      // Another writer's group may have taken some of them (then they are done).
      List<Pending> open = new ArrayList<>();
      for (Pending p : mine) {
        if (!p.done) {
          open.add(p);
        }
      }
      group = take(queue.waiting, open);
    }
    try {
      Map<Pending, CommitResult> results = commitGroup(path, group, beforeCommit);
      for (Pending p : group) {
        p.result = results.get(p);
      }
    } catch (RuntimeException e) {
      for (Pending p : group) {
        p.failure = e;
      }
    } finally {
      synchronized (queue) {
        for (Pending p : group) {
          p.done = true;
        }
        queue.inFlight = false;
        queue.notifyAll();
      }
    }
    return outcomes(mine);
  }

  /**
   * Waits until at least {@code n} appends to {@code path} wait for the commit in flight (tests).
   *
   * @return false when they did not within the timeout
   */
  boolean awaitWaiting(String path, int n, long timeoutMillis) throws InterruptedException {
    Queue queue = queues.computeIfAbsent(path, p -> new Queue());
    long deadline = System.currentTimeMillis() + timeoutMillis;
    synchronized (queue) {
      while (queue.waiting.size() < n) {
        long left = deadline - System.currentTimeMillis();
        if (left <= 0) {
          return false;
        }
        queue.wait(left);
      }
      return true;
    }
  }

  /**
   * This writer's members first (all of them: they were queued together and are taken together),
   * then every waiting one of the same schema and another app id.
   */
  private static List<Pending> take(ArrayDeque<Pending> waiting, List<Pending> mine) {
    waiting.removeAll(mine);
    List<Pending> group = new ArrayList<>(mine);
    Set<String> appIds = new HashSet<>();
    Schema schema = mine.get(0).member.rowSchema();
    for (Pending p : mine) {
      appIds.add(p.member.appId());
    }
    Iterator<Pending> it = waiting.iterator();
    while (it.hasNext()) {
      Pending p = it.next();
      if (p.member.rowSchema().equals(schema) && appIds.add(p.member.appId())) {
        group.add(p);
        it.remove();
      }
    }
    return group;
  }

  private static boolean allDone(List<Pending> mine) {
    for (Pending p : mine) {
      if (!p.done) {
        return false;
      }
    }
    return true;
  }

  private static List<CommitResult> outcomes(List<Pending> mine) {
    List<CommitResult> results = new ArrayList<>();
    for (Pending p : mine) {
      if (p.failure != null) {
        throw p.failure;
      }
      results.add(p.result);
    }
    return results;
  }

  /** Commits a group (see the class comment); the outcome of each member. */
  private Map<Pending, CommitResult> commitGroup(
      String path, List<Pending> group, Runnable beforeCommit) {
    Map<Pending, CommitResult> results = new LinkedHashMap<>();
    List<Pending> left = new ArrayList<>(group);
    List<DataFileAction> files = null;
    List<Pending> filesOf = List.of();
    RuntimeException last = null;
    try (KernelRetries.Attempts transientFailures = new KernelRetries.Attempts(path, "an append")) {
      for (int attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
        Snapshot snapshot;
        Transaction txn;
        try {
          snapshot = snapshots.require(path);
          dropCommitted(path, snapshot, left, results);
          if (left.isEmpty()) {
            return results;
          }
          Member first = left.get(0).member;
          txn =
              snapshot
                  .buildUpdateTableTransaction(ENGINE_INFO, Operation.WRITE)
                  .withMaxRetries(0)
                  .withTransactionId(first.appId(), first.txnVersion())
                  .build(engine);
          if (files == null || !filesOf.equals(left)) {
            // The rows of the members still in the group, one data file (or a few, when large).
            files = commits.writeDataFiles(path, txn, first.rowSchema(), rowsOf(left));
            filesOf = List.copyOf(left);
          }
        } catch (ConcurrentTransactionException e) {
          // The first member's identifier landed since the check: checked again next attempt.
          continue;
        } catch (RuntimeException e) {
          pauseOrThrow(path, transientFailures, e);
          attempt--;
          continue;
        }
        List<io.delta.kernel.data.Row> actions = new ArrayList<>();
        for (DataFileAction file : files) {
          actions.add(KernelInternals.addActionFromJson(file.actionJson()));
        }
        long now = clock.millis();
        for (Pending p : left.subList(1, left.size())) {
          actions.add(KernelInternals.txnAction(p.member.appId(), p.member.txnVersion(), now));
        }
        for (Pending p : left) {
          p.member.domainMetadata().forEach(txn::addDomainMetadata);
        }
        beforeCommit.run();
        try {
          TransactionCommitResult result =
              txn.commit(
                  engine,
                  CloseableIterable.inMemoryIterable(KernelIterators.of(actions.iterator())));
          snapshots.rememberCommitted(path, result);
          snapshots.runPostCommitHooks(path, result);
          for (Pending p : left) {
            results.put(
                p,
                new CommitResult(
                    CommitResult.Status.COMMITTED, result.getVersion(), files.size(), 0));
          }
          if (left.size() > 1) {
            LOG.debug(
                "Delta table {}: version {} commits the appends of {} writers",
                path,
                result.getVersion(),
                left.size());
          }
          return results;
        } catch (MaxCommitRetryLimitReachedException | ConcurrentWriteException e) {
          // Another commit took the version: every member is checked again on the new snapshot.
          last = e;
        } catch (RuntimeException e) {
          // The commit may or may not have landed: the identifiers on a fresh snapshot tell.
          pauseOrThrow(path, transientFailures, e);
          attempt--;
        }
      }
    }
    throw new DeltaConflictException(
        "Delta table "
            + path
            + ": a group of "
            + left.size()
            + " appends lost to concurrent commits "
            + MAX_ATTEMPTS
            + " times",
        last);
  }

  /**
   * Rethrows a failure that is not transient; else forgets the table's kept snapshot (the next
   * attempt reads it again) and pauses, or rethrows once the transient failures are too many.
   */
  private void pauseOrThrow(
      String path, KernelRetries.Attempts transientFailures, RuntimeException e) {
    if (!KernelRetries.isRetryable(e)) {
      throw e;
    }
    snapshots.forget(path);
    transientFailures.pauseOrThrow(e);
  }

  /**
   * Moves the members whose identifier already reached their version from {@code left}: the
   * identifiers of all of them looked up in one pass over the log ({@link
   * KernelInternals#latestTransactionVersions}), not one replay per member.
   */
  private void dropCommitted(
      String path, Snapshot snapshot, List<Pending> left, Map<Pending, CommitResult> results) {
    Set<String> appIds = new HashSet<>();
    for (Pending p : left) {
      appIds.add(p.member.appId());
    }
    Map<String, Long> latest = KernelInternals.latestTransactionVersions(engine, snapshot, appIds);
    Iterator<Pending> it = left.iterator();
    while (it.hasNext()) {
      Pending p = it.next();
      Long committed = latest.get(p.member.appId());
      if (committed != null && committed >= p.member.txnVersion()) {
        results.put(
            p,
            commits.alreadyCommitted(
                path, p.member.appId(), p.member.txnVersion(), snapshot.getVersion()));
        it.remove();
      }
    }
  }

  private static Iterable<Row> rowsOf(List<Pending> members) {
    List<Row> rows = new ArrayList<>();
    for (Pending p : members) {
      rows.addAll(p.member.rows());
    }
    return rows;
  }
}
