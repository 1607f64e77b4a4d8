/**
 * The file-backed SQL Server CDC simulator: {@link org.lakecdc.io.mssqlcdc.fake.FakeSqlServer}
 * writes a database's CDC history into a directory (one JSON Lines file per CDC object, format in
 * docs/fake-format.md), {@link org.lakecdc.io.mssqlcdc.fake.FileBackedCdcClient} reads it as a
 * {@link org.lakecdc.io.mssqlcdc.client.CdcClient}, and {@link
 * org.lakecdc.io.mssqlcdc.fake.FakeCdcClientFactory} ships the reader to pipeline workers. Main
 * code outside this package uses only the factory and the writer's public API.
 */
package org.lakecdc.io.mssqlcdc.fake;
