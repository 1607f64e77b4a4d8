package org.lakecdc.pipelines.options;

import org.apache.beam.sdk.options.Default;
import org.apache.beam.sdk.options.Description;
import org.apache.beam.sdk.options.PipelineOptions;

/**
 * How a command reaches a real SQL Server ({@code --connectionUrl} and its login), shared by the
 * main job ({@link CdcToDeltaOptions}) and {@code Status}; validated by {@code SqlServerSource}.
 * The password itself is never an option, never logged and never written to a table.
 */
public interface SqlServerOptions extends PipelineOptions {
  @Description(
      "JDBC URL of a real SQL Server (jdbc:sqlserver://host:1433;databaseName=db). When set, it"
          + " is read instead of the simulator; not with --fakePath.")
  String getConnectionUrl();

  void setConnectionUrl(String value);

  @Description("SQL Server login for --connectionUrl.")
  String getUser();

  void setUser(String value);

  @Description(
      "Name of the environment variable holding the password of --user. The password itself is"
          + " never an option, never logged and never written to facts.")
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
          + " from: auto (detected on SQL Server 2022+ and Azure SQL; the current offset before"
          + " 2022, with a warning), UTC, or a Windows zone name such as 'E. South America"
          + " Standard Time'.")
  @Default.String("auto")
  String getSourceTimeZone();

  void setSourceTimeZone(String value);
}
