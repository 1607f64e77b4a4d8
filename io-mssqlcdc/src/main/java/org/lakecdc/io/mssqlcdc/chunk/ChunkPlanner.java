package org.lakecdc.io.mssqlcdc.chunk;

import java.util.List;
import java.util.Optional;
import org.lakecdc.io.mssqlcdc.client.CdcClient;
import org.lakecdc.io.mssqlcdc.client.IsolationLevel;
import org.lakecdc.io.mssqlcdc.schema.SqlServerType;

/**
 * Plans a chunked snapshot of one source table (BEHAVIOUR.md 6.8): the key's extent at the open,
 * then every chunk once. Every query runs on SQL Server (through {@link CdcClient}) under the
 * backfill's isolation; string keys are compared by the server under their collation, never by
 * Java.
 */
public final class ChunkPlanner {
  private final CdcClient client;
  private final String schema;
  private final String table;
  private final List<String> keyColumns;
  private final List<SqlServerType> keyTypes;
  private final IsolationLevel isolation;

  /**
   * A planner of {@code schema.table} over its unique key.
   *
   * @param keyColumns the key columns (the capture instance's unique index), possibly none
   * @param keyTypes their captured SQL Server types, one per key column
   */
  public ChunkPlanner(
      CdcClient client,
      String schema,
      String table,
      List<String> keyColumns,
      List<SqlServerType> keyTypes,
      IsolationLevel isolation) {
    this.client = client;
    this.schema = schema;
    this.table = table;
    this.keyColumns = List.copyOf(keyColumns);
    this.keyTypes = List.copyOf(keyTypes);
    this.isolation = isolation;
  }

  /**
   * A planner of the table the capture instance tracks, over the instance's key columns and their
   * captured types.
   */
  public static ChunkPlanner forInstance(
      CdcClient client, String captureInstance, IsolationLevel isolation) {
    throw new UnsupportedOperationException("issue 12: ChunkPlanner.forInstance");
  }

  /** The key columns. */
  public List<String> keyColumns() {
    return keyColumns;
  }

  /** The key columns' captured types. */
  public List<SqlServerType> keyTypes() {
    return keyTypes;
  }

  /** The key's extent now (read after S). */
  public SnapshotExtent extent() {
    throw new UnsupportedOperationException(
        "issue 12: ChunkPlanner.extent " + client + schema + table + isolation);
  }

  /**
   * Every chunk of the snapshot: contiguous, the first open below, the last ending at MAX + 1 (an
   * integer key) or the first key after MAX now, or open.
   *
   * @param chunkRows the most rows per chunk, at least 1
   */
  public List<Chunk> plan(SnapshotExtent extent, long chunkRows) {
    throw new UnsupportedOperationException("issue 12: ChunkPlanner.plan");
  }

  /** The first key after {@code max} now (empty when none, or when it reads back equal to it). */
  public Optional<List<Object>> firstKeyAfter(List<Object> max) {
    throw new UnsupportedOperationException("issue 12: ChunkPlanner.firstKeyAfter");
  }
}
