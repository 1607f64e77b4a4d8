/**
 * Silver beside the main job: {@link org.lakecdc.pipelines.silver.SilverRun} applies a run's bronze
 * tables to their silver tables once their commits are done and prints each one's line. The {@code
 * ApplyChanges} job does the same work on its own: its entry point parses the command line and
 * delegates to {@link org.lakecdc.pipelines.silver.ApplyChangesLauncher} (the checks, the apply in
 * a pipeline, the maintenance). Depends on {@code targets}, {@code cli} and {@code options}.
 */
package org.lakecdc.pipelines.silver;
