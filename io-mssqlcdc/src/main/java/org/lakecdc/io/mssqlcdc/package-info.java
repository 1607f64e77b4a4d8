/**
 * The SQL Server CDC source for Apache Beam: {@link org.lakecdc.io.mssqlcdc.MssqlCdcIO}, the entry
 * point, as Beam's own IOs are. It holds the factories and the AutoValue configurations only: the
 * shared {@code SourceConfiguration} (capture instance, how to reach SQL Server, columns), {@code
 * read()} and {@code readAll()} (change rows by LSN range, bounded or continuous), {@code
 * snapshot()} (a whole snapshot stamped with one LSN) and {@code snapshotChunks()} (chunks of a
 * chunked snapshot).
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
