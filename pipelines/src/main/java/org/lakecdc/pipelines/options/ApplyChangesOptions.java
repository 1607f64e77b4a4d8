package org.lakecdc.pipelines.options;

import com.fasterxml.jackson.annotation.JsonIgnore;
import java.util.List;
import org.apache.beam.sdk.options.Default;
import org.apache.beam.sdk.options.Description;

/**
 * Options of {@code ApplyChanges}, in Beam's {@code --camelCase=value} form: the bronze tables the
 * main job wrote, the silver tables to keep current, the shared control and facts tables, and the
 * source whose capture instances and key columns the silver tables take. docs/options.md
 * ("ApplyChanges") is the reference. Names shared with {@link CdcToDeltaOptions} have its types and
 * defaults (Beam requires it).
 */
public interface ApplyChangesOptions extends OutputOptions, SqlServerOptions, SilverOptions {
  @Description("Capture instance whose bronze table is applied (one table; not with --tables).")
  @Default.String("dbo_orders")
  String getCaptureInstance();

  void setCaptureInstance(String value);

  @Description(
      "Path or URI of the bronze Delta table to read. Default: lakecdc-demo/delta/<captureInstance"
          + " in lower case>.")
  String getBronze();

  void setBronze(String value);

  @Description("Path or URI of the silver Delta table to create or keep current (one table).")
  String getSilver();

  void setSilver(String value);

  @Description(
      "Capture instances to apply, comma-separated (dbo_orders,dbo_lineitem), each from its bronze"
          + " table (--bronzeTemplate) into its silver table (--silverTemplate), in one pipeline."
          + " Instead of --captureInstance, --bronze and --silver.")
  String getTables();

  void setTables(String value);

  @Description(
      "With --tables: each table's bronze path or URI; {ci} is replaced by the capture instance in"
          + " lower case. Must contain {ci}.")
  @Default.String("lakecdc-demo/delta/{ci}")
  String getBronzeTemplate();

  void setBronzeTemplate(String value);

  @Description(
      "With --tables: each table's silver path or URI; {ci} is replaced by the capture instance in"
          + " lower case. Must contain {ci}.")
  String getSilverTemplate();

  void setSilverTemplate(String value);

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

  @Description(
      "Period of the completeness verdict finalized_until: minute, hour or day (bronze's).")
  @Default.String("hour")
  String getGranularity();

  void setGranularity(String value);

  @Description(
      "Directory of the SQL Server CDC simulator the bronze tables came from: it gives each"
          + " table's capture instances and key columns. Default: lakecdc-demo/source. Not with"
          + " --connectionUrl.")
  String getFakePath();

  void setFakePath(String value);

  @Description(
      "Hadoop configuration entries key=value for every Delta table the job opens, on the"
          + " launcher and on every worker; repeat the option or separate entries with commas; set"
          + " over --hadoopConfFile.")
  @Accepts("key=value entries such as fs.s3a.endpoint=http://minio:9000")
  @JsonIgnore
  List<String> getHadoopConf();

  void setHadoopConf(List<String> value);

  @Description(
      "A Hadoop configuration file (core-site.xml form), read on the launcher: its properties"
          + " reach every Delta table the job opens; --hadoopConf entries are set over it.")
  @Accepts("the path of a readable Hadoop configuration file (core-site.xml form)")
  String getHadoopConfFile();

  void setHadoopConfFile(String value);
}
