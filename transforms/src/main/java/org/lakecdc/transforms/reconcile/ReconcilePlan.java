package org.lakecdc.transforms.reconcile;

import java.io.Serializable;
import java.util.List;
import java.util.Set;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.io.mssqlcdc.schema.OutputType;

/**
 * What the launcher decided before tier 2 (docs/behaviour.md §11.2): the run, silver's pinned
 * version, the compared columns, tier 1's buckets with their statuses, and the groups of key ranges
 * tier 2 compares row by row (one pipeline element each).
 *
 * @param run the report's run columns (run id, silver version and applied_lsn, source LSN)
 * @param columns the compared columns (silver's captured columns, computed ones left out), in
 *     silver's order
 * @param types their output types
 * @param keyTypes the key columns' output types
 * @param ordinal the key's ordinal, or null when tier 1 counted the whole table
 * @param buckets tier 1's buckets, in key order
 * @param hashed the indexes of the buckets compared row by row
 * @param groups the key ranges to compare, in groups of at most {@link Reconciler#GROUP_ROWS} rows
 * @param chunkFailures the chunk checks' failures (none without a facts table or a chunked
 *     snapshot)
 * @param seconds the seconds tier 1 took
 */
public record ReconcilePlan(
    ReconcileReport.Run run,
    List<String> columns,
    List<OutputType> types,
    List<OutputType> keyTypes,
    @Nullable KeyOrdinal ordinal,
    List<Bucket> buckets,
    Set<Integer> hashed,
    List<List<Part>> groups,
    List<ChunkChecks.Failure> chunkFailures,
    double seconds)
    implements Serializable {
  public ReconcilePlan {
    columns = List.copyOf(columns);
    types = List.copyOf(types);
    keyTypes = List.copyOf(keyTypes);
    buckets = List.copyOf(buckets);
    hashed = Set.copyOf(hashed);
    groups = List.copyOf(groups);
    chunkFailures = List.copyOf(chunkFailures);
  }

  /** The bucket of an index. */
  public Bucket bucket(int index) {
    return buckets.get(index);
  }
}
