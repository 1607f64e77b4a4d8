package org.lakecdc.io.mssqlcdc.chunk;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.List;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.io.mssqlcdc.schema.SqlServerType;

/**
 * Key bounds as JSON that SQL Server's {@code CAST} reads back (SCENARIOS C106): a one-column key
 * is a scalar, a composite key an array, an open bound {@code null}; integers are JSON numbers,
 * decimals plain-notation text, {@code datetime}/{@code smalldatetime} ISO-8601 text with
 * milliseconds, other date-times with microseconds, binary {@code 0x} hex, other values their
 * string form. A plan is {@code [[index, lo, hi], ...]}.
 */
public final class ChunkBounds {
  private ChunkBounds() {}

  /** One bound as JSON ({@code null} for an open bound). */
  public static JsonNode toJson(@Nullable List<Object> key, List<SqlServerType> keyTypes) {
    throw new UnsupportedOperationException("issue 12: ChunkBounds.toJson");
  }

  /**
   * A bound read back in the Java types of {@code ChangeRow}; null for JSON {@code null}. An
   * integer bound above the key type's maximum (a plan's last {@code hi} = MAX + 1) reads as null
   * (open).
   *
   * @throws IllegalArgumentException when the node does not fit the key's types
   */
  public static @Nullable List<Object> fromJson(JsonNode node, List<SqlServerType> keyTypes) {
    throw new UnsupportedOperationException("issue 12: ChunkBounds.fromJson");
  }

  /** A plan as JSON text {@code [[index, lo, hi], ...]}. */
  public static String planJson(List<Chunk> chunks, List<SqlServerType> keyTypes) {
    throw new UnsupportedOperationException("issue 12: ChunkBounds.planJson");
  }

  /**
   * {@link #planJson}'s form read back.
   *
   * @throws IllegalArgumentException when {@code json} is not of that form
   */
  public static List<Chunk> planFromJson(String json, List<SqlServerType> keyTypes) {
    throw new UnsupportedOperationException("issue 12: ChunkBounds.planFromJson");
  }
}
