/**
 * The seam between the project and SQL Server CDC, and its T-SQL implementation: public API.
 *
 * <p>{@link org.lakecdc.io.mssqlcdc.client.CdcClient} is everything the source, snapshots and
 * reconcile ask of a database's CDC objects (capture instances, {@code cdc.lsn_time_mapping},
 * change tables, DDL history, source table reads), with the value types it returns ({@link
 * org.lakecdc.io.mssqlcdc.client.CaptureInstance}, {@link org.lakecdc.io.mssqlcdc.client.Commit},
 * {@link org.lakecdc.io.mssqlcdc.client.ChangeRow}, {@link
 * org.lakecdc.io.mssqlcdc.client.DdlChange}, ...) and the errors it raises, all subclasses of
 * {@link org.lakecdc.io.mssqlcdc.client.CdcException} ({@link
 * org.lakecdc.io.mssqlcdc.client.DataLossError}, {@link
 * org.lakecdc.io.mssqlcdc.client.SchemaChangedError}, ...). A pipeline ships a serializable {@link
 * org.lakecdc.io.mssqlcdc.client.CdcClientFactory} to its workers, never a connection.
 *
 * <p>The T-SQL client ({@code SqlCdcClient}, opened by {@link
 * org.lakecdc.io.mssqlcdc.client.SqlCdcClientFactory} over Beam's {@code
 * JdbcIO.DataSourceConfiguration} or a {@code DataSource} provider, the password read on each
 * worker by a {@link org.lakecdc.io.mssqlcdc.client.PasswordSource}) is the only code that runs
 * T-SQL, through the Microsoft JDBC driver. It, its session and source-table reads ({@code
 * SqlSession}, {@code SourceTableReads}, {@code CaptureInstanceQueries}), the statements ({@code
 * CdcStatements}), the retry of transient errors ({@code RetryPolicy}, {@code TransientErrors}) and
 * the JDBC value reads ({@code JdbcValues}) are package-private internals. docs/sql-server.md
 * describes the CDC setup, the reading login's permissions and the connection settings the client
 * expects.
 */
package org.lakecdc.io.mssqlcdc.client;
