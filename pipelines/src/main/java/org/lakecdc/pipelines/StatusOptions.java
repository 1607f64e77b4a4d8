package org.lakecdc.pipelines;

import org.apache.beam.sdk.options.Default;
import org.apache.beam.sdk.options.Description;

/**
 * Options of {@link Status}, in Beam's {@code --camelCase=value} form: the facts and control tables
 * the main job writes (the same defaults as {@link CdcToDeltaOptions}), and optionally the source,
 * whose newest commit the lag is measured against. docs/status.md is the reference.
 */
public interface StatusOptions extends TableReadOptions {
  @Description("Path or URI of the facts Delta table to read (shared by every table of the job).")
  @Default.String("lakecdc-demo/delta/facts")
  String getFactsTable();

  void setFactsTable(String value);

  @Description("Path or URI of the control Delta table table_finalization to read.")
  @Default.String("lakecdc-demo/delta/table_finalization")
  String getControlTable();

  void setControlTable(String value);

  @Description(
      "Directory of the SQL Server CDC simulator whose newest commit the lag is measured"
          + " against. Default: lakecdc-demo/source when it holds a simulator database; without a"
          + " source the lag is each table's last batch's. Not with --connectionUrl.")
  String getFakePath();

  void setFakePath(String value);

  @Description(
      "JDBC URL of the SQL Server whose newest commit the lag is measured against"
          + " (jdbc:sqlserver://host:1433;databaseName=db); not with --fakePath.")
  String getConnectionUrl();

  void setConnectionUrl(String value);

  @Description("SQL Server login for --connectionUrl.")
  String getUser();

  void setUser(String value);

  @Description("Name of the environment variable holding the password of --user.")
  String getPasswordEnv();

  void setPasswordEnv(String value);

  @Description("File holding the password of --user (first line); an alternative to --passwordEnv.")
  String getPasswordFile();

  void setPasswordFile(String value);

  @Description(
      "Login timeout in seconds for --connectionUrl (the driver's loginTimeout); 0 or more.")
  @Default.Integer(30)
  @Accepts("0 or a positive number of seconds")
  int getConnectTimeout();

  void setConnectTimeout(int value);

  @Description(
      "With --connectionUrl: the zone of the SQL Server clock that commit times are converted"
          + " from: auto, UTC, or a Windows zone name such as 'E. South America Standard Time'.")
  @Default.String("auto")
  String getSourceTimeZone();

  void setSourceTimeZone(String value);
}
