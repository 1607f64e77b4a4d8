/**
 * The output schema of change and snapshot rows and the mapping of SQL Server types to it: public
 * API.
 *
 * <p>{@link org.lakecdc.io.mssqlcdc.schema.ChangeSchema} builds the Beam schema (the metadata
 * columns of {@link org.lakecdc.io.mssqlcdc.schema.MetadataColumns}, then the captured columns);
 * {@link org.lakecdc.io.mssqlcdc.schema.TypeMapping} maps a {@link
 * org.lakecdc.io.mssqlcdc.schema.SqlServerType} to an {@link
 * org.lakecdc.io.mssqlcdc.schema.OutputType} (a Delta/Spark type), {@link
 * org.lakecdc.io.mssqlcdc.schema.TypeCompatibility} decides which type changes a running read can
 * follow, {@link org.lakecdc.io.mssqlcdc.schema.ValueConverter} casts the values, and {@link
 * org.lakecdc.io.mssqlcdc.schema.ColumnsDdl} reads the {@code columns} option (Spark DDL). The
 * metadata columns and what each SQL Server value becomes are described in docs/tables.md.
 */
package org.lakecdc.io.mssqlcdc.schema;
