/**
 * Change reads ({@code MssqlCdcIO.read()}, {@code readAll()}): change rows by LSN range, in batches
 * of whole commits, bounded or continuous. Open the splittable {@code ReadChangesDoFn} first
 * (restriction, splitting, size, watermark), then {@code ReadChangesAction} (one
 * {@code @ProcessElement}: batches claimed, checked, read and emitted) and {@link
 * org.lakecdc.io.mssqlcdc.read.ReadSpec} (the resolved read and the steps it expands into).
 *
 * <h2>Checks</h2>
 *
 * Each batch checks each capture instance's minimum LSN before and after reading: changes removed
 * by CDC cleanup (or held only by a capture instance disabled before the read reached them) fail
 * the read with {@link org.lakecdc.io.mssqlcdc.client.DataLossError}, or are skipped and reported,
 * by {@link org.lakecdc.io.mssqlcdc.read.DataLossPolicy}. Before any row of a batch is read, its
 * schema is checked (docs/scenarios.md "Schema change"): DDL in the batch's range by {@link
 * org.lakecdc.io.mssqlcdc.read.SchemaChangePolicy}, and a capture instance created after the
 * pipeline was built (with inferred columns, one that captures a column the schema lacks, or types
 * a column so the schema's type cannot hold it, fails with {@link
 * org.lakecdc.io.mssqlcdc.client.SchemaChangedError} before anything at or past its start LSN is
 * read; with declared columns it is followed in place). A failing batch emits nothing; the batches
 * before it are emitted as usual.
 *
 * <h2>What a read takes and gives</h2>
 *
 * {@link org.lakecdc.io.mssqlcdc.read.StartingLsn} (where a new read starts, and whether changes
 * after an LSN are still held), {@link org.lakecdc.io.mssqlcdc.read.StopCondition}, the two
 * policies; {@link org.lakecdc.io.mssqlcdc.read.ChangeBatch} per batch, with what was measured at
 * the source ({@link org.lakecdc.io.mssqlcdc.read.BatchSource}, {@link
 * org.lakecdc.io.mssqlcdc.read.SkippedRange}), and {@link
 * org.lakecdc.io.mssqlcdc.read.TableFailure} for a table whose read stopped alone in a {@code
 * readAll()}.
 */
package org.lakecdc.io.mssqlcdc.read;
