package org.lakecdc.pipelines.options;

import org.apache.beam.sdk.options.Default;
import org.apache.beam.sdk.options.Description;

/**
 * Options of {@code Status}, in Beam's {@code --camelCase=value} form: the facts and control tables
 * the main job writes (the same defaults as {@link CdcToDeltaOptions}), and optionally the source,
 * whose newest commit the lag is measured against. docs/status.md is the reference.
 */
public interface StatusOptions extends TableReadOptions, SqlServerOptions {
  @Description("Path or URI of the facts Delta table to read (shared by every table of the job).")
  @Default.String("lakecdc-demo/delta/facts")
  String getFactsTable();

  void setFactsTable(String value);

  @Description("Path or URI of the control Delta table table_finalization to read.")
  @Default.String("lakecdc-demo/delta/table_finalization")
  String getControlTable();

  void setControlTable(String value);

  @Description(
      "Directory of the SQL Server CDC simulator whose newest commit the lag is measured"
          + " against. Default: lakecdc-demo/source when it holds a simulator database; without a"
          + " source the lag is each table's last batch's. Not with --connectionUrl.")
  String getFakePath();

  void setFakePath(String value);

  @Description(
      "Output format: text, json (the same as --json) or prometheus (Prometheus' text exposition"
          + " format, for a node exporter's textfile collector; docs/status.md lists the metrics).")
  @Default.String("text")
  String getFormat();

  void setFormat(String value);

  @Description(
      "Also writes the status as one self-contained HTML page to this file (created or replaced,"
          + " UTF-8).")
  String getHtml();

  void setHtml(String value);
}
