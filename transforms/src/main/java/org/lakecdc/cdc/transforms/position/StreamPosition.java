package org.lakecdc.cdc.transforms.position;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.Serializable;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.mssqlcdc.lsn.Lsn;

/**
 * Where a target's stream stands: the last processed commit LSN and its commit time, the last batch
 * number, the generation and the job's app id. Stored as JSON in Delta domain metadata, atomically
 * with the commit that made it true (each bronze commit, each facts commit of a batch, the snapshot
 * commit): <em>Delta is the checkpoint</em>. A new run resumes right after {@link #endLsn()}.
 *
 * <p>JSON form: {@code {"end_lsn": "0x…", "end_commit_ts": "2026-11-01T04:37:51.000Z" | null,
 * "batch_id": 3, "generation": 0, "app_id": "dbo_orders", "capture_instance": "dbo_orders"}}. Keys
 * are only ever added; readers ignore unknown keys.
 *
 * @param appId the job's app id (the bronze transaction app id)
 * @param generation the generation (0 until a re-snapshot starts generation 1)
 * @param batchId the last batch written, or -1 when only a snapshot was written
 * @param endLsn the last processed LSN
 * @param endCommitTime the UTC commit time of {@code endLsn}, or null when it has no row in {@code
 *     cdc.lsn_time_mapping}
 * @param captureInstance the capture instance the last batch read last (the newer one after a
 *     switch)
 */
public record StreamPosition(
    String appId,
    int generation,
    long batchId,
    Lsn endLsn,
    @Nullable Instant endCommitTime,
    String captureInstance)
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

  /** The position after {@code batch}. */
  public StreamPosition next(long batchId, Lsn endLsn, Instant endCommitTime, String instance) {
    return new StreamPosition(appId, generation, batchId, endLsn, endCommitTime, instance);
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
          node.path("capture_instance").asText(""));
    } catch (JsonProcessingException | NullPointerException | java.time.DateTimeException e) {
      throw new IllegalArgumentException("Not a stream position: " + json, e);
    }
  }

  /** Parses an optional JSON form. */
  public static Optional<StreamPosition> fromJson(Optional<String> json) {
    return json.map(StreamPosition::fromJson);
  }
}
