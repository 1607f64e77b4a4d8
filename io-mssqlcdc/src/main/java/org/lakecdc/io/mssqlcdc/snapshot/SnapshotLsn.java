package org.lakecdc.io.mssqlcdc.snapshot;

import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.lakecdc.io.mssqlcdc.client.CaptureInstance;
import org.lakecdc.io.mssqlcdc.client.CdcClient;
import org.lakecdc.io.mssqlcdc.client.Commit;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;

/**
 * The snapshot LSN rule (docs/architecture.md "Data flow"): the LSN S a snapshot of a tracked table
 * is stamped with, recorded before any of its rows is read.
 *
 * <p>{@code S = max(max_lsn or ZERO, decrement(start_lsn))} of the table's oldest capture instance
 * when its {@code start_lsn} is known, else {@code max_lsn or ZERO}. Every commit up to S is in the
 * table when the read starts; a commit the read also sees has a larger LSN and is replayed by a
 * stream that starts after S (the downstream "latest image per key" absorbs the overlap). The
 * {@code start_lsn} term covers a freshly enabled instance on a quiet database, whose {@code
 * max_lsn} stays below the instance's first LSN (or NULL) until the capture job runs.
 */
public final class SnapshotLsn {
  private SnapshotLsn() {}

  /**
   * Resolves S for the table {@code captureInstance} tracks, from CDC metadata only ({@code
   * sys.sp_cdc_help_change_data_capture}, {@code sys.fn_cdc_get_max_lsn}, {@code
   * sys.fn_cdc_decrement_lsn}); reads no row. Call it before reading the snapshot's rows and keep
   * the answer: a later call may return a newer LSN.
   *
   * @param client an open client; not closed here
   * @param captureInstance any capture instance of the table (the rule uses the oldest)
   * @return S, above {@link Lsn#ZERO}
   * @throws org.lakecdc.io.mssqlcdc.client.CaptureInstanceNotFoundError when the instance does not
   *     exist
   * @throws IllegalStateException when CDC has no {@code max_lsn} and the instance no {@code
   *     start_lsn} (retry once the capture job has run)
   */
  public static Lsn resolve(CdcClient client, String captureInstance) {
    Lsn s = latestCommitted(client, captureInstance);
    if (s.isZero()) {
      throw new IllegalStateException(
          "No snapshot LSN for capture instance "
              + captureInstance
              + ": it has no start LSN and CDC has no max_lsn yet; retry once the capture job"
              + " has run");
    }
    return s;
  }

  /**
   * The rule's value, ZERO when neither term is known: also the last processed LSN of {@code
   * startingLsn=latest} (docs/options.md) and the stamp of each chunk of a chunked snapshot.
   *
   * @param client an open client; not closed here
   * @param captureInstance any capture instance of the table (the rule uses the oldest)
   * @return the LSN, or {@link Lsn#ZERO}
   * @throws org.lakecdc.io.mssqlcdc.client.CaptureInstanceNotFoundError when the instance does not
   *     exist
   */
  public static Lsn latestCommitted(CdcClient client, String captureInstance) {
    List<CaptureInstance> instances = client.captureInstances(captureInstance);
    Lsn fromMax = client.maxLsn().orElse(Lsn.ZERO);
    Lsn fromStart = instances.get(0).startLsn().map(client::decrementLsn).orElse(Lsn.ZERO);
    return Lsn.max(fromMax, fromStart);
  }

  /**
   * The UTC commit time stamped on snapshot rows: that of S when S is a commit LSN ({@code
   * cdc.lsn_time_mapping}), else that of the last commit before S (S from the {@code start_lsn}
   * rule, or a DDL LSN, has no mapping row of its own).
   *
   * @param client an open client; not closed here
   * @param captureInstance the capture instance, for the message
   * @param snapshotLsn S, or a chunk's stamp
   * @return the UTC commit time
   * @throws IllegalStateException when the mapping has no row at or before S: capture has not
   *     written one yet, or cleanup removed them
   */
  public static Instant commitTime(CdcClient client, String captureInstance, Lsn snapshotLsn) {
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
}
