/**
 * Silver beside the main job: {@link org.lakecdc.pipelines.silver.SilverRun} applies a run's bronze
 * tables to their silver tables once their commits are done and prints each one's line. The {@code
 * ApplyChanges} job is the entry point of the same work on its own. Depends on {@code targets}.
 */
package org.lakecdc.pipelines.silver;
