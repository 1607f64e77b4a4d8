/**
 * Chunked snapshots (docs/tables.md "Chunked snapshots"): the key extent recorded when a snapshot
 * opens, the plan of key-range chunks that tile the key space, the JSON form of key bounds that SQL
 * Server's {@code CAST} reads back, and the reads of the chunks ({@code
 * MssqlCdcIO.snapshotChunks()}). Open {@link org.lakecdc.io.mssqlcdc.chunk.ChunkPlanner} first;
 * {@link org.lakecdc.io.mssqlcdc.chunk.ChunkSpec} holds a read's steps. Knows no Delta.
 *
 * <h2>Per chunk, on the worker</h2>
 *
 * The chunk's stamp L is the snapshot-LSN rule read right before its {@code SELECT} ({@link
 * org.lakecdc.io.mssqlcdc.snapshot.SnapshotLsn}); a stamp below S fails the read ({@link
 * IllegalStateException}: the chunks are read from another server than S came from, e.g. a readable
 * secondary). Its rows ({@code lo <= (keys) < hi}, {@code CdcClient.readTable} under the isolation
 * level, never NOLOCK) are snapshot rows stamped L: {@code _start_lsn} = L, {@code _commit_ts} =
 * the UTC commit time of L (of the last commit before L when L is no commit LSN), {@code _seqval}
 * and {@code _command_id} NULL, {@code _operation} 0. They go to the sink with the chunk's index as
 * the sequence; no row becomes an element. {@code max_lsn} is read after the read ({@link
 * org.lakecdc.io.mssqlcdc.chunk.ChunkRead#highLsn()}). With an open end to seek ({@code
 * withOpenEndAfter}), a chunk whose {@code hi} is open reads only up to the first key after that
 * MAX now ({@code CdcClient.keyBound} at offset 1), or to the end when there is none. The chunks
 * come from a source of one split per chunk ({@code ChunkSource}), so a runner hands them to its
 * workers one by one and reads them in parallel.
 *
 * <p>Counters {@code mssqlcdc/snapshot_rows} and {@code mssqlcdc/snapshot_chunks_read},
 * distribution {@code mssqlcdc/snapshot_chunk_read_ms}.
 *
 * <h2>Errors</h2>
 *
 * Building ({@code expand}) fails with {@link IllegalArgumentException} naming the option for a
 * missing source, client or S, a bad {@code columns} list or an unmappable type; with {@link
 * org.lakecdc.io.mssqlcdc.client.CaptureInstanceNotFoundError} for an unknown instance. Running
 * fails for a stamp below S and when {@code cdc.lsn_time_mapping} has no commit at or before a
 * stamp.
 */
package org.lakecdc.io.mssqlcdc.chunk;
