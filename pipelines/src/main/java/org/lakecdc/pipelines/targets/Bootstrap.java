package org.lakecdc.pipelines.targets;

import java.io.PrintStream;
import java.time.Instant;
import java.util.List;
import java.util.Map;
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
import org.lakecdc.transforms.facts.FactsTable;
import org.lakecdc.transforms.position.StreamPosition;
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
    MssqlCdcIO.Snapshot snapshot = snapshotRead(target);
    Lsn s = snapshot.resolveSnapshotLsn();
    Instant time;
    try (CdcClient client = target.config().clientFactory().open()) {
      time = ChunkedSnapshot.commitTime(client, s);
    }
    StreamPosition atS =
        target.startAt(s, time, target.captureInstance()).ofTarget(target.bronze(), bronzeId);
    // The mode lock's record that a whole snapshot is being read (docs/behaviour.md §6.10).
    ChunkedSnapshot.writeFullOpen(target, s, time, ChunkedSnapshot.keyColumns(target));
    out.printf(
        "New target %s: taking a snapshot of %s stamped with S = %s (committed at %s)%n",
        target.bronze(), target.captureInstance(), s, time);
    try {
      return readInto(target, beamOptions, out, atS);
    } catch (Outlived e) {
      throw new DataLossError(
          target.captureInstance(),
          e.firstMissing(),
          e.minLsn(),
          target.captureInstance()
              + ": the bootstrap snapshot of "
              + target.bronze()
              + " at S = "
              + s
              + " outlived the CDC retention: cleanup purged the changes after S (min_lsn is now "
              + e.minLsn()
              + ") before the read could be committed, so nothing was committed and the next run"
              + " takes a new snapshot. Lengthen the retention (sys.sp_cdc_change_job"
              + " @retention), read faster (--numPartitions), or use --snapshot=chunked.");
    }
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
    Optional<Lsn> s = record.map(WriteSnapshotToDelta.SnapshotRecord::lsn);
    WriteSnapshotToDelta.SeedSource seed = record.get().seed();
    String detail =
        seed == null
            ? "whole snapshot of " + target.captureInstance()
            : "seed of "
                + seed.table()
                + " as of "
                + seed.asOf()
                + " ("
                + target.captureInstance()
                + ")";
    // The rows recorded with the snapshot (or seed) commit, also after a crash between that commit
    // and this event (docs/behaviour.md §6.5).
    Long rows = null;
    if (snapshotRows >= 0) {
      rows = snapshotRows;
    } else if (record.get().rows() >= 0) {
      rows = record.get().rows();
    }
    String eventsApp = start.eventsAppId();
    if (target.tables().latestTransactionVersion(target.facts(), eventsApp).isPresent()) {
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
    Instant time;
    try (CdcClient client = target.config().clientFactory().open()) {
      time = client.lastCommitAtOrBefore(s.get()).map(Commit::commitTime).orElse(null);
    }
    target.appendFacts(
        List.of(
            FactsTable.row()
                .set(FactsTable.APP_ID, target.appId())
                .set(FactsTable.ROWS, rows)
                .set(FactsTable.EVENT, FactsTable.EVENT_BOOTSTRAP)
                .set(FactsTable.MIN_LSN, s.get().toString())
                .set(FactsTable.MAX_LSN, s.get().toString())
                .set(FactsTable.END_LSN, s.get().toString())
                .set(FactsTable.END_COMMIT_TS, time)
                .set(FactsTable.DETAIL, detail)
                .set(FactsTable.TARGET, target.bronze())
                .set(FactsTable.WRITTEN_AT, Instant.now())
                .build()),
        eventsApp,
        0,
        Map.of());
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
