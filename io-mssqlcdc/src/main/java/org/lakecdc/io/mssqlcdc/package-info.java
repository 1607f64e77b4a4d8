/**
 * The SQL Server CDC source for Apache Beam: the library's public API.
 *
 * <p>{@link org.lakecdc.io.mssqlcdc.MssqlCdcIO} is the entry point, as Beam's own IOs are: {@code
 * MssqlCdcIO.read()} reads a capture instance's change rows by LSN range (bounded up to a stop LSN,
 * or continuous, following {@code sys.fn_cdc_get_max_lsn}), {@code MssqlCdcIO.snapshot()} reads a
 * tracked table's current rows stamped with one snapshot LSN. The other public types are what those
 * transforms take and give: {@link org.lakecdc.io.mssqlcdc.StartingLsn} and {@link
 * org.lakecdc.io.mssqlcdc.StartPositions} (where a read starts), {@link
 * org.lakecdc.io.mssqlcdc.StopCondition} (when a continuous read stops), {@link
 * org.lakecdc.io.mssqlcdc.SchemaChangePolicy} (what DDL in a range does), {@link
 * org.lakecdc.io.mssqlcdc.RowSink} with {@link org.lakecdc.io.mssqlcdc.BatchSource} (writing rows
 * in the reading stage), {@link org.lakecdc.io.mssqlcdc.ChangeBatch} with its coder, {@link
 * org.lakecdc.io.mssqlcdc.ChangeOrdering}, {@link org.lakecdc.io.mssqlcdc.SnapshotLsn} and the
 * planning rules of {@link org.lakecdc.io.mssqlcdc.RangePlanner}.
 *
 * <p>The reading and snapshot DoFns, their resolved configurations ({@code ReadSpec}, {@code
 * SnapshotSpec}), the schema guard and the planners are package-private internals. The rules they
 * follow are described in docs/sql-server.md (what is read from SQL Server and how) and
 * docs/architecture.md (where the source sits in a job).
 */
package org.lakecdc.io.mssqlcdc;
