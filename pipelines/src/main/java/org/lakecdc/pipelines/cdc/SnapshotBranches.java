package org.lakecdc.pipelines.cdc;

import io.delta.kernel.expressions.Column;
import io.delta.kernel.expressions.Literal;
import io.delta.kernel.expressions.Predicate;
import io.delta.kernel.utils.CloseableIterator;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;
import org.apache.beam.sdk.values.PCollection;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.io.mssqlcdc.client.CdcClient;
import org.lakecdc.io.mssqlcdc.client.DataLossError;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.io.mssqlcdc.read.StartingLsn;
import org.lakecdc.io.mssqlcdc.read.TableFailure;
import org.lakecdc.pipelines.targets.Bootstrap;
import org.lakecdc.pipelines.targets.Resnapshot;
import org.lakecdc.pipelines.targets.RunCounters;
import org.lakecdc.pipelines.targets.SnapshotEvent;
import org.lakecdc.pipelines.targets.SnapshotTask;
import org.lakecdc.pipelines.targets.TablePlan;
import org.lakecdc.pipelines.targets.Target;
import org.lakecdc.transforms.Counts;
import org.lakecdc.transforms.bronze.CommittedBatch;
import org.lakecdc.transforms.bronze.RecordedFailure;
import org.lakecdc.transforms.bronze.TableWrite;
import org.lakecdc.transforms.bronze.WriteStartedChangeStreamToDelta;
import org.lakecdc.transforms.bronze.WriteStartedChangesToDelta;
import org.lakecdc.transforms.delta.DeltaTables;
import org.lakecdc.transforms.delta.HadoopConf;
import org.lakecdc.transforms.facts.FactsTable;
import org.lakecdc.transforms.position.StreamPosition;
import org.lakecdc.transforms.snapshot.ChunkedSnapshotFacts;
import org.lakecdc.transforms.snapshot.WriteSnapshotToDelta;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The whole snapshots read inside the main pipeline (a run of one table or of many): the bootstrap
 * snapshots of new targets and the re-snapshots into a new generation after data loss, each table
 * in a branch of its own so that no table waits for another's snapshot:
 *
 * <pre>
 * snapshot read in key ranges ── data files ── one commit (S, the position at S)
 *   ── AfterSnapshot: committed? write the bootstrap (or resnapshot) facts event, emit the
 *                     capture instance
 *                     refused (CDC cleanup passed S)? record table_failed, emit nothing
 *   ── that table's change read from S (readAll().writeFrom), files, its own commits
 * </pre>
 *
 * <p>Exactly once as on the launcher: a crash before the snapshot commit leaves the target without
 * a position (a re-snapshot: in its former generation), and the next run records a new S (a
 * re-snapshot: reuses the recorded one, {@code Resnapshot}); after it, the next run resumes from
 * the position at S and offers the event again (written once, by its transaction id). After the
 * run, {@link #report} prints each snapshot from its committed record.
 */
final class SnapshotBranches {
  private SnapshotBranches() {}

  /**
   * A new target's snapshot in the pipeline.
   *
   * @param plan the table's plan, with its {@link TablePlan#snapshot}
   * @param stream whether the table's changes after S are read in this run (max_lsn is after S)
   * @param follow the table's continuous read from S and its target (a continuous run), or null: a
   *     bounded read up to the run's max_lsn
   */
  record Branch(TablePlan plan, boolean stream, @Nullable TableWrite follow) {
    /** A branch of a bounded run. */
    Branch(TablePlan plan, boolean stream) {
      this(plan, stream, null);
    }

    /** A branch of a continuous run: the snapshot, then {@code follow} until its read stops. */
    static Branch following(TablePlan plan, TableWrite follow) {
      return new Branch(plan, true, follow);
    }
  }

  /**
   * Expands {@code branch}'s snapshot into {@code pipeline}, then, with {@link Branch#stream}, the
   * table's change read from S once the snapshot is committed: bounded up to the run's max_lsn, or
   * continuous ({@link Branch#follow}, committed in rounds of its own as batches arrive).
   *
   * @param isolate whether the table's own failures (a snapshot refused because CDC cleanup passed
   *     S, a {@link TableFailure} of its change read) are recorded as its {@code table_failed}
   *     while the other tables go on, its batch lines naming it (a run of many tables), or fail the
   *     pipeline, its batch lines as a run of one table's (a run of one table)
   * @return the table's committed batches, or null without {@code stream}
   */
  static @Nullable PCollection<CommittedBatch> expand(
      Pipeline pipeline, Branch branch, boolean isolate) {
    TablePlan plan = branch.plan();
    SnapshotTask task = Objects.requireNonNull(plan.snapshot(), "a plan without a snapshot");
    String ci = plan.config().captureInstance();
    PCollection<String> started =
        pipeline
            .apply("Snapshot " + ci + " to bronze", task.write())
            .apply(
                "Start the stream of " + ci + " after its snapshot",
                ParDo.of(
                    new AfterSnapshot(
                        task.event(),
                        task.atS(),
                        plan.config().hadoopConf(),
                        plan.startedAt(),
                        isolate)))
            .setCoder(StringUtf8Coder.of());
    if (!branch.stream()) {
      return null;
    }
    if (branch.follow() != null) {
      return started.apply(
          "Follow " + ci + " after its snapshot and write to Delta as batches arrive",
          isolate
              ? WriteStartedChangeStreamToDelta.of(List.of(branch.follow()))
              : WriteStartedChangeStreamToDelta.alone(branch.follow()));
    }
    TableWrite write = plan.write(null);
    return started.apply(
        "Read " + ci + " after its snapshot and write to Delta",
        isolate
            ? WriteStartedChangesToDelta.of(List.of(write))
            : WriteStartedChangesToDelta.alone(write));
  }

  /**
   * After the snapshot's commit step: when the snapshot of the position's generation is committed,
   * writes its facts event once ({@code bootstrap}, or a re-snapshot's {@code resnapshot}) and
   * emits the table's capture instance, which starts its change read; when the commit was refused
   * because CDC cleanup purged the changes right after S, records what the next attempt needs (a
   * re-snapshot's {@code resnapshot_failed}) and the table's {@code table_failed} facts row and
   * emits nothing: the other tables go on, and the next run takes a new snapshot; in a run of one
   * table ({@code isolate} false) it throws that {@link DataLossError} instead, which fails the
   * run.
   */
  static final class AfterSnapshot extends DoFn<Long, String> {
    private static final long serialVersionUID = 1L;
    private static final Logger LOG = LoggerFactory.getLogger(AfterSnapshot.class);
    private final SnapshotEvent event;
    private final StreamPosition atS;
    private final HadoopConf hadoopConf;
    private final Instant runStartedAt;
    private final boolean isolate;
    private transient @Nullable DeltaTables tables;

    AfterSnapshot(
        SnapshotEvent event,
        StreamPosition atS,
        HadoopConf hadoopConf,
        Instant runStartedAt,
        boolean isolate) {
      this.event = event;
      this.atS = atS;
      this.hadoopConf = hadoopConf;
      this.runStartedAt = runStartedAt;
      this.isolate = isolate;
    }

    @Setup
    public void setup() {
      tables = hadoopConf.tables();
    }

    /** Lets {@link #process} stamp its output at the start of time (see there). */
    @Override
    @SuppressWarnings("deprecation")
    public org.joda.time.Duration getAllowedTimestampSkew() {
      return org.joda.time.Duration.millis(Long.MAX_VALUE);
    }

    @ProcessElement
    public void process(@Element Long rows, OutputReceiver<String> out) {
      DeltaTables tables = Objects.requireNonNull(this.tables);
      Optional<WriteSnapshotToDelta.SnapshotRecord> record =
          WriteSnapshotToDelta.committedRecord(tables, event.bronze())
              .filter(r -> r.generation() >= atS.generation());
      if (record.isPresent()) {
        if (rows == -1) {
          // Committed first by another run of the target (or an earlier attempt of this task):
          // the run's summary says so and never counts the snapshot's rows as its own.
          RunCounters.snapshotFoundWritten(atS.appId());
        }
        if (!event.written(tables)) {
          long committed = record.get().rows();
          event.write(tables, record.get(), committed >= 0 ? committed : null);
          // Where the pipeline runs (a worker's console or log), as the snapshot's progress lines.
          LOG.info(
              "Snapshot of {}: {} committed to {}; its changes after S = {} follow",
              event.captureInstance(),
              Counts.of(Math.max(committed, 0), "row", "rows"),
              event.bronze(),
              atS.endLsn());
        }
        // At the start of time: the snapshot's commit comes out of a global combine stamped with
        // the end of the window, and the change read stamps its rows with their commit times.
        out.outputWithTimestamp(event.captureInstance(), BoundedWindow.TIMESTAMP_MIN_VALUE);
        return;
      }
      DataLossError outlived =
          outlived(event, atS, tables)
              .orElseThrow(
                  () ->
                      new IllegalStateException(
                          "The snapshot of "
                              + event.bronze()
                              + " at S = "
                              + atS.endLsn()
                              + " was not committed, though CDC still holds the changes after S"));
      if (!isolate) {
        throw outlived;
      }
      TableFailure failure = TableFailure.of(outlived).orElseThrow();
      // As a failure of the launcher's planning: the target has no position yet (a re-snapshot's:
      // none in its new generation, whose app id the failure is recorded under).
      StreamPosition none =
          new StreamPosition(
              event.appId(), atS.generation(), -1, Lsn.ZERO, null, event.captureInstance());
      RecordedFailure.at(none, event.bronze(), failure, none.endLsn().increment(), runStartedAt)
          .write(tables, event.facts());
    }
  }

  /**
   * The error of a snapshot at {@code atS} that was not committed because CDC cleanup purged the
   * changes right after S ({@link SnapshotEvent#refused}: a bootstrap's {@link Bootstrap#outlived},
   * a re-snapshot's with its {@code resnapshot_failed} row written); empty while CDC holds them.
   */
  static Optional<DataLossError> outlived(
      SnapshotEvent event, StreamPosition atS, DeltaTables tables) {
    Lsn s = atS.endLsn();
    try (CdcClient client = event.clientFactory().open()) {
      Optional<Lsn> min = StartingLsn.lostAfter(client, event.captureInstance(), s);
      if (min.isEmpty()) {
        return Optional.empty();
      }
      return Optional.of(event.refused(tables, s, client.incrementLsn(s), min.get()));
    }
  }

  /**
   * After a run of one table that failed: when a snapshot the pipeline read was not committed
   * because CDC cleanup passed its S, that {@link DataLossError} (the pipeline's error suppressed
   * in it), as when the launcher read the snapshot; otherwise returns and the caller rethrows the
   * pipeline's error.
   *
   * @throws DataLossError when a snapshot of {@code snapshots} outlived the CDC retention
   */
  static void throwIfOutlived(List<Branch> snapshots, RuntimeException failure) {
    for (Branch branch : snapshots) {
      SnapshotTask task = Objects.requireNonNull(branch.plan().snapshot());
      Target target = branch.plan().target();
      boolean committed =
          WriteSnapshotToDelta.committedRecord(target.tables(), target.bronze())
              .filter(r -> r.generation() >= task.atS().generation())
              .isPresent();
      if (!committed) {
        Optional<DataLossError> outlived = outlived(task.event(), task.atS(), target.tables());
        if (outlived.isPresent()) {
          outlived.get().addSuppressed(failure);
          throw outlived.get();
        }
      }
    }
  }

  /**
   * After the run, per snapshot the pipeline read: prints {@code Snapshot: <rows> written to
   * <bronze>} from the committed record (a re-snapshot's followed by {@code Target <bronze>:
   * generation <n> starts at S = <S> under app id <appId>.g<n> (a snapshot of <rows>)}), {@code
   * Snapshot: found already written to <bronze>: <rows> at S = <S> (committed by another run of
   * this target, …)} when another run committed the snapshot of the same S first, or {@code Stopped
   * <ci>: <failure>} for a refused one.
   *
   * @param runBegan when the pipeline was started (UTC)
   * @param result the finished pipeline's result (its counters), or null when it has none
   * @return the plan with the snapshot's rows and seconds (until its facts event was written) when
   *     this run committed it, with none (-1) when it found it already written, else {@code plan}
   */
  static TablePlan report(
      TablePlan plan, Instant runBegan, @Nullable PipelineResult result, PrintStream out) {
    Target target = plan.target();
    Optional<WriteSnapshotToDelta.SnapshotRecord> record =
        WriteSnapshotToDelta.committedRecord(target.tables(), target.bronze())
            .filter(r -> r.generation() >= plan.start().generation());
    if (record.isEmpty()) {
      RecordedFailure.last(target.tables(), target.facts(), target.streamAppId())
          .filter(f -> f.runStartedAt().equals(plan.startedAt()))
          .ifPresent(f -> out.printf("Stopped %s: %s%n", target.captureInstance(), f.text()));
      return plan;
    }
    long rows = Math.max(record.get().rows(), 0);
    if (foundWritten(plan, result)) {
      out.printf(
          "Snapshot: found already written to %s: %s at S = %s (committed by another run of this"
              + " target, or by an earlier attempt of this run's task: not written by this run)%n",
          target.bronze(), Counts.of(rows, "row", "rows"), record.get().lsn());
      return plan.withSnapshot(-1, 0);
    }
    out.printf("Snapshot: %s written to %s%n", Counts.of(rows, "row", "rows"), target.bronze());
    boolean resnapshot = Objects.requireNonNull(plan.snapshot()).resnapshot() != null;
    if (resnapshot) {
      Resnapshot.printStarted(
          target, plan.start().endLsn(), "a snapshot of " + Counts.of(rows, "row", "rows"), out);
    }
    Instant done =
        eventWrittenAt(
                target,
                resnapshot ? ChunkedSnapshotFacts.EVENT_RESNAPSHOT : FactsTable.EVENT_BOOTSTRAP,
                resnapshot ? target.streamAppId() : target.appId())
            .orElse(Instant.now());
    double seconds = Math.max(0, (done.toEpochMilli() - runBegan.toEpochMilli()) / 1e3);
    return plan.withSnapshot(rows, seconds);
  }

  /**
   * The rows of {@code plan}'s snapshot when the pipeline read it and found it already committed
   * (another run of the target committed the snapshot of the same S first), else -1.
   */
  static long foundWrittenRows(TablePlan plan, @Nullable PipelineResult result) {
    if (!foundWritten(plan, result)) {
      return -1;
    }
    return WriteSnapshotToDelta.committedSnapshotRows(plan.tables(), plan.target().bronze())
        .map(r -> Math.max(r, 0))
        .orElse(-1L);
  }

  private static boolean foundWritten(TablePlan plan, @Nullable PipelineResult result) {
    SnapshotTask task = plan.snapshot();
    return task != null
        && result != null
        && RunCounters.snapshotFoundWritten(result, task.atS().appId());
  }

  /**
   * Whether {@code plan}'s snapshot is a re-snapshot that was not committed (CDC cleanup passed its
   * S: its {@code resnapshot_failed} row recorded): bronze's position is still the former
   * generation's.
   */
  static boolean refusedResnapshot(TablePlan plan) {
    SnapshotTask task = plan.snapshot();
    if (task == null || task.resnapshot() == null) {
      return false;
    }
    return WriteSnapshotToDelta.committedRecord(plan.tables(), plan.target().bronze())
        .filter(r -> r.generation() >= task.atS().generation())
        .isEmpty();
  }

  /** When the target's facts event {@code event} of app id {@code appId} was written. */
  private static Optional<Instant> eventWrittenAt(Target target, String event, String appId) {
    DeltaTables tables = target.tables();
    Predicate ofApp = new Predicate("=", new Column(FactsTable.APP_ID), Literal.ofString(appId));
    try (CloseableIterator<Map<String, Object>> rows =
        tables.scanAtVersion(target.facts(), tables.version(target.facts()), ofApp)) {
      while (rows.hasNext()) {
        Map<String, Object> row = rows.next();
        if (event.equals(row.get(FactsTable.EVENT))
            && appId.equals(row.get(FactsTable.APP_ID))
            && row.get(FactsTable.WRITTEN_AT) instanceof LocalDateTime at) {
          return Optional.of(at.toInstant(ZoneOffset.UTC));
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot read Delta table " + target.facts(), e);
    }
    return Optional.empty();
  }
}
