/**
 * Snapshot writing into bronze, whole and chunked: public API for the jobs.
 *
 * <p>{@link org.lakecdc.transforms.snapshot.WriteSnapshotToDelta} writes a whole snapshot stamped
 * with S in one commit; {@link org.lakecdc.transforms.snapshot.WriteChunksToDelta} writes a chunked
 * snapshot, each chunk's files in the reading stage and one commit per chunk in order, made by the
 * chunk's reader right after its read once the chunk before it is recorded (the ordered committer
 * after the reads commits the rest), emitting a {@link
 * org.lakecdc.transforms.snapshot.CommittedChunk} per chunk. {@link
 * org.lakecdc.transforms.snapshot.SnapshotFileSink} is the {@code RowSink} both write data files
 * through.
 *
 * <p>Chunked snapshots' state (docs/behaviour.md §6.7): it lives only in facts event rows ({@code
 * snapshot_open}, {@code snapshot_plan}, {@code snapshot_chunk}, then {@code bootstrap} or {@code
 * resnapshot}) and in bronze's {@code _snapshot}/{@code _chunk} columns, never in a state table of
 * its own. {@link org.lakecdc.transforms.snapshot.ChunkedSnapshotFacts} writes and reads those
 * rows.
 *
 * <p>This package uses {@code org.lakecdc.transforms.bronze} (its table and {@code CrashPoint}),
 * never the reverse.
 */
package org.lakecdc.transforms.snapshot;
