package org.lakecdc.pipelines.options;

import org.apache.beam.sdk.options.Default;
import org.apache.beam.sdk.options.Description;

/**
 * Options of {@code Simulator}, in Beam's {@code --camelCase=value} form, after the verb. Each
 * option applies to the verbs its description names ({@code Simulator} refuses it with another).
 * Options shared with other commands ({@code --fakePath}, {@code --captureInstance}, {@code
 * --tables}) are declared once, in the mixins it extends; {@code --table} (a source table here, a
 * Delta table in {@link ShowOptions}) keeps the type {@code Show}'s has, as Beam requires of one
 * name in two interfaces. docs/fake-format.md "Command line" is the reference.
 */
public interface SimulatorOptions
    extends OutputOptions,
        SqlServerOptions,
        SimulatorSourceOptions,
        CaptureInstanceOptions,
        TablesListOptions {
  @Description("commit: how many of the demo application's transactions to commit.")
  @Default.Integer(1)
  @Accepts("a positive integer")
  int getTransactions();

  void setTransactions(int value);

  @Description("idle: how many idle entries to write, --interval apart.")
  @Default.Integer(1)
  @Accepts("a positive integer")
  int getEntries();

  void setEntries(int value);

  @Description(
      "idle: the time between idle entries, after the last commit (capture writes one about every"
          + " 5 minutes on a quiet database): 30s, 5m, 1h, 1d.")
  @Default.String("5m")
  @Accepts("a positive duration such as 30s, 5m, 1h or 1d")
  String getInterval();

  void setInterval(String value);

  @Description(
      "cleanup: the change-table retention, as the cleanup job's: the low watermark is the newest"
          + " commit at or before the simulator's now minus it: 0m, 30m, 72h, 3d (a number alone"
          + " is minutes).")
  @Accepts("a duration such as 0m, 30m, 72h or 3d (a number alone is minutes)")
  String getRetention();

  void setRetention(String value);

  @Description(
      "cleanup: the new low watermark itself, as sys.sp_cdc_cleanup_change_table's"
          + " @low_water_mark: the start_lsn of a row of cdc.lsn_time_mapping.")
  @Accepts("a commit LSN, 0x followed by 20 hexadecimal digits")
  String getLowWatermark();

  void setLowWatermark(String value);

  @Description("cleanup: clean up every capture instance of the database, not --captureInstance.")
  @Default.Boolean(false)
  boolean getAllInstances();

  void setAllInstances(boolean value);

  @Description("enable-instance, alter: the source table, schema.table (dbo.orders).")
  String getTable();

  void setTable(String value);

  @Description(
      "enable-instance: the columns the new instance captures, comma-separated (the key columns"
          + " among them). Default: every column.")
  String getCapturedColumns();

  void setCapturedColumns(String value);

  @Description("alter: ALTER TABLE ... ADD of '<column> <type>', e.g. 'o_note varchar(100)'.")
  String getAddColumn();

  void setAddColumn(String value);

  @Description("alter: ALTER TABLE ... DROP COLUMN of this column.")
  String getDropColumn();

  void setDropColumn(String value);

  @Description(
      "alter: ALTER TABLE ... ALTER COLUMN of '<column> <new type>', e.g. 'o_comment"
          + " varchar(120)'.")
  String getAlterColumn();

  void setAlterColumn(String value);

  @Description(
      "export: the first LSN exported, inclusive. Default: the lowest min_lsn of the instances.")
  @Accepts("an LSN, 0x followed by 20 hexadecimal digits")
  String getFromLsn();

  void setFromLsn(String value);

  @Description(
      "export: the last LSN exported, inclusive (default max_lsn); import, replay: the last LSN"
          + " replayed, inclusive (default: the export's last commit).")
  @Accepts("an LSN, 0x followed by 20 hexadecimal digits")
  String getToLsn();

  void setToLsn(String value);

  @Description("export: also export the tables' current rows (where the login can read them).")
  @Default.Boolean(true)
  boolean getTableRows();

  void setTableRows(boolean value);

  @Description(
      "export: the new or empty directory the export is written to; import, replay: the export"
          + " to replay.")
  String getExportPath();

  void setExportPath(String value);

  @Description(
      "import, replay: how many commits of cdc.lsn_time_mapping (idle entries count) this step"
          + " replays. Default: up to --toLsn, or every remaining one.")
  @Accepts("a positive integer")
  Integer getCommits();

  void setCommits(Integer value);
}
