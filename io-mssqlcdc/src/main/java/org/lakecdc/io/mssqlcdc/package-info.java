/**
 * The SQL Server CDC source for Apache Beam: {@link org.lakecdc.io.mssqlcdc.MssqlCdcIO}, the entry
 * point, as Beam's own IOs are.
 *
 * <pre>{@code
 * SourceConfiguration orders =
 *     SourceConfiguration.create("dbo_orders")
 *         .withDataSourceConfiguration(
 *             SqlCdcClientFactory.dataSourceConfiguration(
 *                 "jdbc:sqlserver://db:1433;databaseName=sales",
 *                 "lakecdc_reader",
 *                 PasswordSource.environmentVariable("LAKECDC_PASSWORD"),
 *                 java.time.Duration.ofSeconds(30)));
 * PCollection<Row> changes =
 *     pipeline.apply(
 *         MssqlCdcIO.read()
 *             .withSourceConfiguration(orders)
 *             .withStartingLsn(StartingLsn.earliest())
 *             .withMaxCommitsPerBatch(1000));
 *
 * MssqlCdcIO.Snapshot snapshot = MssqlCdcIO.snapshot().withSourceConfiguration(orders);
 * Lsn s = snapshot.resolveSnapshotLsn();  // record S first
 * PCollection<Row> rows = pipeline.apply(snapshot.withSnapshotLsn(s).withNumPartitions(8));
 * // then follow the changes after S: MssqlCdcIO.read().withStartingLsn(StartingLsn.after(s))
 * }</pre>
 *
 * <p>The change read is bounded by default (up to {@code max_lsn} as read at the start, on every
 * runner) or continuous ({@code withContinuous(true)}, on runners that run unbounded splittable
 * DoFns: Direct, Flink). It holds the factories and the AutoValue configurations only: the shared
 * {@code SourceConfiguration} (capture instance, how to reach SQL Server, columns), {@code read()}
 * and {@code readAll()} (change rows by LSN range, bounded or continuous), {@code snapshot()} (a
 * whole snapshot stamped with one LSN) and {@code snapshotChunks()} (chunks of a chunked snapshot).
 *
 * <p>One package per read mode holds its machinery and the types it takes and gives: {@link
 * org.lakecdc.io.mssqlcdc.read} (change reads: the splittable DoFn, batches, starting position,
 * stop condition, policies), {@link org.lakecdc.io.mssqlcdc.snapshot} (whole snapshots and the
 * snapshot-LSN rule), {@link org.lakecdc.io.mssqlcdc.chunk} (chunked snapshots: planning and the
 * chunk reads); {@link org.lakecdc.io.mssqlcdc.source} what they share (the {@code RowSink} rows
 * are written through, the output columns and rows, a worker's client). Below them: {@link
 * org.lakecdc.io.mssqlcdc.client} (the {@code CdcClient} seam and the only T-SQL), {@link
 * org.lakecdc.io.mssqlcdc.schema} (types and captured columns), {@link org.lakecdc.io.mssqlcdc.lsn}
 * and {@link org.lakecdc.io.mssqlcdc.time}; {@link org.lakecdc.io.mssqlcdc.fake} is the simulator.
 * docs/architecture.md maps them; docs/sql-server.md says what is read from SQL Server and how.
 */
package org.lakecdc.io.mssqlcdc;
