package org.lakecdc.transforms.snapshot;

import java.io.Serializable;
import java.util.List;
import java.util.Objects;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.io.mssqlcdc.schema.SqlServerType;

/**
 * Where and what a chunked snapshot's chunks are committed to ({@code WriteChunksToDelta}): the
 * tables, the open snapshot and its plan as read back from the facts table. Serializable; shipped
 * with the committer.
 *
 * @param bronzePath the bronze table's path or URI (the target; it must exist)
 * @param factsPath the facts table's path or URI (it must exist)
 * @param eventsAppId the target's events app id: the completion row's transaction app id, its
 *     version the open's generation
 * @param open the open snapshot ({@code snapshot_open} read back, with its {@code written_at})
 * @param plan its plan ({@code snapshot_plan} read back): the chunks and {@code chunks_per_wave}
 * @param keyTypes the key columns' captured SQL Server types, to render a re-sought end as JSON
 * @param captureInstance the capture instance read (progress lines)
 */
public record ChunkedSnapshotSpec(
    String bronzePath,
    String factsPath,
    String eventsAppId,
    ChunkedSnapshotFacts.Open open,
    ChunkedSnapshotFacts.Plan plan,
    List<SqlServerType> keyTypes,
    String captureInstance)
    implements Serializable {
  private static final long serialVersionUID = 1L;

  /**
   * Checks that the plan is the open's.
   *
   * @throws IllegalArgumentException when the plan's S is not the open's, or the open is not
   *     chunked
   */
  public ChunkedSnapshotSpec {
    Objects.requireNonNull(bronzePath, "bronzePath");
    Objects.requireNonNull(factsPath, "factsPath");
    Objects.requireNonNull(eventsAppId, "eventsAppId");
    Objects.requireNonNull(open, "open");
    Objects.requireNonNull(plan, "plan");
    keyTypes = List.copyOf(keyTypes);
    Objects.requireNonNull(captureInstance, "captureInstance");
    if (!open.chunked()) {
      throw new IllegalArgumentException(
          "A chunked snapshot's spec needs a chunked open, not mode " + open.mode());
    }
    if (!plan.s().equals(open.s())) {
      throw new IllegalArgumentException(
          "The plan of S " + plan.s() + " is not the open snapshot's (S " + open.s() + ")");
    }
  }

  /** The generation's app id: the committer's key. */
  public String appId() {
    return open.appId();
  }

  /** S. */
  public Lsn s() {
    return open.s();
  }

  /** The bronze transaction app id of the chunks: {@link ChunkedSnapshotFacts#bronzeAppId}. */
  public String bronzeAppId() {
    return ChunkedSnapshotFacts.bronzeAppId(appId(), s());
  }

  /**
   * The facts transaction app id of the chunk rows: {@link ChunkedSnapshotFacts#chunkFactsAppId}.
   */
  public String chunkFactsAppId() {
    return ChunkedSnapshotFacts.chunkFactsAppId(appId(), s());
  }
}
