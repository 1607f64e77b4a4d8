/**
 * The main job's run: {@link org.lakecdc.pipelines.cdc.CdcToDeltaJob} (open it first) builds every
 * table's plan into one pipeline and runs it once; {@link org.lakecdc.pipelines.cdc.ContinuousMode}
 * and {@link org.lakecdc.pipelines.cdc.ContinuousRunner} follow the source ({@code --continuous});
 * {@link org.lakecdc.pipelines.cdc.JobSummary} is what a run did. The entry point {@code
 * org.lakecdc.pipelines.CdcToDelta} parses the command line and delegates to {@link
 * org.lakecdc.pipelines.cdc.CdcToDeltaLauncher} (the options into a configuration, the checks
 * before writing, the run of one table or many, the summary). Depends on {@code targets}, {@code
 * silver}, {@code cli} and {@code options}.
 */
package org.lakecdc.pipelines.cdc;
