/**
 * The SQL Server CDC simulator: a test and demo tool, not part of the library's API.
 *
 * <p>{@link org.lakecdc.io.mssqlcdc.fake.FakeSqlServer} writes a database's CDC history into a
 * directory (one JSON Lines file per CDC object, format in docs/fake-format.md): tables, capture
 * instances, transactions, DDL and cleanup, as SQL Server's CDC would record them. {@link
 * org.lakecdc.io.mssqlcdc.fake.FileBackedCdcClient} reads that directory as a {@link
 * org.lakecdc.io.mssqlcdc.client.CdcClient}, and {@link
 * org.lakecdc.io.mssqlcdc.fake.FakeCdcClientFactory} ships the reader to pipeline workers. The
 * library's tests, the demo database and the benchmark run against it, so that every job runs
 * without a SQL Server; a production job uses {@link
 * org.lakecdc.io.mssqlcdc.client.SqlCdcClientFactory} instead. Its public types may change with any
 * release, and code outside tests, the demo and the benchmark should not use them.
 */
package org.lakecdc.io.mssqlcdc.fake;
