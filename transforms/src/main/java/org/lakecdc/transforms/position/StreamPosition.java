package org.lakecdc.transforms.position;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.Serializable;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;

/**
 * Where a target's stream stands: the last processed commit LSN and its commit time, the last batch
 * number, the generation and the job's app id. Stored as JSON in Delta domain metadata, atomically
 * with the commit that made it true (each bronze commit, each facts commit of a batch, the snapshot
 * commit): <em>Delta is the checkpoint</em>. A new run resumes right after {@link #endLsn()}.
 *
 * <p>JSON form: {@code {"end_lsn": "0x…", "end_commit_ts": "2026-11-01T04:37:51.000Z" | null,
 * "batch_id": 3, "generation": 0, "app_id": "dbo_orders", "capture_instance": "dbo_orders",
 * "target": "/lake/dbo_orders", "target_id": "5f0c…"}}. Keys are only ever added; readers ignore
 * unknown keys. {@code target} and {@code target_id} are absent from positions written before
 * lakecdc recorded them.
 *
 * <p>A position is a target's own only when it names the target's bronze table by its Delta table
 * id ({@link #isOf}): the facts table is shared by many targets, and a path can be deleted and a
 * new table created at it. A facts position of another target, or of a table that no longer exists,
 * never counts as this target's.
 *
 * @param appId the job's app id (the bronze transaction app id)
 * @param generation the generation (0 until a re-snapshot starts generation 1)
 * @param batchId the last batch written, or -1 when only a snapshot was written
 * @param endLsn the last processed LSN
 * @param endCommitTime the UTC commit time of {@code endLsn}, or null when it has no row in {@code
 *     cdc.lsn_time_mapping}
 * @param captureInstance the capture instance the last batch read last (the newer one after a
 *     switch)
 * @param target the bronze table's path or URI ({@code TablePaths.normalize}d), or null in a
 *     position written before it was recorded
 * @param targetId the bronze table's Delta table id ({@code metaData.id}), or null likewise
 */
public record StreamPosition(
    String appId,
    int generation,
    long batchId,
    Lsn endLsn,
    @Nullable Instant endCommitTime,
    String captureInstance,
    @Nullable String target,
    @Nullable String targetId)
    implements Serializable {
  /** Domain of the position in the bronze table. */
  public static final String BRONZE_DOMAIN = "mssql_cdc.position";

  private static final ObjectMapper JSON = new ObjectMapper();

  public StreamPosition {
    Objects.requireNonNull(appId, "appId");
    Objects.requireNonNull(endLsn, "endLsn");
    Objects.requireNonNull(captureInstance, "captureInstance");
  }

  /** Domain of a job's position in the shared facts table: one per app id. */
  public static String factsDomain(String appId) {
    return "mssql_cdc.position." + appId;
  }

  /**
   * A position of a target not yet recorded with its bronze table.
   *
   * @param appId the job's app id
   * @param generation the generation
   * @param batchId the last batch written, or -1
   * @param endLsn the last processed LSN
   * @param endCommitTime its UTC commit time, or null
   * @param captureInstance the capture instance read last
   */
  public StreamPosition(
      String appId,
      int generation,
      long batchId,
      Lsn endLsn,
      @Nullable Instant endCommitTime,
      String captureInstance) {
    this(appId, generation, batchId, endLsn, endCommitTime, captureInstance, null, null);
  }

  /** The position after {@code batch}, of the same target. */
  public StreamPosition next(long batchId, Lsn endLsn, Instant endCommitTime, String instance) {
    return new StreamPosition(
        appId, generation, batchId, endLsn, endCommitTime, instance, target, targetId);
  }

  /**
   * This position recorded as the position of the bronze table at {@code target} with Delta table
   * id {@code targetId}.
   */
  public StreamPosition ofTarget(String target, String targetId) {
    return new StreamPosition(
        appId,
        generation,
        batchId,
        endLsn,
        endCommitTime,
        captureInstance,
        Objects.requireNonNull(target, "target"),
        Objects.requireNonNull(targetId, "targetId"));
  }

  /**
   * Whether this position is the position of the bronze table with Delta table id {@code tableId}
   * written under {@code appId}. A position that records no table id (written before lakecdc
   * recorded it) is nobody's by this test: callers decide legacy positions from bronze's own.
   */
  public boolean isOf(String otherAppId, String tableId) {
    return appId.equals(otherAppId) && targetId != null && targetId.equals(tableId);
  }

  /**
   * The facts transaction app id of this target's batch rows: {@code <appId>#facts@<targetId>}
   * ({@code <appId>#facts} for a position that records no table id), so that a new table under a
   * reused app id numbers its batches from 0 again without meeting the old table's transaction
   * versions.
   */
  public String factsAppId() {
    return appId + "#facts" + (targetId == null ? "" : "@" + targetId);
  }

  /**
   * The facts transaction app id of this target's one-off events (the bootstrap row): {@code
   * <appId>#events@<targetId>} ({@code <appId>#events} without a table id).
   */
  public String eventsAppId() {
    return appId + "#events" + (targetId == null ? "" : "@" + targetId);
  }

  /** The JSON form. */
  public String toJson() {
    ObjectNode node = JSON.createObjectNode();
    node.put("end_lsn", endLsn.toString());
    node.put("end_commit_ts", endCommitTime == null ? null : endCommitTime.toString());
    node.put("batch_id", batchId);
    node.put("generation", generation);
    node.put("app_id", appId);
    node.put("capture_instance", captureInstance);
    if (target != null) {
      node.put("target", target);
    }
    if (targetId != null) {
      node.put("target_id", targetId);
    }
    return node.toString();
  }

  /**
   * Parses the JSON form.
   *
   * @throws IllegalArgumentException naming what is wrong when the JSON is not a position
   */
  public static StreamPosition fromJson(String json) {
    try {
      JsonNode node = JSON.readTree(json);
      JsonNode ts = node.get("end_commit_ts");
      return new StreamPosition(
          node.get("app_id").asText(),
          node.path("generation").asInt(0),
          node.get("batch_id").asLong(),
          Lsn.parse(node.get("end_lsn").asText()),
          ts == null || ts.isNull() ? null : Instant.parse(ts.asText()),
          node.path("capture_instance").asText(""),
          node.hasNonNull("target") ? node.get("target").asText() : null,
          node.hasNonNull("target_id") ? node.get("target_id").asText() : null);
    } catch (JsonProcessingException | NullPointerException | java.time.DateTimeException e) {
      throw new IllegalArgumentException("Not a stream position: " + json, e);
    }
  }

  /** Parses an optional JSON form. */
  public static Optional<StreamPosition> fromJson(Optional<String> json) {
    return json.map(StreamPosition::fromJson);
  }
}
