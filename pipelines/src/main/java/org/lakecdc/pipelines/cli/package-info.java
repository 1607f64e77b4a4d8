/**
 * The command line shared by the jobs: parsing and explaining options ({@link
 * org.lakecdc.pipelines.cli.CommandLine}, open it first), the one {@code error:} line and the exit
 * codes ({@link org.lakecdc.pipelines.cli.JobExit}; {@link
 * org.lakecdc.pipelines.cli.JobExit#failed} is the block every job ends with), console logging, the
 * tables file ({@link org.lakecdc.pipelines.cli.TablesOption}), the source behind {@code
 * --connectionUrl} or {@code --fakePath} ({@link org.lakecdc.pipelines.cli.SqlServerSource}) and
 * reading tables for the reading jobs ({@link org.lakecdc.pipelines.cli.TableReading}). Depends on
 * {@code options} (and {@code demo}, for the demo's log lines).
 */
package org.lakecdc.pipelines.cli;
