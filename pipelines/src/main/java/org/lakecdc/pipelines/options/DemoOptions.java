package org.lakecdc.pipelines.options;

import org.apache.beam.sdk.options.Default;
import org.apache.beam.sdk.options.Description;

/**
 * How the demo database is built in {@code --fakePath} when it holds none, shared by the commands
 * that read the simulator and build the demo on their first run: {@code CdcToDelta} (and {@code
 * Backfill}) and {@code PrintChanges}.
 */
public interface DemoOptions extends SimulatorSourceOptions {
  @Description(
      "Build the demo database in --fakePath when that directory is new or empty, also at a path"
          + " other than the default lakecdc-demo/source (which builds it without this option).")
  @Default.Boolean(false)
  boolean getBuildDemo();

  void setBuildDemo(boolean value);

  @Description("TPC-H scale factor of the demo database built when --fakePath holds none.")
  @Default.Double(0.01)
  @Accepts("a TPC-H scale factor in (0, 1]")
  double getDemoScale();

  void setDemoScale(double value);

  @Description("Number of change transactions in a newly built demo database.")
  @Default.Integer(600)
  @Accepts("0 or a positive integer")
  int getDemoTransactions();

  void setDemoTransactions(int value);
}
