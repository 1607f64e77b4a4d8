/**
 * Server clock conversions: SQL Server's zone-less commit times ({@code
 * cdc.lsn_time_mapping.tran_end_time}) to UTC instants, with the daylight-saving fall-back rule of
 * BEHAVIOUR.md 4.4 (ADR 0008). No JDBC, no Beam.
 */
package org.lakecdc.io.mssqlcdc.time;
