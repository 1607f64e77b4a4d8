/**
 * The jobs: main classes and their options. The command lines are the interface; the Java types are
 * not a library API.
 *
 * <p>{@link org.lakecdc.pipelines.CdcToDelta} is the main job (SQL Server CDC of one capture
 * instance into a bronze Delta table, the facts table and the control table), its options {@link
 * org.lakecdc.pipelines.CdcToDeltaOptions} with the shared {@link
 * org.lakecdc.pipelines.OutputOptions}, and one run of it {@link
 * org.lakecdc.pipelines.CdcToDeltaJob}. {@link org.lakecdc.pipelines.PrintChanges} prints what
 * {@code MssqlCdcIO} reads from the simulator. {@link org.lakecdc.pipelines.CommandLine} parses and
 * explains options, {@link org.lakecdc.pipelines.JobExit} ends a job with one {@code error:} line
 * and an exit code; {@link org.lakecdc.pipelines.SeedCopy} describes a seed from an existing copy
 * of the source table.
 *
 * <p>Package-private internals: the continuous mode, seeding, logging setup, run counters and
 * snapshot progress. docs/options.md describes every option, docs/runners.md how to run the jobs on
 * Direct, Spark and Flink.
 */
package org.lakecdc.pipelines;
