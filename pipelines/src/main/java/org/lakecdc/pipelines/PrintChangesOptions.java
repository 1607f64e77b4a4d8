package org.lakecdc.pipelines;

import org.apache.beam.sdk.options.Default;
import org.apache.beam.sdk.options.Description;
import org.apache.beam.sdk.options.PipelineOptions;

/** Options of {@link PrintChanges}. Beam's {@code --camelCase=value} form. */
public interface PrintChangesOptions extends PipelineOptions {
  @Description(
      "Directory of the SQL Server CDC simulator to read. In the default directory the demo"
          + " database (TPC-H orders and lineitem with a change history) is built when absent; any"
          + " other directory must hold a simulator database unless --buildDemo is given.")
  @Default.String("lakecdc-demo/source")
  String getFakePath();

  void setFakePath(String value);

  @Description(
      "Build the demo database in --fakePath when that directory is new or empty, also at a path"
          + " other than the default lakecdc-demo/source.")
  @Default.Boolean(false)
  boolean getBuildDemo();

  void setBuildDemo(boolean value);

  @Description("Capture instance to read, e.g. dbo_orders or dbo_lineitem.")
  @Default.String("dbo_orders")
  String getCaptureInstance();

  void setCaptureInstance(String value);

  @Description(
      "Where to start: 'earliest' (the oldest change CDC holds), 'latest' (skip the history) or"
          + " the last processed LSN, e.g. 0x0000002A000001000001.")
  @Default.String("earliest")
  String getStartingLsn();

  void setStartingLsn(String value);

  @Description(
      "At most this many commits of cdc.lsn_time_mapping per batch (a positive integer; 0 reads"
          + " up to max_lsn in one batch).")
  @Default.Integer(100)
  int getMaxCommitsPerBatch();

  void setMaxCommitsPerBatch(int value);

  @Description("How many change rows to print (the first ones in change order).")
  @Default.Integer(10)
  int getSampleRows();

  void setSampleRows(int value);

  @Description("TPC-H scale factor of the demo database built when fakePath holds none.")
  @Default.Double(0.01)
  double getDemoScale();

  void setDemoScale(double value);

  @Description("Number of change transactions in the demo database's history.")
  @Default.Integer(600)
  int getDemoTransactions();

  void setDemoTransactions(int value);

  @Description(
      "On a failure, print its stack trace (standard error) before the one-line error: for"
          + " debugging.")
  @Default.Boolean(false)
  boolean getVerbose();

  void setVerbose(boolean value);
}
