/**
 * Whole snapshots ({@code MssqlCdcIO.snapshot()}): a tracked table's current rows, read once in the
 * change read's schema and stamped with one snapshot LSN S. Open {@link
 * org.lakecdc.io.mssqlcdc.snapshot.SnapshotSpec} first (the resolved snapshot and its steps), and
 * {@link org.lakecdc.io.mssqlcdc.snapshot.SnapshotLsn} for the rule S follows.
 *
 * <h2>Snapshot LSN</h2>
 *
 * S is the LSN the caller gives, or {@link org.lakecdc.io.mssqlcdc.snapshot.SnapshotLsn#resolve}
 * (the rule of docs/tables.md "Bronze") when the pipeline is built, on the launcher, before any row
 * is read. Every commit up to S is in the rows read; rows may also hold commits after S, which a
 * change read starting after S replays (by design: the latest image per key absorbs the overlap). A
 * job that records S itself calls {@code resolveSnapshotLsn()} once and passes the answer.
 *
 * <h2>Rows</h2>
 *
 * {@code _capture_instance} = the configured instance, {@code _start_lsn} = S, {@code _seqval}
 * NULL, {@code _operation} 0, {@code _command_id} NULL (present unless the source's {@code
 * withIncludeCommandId(false)}), {@code _commit_ts} = UTC commit time of S ({@code
 * cdc.lsn_time_mapping}; the last commit before S when S is no commit LSN), then the captured
 * columns cast like change rows; a column the table no longer has reads NULL. Element timestamps
 * are the commit time of S. Counter {@code mssqlcdc/snapshot_rows} counts the rows read.
 *
 * <h2>Partitions</h2>
 *
 * A first step plans key ranges over the oldest capture instance's key ({@code CdcClient.keyTiles}:
 * {@code numPartitions} NTILE tiles, NULL keys first), the ranges are reshuffled, and each is read
 * in one query ({@code lo <= key < hi}) on the client its worker keeps (one per {@code DoFn}
 * instance); every row is read exactly once. A table without key columns, or {@code numPartitions =
 * 1}, is one range. With {@code writeTo(RowSink)} each range's rows are written by a sink in the
 * reading stage and only the sink's result per range is emitted: no row crosses a shuffle.
 *
 * <h2>Errors</h2>
 *
 * Building fails with {@link IllegalArgumentException} naming the option for a missing source or
 * client, a bad {@code columns} list or an unmappable type, with {@link
 * org.lakecdc.io.mssqlcdc.client.CaptureInstanceNotFoundError} for an unknown instance, and with
 * {@link IllegalStateException} when S cannot be resolved yet. Running fails with {@link
 * IllegalStateException} when {@code cdc.lsn_time_mapping} has no commit at or before S.
 */
package org.lakecdc.io.mssqlcdc.snapshot;
