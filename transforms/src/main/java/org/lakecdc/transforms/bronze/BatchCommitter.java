package org.lakecdc.transforms.bronze;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.beam.sdk.metrics.Counter;
import org.apache.beam.sdk.metrics.Distribution;
import org.apache.beam.sdk.metrics.Metrics;
import org.apache.beam.sdk.values.Row;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.io.mssqlcdc.read.ChangeBatch;
import org.lakecdc.io.mssqlcdc.read.SkippedRange;
import org.lakecdc.transforms.Counts;
import org.lakecdc.transforms.TableMetrics;
import org.lakecdc.transforms.delta.CheckpointTiming;
import org.lakecdc.transforms.delta.CommitResult;
import org.lakecdc.transforms.delta.DataFileAction;
import org.lakecdc.transforms.delta.DeltaTables;
import org.lakecdc.transforms.delta.GroupedAppend;
import org.lakecdc.transforms.facts.FactsTable;
import org.lakecdc.transforms.finalization.Finalization;
import org.lakecdc.transforms.finalization.LostPeriod;
import org.lakecdc.transforms.position.StreamPosition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The commit sequence of one batch, shared by the bounded committer ({@link CommitBatches}) and the
 * continuous one ({@link WriteChangeStreamToDelta}): the bronze commit (only with rows) with
 * transaction id {@code (appId, batch)} and the new position; then the facts row and its event rows
 * in one commit with {@code (appId#facts, batch)} and the position (a group commit shared with the
 * other targets' committers of this JVM committing at the same time, {@link
 * DeltaTables#appendGrouped}); then the verdict. A batch whose end is already in the tables is
 * skipped.
 */
final class BatchCommitter {
  private static final Logger LOG = LoggerFactory.getLogger(BatchCommitter.class);

  /**
   * The lines of batches found already written (another run of the target, or an earlier attempt of
   * this task, committed them): under {@code org.lakecdc.detail}, log file only; the run's summary
   * counts them on its {@code Found already written: …} line. Also the whole text of a failure that
   * stopped the target alone (the console names its class).
   */
  private static final Logger DETAIL =
      LoggerFactory.getLogger("org.lakecdc.detail." + BatchCommitter.class.getSimpleName());

  private static final String NAMESPACE = "lakecdc";

  private final DeltaTarget target;
  private final DeltaTables tables;
  private final String label;
  private final Finalization finalization;
  private final Counter batchesCommitted = Metrics.counter(NAMESPACE, "batches_committed");
  private final Counter bytesWritten = Metrics.counter(NAMESPACE, "bytes_written");
  private final Distribution captureLag = Metrics.distribution(NAMESPACE, "capture_lag_seconds");

  /**
   * A committer of {@code target}'s batches.
   *
   * @param target the target
   * @param tables the Delta tables
   */
  BatchCommitter(DeltaTarget target, DeltaTables tables) {
    this(target, tables, "");
  }

  /**
   * A committer of {@code target}'s batches whose log lines start with {@code label} (the capture
   * instance and a space in a run of many tables, so that interleaved lines say whose batch each
   * is; empty for one table).
   */
  BatchCommitter(DeltaTarget target, DeltaTables tables, String label) {
    this(target, tables, label, new Finalization(tables, target.controlPath(), Clock.systemUTC()));
  }

  /**
   * A committer whose verdicts go through {@code finalization} (of the target's control table),
   * shared by the committers of a round.
   */
  BatchCommitter(DeltaTarget target, DeltaTables tables, String label, Finalization finalization) {
    this.target = target;
    this.tables = tables;
    this.label = label;
    this.finalization = finalization;
  }

  /** The position after {@code batch}, committed as batch {@code batchId}. */
  static StreamPosition next(StreamPosition position, long batchId, ChangeBatch batch) {
    String lastInstance = batch.readInstances().get(batch.readInstances().size() - 1);
    return position.next(batchId, batch.toLsn(), batch.toCommitTime(), lastInstance);
  }

  /**
   * A batch between its bronze commit and its facts commit ({@link #stage}): what the facts commit
   * and the verdict after it need.
   */
  static final class Staged {
    final BatchCommitter committer;
    final ChangeBatch batch;
    final long batchId;
    final BatchStats stats;
    final StreamPosition next;
    final Instant startedAt;
    final long bronzeVersion;
    final long bytes;
    final boolean skipped;
    final List<Row> facts;

    Staged(
        BatchCommitter committer,
        ChangeBatch batch,
        long batchId,
        BatchStats stats,
        StreamPosition next,
        Instant startedAt,
        long bronzeVersion,
        long bytes,
        boolean skipped,
        List<Row> facts) {
      this.committer = committer;
      this.batch = batch;
      this.batchId = batchId;
      this.stats = stats;
      this.next = next;
      this.startedAt = startedAt;
      this.bronzeVersion = bronzeVersion;
      this.bytes = bytes;
      this.skipped = skipped;
      this.facts = facts;
    }

    /** The facts commit's part of this batch: its rows, {@code (appId#facts, batch)}, position. */
    GroupedAppend factsAppend() {
      DeltaTarget target = committer.target;
      return new GroupedAppend(
          FactsTable.SCHEMA,
          facts,
          target.factsAppId(),
          batchId,
          Map.of(StreamPosition.factsDomain(target.appId()), next.toJson()));
    }

    /** The facts table this batch's row goes to. */
    String factsPath() {
      return committer.target.factsPath();
    }

    /** The control table of this batch's verdict. */
    String controlPath() {
      return committer.target.controlPath();
    }

    /** The bronze table of this batch, the key of its verdict. */
    String bronzePath() {
      return committer.target.bronzePath();
    }

    /** The Delta tables of this batch's committer. */
    DeltaTables tables() {
      return committer.tables;
    }
  }

  /**
   * Commits {@code batch} as batch {@code batchId} after {@code position}, or skips it when its end
   * is not after {@code committedUpTo}: {@link #stage}, the facts commit (grouped with other
   * targets' facts rows committing at the same time, {@link DeltaTables#appendGrouped}), then
   * {@link #finish}.
   *
   * @param files the batch's data files, or null when it has no rows
   */
  CommittedBatch commit(
      StreamPosition position,
      ChangeBatch batch,
      long batchId,
      @Nullable BatchFiles files,
      Lsn committedUpTo) {
    if (!batch.toLsn().isAfter(committedUpTo)) {
      return alreadyIn(position, batch, batchId, files);
    }
    Staged staged = stage(position, batch, batchId, files);
    GroupedAppend facts = staged.factsAppend();
    tables.appendGrouped(
        staged.factsPath(),
        facts.rowSchema(),
        facts.rows(),
        facts.appId(),
        facts.txnVersion(),
        facts.domainMetadata());
    return finish(staged);
  }

  /** The outcome of a batch whose end is not after the target's committed position: skipped. */
  CommittedBatch alreadyIn(
      StreamPosition position, ChangeBatch batch, long batchId, @Nullable BatchFiles files) {
    BatchStats stats = files == null ? BatchStats.empty(batchId) : files.stats();
    DETAIL.info(
        "Batch {} ({}..{}) is already in {}: skipped",
        batchId,
        batch.fromLsn(),
        batch.toLsn(),
        target.bronzePath());
    return new CommittedBatch(
        batchId,
        stats,
        batch.toLsn().toString(),
        batch.toCommitTime(),
        -1,
        true,
        finalization.verdict(target.bronzePath()).orElse(null),
        0,
        target.appId(),
        null);
  }

  /**
   * The first half of a batch's commit: the bronze commit (only with rows) with transaction id
   * {@code (appId, batch)} and the new position, and the gaps it skipped recorded as lost periods;
   * its facts rows built. The caller commits {@link Staged#factsAppend} next, then {@link #finish}.
   * Same as {@link #afterBronze} of {@link #commitBronze}.
   *
   * @param files the batch's data files, or null when it has no rows
   */
  Staged stage(
      StreamPosition position, ChangeBatch batch, long batchId, @Nullable BatchFiles files) {
    return afterBronze(commitBronze(position, batch, batchId, files));
  }

  /**
   * A batch after its bronze commit, before the rest of {@link #stage}: what that commit did and
   * when.
   */
  static final class Bronze {
    final StreamPosition position;
    final ChangeBatch batch;
    final long batchId;
    final BatchStats stats;
    final Instant startedAt;
    final Instant bronzeDone;
    final long bronzeVersion;
    final long bytes;
    final boolean skipped;

    private Bronze(
        StreamPosition position,
        ChangeBatch batch,
        long batchId,
        BatchStats stats,
        Instant startedAt,
        Instant bronzeDone,
        long bronzeVersion,
        long bytes,
        boolean skipped) {
      this.position = position;
      this.batch = batch;
      this.batchId = batchId;
      this.stats = stats;
      this.startedAt = startedAt;
      this.bronzeDone = bronzeDone;
      this.bronzeVersion = bronzeVersion;
      this.bytes = bytes;
      this.skipped = skipped;
    }
  }

  /**
   * The bronze part of {@link #stage}: the bronze commit (only with rows) with transaction id
   * {@code (appId, batch)} and the new position, and the crash points around it. Touches only the
   * target's bronze table, so the bronze commits of different targets may run on different threads
   * at once (a committer round's, {@link CommitBatches}); {@link #afterBronze} follows on the
   * committer's thread.
   *
   * @param files the batch's data files, or null when it has no rows
   */
  Bronze commitBronze(
      StreamPosition position, ChangeBatch batch, long batchId, @Nullable BatchFiles files) {
    BatchStats stats = files == null ? BatchStats.empty(batchId) : files.stats();
    StreamPosition next = next(position, batchId, batch);
    Instant startedAt = Instant.now();
    long bronzeVersion = -1;
    long bytes = 0;
    boolean skipped = false;
    if (stats.rows() > 0) {
      List<DataFileAction> actions = files.files();
      CrashPlan.at(target.crash(), CrashPoint.AFTER_DATA_FILES, batchId);
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
                  stats.toJson(batch)),
              // Off the round's critical path: the next batch waits for no bronze checkpoint.
              CheckpointTiming.IN_BACKGROUND);
      skipped = !result.committed();
      bronzeVersion = result.committed() ? result.version() : -1;
      bytes = actions.stream().mapToLong(DataFileAction::sizeBytes).sum();
    }
    Instant bronzeDone = Instant.now();
    CrashPlan.at(target.crash(), CrashPoint.AFTER_BRONZE_COMMIT, batchId);
    return new Bronze(
        position, batch, batchId, stats, startedAt, bronzeDone, bronzeVersion, bytes, skipped);
  }

  /**
   * The rest of {@link #stage} after {@link #commitBronze}: the gaps the batch skipped recorded as
   * lost periods (a control rewrite, on the committer's thread), its facts rows built.
   */
  Staged afterBronze(Bronze bronze) {
    ChangeBatch batch = bronze.batch;
    recordLost(bronze.position, batch);
    List<Row> facts =
        BatchFacts.rows(
            target,
            bronze.position,
            batch,
            bronze.stats,
            bronze.startedAt,
            Duration.between(bronze.startedAt, bronze.bronzeDone),
            Clock.systemUTC());
    return new Staged(
        this,
        batch,
        bronze.batchId,
        bronze.stats,
        next(bronze.position, bronze.batchId, batch),
        bronze.startedAt,
        bronze.bronzeVersion,
        bronze.bytes,
        bronze.skipped,
        facts);
  }

  /**
   * The last part of a batch's commit, after its facts commit: the verdict, the log line and the
   * metrics.
   */
  CommittedBatch finish(Staged staged) {
    Finalization.Advance advance = afterFacts(staged);
    LocalDateTime verdict =
        finalization.advance(
            advance.table(), advance.endLsn(), advance.endCommitTime(), advance.granularity());
    return finish(staged, verdict);
  }

  /**
   * What follows a batch's facts commit first: its verdict move, to be made ({@link
   * Finalization#advance}, or for a round's batches together {@link Finalization#advanceAll}).
   */
  Finalization.Advance afterFacts(Staged staged) {
    CrashPlan.at(target.crash(), CrashPoint.AFTER_FACTS_COMMIT, staged.batchId);
    return new Finalization.Advance(
        target.bronzePath(),
        staged.batch.toLsn(),
        staged.batch.toCommitTime(),
        target.granularity());
  }

  /** The end of a batch's commit once its verdict moved to {@code verdict}: log line, metrics. */
  CommittedBatch finish(Staged staged, @Nullable LocalDateTime verdict) {
    ChangeBatch batch = staged.batch;
    long batchId = staged.batchId;
    BatchStats stats = staged.stats;
    Logger log = staged.skipped ? DETAIL : LOG;
    log.info(
        "{}batch {}: {} ({}) up to {} committed at {}; bronze version {}, finalized_until {}",
        label,
        batchId,
        Counts.of(stats.rows(), "row", "rows"),
        Counts.byOperation(stats.rows(), stats.inserts(), stats.updates(), stats.deletes()),
        batch.toLsn(),
        batch.toCommitTime(),
        staged.bronzeVersion < 0 ? "unchanged" : staged.bronzeVersion,
        verdict);
    batchesCommitted.inc();
    bytesWritten.inc(staged.bytes);
    List<Row> facts = staged.facts;
    BatchFacts.captureLagSeconds(facts.get(0)).ifPresent(lag -> captureLag.update(Math.round(lag)));
    target.committed(batchId);
    String table = TableMetrics.namespace(target.appId());
    Metrics.counter(table, TableMetrics.BYTES_WRITTEN).inc(staged.bytes);
    Metrics.distribution(table, TableMetrics.COMMIT_DURATION_MS)
        .update(Duration.between(staged.startedAt, Instant.now()).toMillis());
    BatchFacts.captureLagSeconds(facts.get(0))
        .ifPresent(
            lag -> Metrics.gauge(table, TableMetrics.CAPTURE_LAG_SECONDS).set(Math.round(lag)));
    if (verdict != null) {
      Metrics.gauge(table, TableMetrics.FINALIZED_UNTIL_SECONDS)
          .set(verdict.toEpochSecond(java.time.ZoneOffset.UTC));
    }
    return new CommittedBatch(
        batchId,
        stats,
        batch.toLsn().toString(),
        batch.toCommitTime(),
        staged.bronzeVersion,
        staged.skipped,
        verdict,
        staged.bytes,
        target.appId(),
        null);
  }

  /**
   * Records the spans of the gaps {@code batch} skipped as lost periods of the target's verdict
   * ({@link Finalization#recordLost}) before its facts commit, so the verdict the batch then moves
   * never covers them; a replayed batch records them again, which changes nothing.
   */
  private void recordLost(StreamPosition before, ChangeBatch batch) {
    List<SkippedRange> skipped = batch.source().skipped();
    if (skipped.isEmpty()) {
      return;
    }
    List<LostPeriod> lost = new ArrayList<>();
    for (SkippedRange each : skipped) {
      SkippedRange gap = BatchFacts.withStart(each, before);
      lost.add(
          LostPeriod.of(
              gap.lostFrom(),
              gap.lostTo() == null ? batch.toCommitTime() : gap.lostTo(),
              target.granularity()));
    }
    finalization.recordLost(target.bronzePath(), lost);
  }

  /**
   * Records that the target's read stopped at {@code batch} ({@link ChangeBatch#failed}): the
   * {@code table_failed} facts row and domain ({@link RecordedFailure}); nothing else is committed,
   * the position and the verdict stay where {@code position} is.
   *
   * @param position the target's committed position (the batches before the failed one)
   */
  CommittedBatch recordFailure(StreamPosition position, ChangeBatch batch) {
    RecordedFailure failure =
        RecordedFailure.at(
            position, target.bronzePath(), batch.failure(), batch.fromLsn(), target.runStartedAt());
    failure.write(tables, target.factsPath());
    // The message once on the console: the launcher's closing error line says it (the summary
    // names the class); here the class, and the whole text in the log file.
    LOG.warn(
        "Target {} (app id {}) stopped after {}: {}; recorded as table_failed, the other tables go"
            + " on",
        target.bronzePath(),
        target.appId(),
        position.endLsn(),
        failure.errorClass());
    DETAIL.info("Target {} stopped: {}", target.bronzePath(), failure.text());
    return new CommittedBatch(
        position.batchId() + 1,
        BatchStats.empty(position.batchId() + 1),
        position.endLsn().toString(),
        position.endCommitTime() == null ? batch.toCommitTime() : position.endCommitTime(),
        -1,
        true,
        finalization.verdict(target.bronzePath()).orElse(null),
        0,
        target.appId(),
        failure.text());
  }

  /**
   * The end LSN up to which every commit of the target's batches is in the tables: the facts
   * position (a batch's facts row is committed after its bronze commit), or the run's start. A
   * batch that bronze holds and facts does not, left by a committer stopped between the two commits
   * (its task killed on a cluster and retried within the run), is not skipped: committed again, its
   * bronze commit is found by its transaction id and left as it is, and its facts row and verdict
   * are written.
   */
  Lsn committedUpTo() {
    Lsn upTo = target.start().endLsn();
    Optional<StreamPosition> facts =
        StreamPosition.fromJson(
            tables.domainMetadata(target.factsPath(), StreamPosition.factsDomain(target.appId())));
    // The shared facts table's position counts only when it is this bronze table's.
    if (facts.isPresent() && ownsFactsPosition(target.start(), facts.get())) {
      upTo = Lsn.max(upTo, facts.get().endLsn());
    }
    return upTo;
  }

  /**
   * Whether the facts position is the position of the target that started at {@code start}: the
   * same app id and bronze table id, or, for a target whose positions record no table id (written
   * before lakecdc recorded it), the same app id and no table id either.
   */
  static boolean ownsFactsPosition(StreamPosition start, StreamPosition facts) {
    if (start.targetId() == null) {
      return facts.targetId() == null && facts.appId().equals(start.appId());
    }
    return facts.isOf(start.appId(), start.targetId());
  }
}
