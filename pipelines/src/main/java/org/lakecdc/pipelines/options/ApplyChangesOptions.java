package org.lakecdc.pipelines.options;

import org.apache.beam.sdk.options.Default;
import org.apache.beam.sdk.options.Description;

/**
 * Options of {@code ApplyChanges}, in Beam's {@code --camelCase=value} form: the bronze tables the
 * main job wrote, the silver tables to keep current, the shared control and facts tables, and the
 * source whose capture instances and key columns the silver tables take. docs/options.md
 * ("ApplyChanges") is the reference. Options shared with other commands are declared once, in the
 * mixins it extends.
 */
public interface ApplyChangesOptions
    extends OutputOptions,
        SqlServerOptions,
        SimulatorSourceOptions,
        HadoopConfOptions,
        CaptureInstanceOptions,
        TablesListOptions,
        BronzeTableOptions,
        GranularityOptions,
        SilverOptions,
        HistoryOptions {
  @Description(
      "With --tables: each table's bronze path or URI; {ci} is replaced by the capture instance in"
          + " lower case. Must contain {ci}.")
  @Default.String("lakecdc-demo/delta/{ci}")
  String getBronzeTemplate();

  void setBronzeTemplate(String value);

  @Description("Path or URI of the control Delta table table_finalization (bronze's).")
  @Default.String("lakecdc-demo/delta/table_finalization")
  String getControl();

  void setControl(String value);

  @Description(
      "Path or URI of the facts Delta table (bronze's): its snapshot facts let silver's verdict"
          + " rule out an open snapshot. When no table exists there, silver is applied without"
          + " facts (a warning says so).")
  @Default.String("lakecdc-demo/delta/facts")
  String getFacts();

  void setFacts(String value);

  @Description(
      "Maintenance to run on each silver table instead of applying bronze: compact (rewrite files"
          + " whose deleted fraction reaches --silverCompactDeletedFraction and bin-pack small"
          + " files, dataChange=false), vacuum (delete files no version within"
          + " --silverVacuumRetentionHours references), or compact,vacuum. Default: none (apply).")
  @Accepts("compact, vacuum or compact,vacuum")
  String getMaintenance();

  void setMaintenance(String value);

  @Description(
      "Silver compaction: a file whose deletion vector deletes at least this fraction of its rows"
          + " is rewritten without them.")
  @Default.Double(0.2)
  @Accepts("a number greater than 0 and at most 1")
  double getSilverCompactDeletedFraction();

  void setSilverCompactDeletedFraction(double value);

  @Description(
      "Silver vacuum: hours a removed file stays (time travel within them keeps working); at"
          + " least 1. Default: 168 (7 days, Delta's).")
  @Default.Long(168)
  @Accepts("a whole number of hours, at least 1")
  long getSilverVacuumRetentionHours();

  void setSilverVacuumRetentionHours(long value);
}
