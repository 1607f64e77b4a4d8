/**
 * Chunked snapshots' source side (BEHAVIOUR.md 6.7, 6.8; docs/tables.md "Chunked snapshots"): the
 * key extent recorded when a snapshot opens, the plan of key-range chunks that tile the key space,
 * and the JSON form of key bounds that SQL Server's {@code CAST} reads back. Knows no Delta.
 */
package org.lakecdc.io.mssqlcdc.chunk;
