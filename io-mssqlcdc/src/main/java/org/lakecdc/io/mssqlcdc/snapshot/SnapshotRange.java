package org.lakecdc.io.mssqlcdc.snapshot;

import java.io.Serializable;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.io.mssqlcdc.client.IsolationLevel;
import org.lakecdc.io.mssqlcdc.client.TableQuery;
import org.lakecdc.io.mssqlcdc.source.RowSink;

/**
 * One partition of a snapshot: a key range {@code lowerInclusive <= (keys) < upperExclusive} of the
 * source table, compared as tuples with NULL first (docs/architecture.md "Data flow"), and the
 * commit time every row of the snapshot is stamped with. The ranges of one snapshot tile the key
 * space: each row falls in exactly one.
 *
 * @param sourceSchema schema of the tracked table
 * @param sourceTable the tracked table
 * @param keyColumns the key columns the bounds are over; empty for a table read as one range
 * @param lowerInclusive first key of the range, one value per key column (values may be null), or
 *     null for an open start (which also takes rows whose leading key is NULL)
 * @param upperExclusive first key after the range, or null for an open end
 * @param commitTime UTC commit time of the snapshot LSN ({@code _commit_ts})
 * @param number the range's place in key order, from 0 to the number of ranges - 1: the sequence a
 *     {@link RowSink} is given for the range's rows
 */
record SnapshotRange(
    String sourceSchema,
    String sourceTable,
    List<String> keyColumns,
    @Nullable List<Object> lowerInclusive,
    @Nullable List<Object> upperExclusive,
    Instant commitTime,
    int number)
    implements Serializable {
  SnapshotRange {
    Objects.requireNonNull(sourceSchema, "sourceSchema");
    Objects.requireNonNull(sourceTable, "sourceTable");
    keyColumns = List.copyOf(keyColumns);
    lowerInclusive = copy(lowerInclusive);
    upperExclusive = copy(upperExclusive);
    Objects.requireNonNull(commitTime, "commitTime");
    if (number < 0) {
      throw new IllegalArgumentException("number must be at least 0, not " + number);
    }
  }

  /** A null-tolerant, serializable, unmodifiable copy. */
  private static @Nullable List<Object> copy(@Nullable List<Object> values) {
    return values == null ? null : Collections.unmodifiableList(new ArrayList<>(values));
  }

  /** The read of this range's rows: {@code columns} in order, under {@code isolation}. */
  TableQuery query(List<String> columns, IsolationLevel isolation) {
    return new TableQuery(
        sourceSchema,
        sourceTable,
        columns,
        keyColumns,
        Optional.ofNullable(lowerInclusive),
        Optional.ofNullable(upperExclusive),
        isolation);
  }
}
