package org.lakecdc.pipelines.options;

import org.apache.beam.sdk.options.Default;
import org.apache.beam.sdk.options.Description;

/**
 * Options of the commands that read the project's tables without Spark ({@code Status}, {@code
 * Show}, {@code Reconcile}, and {@code Maintain}, which compacts and vacuums them): how to reach
 * the tables ({@link HadoopConfOptions}, as the main job takes it) and the output form.
 */
public interface TableReadOptions extends OutputOptions, HadoopConfOptions {
  @Description(
      "Print JSON instead of text: Status prints one JSON document, Show one JSON object per row"
          + " (JSON Lines), Reconcile its result as one JSON object instead of the summary lines,"
          + " Maintain one JSON object per table and maintenance.")
  @Default.Boolean(false)
  boolean getJson();

  void setJson(boolean value);

  @Description(
      "Write the output to this file (created or replaced, UTF-8) instead of standard output:"
          + " for machines reading --json when standard output also carries a launcher's lines"
          + " (mvn exec:java prints an escape sequence before the first line).")
  String getOutput();

  void setOutput(String value);
}
