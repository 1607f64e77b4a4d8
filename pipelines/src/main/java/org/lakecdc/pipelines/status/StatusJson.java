package org.lakecdc.pipelines.status;

import static org.lakecdc.pipelines.status.StatusModel.*;
import static org.lakecdc.pipelines.status.StatusReader.*;
import static org.lakecdc.pipelines.status.StatusText.*;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Instant;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.io.mssqlcdc.client.Commit;
import org.lakecdc.pipelines.cli.TableReading;
import org.lakecdc.transforms.finalization.LostPeriod;

/** The JSON rendering of a {@link StatusModel.Report} (docs/status.md lists the fields). */
public final class StatusJson {
  private StatusJson() {}

  /** The JSON form (docs/status.md lists the fields). */
  public static ObjectNode json(Report report) {
    ObjectNode root = JSON.createObjectNode();
    root.put("facts_table", report.facts());
    root.put("control_table", report.control());
    root.put("read_at", report.readAt().toString());
    ObjectNode source = root.putObject("source");
    source.put("given", report.sourceGiven());
    putCommit(source, report.newest().orElse(null));
    ArrayNode silvers = root.putArray("silver_tables");
    for (SilverStatus silver : report.silvers()) {
      ObjectNode node = silvers.addObject();
      node.put("table", silver.table());
      node.put("kind", silver.kind());
      node.put("applied_lsn", silver.appliedLsn());
      TableReading.put(node, "finalized_until", silver.finalizedUntil());
    }
    ArrayNode list = root.putArray("tables");
    for (TableStatus t : report.tables()) {
      ObjectNode node = list.addObject();
      node.put("target", t.target());
      node.put("target_exists", t.targetExists());
      node.put("app_id", t.appId());
      node.put("generation", t.generation());
      node.put("generation_app_id", t.generationAppId());
      node.put("capture_instance", t.captureInstance());
      ObjectNode position = node.putObject("position");
      position.put("end_lsn", t.positionLsn());
      position.put("end_commit_ts", instant(t.positionCommitTime()));
      if (t.lastBatch() == null) {
        node.putNull("last_batch");
      } else {
        ObjectNode batch = node.putObject("last_batch");
        batch.put("batch_id", t.lastBatch().batchId());
        batch.put("written_at", instant(t.lastBatch().writtenAt()));
      }
      node.put("rows_today", t.rowsToday());
      node.put(
          "finalized_until",
          t.verdict() == null ? null : instant(TableReading.utc(t.verdict().finalizedUntil())));
      ArrayNode granularities = node.putArray("granularity");
      t.granularities().forEach(g -> granularities.add(g.toString()));
      node.put("lag_seconds", t.lagSeconds());
      node.put(
          "lag_basis", t.lagSeconds() == null ? null : t.lagFromSource() ? "source" : "last_batch");
      if (t.failure() == null) {
        node.putNull("failure");
      } else {
        ObjectNode failure = node.putObject("failure");
        String[] error = errorOf(t.failure().detail());
        failure.put("error_class", error[0]);
        failure.put("message", error[1]);
        failure.put("end_lsn", t.failure().lsn());
        failure.put("written_at", instant(t.failure().writtenAt()));
      }
      if (t.bootstrap() == null) {
        node.putNull("bootstrap");
      } else {
        ObjectNode bootstrap = node.putObject("bootstrap");
        bootstrap.put("rows", t.bootstrap().rows());
        bootstrap.put("snapshot_lsn", t.bootstrap().lsn());
        bootstrap.put("written_at", instant(t.bootstrap().writtenAt()));
        bootstrap.put("chunks", t.bootstrapChunks());
      }
      membership(node, "joined", t.joined());
      membership(node, "left", t.left());
      OpenSnapshot o = t.openSnapshot();
      if (o == null) {
        node.putNull("open_snapshot");
      } else {
        ObjectNode open = node.putObject("open_snapshot");
        open.put("mode", o.mode());
        open.put("kind", o.kind());
        open.put("snapshot_lsn", o.lsn().toString());
        open.put("generation", o.generation());
        open.put("written_at", instant(o.openedAt()));
        ChunkProgress p = o.chunks();
        if (p == null) {
          open.putNull("chunks");
        } else {
          boolean planned = p.planned() >= 0;
          ObjectNode chunks = open.putObject("chunks");
          chunks.put("planned", planned ? p.planned() : null);
          chunks.put("done", p.done());
          chunks.put("chunks_per_wave", planned ? p.chunksPerWave() : null);
          chunks.put("chunk_rows", planned ? p.chunkRows() : null);
          chunks.put("waves_planned", planned ? p.wavesPlanned() : null);
          chunks.put("waves_done", planned ? p.wavesDone() : null);
          chunks.put("rows", p.rows());
          chunks.put("newest_chunk_at", instant(p.newestChunkAt()));
        }
      }
      putLosses(node, t);
    }
    return root;
  }

  /** The fields {@code resnapshots}, {@code data_skipped} and {@code lost_periods} of a table. */
  static void putLosses(ObjectNode node, TableStatus t) {
    ObjectNode resnapshots = node.putObject("resnapshots");
    resnapshots.put("count", t.resnapshots());
    ResnapshotFact r = t.newestResnapshot();
    if (r == null) {
      resnapshots.putNull("newest");
    } else {
      ObjectNode newest = resnapshots.putObject("newest");
      newest.put("generation", r.generation());
      newest.put("app_id", r.appId());
      newest.put("mode", r.mode());
      newest.put("snapshot_lsn", r.snapshotLsn());
      newest.put("rows", r.rows());
      newest.put("chunks", r.chunks());
      newest.put("written_at", instant(r.writtenAt()));
      newest.put("lost_from_ts", instant(r.lostFrom()));
      newest.put("lost_to_ts", instant(r.lostTo()));
    }
    FailedResnapshot f = t.failedResnapshot();
    if (f == null) {
      resnapshots.putNull("failed");
    } else {
      ObjectNode failed = resnapshots.putObject("failed");
      failed.put("generation", f.generation());
      failed.put("snapshot_lsn", f.snapshotLsn());
      failed.put("reason", f.reason());
      failed.put("written_at", instant(f.writtenAt()));
    }
    ObjectNode skipped = node.putObject("data_skipped");
    skipped.put("count", t.skipped());
    SkippedGap g = t.newestSkipped();
    if (g == null) {
      skipped.putNull("newest");
    } else {
      ObjectNode newest = skipped.putObject("newest");
      newest.put("generation", g.generation());
      newest.put("app_id", g.appId());
      newest.put("batch_id", g.batchId());
      newest.put("capture_instance", g.captureInstance());
      newest.put("from", g.from());
      newest.put("to", g.to());
      newest.put("lost_from_ts", instant(g.lostFrom()));
      newest.put("lost_to_ts", instant(g.lostTo()));
      newest.put("certain", g.certain());
      newest.put("reason", g.reason());
      newest.put("written_at", instant(g.writtenAt()));
    }
    ArrayNode lost = node.putArray("lost_periods");
    for (LostPeriod p : t.lostPeriods()) {
      ObjectNode period = lost.addObject();
      TableReading.put(period, "from", p.from());
      TableReading.put(period, "to", p.to());
    }
  }

  static void putCommit(ObjectNode node, @Nullable Commit commit) {
    node.put("max_lsn", commit == null ? null : commit.lsn().toString());
    node.put("max_commit_ts", commit == null ? null : instant(commit.commitTime()));
  }

  static @Nullable String instant(@Nullable Instant instant) {
    return instant == null ? null : instant.toString();
  }

  /**
   * A {@code joined} or {@code left} row as {@code {"written_at": <UTC ISO-8601>, "listing": <where
   * it was listed>}}, or null.
   */
  private static void membership(
      ObjectNode node, String key, StatusModel.@Nullable FactsEvent row) {
    if (row == null) {
      node.putNull(key);
      return;
    }
    ObjectNode event = node.putObject(key);
    event.put("written_at", instant(row.writtenAt()));
    event.put("listing", row.detail());
  }
}
