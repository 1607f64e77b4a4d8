/**
 * The Delta table layer over Delta Kernel: public API for the rest of the project.
 *
 * <p>{@link org.lakecdc.transforms.delta.DeltaTables} creates, opens, migrates and describes tables
 * and commits data files written on workers, idempotently per transaction id ({@code txn} action,
 * Delta protocol "Transaction Identifiers"); {@link org.lakecdc.transforms.delta.DataFileWriter}
 * writes Parquet data files without committing them, as {@link
 * org.lakecdc.transforms.delta.DataFileAction}s. A table's kind ({@link
 * org.lakecdc.transforms.delta.TableKind}) carries its {@link
 * org.lakecdc.transforms.delta.Migration}s; {@link org.lakecdc.transforms.delta.TableDefinition},
 * {@link org.lakecdc.transforms.delta.DeltaColumn}, {@link
 * org.lakecdc.transforms.delta.TableProperties} and {@link org.lakecdc.transforms.delta.TablePaths}
 * describe what is created and under which name; {@link org.lakecdc.transforms.delta.HadoopConf} is
 * the file system configuration shipped to workers.
 *
 * <p>Internals (package-private): {@code KernelInternals}, the only class that uses Kernel's
 * internal packages, {@code ParquetDataFiles}, {@code RowBatches}, {@code TableMigrator}, {@code
 * DeltaLogHistory} and {@code DeltaTypes}. docs/architecture.md, "Delta tables", explains what
 * Kernel does and what this layer adds.
 */
package org.lakecdc.transforms.delta;
