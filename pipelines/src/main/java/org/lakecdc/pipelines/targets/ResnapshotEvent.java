package org.lakecdc.pipelines.targets;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.apache.beam.sdk.values.Row;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.io.mssqlcdc.client.CdcClientFactory;
import org.lakecdc.io.mssqlcdc.client.DataLossError;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.transforms.bronze.CrashPlan;
import org.lakecdc.transforms.bronze.CrashPoint;
import org.lakecdc.transforms.delta.DeltaTables;
import org.lakecdc.transforms.facts.FactsTable;
import org.lakecdc.transforms.snapshot.ChunkedSnapshotFacts;
import org.lakecdc.transforms.snapshot.ChunkedSnapshotFacts.Open;
import org.lakecdc.transforms.snapshot.WriteSnapshotToDelta;

/**
 * The {@code resnapshot} facts event of a whole re-snapshot into generation {@code generation}
 * (docs/behaviour.md §9), or its {@code resnapshot_failed} row when its S was purged before its
 * rows could be committed; written by the launcher ({@link Resnapshot}) or by the pipeline's step
 * after the snapshot's commit ({@link SnapshotTask}). Serializable, so that a worker can write it.
 *
 * @param appId the new generation's app id ({@code <appId>.g<n>}, {@link JobConfig#streamAppId()})
 * @param familyAppId the target's app id (generation 0's)
 * @param eventsAppId the transaction id of the generation's events ({@code <appId>.g<n>#events@<
 *     bronze id>})
 * @param bronze the bronze table's path or URI, normalized
 * @param bronzeId the bronze table's Delta table id
 * @param facts the facts table's path or URI, normalized
 * @param captureInstance the capture instance the target reads
 * @param generation the new generation, at least 1
 * @param s the re-snapshot's S
 * @param sCommitTime S's commit time (UTC), or null when unknown
 * @param mode the recorded mode ({@code full})
 * @param lostFrom the start of the gap CDC cleanup left (UTC), or null
 * @param lostTo the end of that gap (UTC), or null
 * @param readStartedAt when the read of the snapshot started (UTC), or null when this run did not
 *     read it (it was committed before a crash)
 * @param clientFactory the source
 * @param crash crash tests only: where the recovery stops, or null
 */
public record ResnapshotEvent(
    String appId,
    String familyAppId,
    String eventsAppId,
    String bronze,
    String bronzeId,
    String facts,
    String captureInstance,
    int generation,
    Lsn s,
    @Nullable Instant sCommitTime,
    String mode,
    @Nullable Instant lostFrom,
    @Nullable Instant lostTo,
    @Nullable Instant readStartedAt,
    CdcClientFactory clientFactory,
    @Nullable CrashPlan crash)
    implements SnapshotEvent {
  private static final long serialVersionUID = 1L;

  /**
   * The event of {@code open}, the recorded re-snapshot {@code next} (the target in the new
   * generation) writes; {@code readStartedAt} null when this run does not read the snapshot.
   */
  static ResnapshotEvent of(Target next, Open open, @Nullable Instant readStartedAt) {
    String bronzeId = next.bronzeId();
    return new ResnapshotEvent(
        next.streamAppId(),
        next.appId(),
        next.startAt(open.s(), open.sCommitTime(), "")
            .ofTarget(next.bronze(), bronzeId)
            .eventsAppId(),
        next.bronze(),
        bronzeId,
        next.facts(),
        next.captureInstance(),
        next.config().generation(),
        open.s(),
        open.sCommitTime(),
        open.mode(),
        open.lostFrom(),
        open.lostTo(),
        readStartedAt,
        next.config().clientFactory(),
        next.config().crash());
  }

  @Override
  public boolean written(DeltaTables tables) {
    return tables.latestTransactionVersion(facts, eventsAppId).orElse(-1) >= generation;
  }

  /**
   * Writes the event once (transaction {@code eventsAppId} version = generation, as a chunked
   * re-snapshot's completion row): {@code min_lsn = max_lsn = end_lsn = S}, {@code rows} (the rows
   * recorded with the snapshot commit, also when a rerun writes the event after a crash between
   * that commit and the event; NULL only for a record without them) and the read's timing (NULL
   * when this event's writer did not time the read: the snapshot was committed before a crash), the
   * gap ({@code lost_from_ts}, {@code lost_to_ts}, also the {@code retention_watermark_ts}). The
   * crash points {@link CrashPoint#AFTER_RESNAPSHOT_COMMIT} (before) and {@link
   * CrashPoint#AFTER_RESNAPSHOT_EVENT} (after) are checked here.
   */
  @Override
  public void write(
      DeltaTables tables, WriteSnapshotToDelta.SnapshotRecord record, @Nullable Long rows) {
    CrashPlan.atStep(crash, CrashPoint.AFTER_RESNAPSHOT_COMMIT);
    if (!written(tables)) {
      Instant startedAt = rows == null ? null : readStartedAt;
      ObjectNode detail = JsonNodeFactory.instance.objectNode();
      detail.put("snapshot", s.toString());
      detail.put("generation", generation);
      detail.put("mode", mode);
      append(
          tables,
          row(ChunkedSnapshotFacts.EVENT_RESNAPSHOT, detail)
              .set(FactsTable.ROWS, rows)
              .set(FactsTable.MIN_COMMIT_TS, sCommitTime)
              .set(FactsTable.MAX_COMMIT_TS, sCommitTime)
              .set(FactsTable.STARTED_AT, startedAt)
              .set(
                  FactsTable.DURATION_MS,
                  startedAt == null
                      ? null
                      : Math.max(0, Instant.now().toEpochMilli() - startedAt.toEpochMilli()))
              .set(FactsTable.RETENTION_WATERMARK_TS, lostTo)
              .build(),
          eventsAppId);
    }
    CrashPlan.atStep(crash, CrashPoint.AFTER_RESNAPSHOT_EVENT);
  }

  /**
   * Writes the {@code resnapshot_failed} row of the generation (once per generation: transaction
   * {@code <appId>#snapshots@<bronze id>#failed}; nothing of it is in bronze): the anti-loop guard
   * counts it, and the next attempt takes the next generation number. Returns the error that fails
   * the table.
   */
  @Override
  public DataLossError refused(DeltaTables tables, Lsn s, Lsn firstMissing, Lsn minLsn) {
    ObjectNode detail = JsonNodeFactory.instance.objectNode();
    detail.put("generation", generation);
    detail.put("snapshot", s.toString());
    detail.put(
        "reason",
        "CDC cleanup purged the changes after S before the snapshot could be committed (min_lsn "
            + minLsn
            + "); nothing was committed");
    detail.put("target_id", bronzeId);
    append(
        tables,
        row(ChunkedSnapshotFacts.EVENT_RESNAPSHOT_FAILED, detail).set(FactsTable.ROWS, 0L).build(),
        ChunkedSnapshotFacts.openAppId(familyAppId, bronzeId) + "#failed");
    return new DataLossError(
        captureInstance,
        firstMissing,
        minLsn,
        captureInstance
            + ": the re-snapshot into generation "
            + generation
            + " at S = "
            + s
            + " outlived the CDC retention: cleanup purged the changes after S (min_lsn is now "
            + minLsn
            + ") before the read could be committed, so nothing was committed and the next"
            + " attempt is generation "
            + (generation + 1)
            + ". Lengthen the retention (sys.sp_cdc_change_job @retention), read faster"
            + " (--numPartitions), or use --snapshot=chunked, then rerun with"
            + " --resnapshotIntervalDays=0.");
  }

  /** Appends {@code row} to the facts table once: transaction {@code (txnAppId, generation)}. */
  private void append(DeltaTables tables, Row row, String txnAppId) {
    tables.append(facts, FactsTable.SCHEMA, List.of(row), txnAppId, generation, Map.of());
  }

  /**
   * The columns the event rows share: the new generation's app id, the event, {@code min_lsn =
   * max_lsn = end_lsn} = S and its commit time, the gap, the detail, the target, now.
   */
  private FactsTable.Builder row(String event, ObjectNode detail) {
    return FactsTable.row()
        .set(FactsTable.APP_ID, appId)
        .set(FactsTable.EVENT, event)
        .set(FactsTable.MIN_LSN, s.toString())
        .set(FactsTable.MAX_LSN, s.toString())
        .set(FactsTable.END_LSN, s.toString())
        .set(FactsTable.END_COMMIT_TS, sCommitTime)
        .set(FactsTable.LOST_FROM_TS, lostFrom)
        .set(FactsTable.LOST_TO_TS, lostTo)
        .set(FactsTable.DETAIL, detail.toString())
        .set(FactsTable.TARGET, bronze)
        .set(FactsTable.WRITTEN_AT, Instant.now());
  }
}
