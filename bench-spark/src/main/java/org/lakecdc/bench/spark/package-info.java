/**
 * The delta-spark anchor of the benchmark, in its own module and JVM: a measuring tool, not part of
 * the library's API.
 *
 * <p>{@link org.lakecdc.bench.spark.DeltaSparkAppend} appends the benchmark's rows to a Delta table
 * with delta-spark 3.3 on Spark 3.5 ({@code local[2]}) and reports the time, for {@code
 * org.lakecdc.bench.Bench} to compare with the main job. docs/performance.md describes the figure.
 */
package org.lakecdc.bench.spark;
