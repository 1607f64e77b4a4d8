package org.lakecdc.pipelines.options;

import org.apache.beam.sdk.options.Default;
import org.apache.beam.sdk.options.Description;

/**
 * Options of {@code Reconcile}, in Beam's {@code --camelCase=value} form: the silver table to
 * prove, the source it must equal, the bronze table it was applied from (keys in flight), the
 * report table, and the buckets and sample. docs/options.md ("Reconcile") is the reference. Names
 * shared with {@link CdcToDeltaOptions} have its types and defaults (Beam requires it).
 */
public interface ReconcileOptions extends TableReadOptions, SqlServerOptions {
  @Description("Capture instance whose source table silver holds.")
  @Default.String("dbo_orders")
  String getCaptureInstance();

  void setCaptureInstance(String value);

  @Description(
      "Path or URI of the bronze Delta table silver was applied from (its changes after silver's"
          + " applied_lsn are in flight). Default: lakecdc-demo/delta/<captureInstance in lower"
          + " case>.")
  String getBronze();

  void setBronze(String value);

  @Description("Path or URI of the silver Delta table to reconcile with the source table.")
  String getSilver();

  void setSilver(String value);

  @Description("Path or URI of the reconcile report Delta table (kind reconcile) a run appends to.")
  @Default.String("lakecdc-demo/delta/reconcile")
  String getReport();

  void setReport(String value);

  @Description(
      "Path or URI of the facts table bronze's runs wrote: bronze's newest chunked snapshot is"
          + " checked against its snapshot_chunk rows (CHUNK_TILING, CHUNK_ROWS, CHUNK_STAMP); no"
          + " checks when it does not exist.")
  @Default.String("lakecdc-demo/delta/facts")
  String getFactsTable();

  void setFactsTable(String value);

  @Description(
      "Key columns, comma-separated (default: the unique index the capture instance uses).")
  String getKeys();

  void setKeys(String value);

  @Description(
      "Rows per key bucket of tier 1 (a one-column integer or date key; other keys: rows per range"
          + " cut on the server); at least 1.")
  @Default.Long(100_000)
  @Accepts("a whole number of rows, at least 1")
  long getBucketRows();

  void setBucketRows(long value);

  @Description("Fraction of matching buckets also compared row by row (rounded up): 0 none, 1 all.")
  @Default.Double(0.01)
  @Accepts("a number from 0 to 1")
  double getSample();

  void setSample(double value);

  @Description("Random seed of the sample.")
  @Default.Long(0)
  long getSeed();

  void setSeed(long value);

  @Description("Print the result as one JSON object instead of the summary lines.")
  @Default.Boolean(false)
  boolean getJson();

  void setJson(boolean value);

  @Description(
      "Also write a self-contained HTML page of the run (the buckets as a bar chart over the key"
          + " space, the first differing keys) to this file.")
  String getHtml();

  void setHtml(String value);

  @Description(
      "Directory of the SQL Server CDC simulator silver came from. Default: lakecdc-demo/source."
          + " Not with --connectionUrl.")
  String getFakePath();

  void setFakePath(String value);

  @Description(
      "With --connectionUrl: SET LOCK_TIMEOUT for every read of the source table, in milliseconds,"
          + " 0 or more. Unset: wait for locks without limit.")
  @Accepts("0 or a positive number of milliseconds up to 2147483647")
  Long getLockTimeoutMs();

  void setLockTimeoutMs(Long value);

  @Description(
      "Isolation of the reads of the source table: readCommitted or snapshot (never NOLOCK).")
  @Default.String("readCommitted")
  String getIsolationLevel();

  void setIsolationLevel(String value);
}
