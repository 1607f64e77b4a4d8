/**
 * The main job's run: {@link org.lakecdc.pipelines.cdc.CdcToDeltaJob} (open it first) builds every
 * table's plan into one pipeline and runs it once; {@link org.lakecdc.pipelines.cdc.ContinuousMode}
 * and {@link org.lakecdc.pipelines.cdc.ContinuousRunner} follow the source ({@code --continuous});
 * {@link org.lakecdc.pipelines.cdc.JobSummary} is what a run did. The entry point is {@code
 * org.lakecdc.pipelines.CdcToDelta}. Depends on {@code targets}, {@code silver}, {@code cli} and
 * {@code options}.
 */
package org.lakecdc.pipelines.cdc;
