package org.lakecdc.pipelines.options;

import org.apache.beam.sdk.options.Default;
import org.apache.beam.sdk.options.Description;

/** Options of {@code PrintChanges}. Beam's {@code --camelCase=value} form. */
public interface PrintChangesOptions extends OutputOptions {
  @Description(
      "Directory of the SQL Server CDC simulator to read. In the default directory the demo"
          + " database (TPC-H orders and lineitem with a change history) is built when absent; any"
          + " other directory must hold a simulator database unless --buildDemo is given. Default:"
          + " lakecdc-demo/source (applied by the job, so that CdcToDeltaOptions, which has no"
          + " default either, can tell a given path from none).")
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
      "Where to start: 'earliest' (the oldest change CDC holds; the default), 'latest' (skip the"
          + " history) or the last processed LSN, e.g. 0x0000002A000001000001.")
  // No @Default: Beam needs the same default in every options interface of the JVM that has the
  // property, and CdcToDeltaOptions tells an unset --startingLsn from 'earliest'.
  String getStartingLsn();

  void setStartingLsn(String value);

  @Description(
      "At most this many commits of cdc.lsn_time_mapping per batch (a positive integer; 0 reads"
          + " up to max_lsn in one batch).")
  @Default.Integer(100)
  @Accepts("a positive integer, or 0 to read up to max_lsn")
  int getMaxCommitsPerBatch();

  void setMaxCommitsPerBatch(int value);

  @Description("How many change rows to print (the first ones in change order).")
  @Default.Integer(10)
  @Accepts("0 or a positive integer")
  int getSampleRows();

  void setSampleRows(int value);

  @Description("TPC-H scale factor of the demo database built when fakePath holds none.")
  @Default.Double(0.01)
  @Accepts("a TPC-H scale factor in (0, 1]")
  double getDemoScale();

  void setDemoScale(double value);

  @Description("Number of change transactions in the demo database's history.")
  @Default.Integer(600)
  @Accepts("0 or a positive integer")
  int getDemoTransactions();

  void setDemoTransactions(int value);
}
