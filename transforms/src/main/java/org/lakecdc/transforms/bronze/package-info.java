/**
 * The bronze table, the append-only change log of one source table, and the change-batch write path
 * of the main job into it: public API for the jobs.
 *
 * <p>{@link org.lakecdc.transforms.bronze.BronzeTable} defines its columns (the change rows'
 * metadata columns, the captured columns, then {@code _batch_id}, {@code _snapshot} and {@code
 * _chunk}) with their comments, and evolves the table's schema when a later run captures more
 * columns or wider types. docs/tables.md, "Bronze", describes the table and its schema evolution.
 *
 * <p>{@link org.lakecdc.transforms.bronze.WriteChangesToDelta} (bounded reads) and {@link
 * org.lakecdc.transforms.bronze.WriteChangeStreamToDelta} (continuous reads) read one table, or
 * many in one {@code MssqlCdcIO.readAll()} ({@code fromAll}, one {@link
 * org.lakecdc.transforms.bronze.TableWrite} per table), write each batch's rows to bronze data
 * files in the reading stage through {@link org.lakecdc.transforms.bronze.BronzeBatchSink} (a
 * {@code RowSink}) and commit them in committer rounds (the next batch of every table): bronze with
 * the transaction id {@code (appId, batch)} and the position, the facts row, then the verdict. A
 * table that fails alone is recorded by {@link org.lakecdc.transforms.bronze.RecordedFailure}
 * ({@code table_failed}). {@link org.lakecdc.transforms.bronze.DeltaTarget} names a target's tables
 * and start position; {@link org.lakecdc.transforms.bronze.CommittedBatch} is what a committer
 * emits per batch; {@link org.lakecdc.transforms.bronze.CrashPoint} is for crash tests (of batches
 * and of chunked snapshots).
 *
 * <p>Internals (package-private): the committers ({@code CommitBatches}, {@code CommitInRounds},
 * {@code CommitterRound}, {@code BatchCommitter}) and the facts rows of a batch ({@code
 * BatchFacts}). This package never uses {@code org.lakecdc.transforms.snapshot}; snapshot writing
 * uses it. docs/architecture.md, "Writing to Delta: the main job", and docs/many-tables.md describe
 * the flow.
 */
package org.lakecdc.transforms.bronze;
