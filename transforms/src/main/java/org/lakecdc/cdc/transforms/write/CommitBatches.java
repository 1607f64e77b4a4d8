package org.lakecdc.cdc.transforms.write;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.beam.sdk.metrics.Counter;
import org.apache.beam.sdk.metrics.Distribution;
import org.apache.beam.sdk.metrics.Metrics;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.join.CoGbkResult;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.Row;
import org.apache.beam.sdk.values.TupleTag;
import org.lakecdc.cdc.transforms.delta.CommitResult;
import org.lakecdc.cdc.transforms.delta.DataFileAction;
import org.lakecdc.cdc.transforms.delta.DeltaTables;
import org.lakecdc.cdc.transforms.facts.FactsTable;
import org.lakecdc.cdc.transforms.finalization.Finalization;
import org.lakecdc.cdc.transforms.position.StreamPosition;
import org.lakecdc.mssqlcdc.client.CdcClient;
import org.lakecdc.mssqlcdc.client.Commit;
import org.lakecdc.mssqlcdc.io.ChangeBatch;
import org.lakecdc.mssqlcdc.lsn.Lsn;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one committer of a target: commits the run's batches in LSN order. Per batch: the bronze
 * commit (only with rows) with transaction id {@code (appId, batch)} and the new position; then the
 * facts row and its event rows in one commit with {@code (appId#facts, batch)} and the position;
 * then the verdict. Data first, verdict last: a crash in between leaves the verdict behind the
 * data, never ahead; the next run repairs it.
 */
final class CommitBatches extends DoFn<KV<String, CoGbkResult>, CommittedBatch> {
  private static final Logger LOG = LoggerFactory.getLogger(CommitBatches.class);
  private static final String NAMESPACE = "lakecdc";

  private final DeltaTarget target;
  private final TupleTag<ChangeBatch> batchTag;
  private final TupleTag<BatchFiles> filesTag;
  private final Counter batchesCommitted = Metrics.counter(NAMESPACE, "batches_committed");
  private final Counter bytesWritten = Metrics.counter(NAMESPACE, "bytes_written");
  private final Distribution captureLag = Metrics.distribution(NAMESPACE, "capture_lag_seconds");
  private transient DeltaTables tables;

  CommitBatches(DeltaTarget target, TupleTag<ChangeBatch> batchTag, TupleTag<BatchFiles> filesTag) {
    this.target = target;
    this.batchTag = batchTag;
    this.filesTag = filesTag;
  }

  @Setup
  public void setup() {
    tables = DeltaTables.create();
  }

  @ProcessElement
  public void process(@Element KV<String, CoGbkResult> joined, OutputReceiver<CommittedBatch> out) {
    List<ChangeBatch> batches = WriteChangesToDelta.inLsnOrder(joined.getValue().getAll(batchTag));
    Map<Long, BatchFiles> files = new HashMap<>();
    for (BatchFiles f : joined.getValue().getAll(filesTag)) {
      files.put(f.batchId(), f);
    }
    Finalization finalization = new Finalization(tables, target.controlPath(), Clock.systemUTC());
    Lsn committedUpTo = committedUpTo();
    StreamPosition position = target.start();
    try (CdcClient client = target.clientFactory().open()) {
      for (int i = 0; i < batches.size(); i++) {
        ChangeBatch batch = batches.get(i);
        long batchId = target.start().batchId() + 1 + i;
        BatchFiles batchFiles = files.get(batchId);
        BatchStats stats = batchFiles == null ? BatchStats.empty(batchId) : batchFiles.stats();
        String lastInstance = batch.readInstances().get(batch.readInstances().size() - 1);
        StreamPosition next =
            position.next(batchId, batch.toLsn(), batch.toCommitTime(), lastInstance);
        if (!batch.toLsn().isAfter(committedUpTo)) {
          LOG.info(
              "Batch {} ({}..{}) is already in {}: skipped",
              batchId,
              batch.fromLsn(),
              batch.toLsn(),
              target.bronzePath());
          out.output(
              new CommittedBatch(
                  batchId,
                  stats,
                  batch.toLsn().toString(),
                  batch.toCommitTime(),
                  -1,
                  true,
                  finalization.verdict(target.bronzePath()).orElse(null),
                  0));
          position = next;
          continue;
        }
        Instant startedAt = Instant.now();
        long bronzeVersion = -1;
        long bytes = 0;
        boolean skipped = false;
        if (stats.rows() > 0) {
          List<DataFileAction> actions = batchFiles.files();
          target.crashIf(CrashPoint.AFTER_DATA_FILES, batchId);
          CommitResult result =
              tables.commit(
                  target.bronzePath(),
                  actions,
                  target.appId(),
                  batchId,
                  Map.of(
                      StreamPosition.BRONZE_DOMAIN,
                      next.toJson(),
                      BatchStats.BRONZE_DOMAIN,
                      stats.toJson(batch)));
          skipped = !result.committed();
          bronzeVersion = result.committed() ? result.version() : -1;
          bytes = actions.stream().mapToLong(DataFileAction::sizeBytes).sum();
        }
        Instant bronzeDone = Instant.now();
        target.crashIf(CrashPoint.AFTER_BRONZE_COMMIT, batchId);
        List<Row> facts =
            BatchFacts.rows(
                target,
                client,
                position,
                batch,
                stats,
                startedAt,
                Duration.between(startedAt, bronzeDone),
                Clock.systemUTC());
        tables.append(
            target.factsPath(),
            FactsTable.SCHEMA,
            facts,
            target.factsAppId(),
            batchId,
            Map.of(StreamPosition.factsDomain(target.appId()), next.toJson()));
        target.crashIf(CrashPoint.AFTER_FACTS_COMMIT, batchId);
        LocalDateTime verdict =
            finalization.advance(
                target.bronzePath(), batch.toLsn(), batch.toCommitTime(), target.granularity());
        LOG.info(
            "batch {}: {} rows ({} inserts, {} updates, {} deletes) up to {} committed at {};"
                + " bronze version {}, finalized_until {}",
            batchId,
            stats.rows(),
            stats.inserts(),
            stats.updates(),
            stats.deletes(),
            batch.toLsn(),
            batch.toCommitTime(),
            bronzeVersion < 0 ? "unchanged" : bronzeVersion,
            verdict);
        batchesCommitted.inc();
        bytesWritten.inc(bytes);
        BatchFacts.captureLagSeconds(facts.get(0))
            .ifPresent(lag -> captureLag.update(Math.round(lag)));
        out.output(
            new CommittedBatch(
                batchId,
                stats,
                batch.toLsn().toString(),
                batch.toCommitTime(),
                bronzeVersion,
                skipped,
                verdict,
                bytes));
        position = next;
      }
    }
  }

  /** The end LSN the target's tables already hold (the later of bronze's and facts' positions). */
  private Lsn committedUpTo() {
    Lsn upTo = target.start().endLsn();
    Optional<StreamPosition> bronze =
        StreamPosition.fromJson(
            tables.domainMetadata(target.bronzePath(), StreamPosition.BRONZE_DOMAIN));
    Optional<StreamPosition> facts =
        StreamPosition.fromJson(
            tables.domainMetadata(target.factsPath(), StreamPosition.factsDomain(target.appId())));
    for (Optional<StreamPosition> p : List.of(bronze, facts)) {
      if (p.isPresent() && p.get().appId().equals(target.appId())) {
        upTo = Lsn.max(upTo, p.get().endLsn());
      }
    }
    return upTo;
  }

  /**
   * Commit time of an LSN for the facts' measurements: the last commit at or before it (an LSN such
   * as a capture instance's minimum need not be a commit's own).
   */
  static Optional<Instant> commitTimeAtOrBefore(CdcClient client, Lsn lsn) {
    return client.lastCommitAtOrBefore(lsn).map(Commit::commitTime);
  }
}
