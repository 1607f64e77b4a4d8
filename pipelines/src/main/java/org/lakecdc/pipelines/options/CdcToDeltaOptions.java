package org.lakecdc.pipelines.options;

import org.apache.beam.sdk.options.Default;
import org.apache.beam.sdk.options.Description;
import org.lakecdc.io.mssqlcdc.read.DataLossPolicy;
import org.lakecdc.io.mssqlcdc.read.SchemaChangePolicy;

/**
 * Options of the main job {@code CdcToDelta}, in Beam's {@code --camelCase=value} form. Every value
 * is validated before anything runs; docs/options.md is the reference.
 */
public interface CdcToDeltaOptions
    extends OutputOptions,
        SqlServerOptions,
        DemoOptions,
        SourceReadOptions,
        HadoopConfOptions,
        CaptureInstanceOptions,
        TablesListOptions,
        FactsTableOptions,
        ControlTableOptions,
        GranularityOptions,
        BatchReadOptions,
        SilverOptions,
        HistoryOptions,
        ChunkedSnapshotOptions {
  /** {@code --silverIntervalSeconds}'s default, in seconds. */
  int DEFAULT_SILVER_INTERVAL_SECONDS = 5;

  @Description(
      "File listing the capture instances to stream, one a line: the capture instance, then"
          + " options of that table only (dbo_lineitem --maxCommitsPerBatch=20), which win over the"
          + " command line's; # starts a comment. Instead of --tables.")
  String getTablesFile();

  void setTablesFile(String value);

  @Description(
      "With --tables or --tablesFile: each table's bronze path or URI; {ci} is replaced by the"
          + " capture instance in lower case. Must contain {ci}.")
  @Default.String("lakecdc-demo/delta/{ci}")
  String getTargetTemplate();

  void setTargetTemplate(String value);

  @Description(
      "With --tables or --tablesFile: each table's app id; {ci} is replaced by the capture"
          + " instance as listed. Must contain {ci}.")
  @Default.String("{ci}")
  String getAppIdTemplate();

  void setAppIdTemplate(String value);

  @Description(
      "Path or URI of the bronze Delta table (the target). Default:"
          + " lakecdc-demo/delta/<captureInstance>.")
  String getTarget();

  void setTarget(String value);

  @Description(
      "With --continuous and silver: apply silver at least every this many seconds while the run"
          + " follows the source (on Direct and Flink; on Spark each bounded run applies it when"
          + " its commits are done).")
  @Default.Integer(DEFAULT_SILVER_INTERVAL_SECONDS)
  @Accepts("a positive integer")
  int getSilverIntervalSeconds();

  void setSilverIntervalSeconds(int value);

  @Description(
      "The job's identity in the target: transaction ids of bronze and facts commits. Keep it for"
          + " the life of the target. Default: the capture instance.")
  String getAppId();

  void setAppId(String value);

  @Description(
      "On a new target, take a whole snapshot of the table first (rows with _operation 0 stamped"
          + " with the max_lsn recorded before the read), then stream the changes after it.")
  @Default.Boolean(true)
  boolean getBootstrap();

  void setBootstrap(boolean value);

  @Description(
      "Seed a new target from an existing copy of the source table instead of the bootstrap"
          + " snapshot: the path or URI of a Delta table holding the copy (columns matched to the"
          + " captured columns by name ignoring case, extra columns dropped). Needs --seedAsOf;"
          + " not with --startingLsn. A rerun on the seeded target goes on streaming; a"
          + " different seed of a target that has a snapshot is refused.")
  String getSeedTable();

  void setSeedTable(String value);

  @Description(
      "With --seedTable: when the copy started being read, as a UTC ISO-8601 instant (e.g."
          + " 2026-09-28T13:52:00Z; an offset is converted), or an LSN 0x... recorded before"
          + " that. The copy is stamped with the last commit at or before it.")
  String getSeedAsOf();

  void setSeedAsOf(String value);

  @Description(
      "With --seedTable: captured columns the copy lacks are seeded as NULL instead of refused.")
  @Default.Boolean(false)
  boolean getSeedAllowMissingColumns();

  void setSeedAllowMissingColumns(boolean value);

  @Description("Parts each read is split into, read in parallel (at least 1).")
  @Default.Integer(1)
  @Accepts("a positive integer")
  int getNumPartitions();

  void setNumPartitions(int value);

  @Description("Read __$command_id into _command_id (false for change tables without it).")
  @Default.Boolean(true)
  boolean getIncludeCommandId();

  void setIncludeCommandId(boolean value);

  @Description(
      "Captured columns to read and their types, as a DDL list ('order_id INT, amount"
          + " DECIMAL(18,2)'). Default: inferred from CDC metadata.")
  String getColumns();

  void setColumns(String value);

  @Description(
      "What DDL on the source table in a batch's LSN range does, checked before the batch is read:"
          + " classify (default) stops only when a captured column the job reads changes to a"
          + " type its current type cannot hold (restart to re-infer the schema, or update"
          + " --columns; enable delta.enableTypeWidening on bronze for a widening), and goes on"
          + " past ADD and DROP COLUMN; fail stops at any DDL.")
  @Default.Enum("CLASSIFY")
  @Accepts("'classify' or 'fail'")
  SchemaChangePolicy getSchemaChangePolicy();

  void setSchemaChangePolicy(SchemaChangePolicy value);

  @Description(
      "What the stream does when CDC cleanup purged changes it had not read yet: fail (default)"
          + " stops the table with the data-loss error; skip goes on from the capture instance's"
          + " min_lsn and records the gap as a data_skipped facts event (the changes are lost, no"
          + " verdict covers the gap); resnapshot takes a new snapshot of the table (--snapshot"
          + " decides whole or chunked) into a new generation (app id <appId>.g<n>) and streams"
          + " on from its snapshot LSN, before the stream starts and when a running stream meets"
          + " the loss.")
  @Default.Enum("FAIL")
  @Accepts("'fail', 'skip' or 'resnapshot'")
  DataLossPolicy getOnDataLoss();

  void setOnDataLoss(DataLossPolicy value);

  @Description(
      "With --onDataLoss=resnapshot: at most one automatic re-snapshot (or failed attempt) per this"
          + " many days, so a stream that cannot keep up with the CDC retention fails loudly"
          + " instead of re-snapshotting forever; set it above the retention (SQL Server's default"
          + " is 3 days); 0 re-snapshots now.")
  @Default.Double(7)
  @Accepts("0 or a positive number of days")
  double getResnapshotIntervalDays();

  void setResnapshotIntervalDays(double value);

  @Description(
      "Keep following the source until stopped (Ctrl-C or SIGTERM, or --runForSeconds) instead of"
          + " ending at the max_lsn read at the start. On the DirectRunner and the FlinkRunner the"
          + " source runs in its continuous form and each batch is committed as it arrives; on the"
          + " SparkRunner bounded runs are repeated every --pollIntervalSeconds.")
  @Default.Boolean(false)
  boolean getContinuous();

  void setContinuous(boolean value);

  @Description(
      "With --continuous: seconds the source waits before polling max_lsn again when caught up,"
          + " or between two bounded runs.")
  @Default.Integer(5)
  @Accepts("a positive integer")
  int getPollIntervalSeconds();

  void setPollIntervalSeconds(int value);

  @Description(
      "With --continuous: stop cleanly after following the source this many seconds (counted"
          + " after the bootstrap; every batch read is committed); 0 runs until stopped.")
  @Default.Long(0)
  @Accepts("0 (run until stopped) or a positive integer")
  long getRunForSeconds();

  void setRunForSeconds(long value);

  @Description(
      "With --continuous: true repeats bounded runs, false runs the source's continuous form."
          + " Default: true on the SparkRunner (its streaming mode cannot run the continuous"
          + " source), false on the others.")
  Boolean getRepeatBoundedRuns();

  void setRepeatBoundedRuns(Boolean value);
}
