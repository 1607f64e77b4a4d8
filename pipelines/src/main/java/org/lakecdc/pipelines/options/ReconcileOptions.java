package org.lakecdc.pipelines.options;

import org.apache.beam.sdk.options.Default;
import org.apache.beam.sdk.options.Description;

/**
 * Options of {@code Reconcile}, in Beam's {@code --camelCase=value} form: the silver table to
 * prove, the source it must equal, the bronze table it was applied from (keys in flight), the
 * report table, and the buckets and sample. docs/options.md ("Reconcile") is the reference. Options
 * shared with other commands are declared once, in the mixins it extends.
 */
public interface ReconcileOptions
    extends TableReadOptions,
        SqlServerOptions,
        SimulatorSourceOptions,
        SourceReadOptions,
        CaptureInstanceOptions,
        BronzeTableOptions,
        SilverTableOptions,
        FactsTableOptions,
        HtmlOptions {
  @Description("Path or URI of the reconcile report Delta table (kind reconcile) a run appends to.")
  @Default.String("lakecdc-demo/delta/reconcile")
  String getReport();

  void setReport(String value);

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
}
