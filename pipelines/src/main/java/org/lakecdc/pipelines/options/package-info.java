/**
 * The jobs' options: every {@code PipelineOptions} interface of the command lines, and {@link
 * org.lakecdc.pipelines.options.Accepts}, the words a wrong value's one-line error uses. Open
 * {@link org.lakecdc.pipelines.options.CdcToDeltaOptions} first: the main job's options. An option
 * more than one command takes is declared once, in a mixin the commands' interfaces extend, with
 * one description true for each of them (naming which command reads it how where they differ):
 * {@link org.lakecdc.pipelines.options.OutputOptions}, {@link
 * org.lakecdc.pipelines.options.SqlServerOptions}, {@link
 * org.lakecdc.pipelines.options.SimulatorSourceOptions}, {@link
 * org.lakecdc.pipelines.options.DemoOptions}, {@link
 * org.lakecdc.pipelines.options.SourceReadOptions}, {@link
 * org.lakecdc.pipelines.options.HadoopConfOptions}, {@link
 * org.lakecdc.pipelines.options.CaptureInstanceOptions}, {@link
 * org.lakecdc.pipelines.options.TablesListOptions}, {@link
 * org.lakecdc.pipelines.options.FactsTableOptions}, {@link
 * org.lakecdc.pipelines.options.ControlTableOptions}, {@link
 * org.lakecdc.pipelines.options.GranularityOptions}, {@link
 * org.lakecdc.pipelines.options.BatchReadOptions}, {@link
 * org.lakecdc.pipelines.options.BronzeTableOptions}, {@link
 * org.lakecdc.pipelines.options.SilverTableOptions}, {@link
 * org.lakecdc.pipelines.options.SilverOptions}, {@link org.lakecdc.pipelines.options.HtmlOptions}
 * and {@link org.lakecdc.pipelines.options.ChunkedSnapshotOptions}. Beam requires one type and
 * default for a name in every interface; declaring it once keeps that true. docs/options.md
 * describes every option. Depends on nothing else of {@code pipelines}.
 */
package org.lakecdc.pipelines.options;
