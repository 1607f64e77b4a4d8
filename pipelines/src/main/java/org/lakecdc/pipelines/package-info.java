/**
 * The jobs' entry points, and nothing else: each class here has a {@code main} and hands the work
 * to its room. {@link org.lakecdc.pipelines.CdcToDelta} is the main job (SQL Server CDC into
 * bronze, facts and control Delta tables; its run is in {@code cdc}, a target's lifecycle in {@code
 * targets}); {@link org.lakecdc.pipelines.ApplyChanges} keeps silver tables, {@link
 * org.lakecdc.pipelines.Backfill} reads a chunked snapshot's waves, {@link
 * org.lakecdc.pipelines.Reconcile} proves a silver table equals its source, {@link
 * org.lakecdc.pipelines.Status} and {@link org.lakecdc.pipelines.Show} read the tables, {@link
 * org.lakecdc.pipelines.Simulator} drives the file-backed simulator and {@link
 * org.lakecdc.pipelines.PrintChanges} prints what {@code MssqlCdcIO} reads. The command lines are
 * the interface; the Java types are not a library API.
 *
 * <p>The rooms, from the bottom: {@code options} (every options interface), {@code cli} (parsing,
 * the one error line and the exit codes), {@code targets}, then one room per job ({@code cdc},
 * {@code silver}, {@code backfill}, {@code reconcile}, {@code status}); {@code demo} builds the
 * demo database and {@code runners} starts a local Flink cluster. A room depends only on rooms
 * below it. docs/options.md describes every option, docs/runners.md how to run the jobs on Direct,
 * Spark and Flink.
 */
package org.lakecdc.pipelines;
