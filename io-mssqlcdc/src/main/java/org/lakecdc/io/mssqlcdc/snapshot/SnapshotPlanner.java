package org.lakecdc.io.mssqlcdc.snapshot;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.lakecdc.io.mssqlcdc.client.CaptureInstance;
import org.lakecdc.io.mssqlcdc.client.CdcClient;

/**
 * Plans a snapshot's partitions (docs/architecture.md "Data flow"): the source table and key of the
 * capture instance, the commit time of the snapshot LSN, and key ranges from {@link
 * CdcClient#keyTiles}.
 *
 * <p>With {@code numPartitions = 1}, a table without key columns, or fewer than two rows, the whole
 * table is one range. Otherwise the key tiles t2..tn cut it into {@code [open, t2), [t2, t3), ...,
 * [tn, open)}; the first range takes the NULL keys, which sort first. Equal consecutive bounds
 * (possible over a key that is not unique) are dropped, so no range is empty by construction.
 */
final class SnapshotPlanner {
  private SnapshotPlanner() {}

  /**
   * The snapshot's key ranges, in key order and numbered in that order from 0, each stamped with
   * the commit time of S.
   *
   * @throws IllegalStateException when no commit maps to S or precedes it (see {@link #commitTime})
   */
  static List<SnapshotRange> plan(CdcClient client, SnapshotSpec spec) {
    Instant commitTime =
        SnapshotLsn.commitTime(client, spec.source().captureInstance(), spec.snapshotLsn());
    CaptureInstance instance = client.captureInstances(spec.source().captureInstance()).get(0);
    List<String> keys = instance.keyColumns();
    List<List<Object>> bounds = new ArrayList<>();
    if (spec.numPartitions() > 1 && !keys.isEmpty()) {
      for (List<Object> tile :
          client.keyTiles(
              instance.sourceSchema(),
              instance.sourceTable(),
              keys,
              spec.numPartitions(),
              spec.isolationLevel())) {
        if (bounds.isEmpty() || !sameKey(bounds.get(bounds.size() - 1), tile)) {
          bounds.add(tile);
        }
      }
    }
    List<SnapshotRange> ranges = new ArrayList<>(bounds.size() + 1);
    for (int i = 0; i <= bounds.size(); i++) {
      ranges.add(
          new SnapshotRange(
              instance.sourceSchema(),
              instance.sourceTable(),
              keys,
              i == 0 ? null : bounds.get(i - 1),
              i == bounds.size() ? null : bounds.get(i),
              commitTime,
              i));
    }
    return ranges;
  }

  /** Equal key tuples, binary values by content. */
  private static boolean sameKey(List<Object> a, List<Object> b) {
    if (a.size() != b.size()) {
      return false;
    }
    for (int i = 0; i < a.size(); i++) {
      if (!Objects.deepEquals(a.get(i), b.get(i))) {
        return false;
      }
    }
    return true;
  }
}
