package org.lakecdc.pipelines.options;

import org.apache.beam.sdk.options.Default;
import org.apache.beam.sdk.options.Description;

/**
 * Options of {@code Status}, in Beam's {@code --camelCase=value} form: the facts and control tables
 * the main job writes (the same defaults as {@link CdcToDeltaOptions}), and optionally the source,
 * whose newest commit the lag is measured against. docs/status.md is the reference.
 */
public interface StatusOptions
    extends TableReadOptions,
        SqlServerOptions,
        SimulatorSourceOptions,
        FactsTableOptions,
        ControlTableOptions,
        HtmlOptions {
  @Description(
      "Output format: text, json (the same as --json) or prometheus (Prometheus' text exposition"
          + " format, for a node exporter's textfile collector; docs/status.md lists the metrics).")
  @Default.Enum("TEXT")
  @Accepts("text, json or prometheus")
  StatusFormat getFormat();

  void setFormat(StatusFormat value);
}
