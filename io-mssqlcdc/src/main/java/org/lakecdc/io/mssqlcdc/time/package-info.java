/**
 * Server clock conversions: public API, no JDBC and no Beam.
 *
 * <p>{@link org.lakecdc.io.mssqlcdc.time.CommitTimeConverter} turns SQL Server's zone-less commit
 * times ({@code cdc.lsn_time_mapping.tran_end_time}, local time of the server's clock) into UTC
 * instants, including the repeated hour of a daylight-saving fall-back, which it reads by LSN order
 * so that times never go backwards (docs/sql-server.md, "Connection settings", {@code
 * --sourceTimeZone}). The simulator and the T-SQL client convert with the same rule.
 */
package org.lakecdc.io.mssqlcdc.time;
