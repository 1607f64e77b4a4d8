package org.lakecdc.cdc.transforms.write;

import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.join.CoGbkResult;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.TupleTag;
import org.lakecdc.cdc.transforms.delta.DeltaTables;
import org.lakecdc.cdc.transforms.position.StreamPosition;
import org.lakecdc.mssqlcdc.client.CdcClient;
import org.lakecdc.mssqlcdc.client.Commit;
import org.lakecdc.mssqlcdc.io.ChangeBatch;
import org.lakecdc.mssqlcdc.lsn.Lsn;

/**
 * The one committer of a target: commits the run's batches in LSN order. Per batch ({@link
 * BatchCommitter}): the bronze commit (only with rows) with transaction id {@code (appId, batch)}
 * and the new position; then the facts row and its event rows in one commit with {@code
 * (appId#facts, batch)} and the position; then the verdict. Data first, verdict last: a crash in
 * between leaves the verdict behind the data, never ahead; the next run repairs it.
 */
final class CommitBatches extends DoFn<KV<String, CoGbkResult>, CommittedBatch> {
  private final DeltaTarget target;
  private final TupleTag<ChangeBatch> batchTag;
  private final TupleTag<BatchFiles> filesTag;
  private final List<String> readColumns;
  private transient DeltaTables tables;

  CommitBatches(
      DeltaTarget target,
      TupleTag<ChangeBatch> batchTag,
      TupleTag<BatchFiles> filesTag,
      List<String> readColumns) {
    this.target = target;
    this.batchTag = batchTag;
    this.filesTag = filesTag;
    this.readColumns = List.copyOf(readColumns);
  }

  @Setup
  public void setup() {
    tables = target.tables();
  }

  @ProcessElement
  public void process(@Element KV<String, CoGbkResult> joined, OutputReceiver<CommittedBatch> out) {
    List<ChangeBatch> batches = WriteChangesToDelta.inLsnOrder(joined.getValue().getAll(batchTag));
    Map<Long, BatchFiles> files = new HashMap<>();
    for (BatchFiles f : joined.getValue().getAll(filesTag)) {
      files.put(f.batchId(), f);
    }
    BatchCommitter committer = new BatchCommitter(target, tables, readColumns);
    Lsn committedUpTo = committer.committedUpTo();
    StreamPosition position = target.start();
    try (CdcClient client = target.clientFactory().open()) {
      for (int i = 0; i < batches.size(); i++) {
        ChangeBatch batch = batches.get(i);
        long batchId = target.start().batchId() + 1 + i;
        out.output(
            committer.commit(client, position, batch, batchId, files.get(batchId), committedUpTo));
        position = BatchCommitter.next(position, batchId, batch);
      }
    }
  }

  /**
   * Commit time of an LSN for the facts' measurements: the last commit at or before it (an LSN such
   * as a capture instance's minimum need not be a commit's own).
   */
  static Optional<Instant> commitTimeAtOrBefore(CdcClient client, Lsn lsn) {
    return client.lastCommitAtOrBefore(lsn).map(Commit::commitTime);
  }
}
