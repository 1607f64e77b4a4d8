package org.lakecdc.transforms.bronze;

import java.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.values.KV;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.io.mssqlcdc.read.ChangeBatch;
import org.lakecdc.transforms.delta.DeltaTables;
import org.lakecdc.transforms.finalization.Finalization;
import org.lakecdc.transforms.position.StreamPosition;

/**
 * The committer of the targets in the bounded form: receives every target's batches of the run in
 * one element and commits them in <em>committer rounds</em>. A round takes the next batch (in
 * sequence, = LSN, order) of every target that has one left; it makes each one's bronze commit
 * (only with rows) with transaction id {@code (appId, batch)} and the new position, then one facts
 * commit for the whole round (each target's facts row and event rows, with its own {@code
 * (appId#facts, batch)} and position, {@link DeltaTables#appendRound}), then the verdicts that
 * move, in one control rewrite ({@link Finalization#advanceAll}). Fifty tables' batches thus take
 * fifty bronze commits, one facts commit and at most one control rewrite per round, not fifty of
 * each. The bronze commits of a round touch different tables and run at once on a small pool of
 * threads (the worker's processors, at least 2, unless given); the facts commit and the control
 * rewrite follow on the committer's thread once all of them have ended.
 *
 * <p>Exactly once across crashes holds as for one batch: a round holds at most one batch per
 * target, so a crash between its bronze commits and its facts commit leaves each target at most one
 * batch ahead in bronze, the facts row the next run writes first from the batch stats stored with
 * that bronze commit; within a run, a replayed batch's bronze commit is found by its transaction id
 * and its facts row written once. Data first, verdict last: a crash in between leaves the verdict
 * behind the data, never ahead; the next run repairs it.
 *
 * <p>A round takes the targets in the order they were given. A {@link ChangeBatch#failed} batch
 * records the table's failure instead and ends that table's commits; the others go on.
 */
final class CommitBatches
    extends DoFn<KV<String, Iterable<KV<ChangeBatch, BatchFiles>>>, CommittedBatch> {
  /** The one key under which every target's batches reach the committer. */
  static final String ROUND_KEY = "all tables";

  private final Map<String, DeltaTarget> targets;
  private final boolean labelled;
  private final int commitThreads;
  private transient Map<String, DeltaTables> tables;

  private transient CommitterRound rounds;

  /**
   * The committer of {@code targets}' batches, by capture instance; its log lines name the table
   * when there are several.
   */
  CommitBatches(Map<String, DeltaTarget> targets) {
    this(targets, targets.size() > 1, defaultCommitThreads());
  }

  /**
   * The committer of {@code targets}' batches, by capture instance; its log lines name the table
   * when {@code labelled} (a branch of one table in a run of many).
   */
  CommitBatches(Map<String, DeltaTarget> targets, boolean labelled) {
    this(targets, labelled, defaultCommitThreads());
  }

  /**
   * The committer of {@code targets}' batches, by capture instance; its log lines name the table
   * when {@code labelled} (a branch of one table in a run of many); a round's bronze commits run on
   * up to {@code commitThreads} threads at once.
   *
   * @throws IllegalArgumentException when {@code commitThreads} is below 1
   */
  CommitBatches(Map<String, DeltaTarget> targets, boolean labelled, int commitThreads) {
    CommitterRound.checkThreads(commitThreads);
    this.targets = new LinkedHashMap<>(targets);
    this.labelled = labelled;
    this.commitThreads = commitThreads;
  }

  /**
   * The threads of a round's bronze commits unless given ({@link CommitterRound#defaultThreads}).
   */
  static int defaultCommitThreads() {
    return CommitterRound.defaultThreads();
  }

  @Setup
  public void setup() {
    tables = new HashMap<>();
    rounds = CommitterRound.of(commitThreads, targets.size());
  }

  @Teardown
  public void teardown() {
    if (rounds != null) {
      rounds.close();
      rounds = null;
    }
  }

  /** The capture instance before a batch's log line in a run of many tables, else nothing. */
  String label(String captureInstance) {
    return labelled ? captureInstance + " " : "";
  }

  /** One target's batches of the run and how far its rounds have come. */
  private static final class Cursor {
    final DeltaTarget target;
    final List<KV<ChangeBatch, BatchFiles>> batches;
    final BatchCommitter committer;
    final Lsn committedUpTo;
    StreamPosition position;
    int next;

    Cursor(
        DeltaTarget target, List<KV<ChangeBatch, BatchFiles>> batches, BatchCommitter committer) {
      this.target = target;
      this.batches = batches;
      this.committer = committer;
      this.committedUpTo = committer.committedUpTo();
      this.position = target.start();
    }
  }

  @ProcessElement
  public void process(
      @Element KV<String, Iterable<KV<ChangeBatch, BatchFiles>>> all,
      OutputReceiver<CommittedBatch> out) {
    Map<String, List<KV<ChangeBatch, BatchFiles>>> byTable = new LinkedHashMap<>();
    for (KV<ChangeBatch, BatchFiles> batch : all.getValue()) {
      byTable.computeIfAbsent(batch.getKey().captureInstance(), k -> new ArrayList<>()).add(batch);
    }
    for (String captureInstance : byTable.keySet()) {
      if (!targets.containsKey(captureInstance)) {
        throw new IllegalStateException("Batches of " + captureInstance + ", which has no target");
      }
    }
    // A round takes the targets in the order they were given.
    List<Cursor> cursors = new ArrayList<>();
    Map<String, Finalization> finalizations = new HashMap<>();
    for (Map.Entry<String, DeltaTarget> e : targets.entrySet()) {
      List<KV<ChangeBatch, BatchFiles>> batches = byTable.get(e.getKey());
      if (batches == null) {
        continue;
      }
      DeltaTarget target = e.getValue();
      DeltaTables delta = tables.computeIfAbsent(e.getKey(), k -> target.tables());
      // One verdict keeper per control table: a round's verdicts move in one control rewrite.
      Finalization verdicts =
          finalizations.computeIfAbsent(
              target.controlPath(), c -> new Finalization(delta, c, Clock.systemUTC()));
      cursors.add(
          new Cursor(
              target,
              WriteChangesToDelta.inSequence(batches),
              new BatchCommitter(target, delta, label(e.getKey()), verdicts)));
    }
    while (!cursors.isEmpty()) {
      List<CommitterRound.Member> round = new ArrayList<>();
      IllegalStateException outOfSequence = null;
      Iterator<Cursor> it = cursors.iterator();
      while (it.hasNext()) {
        Cursor c = it.next();
        if (c.next == c.batches.size()) {
          it.remove();
          continue;
        }
        ChangeBatch batch = c.batches.get(c.next).getKey();
        BatchFiles files = c.batches.get(c.next).getValue();
        if (batch.sequence() != c.next) {
          outOfSequence = outOfSequence(c.target, batch, c.next);
          break;
        }
        if (batch.failed()) {
          // The table stopped here: later batches (of other parts of the read) are not committed.
          out.output(c.committer.recordFailure(c.position, batch));
          it.remove();
          continue;
        }
        long batchId = c.target.batchId(c.next);
        if (batch.toLsn().isAfter(c.committedUpTo)) {
          round.add(new CommitterRound.Member(c.committer, c.position, batch, batchId, files));
        } else {
          out.output(c.committer.alreadyIn(c.position, batch, batchId, files));
        }
        c.position = BatchCommitter.next(c.position, batchId, batch);
        c.next++;
      }
      rounds.commit(round, finalizations, out::output);
      if (outOfSequence != null) {
        throw outOfSequence;
      }
    }
  }

  private static IllegalStateException outOfSequence(DeltaTarget target, ChangeBatch batch, int i) {
    return new IllegalStateException(
        "The read of "
            + target.bronzePath()
            + " emitted batch "
            + batch.sequence()
            + " where batch "
            + i
            + " belongs ("
            + batch.fromLsn()
            + ".."
            + batch.toLsn()
            + "): a batch is missing or repeated, nothing after batch "
            + (i - 1)
            + " is committed");
  }
}
