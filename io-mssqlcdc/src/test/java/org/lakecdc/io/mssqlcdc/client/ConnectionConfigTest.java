package org.lakecdc.io.mssqlcdc.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Properties;
import org.apache.beam.sdk.transforms.display.DisplayData;
import org.apache.beam.sdk.util.SerializableUtils;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Connection settings: the password is read at open time and shown nowhere. */
class ConnectionConfigTest {
  static final String SECRET = "s3cr3t-P@ss";

  @Test
  void shouldReadThePasswordFromAnEnvironmentVariableOnlyWhenAsked() {
    PasswordSource source = PasswordSource.environmentVariable("LAKECDC_PASSWORD");
    assertEquals(SECRET, source.read(name -> name.equals("LAKECDC_PASSWORD") ? SECRET : null));
    CdcException e = assertThrows(CdcException.class, () -> source.read(name -> null));
    assertEquals("The password's environment variable LAKECDC_PASSWORD is not set", e.getMessage());
    assertEquals("env:LAKECDC_PASSWORD", source.toString());
  }

  @Test
  void shouldReadTheFirstLineOfAPasswordFile(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("password");
    Files.writeString(file, SECRET + "\nignored\n");
    assertEquals(SECRET, PasswordSource.file(file.toString()).read());
    Files.writeString(file, "");
    CdcException empty =
        assertThrows(CdcException.class, () -> PasswordSource.file(file.toString()).read());
    assertEquals("The password file " + file + " is empty", empty.getMessage());
    CdcException missing =
        assertThrows(
            CdcException.class, () -> PasswordSource.file(dir.resolve("nope").toString()).read());
    assertEquals(
        "The password file " + dir.resolve("nope") + " cannot be read: no such file",
        missing.getMessage());
    CdcException directory =
        assertThrows(CdcException.class, () -> PasswordSource.file(dir.toString()).read());
    assertEquals(
        "The password file " + dir + " cannot be read: is a directory", directory.getMessage());
  }

  @Test
  void shouldShowEverySettingButThePassword(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("password");
    Files.writeString(file, SECRET);
    ConnectionConfig config =
        ConnectionConfig.host(
                "db.example.com", 1433, "sales", "reader", PasswordSource.file(file.toString()))
            .withEncrypt("Strict")
            .withTrustServerCertificate(false)
            .withHostNameInCertificate("db.example.com")
            .withConnectTimeout(Duration.ofSeconds(15))
            .withLockTimeoutMs(5000)
            .withSourceTimeZone(SourceTimeZone.parse("E. South America Standard Time"));
    assertEquals("jdbc:sqlserver://db.example.com:1433", config.jdbcUrl());
    assertEquals(OptionalLong.of(5000), config.lockTimeoutMs());
    Properties p = config.driverProperties(config.password().read());
    assertEquals(SECRET, p.getProperty("password"));
    assertEquals("reader", p.getProperty("user"));
    assertEquals("sales", p.getProperty("databaseName"));
    assertEquals("15", p.getProperty("loginTimeout"));
    assertEquals("strict", p.getProperty("encrypt"));
    assertEquals("false", p.getProperty("trustServerCertificate"));
    assertEquals("db.example.com", p.getProperty("hostNameInCertificate"));
    assertEquals("lakecdc", p.getProperty("applicationName"));

    SqlCdcClientFactory factory = SqlCdcClientFactory.of(config);
    Map<String, String> shown = config.describe();
    assertEquals("file:" + file, shown.get("password"));
    assertEquals("E. South America Standard Time", shown.get("sourceTimeZone"));
    assertFalse(config.toString().contains(SECRET));
    assertFalse(factory.toString().contains(SECRET));
    DisplayData data = DisplayData.from(factory);
    assertFalse(data.toString().contains(SECRET));
    assertTrue(data.toString().contains("sqlserver.user"), data.toString());
    SqlCdcClientFactory copy = SerializableUtils.ensureSerializable(factory);
    assertEquals(factory, copy);
    try (CdcClient client = copy.open()) {
      assertFalse(client.toString().contains(SECRET));
    }
  }

  @Test
  void shouldRefuseAUrlCarryingThePassword() {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () ->
                ConnectionConfig.url(
                    "jdbc:sqlserver://db;databaseName=x;Password=" + SECRET,
                    "reader",
                    PasswordSource.environmentVariable("P")));
    assertFalse(e.getMessage().contains(SECRET));
    assertThrows(
        IllegalArgumentException.class,
        () ->
            ConnectionConfig.url(
                "jdbc:postgresql://db/x", "reader", PasswordSource.environmentVariable("P")));
  }

  @Test
  void shouldValidateEveryValue() {
    PasswordSource p = PasswordSource.environmentVariable("P");
    ConnectionConfig c = ConnectionConfig.url("jdbc:sqlserver://db:1433", "reader", p);
    assertEquals(Duration.ofSeconds(30), c.connectTimeout());
    assertEquals(OptionalLong.empty(), c.lockTimeoutMs());
    assertTrue(c.sourceTimeZone().isAuto());
    assertThrows(IllegalArgumentException.class, () -> c.withEncrypt("maybe"));
    assertThrows(IllegalArgumentException.class, () -> c.withLockTimeoutMs(-1));
    assertThrows(
        IllegalArgumentException.class, () -> c.withConnectTimeout(Duration.ofSeconds(-1)));
    assertThrows(
        IllegalArgumentException.class, () -> c.withConnectTimeout(Duration.ofMillis(1500)));
    assertThrows(
        IllegalArgumentException.class, () -> ConnectionConfig.url("jdbc:sqlserver://db", " ", p));
    assertThrows(
        IllegalArgumentException.class,
        () -> ConnectionConfig.host("db;user=sa", 1433, "x", "reader", p));
    assertThrows(
        IllegalArgumentException.class, () -> ConnectionConfig.host("db", 0, "x", "reader", p));
    assertThrows(IllegalArgumentException.class, () -> PasswordSource.file(" "));
    assertEquals(
        "jdbc:sqlserver://host\\SQLEXPRESS:1433",
        ConnectionConfig.host("host\\SQLEXPRESS", 1433, "x", "reader", p).jdbcUrl());
  }
}
