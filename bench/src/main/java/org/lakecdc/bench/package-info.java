/**
 * The benchmark harness: a measuring tool, not part of the library's API.
 *
 * <p>{@link org.lakecdc.bench.Bench} (options {@link org.lakecdc.bench.BenchOptions}) builds an
 * orders table in the simulator and measures, on the same rows, the main job (run in its own JVM by
 * {@link org.lakecdc.bench.JobProbe}) against two anchors: parquet-java writing the same rows
 * ({@code ParquetAnchor}) and delta-spark appending them ({@code DeltaSparkAnchor}). The other
 * classes (the rows, the source database, the child JVMs, reading the bronze table back) are
 * package-private. docs/performance.md gives the command and what each figure measures.
 */
package org.lakecdc.bench;
