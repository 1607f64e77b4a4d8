package org.lakecdc.transforms.write;

import java.util.List;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.values.KV;
import org.lakecdc.io.mssqlcdc.ChangeBatch;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.transforms.delta.DeltaTables;
import org.lakecdc.transforms.position.StreamPosition;

/**
 * The one committer of a target in the bounded form: commits the run's batches in sequence (= LSN)
 * order. Per batch ({@link BatchCommitter}): the bronze commit (only with rows) with transaction id
 * {@code (appId, batch)} and the new position; then the facts row and its event rows in one commit
 * with {@code (appId#facts, batch)} and the position; then the verdict. Data first, verdict last: a
 * crash in between leaves the verdict behind the data, never ahead; the next run repairs it.
 */
final class CommitBatches
    extends DoFn<KV<String, Iterable<KV<ChangeBatch, BatchFiles>>>, CommittedBatch> {
  private final DeltaTarget target;
  private transient DeltaTables tables;

  CommitBatches(DeltaTarget target) {
    this.target = target;
  }

  @Setup
  public void setup() {
    tables = target.tables();
  }

  @ProcessElement
  public void process(
      @Element KV<String, Iterable<KV<ChangeBatch, BatchFiles>>> all,
      OutputReceiver<CommittedBatch> out) {
    List<KV<ChangeBatch, BatchFiles>> batches = WriteChangesToDelta.inSequence(all.getValue());
    BatchCommitter committer = new BatchCommitter(target, tables);
    Lsn committedUpTo = committer.committedUpTo();
    StreamPosition position = target.start();
    for (int i = 0; i < batches.size(); i++) {
      ChangeBatch batch = batches.get(i).getKey();
      BatchFiles files = batches.get(i).getValue();
      if (batch.sequence() != i) {
        throw new IllegalStateException(
            "The read emitted batch "
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
      long batchId = target.start().batchId() + 1 + i;
      out.output(committer.commit(position, batch, batchId, files, committedUpTo));
      position = BatchCommitter.next(position, batchId, batch);
    }
  }
}
