package org.lakecdc.pipelines.targets;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.io.mssqlcdc.client.CdcClient;
import org.lakecdc.io.mssqlcdc.client.CdcClientFactory;
import org.lakecdc.io.mssqlcdc.client.Commit;
import org.lakecdc.io.mssqlcdc.client.DataLossError;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.transforms.delta.DeltaTables;
import org.lakecdc.transforms.facts.FactsTable;
import org.lakecdc.transforms.position.StreamPosition;
import org.lakecdc.transforms.snapshot.WriteSnapshotToDelta;

/**
 * The {@code bootstrap} facts event of a target's snapshot or seed, written once (transaction id
 * {@code <appId>#<table id>#events}, version 0): on the launcher ({@link Bootstrap}) or, for a
 * bootstrap snapshot read by the pipeline, by the step after its commit. Serializable, so that a
 * worker can write it.
 *
 * @param appId the target's app id (generation 0's)
 * @param eventsAppId the transaction id of the target's events ({@link
 *     StreamPosition#eventsAppId()})
 * @param bronze the bronze table's path or URI, normalized
 * @param facts the facts table's path or URI, normalized
 * @param captureInstance the capture instance the target reads
 * @param clientFactory the source, asked for the commit time of S
 */
public record BootstrapFact(
    String appId,
    String eventsAppId,
    String bronze,
    String facts,
    String captureInstance,
    CdcClientFactory clientFactory)
    implements SnapshotEvent {

  /** The event of {@code target} whose stream starts at {@code start}. */
  public static BootstrapFact of(Target target, StreamPosition start) {
    return new BootstrapFact(
        target.appId(),
        start.eventsAppId(),
        target.bronze(),
        target.facts(),
        target.captureInstance(),
        target.config().clientFactory());
  }

  /** Whether the event is already in the facts table. */
  @Override
  public boolean written(DeltaTables tables) {
    return tables.latestTransactionVersion(facts, eventsAppId).isPresent();
  }

  /**
   * Appends the event of {@code record} (the committed snapshot or seed record) with {@code rows}
   * (null: unknown), in one facts commit of transaction {@code (eventsAppId, 0)}: a second write is
   * skipped by Delta's transaction id.
   */
  @Override
  public void write(
      DeltaTables tables, WriteSnapshotToDelta.SnapshotRecord record, @Nullable Long rows) {
    WriteSnapshotToDelta.SeedSource seed = record.seed();
    String detail =
        seed == null
            ? "whole snapshot of " + captureInstance
            : "seed of " + seed.table() + " as of " + seed.asOf() + " (" + captureInstance + ")";
    Instant time;
    try (CdcClient client = clientFactory.open()) {
      time = client.lastCommitAtOrBefore(record.lsn()).map(Commit::commitTime).orElse(null);
    }
    String s = record.lsn().toString();
    tables.append(
        facts,
        FactsTable.SCHEMA,
        List.of(
            FactsTable.row()
                .set(FactsTable.APP_ID, appId)
                .set(FactsTable.ROWS, rows)
                .set(FactsTable.EVENT, FactsTable.EVENT_BOOTSTRAP)
                .set(FactsTable.MIN_LSN, s)
                .set(FactsTable.MAX_LSN, s)
                .set(FactsTable.END_LSN, s)
                .set(FactsTable.END_COMMIT_TS, time)
                .set(FactsTable.DETAIL, detail)
                .set(FactsTable.TARGET, bronze)
                .set(FactsTable.WRITTEN_AT, Instant.now())
                .build()),
        eventsAppId,
        0,
        Map.of());
  }

  /**
   * The bootstrap snapshot's error ({@link Bootstrap#outlived}): the target stays new, and the next
   * run takes a new snapshot; nothing is recorded here.
   */
  @Override
  public DataLossError refused(DeltaTables tables, Lsn s, Lsn firstMissing, Lsn minLsn) {
    return Bootstrap.outlived(captureInstance, bronze, s, firstMissing, minLsn);
  }
}
