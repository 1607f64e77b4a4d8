package org.lakecdc.io.mssqlcdc.read;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.beam.sdk.metrics.Counter;
import org.apache.beam.sdk.metrics.Metrics;
import org.apache.beam.sdk.transforms.DoFn.ProcessContinuation;
import org.apache.beam.sdk.transforms.splittabledofn.ManualWatermarkEstimator;
import org.apache.beam.sdk.transforms.splittabledofn.RestrictionTracker;
import org.apache.beam.sdk.values.Row;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.joda.time.Instant;
import org.lakecdc.io.mssqlcdc.client.CaptureInstance;
import org.lakecdc.io.mssqlcdc.client.CaptureInstanceNotFoundError;
import org.lakecdc.io.mssqlcdc.client.CdcClient;
import org.lakecdc.io.mssqlcdc.client.ChangeQuery;
import org.lakecdc.io.mssqlcdc.client.ChangeRow;
import org.lakecdc.io.mssqlcdc.client.CloseableIterator;
import org.lakecdc.io.mssqlcdc.client.Commit;
import org.lakecdc.io.mssqlcdc.client.DdlChange;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.io.mssqlcdc.lsn.LsnRange;
import org.lakecdc.io.mssqlcdc.schema.CapturedColumn;
import org.lakecdc.io.mssqlcdc.source.SourceSpec;
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
  private static final Logger LOG = LoggerFactory.getLogger(ReadChangesAction.class);

  /** A table's read handing its failure to its committer: {@code org.lakecdc.detail}, log file. */
  private static final Logger DETAIL =
      LoggerFactory.getLogger("org.lakecdc.detail." + ReadChangesAction.class.getSimpleName());

  /** Where a batch goes: its rows first (drained), then the batch itself. */
  interface BatchOutput {
    /**
     * Takes the batch's rows: emits them, or writes them through a sink.
     *
     * @return what the sink wrote, or null when the rows were emitted
     */
    @Nullable Object rows(long sequence, BatchRowsView rows);

    /** Emits the batch, after its rows, with the timestamp of its end commit. */
    void batch(ChangeBatch batch, @Nullable Object written, Instant timestamp);
  }

  /** The rows of a batch, with the commit time of the row returned last. */
  interface BatchRowsView extends Iterator<Row> {
    /** UTC commit time of the row {@link #next} returned last. */
    Instant commitTime();
  }

  /** Per-worker caches of what does not change while a DoFn instance lives. */
  static final class Caches {
    /** Keys ({@link #instanceKey}) of the capture instances that passed the switch check. */
    final Set<String> checkedInstances = ConcurrentHashMap.newKeySet();

    /** Commit time of the last commit at or before an LSN (null: none). */
    final Map<Lsn, java.time.Instant> commitTimes = new LruMap<>(1024);

    /** The read's columns a capture instance does not capture, by {@link #instanceKey}. */
    final Map<String, List<String>> uncaptured = new ConcurrentHashMap<>();

    /**
     * Per capture instance whose read is caught up: when its next poll is due ({@link
     * System#nanoTime}), its resume delay after the last.
     */
    final Map<String, Long> pollDue = new ConcurrentHashMap<>();
  }

  private final ReadSpec spec;
  private final CdcClient client;
  private final BatchOutput output;
  private final boolean isolateFailures;
  private final Counter tablesFailed =
      Metrics.counter(SourceSpec.METRICS_NAMESPACE, "tables_failed");
  private final Set<String> checkedInstances;
  private final Map<Lsn, java.time.Instant> commitTimes;
  private final Map<String, List<String>> uncaptured;
  private final Map<String, Long> pollDue;
  private final Counter batches = Metrics.counter(SourceSpec.METRICS_NAMESPACE, "batches_read");
  private final Counter[] rowsByOperation = {
    Metrics.counter(SourceSpec.METRICS_NAMESPACE, "rows_read_snapshot"),
    Metrics.counter(SourceSpec.METRICS_NAMESPACE, "rows_read_delete"),
    Metrics.counter(SourceSpec.METRICS_NAMESPACE, "rows_read_insert"),
    Metrics.counter(SourceSpec.METRICS_NAMESPACE, "rows_read_update_before"),
    Metrics.counter(SourceSpec.METRICS_NAMESPACE, "rows_read_update_after")
  };

  /**
   * @param caches the DoFn instance's caches, shared between calls and updated by this one
   */
  ReadChangesAction(
      ReadSpec spec, CdcClient client, BatchOutput output, Caches caches, boolean isolateFailures) {
    this.spec = spec;
    this.isolateFailures = isolateFailures;
    this.client = client;
    this.output = output;
    this.checkedInstances = caches.checkedInstances;
    this.commitTimes = caches.commitTimes;
    this.uncaptured = caches.uncaptured;
    this.pollDue = caches.pollDue;
  }

  /**
   * A caught-up read resumed before its resume delay passed waits out the rest of it (in steps of
   * at most a second, so that a stop or an interrupt ends the wait). Beam's Flink runner fires an
   * operator's pending processing-time timers at once, one after the other, when the operator
   * finishes, and a job without Flink checkpoints finishes its operators as soon as the impulse
   * that starts the reads has been emitted: a caught-up read would poll {@code max_lsn} in a loop
   * (a continuous job's TaskManagers used 0.6 and 0.8 of a core each while it waited for changes).
   */
  private void waitOutResumeDelay(String captureInstance) {
    Long due = pollDue.remove(captureInstance);
    if (due == null) {
      return;
    }
    try {
      for (long wait = due - System.nanoTime();
          wait > 0 && !spec.stopCondition().shouldStop();
          wait = due - System.nanoTime()) {
        Thread.sleep(Math.min(wait / 1_000_000L + 1, 1_000L));
      }
    } catch (InterruptedException e) {
      // The runner is cancelling the task: the loop of run() sees the interrupt and ends the read.
      Thread.currentThread().interrupt();
    }
  }

  /**
   * Drains the restriction in batches. With {@code isolateFailures}, a {@link TableFailure} met on
   * the way (before, during or after a batch's read) ends the table's read: the batch that could
   * not be read is emitted as {@link ChangeBatch#failed} (no row, its sequence number), the rest of
   * the restriction is claimed, and nothing more is read for this restriction.
   */
  ProcessContinuation run(
      String captureInstance,
      RestrictionTracker<LsnRange, Lsn> tracker,
      ManualWatermarkEstimator<Instant> watermark) {
    LsnRange range = tracker.currentRestriction();
    if (range.isEmpty()) {
      return ProcessContinuation.stop();
    }
    Lsn last = range.from().decrement();
    long sequence = range.firstBatch();
    if (range.isOpen()) {
      waitOutResumeDelay(captureInstance);
    }
    while (true) {
      Optional<Commit> end = Optional.empty();
      try {
        // Asked to stop, or the runner is cancelling the task (it interrupts the task's thread; on
        // Flink, `flink cancel` otherwise leaves the operator firing the read's poll timers while
        // it finishes, and the task never ends): claim the rest of the open range (nothing more
        // is read) and end it.
        if (range.isOpen()
            && (spec.stopCondition().shouldStop() || Thread.currentThread().isInterrupted())) {
          tracker.tryClaim(Lsn.MAX);
          return ProcessContinuation.stop();
        }
        end = nextBatchEnd(range, last);
        if (end.isEmpty()) {
          if (range.isOpen()) {
            pollDue.put(
                captureInstance, System.nanoTime() + spec.pollInterval().getMillis() * 1_000_000L);
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
        Lsn previousEnd = last;
        if (last.equals(range.from().decrement())) {
          previousEnd = previousBatchEnd(captureInstance, range.from());
        }
        readBatch(captureInstance, last, previousEnd, end.get(), sequence);
      } catch (RuntimeException e) {
        Optional<TableFailure> failure = isolateFailures ? TableFailure.of(e) : Optional.empty();
        if (failure.isEmpty()) {
          throw e;
        }
        // The committer records and reports it: a note for the log file only.
        DETAIL.info(
            "Capture instance {}: nothing after {} is read ({}); its committer records why",
            captureInstance,
            last,
            failure.get().errorClass());
        // The attempted batch's end time; before an end was found, the last processed commit's
        // (the watermark), or the epoch when the read had processed none yet.
        long processedMillis = Math.max(0, watermark.currentWatermark().getMillis());
        java.time.Instant time =
            end.map(Commit::commitTime).orElse(java.time.Instant.ofEpochMilli(processedMillis));
        output.batch(
            ChangeBatch.failed(
                captureInstance,
                last.increment(),
                end.map(Commit::lsn).orElse(last),
                time,
                sequence,
                failure.get()),
            null,
            watermark.currentWatermark());
        tablesFailed.inc();
        // Nothing more of this restriction is read: claiming past its end finishes it.
        tracker.tryClaim(Lsn.MAX);
        return ProcessContinuation.stop();
      }
      sequence++;
      Instant endTime = new Instant(end.get().commitTime().toEpochMilli());
      if (endTime.isAfter(watermark.currentWatermark())) {
        watermark.setWatermark(endTime);
      }
      last = end.get().lsn();
    }
  }

  /** A map that keeps its {@code capacity} most recently used entries. */
  private static final class LruMap<K, V> extends java.util.LinkedHashMap<K, V> {
    private final int capacity;

    LruMap(int capacity) {
      super(16, 0.75f, true);
      this.capacity = capacity;
    }

    @Override
    protected boolean removeEldestEntry(Map.Entry<K, V> eldest) {
      return size() > capacity;
    }
  }

  /**
   * The end of the batch before the first batch of a range starting at {@code from}: the last
   * commit before {@code from} (batches end on commits, and a split part starts right after the
   * previous part's last commit or after a newer capture instance's start), but never before where
   * the read started (the stored position, which need not be a commit: a snapshot's S). DDL is
   * reported from there, so a DDL LSN between two parts belongs to the next batch, once.
   */
  private Lsn previousBatchEnd(String captureInstance, Lsn from) {
    Lsn readStart = spec.startingLsn().lastProcessed(client, captureInstance);
    Lsn before = from.decrement();
    if (!before.isAfter(readStart)) {
      return before;
    }
    Lsn lastCommit = client.lastCommitAtOrBefore(before).map(Commit::lsn).orElse(readStart);
    return Lsn.max(lastCommit, readStart);
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
   * rows of each part through {@link BatchOutput#rows}, then the {@link ChangeBatch} with what was
   * measured.
   */
  private void readBatch(
      String captureInstance, Lsn last, Lsn previousEnd, Commit end, long sequence) {
    Lsn from = last.increment();
    List<CaptureInstance> instances = client.captureInstances(captureInstance);
    List<InstanceRange> parts = RangePlanner.cutAtNewerInstances(instances, from, end.lsn());
    List<String> readInstances = new ArrayList<>();
    for (InstanceRange part : parts) {
      if (!readInstances.contains(part.captureInstance())) {
        readInstances.add(part.captureInstance());
      }
    }
    // Schema checks first: a batch that fails them reads nothing (docs/scenarios.md "Schema
    // change"). DDL
    // is looked for from the previous batch's end, as the batch's facts DDL list is: a split
    // part's first batch also answers for DDL between the previous part's last commit and its
    // own first LSN.
    for (String warning :
        SchemaGuard.checkDdl(client, spec, readInstances, previousEnd, end.lsn())) {
      LOG.warn(warning);
    }
    List<String> disabled =
        RangePlanner.disabledInstances(captureInstance, spec.source().knownInstances(), instances);
    List<SkippedRange> skipped = new ArrayList<>();
    List<InstanceRange> toRead = new ArrayList<>();
    for (int i = 0; i < parts.size(); i++) {
      InstanceRange part = parts.get(i);
      if (spec.onDataLoss() == DataLossPolicy.SKIP) {
        Optional<InstanceRange> held = skipPurged(part, skipped);
        if (held.isEmpty()) {
          continue;
        }
        part = held.get();
      } else {
        RangePlanner.checkRetention(
            client, part, "before reading", i == 0 ? disabled : List.<String>of());
      }
      checkNewInstance(instances, part, end.lsn());
      toRead.add(part);
    }
    BatchRows rows = new BatchRows(toRead, skipped);
    Object written = output.rows(sequence, rows);
    if (rows.hasNext()) {
      throw new IllegalStateException(
          "The sink returned before reading every row of batch "
              + sequence
              + " ("
              + from
              + ".."
              + end.lsn()
              + ")");
    }
    String lastInstance = readInstances.get(readInstances.size() - 1);
    BatchSource source =
        new BatchSource(
            commitTimeAtOrBefore(client.minLsn(lastInstance)),
            client.maxLsn().map(this::commitTimeAtOrBefore).orElse(null),
            client.currentTime().orElse(null),
            rows.readNanos,
            rows.readBytes,
            ddlOfTable(instances, previousEnd, end.lsn()),
            instanceReads(instances, readInstances),
            skipped);
    output.batch(
        new ChangeBatch(
            captureInstance,
            from,
            end.lsn(),
            end.commitTime(),
            rows.count,
            readInstances,
            sequence,
            source),
        written,
        new Instant(end.commitTime().toEpochMilli()));
    batches.inc();
  }

  /**
   * The part of {@code part} CDC still holds, for a read that skips purged changes ({@link
   * DataLossPolicy#SKIP}): when the capture instance's {@code min_lsn} is past the part's first
   * LSN, the gap {@code [from, min_lsn)} is added to {@code skipped} (certain: found before
   * reading) with a warning, and the part reads from {@code min_lsn} on, or not at all when nothing
   * of it is held (docs/behaviour.md §3.8; a batch's boundaries never move, so split parts keep
   * their numbering).
   */
  private Optional<InstanceRange> skipPurged(InstanceRange part, List<SkippedRange> skipped) {
    Lsn min = client.minLsn(part.captureInstance());
    if (!part.fromLsn().isBefore(min)) {
      return Optional.of(part);
    }
    java.time.Instant lostTo = commitTimeAtOrBefore(min);
    skipped.add(belowMinLsn(part, min, lostTo, true, null));
    LOG.warn(
        "{}: change data from {} was purged by CDC cleanup before reading the range {}..{}; the"
            + " capture instance's min_lsn is now {}{}. onDataLoss=skip skips ahead: the changes in"
            + " between are lost, recorded as a data_skipped facts event",
        part.captureInstance(),
        part.fromLsn(),
        part.fromLsn(),
        part.toLsn(),
        min,
        lostTo == null ? "" : " (committed at " + lostTo + ")");
    if (min.isAfter(part.toLsn())) {
      return Optional.empty();
    }
    return Optional.of(new InstanceRange(part.captureInstance(), min, part.toLsn()));
  }

  /**
   * The retention guard after a part was read ("during the read"): fails with {@link
   * org.lakecdc.io.mssqlcdc.client.DataLossError}, or, for a read that skips purged changes, adds a
   * possible gap to {@code skipped} with a warning (cleanup moved {@code min_lsn} past the part's
   * first LSN while it was read, so changes below it may be missing; docs/behaviour.md §4.5).
   */
  private void checkAfterRead(InstanceRange part, List<SkippedRange> skipped) {
    if (spec.onDataLoss() != DataLossPolicy.SKIP) {
      RangePlanner.checkRetention(client, part, "during the read");
      return;
    }
    Lsn min = client.minLsn(part.captureInstance());
    if (!part.fromLsn().isBefore(min)) {
      return;
    }
    String reason =
        "CDC cleanup moved min_lsn past the start of the range "
            + part.fromLsn()
            + ".."
            + part.toLsn()
            + " while it was read: its changes below min_lsn may be missing";
    skipped.add(belowMinLsn(part, min, commitTimeAtOrBefore(min), false, reason));
    LOG.warn(
        "{}: onDataLoss=skip: {}; changes from {} up to min_lsn {} are recorded as a possible"
            + " data_skipped facts event",
        part.captureInstance(),
        reason,
        part.fromLsn(),
        min);
  }

  /**
   * The changes of {@code part} from its first LSN up to {@code min} (the capture instance's {@code
   * min_lsn}, exclusive) as a skipped range; lost from the commit time just before the part.
   *
   * @param lostTo the commit time at or before {@code min}, or null when none is known
   * @param certain true when the gap was found before the read, false for one found after it
   * @param reason why the gap may exist (a possible gap), or null
   */
  private SkippedRange belowMinLsn(
      InstanceRange part,
      Lsn min,
      java.time.@Nullable Instant lostTo,
      boolean certain,
      @Nullable String reason) {
    return new SkippedRange(
        part.captureInstance(),
        part.fromLsn(),
        min,
        commitTimeAtOrBefore(part.fromLsn().decrement()),
        lostTo,
        certain,
        reason);
  }

  /**
   * The change rows of a batch's parts in read order, read lazily: each part's query is opened when
   * the previous one is drained, and the retention guard runs again after each part ("during the
   * read"); the time spent reading and the size read are measured.
   */
  private final class BatchRows implements BatchRowsView {
    private final List<InstanceRange> parts;
    private final List<SkippedRange> skipped;
    private int part = -1;
    private @Nullable CloseableIterator<ChangeRow> changes;
    private @Nullable Instant commitTime;
    long count;
    long readNanos;
    long readBytes;

    BatchRows(List<InstanceRange> parts, List<SkippedRange> skipped) {
      this.parts = parts;
      this.skipped = skipped;
    }

    @Override
    public boolean hasNext() {
      long started = System.nanoTime();
      try {
        while (changes == null || !changes.hasNext()) {
          if (changes != null) {
            changes.close();
            changes = null;
            checkAfterRead(parts.get(part), skipped);
          }
          if (part + 1 >= parts.size()) {
            return false;
          }
          part++;
          InstanceRange next = parts.get(part);
          changes =
              client.readChanges(
                  new ChangeQuery(
                      next.captureInstance(),
                      next.fromLsn(),
                      next.toLsn(),
                      spec.source().columnNames(),
                      spec.source().includeCommandId()));
        }
        return true;
      } catch (RuntimeException e) {
        closeQuietly();
        throw e;
      } finally {
        readNanos += System.nanoTime() - started;
      }
    }

    @Override
    public Row next() {
      if (!hasNext()) {
        throw new NoSuchElementException();
      }
      long started = System.nanoTime();
      ChangeRow change = changes.next();
      readNanos += System.nanoTime() - started;
      commitTime = new Instant(change.commitTime().toEpochMilli());
      rowsByOperation[change.operation()].inc();
      count++;
      readBytes += approximateBytes(change);
      return spec.source().changeRow(parts.get(part).captureInstance(), change);
    }

    @Override
    public Instant commitTime() {
      return commitTime;
    }

    private void closeQuietly() {
      if (changes != null) {
        try {
          changes.close();
        } catch (RuntimeException ignored) {
          // The read already failed; that failure is the one to report.
        }
        changes = null;
      }
    }
  }

  /** Commit time of an LSN: the last commit at or before it (cached; commit times never change). */
  private java.time.@Nullable Instant commitTimeAtOrBefore(Lsn lsn) {
    return commitTimes.computeIfAbsent(
        lsn, l -> client.lastCommitAtOrBefore(l).map(Commit::commitTime).orElse(null));
  }

  /**
   * DDL on the table after {@code previousEnd} up to {@code end}: {@code
   * sys.sp_cdc_get_ddl_history} of each of the table's capture instances, one per LSN (both
   * instances may record a statement), in LSN order (docs/scenarios.md "Schema change"). Measured
   * from the previous end, not from the batch's first LSN: a DDL LSN between two parts of a read
   * belongs to the next batch.
   */
  private List<BatchSource.Ddl> ddlOfTable(
      List<CaptureInstance> instances, Lsn previousEnd, Lsn end) {
    TreeMap<Lsn, BatchSource.Ddl> byLsn = new TreeMap<>();
    for (CaptureInstance each : instances) {
      for (DdlChange ddl : client.ddlHistory(each.name(), previousEnd, end)) {
        byLsn.putIfAbsent(
            ddl.lsn(),
            new BatchSource.Ddl(ddl.lsn(), ddl.commitTime().orElse(null), ddl.command()));
      }
    }
    return new ArrayList<>(byLsn.values());
  }

  /** What the batch read of each of its capture instances: start LSN and uncaptured columns. */
  private List<BatchSource.InstanceRead> instanceReads(
      List<CaptureInstance> instances, List<String> readInstances) {
    List<BatchSource.InstanceRead> reads = new ArrayList<>();
    for (String name : readInstances) {
      CaptureInstance instance =
          instances.stream().filter(i -> i.name().equals(name)).findFirst().orElseThrow();
      Lsn start = instance.startLsn().orElse(null);
      List<String> notCaptured =
          uncaptured.computeIfAbsent(instanceKey(instance), k -> notCaptured(name));
      reads.add(
          new BatchSource.InstanceRead(
              name, start, start == null ? null : commitTimeAtOrBefore(start), notCaptured));
    }
    return reads;
  }

  /** The read's columns the capture instance does not capture, in the read's order. */
  private List<String> notCaptured(String instance) {
    Set<String> captured = new HashSet<>();
    try {
      for (CapturedColumn column : client.capturedColumns(instance)) {
        captured.add(column.name().toLowerCase(Locale.ROOT));
      }
    } catch (CaptureInstanceNotFoundError e) {
      return List.of();
    }
    List<String> lost = new ArrayList<>();
    for (String column : spec.source().columnNames()) {
      if (!captured.contains(column.toLowerCase(Locale.ROOT))) {
        lost.add(column);
      }
    }
    return lost;
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
        spec.source().knownInstances().stream()
            .anyMatch(name -> name.equalsIgnoreCase(instance.name()));
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

  /**
   * The approximate size of a change row as read, in bytes ({@link BatchSource#readBytes()}): per
   * value its length in characters (text), its length (binary), 16 (decimals) or 8 (numbers, dates,
   * times, anything else); NULL counts 0. The metadata columns count 10 ({@code __$start_lsn}) + 10
   * ({@code __$seqval}) + 4 + 4 + 8.
   */
  private static long approximateBytes(ChangeRow change) {
    long bytes = 36;
    for (Object value : change.values()) {
      if (value == null) {
        continue;
      }
      if (value instanceof String) {
        bytes += ((String) value).length();
      } else if (value instanceof byte[]) {
        bytes += ((byte[]) value).length;
      } else if (value instanceof java.math.BigDecimal) {
        bytes += 16;
      } else {
        bytes += 8;
      }
    }
    return bytes;
  }
}
