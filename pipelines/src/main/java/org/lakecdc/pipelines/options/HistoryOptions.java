package org.lakecdc.pipelines.options;

import org.apache.beam.sdk.options.Description;
import org.apache.beam.sdk.options.PipelineOptions;

/**
 * The history (SCD type 2) table of a source table, shared by {@code ApplyChanges} and the main
 * job; docs/options.md ("History") is the reference.
 */
public interface HistoryOptions extends PipelineOptions {
  @Description(
      "Path or URI of a history Delta table: one row per version of a key with the span it was"
          + " current (docs/tables.md \"History\"), created when absent and applied from bronze"
          + " after the run's bronze commits (CdcToDelta) or by ApplyChanges. Unset: no history.")
  String getHistory();

  void setHistory(String value);

  @Description(
      "With --tables: each table's history path or URI; {ci} is replaced by the capture instance in"
          + " lower case. Must contain {ci}. Unset: no history.")
  String getHistoryTemplate();

  void setHistoryTemplate(String value);

  @Description(
      "History: the tracked columns, comma-separated captured columns. A change that leaves all of"
          + " them as they were rewrites the key's current version in place instead of opening a"
          + " new one. Default: every captured column.")
  @Accepts("captured columns separated by commas")
  String getHistoryColumns();

  void setHistoryColumns(String value);
}
