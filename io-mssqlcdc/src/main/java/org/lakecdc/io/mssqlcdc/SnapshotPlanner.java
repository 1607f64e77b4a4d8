package org.lakecdc.io.mssqlcdc;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import org.lakecdc.io.mssqlcdc.client.CaptureInstance;
import org.lakecdc.io.mssqlcdc.client.CdcClient;
import org.lakecdc.io.mssqlcdc.client.Commit;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;

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
    Instant commitTime = commitTime(client, spec.captureInstance(), spec.snapshotLsn());
    CaptureInstance instance = client.captureInstances(spec.captureInstance()).get(0);
    List<String> keys = instance.keyColumns();
    List<List<Object>> bounds = new ArrayList<>();
    if (spec.numPartitions() > 1 && !keys.isEmpty()) {
      for (List<Object> tile :
          client.keyTiles(
              instance.sourceSchema(),
              instance.sourceTable(),
              keys,
              spec.numPartitions(),
              spec.isolation())) {
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

  /**
   * The UTC commit time stamped on snapshot rows: that of S when S is a commit LSN ({@code
   * cdc.lsn_time_mapping}), else that of the last commit before S (S from the {@code start_lsn}
   * rule, or a DDL LSN, has no mapping row of its own).
   *
   * @throws IllegalStateException when the mapping has no row at or before S: capture has not
   *     written one yet, or cleanup removed them
   */
  static Instant commitTime(CdcClient client, String captureInstance, Lsn snapshotLsn) {
    Optional<Commit> commit = client.commit(snapshotLsn);
    if (commit.isEmpty()) {
      commit = client.lastCommitAtOrBefore(snapshotLsn);
    }
    return commit
        .map(Commit::commitTime)
        .orElseThrow(
            () ->
                new IllegalStateException(
                    "Snapshot LSN "
                        + snapshotLsn
                        + " of capture instance "
                        + captureInstance
                        + " has no commit time: cdc.lsn_time_mapping has no entry at or before it"
                        + " (the capture job has not written one yet, or cleanup removed them),"
                        + " so _commit_ts cannot be stamped; retry once the capture job has run,"
                        + " or pass a snapshot LSN CDC still maps"));
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
