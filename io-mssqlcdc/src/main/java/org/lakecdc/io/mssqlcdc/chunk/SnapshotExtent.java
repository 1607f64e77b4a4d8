package org.lakecdc.io.mssqlcdc.chunk;

import java.util.List;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.io.mssqlcdc.schema.SqlServerType;

/**
 * The key's extent read when a chunked snapshot opens, after S (BEHAVIOUR.md 6.8), recorded as the
 * {@code plan} of the {@code snapshot_open} facts row: {@code {"kind":"int","lo":MIN,"hi":MAX,
 * "rows":estimate}} for one integer key column, else {@code {"kind":"keyset","max":MAX}} (a scalar
 * for one column, an array for a composite key, null for no key or an empty table).
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

  /** Whether this is an integer key's extent. */
  public boolean isInt() {
    return INT.equals(kind);
  }

  /** The JSON form described above; {@code keyTypes} render keyset bounds ({@link ChunkBounds}). */
  public String toJson(List<SqlServerType> keyTypes) {
    throw new UnsupportedOperationException("issue 12: SnapshotExtent.toJson");
  }

  /**
   * Reads {@link #toJson}'s form back.
   *
   * @throws IllegalArgumentException when {@code json} is not of that form
   */
  public static SnapshotExtent fromJson(String json, List<SqlServerType> keyTypes) {
    throw new UnsupportedOperationException("issue 12: SnapshotExtent.fromJson");
  }
}
