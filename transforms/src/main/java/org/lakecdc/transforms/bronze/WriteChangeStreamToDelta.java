package org.lakecdc.transforms.bronze;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.beam.sdk.coders.BooleanCoder;
import org.apache.beam.sdk.coders.DelegateCoder;
import org.apache.beam.sdk.coders.KvCoder;
import org.apache.beam.sdk.coders.NullableCoder;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.coders.VarLongCoder;
import org.apache.beam.sdk.schemas.Schema;
import org.apache.beam.sdk.state.BagState;
import org.apache.beam.sdk.state.MapState;
import org.apache.beam.sdk.state.StateSpec;
import org.apache.beam.sdk.state.StateSpecs;
import org.apache.beam.sdk.state.TimeDomain;
import org.apache.beam.sdk.state.Timer;
import org.apache.beam.sdk.state.TimerSpec;
import org.apache.beam.sdk.state.TimerSpecs;
import org.apache.beam.sdk.state.ValueState;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.PTransform;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.Values;
import org.apache.beam.sdk.transforms.WithKeys;
import org.apache.beam.sdk.transforms.windowing.GlobalWindow;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PBegin;
import org.apache.beam.sdk.values.PCollection;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.io.mssqlcdc.MssqlCdcIO;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.io.mssqlcdc.read.ChangeBatch;
import org.lakecdc.transforms.delta.DeltaTables;
import org.lakecdc.transforms.finalization.Finalization;
import org.lakecdc.transforms.position.StreamPosition;

/**
 * Reads change batches with the continuous form of {@code MssqlCdcIO.read()} and writes them to
 * bronze, facts and the verdict, exactly once, as they arrive: the continuous counterpart of {@link
 * WriteChangesToDelta}, committing in committer rounds too.
 *
 * <pre>
 * read by LSN range ── each batch's rows written to bronze data files in the reading stage
 *   ── (batch, files) ── one key for all ── Commit in rounds, each the next batch of every table
 *   that has it: its bronze commits, one facts commit, the verdicts (stateful)
 * </pre>
 *
 * <p>No window, trigger or watermark decides when a batch is committed: the sequence does. The
 * reader numbers each table's batches 0, 1, 2, ... in LSN order with no gap ({@link
 * ChangeBatch#sequence()}), so the committer commits a table's batch k once batches 0..k-1 are
 * committed, and keeps a batch that arrives early (from another part of the read) until then. A
 * round is made as soon as every table still followed has its next batch waiting; otherwise, at the
 * latest the round wait ({@link #withRoundWait}, default {@link #DEFAULT_ROUND_WAIT}) after the
 * first batch that waits, with the tables whose next batch is there (and again for their batches
 * after it). The state holds only batch descriptions (file actions, counts, measurements), never
 * rows: a few per table in flight.
 *
 * <p>Runs on runners with stateful processing and timers in the global window in streaming (Direct,
 * Flink); the Spark runner runs the job's bounded form instead.
 */
public final class WriteChangeStreamToDelta
    extends PTransform<PBegin, PCollection<CommittedBatch>> {
  /** How long a round waits at most for the tables whose next batch has not arrived. */
  public static final Duration DEFAULT_ROUND_WAIT = Duration.ofMillis(250);

  private final List<TableWrite> tables;
  private final boolean isolate;
  private final int commitThreads;
  private final Duration roundWait;

  private WriteChangeStreamToDelta(
      List<TableWrite> tables, boolean isolate, int commitThreads, Duration roundWait) {
    this.tables = List.copyOf(tables);
    this.isolate = isolate;
    this.commitThreads = commitThreads;
    this.roundWait = roundWait;
  }

  /**
   * Reads with {@code read} (continuous form) and writes to {@code target}; {@code changeSchema} is
   * the read's output schema (the tables must exist, as for {@link WriteChangesToDelta#from}).
   */
  public static WriteChangeStreamToDelta from(
      MssqlCdcIO.Read read, DeltaTarget target, Schema changeSchema) {
    return new WriteChangeStreamToDelta(
        List.of(new TableWrite(read, target, changeSchema)),
        false,
        CommitterRound.defaultThreads(),
        DEFAULT_ROUND_WAIT);
  }

  /**
   * Follows every table (continuous reads; two or more in one {@code MssqlCdcIO.readAll()}) and
   * commits each table's batches to its own target as they arrive, in committer rounds. A table
   * whose read fails with a {@link org.lakecdc.io.mssqlcdc.read.TableFailure} records a {@code
   * table_failed} facts row and stops; the others follow on until stopped.
   *
   * @throws IllegalArgumentException when two tables share a capture instance, a target or an app
   *     id
   */
  public static WriteChangeStreamToDelta fromAll(List<TableWrite> tables) {
    WriteChangesToDelta.checkDistinct(tables);
    return new WriteChangeStreamToDelta(
        tables, true, CommitterRound.defaultThreads(), DEFAULT_ROUND_WAIT);
  }

  /**
   * The same write, making a round's bronze commits on up to {@code threads} threads at once
   * (default: the worker's processors, at least 2).
   *
   * @throws IllegalArgumentException when {@code threads} is below 1
   */
  public WriteChangeStreamToDelta withCommitThreads(int threads) {
    return new WriteChangeStreamToDelta(
        tables, isolate, CommitterRound.checkThreads(threads), roundWait);
  }

  /**
   * The same write, a round waiting at most {@code wait} for tables whose next batch has not
   * arrived (milliseconds are kept; default {@link #DEFAULT_ROUND_WAIT}).
   *
   * @throws IllegalArgumentException when {@code wait} is negative
   */
  public WriteChangeStreamToDelta withRoundWait(Duration wait) {
    if (wait.isNegative()) {
      throw new IllegalArgumentException(
          "roundWait=" + wait + ": a round waits zero or more milliseconds");
    }
    return new WriteChangeStreamToDelta(tables, isolate, commitThreads, wait);
  }

  @Override
  public PCollection<CommittedBatch> expand(PBegin input) {
    return commitInRounds(
        TableWrite.readAndWriteFiles(input, tables, isolate),
        tables,
        isolate || tables.size() > 1,
        commitThreads,
        roundWait);
  }

  /**
   * The committer of the continuous form: every table's written batches (keyed by table) under one
   * key, committed in rounds by {@link CommitInRounds}.
   *
   * @param labelled whether the batch lines name their table (a run of many tables)
   */
  static PCollection<CommittedBatch> commitInRounds(
      PCollection<KV<String, KV<ChangeBatch, BatchFiles>>> written,
      List<TableWrite> tables,
      boolean labelled,
      int commitThreads,
      Duration roundWait) {
    return written
        .apply("Drop the table keys", Values.create())
        .apply("Key every batch to one committer", WithKeys.of(CommitBatches.ROUND_KEY))
        .setCoder(
            KvCoder.of(
                StringUtf8Coder.of(),
                KvCoder.of(ChangeBatch.coder(), NullableCoder.of(BatchFilesCoder.of()))))
        .apply(
            "Commit batches in sequence",
            ParDo.of(
                new CommitInRounds(
                    TableWrite.targets(tables), labelled, commitThreads, roundWait.toMillis())))
        .setCoder(CommittedBatchCoder.of());
  }

  /**
   * The committer of every target (one key for all): see {@link WriteChangeStreamToDelta}. After a
   * {@link ChangeBatch#failed} batch, the table's next sequence is {@link Long#MAX_VALUE}: whatever
   * arrives later for that table is dropped.
   */
  static final class CommitInRounds
      extends DoFn<KV<String, KV<ChangeBatch, BatchFiles>>, CommittedBatch> {
    private final Map<String, DeltaTarget> targets;
    private final int commitThreads;
    private final long roundWaitMillis;

    @StateId("pending")
    private final StateSpec<BagState<KV<ChangeBatch, BatchFiles>>> pendingSpec =
        StateSpecs.bag(KvCoder.of(ChangeBatch.coder(), NullableCoder.of(BatchFilesCoder.of())));

    @StateId("position")
    private final StateSpec<MapState<String, StreamPosition>> positionSpec =
        StateSpecs.map(
            StringUtf8Coder.of(),
            DelegateCoder.of(
                StringUtf8Coder.of(), StreamPosition::toJson, StreamPosition::fromJson));

    @StateId("next")
    private final StateSpec<MapState<String, Long>> nextSpec =
        StateSpecs.map(StringUtf8Coder.of(), VarLongCoder.of());

    @StateId("waiting")
    private final StateSpec<ValueState<Boolean>> waitingSpec = StateSpecs.value(BooleanCoder.of());

    @TimerId("round")
    private final TimerSpec roundSpec = TimerSpecs.timer(TimeDomain.PROCESSING_TIME);

    @TimerId("end")
    private final TimerSpec endSpec = TimerSpecs.timer(TimeDomain.EVENT_TIME);

    /** Per capture instance: its committer, and what its tables held when it started. */
    private transient Map<String, BatchCommitter> committers;

    private transient Map<String, Lsn> committedUpTo;

    /** One verdict keeper per control table: a round's verdicts move in one control rewrite. */
    private transient Map<String, Finalization> finalizations;

    private final boolean labelled;

    private transient CommitterRound rounds;

    /**
     * The committer of {@code targets}' batches; its log lines name the table when {@code labelled}
     * (a run of many tables, also a pipeline of one table that joined a running run or recovers
     * beside it: its lines sit among the other tables' lines).
     */
    CommitInRounds(
        Map<String, DeltaTarget> targets,
        boolean labelled,
        int commitThreads,
        long roundWaitMillis) {
      this.targets = new LinkedHashMap<>(targets);
      this.labelled = labelled;
      this.commitThreads = commitThreads;
      this.roundWaitMillis = roundWaitMillis;
    }

    /** The capture instance before a batch's log line in a run of many tables, else nothing. */
    String label(String captureInstance) {
      return labelled ? captureInstance + " " : "";
    }

    @Setup
    public void setup() {
      committers = new HashMap<>();
      committedUpTo = new HashMap<>();
      finalizations = new HashMap<>();
      rounds = CommitterRound.of(commitThreads, targets.size());
    }

    @Teardown
    public void teardown() {
      if (rounds != null) {
        rounds.close();
        rounds = null;
      }
    }

    private BatchCommitter committer(String captureInstance) {
      return committers.computeIfAbsent(
          captureInstance,
          k -> {
            DeltaTarget target = targets.get(k);
            DeltaTables tables = target.tables();
            Finalization verdicts =
                finalizations.computeIfAbsent(
                    target.controlPath(), c -> new Finalization(tables, c, Clock.systemUTC()));
            return new BatchCommitter(target, tables, label(k), verdicts);
          });
    }

    @ProcessElement
    public void process(
        @Element KV<String, KV<ChangeBatch, BatchFiles>> element,
        @StateId("pending") BagState<KV<ChangeBatch, BatchFiles>> pendingState,
        @StateId("position") MapState<String, StreamPosition> positionState,
        @StateId("next") MapState<String, Long> nextState,
        @StateId("waiting") ValueState<Boolean> waitingState,
        @TimerId("round") Timer round,
        @TimerId("end") Timer end,
        OutputReceiver<CommittedBatch> out) {
      KV<ChangeBatch, BatchFiles> arrived = element.getValue();
      String table = arrived.getKey().captureInstance();
      if (!targets.containsKey(table)) {
        throw new IllegalStateException("A batch of " + table + ", which has no target");
      }
      // Whatever waits when the input ends (the reads stopped) is committed then.
      end.set(GlobalWindow.INSTANCE.maxTimestamp());
      long next = Optional.ofNullable(nextState.get(table).read()).orElse(0L);
      if (arrived.getKey().sequence() < next) {
        return; // a replayed batch already committed
      }
      pendingState.add(arrived);
      Cursors cursors = new Cursors(pendingState, positionState, nextState);
      if (cursors.everyTableReady()) {
        cursors.commit(true, out);
        if (cursors.nothingWaits()) {
          round.clear();
          waitingState.write(false);
        }
      } else if (!Boolean.TRUE.equals(waitingState.read())) {
        round.offset(org.joda.time.Duration.millis(roundWaitMillis)).setRelative();
        waitingState.write(true);
      }
    }

    @OnTimer("round")
    public void onRound(
        @StateId("pending") BagState<KV<ChangeBatch, BatchFiles>> pendingState,
        @StateId("position") MapState<String, StreamPosition> positionState,
        @StateId("next") MapState<String, Long> nextState,
        @StateId("waiting") ValueState<Boolean> waitingState,
        OutputReceiver<CommittedBatch> out) {
      waitingState.write(false);
      new Cursors(pendingState, positionState, nextState).commit(false, out);
    }

    @OnTimer("end")
    public void onEnd(
        @StateId("pending") BagState<KV<ChangeBatch, BatchFiles>> pendingState,
        @StateId("position") MapState<String, StreamPosition> positionState,
        @StateId("next") MapState<String, Long> nextState,
        OutputReceiver<CommittedBatch> out) {
      new Cursors(pendingState, positionState, nextState).commit(false, out);
    }

    /** The waiting batches and every table's position and next sequence, read from the state. */
    private final class Cursors {
      private final BagState<KV<ChangeBatch, BatchFiles>> pendingState;
      private final MapState<String, StreamPosition> positionState;
      private final MapState<String, Long> nextState;
      private final List<KV<ChangeBatch, BatchFiles>> pending = new ArrayList<>();
      private final Map<String, Long> next = new LinkedHashMap<>();

      Cursors(
          BagState<KV<ChangeBatch, BatchFiles>> pendingState,
          MapState<String, StreamPosition> positionState,
          MapState<String, Long> nextState) {
        this.pendingState = pendingState;
        this.positionState = positionState;
        this.nextState = nextState;
        pendingState.read().forEach(pending::add);
        for (String table : targets.keySet()) {
          next.put(table, Optional.ofNullable(nextState.get(table).read()).orElse(0L));
        }
      }

      /** The waiting batch of {@code table} that comes next, if it is there. */
      private @Nullable KV<ChangeBatch, BatchFiles> ready(String table) {
        long sequence = next.get(table);
        for (KV<ChangeBatch, BatchFiles> each : pending) {
          if (each.getKey().sequence() == sequence
              && each.getKey().captureInstance().equals(table)) {
            return each;
          }
        }
        return null;
      }

      /** Whether no batch waits any more. */
      boolean nothingWaits() {
        return pending.isEmpty();
      }

      /** Whether every table still followed has its next batch waiting. */
      boolean everyTableReady() {
        for (Map.Entry<String, Long> e : next.entrySet()) {
          if (e.getValue() != Long.MAX_VALUE && ready(e.getKey()) == null) {
            return false;
          }
        }
        return true;
      }

      /**
       * Commits rounds of the waiting batches that come next: with {@code wholeOnly} only while
       * every table still followed has one; else every batch that comes next, round after round.
       * Writes the state back.
       */
      void commit(boolean wholeOnly, OutputReceiver<CommittedBatch> out) {
        Map<String, StreamPosition> positions = new HashMap<>();
        while (!wholeOnly || everyTableReady()) {
          List<CommitterRound.Member> members = new ArrayList<>();
          boolean moved = false;
          for (Map.Entry<String, DeltaTarget> e : targets.entrySet()) {
            String table = e.getKey();
            KV<ChangeBatch, BatchFiles> batch = ready(table);
            if (batch == null) {
              continue;
            }
            moved = true;
            pending.remove(batch);
            DeltaTarget target = e.getValue();
            BatchCommitter committer = committer(table);
            StreamPosition position =
                positions.computeIfAbsent(
                    table,
                    t -> Optional.ofNullable(positionState.get(t).read()).orElse(target.start()));
            if (batch.getKey().failed()) {
              // The table stopped here: nothing of it is committed any more.
              out.output(committer.recordFailure(position, batch.getKey()));
              next.put(table, Long.MAX_VALUE);
              pending.removeIf(kv -> kv.getKey().captureInstance().equals(table));
              continue;
            }
            long sequence = next.get(table);
            long batchId = target.batchId(sequence);
            Lsn upTo = committedUpTo.computeIfAbsent(table, t -> committer.committedUpTo());
            if (batch.getKey().toLsn().isAfter(upTo)) {
              members.add(
                  new CommitterRound.Member(
                      committer, position, batch.getKey(), batchId, batch.getValue()));
            } else {
              out.output(committer.alreadyIn(position, batch.getKey(), batchId, batch.getValue()));
            }
            positions.put(table, BatchCommitter.next(position, batchId, batch.getKey()));
            next.put(table, sequence + 1);
          }
          if (!moved) {
            break;
          }
          rounds.commit(members, finalizations, out::output);
          // The state follows each round, so that a failure in a later round keeps this one's.
          save(positions);
        }
      }

      private void save(Map<String, StreamPosition> positions) {
        positions.forEach(positionState::put);
        next.forEach(nextState::put);
        pendingState.clear();
        for (KV<ChangeBatch, BatchFiles> rest : pending) {
          pendingState.add(rest);
        }
      }
    }
  }
}
