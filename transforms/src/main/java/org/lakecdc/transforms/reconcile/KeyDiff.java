package org.lakecdc.transforms.reconcile;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.Serializable;
import java.util.List;
import org.checkerframework.checker.nullness.qual.Nullable;

/**
 * One key tier 2 found different (docs/behaviour.md §11.2): only in the source ({@code
 * MISSING_TARGET}), only in silver ({@code MISSING_SOURCE}), in both with other values ({@code
 * RECORD_DIFF}), or any of these for a key in flight ({@code IN_FLIGHT}).
 *
 * @param key the key as {@link KeyJson}
 * @param failureType one of {@link ReconcileReport}'s key failure types
 * @param columns the columns whose values differ (RECORD_DIFF), else empty
 * @param silverStartLsn silver's {@code _start_lsn} of the key, or null when silver lacks it
 * @param bucketLo the bucket's first key as JSON, or null when open
 * @param bucketHi the key the bucket ends before as JSON, or null when open
 */
public record KeyDiff(
    String key,
    String failureType,
    List<String> columns,
    @Nullable String silverStartLsn,
    @Nullable String bucketLo,
    @Nullable String bucketHi)
    implements Serializable {
  private static final ObjectMapper JSON =
      new ObjectMapper().configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);

  public KeyDiff {
    columns = List.copyOf(columns);
  }

  /** This difference as IN_FLIGHT (the columns and LSN kept in the detail). */
  public KeyDiff inFlight() {
    return new KeyDiff(key, ReconcileReport.IN_FLIGHT, columns, silverStartLsn, bucketLo, bucketHi);
  }

  /** The report's {@code detail}: {@code {"silver_start_lsn":..., "columns":[...]}}. */
  public String detailJson() {
    ObjectNode node = JSON.createObjectNode();
    node.put("silver_start_lsn", silverStartLsn);
    ArrayNode names = node.putArray("columns");
    columns.forEach(names::add);
    return node.toString();
  }

  /** This difference as one line of JSON (to cross a pipeline as a String). */
  public String toJson() {
    try {
      return JSON.writeValueAsString(this);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("Cannot write " + this, e);
    }
  }

  /** Reads {@link #toJson()}. */
  public static KeyDiff fromJson(String json) {
    try {
      return JSON.readValue(json, KeyDiff.class);
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException("Not a key difference: " + json, e);
    }
  }
}
