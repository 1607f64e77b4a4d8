package org.lakecdc.io.mssqlcdc.chunk;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.io.mssqlcdc.schema.SqlServerType;

/**
 * The key's extent read when a chunked snapshot opens, after S (docs/behaviour.md §6.8), recorded
 * as the {@code plan} of the {@code snapshot_open} facts row: {@code
 * {"kind":"int","lo":MIN,"hi":MAX, "rows":estimate}} for one integer key column, else {@code
 * {"kind":"keyset","max":MAX}} (a scalar for one column, an array for a composite key, null for no
 * key or an empty table).
 *
 * @param kind {@code int} or {@code keyset}
 * @param lo MIN of an integer key, else null
 * @param hi MAX of an integer key, else null
 * @param rows the row estimate ({@code sp_spaceused}) of an integer key, else null
 * @param max the last key in {@code ORDER BY} order of a keyset extent (Java values), or null
 */
public record SnapshotExtent(
    String kind,
    @Nullable Long lo,
    @Nullable Long hi,
    @Nullable Long rows,
    @Nullable List<Object> max) {
  /** The kind of an integer key's extent. */
  public static final String INT = "int";

  /** The kind of any other extent. */
  public static final String KEYSET = "keyset";

  private static final ObjectMapper JSON = new ObjectMapper();

  /**
   * Checks the form: an {@code int} extent has {@code lo <= hi} and {@code rows >= 0} and no max; a
   * {@code keyset} extent has only a max (possibly null).
   *
   * @throws IllegalArgumentException for any other combination
   */
  public SnapshotExtent {
    if (INT.equals(kind)) {
      if (lo == null || hi == null || rows == null || max != null || lo > hi || rows < 0) {
        throw new IllegalArgumentException(
            "An int extent needs lo <= hi, rows >= 0 and no max, not lo="
                + lo
                + " hi="
                + hi
                + " rows="
                + rows
                + " max="
                + max);
      }
    } else if (KEYSET.equals(kind)) {
      if (lo != null || hi != null || rows != null) {
        throw new IllegalArgumentException("A keyset extent has only a max, not lo/hi/rows");
      }
      max = max == null ? null : Collections.unmodifiableList(new ArrayList<>(max));
    } else {
      throw new IllegalArgumentException(
          "An extent's kind must be 'int' or 'keyset', not '" + kind + "'");
    }
  }

  /** An integer key's extent {@code [lo, hi]} with a row estimate. */
  public static SnapshotExtent ofInt(long lo, long hi, long rows) {
    return new SnapshotExtent(INT, lo, hi, rows, null);
  }

  /** A keyset extent: the last key in {@code ORDER BY} order, or null (one chunk: the table). */
  public static SnapshotExtent ofKeyset(@Nullable List<Object> max) {
    return new SnapshotExtent(KEYSET, null, null, null, max);
  }

  /** Whether this is an integer key's extent. */
  public boolean isInt() {
    return INT.equals(kind);
  }

  /**
   * The JSON form described above, fields in that order; {@code keyTypes} render keyset bounds
   * ({@link ChunkBounds}).
   */
  public String toJson(List<SqlServerType> keyTypes) {
    return toNode(keyTypes).toString();
  }

  /** {@link #toJson}'s form as a node, to embed in other JSON. */
  public ObjectNode toNode(List<SqlServerType> keyTypes) {
    ObjectNode node = JSON.createObjectNode();
    node.put("kind", kind);
    if (isInt()) {
      node.put("lo", lo);
      node.put("hi", hi);
      node.put("rows", rows);
    } else {
      node.set("max", ChunkBounds.toJson(max, keyTypes));
    }
    return node;
  }

  /**
   * Reads {@link #toJson}'s form back.
   *
   * @throws IllegalArgumentException when {@code json} is not of that form
   */
  public static SnapshotExtent fromJson(String json, List<SqlServerType> keyTypes) {
    try {
      return fromNode(JSON.readTree(json), keyTypes);
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException("An extent must be JSON, not '" + json + "'", e);
    }
  }

  /**
   * Reads {@link #toNode}'s form back.
   *
   * @throws IllegalArgumentException when {@code node} is not of that form
   */
  public static SnapshotExtent fromNode(JsonNode node, List<SqlServerType> keyTypes) {
    if (node == null || !node.isObject() || !node.path("kind").isTextual()) {
      throw new IllegalArgumentException(
          "An extent must be {\"kind\":\"int\",\"lo\":..,\"hi\":..,\"rows\":..} or"
              + " {\"kind\":\"keyset\",\"max\":..}, not "
              + node);
    }
    String kind = node.get("kind").textValue();
    if (INT.equals(kind)) {
      return new SnapshotExtent(
          INT, integer(node, "lo"), integer(node, "hi"), integer(node, "rows"), null);
    }
    if (KEYSET.equals(kind)) {
      return ofKeyset(ChunkBounds.fromJson(node.path("max"), keyTypes));
    }
    throw new IllegalArgumentException(
        "An extent's kind must be 'int' or 'keyset', not '" + kind + "'");
  }

  private static long integer(JsonNode node, String field) {
    JsonNode v = node.path(field);
    if (!v.isIntegralNumber() || !v.canConvertToLong()) {
      throw new IllegalArgumentException(
          "An int extent's " + field + " must be a 64-bit integer, not " + v);
    }
    return v.longValue();
  }
}
