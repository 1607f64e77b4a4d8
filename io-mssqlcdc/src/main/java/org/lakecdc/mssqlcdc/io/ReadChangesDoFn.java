package org.lakecdc.mssqlcdc.io;

import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.coders.InstantCoder;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.splittabledofn.ManualWatermarkEstimator;
import org.apache.beam.sdk.transforms.splittabledofn.RestrictionTracker;
import org.apache.beam.sdk.transforms.splittabledofn.WatermarkEstimators;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;
import org.apache.beam.sdk.values.Row;
import org.apache.beam.sdk.values.TupleTag;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.joda.time.Instant;
import org.lakecdc.mssqlcdc.client.CaptureInstance;
import org.lakecdc.mssqlcdc.client.CdcClient;
import org.lakecdc.mssqlcdc.client.Commit;
import org.lakecdc.mssqlcdc.client.SplitPoint;
import org.lakecdc.mssqlcdc.lsn.Lsn;
import org.lakecdc.mssqlcdc.lsn.LsnRange;
import org.lakecdc.mssqlcdc.lsn.LsnRangeCoder;
import org.lakecdc.mssqlcdc.lsn.LsnRangeTracker;

/**
 * The splittable {@link DoFn} that reads SQL Server change rows by LSN range.
 *
 * <h3>Element and restriction</h3>
 *
 * The element is the name of the configured capture instance. The restriction is an {@link
 * LsnRange} {@code [from, to)} of commit LSNs: {@code from} is right after the last processed LSN
 * (from {@link StartingLsn}); {@code to} is right after {@code max_lsn} read once when the read
 * starts (bounded form, {@link Bounded}) or the open end {@link Lsn#MAX} (continuous form, {@link
 * Unbounded}).
 *
 * <h3>Splitting</h3>
 *
 * {@code @SplitRestriction} cuts the initial range at each newer capture instance's start LSN S
 * and, with {@code numPartitions > 1}, at commit LSNs that balance change rows (the change table's
 * {@code NTILE} tiles, at least {@code minRowsPerPartition} rows a part). Nothing to read gives no
 * restriction at all. At run time the {@link LsnRangeTracker} only checkpoints, right after the
 * last claimed commit.
 *
 * <h3>Processing</h3>
 *
 * {@link ReadChangesAction} claims the end commit of each batch (at most {@code maxCommitsPerBatch}
 * rows of {@code cdc.lsn_time_mapping}), checks the batch's schema (DDL in its range, a capture
 * instance newer than the schema) and retention before emitting anything, reads the batch's change
 * rows from each capture instance in order, checks retention again, and emits the rows (timestamped
 * with their UTC commit time) and one {@link ChangeBatch}. A failed claim stops the call. The
 * bounded form stops at the end of its range; the continuous form resumes after the poll interval
 * when caught up.
 *
 * <h3>Watermark</h3>
 *
 * A manual estimator set to the UTC commit time of the last claimed commit; idle entries of {@code
 * cdc.lsn_time_mapping} advance it, so quiet tables progress; it never goes backwards.
 *
 * <h3>Size</h3>
 *
 * {@code @GetSize} is the number of change rows in the restriction, counted by the database.
 */
abstract class ReadChangesDoFn extends DoFn<String, Row> {
  final ReadSpec spec;
  final TupleTag<Row> changesTag;
  final TupleTag<ChangeBatch> batchesTag;

  /**
   * Capture instances that passed the switch check in this worker (not serialized: each DoFn
   * instance checks a newer instance once, on its first batch that reads it).
   */
  private transient @Nullable Set<String> checkedInstances;

  ReadChangesDoFn(ReadSpec spec, TupleTag<Row> changesTag, TupleTag<ChangeBatch> batchesTag) {
    this.spec = spec;
    this.changesTag = changesTag;
    this.batchesTag = batchesTag;
  }

  /** Whether the restriction ends at {@code max_lsn} read at the start. */
  abstract boolean bounded();

  @GetInitialRestriction
  public LsnRange initialRestriction(@Element String captureInstance) {
    try (CdcClient client = spec.clientFactory().open()) {
      Lsn lastProcessed = StartPositions.lastProcessed(client, captureInstance, spec.startingLsn());
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
    return LsnRangeCoder.of();
  }

  @SplitRestriction
  public void splitRestriction(
      @Element String captureInstance,
      @Restriction LsnRange range,
      OutputReceiver<LsnRange> receiver) {
    if (range.isEmpty()) {
      return;
    }
    try (CdcClient client = spec.clientFactory().open()) {
      Optional<Lsn> max = client.maxLsn();
      Lsn known = range.isOpen() ? max.orElse(null) : range.lastLsn();
      if (known == null || known.isBefore(range.from())) {
        receiver.output(range);
        return;
      }
      List<CaptureInstance> instances = client.captureInstances(captureInstance);
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
          if (piece[1].equals(known) && range.isOpen()) {
            receiver.output(LsnRange.openFrom(piece[0]));
          } else {
            receiver.output(LsnRange.closed(piece[0], piece[1]));
          }
        }
      }
    }
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
    try (CdcClient client = spec.clientFactory().open()) {
      Lsn last = range.isOpen() ? client.maxLsn().orElse(null) : range.lastLsn();
      if (last == null || last.isBefore(range.from())) {
        return 0;
      }
      long rows = 0;
      for (InstanceRange part :
          RangePlanner.cutAtNewerInstances(
              client.captureInstances(captureInstance), range.from(), last)) {
        for (SplitPoint tile :
            client.splitPoints(part.captureInstance(), part.fromLsn(), part.toLsn(), 1)) {
          rows += tile.rows();
        }
      }
      return rows;
    }
  }

  @GetInitialWatermarkEstimatorState
  public Instant initialWatermark(@Restriction LsnRange range) {
    try (CdcClient client = spec.clientFactory().open()) {
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
    try (CdcClient client = spec.clientFactory().open()) {
      return new ReadChangesAction(spec, client, changesTag, batchesTag, checkedInstances())
          .run(captureInstance, tracker, watermark, receiver);
    }
  }

  private Set<String> checkedInstances() {
    Set<String> checked = checkedInstances;
    if (checked == null) {
      checked = ConcurrentHashMap.newKeySet();
      checkedInstances = checked;
    }
    return checked;
  }

  /** The bounded form: reads up to {@code max_lsn} as read at the start, then finishes. */
  @BoundedPerElement
  static final class Bounded extends ReadChangesDoFn {
    Bounded(ReadSpec spec, TupleTag<Row> changesTag, TupleTag<ChangeBatch> batchesTag) {
      super(spec, changesTag, batchesTag);
    }

    @Override
    boolean bounded() {
      return true;
    }
  }

  /** The continuous form: the end grows with {@code max_lsn}; polls when caught up. */
  @UnboundedPerElement
  static final class Unbounded extends ReadChangesDoFn {
    Unbounded(ReadSpec spec, TupleTag<Row> changesTag, TupleTag<ChangeBatch> batchesTag) {
      super(spec, changesTag, batchesTag);
    }

    @Override
    boolean bounded() {
      return false;
    }
  }
}
