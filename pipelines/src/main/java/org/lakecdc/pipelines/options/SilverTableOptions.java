package org.lakecdc.pipelines.options;

import org.apache.beam.sdk.options.Description;
import org.apache.beam.sdk.options.PipelineOptions;

/**
 * One silver table and its key columns, shared by {@code CdcToDelta} and {@code ApplyChanges}
 * (which keep it current, through {@link SilverOptions}) and {@code Reconcile} (which proves it
 * equals the source).
 */
public interface SilverTableOptions extends PipelineOptions {
  @Description(
      "Path or URI of a silver Delta table: one row per key, the latest image from bronze"
          + " (docs/tables.md \"Silver\"). CdcToDelta applies it once the run's bronze commits are"
          + " done and, with --continuous, at least every --silverIntervalSeconds while it runs"
          + " (unset: no silver; with --tables, use --silverTemplate or a table's own --silver in"
          + " --tablesFile); ApplyChanges creates it or keeps it current (one table); Reconcile"
          + " compares it with the source table.")
  String getSilver();

  void setSilver(String value);

  @Description(
      "Silver's key columns, comma-separated captured columns (order_id or o_id,line). Default:"
          + " the columns of the unique index the capture instance uses (its table's primary key).")
  @Accepts("captured columns separated by commas")
  String getKeys();

  void setKeys(String value);
}
