package org.lakecdc.mssqlcdc.io;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.beam.sdk.metrics.Counter;
import org.apache.beam.sdk.metrics.Metrics;
import org.apache.beam.sdk.schemas.Schema;
import org.apache.beam.sdk.transforms.DoFn.MultiOutputReceiver;
import org.apache.beam.sdk.transforms.DoFn.ProcessContinuation;
import org.apache.beam.sdk.transforms.splittabledofn.ManualWatermarkEstimator;
import org.apache.beam.sdk.transforms.splittabledofn.RestrictionTracker;
import org.apache.beam.sdk.values.Row;
import org.apache.beam.sdk.values.TupleTag;
import org.joda.time.Instant;
import org.lakecdc.mssqlcdc.client.CdcClient;
import org.lakecdc.mssqlcdc.client.ChangeQuery;
import org.lakecdc.mssqlcdc.client.ChangeRow;
import org.lakecdc.mssqlcdc.client.CloseableIterator;
import org.lakecdc.mssqlcdc.client.Commit;
import org.lakecdc.mssqlcdc.lsn.Lsn;
import org.lakecdc.mssqlcdc.lsn.LsnRange;

/**
 * One {@code @ProcessElement} call of {@link ReadChangesDoFn}: drains the restriction in batches.
 *
 * <p>Per batch: pick its end, the n-th commit of {@code cdc.lsn_time_mapping} after the last
 * processed LSN ({@code n = maxCommitsPerBatch}), capped at the read's upper end (the range's last
 * LSN, or {@code max_lsn} in the continuous form); claim it; cut the batch at newer capture
 * instances' start LSNs; for each part check retention, stream its change rows out, and check
 * retention again; emit the {@link ChangeBatch}; move the watermark to the end commit's time.
 */
final class ReadChangesAction {
  static final String NAMESPACE = "mssqlcdc";

  private final ReadSpec spec;
  private final CdcClient client;
  private final TupleTag<Row> changesTag;
  private final TupleTag<ChangeBatch> batchesTag;
  private final Counter batches = Metrics.counter(NAMESPACE, "batches_read");
  private final Counter[] rowsByOperation = {
    Metrics.counter(NAMESPACE, "rows_read_snapshot"),
    Metrics.counter(NAMESPACE, "rows_read_delete"),
    Metrics.counter(NAMESPACE, "rows_read_insert"),
    Metrics.counter(NAMESPACE, "rows_read_update_before"),
    Metrics.counter(NAMESPACE, "rows_read_update_after")
  };

  ReadChangesAction(
      ReadSpec spec, CdcClient client, TupleTag<Row> changesTag, TupleTag<ChangeBatch> batchesTag) {
    this.spec = spec;
    this.client = client;
    this.changesTag = changesTag;
    this.batchesTag = batchesTag;
  }

  ProcessContinuation run(
      String captureInstance,
      RestrictionTracker<LsnRange, Lsn> tracker,
      ManualWatermarkEstimator<Instant> watermark,
      MultiOutputReceiver receiver) {
    LsnRange range = tracker.currentRestriction();
    if (range.isEmpty()) {
      return ProcessContinuation.stop();
    }
    Lsn last = range.from().decrement();
    while (true) {
      if (range.isOpen() && spec.stopCondition().shouldStop()) {
        // Asked to stop: claim the rest of the open range (nothing more is read) and end it.
        tracker.tryClaim(Lsn.MAX);
        return ProcessContinuation.stop();
      }
      Optional<Commit> end = nextBatchEnd(range, last);
      if (end.isEmpty()) {
        if (range.isOpen()) {
          return ProcessContinuation.resume().withResumeDelay(spec.pollInterval());
        }
        // Nothing is left before the end of the range: claim its last LSN to finish it.
        if (last.isBefore(range.lastLsn())) {
          tracker.tryClaim(range.lastLsn());
        }
        return ProcessContinuation.stop();
      }
      if (!tracker.tryClaim(end.get().lsn())) {
        return ProcessContinuation.stop();
      }
      readBatch(captureInstance, last.increment(), end.get(), receiver);
      Instant endTime = new Instant(end.get().commitTime().toEpochMilli());
      if (endTime.isAfter(watermark.currentWatermark())) {
        watermark.setWatermark(endTime);
      }
      last = end.get().lsn();
    }
  }

  /** The end commit of the batch after {@code last}, or empty when no commit is left to read. */
  private Optional<Commit> nextBatchEnd(LsnRange range, Lsn last) {
    Lsn upper;
    if (range.isOpen()) {
      Optional<Lsn> max = client.maxLsn();
      if (max.isEmpty()) {
        return Optional.empty();
      }
      upper = max.get();
    } else {
      upper = range.lastLsn();
    }
    if (!upper.isAfter(last)) {
      return Optional.empty();
    }
    Optional<Commit> end =
        spec.maxCommitsPerBatch() > 0
            ? client.nthCommitAfter(last, spec.maxCommitsPerBatch())
            : Optional.empty();
    if (end.isEmpty() || end.get().lsn().isAfter(upper)) {
      end = client.lastCommitAtOrBefore(upper);
    }
    if (end.isEmpty() || !end.get().lsn().isAfter(last)) {
      return Optional.empty();
    }
    return end;
  }

  private void readBatch(
      String captureInstance, Lsn from, Commit end, MultiOutputReceiver receiver) {
    List<InstanceRange> parts =
        RangePlanner.cutAtNewerInstances(client.captureInstances(captureInstance), from, end.lsn());
    Schema schema = spec.schema();
    long rows = 0;
    List<String> readInstances = new ArrayList<>();
    for (InstanceRange part : parts) {
      readInstances.add(part.captureInstance());
      RangePlanner.checkRetention(client, part, "before reading");
      ChangeQuery query =
          new ChangeQuery(
              part.captureInstance(),
              part.fromLsn(),
              part.toLsn(),
              spec.columnNames(),
              spec.includeCommandId());
      try (CloseableIterator<ChangeRow> changes = client.readChanges(query)) {
        while (changes.hasNext()) {
          ChangeRow change = changes.next();
          Row row =
              ChangeRows.toRow(
                  schema, spec.columns(), part.captureInstance(), change, spec.includeCommandId());
          receiver
              .get(changesTag)
              .outputWithTimestamp(row, new Instant(change.commitTime().toEpochMilli()));
          rowsByOperation[change.operation()].inc();
          rows++;
        }
      }
      RangePlanner.checkRetention(client, part, "during the read");
    }
    receiver
        .get(batchesTag)
        .outputWithTimestamp(
            new ChangeBatch(
                captureInstance, from, end.lsn(), end.commitTime(), rows, readInstances),
            new Instant(end.commitTime().toEpochMilli()));
    batches.inc();
  }
}
