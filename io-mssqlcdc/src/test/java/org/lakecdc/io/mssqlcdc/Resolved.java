package org.lakecdc.io.mssqlcdc;

import org.lakecdc.io.mssqlcdc.chunk.ChunkSpec;
import org.lakecdc.io.mssqlcdc.read.ReadSpec;
import org.lakecdc.io.mssqlcdc.snapshot.SnapshotSpec;

/**
 * The resolved specs of {@link MssqlCdcIO}'s configurations, as their {@code expand()} builds them,
 * for the read modes' DoFn-level tests in their own packages.
 */
public final class Resolved {
  private Resolved() {}

  /** The spec of a change read ({@code read.resolve()}). */
  public static ReadSpec spec(MssqlCdcIO.Read read) {
    return read.resolve();
  }

  /** The spec of a whole snapshot, S recorded now when not given. */
  public static SnapshotSpec spec(MssqlCdcIO.Snapshot snapshot) {
    return snapshot.resolve();
  }

  /** The spec of a chunked snapshot read. */
  public static ChunkSpec spec(MssqlCdcIO.SnapshotChunks chunks) {
    return chunks.resolve();
  }
}
