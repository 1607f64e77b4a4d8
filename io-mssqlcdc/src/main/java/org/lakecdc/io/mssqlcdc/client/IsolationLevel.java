package org.lakecdc.io.mssqlcdc.client;

/**
 * Transaction isolation for reads of a source table (snapshots, reconcile). Never {@code READ
 * UNCOMMITTED}/{@code NOLOCK}: a snapshot must only see committed rows (docs/options.md).
 */
public enum IsolationLevel {
  /** {@code READ COMMITTED}, SQL Server's default: waits for writers' locks. */
  READ_COMMITTED,
  /** {@code SNAPSHOT}: reads committed row versions without waiting; needs the database option. */
  SNAPSHOT
}
