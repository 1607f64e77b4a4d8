package org.lakecdc.pipelines.options;

import org.apache.beam.sdk.options.Description;
import org.apache.beam.sdk.options.PipelineOptions;

/**
 * A self-contained HTML page of the result ({@code --html}), shared by {@code Status} and {@code
 * Reconcile}.
 */
public interface HtmlOptions extends PipelineOptions {
  @Description(
      "Also write a self-contained HTML page to this file (created or replaced, UTF-8): Status's"
          + " status; Reconcile's run (the buckets as a bar chart over the key space, the first"
          + " differing keys).")
  String getHtml();

  void setHtml(String value);
}
