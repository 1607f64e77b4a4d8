package org.lakecdc.pipelines.cli;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.io.mssqlcdc.client.CdcClientFactory;
import org.lakecdc.io.mssqlcdc.client.FileErrors;
import org.lakecdc.io.mssqlcdc.client.PasswordSource;
import org.lakecdc.io.mssqlcdc.client.SourceTimeZone;
import org.lakecdc.io.mssqlcdc.client.SqlCdcClientFactory;
import org.lakecdc.pipelines.options.SqlServerOptions;

/**
 * The real SQL Server of a command line ({@code --connectionUrl}, {@code --user}, {@code
 * --passwordEnv} or {@code --passwordFile}, {@code --connectTimeout}, {@code --sourceTimeZone},
 * {@code --lockTimeoutMs}), validated the same way for every command that reads one (the main job,
 * {@code Status}), as Beam's JDBC configuration ({@link
 * SqlCdcClientFactory#dataSourceConfiguration}). The password itself is read by each worker when it
 * builds its connection pool, never here (only whether it can be).
 */
public final class SqlServerSource {
  private SqlServerSource() {}

  /**
   * The client factory of the SQL Server at {@code url}.
   *
   * @param url {@code --connectionUrl}, a {@code jdbc:sqlserver://} URL without a password
   * @param user {@code --user}
   * @param passwordEnv {@code --passwordEnv}, or null
   * @param passwordFile {@code --passwordFile}, or null
   * @param connectTimeoutSeconds {@code --connectTimeout}, 0 or more
   * @param zone {@code --sourceTimeZone}, parsed
   * @param lockTimeoutMs {@code --lockTimeoutMs}, or null for the server's default
   * @throws IllegalArgumentException one line naming the option and what it accepts
   */
  /**
   * {@code --connectTimeout} and {@code --sourceTimeZone}, checked as every command reading a
   * source checks them (also without {@code --connectionUrl}, where the zone must stay auto).
   *
   * @return the parsed zone
   * @throws IllegalArgumentException one line naming the option and what it accepts
   */
  public static SourceTimeZone checkTimeoutAndZone(SqlServerOptions o) {
    if (o.getConnectTimeout() < 0) {
      throw new IllegalArgumentException(
          "--connectTimeout must be 0 or a positive number of seconds, not '"
              + o.getConnectTimeout()
              + "'");
    }
    try {
      return SourceTimeZone.parse(o.getSourceTimeZone());
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "--sourceTimeZone must be auto, UTC or a Windows time-zone name such as 'E. South"
              + " America Standard Time', not '"
              + o.getSourceTimeZone().replaceAll("\\p{Cntrl}", "?")
              + "'");
    }
  }

  /**
   * The client factory of {@code o}'s SQL Server ({@code --connectionUrl} given).
   *
   * @throws IllegalArgumentException one line naming the option and what it accepts
   */
  public static CdcClientFactory factory(
      SqlServerOptions o, SourceTimeZone zone, @Nullable Long lockTimeoutMs) {
    return factory(
        o.getConnectionUrl(),
        o.getUser(),
        o.getPasswordEnv(),
        o.getPasswordFile(),
        o.getConnectTimeout(),
        zone,
        lockTimeoutMs);
  }

  public static CdcClientFactory factory(
      String url,
      @Nullable String user,
      @Nullable String passwordEnv,
      @Nullable String passwordFile,
      long connectTimeoutSeconds,
      SourceTimeZone zone,
      @Nullable Long lockTimeoutMs) {
    if (!url.startsWith("jdbc:sqlserver://")) {
      throw new IllegalArgumentException(
          "--connectionUrl must be a SQL Server JDBC URL (jdbc:sqlserver://host:1433;"
              + "databaseName=db), not '"
              + url
              + "'");
    }
    if (user == null || user.isBlank()) {
      throw new IllegalArgumentException("--user must not be empty");
    }
    if ((passwordEnv == null) == (passwordFile == null)) {
      throw new IllegalArgumentException(
          "--connectionUrl needs the password from exactly one of --passwordEnv (an environment"
              + " variable's name) or --passwordFile (a file's path)");
    }
    PasswordSource password;
    if (passwordEnv != null) {
      if (System.getenv(passwordEnv) == null) {
        throw new IllegalArgumentException(
            "--passwordEnv names the environment variable " + passwordEnv + ", which is not set");
      }
      password = PasswordSource.environmentVariable(passwordEnv);
    } else {
      try {
        Files.readString(Path.of(passwordFile), StandardCharsets.UTF_8);
      } catch (IOException e) {
        throw new IllegalArgumentException(
            "--passwordFile " + passwordFile + " cannot be read: " + FileErrors.reason(e));
      } catch (RuntimeException e) {
        throw new IllegalArgumentException(
            "--passwordFile " + passwordFile + " cannot be read: " + CommandLine.firstLine(e));
      }
      password = PasswordSource.file(passwordFile);
    }
    SqlCdcClientFactory factory;
    try {
      factory =
          SqlCdcClientFactory.of(
              SqlCdcClientFactory.dataSourceConfiguration(
                  url, user, password, Duration.ofSeconds(connectTimeoutSeconds)));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("--" + e.getMessage());
    }
    factory = factory.withSourceTimeZone(zone);
    if (lockTimeoutMs != null) {
      factory = factory.withLockTimeoutMs(lockTimeoutMs);
    }
    return factory;
  }
}
