package org.lakecdc.pipelines.targets;

import java.io.PrintStream;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.options.PipelineOptions;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.io.mssqlcdc.MssqlCdcIO;
import org.lakecdc.io.mssqlcdc.client.CdcClient;
import org.lakecdc.io.mssqlcdc.client.Commit;
import org.lakecdc.io.mssqlcdc.client.DataLossError;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.io.mssqlcdc.read.DataLossPolicy;
import org.lakecdc.io.mssqlcdc.read.StartingLsn;
import org.lakecdc.pipelines.cli.JobExit;
import org.lakecdc.transforms.Counts;
import org.lakecdc.transforms.position.StreamPosition;
import org.lakecdc.transforms.snapshot.ChunkedSnapshotFacts;
import org.lakecdc.transforms.snapshot.WriteSnapshotToDelta;

/**
 * How a new target begins: the bootstrap snapshot (a whole snapshot stamped with S, the {@code
 * max_lsn} recorded before any row is read, in one bronze commit that records S and the position at
 * S), its {@code bootstrap} facts event (written once, also after a crash between the two), or,
 * without a snapshot, the position right before where the read starts.
 */
public final class Bootstrap {
  private Bootstrap() {}

  /**
   * Takes the bootstrap snapshot of a new target: records S ({@code max_lsn} before any row is
   * read; docs/tables.md "Bronze"), writes the full {@code snapshot_open} facts row at S, reads the
   * table in key ranges and writes the rows to bronze in one commit that also records S and the
   * position at S.
   *
   * @return the snapshot's rows
   * @throws DataLossError when CDC cleanup purged the changes right after S before the read could
   *     be committed: nothing is committed, the target stays new and the next run takes a new
   *     snapshot
   */
  static long snapshot(
      Target target, PipelineOptions beamOptions, PrintStream out, String bronzeId) {
    StreamPosition atS = open(target, out, bronzeId);
    try {
      return readInto(target, beamOptions, out, atS);
    } catch (Outlived e) {
      throw outlived(
          target.captureInstance(), target.bronze(), atS.endLsn(), e.firstMissing(), e.minLsn());
    }
  }

  /**
   * Opens the bootstrap snapshot of a new target without reading a row: records S ({@code max_lsn}
   * before any row is read; docs/tables.md "Bronze") and its commit time, writes the full {@code
   * snapshot_open} facts row at S and prints {@code New target <bronze>: taking a snapshot of <ci>
   * stamped with S = <S> (committed at <UTC instant>)}; when an earlier run of the target recorded
   * the S ({@link #openOfAnEarlierAttempt}), followed by {@code , the S recorded at <UTC instant>
   * by an earlier run of this target (stopped, or still running)}: the facts table cannot tell a
   * run that stopped from one still reading (two first runs started together).
   *
   * @return the position at S (batch -1), of the target's bronze table
   */
  static StreamPosition open(Target target, PrintStream out, String bronzeId) {
    Optional<ChunkedSnapshotFacts.Open> earlier = openOfAnEarlierAttempt(target);
    Lsn s;
    Instant time;
    if (earlier.isPresent()) {
      s = earlier.get().s();
      time = earlier.get().sCommitTime();
    } else {
      s = snapshotRead(target).resolveSnapshotLsn();
      try (CdcClient client = target.config().clientFactory().open()) {
        time = ChunkedSnapshot.commitTime(client, s);
      }
      // The mode lock's record that a whole snapshot is being read (docs/behaviour.md §6.10).
      ChunkedSnapshot.writeFullOpen(target, s, time, ChunkedSnapshot.keyColumns(target));
    }
    StreamPosition atS =
        target.startAt(s, time, target.captureInstance()).ofTarget(target.bronze(), bronzeId);
    out.printf(
        "New target %s: taking a snapshot of %s stamped with S = %s (committed at %s)%s%n",
        target.bronze(),
        target.captureInstance(),
        s,
        time,
        earlier.map(Bootstrap::whoseS).orElse(""));
    return atS;
  }

  /** Whose S a snapshot opened by an earlier run is taken at, for the {@code New target} line. */
  private static String whoseS(ChunkedSnapshotFacts.Open open) {
    return open.writtenAt() == null
        ? ", the S recorded earlier by a run of this target (stopped, or still running)"
        : ", the S recorded at "
            + open.writtenAt()
            + " by an earlier run of this target (stopped, or still running)";
  }

  /**
   * The whole bootstrap snapshot an earlier run of {@code target} opened (its {@code snapshot_open}
   * row, same app id, capture instance and bronze table) and did not commit, while CDC still holds
   * every change after its S: the snapshot is taken again at that S, so the changes since S stay in
   * the change log (docs/behaviour.md §6.1: a rerun never takes a newer S than the snapshot already
   * opened). Empty when there is none, or when CDC cleanup passed its S (then a new S is the only
   * snapshot left to take).
   */
  private static Optional<ChunkedSnapshotFacts.Open> openOfAnEarlierAttempt(Target target) {
    ChunkedSnapshotFacts.Snapshots recorded = ChunkedSnapshot.read(target);
    Optional<ChunkedSnapshotFacts.Open> open =
        recorded
            .fullOpen()
            .filter(o -> !recorded.fullOpenComplete())
            .filter(o -> o.generation() == 0 && o.appId().equals(target.appId()))
            .filter(o -> target.captureInstance().equals(o.captureInstance()))
            .filter(o -> o.sCommitTime() != null);
    if (open.isEmpty()) {
      return open;
    }
    try (CdcClient client = target.config().clientFactory().open()) {
      return StartingLsn.lostAfter(client, target.captureInstance(), open.get().s()).isPresent()
          ? Optional.empty()
          : open;
    }
  }

  /**
   * The error of a bootstrap snapshot of {@code bronze} at {@code s} that outlived the CDC
   * retention: nothing was committed, and the next run takes a new snapshot.
   *
   * @param firstMissing the first change LSN after S
   * @param minLsn the capture instance's {@code min_lsn} when the commit was refused
   */
  public static DataLossError outlived(
      String captureInstance, String bronze, Lsn s, Lsn firstMissing, Lsn minLsn) {
    return new DataLossError(
        captureInstance,
        firstMissing,
        minLsn,
        captureInstance
            + ": the bootstrap snapshot of "
            + bronze
            + " at S = "
            + s
            + " outlived the CDC retention: cleanup purged the changes after S (min_lsn is now "
            + minLsn
            + ") before the read could be committed, so nothing was committed and the next run"
            + " takes a new snapshot. Lengthen the retention (sys.sp_cdc_change_job"
            + " @retention), read faster (--numPartitions), or use --snapshot=chunked.");
  }

  /**
   * A whole snapshot whose S CDC cleanup passed before its rows could be committed ({@link
   * WriteSnapshotToDelta.FromSnapshot#withRetentionCheck}): nothing of it is in bronze. Its caller
   * says what that means for the target.
   */
  static final class Outlived extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final Lsn firstMissing;
    private final Lsn minLsn;

    Outlived(Lsn firstMissing, Lsn minLsn, @Nullable Throwable cause) {
      super("the changes from " + firstMissing + " are purged (min_lsn " + minLsn + ")", cause);
      this.firstMissing = firstMissing;
      this.minLsn = minLsn;
    }

    /** The first change LSN after S. */
    Lsn firstMissing() {
      return firstMissing;
    }

    /** The capture instance's {@code min_lsn} when the commit was refused. */
    Lsn minLsn() {
      return minLsn;
    }
  }

  /**
   * The whole-snapshot read of {@code target}'s table, with S resolved when the pipeline is built.
   */
  static MssqlCdcIO.Snapshot snapshotRead(Target target) {
    return MssqlCdcIO.snapshot()
        .withSourceConfiguration(target.config().source())
        .withNumPartitions(Math.max(target.config().numPartitions(), 4))
        .withIsolationLevel(target.config().isolation());
  }

  /**
   * Reads the table in key ranges, every row stamped with {@code atS}'s LSN, and writes the rows to
   * bronze in one commit that records the snapshot (of {@code atS}'s generation) and {@code atS} as
   * the position; a snapshot of that generation already committed is kept (a rerun). The commit is
   * made only while CDC still holds the changes right after S (checked right before it): rows read
   * over a span whose changes are gone are no snapshot, and never reach bronze.
   *
   * @return the rows of the generation's committed snapshot
   * @throws Outlived when cleanup purged the changes right after S before the commit: nothing of
   *     the snapshot was committed
   */
  static long readInto(
      Target target, PipelineOptions beamOptions, PrintStream out, StreamPosition atS) {
    Pipeline pipeline = Pipeline.create(beamOptions);
    pipeline.apply(
        "Snapshot " + target.captureInstance() + " to bronze",
        WriteSnapshotToDelta.from(snapshotRead(target))
            .to(target.bronze(), atS)
            .withHadoopConf(target.config().hadoopConf())
            .withRowListener(SnapshotProgress.listener(target.captureInstance()))
            .withRetentionCheck(target.config().clientFactory(), target.captureInstance()));
    try {
      JobExit.run(pipeline);
    } catch (RuntimeException e) {
      // The committer refused a snapshot whose S was purged (the runner may wrap or rename its
      // error): the source says so again.
      throwIfOutlived(target, atS, e);
      throw e;
    }
    if (!committed(target, atS)) {
      throwIfOutlived(target, atS, null);
      WriteSnapshotToDelta.commit(target.tables(), target.bronze(), atS, List.of(), 0);
    }
    // The rows recorded with the snapshot commit: bronze is never scanned to count them.
    long rows =
        WriteSnapshotToDelta.committedSnapshotRows(target.tables(), target.bronze()).orElse(0L);
    out.printf("Snapshot: %s written to %s%n", Counts.of(rows, "row", "rows"), target.bronze());
    return rows;
  }

  private static boolean committed(Target target, StreamPosition atS) {
    return WriteSnapshotToDelta.committedRecord(target.tables(), target.bronze())
        .filter(r -> r.generation() >= atS.generation())
        .isPresent();
  }

  /**
   * Throws {@link Outlived} when no snapshot of {@code atS}'s generation is committed and CDC no
   * longer holds the changes right after its S.
   */
  private static void throwIfOutlived(
      Target target, StreamPosition atS, @Nullable Throwable cause) {
    if (committed(target, atS)) {
      return;
    }
    try (CdcClient client = target.config().clientFactory().open()) {
      Optional<Lsn> min = StartingLsn.lostAfter(client, target.captureInstance(), atS.endLsn());
      if (min.isPresent()) {
        throw new Outlived(client.incrementLsn(atS.endLsn()), min.get(), cause);
      }
    }
  }

  /**
   * Writes the {@code bootstrap} event of the target's snapshot or seed once (transaction id {@code
   * <appId>#events}, version 0); offered on every run, so a crash between the snapshot commit and
   * this write only delays it.
   */
  static void writeBootstrapFact(Target target, StreamPosition start, long snapshotRows) {
    Optional<WriteSnapshotToDelta.SnapshotRecord> record =
        WriteSnapshotToDelta.committedRecord(target.tables(), target.bronze());
    if (target.config().generation() > 0 || record.isEmpty() || record.get().generation() > 0) {
      // A re-snapshot's record: its event is the resnapshot row (Resnapshot).
      return;
    }
    // The rows recorded with the snapshot (or seed) commit, also after a crash between that commit
    // and this event (docs/behaviour.md §6.5).
    Long rows = null;
    if (snapshotRows >= 0) {
      rows = snapshotRows;
    } else if (record.get().rows() >= 0) {
      rows = record.get().rows();
    }
    BootstrapFact fact = BootstrapFact.of(target, start);
    if (fact.written(target.tables())) {
      return;
    }
    if (start.targetId() == null
        || target.bronzePosition().filter(p -> p.targetId() == null).isPresent()) {
      // A target whose bronze position records no table id wrote its event before lakecdc named
      // the event's transaction after the table.
      String legacy = target.appId() + "#events";
      if (target.tables().latestTransactionVersion(target.facts(), legacy).isPresent()) {
        return;
      }
    }
    fact.write(target.tables(), record.get(), rows);
  }

  /** The position of a new target without a snapshot: right before where the read starts. */
  static StreamPosition startPosition(Target target) {
    try (CdcClient client = target.config().clientFactory().open()) {
      Lsn last = target.config().startingLsn().lastProcessed(client, target.captureInstance());
      if (target.config().startingLsn().kind() == StartingLsn.Kind.EXPLICIT
          && target.config().onDataLoss() == DataLossPolicy.FAIL) {
        // With skip the first batch records the gap; with resnapshot the pre-flight recovers.
        StartingLsn.checkExplicit(client, target.captureInstance(), last);
      }
      Instant time = client.commit(last).map(Commit::commitTime).orElse(null);
      return target.startAt(last, time, target.captureInstance());
    }
  }
}
