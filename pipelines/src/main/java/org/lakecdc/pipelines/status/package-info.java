/**
 * The {@code Status} job's renderings beside its text and JSON: the static HTML page ({@link
 * org.lakecdc.pipelines.status.StatusPage}, open it first) and the Prometheus text ({@link
 * org.lakecdc.pipelines.status.StatusPrometheus}). docs/status.md describes what they show.
 */
package org.lakecdc.pipelines.status;
