package org.lakecdc.mssqlcdc.io;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
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
import org.lakecdc.mssqlcdc.client.CaptureInstance;
import org.lakecdc.mssqlcdc.client.CdcClient;
import org.lakecdc.mssqlcdc.client.ChangeQuery;
import org.lakecdc.mssqlcdc.client.ChangeRow;
import org.lakecdc.mssqlcdc.client.CloseableIterator;
import org.lakecdc.mssqlcdc.client.Commit;
import org.lakecdc.mssqlcdc.lsn.Lsn;
import org.lakecdc.mssqlcdc.lsn.LsnRange;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One {@code @ProcessElement} call of {@link ReadChangesDoFn}: drains the restriction in batches.
 *
 * <p>Per batch: pick its end, the n-th commit of {@code cdc.lsn_time_mapping} after the last
 * processed LSN ({@code n = maxCommitsPerBatch}), capped at the read's upper end (the range's last
 * LSN, or {@code max_lsn} in the continuous form); claim it; cut the batch at newer capture
 * instances' start LSNs; run the checks that decide whether the batch may be read at all, before
 * any of its rows is emitted: the DDL check of the batch's range ({@link SchemaGuard#checkDdl}),
 * then per part the retention guard and, for a capture instance the schema does not account for
 * yet, the switch check ({@link SchemaGuard#checkNewInstance}); then for each part stream its
 * change rows out and check retention again; emit the {@link ChangeBatch}; move the watermark to
 * the end commit's time.
 */
final class ReadChangesAction {
  static final String NAMESPACE = "mssqlcdc";

  private static final Logger LOG = LoggerFactory.getLogger(ReadChangesAction.class);

  private final ReadSpec spec;
  private final CdcClient client;
  private final TupleTag<Row> changesTag;
  private final TupleTag<ChangeBatch> batchesTag;
  private final Set<String> checkedInstances;
  private final Counter batches = Metrics.counter(NAMESPACE, "batches_read");
  private final Counter[] rowsByOperation = {
    Metrics.counter(NAMESPACE, "rows_read_snapshot"),
    Metrics.counter(NAMESPACE, "rows_read_delete"),
    Metrics.counter(NAMESPACE, "rows_read_insert"),
    Metrics.counter(NAMESPACE, "rows_read_update_before"),
    Metrics.counter(NAMESPACE, "rows_read_update_after")
  };

  /**
   * @param checkedInstances keys ({@link #instanceKey}) of the capture instances that passed the
   *     switch check in this worker; shared between calls and updated by this one
   */
  ReadChangesAction(
      ReadSpec spec,
      CdcClient client,
      TupleTag<Row> changesTag,
      TupleTag<ChangeBatch> batchesTag,
      Set<String> checkedInstances) {
    this.spec = spec;
    this.client = client;
    this.changesTag = changesTag;
    this.batchesTag = batchesTag;
    this.checkedInstances = checkedInstances;
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
      readBatch(captureInstance, last, end.get(), receiver);
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

  /**
   * Reads the batch {@code (last, end]}: checks first (nothing is emitted when one fails), then the
   * rows of each part, then the {@link ChangeBatch}.
   */
  private void readBatch(
      String captureInstance, Lsn last, Commit end, MultiOutputReceiver receiver) {
    Lsn from = last.increment();
    List<CaptureInstance> instances = client.captureInstances(captureInstance);
    List<InstanceRange> parts = RangePlanner.cutAtNewerInstances(instances, from, end.lsn());
    List<String> readInstances = new ArrayList<>();
    for (InstanceRange part : parts) {
      if (!readInstances.contains(part.captureInstance())) {
        readInstances.add(part.captureInstance());
      }
    }
    // Schema checks first: a batch that fails them reads nothing (BEHAVIOUR.md 3.1 step 6).
    for (String warning : SchemaGuard.checkDdl(client, spec, readInstances, last, end.lsn())) {
      LOG.warn(warning);
    }
    List<String> disabled =
        RangePlanner.disabledInstances(captureInstance, spec.knownInstances(), instances);
    for (int i = 0; i < parts.size(); i++) {
      InstanceRange part = parts.get(i);
      RangePlanner.checkRetention(
          client, part, "before reading", i == 0 ? disabled : List.<String>of());
      checkNewInstance(instances, part, end.lsn());
    }
    Schema schema = spec.schema();
    long rows = 0;
    for (InstanceRange part : parts) {
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

  /**
   * The switch check of the part's capture instance when the schema does not account for it (it was
   * not listed when the pipeline was built) and it has not passed the check in this worker.
   */
  private void checkNewInstance(List<CaptureInstance> instances, InstanceRange part, Lsn batchEnd) {
    CaptureInstance instance =
        instances.stream()
            .filter(i -> i.name().equals(part.captureInstance()))
            .findFirst()
            .orElseThrow();
    boolean known =
        spec.knownInstances().stream().anyMatch(name -> name.equalsIgnoreCase(instance.name()));
    String key = instanceKey(instance);
    if (known || checkedInstances.contains(key)) {
      return;
    }
    List<String> warnings =
        SchemaGuard.checkNewInstance(
            spec, instance, client.capturedColumns(instance.name()), part.fromLsn(), batchEnd);
    for (String warning : warnings) {
      LOG.warn(warning);
    }
    checkedInstances.add(key);
  }

  /** Identifies a capture instance across a disable and re-enable under the same name. */
  static String instanceKey(CaptureInstance instance) {
    return instance.name().toLowerCase(Locale.ROOT)
        + "@"
        + instance.createDate().map(Object::toString).orElse("");
  }
}
