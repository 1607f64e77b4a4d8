package org.lakecdc.transforms.bronze;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.values.KV;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.io.mssqlcdc.read.ChangeBatch;
import org.lakecdc.transforms.delta.DeltaTables;
import org.lakecdc.transforms.position.StreamPosition;

/**
 * The committer of the targets in the bounded form, one key (capture instance) per target: commits
 * each target's batches of the run in sequence (= LSN) order, up to a {@link ChangeBatch#failed}
 * batch, which records the table's failure instead and ends its commits. Per batch ({@link
 * BatchCommitter}): the bronze commit (only with rows) with transaction id {@code (appId, batch)}
 * and the new position; then the facts row and its event rows in one commit with {@code
 * (appId#facts, batch)} and the position; then the verdict. Data first, verdict last: a crash in
 * between leaves the verdict behind the data, never ahead; the next run repairs it.
 */
final class CommitBatches
    extends DoFn<KV<String, Iterable<KV<ChangeBatch, BatchFiles>>>, CommittedBatch> {
  private final Map<String, DeltaTarget> targets;
  private transient Map<String, DeltaTables> tables;

  /** The committer of {@code targets}' batches, by capture instance (the key). */
  CommitBatches(Map<String, DeltaTarget> targets) {
    this.targets = new LinkedHashMap<>(targets);
  }

  @Setup
  public void setup() {
    tables = new HashMap<>();
  }

  /** The capture instance before a batch's log line when there are many tables, else nothing. */
  private String label(String captureInstance) {
    return targets.size() > 1 ? captureInstance + " " : "";
  }

  @ProcessElement
  public void process(
      @Element KV<String, Iterable<KV<ChangeBatch, BatchFiles>>> all,
      OutputReceiver<CommittedBatch> out) {
    DeltaTarget target = targets.get(all.getKey());
    if (target == null) {
      throw new IllegalStateException("Batches of " + all.getKey() + ", which has no target");
    }
    DeltaTables delta = tables.computeIfAbsent(all.getKey(), k -> target.tables());
    List<KV<ChangeBatch, BatchFiles>> batches = WriteChangesToDelta.inSequence(all.getValue());
    BatchCommitter committer = new BatchCommitter(target, delta, label(all.getKey()));
    Lsn committedUpTo = committer.committedUpTo();
    StreamPosition position = target.start();
    for (int i = 0; i < batches.size(); i++) {
      ChangeBatch batch = batches.get(i).getKey();
      BatchFiles files = batches.get(i).getValue();
      if (batch.sequence() != i) {
        throw new IllegalStateException(
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
      if (batch.failed()) {
        // The table stopped here: later batches (of other parts of the read) are not committed.
        out.output(committer.recordFailure(position, batch));
        return;
      }
      long batchId = target.batchId(i);
      out.output(committer.commit(position, batch, batchId, files, committedUpTo));
      position = BatchCommitter.next(position, batchId, batch);
    }
  }
}
