package org.lakecdc.mssqlcdc.client;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.StringJoiner;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.lakecdc.mssqlcdc.fake.ColumnDefinition;
import org.lakecdc.mssqlcdc.lsn.Lsn;
import org.testcontainers.mssqlserver.MSSQLServerContainer;

/**
 * SQL Server 2022 in a container (Testcontainers), set up the way a DBA would with the repository's
 * {@code sql/} scripts: CDC on the database ({@code 01_enable_cdc_database.sql}), each table with a
 * gating role ({@code 02_enable_cdc_table.sql}) and the least-privilege login {@value #READER}
 * ({@code 04_least_privilege_login.sql}) that the client under test connects as. SQL Server Agent
 * runs capture (polling every second); the server's clock is America/Sao_Paulo (UTC-3), so commit
 * times must be converted. Writes go through the {@code sa} login.
 */
final class SqlServerCdcTestDatabase implements CdcTestDatabase {
  static final String IMAGE = "mcr.microsoft.com/mssql/server:2022-latest";
  static final String DATABASE = "lakecdc";
  static final String READER = "lakecdc_reader";
  static final String SERVER_ZONE = "America/Sao_Paulo";
  private static final Duration CAPTURE_WAIT = Duration.ofSeconds(90);
  private static final Path SCRIPTS = Path.of("..", "sql");
  private static final Pattern VARIABLE = Pattern.compile("\\$\\((\\w+)\\)");

  private final MSSQLServerContainer container;
  private final String readerPassword = "Lk-" + UUID.randomUUID() + "!a9";
  private final Path passwordFile;
  private final Connection admin;
  private boolean jobTuned;

  private SqlServerCdcTestDatabase(MSSQLServerContainer container, Path passwordFile)
      throws SQLException, IOException {
    this.container = container;
    this.passwordFile = passwordFile;
    Files.writeString(passwordFile, readerPassword + "\n");
    try (Connection master = connect(container.getJdbcUrl());
        Statement st = master.createStatement()) {
      st.execute("IF DB_ID(N'" + DATABASE + "') IS NULL CREATE DATABASE [" + DATABASE + "]");
      st.execute("ALTER DATABASE [" + DATABASE + "] SET ALLOW_SNAPSHOT_ISOLATION ON");
      runScript(master, "01_enable_cdc_database.sql", Map.of("DatabaseName", DATABASE));
    }
    this.admin = connect(container.getJdbcUrl() + ";databaseName=" + DATABASE);
  }

  /** Starts the container and sets the database up. */
  static SqlServerCdcTestDatabase start(Path passwordFile) throws Exception {
    MSSQLServerContainer container =
        new MSSQLServerContainer(IMAGE)
            .acceptLicense()
            .withEnv("MSSQL_AGENT_ENABLED", "true")
            .withEnv("TZ", SERVER_ZONE);
    container.start();
    return new SqlServerCdcTestDatabase(container, passwordFile);
  }

  /** Stops the container. */
  void stop() {
    try {
      admin.close();
    } catch (SQLException e) {
      // the container goes anyway
    }
    container.stop();
  }

  /** A view whose close() keeps the shared server running. */
  CdcTestDatabase shared() {
    SqlServerCdcTestDatabase self = this;
    return new CdcTestDatabase() {
      @Override
      public CdcClientFactory clientFactory() {
        return self.clientFactory();
      }

      @Override
      public String createCapturedTable(
          String table, List<ColumnDefinition> columns, List<String> key) {
        return self.createCapturedTable(table, columns, key);
      }

      @Override
      public Lsn commit(List<Change> changes) {
        return self.commit(changes);
      }

      @Override
      public void ddl(String table, String command) {
        self.ddl(table, command);
      }

      @Override
      public void cleanup(String captureInstance, Lsn lowWatermark) {
        self.cleanup(captureInstance, lowWatermark);
      }

      @Override
      public void close() {}
    };
  }

  private Connection connect(String url) throws SQLException {
    Properties p = new Properties();
    p.setProperty("user", container.getUsername());
    p.setProperty("password", container.getPassword());
    p.setProperty("sendTimeAsDatetime", "false");
    p.setProperty("trustServerCertificate", "true");
    return new com.microsoft.sqlserver.jdbc.SQLServerDriver().connect(url, p);
  }

  /** The reading login's settings: {@code sourceTimeZone=auto}, password from a file. */
  ConnectionConfig readerConfig() {
    return ConnectionConfig.url(
            container.getJdbcUrl() + ";databaseName=" + DATABASE,
            READER,
            PasswordSource.file(passwordFile.toString()))
        .withTrustServerCertificate(true);
  }

  @Override
  public CdcClientFactory clientFactory() {
    return SqlCdcClientFactory.of(readerConfig());
  }

  /** Runs SQL as {@code sa} in the test database and returns the first column of the first row. */
  Object adminQuery(String sql, Object... parameters) {
    try (PreparedStatement ps = admin.prepareStatement(sql)) {
      for (int i = 0; i < parameters.length; i++) {
        ps.setObject(i + 1, parameters[i]);
      }
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getObject(1) : null;
      }
    } catch (SQLException e) {
      throw new IllegalStateException(sql, e);
    }
  }

  /** Runs a {@code sql/} script as {@code sa}, sqlcmd style: {@code $(Name)} variables, GO. */
  static void runScript(Connection c, String script, Map<String, String> variables)
      throws SQLException, IOException {
    String text = Files.readString(SCRIPTS.resolve(script), StandardCharsets.UTF_8);
    Matcher m = VARIABLE.matcher(text);
    StringBuilder substituted = new StringBuilder();
    while (m.find()) {
      String value = variables.get(m.group(1));
      if (value == null) {
        throw new IllegalArgumentException(script + " needs the variable " + m.group(1));
      }
      m.appendReplacement(substituted, Matcher.quoteReplacement(value));
    }
    m.appendTail(substituted);
    StringBuilder batch = new StringBuilder();
    try (Statement st = c.createStatement()) {
      for (String line : substituted.toString().split("\n", -1)) {
        if (line.strip().equalsIgnoreCase("GO")) {
          if (!batch.toString().isBlank()) {
            st.execute(batch.toString());
          }
          batch.setLength(0);
        } else {
          batch.append(line).append('\n');
        }
      }
      if (!batch.toString().isBlank()) {
        st.execute(batch.toString());
      }
    }
  }

  @Override
  public String createCapturedTable(
      String table, List<ColumnDefinition> columns, List<String> key) {
    return createCapturedTable(table, columns, key, true);
  }

  /**
   * Creates and captures {@code dbo.<table>} and grants the reader per {@code
   * 04_least_privilege_login.sql}; without {@code grantChangeTable} the reader gets everything but
   * SELECT on the change table.
   */
  String createCapturedTable(
      String table, List<ColumnDefinition> columns, List<String> key, boolean grantChangeTable) {
    String ci = "dbo_" + table;
    StringJoiner ddl = new StringJoiner(", ", "CREATE TABLE dbo.[" + table + "] (", ")");
    for (ColumnDefinition c : columns) {
      ddl.add(
          c.computed()
              ? "[" + c.name() + "] AS CAST(NULL AS " + c.type() + ")"
              : "[" + c.name() + "] " + c.type());
    }
    ddl.add("CONSTRAINT [pk_" + table + "] PRIMARY KEY (" + String.join(", ", key) + ")");
    Map<String, String> vars =
        Map.of(
            "DatabaseName", DATABASE,
            "SchemaName", "dbo",
            "TableName", table,
            "CaptureInstance", ci,
            "GatingRole", "cdc_reader_" + table,
            "LoginName", READER,
            "LoginPassword", readerPassword);
    try (Statement st = admin.createStatement()) {
      st.execute(ddl.toString());
      runScript(admin, "02_enable_cdc_table.sql", vars);
      runScript(admin, "04_least_privilege_login.sql", vars);
      if (!grantChangeTable) {
        st.execute("REVOKE SELECT ON cdc.[" + ci + "_CT] TO [" + READER + "]");
      }
      if (!jobTuned) {
        st.execute("EXEC sys.sp_cdc_change_job @job_type = N'capture', @pollinginterval = 1");
        st.execute("EXEC sys.sp_cdc_stop_job @job_type = N'capture'");
        st.execute("EXEC sys.sp_cdc_start_job @job_type = N'capture'");
        jobTuned = true;
      }
    } catch (SQLException | IOException e) {
      throw new IllegalStateException("Setting up " + table, e);
    }
    // Capture has processed the enable when the instance's minimum LSN is known.
    waitFor(
        "capture to process the enable of " + ci,
        () -> {
          Object min = adminQuery("SELECT CONVERT(varchar(22), sys.fn_cdc_get_min_lsn(?), 1)", ci);
          return min != null && !Lsn.parse(min.toString()).isZero();
        });
    return ci;
  }

  @Override
  public Lsn commit(List<Change> changes) {
    String table = changes.get(0).table();
    String ci = "dbo_" + table;
    Lsn before = maxChangeLsn(ci);
    try {
      admin.setAutoCommit(false);
      for (Change change : changes) {
        execute(change);
      }
      admin.commit();
    } catch (SQLException e) {
      try {
        admin.rollback();
      } catch (SQLException suppressed) {
        e.addSuppressed(suppressed);
      }
      throw new IllegalStateException("Committing " + changes, e);
    } finally {
      try {
        admin.setAutoCommit(true);
      } catch (SQLException e) {
        throw new IllegalStateException(e);
      }
    }
    Lsn[] after = {null};
    waitFor(
        "capture of a commit on " + table,
        () -> {
          after[0] = maxChangeLsn(ci);
          return after[0] != null && (before == null || after[0].isAfter(before));
        });
    return after[0];
  }

  private void execute(Change change) throws SQLException {
    String table = "dbo.[" + change.table() + "]";
    List<Object> parameters = new ArrayList<>();
    String sql;
    switch (change.operation()) {
      case 2 -> {
        StringJoiner names = new StringJoiner(", ");
        StringJoiner marks = new StringJoiner(", ");
        change
            .values()
            .forEach(
                (k, v) -> {
                  names.add("[" + k + "]");
                  marks.add("?");
                  parameters.add(v);
                });
        sql = "INSERT INTO " + table + " (" + names + ") VALUES (" + marks + ")";
      }
      case 4 -> {
        StringJoiner sets = new StringJoiner(", ");
        change
            .values()
            .forEach(
                (k, v) -> {
                  sets.add("[" + k + "] = ?");
                  parameters.add(v);
                });
        parameters.addAll(change.key());
        sql = "UPDATE " + table + " SET " + sets + " WHERE " + keyPredicate(change);
      }
      default -> {
        parameters.addAll(change.key());
        sql = "DELETE FROM " + table + " WHERE " + keyPredicate(change);
      }
    }
    try (PreparedStatement ps = admin.prepareStatement(sql)) {
      for (int i = 0; i < parameters.size(); i++) {
        ps.setObject(i + 1, parameters.get(i));
      }
      ps.executeUpdate();
    }
  }

  private String keyPredicate(Change change) {
    String ci = "dbo_" + change.table();
    List<String> keys = new ArrayList<>();
    try (PreparedStatement ps =
        admin.prepareStatement(
            "SELECT index_column_list FROM cdc.change_tables WHERE capture_instance = ?")) {
      ps.setString(1, ci);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        keys.addAll(SqlCdcClient.indexColumns(rs.getString(1)));
      }
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
    StringJoiner where = new StringJoiner(" AND ");
    for (String k : keys) {
      where.add("[" + k + "] = ?");
    }
    return where.toString();
  }

  private Lsn maxChangeLsn(String ci) {
    Object max =
        adminQuery("SELECT CONVERT(varchar(22), MAX([__$start_lsn]), 1) FROM cdc.[" + ci + "_CT]");
    return max == null ? null : Lsn.parse(max.toString());
  }

  @Override
  public void ddl(String table, String command) {
    String ci = "dbo_" + table;
    int before = ddlCount(ci);
    try (Statement st = admin.createStatement()) {
      st.execute(command);
    } catch (SQLException e) {
      throw new IllegalStateException(command, e);
    }
    waitFor("the DDL history of " + ci, () -> ddlCount(ci) > before);
  }

  private int ddlCount(String ci) {
    Object n =
        adminQuery(
            "SELECT COUNT(*) FROM cdc.ddl_history h JOIN cdc.change_tables t"
                + " ON t.object_id = h.object_id WHERE t.capture_instance = ?",
            ci);
    return ((Number) n).intValue();
  }

  @Override
  public void cleanup(String captureInstance, Lsn lowWatermark) {
    try (PreparedStatement ps =
        admin.prepareStatement(
            "DECLARE @l binary(10) = CONVERT(binary(10), ?, 1);"
                + " EXEC sys.sp_cdc_cleanup_change_table @capture_instance = ?,"
                + " @low_water_mark = @l, @threshold = 100000")) {
      ps.setString(1, lowWatermark.toString());
      ps.setString(2, captureInstance);
      ps.execute();
    } catch (SQLException e) {
      throw new IllegalStateException("Cleanup of " + captureInstance, e);
    }
  }

  /** Grants the reader SELECT on a change table, as the GRANT of the permission error says. */
  void grant(String grantStatement) {
    try (Statement st = admin.createStatement()) {
      st.execute(grantStatement);
    } catch (SQLException e) {
      throw new IllegalStateException(grantStatement, e);
    }
  }

  private static void waitFor(String what, java.util.function.BooleanSupplier done) {
    Instant deadline = Instant.now().plus(CAPTURE_WAIT);
    while (!done.getAsBoolean()) {
      if (Instant.now().isAfter(deadline)) {
        throw new IllegalStateException("Timed out waiting for " + what);
      }
      try {
        Thread.sleep(200);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("Interrupted waiting for " + what, e);
      }
    }
  }

  @Override
  public void close() {}
}
