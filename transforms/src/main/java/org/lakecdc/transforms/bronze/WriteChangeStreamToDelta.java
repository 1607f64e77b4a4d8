package org.lakecdc.transforms.bronze;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.beam.sdk.coders.DelegateCoder;
import org.apache.beam.sdk.coders.KvCoder;
import org.apache.beam.sdk.coders.NullableCoder;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.schemas.Schema;
import org.apache.beam.sdk.state.BagState;
import org.apache.beam.sdk.state.StateSpec;
import org.apache.beam.sdk.state.StateSpecs;
import org.apache.beam.sdk.state.ValueState;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.PTransform;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PBegin;
import org.apache.beam.sdk.values.PCollection;
import org.lakecdc.io.mssqlcdc.MssqlCdcIO;
import org.lakecdc.io.mssqlcdc.read.ChangeBatch;
import org.lakecdc.transforms.position.StreamPosition;

/**
 * Reads change batches with the continuous form of {@code MssqlCdcIO.read()} and writes them to
 * bronze, facts and the verdict, exactly once, batch by batch as they arrive: the continuous
 * counterpart of {@link WriteChangesToDelta}.
 *
 * <pre>
 * read by LSN range ── each batch's rows written to bronze data files in the reading stage
 *   ── (batch, files) ── key by target ── Commit each batch once it is the next in sequence
 *   (stateful, one key per target)
 * </pre>
 *
 * <p>No window, trigger or watermark decides when a batch is committed: the sequence does. The
 * reader numbers its batches 0, 1, 2, ... in LSN order with no gap ({@link
 * ChangeBatch#sequence()}), so the one committer of the target commits batch k as soon as batches
 * 0..k-1 are committed, and keeps a batch that arrives early (from another part of the read) until
 * then. The state holds only batch descriptions (file actions, counts, measurements), never rows: a
 * few per batch in flight.
 *
 * <p>Runs on runners with stateful processing in the global window in streaming (Direct, Flink);
 * the Spark runner runs the job's bounded form instead.
 */
public final class WriteChangeStreamToDelta
    extends PTransform<PBegin, PCollection<CommittedBatch>> {
  private final List<TableWrite> tables;
  private final boolean isolate;

  private WriteChangeStreamToDelta(List<TableWrite> tables, boolean isolate) {
    this.tables = List.copyOf(tables);
    this.isolate = isolate;
  }

  /**
   * Reads with {@code read} (continuous form) and writes to {@code target}; {@code changeSchema} is
   * the read's output schema (the tables must exist, as for {@link WriteChangesToDelta#from}).
   */
  public static WriteChangeStreamToDelta from(
      MssqlCdcIO.Read read, DeltaTarget target, Schema changeSchema) {
    return new WriteChangeStreamToDelta(List.of(new TableWrite(read, target, changeSchema)), false);
  }

  /**
   * Follows every table (continuous reads; two or more in one {@code MssqlCdcIO.readAll()}) and
   * commits each table's batches to its own target as they arrive, one committer (key) per table. A
   * table whose read fails with a {@link org.lakecdc.io.mssqlcdc.read.TableFailure} records a
   * {@code table_failed} facts row and stops; the others follow on until stopped.
   *
   * @throws IllegalArgumentException when two tables share a capture instance, a target or an app
   *     id
   */
  public static WriteChangeStreamToDelta fromAll(List<TableWrite> tables) {
    WriteChangesToDelta.checkDistinct(tables);
    return new WriteChangeStreamToDelta(tables, true);
  }

  @Override
  public PCollection<CommittedBatch> expand(PBegin input) {
    return TableWrite.readAndWriteFiles(input, tables, isolate)
        .apply(
            "Commit batches in sequence",
            ParDo.of(new CommitInSequence(TableWrite.targets(tables))))
        .setCoder(CommittedBatchCoder.of());
  }

  /**
   * The committer of each target (one key per capture instance): see {@link
   * WriteChangeStreamToDelta}. After a {@link ChangeBatch#failed} batch, the key's next sequence is
   * {@link Long#MAX_VALUE}: whatever arrives later for that table is dropped.
   */
  static final class CommitInSequence
      extends DoFn<KV<String, KV<ChangeBatch, BatchFiles>>, CommittedBatch> {
    private final Map<String, DeltaTarget> targets;

    @StateId("pending")
    private final StateSpec<BagState<KV<ChangeBatch, BatchFiles>>> pendingSpec =
        StateSpecs.bag(KvCoder.of(ChangeBatch.coder(), NullableCoder.of(BatchFilesCoder.of())));

    @StateId("position")
    private final StateSpec<ValueState<StreamPosition>> positionSpec =
        StateSpecs.value(
            DelegateCoder.of(
                StringUtf8Coder.of(), StreamPosition::toJson, StreamPosition::fromJson));

    @StateId("next")
    private final StateSpec<ValueState<Long>> nextSpec = StateSpecs.value();

    /** Per capture instance: its committer, and what its tables held when it started. */
    private transient Map<String, BatchCommitter> committers;

    private transient Map<String, org.lakecdc.io.mssqlcdc.lsn.Lsn> committedUpTo;

    CommitInSequence(Map<String, DeltaTarget> targets) {
      this.targets = new LinkedHashMap<>(targets);
    }

    /** The capture instance before a batch's log line when there are many tables, else nothing. */
    private String label(String captureInstance) {
      return targets.size() > 1 ? captureInstance + " " : "";
    }

    @Setup
    public void setup() {
      committers = new HashMap<>();
      committedUpTo = new HashMap<>();
    }

    @ProcessElement
    public void process(
        @Element KV<String, KV<ChangeBatch, BatchFiles>> element,
        @StateId("pending") BagState<KV<ChangeBatch, BatchFiles>> pendingState,
        @StateId("position") ValueState<StreamPosition> positionState,
        @StateId("next") ValueState<Long> nextState,
        OutputReceiver<CommittedBatch> out) {
      String key = element.getKey();
      DeltaTarget target = targets.get(key);
      if (target == null) {
        throw new IllegalStateException("A batch of " + key + ", which has no target");
      }
      BatchCommitter committer =
          committers.computeIfAbsent(
              key, k -> new BatchCommitter(target, target.tables(), label(k)));
      long next = Optional.ofNullable(nextState.read()).orElse(0L);
      KV<ChangeBatch, BatchFiles> arrived = element.getValue();
      if (arrived.getKey().sequence() < next) {
        return; // a replayed batch already committed
      }
      if (arrived.getKey().sequence() > next) {
        pendingState.add(arrived);
        return;
      }
      List<KV<ChangeBatch, BatchFiles>> pending = new ArrayList<>();
      pendingState.read().forEach(pending::add);
      StreamPosition position = Optional.ofNullable(positionState.read()).orElse(target.start());
      KV<ChangeBatch, BatchFiles> batch = arrived;
      // What the tables held when this committer started: later batches are its own commits.
      org.lakecdc.io.mssqlcdc.lsn.Lsn upTo =
          committedUpTo.computeIfAbsent(key, k -> committer.committedUpTo());
      while (batch != null) {
        if (batch.getKey().failed()) {
          // The table stopped here: nothing of it is committed any more.
          out.output(committer.recordFailure(position, batch.getKey()));
          positionState.write(position);
          nextState.write(Long.MAX_VALUE);
          pendingState.clear();
          return;
        }
        long batchId = target.batchId(next);
        out.output(committer.commit(position, batch.getKey(), batchId, batch.getValue(), upTo));
        position = BatchCommitter.next(position, batchId, batch.getKey());
        next++;
        batch = null;
        for (int i = 0; i < pending.size(); i++) {
          if (pending.get(i).getKey().sequence() == next) {
            batch = pending.remove(i);
            break;
          }
        }
      }
      positionState.write(position);
      nextState.write(next);
      pendingState.clear();
      for (KV<ChangeBatch, BatchFiles> rest : pending) {
        if (rest.getKey().sequence() > next) {
          pendingState.add(rest);
        }
      }
    }
  }
}
