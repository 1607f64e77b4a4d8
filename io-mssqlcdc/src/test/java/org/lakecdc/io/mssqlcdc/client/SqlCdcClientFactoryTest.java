package org.lakecdc.io.mssqlcdc.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import javax.sql.DataSource;
import org.apache.beam.sdk.io.jdbc.JdbcIO;
import org.apache.beam.sdk.transforms.display.DisplayData;
import org.apache.beam.sdk.util.SerializableUtils;
import org.apache.commons.dbcp2.BasicDataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The T-SQL client's factory over Beam's JDBC configuration: the password is read on the worker and
 * shown nowhere, the URL and timeouts are checked, and a pooled connection's session is reset
 * before it goes back.
 */
class SqlCdcClientFactoryTest {
  static final String SECRET = "s3cr3t-P@ss";

  private static final String URL =
      "jdbc:sqlserver://db.example.com:1433;databaseName=sales;encrypt=strict;"
          + "trustServerCertificate=false;hostNameInCertificate=db.example.com";

  @Test
  void thePasswordIsReadFromAnEnvironmentVariableOnlyWhenAsked() {
    PasswordSource source = PasswordSource.environmentVariable("LAKECDC_PASSWORD");
    assertEquals(SECRET, source.read(name -> name.equals("LAKECDC_PASSWORD") ? SECRET : null));
    CdcException e = assertThrows(CdcException.class, () -> source.read(name -> null));
    assertEquals("The password's environment variable LAKECDC_PASSWORD is not set", e.getMessage());
    assertEquals("env:LAKECDC_PASSWORD", source.toString());
    assertTrue(source.isAccessible());
  }

  @Test
  void thePasswordIsTheFirstLineOfAPasswordFile(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("password");
    Files.writeString(file, SECRET + "\nignored\n");
    assertEquals(SECRET, PasswordSource.file(file.toString()).get());
    Files.writeString(file, "");
    CdcException empty =
        assertThrows(CdcException.class, () -> PasswordSource.file(file.toString()).get());
    assertEquals("The password file " + file + " is empty", empty.getMessage());
    CdcException missing =
        assertThrows(
            CdcException.class, () -> PasswordSource.file(dir.resolve("nope").toString()).get());
    assertEquals(
        "The password file " + dir.resolve("nope") + " cannot be read: no such file",
        missing.getMessage());
    CdcException directory =
        assertThrows(CdcException.class, () -> PasswordSource.file(dir.toString()).get());
    assertEquals(
        "The password file " + dir + " cannot be read: is a directory", directory.getMessage());
  }

  @Test
  void everySettingButThePasswordIsShownAndThePasswordIsReadOnTheWorker(@TempDir Path dir)
      throws Exception {
    Path file = dir.resolve("password");
    Files.writeString(file, SECRET);
    JdbcIO.DataSourceConfiguration configuration =
        SqlCdcClientFactory.dataSourceConfiguration(
            URL, "reader", PasswordSource.file(file.toString()), Duration.ofSeconds(15));
    SqlCdcClientFactory factory =
        SqlCdcClientFactory.of(configuration)
            .withLockTimeoutMs(5000)
            .withSourceTimeZone(SourceTimeZone.parse("E. South America Standard Time"));
    assertEquals(OptionalLong.of(5000), factory.lockTimeoutMs());
    assertEquals(
        "loginTimeout=15;applicationName=lakecdc",
        SqlCdcClientFactory.connectionProperties(Duration.ofSeconds(15)));

    // The pool a worker builds: the password read from the file there, the URL as given.
    BasicDataSource pool = (BasicDataSource) configuration.buildDatasource();
    assertEquals(SECRET, pool.getPassword());
    assertEquals("reader", pool.getUsername());
    assertEquals(URL, pool.getUrl());
    assertEquals(SqlCdcClientFactory.DRIVER_CLASS_NAME, pool.getDriverClassName());
    assertEquals(-1, pool.getMaxTotal());
    pool.close();

    Map<String, String> shown = factory.describe();
    assertEquals(URL, shown.get("jdbcUrl"));
    assertEquals("reader", shown.get("username"));
    assertEquals("E. South America Standard Time", shown.get("sourceTimeZone"));
    assertTrue(
        configuration.toString().contains("password=file:" + file), configuration.toString());
    assertFalse(configuration.toString().contains(SECRET));
    assertFalse(factory.toString().contains(SECRET));
    DisplayData data = DisplayData.from(factory);
    assertFalse(data.toString().contains(SECRET));
    assertTrue(data.toString().contains("username"), data.toString());
    byte[] serialized = SerializableUtils.serializeToByteArray(factory);
    assertFalse(
        new String(serialized, StandardCharsets.ISO_8859_1).contains(SECRET),
        "no password in the serialized factory");
    SqlCdcClientFactory copy = SerializableUtils.ensureSerializable(factory);
    assertEquals(factory, copy);
    try (CdcClient client = copy.open()) {
      assertFalse(client.toString().contains(SECRET));
    }
  }

  @Test
  void aUrlCarryingThePasswordIsRefused() {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () ->
                SqlCdcClientFactory.dataSourceConfiguration(
                    "jdbc:sqlserver://db;databaseName=x;Password=" + SECRET,
                    "reader",
                    PasswordSource.environmentVariable("P"),
                    Duration.ofSeconds(30)));
    assertFalse(e.getMessage().contains(SECRET));
    assertEquals(
        "connectionUrl must not contain the password; give its environment variable"
            + " (passwordEnv) or file (passwordFile) instead",
        e.getMessage());
    assertThrows(
        IllegalArgumentException.class,
        () ->
            SqlCdcClientFactory.dataSourceConfiguration(
                "jdbc:postgresql://db/x",
                "reader",
                PasswordSource.environmentVariable("P"),
                Duration.ofSeconds(30)));
  }

  @Test
  void everyValueIsValidated() {
    PasswordSource p = PasswordSource.environmentVariable("P");
    SqlCdcClientFactory c =
        SqlCdcClientFactory.of(
            SqlCdcClientFactory.dataSourceConfiguration(
                "jdbc:sqlserver://db:1433", "reader", p, Duration.ofSeconds(30)));
    assertEquals(OptionalLong.empty(), c.lockTimeoutMs());
    assertTrue(c.sourceTimeZone().isAuto());
    assertThrows(IllegalArgumentException.class, () -> c.withLockTimeoutMs(-1));
    assertThrows(
        IllegalArgumentException.class,
        () ->
            SqlCdcClientFactory.dataSourceConfiguration(
                "jdbc:sqlserver://db", "reader", p, Duration.ofSeconds(-1)));
    assertThrows(
        IllegalArgumentException.class,
        () ->
            SqlCdcClientFactory.dataSourceConfiguration(
                "jdbc:sqlserver://db", "reader", p, Duration.ofMillis(1500)));
    assertThrows(
        IllegalArgumentException.class,
        () ->
            SqlCdcClientFactory.dataSourceConfiguration(
                "jdbc:sqlserver://db", " ", p, Duration.ofSeconds(30)));
    assertThrows(IllegalArgumentException.class, () -> PasswordSource.file(" "));
    SqlCdcClientFactory provided = SqlCdcClientFactory.of(ignored -> null);
    assertNull(provided.dataSourceConfiguration());
  }

  @Test
  void aPooledConnectionWhoseSessionASourceReadChangedIsResetBeforeItGoesBack() throws Exception {
    List<String> calls = new ArrayList<>();
    List<String> statements = new ArrayList<>();
    Connection connection =
        (Connection)
            Proxy.newProxyInstance(
                Connection.class.getClassLoader(),
                new Class<?>[] {Connection.class},
                (proxy, method, args) -> {
                  calls.add(method.getName());
                  if (method.getName().equals("createStatement")) {
                    return Proxy.newProxyInstance(
                        Statement.class.getClassLoader(),
                        new Class<?>[] {Statement.class},
                        (st, m, a) -> {
                          if (m.getName().equals("execute")) {
                            statements.add((String) a[0]);
                            return false;
                          }
                          return null;
                        });
                  }
                  return null;
                });
    DataSource source =
        (DataSource)
            Proxy.newProxyInstance(
                DataSource.class.getClassLoader(),
                new Class<?>[] {DataSource.class},
                (proxy, method, args) ->
                    method.getName().equals("getConnection") ? connection : null);
    SqlSession.Connector pooled = SqlSession.Connector.pooled(ignored -> source);

    pooled.release(pooled.connect(), false);
    assertEquals(List.of("close"), calls, "an untouched session goes back as it is");
    assertEquals(List.of(), statements);

    calls.clear();
    pooled.release(pooled.connect(), true);
    assertEquals(List.of("createStatement", "close"), calls);
    assertEquals(
        List.of("SET LOCK_TIMEOUT -1; SET TRANSACTION ISOLATION LEVEL READ COMMITTED"), statements);
  }
}
