package org.lakecdc.io.mssqlcdc.client;

import java.io.Serializable;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Properties;
import java.util.regex.Pattern;

/**
 * How the T-SQL client reaches SQL Server: a JDBC URL or host and database, the login, where its
 * password is read ({@link PasswordSource}), TLS settings passed to the driver, the login timeout,
 * the lock timeout of source-table reads and the server clock's zone. Immutable and serializable;
 * every {@code withX} returns a copy. It never holds the password: {@link #toString()} and {@link
 * #describe()} are safe to log and to show as Beam display data.
 *
 * <p>The driver is Microsoft's mssql-jdbc; the properties set are those of Microsoft docs "Setting
 * the connection properties" ({@code user}, {@code password}, {@code databaseName}, {@code
 * loginTimeout} in seconds, {@code encrypt}, {@code trustServerCertificate}, {@code
 * hostNameInCertificate}, {@code trustStore}, {@code applicationName}).
 */
public final class ConnectionConfig implements Serializable {
  private static final long serialVersionUID = 1L;

  /** The default login timeout: 30 s (docs/sql-server.md "Connection settings"). */
  public static final Duration DEFAULT_CONNECT_TIMEOUT = Duration.ofSeconds(30);

  /** The default SQL Server port. */
  public static final int DEFAULT_PORT = 1433;

  /**
   * What the client tells SQL Server it is ({@code program_name} in {@code sys.dm_exec_sessions}).
   */
  static final String APPLICATION_NAME = "lakecdc";

  private static final String URL_PREFIX = "jdbc:sqlserver://";

  /** A host name, IPv4 address or {@code host\instance}; nothing a URL could be split at. */
  private static final Pattern HOST = Pattern.compile("[A-Za-z0-9._\\-]+(\\\\[A-Za-z0-9_$]+)?");

  /** {@code encrypt} values mssql-jdbc 12+ accepts. */
  private static final java.util.Set<String> ENCRYPT =
      java.util.Set.of("true", "false", "strict", "mandatory", "optional");

  private final String url;
  private final String host;
  private final int port;
  private final String database;
  private final String user;
  private final PasswordSource password;
  private final String encrypt;
  private final Boolean trustServerCertificate;
  private final String hostNameInCertificate;
  private final String trustStore;
  private final long connectTimeoutSeconds;
  private final long lockTimeoutMs;
  private final SourceTimeZone sourceTimeZone;

  private ConnectionConfig(
      String url,
      String host,
      int port,
      String database,
      String user,
      PasswordSource password,
      String encrypt,
      Boolean trustServerCertificate,
      String hostNameInCertificate,
      String trustStore,
      long connectTimeoutSeconds,
      long lockTimeoutMs,
      SourceTimeZone sourceTimeZone) {
    this.url = url;
    this.host = host;
    this.port = port;
    this.database = database;
    this.user = user;
    this.password = password;
    this.encrypt = encrypt;
    this.trustServerCertificate = trustServerCertificate;
    this.hostNameInCertificate = hostNameInCertificate;
    this.trustStore = trustStore;
    this.connectTimeoutSeconds = connectTimeoutSeconds;
    this.lockTimeoutMs = lockTimeoutMs;
    this.sourceTimeZone = sourceTimeZone;
  }

  /**
   * A connection through a JDBC URL, e.g. {@code
   * jdbc:sqlserver://db.example.com:1433;databaseName=sales;encrypt=strict}.
   *
   * @param url the URL; it must start with {@code jdbc:sqlserver://} and must not carry a password
   * @param user the SQL Server login
   * @param password where the password is read at connection time
   * @return the configuration (login timeout 30 s, no lock timeout, {@code sourceTimeZone=auto})
   * @throws IllegalArgumentException for another URL scheme, a URL with {@code password=}, or a
   *     blank user
   */
  public static ConnectionConfig url(String url, String user, PasswordSource password) {
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
    return new ConnectionConfig(
        url,
        null,
        DEFAULT_PORT,
        null,
        requireUser(user),
        Objects.requireNonNull(password, "password"),
        null,
        null,
        null,
        null,
        DEFAULT_CONNECT_TIMEOUT.getSeconds(),
        -1,
        SourceTimeZone.auto());
  }

  /**
   * A connection to a host and database.
   *
   * @param host a host name or address, optionally {@code host\instance}
   * @param port the TCP port (1433 by default)
   * @param database the database whose CDC is read
   * @param user the SQL Server login
   * @param password where the password is read at connection time
   * @return the configuration
   * @throws IllegalArgumentException for an invalid host, port or database name, or a blank user
   */
  public static ConnectionConfig host(
      String host, int port, String database, String user, PasswordSource password) {
    if (host == null || !HOST.matcher(host).matches()) {
      throw new IllegalArgumentException(
          "host must be a host name or address, optionally host\\instance, not '" + host + "'");
    }
    if (port < 1 || port > 65535) {
      throw new IllegalArgumentException("port must be in 1..65535, not " + port);
    }
    SqlIdentifiers.name(database);
    return new ConnectionConfig(
        null,
        host,
        port,
        database,
        requireUser(user),
        Objects.requireNonNull(password, "password"),
        null,
        null,
        null,
        null,
        DEFAULT_CONNECT_TIMEOUT.getSeconds(),
        -1,
        SourceTimeZone.auto());
  }

  private static String requireUser(String user) {
    if (user == null || user.isBlank()) {
      throw new IllegalArgumentException("user must not be empty");
    }
    return user;
  }

  /**
   * TLS: the driver's {@code encrypt} property.
   *
   * @param value {@code true}, {@code false}, {@code strict} (TDS 8.0), {@code mandatory} or {@code
   *     optional}, any case
   * @return a copy with it
   * @throws IllegalArgumentException for another value
   */
  public ConnectionConfig withEncrypt(String value) {
    String v = value == null ? "" : value.strip().toLowerCase(Locale.ROOT);
    if (!ENCRYPT.contains(v)) {
      throw new IllegalArgumentException(
          "encrypt must be one of " + new java.util.TreeSet<>(ENCRYPT) + ", not '" + value + "'");
    }
    return copy(v, trustServerCertificate, hostNameInCertificate, trustStore);
  }

  /**
   * TLS: the driver's {@code trustServerCertificate} property (true skips certificate validation;
   * for tests and self-signed development servers only).
   *
   * @param value whether to trust the server's certificate without validating it
   * @return a copy with it
   */
  public ConnectionConfig withTrustServerCertificate(boolean value) {
    return copy(encrypt, value, hostNameInCertificate, trustStore);
  }

  /**
   * TLS: the driver's {@code hostNameInCertificate} property.
   *
   * @param value the host name the server's certificate must name
   * @return a copy with it
   */
  public ConnectionConfig withHostNameInCertificate(String value) {
    return copy(encrypt, trustServerCertificate, Objects.requireNonNull(value), trustStore);
  }

  /**
   * TLS: the driver's {@code trustStore} property (a Java trust store file; the JVM's default trust
   * store otherwise).
   *
   * @param path the trust store's path
   * @return a copy with it
   */
  public ConnectionConfig withTrustStore(String path) {
    return copy(
        encrypt, trustServerCertificate, hostNameInCertificate, Objects.requireNonNull(path));
  }

  private ConnectionConfig copy(
      String encrypt,
      Boolean trustServerCertificate,
      String hostNameInCertificate,
      String trustStore) {
    return new ConnectionConfig(
        url,
        host,
        port,
        database,
        user,
        password,
        encrypt,
        trustServerCertificate,
        hostNameInCertificate,
        trustStore,
        connectTimeoutSeconds,
        lockTimeoutMs,
        sourceTimeZone);
  }

  /**
   * The login timeout given to the driver ({@code loginTimeout}, docs/sql-server.md "Connection
   * settings").
   *
   * @param timeout whole seconds, 0 or more (0 is the driver's own default)
   * @return a copy with it
   * @throws IllegalArgumentException for a negative timeout or one with a fraction of a second
   */
  public ConnectionConfig withConnectTimeout(Duration timeout) {
    if (timeout == null || timeout.isNegative() || timeout.getNano() != 0) {
      throw new IllegalArgumentException(
          "connectTimeout must be a whole number of seconds, 0 or more, not " + timeout);
    }
    return new ConnectionConfig(
        url,
        host,
        port,
        database,
        user,
        password,
        encrypt,
        trustServerCertificate,
        hostNameInCertificate,
        trustStore,
        timeout.getSeconds(),
        lockTimeoutMs,
        sourceTimeZone);
  }

  /**
   * {@code SET LOCK_TIMEOUT} for every read of a source table (snapshots, key tiles), never for
   * change-table reads (docs/sql-server.md "Connection settings"): a read blocked longer fails with
   * SQL Server error 1222 instead of waiting forever behind a writer.
   *
   * @param milliseconds 0 or more; 0 fails at the first lock wait
   * @return a copy with it
   * @throws IllegalArgumentException for a negative value
   */
  public ConnectionConfig withLockTimeoutMs(long milliseconds) {
    if (milliseconds < 0 || milliseconds > Integer.MAX_VALUE) {
      throw new IllegalArgumentException(
          "lockTimeoutMs must be an integer from 0 to "
              + Integer.MAX_VALUE
              + ", not "
              + milliseconds);
    }
    return new ConnectionConfig(
        url,
        host,
        port,
        database,
        user,
        password,
        encrypt,
        trustServerCertificate,
        hostNameInCertificate,
        trustStore,
        connectTimeoutSeconds,
        milliseconds,
        sourceTimeZone);
  }

  /**
   * The server clock's zone (see {@link SourceTimeZone}).
   *
   * @param zone {@code auto}, {@code UTC} or a Windows zone name
   * @return a copy with it
   */
  public ConnectionConfig withSourceTimeZone(SourceTimeZone zone) {
    return new ConnectionConfig(
        url,
        host,
        port,
        database,
        user,
        password,
        encrypt,
        trustServerCertificate,
        hostNameInCertificate,
        trustStore,
        connectTimeoutSeconds,
        lockTimeoutMs,
        Objects.requireNonNull(zone, "zone"));
  }

  /**
   * The SQL Server login.
   *
   * @return the user name
   */
  public String user() {
    return user;
  }

  /**
   * Where the password is read.
   *
   * @return the password source
   */
  public PasswordSource password() {
    return password;
  }

  /**
   * The login timeout.
   *
   * @return whole seconds
   */
  public Duration connectTimeout() {
    return Duration.ofSeconds(connectTimeoutSeconds);
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
   * The server clock's zone.
   *
   * @return the setting
   */
  public SourceTimeZone sourceTimeZone() {
    return sourceTimeZone;
  }

  /**
   * The JDBC URL the driver is given: the configured URL, or {@code jdbc:sqlserver://host:port}
   * (the database goes in the properties).
   *
   * @return the URL, without any secret
   */
  public String jdbcUrl() {
    return url != null ? url : URL_PREFIX + host + ":" + port;
  }

  /**
   * The database name given as a property.
   *
   * @return the database for a host configuration; empty for a URL (the URL names it)
   */
  public Optional<String> database() {
    return Optional.ofNullable(database);
  }

  /**
   * The driver properties with the password read just now; never logged.
   *
   * @param passwordValue the password, from {@link PasswordSource#read()}
   * @return the properties for {@code Driver.connect}
   */
  Properties driverProperties(String passwordValue) {
    Properties p = new Properties();
    p.setProperty("user", user);
    p.setProperty("password", passwordValue);
    p.setProperty("loginTimeout", Long.toString(connectTimeoutSeconds));
    p.setProperty("applicationName", APPLICATION_NAME);
    if (database != null) {
      p.setProperty("databaseName", database);
    }
    if (encrypt != null) {
      p.setProperty("encrypt", encrypt);
    }
    if (trustServerCertificate != null) {
      p.setProperty("trustServerCertificate", trustServerCertificate.toString());
    }
    if (hostNameInCertificate != null) {
      p.setProperty("hostNameInCertificate", hostNameInCertificate);
    }
    if (trustStore != null) {
      p.setProperty("trustStore", trustStore);
    }
    return p;
  }

  /**
   * Every setting except the password, by name, for logs and display data.
   *
   * @return {@code url}, {@code user}, {@code password} (where it is read: {@code env:NAME} or
   *     {@code file:PATH}), then the settings that are set
   */
  public Map<String, String> describe() {
    Map<String, String> out = new LinkedHashMap<>();
    out.put("url", jdbcUrl());
    if (database != null) {
      out.put("database", database);
    }
    out.put("user", user);
    out.put("password", password.toString());
    if (encrypt != null) {
      out.put("encrypt", encrypt);
    }
    if (trustServerCertificate != null) {
      out.put("trustServerCertificate", trustServerCertificate.toString());
    }
    if (hostNameInCertificate != null) {
      out.put("hostNameInCertificate", hostNameInCertificate);
    }
    if (trustStore != null) {
      out.put("trustStore", trustStore);
    }
    out.put("connectTimeout", connectTimeoutSeconds + "s");
    if (lockTimeoutMs >= 0) {
      out.put("lockTimeoutMs", Long.toString(lockTimeoutMs));
    }
    out.put("sourceTimeZone", sourceTimeZone.toString());
    return out;
  }

  @Override
  public boolean equals(Object o) {
    if (!(o instanceof ConnectionConfig)) {
      return false;
    }
    ConnectionConfig c = (ConnectionConfig) o;
    return describe().equals(c.describe());
  }

  @Override
  public int hashCode() {
    return describe().hashCode();
  }

  /**
   * The settings of {@link #describe()}, never the password.
   *
   * @return {@code ConnectionConfig{url=..., user=..., password=env:NAME, ...}}
   */
  @Override
  public String toString() {
    return "ConnectionConfig" + describe().toString();
  }
}
