package org.lakecdc.io.mssqlcdc.chunk;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.checkerframework.checker.nullness.qual.Nullable;

/**
 * One chunk of a chunked snapshot's plan: the key range {@code lo <= (keys) < hi} of the source
 * table, compared by SQL Server as {@code ORDER BY} sorts (column by column, NULL first, strings
 * under the column's collation). The chunks of a plan tile the key space: the first is open below
 * (and so takes the rows whose leading key is NULL), each {@code hi} is the next chunk's {@code
 * lo}, and the last ends just above the key's MAX at the snapshot's open (or is open).
 *
 * @param index the chunk's place in the plan, from 0
 * @param lo the first key of the range, one value per key column in the Java types of {@code
 *     ChangeRow} (values may be null), or null for an open start
 * @param hi the first key after the range, or null for an open end
 */
public record Chunk(int index, @Nullable List<Object> lo, @Nullable List<Object> hi)
    implements Serializable {
  private static final long serialVersionUID = 1L;

  /**
   * Checks the index and copies the bounds.
   *
   * @throws IllegalArgumentException when {@code index} is negative
   */
  public Chunk {
    if (index < 0) {
      throw new IllegalArgumentException("A chunk index must be at least 0, not " + index);
    }
    lo = copy(lo);
    hi = copy(hi);
  }

  private static @Nullable List<Object> copy(@Nullable List<Object> values) {
    return values == null ? null : Collections.unmodifiableList(new ArrayList<>(values));
  }
}
