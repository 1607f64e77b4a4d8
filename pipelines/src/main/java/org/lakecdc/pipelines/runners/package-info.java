/**
 * Launchers for running the jobs locally on a runner: a development tool, not part of the library's
 * API.
 *
 * <p>{@link org.lakecdc.pipelines.runners.FlinkLocalLauncher} is what {@code mvn -Pflink exec:java}
 * starts: it runs a job's main class inside Maven's JVM with a Flink configuration that lets
 * Flink's embedded mini-cluster find the project's classes. docs/runners.md, "Running locally",
 * gives the commands.
 */
package org.lakecdc.pipelines.runners;
