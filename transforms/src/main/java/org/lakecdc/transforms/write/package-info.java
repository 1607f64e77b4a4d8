/**
 * The write path of the main job: change batches and snapshots into bronze, facts and the verdict,
 * exactly once with Delta as the checkpoint. Public API for the jobs.
 *
 * <p>{@link org.lakecdc.transforms.write.WriteChangesToDelta} (bounded reads) and {@link
 * org.lakecdc.transforms.write.WriteChangeStreamToDelta} (continuous reads) read one table, or many
 * in one {@code MssqlCdcIO.readAll()} ({@code fromAll}, one {@link
 * org.lakecdc.transforms.write.TableWrite} per table), write each batch's rows to bronze data files
 * in the reading stage and commit them through one committer per table: bronze with the transaction
 * id {@code (appId, batch)} and the position, the facts row, then the verdict. A table that fails
 * alone is recorded by {@link org.lakecdc.transforms.write.RecordedFailure} ({@code table_failed}).
 * {@link org.lakecdc.transforms.write.WriteSnapshotToDelta} writes a whole snapshot stamped with S
 * in one commit. {@link org.lakecdc.transforms.write.DeltaTarget} names a target's tables and start
 * position; {@link org.lakecdc.transforms.write.CommittedBatch} is what a committer emits per
 * batch; {@link org.lakecdc.transforms.write.CrashPlan} (where, among the {@link
 * org.lakecdc.transforms.write.CrashPoint}s, a job stops) is for crash tests: one nullable field,
 * null in production. {@link org.lakecdc.transforms.write.BronzeBatchSink} and {@link
 * org.lakecdc.transforms.write.SnapshotFileSink} are the {@code RowSink}s the reading stages write
 * data files through.
 *
 * <p>Internals (package-private): the committers ({@code CommitBatches}, {@code CommitInSequence},
 * {@code BatchCommitter}) and the facts rows of a batch ({@code BatchFacts}). docs/architecture.md,
 * "Writing to Delta: the main job", and docs/many-tables.md describe the flow.
 */
package org.lakecdc.transforms.write;
