/**
 * The jobs' options: every {@code PipelineOptions} interface of the command lines, and {@link
 * org.lakecdc.pipelines.options.Accepts}, the words a wrong value's one-line error uses. Open
 * {@link org.lakecdc.pipelines.options.CdcToDeltaOptions} first: the main job's options, built from
 * the shared {@link org.lakecdc.pipelines.options.OutputOptions}, {@link
 * org.lakecdc.pipelines.options.SqlServerOptions}, {@link
 * org.lakecdc.pipelines.options.SilverOptions} and {@link
 * org.lakecdc.pipelines.options.ChunkedSnapshotOptions}. docs/options.md describes every option.
 * Depends on nothing else of {@code pipelines}.
 */
package org.lakecdc.pipelines.options;
