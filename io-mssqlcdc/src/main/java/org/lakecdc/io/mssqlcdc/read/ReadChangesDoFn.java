package org.lakecdc.io.mssqlcdc.read;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.coders.InstantCoder;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.splittabledofn.ManualWatermarkEstimator;
import org.apache.beam.sdk.transforms.splittabledofn.RestrictionTracker;
import org.apache.beam.sdk.transforms.splittabledofn.WatermarkEstimators;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.Row;
import org.apache.beam.sdk.values.TupleTag;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.joda.time.Instant;
import org.lakecdc.io.mssqlcdc.client.CaptureInstance;
import org.lakecdc.io.mssqlcdc.client.CdcClient;
import org.lakecdc.io.mssqlcdc.client.Commit;
import org.lakecdc.io.mssqlcdc.client.SplitPoint;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.io.mssqlcdc.lsn.LsnRange;
import org.lakecdc.io.mssqlcdc.lsn.LsnRangeTracker;
import org.lakecdc.io.mssqlcdc.source.RowSink;
import org.lakecdc.io.mssqlcdc.source.WorkerClient;

/**
 * The splittable {@link DoFn} that reads SQL Server change rows by LSN range.
 *
 * <h2>Element and restriction</h2>
 *
 * The element is the name of the configured capture instance. The restriction is an {@link
 * LsnRange} {@code [from, to)} of commit LSNs: {@code from} is right after the last processed LSN
 * (from {@link StartingLsn}); {@code to} is right after {@code max_lsn} read once when the read
 * starts (bounded form, {@link Bounded}) or the open end {@link Lsn#MAX} (continuous form, {@link
 * Unbounded}).
 *
 * <h2>Splitting</h2>
 *
 * {@code @SplitRestriction} cuts the initial range at each newer capture instance's start LSN S
 * and, with {@code numPartitions > 1}, at commit LSNs that balance change rows (the change table's
 * {@code NTILE} tiles, at least {@code minRowsPerPartition} rows a part). Nothing to read gives no
 * restriction at all. At run time the {@link LsnRangeTracker} only checkpoints, right after the
 * last claimed commit.
 *
 * <h2>Processing</h2>
 *
 * {@link ReadChangesAction} claims the end commit of each batch (at most {@code maxCommitsPerBatch}
 * rows of {@code cdc.lsn_time_mapping}), checks the batch's schema (DDL in its range, a capture
 * instance newer than the schema) and retention before emitting anything, reads the batch's change
 * rows from each capture instance in order, checks retention again, and emits the rows (timestamped
 * with their UTC commit time) and one {@link ChangeBatch}. A failed claim stops the call. The
 * bounded form stops at the end of its range; the continuous form resumes after the poll interval
 * when caught up.
 *
 * <h2>Watermark</h2>
 *
 * A manual estimator set to the UTC commit time of the last claimed commit; idle entries of {@code
 * cdc.lsn_time_mapping} advance it, so quiet tables progress; it never goes backwards.
 *
 * <h2>Size</h2>
 *
 * {@code @GetSize} is the number of change rows in the restriction, as the client estimates it
 * cheaply ({@link CdcClient#estimatedChangeRows}: an index range count, no NTILE).
 */
abstract class ReadChangesDoFn<OutputT> extends DoFn<String, OutputT> {
  /** The read of each capture instance (the element), by its configured name. */
  final Map<String, ReadSpec> specs;

  /** With sinks: the tag of the written batches (the main output); null when rows are emitted. */
  final @Nullable TupleTag<KV<ChangeBatch, Object>> writtenTag;

  /**
   * Per capture instance, what writes each batch's rows in this stage; null when rows are emitted.
   */
  final @Nullable Map<String, RowSink<Object>> sinks;

  /**
   * Whether a {@link TableFailure} ends the element's read with a {@link ChangeBatch#failed} batch
   * instead of failing the pipeline ({@code MssqlCdcIO.readAll()}).
   */
  final boolean isolateFailures;

  /** The worker's client ({@link WorkerClient}), shared by every capture instance read. */
  private final WorkerClient client;

  /** What this DoFn instance keeps between calls, per capture instance (not serialized). */
  private transient @Nullable Map<String, ReadChangesAction.Caches> caches;

  /**
   * What a reader reads and where it writes: the reads of its capture instances (one client factory
   * for all); with sinks (one per capture instance), each batch's rows written through its table's
   * sink and {@code (batch, result)} emitted under {@code writtenTag}, else the rows emitted under
   * {@link ReadSpec#CHANGES} and the batches under {@link ReadSpec#BATCHES}; whether a table's own
   * failure ends only its read.
   */
  record Wiring(
      List<ReadSpec> specs,
      @Nullable TupleTag<KV<ChangeBatch, Object>> writtenTag,
      @Nullable Map<String, RowSink<Object>> sinks,
      boolean isolateFailures) {}

  /** A reader wired as {@code wiring} says. */
  ReadChangesDoFn(Wiring wiring) {
    Map<String, ReadSpec> byName = new LinkedHashMap<>();
    for (ReadSpec spec : wiring.specs()) {
      if (byName.put(spec.source().captureInstance(), spec) != null) {
        throw new IllegalArgumentException(
            "Capture instance "
                + spec.source().captureInstance()
                + " is read twice in one readAll()");
      }
    }
    this.specs = byName;
    this.client = new WorkerClient(wiring.specs().get(0).source().clientFactory());
    this.writtenTag = wiring.writtenTag();
    this.sinks = wiring.sinks() == null ? null : new LinkedHashMap<>(wiring.sinks());
    this.isolateFailures = wiring.isolateFailures();
  }

  /** The read of {@code captureInstance}, an element of this DoFn. */
  ReadSpec spec(String captureInstance) {
    ReadSpec spec = specs.get(captureInstance);
    if (spec == null) {
      throw new IllegalArgumentException(
          "Capture instance " + captureInstance + " is not one of this read's " + specs.keySet());
    }
    return spec;
  }

  @Setup
  public void setup() {
    if (sinks != null) {
      sinks.values().forEach(RowSink::setup);
    }
  }

  @Teardown
  public void teardown() {
    try {
      client.close();
    } finally {
      if (sinks != null) {
        sinks.values().forEach(RowSink::teardown);
      }
    }
  }

  /**
   * The reader {@code wiring} describes, in the bounded or the continuous form.
   *
   * @param continuous the continuous form ({@link Unbounded}) rather than the bounded one
   */
  static <OutputT> ReadChangesDoFn<OutputT> of(boolean continuous, Wiring wiring) {
    return continuous ? new Unbounded<>(wiring) : new Bounded<>(wiring);
  }

  /** The reader of the one capture instance of {@code spec}, emitting rows and batches. */
  static ReadChangesDoFn<Row> emitting(boolean continuous, ReadSpec spec) {
    return of(continuous, new Wiring(List.of(spec), null, null, false));
  }

  /** Whether the restriction ends at {@code max_lsn} read at the start. */
  abstract boolean bounded();

  @GetInitialRestriction
  public LsnRange initialRestriction(@Element String captureInstance) {
    {
      CdcClient client = this.client.get();
      Lsn lastProcessed =
          spec(captureInstance).startingLsn().lastProcessed(client, captureInstance);
      Lsn from = lastProcessed.increment();
      if (!bounded()) {
        return LsnRange.openFrom(from);
      }
      Optional<Lsn> max = client.maxLsn();
      if (max.isEmpty() || max.get().isBefore(from)) {
        return new LsnRange(from, from);
      }
      return LsnRange.closed(from, max.get());
    }
  }

  @GetRestrictionCoder
  public Coder<LsnRange> restrictionCoder() {
    return LsnRange.coder();
  }

  @SplitRestriction
  public void splitRestriction(
      @Element String captureInstance,
      @Restriction LsnRange range,
      OutputReceiver<LsnRange> receiver) {
    if (range.isEmpty()) {
      return;
    }
    try {
      split(captureInstance, range, receiver);
    } catch (RuntimeException e) {
      if (!isolateFailures || TableFailure.of(e).isEmpty()) {
        throw e;
      }
      // The table's read reports the failure when it meets it (processElement), whole.
      receiver.output(range);
    }
  }

  private void split(String captureInstance, LsnRange range, OutputReceiver<LsnRange> receiver) {
    ReadSpec spec = spec(captureInstance);
    {
      CdcClient client = this.client.get();
      Optional<Lsn> max = client.maxLsn();
      Lsn known = range.isOpen() ? max.orElse(null) : range.lastLsn();
      if (known == null || known.isBefore(range.from())) {
        receiver.output(range);
        return;
      }
      List<CaptureInstance> instances = client.captureInstances(captureInstance);
      List<LsnRange> all = new ArrayList<>();
      for (InstanceRange part : RangePlanner.cutAtNewerInstances(instances, range.from(), known)) {
        List<Lsn[]> pieces;
        if (spec.numPartitions() > 1) {
          List<SplitPoint> tiles =
              client.splitPoints(
                  part.captureInstance(), part.fromLsn(), part.toLsn(), spec.numPartitions());
          pieces =
              RangePlanner.balanceParts(
                  tiles, part.fromLsn(), part.toLsn(), spec.minRowsPerPartition());
        } else {
          pieces = List.<Lsn[]>of(new Lsn[] {part.fromLsn(), part.toLsn()});
        }
        for (Lsn[] piece : pieces) {
          LsnRange split =
              piece[1].equals(known) && range.isOpen()
                  ? LsnRange.openFrom(piece[0])
                  : LsnRange.closed(piece[0], piece[1]);
          all.add(split);
        }
      }
      // Number each part's batches after the batches of the parts before it (one per commit, or
      // one per part without a commit limit), so the sink sees one gapless sequence.
      long firstBatch = range.firstBatch();
      for (int i = 0; i < all.size(); i++) {
        LsnRange split = all.get(i);
        receiver.output(split.withFirstBatch(firstBatch));
        if (i + 1 < all.size()) {
          firstBatch += batchesIn(client, split, spec);
        }
      }
    }
  }

  /** The batches a read of the closed range {@code split} emits. */
  private static long batchesIn(CdcClient client, LsnRange split, ReadSpec spec) {
    long commits = client.commitCount(split.from().decrement(), split.lastLsn());
    int perBatch = spec.maxCommitsPerBatch();
    if (perBatch <= 0) {
      return commits > 0 ? 1 : 0;
    }
    return (commits + perBatch - 1) / perBatch;
  }

  @NewTracker
  public LsnRangeTracker newTracker(@Restriction LsnRange range) {
    return new LsnRangeTracker(range);
  }

  @GetSize
  public double size(@Element String captureInstance, @Restriction LsnRange range) {
    if (range.isEmpty()) {
      return 0;
    }
    try {
      return estimatedRows(captureInstance, range);
    } catch (RuntimeException e) {
      if (!isolateFailures || TableFailure.of(e).isEmpty()) {
        throw e;
      }
      return 0;
    }
  }

  private double estimatedRows(String captureInstance, LsnRange range) {
    {
      CdcClient client = this.client.get();
      Lsn last = range.isOpen() ? client.maxLsn().orElse(null) : range.lastLsn();
      if (last == null || last.isBefore(range.from())) {
        return 0;
      }
      long rows = 0;
      for (InstanceRange part :
          RangePlanner.cutAtNewerInstances(
              client.captureInstances(captureInstance), range.from(), last)) {
        rows += client.estimatedChangeRows(part.captureInstance(), part.fromLsn(), part.toLsn());
      }
      return rows;
    }
  }

  @GetInitialWatermarkEstimatorState
  public Instant initialWatermark(@Restriction LsnRange range) {
    {
      CdcClient client = this.client.get();
      return client
          .lastCommitAtOrBefore(range.from().decrement())
          .map(Commit::commitTime)
          .map(t -> new Instant(t.toEpochMilli()))
          .orElse(BoundedWindow.TIMESTAMP_MIN_VALUE);
    }
  }

  @GetWatermarkEstimatorStateCoder
  public Coder<Instant> watermarkStateCoder() {
    return InstantCoder.of();
  }

  @NewWatermarkEstimator
  public WatermarkEstimators.Manual newWatermarkEstimator(@WatermarkEstimatorState Instant state) {
    return new WatermarkEstimators.Manual(state);
  }

  @ProcessElement
  public ProcessContinuation processElement(
      @Element String captureInstance,
      RestrictionTracker<LsnRange, Lsn> tracker,
      ManualWatermarkEstimator<Instant> watermark,
      MultiOutputReceiver receiver) {
    if (caches == null) {
      caches = new java.util.HashMap<>();
    }
    ReadChangesAction.Caches cache =
        caches.computeIfAbsent(captureInstance, ci -> new ReadChangesAction.Caches());
    try {
      return new ReadChangesAction(
              spec(captureInstance),
              client.get(),
              output(receiver, captureInstance),
              cache,
              isolateFailures)
          .run(captureInstance, tracker, watermark);
    } catch (RuntimeException e) {
      client.discardAfter(e);
      throw e;
    }
  }

  private ReadChangesAction.BatchOutput output(
      MultiOutputReceiver receiver, String captureInstance) {
    if (sinks == null) {
      return new ReadChangesAction.BatchOutput() {
        @Override
        public @Nullable Object rows(long sequence, ReadChangesAction.BatchRowsView rows) {
          OutputReceiver<Row> out = receiver.get(ReadSpec.CHANGES);
          while (rows.hasNext()) {
            Row row = rows.next();
            out.outputWithTimestamp(row, rows.commitTime());
          }
          return null;
        }

        @Override
        public void batch(ChangeBatch batch, @Nullable Object written, Instant timestamp) {
          receiver.get(ReadSpec.BATCHES).outputWithTimestamp(batch, timestamp);
        }
      };
    }
    RowSink<Object> rowSink = sinks.get(captureInstance);
    TupleTag<KV<ChangeBatch, Object>> tag = writtenTag;
    return new ReadChangesAction.BatchOutput() {
      @Override
      public Object rows(long sequence, ReadChangesAction.BatchRowsView rows) {
        return rowSink.write(sequence, rows);
      }

      @Override
      public void batch(ChangeBatch batch, @Nullable Object written, Instant timestamp) {
        receiver.get(tag).outputWithTimestamp(KV.of(batch, written), timestamp);
      }
    };
  }

  /** The bounded form: reads up to {@code max_lsn} as read at the start, then finishes. */
  @BoundedPerElement
  static final class Bounded<OutputT> extends ReadChangesDoFn<OutputT> {
    Bounded(Wiring wiring) {
      super(wiring);
    }

    @Override
    boolean bounded() {
      return true;
    }
  }

  /** The continuous form: the end grows with {@code max_lsn}; polls when caught up. */
  @UnboundedPerElement
  static final class Unbounded<OutputT> extends ReadChangesDoFn<OutputT> {
    Unbounded(Wiring wiring) {
      super(wiring);
    }

    @Override
    boolean bounded() {
      return false;
    }
  }
}
