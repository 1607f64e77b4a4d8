/**
 * What every read mode shares. Open {@link org.lakecdc.io.mssqlcdc.source.RowSink} first: where a
 * reading stage writes the rows it reads, so rows never cross a shuffle. {@link
 * org.lakecdc.io.mssqlcdc.source.SourceSpec} is a read's resolved source (the captured columns,
 * declared or inferred from every capture instance of the table, the Beam schema) and builds the
 * output rows; {@link org.lakecdc.io.mssqlcdc.source.ChangeOrdering} orders them; {@link
 * org.lakecdc.io.mssqlcdc.source.WorkerClient} is a reading DoFn's one client; {@link
 * org.lakecdc.io.mssqlcdc.source.KeyBoundCoder} encodes the key bounds of snapshot ranges and
 * chunks.
 */
package org.lakecdc.io.mssqlcdc.source;
