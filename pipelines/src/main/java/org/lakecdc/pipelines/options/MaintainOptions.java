package org.lakecdc.pipelines.options;

import org.apache.beam.sdk.options.Default;
import org.apache.beam.sdk.options.Description;

/**
 * Options of {@code Maintain}, in Beam's {@code --camelCase=value} form: which tables, which
 * maintenance, the vacuum's retention. docs/status.md is the reference.
 */
public interface MaintainOptions extends TableReadOptions {
  @Description(
      "Paths or URIs of the Delta tables to maintain, comma-separated: bronze, facts, control or"
          + " any table the job writes (silver has ApplyChanges --maintenance, which sorts by key).")
  @Accepts("table paths or URIs, comma-separated")
  String getTable();

  void setTable(String value);

  @Description(
      "What to do to each table: vacuum (delete the data files no version within"
          + " --retentionHours references, uncommitted files of a killed run included), compact"
          + " (rewrite the files smaller than 8 MiB into one, dataChange=false), or"
          + " compact,vacuum.")
  @Accepts("vacuum, compact or compact,vacuum")
  String getMaintenance();

  void setMaintenance(String value);

  @Description(
      "Vacuum: hours a removed or uncommitted file stays (time travel within them keeps working);"
          + " at least 1. Shorter than the longest write to the table is unsafe: a write in flight"
          + " may lose its files.")
  @Default.Long(168)
  @Accepts("a whole number of hours, at least 1")
  long getRetentionHours();

  void setRetentionHours(long value);

  @Description("Vacuum: list what would be deleted, delete nothing.")
  @Default.Boolean(false)
  boolean getDryRun();

  void setDryRun(boolean value);
}
