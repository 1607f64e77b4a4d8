package org.lakecdc.io.mssqlcdc.client;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalLong;
import javax.sql.DataSource;
import org.apache.beam.sdk.io.jdbc.JdbcIO;
import org.apache.beam.sdk.transforms.SerializableFunction;
import org.apache.beam.sdk.transforms.display.DisplayData;
import org.apache.beam.sdk.transforms.display.HasDisplayData;
import org.checkerframework.checker.nullness.qual.Nullable;

/**
 * Opens the T-SQL {@link CdcClient} over one SQL Server database, its connections taken from a JDBC
 * {@link DataSource} in Beam's own form: a {@link JdbcIO.DataSourceConfiguration} (as {@code
 * JdbcIO} takes it), or a {@code SerializableFunction<Void, DataSource>} provider built on the
 * worker. Serializable: a pipeline ships the factory (never a connection) to workers.
 *
 * <h2>Connections</h2>
 *
 * Each client takes one connection at its first call and gives it back when closed; a reading DoFn
 * keeps its client until teardown. With a {@link JdbcIO.DataSourceConfiguration}, connections come
 * from {@link JdbcIO.DataSourceProviderFromDataSourceConfiguration}: one pooled {@code DataSource}
 * (commons-dbcp2) per configuration per JVM, so a client opened after another closed reuses its
 * connection instead of logging in again. A client holds its connection while open, so the pool
 * must allow as many as a worker opens at once (DoFn instances plus the launcher's clients): {@link
 * #dataSourceConfiguration} sets no limit. A source-table read's session settings ({@code SET
 * LOCK_TIMEOUT}, the isolation level) are reset before its connection goes back.
 *
 * <h2>Passwords</h2>
 *
 * No password is ever serialized: give the configuration a {@link PasswordSource}, a {@code
 * ValueProvider} that reads the password on the worker (an environment variable or a file) when the
 * worker builds its pool. {@link #toString()} and the display data ({@code jdbcUrl}, {@code
 * username}, {@code sourceTimeZone}, {@code lockTimeoutMs}) show no secret.
 *
 * <h2>Client settings</h2>
 *
 * {@link #withSourceTimeZone} (how commit times are converted to UTC) and {@link
 * #withLockTimeoutMs} (the lock timeout of source-table reads) are the T-SQL client's own, beside
 * the JDBC configuration.
 */
public final class SqlCdcClientFactory implements CdcClientFactory, HasDisplayData {
  private static final long serialVersionUID = 1L;

  /** The JDBC driver: Microsoft's mssql-jdbc. */
  public static final String DRIVER_CLASS_NAME = "com.microsoft.sqlserver.jdbc.SQLServerDriver";

  /**
   * What the client tells SQL Server it is ({@code program_name} in {@code sys.dm_exec_sessions}).
   */
  static final String APPLICATION_NAME = "lakecdc";

  private static final String URL_PREFIX = "jdbc:sqlserver://";

  private final JdbcIO.@Nullable DataSourceConfiguration configuration;
  private final SerializableFunction<Void, DataSource> dataSourceProvider;
  private final SourceTimeZone sourceTimeZone;
  private final long lockTimeoutMs;

  private SqlCdcClientFactory(
      JdbcIO.@Nullable DataSourceConfiguration configuration,
      SerializableFunction<Void, DataSource> dataSourceProvider,
      SourceTimeZone sourceTimeZone,
      long lockTimeoutMs) {
    this.configuration = configuration;
    this.dataSourceProvider = Objects.requireNonNull(dataSourceProvider, "dataSourceProvider");
    this.sourceTimeZone = Objects.requireNonNull(sourceTimeZone, "sourceTimeZone");
    this.lockTimeoutMs = lockTimeoutMs;
  }

  /**
   * A factory whose connections come from Beam's pooled {@code DataSource} of {@code configuration}
   * ({@link JdbcIO.DataSourceProviderFromDataSourceConfiguration}); {@code sourceTimeZone=auto}, no
   * lock timeout.
   *
   * @param configuration the JDBC source, e.g. from {@link #dataSourceConfiguration}
   * @return the factory
   */
  public static SqlCdcClientFactory of(JdbcIO.DataSourceConfiguration configuration) {
    Objects.requireNonNull(configuration, "configuration");
    return new SqlCdcClientFactory(
        configuration,
        JdbcIO.DataSourceProviderFromDataSourceConfiguration.of(configuration),
        SourceTimeZone.auto(),
        -1);
  }

  /**
   * A factory whose connections come from the {@code DataSource} {@code provider} returns on each
   * worker (JdbcIO's {@code withDataSourceProviderFn} form); {@code sourceTimeZone=auto}, no lock
   * timeout. The provider should return one pooled {@code DataSource} per JVM.
   *
   * @param provider builds or returns the worker's {@code DataSource}; must not capture a password
   * @return the factory
   */
  public static SqlCdcClientFactory of(SerializableFunction<Void, DataSource> provider) {
    return new SqlCdcClientFactory(null, provider, SourceTimeZone.auto(), -1);
  }

  /**
   * Beam's JDBC configuration of the SQL Server database at {@code url}: mssql-jdbc's driver, the
   * login, the password read on each worker from {@code password}, the driver properties {@code
   * loginTimeout} and {@code applicationName=lakecdc}, and a pool without a connection limit (each
   * open client holds one connection).
   *
   * @param url a {@code jdbc:sqlserver://} URL naming the database; it must not carry a password
   * @param user the SQL Server login
   * @param password where each worker reads the password
   * @param connectTimeout the login timeout, whole seconds, 0 or more (0: the driver's default)
   * @return the configuration
   * @throws IllegalArgumentException for another URL scheme, a URL with {@code password=}, a blank
   *     user or a bad timeout, naming the option ({@code connectionUrl}, {@code user}, {@code
   *     connectTimeout})
   */
  public static JdbcIO.DataSourceConfiguration dataSourceConfiguration(
      String url, String user, PasswordSource password, Duration connectTimeout) {
    if (url == null || !url.startsWith(URL_PREFIX)) {
      throw new IllegalArgumentException(
          "connectionUrl must be a SQL Server JDBC URL (jdbc:sqlserver://host:1433;"
              + "databaseName=db), not '"
              + url
              + "'");
    }
    if (url.toLowerCase(Locale.ROOT).contains("password=")) {
      throw new IllegalArgumentException(
          "connectionUrl must not contain the password; give its environment variable"
              + " (passwordEnv) or file (passwordFile) instead");
    }
    if (user == null || user.isBlank()) {
      throw new IllegalArgumentException("user must not be empty");
    }
    if (connectTimeout == null || connectTimeout.isNegative() || connectTimeout.getNano() != 0) {
      throw new IllegalArgumentException(
          "connectTimeout must be a whole number of seconds, 0 or more, not " + connectTimeout);
    }
    return JdbcIO.DataSourceConfiguration.create(DRIVER_CLASS_NAME, url)
        .withUsername(user)
        .withPassword(Objects.requireNonNull(password, "password"))
        .withConnectionProperties(connectionProperties(connectTimeout))
        .withMaxConnections(-1);
  }

  /** The driver properties of {@link #dataSourceConfiguration}, {@code key=value;...}. */
  static String connectionProperties(Duration connectTimeout) {
    return "loginTimeout=" + connectTimeout.getSeconds() + ";applicationName=" + APPLICATION_NAME;
  }

  /**
   * The server clock's zone (see {@link SourceTimeZone}).
   *
   * @param zone {@code auto} (the default), {@code UTC} or a Windows zone name
   * @return a copy with it
   */
  public SqlCdcClientFactory withSourceTimeZone(SourceTimeZone zone) {
    return new SqlCdcClientFactory(configuration, dataSourceProvider, zone, lockTimeoutMs);
  }

  /**
   * {@code SET LOCK_TIMEOUT} for every read of a source table (snapshots, chunks, key queries),
   * never for change-table reads (docs/sql-server.md "Connection settings"): a read blocked longer
   * fails with SQL Server error 1222 instead of waiting forever behind a writer.
   *
   * @param milliseconds 0 or more; 0 fails at the first lock wait
   * @return a copy with it
   * @throws IllegalArgumentException for a negative value or one above {@code Integer.MAX_VALUE}
   */
  public SqlCdcClientFactory withLockTimeoutMs(long milliseconds) {
    if (milliseconds < 0 || milliseconds > Integer.MAX_VALUE) {
      throw new IllegalArgumentException(
          "lockTimeoutMs must be an integer from 0 to "
              + Integer.MAX_VALUE
              + ", not "
              + milliseconds);
    }
    return new SqlCdcClientFactory(configuration, dataSourceProvider, sourceTimeZone, milliseconds);
  }

  /**
   * The server clock's zone.
   *
   * @return the setting
   */
  public SourceTimeZone sourceTimeZone() {
    return sourceTimeZone;
  }

  /**
   * The lock timeout of source-table reads.
   *
   * @return milliseconds, or empty to wait for locks without limit (SQL Server's default)
   */
  public OptionalLong lockTimeoutMs() {
    return lockTimeoutMs < 0 ? OptionalLong.empty() : OptionalLong.of(lockTimeoutMs);
  }

  /**
   * The JDBC configuration this factory was made from, when it was ({@link
   * #of(JdbcIO.DataSourceConfiguration)}).
   *
   * @return the configuration, or null for a provider function
   */
  public JdbcIO.@Nullable DataSourceConfiguration dataSourceConfiguration() {
    return configuration;
  }

  /**
   * Opens a client; it takes its connection at its first call. The caller closes it.
   *
   * @return a new client
   */
  @Override
  public CdcClient open() {
    return new SqlCdcClient(
        this, SqlSession.Connector.pooled(dataSourceProvider), RetryPolicy.standard());
  }

  /**
   * The JDBC source's display data ({@code jdbcUrl}, {@code username}, ...; never a password) and
   * {@code sourceTimeZone}, {@code lockTimeoutMs}.
   */
  @Override
  public void populateDisplayData(DisplayData.Builder builder) {
    if (dataSourceProvider instanceof HasDisplayData) {
      ((HasDisplayData) dataSourceProvider).populateDisplayData(builder);
    }
    builder.add(DisplayData.item("sourceTimeZone", sourceTimeZone.toString()));
    if (lockTimeoutMs >= 0) {
      builder.add(DisplayData.item("lockTimeoutMs", lockTimeoutMs));
    }
  }

  /**
   * The settings shown by {@link #toString()}, never a password.
   *
   * @return the display data items by key
   */
  Map<String, String> describe() {
    Map<String, String> out = new LinkedHashMap<>();
    for (DisplayData.Item item : DisplayData.from(this).items()) {
      out.put(item.getKey(), String.valueOf(item.getValue()));
    }
    return out;
  }

  @Override
  public boolean equals(@Nullable Object o) {
    if (!(o instanceof SqlCdcClientFactory)) {
      return false;
    }
    SqlCdcClientFactory f = (SqlCdcClientFactory) o;
    return (configuration != null
            ? configuration.equals(f.configuration)
            : f.configuration == null && dataSourceProvider.equals(f.dataSourceProvider))
        && sourceTimeZone.equals(f.sourceTimeZone)
        && lockTimeoutMs == f.lockTimeoutMs;
  }

  @Override
  public int hashCode() {
    return Objects.hash(
        configuration != null ? configuration : dataSourceProvider, sourceTimeZone, lockTimeoutMs);
  }

  /**
   * The settings of the display data, never a password.
   *
   * @return {@code SqlCdcClientFactory{jdbcUrl=..., username=..., sourceTimeZone=auto, ...}}
   */
  @Override
  public String toString() {
    return "SqlCdcClientFactory" + describe();
  }
}
