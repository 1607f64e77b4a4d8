package org.lakecdc.io.mssqlcdc.client;

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
import org.lakecdc.io.mssqlcdc.fake.ColumnDefinition;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.testcontainers.mssqlserver.MSSQLServerContainer;

/**
 * SQL Server 2022 in a container (Testcontainers), set up the way a DBA would with the repository's
 * {@code sql/} scripts: CDC on the database ({@code 01_enable_cdc_database.sql}), each table with a
 * gating role ({@code 02_enable_cdc_table.sql}) and the least-privilege login {@value #READER}
 * ({@code 04_least_privilege_login.sql}) that the client under test connects as. SQL Server Agent
 * runs capture (polling every second); the server's clock is America/Sao_Paulo (UTC-3), so commit
 * times must be converted. Writes go through the {@code sa} login.
 */
public final class SqlServerCdcTestDatabase implements CdcTestDatabase {
  public static final String IMAGE = "mcr.microsoft.com/mssql/server:2022-latest";
  public static final String DATABASE = "lakecdc";
  public static final String READER = "lakecdc_reader";
  public static final String SERVER_ZONE = "America/Sao_Paulo";
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

  /**
   * Starts the container and sets the database up, the reader's password in a temporary file
   * deleted when the JVM exits.
   */
  public static SqlServerCdcTestDatabase start() throws Exception {
    Path password = Files.createTempFile("lakecdc-reader", ".password");
    password.toFile().deleteOnExit();
    return start(password);
  }

  /**
   * Starts the container and sets the database up, the reader's password in {@code passwordFile}.
   */
  public static SqlServerCdcTestDatabase start(Path passwordFile) throws Exception {
    MSSQLServerContainer container =
        new MSSQLServerContainer(IMAGE)
            .acceptLicense()
            .withEnv("MSSQL_AGENT_ENABLED", "true")
            .withEnv("TZ", SERVER_ZONE);
    container.start();
    return new SqlServerCdcTestDatabase(container, passwordFile);
  }

  /** Stops the container. */
  public void stop() {
    try {
      admin.close();
    } catch (SQLException e) {
      // the container goes anyway
    }
    container.stop();
  }

  /** A view whose close() keeps the shared server running. */
  public CdcTestDatabase shared() {
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

  /**
   * The reading login's client factory: Beam's JDBC configuration of the container (the server's
   * certificate trusted), {@code sourceTimeZone=auto}, the password read from a file.
   */
  public SqlCdcClientFactory readerConfig() {
    return SqlCdcClientFactory.of(
        SqlCdcClientFactory.dataSourceConfiguration(
            container.getJdbcUrl() + ";databaseName=" + DATABASE + ";trustServerCertificate=true",
            READER,
            PasswordSource.file(passwordFile.toString()),
            java.time.Duration.ofSeconds(30)));
  }

  /** A connection of the reading login, straight from the pool of {@link #readerConfig()}. */
  static Connection readerConnection(SqlCdcClientFactory factory) throws SQLException {
    return SqlSession.Connector.pooled(
            org.apache.beam.sdk.io.jdbc.JdbcIO.DataSourceProviderFromDataSourceConfiguration.of(
                factory.dataSourceConfiguration()))
        .connect();
  }

  @Override
  public CdcClientFactory clientFactory() {
    return readerConfig();
  }

  /** Runs SQL as {@code sa} in the test database and returns the first column of the first row. */
  public Object adminQuery(String sql, Object... parameters) {
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
  public String createCapturedTable(
      String table, List<ColumnDefinition> columns, List<String> key, boolean grantChangeTable) {
    createTable(table, columns, key);
    return enableCapture(table, "dbo_" + table, grantChangeTable);
  }

  /** Creates {@code dbo.<table>} with a primary key over {@code key}, without capturing it. */
  public void createTable(String table, List<ColumnDefinition> columns, List<String> key) {
    StringJoiner ddl = new StringJoiner(", ", "CREATE TABLE dbo.[" + table + "] (", ")");
    for (ColumnDefinition c : columns) {
      ddl.add(
          c.computed()
              ? "[" + c.name() + "] AS CAST(NULL AS " + c.type() + ")"
              : "["
                  + c.name()
                  + "] "
                  + c.type()
                  + (c.collation() == null ? "" : " COLLATE " + c.collation()));
    }
    ddl.add("CONSTRAINT [pk_" + table + "] PRIMARY KEY (" + String.join(", ", key) + ")");
    execute(ddl.toString());
  }

  /**
   * Enables CDC on {@code dbo.<table>} as capture instance {@code ci} with the DBA scripts ({@code
   * 02_enable_cdc_table.sql}, then {@code 04_least_privilege_login.sql} for the reader) and waits
   * until capture has processed the enable. Without {@code grantChangeTable} the reader gets
   * everything but SELECT on the change table.
   *
   * @return {@code ci}
   */
  public String enableCapture(String table, String ci, boolean grantChangeTable) {
    Map<String, String> vars = scriptVariables(table, ci);
    try (Statement st = admin.createStatement()) {
      runScript(admin, "02_enable_cdc_table.sql", vars);
      runScript(admin, "04_least_privilege_login.sql", vars);
      if (!grantChangeTable) {
        st.execute("REVOKE SELECT ON cdc.[" + ci + "_CT] TO [" + READER + "]");
      }
      tuneCaptureJob(st);
    } catch (SQLException | IOException e) {
      throw new IllegalStateException("Setting up " + table, e);
    }
    awaitInstanceStart(ci);
    return ci;
  }

  /**
   * Enables a newer capture instance of {@code dbo.<table>} with {@code 05_switch_capture_instance
   * .sql} (steps 1 to 3: enable, grant, verify) and waits until capture has processed the enable.
   * Without {@code grantChangeTable} the reader's grant on the new change table is revoked again,
   * as if the DBA had skipped step 2.
   *
   * @return the newer instance's start LSN S
   */
  public Lsn enableNewerInstance(
      String table, String olderCi, String newerCi, boolean grantChangeTable) {
    Map<String, String> vars = new java.util.HashMap<>(scriptVariables(table, newerCi));
    vars.put("OldCaptureInstance", olderCi);
    vars.put("NewCaptureInstance", newerCi);
    try (Statement st = admin.createStatement()) {
      runScript(admin, "05_switch_capture_instance.sql", vars);
      if (!grantChangeTable) {
        st.execute("REVOKE SELECT ON cdc.[" + newerCi + "_CT] TO [" + READER + "]");
      }
    } catch (SQLException | IOException e) {
      throw new IllegalStateException("Enabling " + newerCi, e);
    }
    return awaitInstanceStart(newerCi);
  }

  /** Disables capture instance {@code ci} of {@code dbo.<table>} (step 4 of the switch script). */
  public void disableInstance(String table, String ci) {
    execute(
        "EXEC sys.sp_cdc_disable_table @source_schema = N'dbo', @source_name = N'"
            + table
            + "', @capture_instance = N'"
            + ci
            + "'");
  }

  /** Stops the capture job: commits stay in the log, unread, until {@link #startCapture}. */
  public void stopCapture() {
    execute("EXEC sys.sp_cdc_stop_job @job_type = N'capture'");
  }

  /** Starts the capture job again. */
  public void startCapture() {
    execute("EXEC sys.sp_cdc_start_job @job_type = N'capture'");
  }

  /**
   * Installs {@code 03_heartbeat.sql} (table {@code dbo.cdc_heartbeat}, its capture instance and
   * the Agent job {@code cdc_heartbeat_<db>} beating every {@code intervalSeconds}) on a connection
   * of its own (the script changes database to {@code msdb}).
   *
   * @return the Agent job's name, for {@link #deleteAgentJob}
   */
  public String installHeartbeat(int intervalSeconds) {
    try (Connection c = connect(container.getJdbcUrl() + ";databaseName=" + DATABASE)) {
      runScript(
          c,
          "03_heartbeat.sql",
          Map.of("DatabaseName", DATABASE, "IntervalSeconds", Integer.toString(intervalSeconds)));
    } catch (SQLException | IOException e) {
      throw new IllegalStateException("Installing the heartbeat", e);
    }
    return "cdc_heartbeat_" + DATABASE;
  }

  /** Deletes an Agent job (the heartbeat after its test). */
  public void deleteAgentJob(String name) {
    execute("EXEC msdb.dbo.sp_delete_job @job_name = N'" + name + "'");
  }

  /** Runs statements as {@code sa} in the test database, each in its own batch (autocommit). */
  public void execute(String... statements) {
    try (Statement st = admin.createStatement()) {
      for (String sql : statements) {
        st.execute(sql);
      }
    } catch (SQLException e) {
      throw new IllegalStateException(String.join("; ", statements), e);
    }
  }

  /**
   * Runs statements as {@code sa} in one transaction, then waits until capture has read the log
   * past it ({@link #awaitCapture}).
   */
  public void transaction(String... statements) {
    commitWithoutWaiting(statements);
    awaitCapture();
  }

  /** Runs statements as {@code sa} in one transaction; returns at once (capture may be stopped). */
  public void commitWithoutWaiting(String... statements) {
    try {
      admin.setAutoCommit(false);
      try (Statement st = admin.createStatement()) {
        for (String sql : statements) {
          st.execute(sql);
        }
      }
      admin.commit();
    } catch (SQLException e) {
      try {
        admin.rollback();
      } catch (SQLException suppressed) {
        e.addSuppressed(suppressed);
      }
      throw new IllegalStateException(String.join("; ", statements), e);
    } finally {
      try {
        admin.setAutoCommit(true);
      } catch (SQLException e) {
        throw new IllegalStateException(e);
      }
    }
  }

  /** Rows of a query run as {@code sa}, each row's columns in order ({@code getObject} values). */
  public List<List<Object>> rows(String sql, Object... parameters) {
    try (PreparedStatement ps = admin.prepareStatement(sql)) {
      for (int i = 0; i < parameters.length; i++) {
        ps.setObject(i + 1, parameters[i]);
      }
      List<List<Object>> rows = new ArrayList<>();
      try (ResultSet rs = ps.executeQuery()) {
        int n = rs.getMetaData().getColumnCount();
        while (rs.next()) {
          List<Object> row = new ArrayList<>();
          for (int i = 1; i <= n; i++) {
            row.add(rs.getObject(i));
          }
          rows.add(row);
        }
      }
      return rows;
    } catch (SQLException e) {
      throw new IllegalStateException(sql, e);
    }
  }

  /** The server's UTC clock ({@code SYSUTCDATETIME()}). */
  public Instant serverUtcNow() {
    return ((java.sql.Timestamp) adminQuery("SELECT CAST(SYSUTCDATETIME() AS datetime2(3))"))
        .toLocalDateTime()
        .toInstant(java.time.ZoneOffset.UTC);
  }

  /** The database's {@code sys.fn_cdc_get_max_lsn()}, or null before capture wrote one. */
  public Lsn maxLsn() {
    Object max = adminQuery("SELECT CONVERT(varchar(22), sys.fn_cdc_get_max_lsn(), 1)");
    return max == null ? null : Lsn.parse(max.toString());
  }

  /** A connection as {@code sa} to the test database, for writers on threads of their own. */
  public Connection adminConnection() {
    try {
      return connect(container.getJdbcUrl() + ";databaseName=" + DATABASE);
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  /** The JDBC URL of the test database (no credentials). */
  public String jdbcUrl() {
    return container.getJdbcUrl() + ";databaseName=" + DATABASE;
  }

  /** The file holding the reader's password. */
  public Path passwordFile() {
    return passwordFile;
  }

  /**
   * Waits until capture has read the log up to now: commits a row to a captured marker table and
   * waits for its change row. The capture job reads the log in order, so every commit before the
   * marker is in its change table (and in {@code cdc.lsn_time_mapping}) by then.
   */
  public void awaitCapture() {
    if (!markerReady) {
      execute(
          "IF OBJECT_ID(N'dbo.lakecdc_marker', N'U') IS NULL"
              + " CREATE TABLE dbo.lakecdc_marker (id int NOT NULL PRIMARY KEY)");
      if (adminQuery(
              "SELECT 1 FROM cdc.change_tables WHERE capture_instance = N'dbo_lakecdc_marker'")
          == null) {
        execute(
            "EXEC sys.sp_cdc_enable_table @source_schema = N'dbo', @source_name ="
                + " N'lakecdc_marker', @role_name = NULL");
        try (Statement st = admin.createStatement()) {
          tuneCaptureJob(st);
        } catch (SQLException e) {
          throw new IllegalStateException(e);
        }
        awaitInstanceStart("dbo_lakecdc_marker");
      }
      markerReady = true;
    }
    int id = ++marker;
    execute("INSERT INTO dbo.lakecdc_marker (id) VALUES (" + id + ")");
    waitFor(
        "capture to reach marker " + id,
        () -> adminQuery("SELECT 1 FROM cdc.[dbo_lakecdc_marker_CT] WHERE id = ?", id) != null);
  }

  private boolean markerReady;
  private int marker;

  private Map<String, String> scriptVariables(String table, String ci) {
    return Map.of(
        "DatabaseName", DATABASE,
        "SchemaName", "dbo",
        "TableName", table,
        "CaptureInstance", ci,
        "GatingRole", "cdc_reader_" + table,
        "LoginName", READER,
        "LoginPassword", readerPassword);
  }

  /** Capture polls every second (the default is 5 s), set once the capture job exists. */
  private void tuneCaptureJob(Statement st) throws SQLException {
    if (!jobTuned) {
      st.execute("EXEC sys.sp_cdc_change_job @job_type = N'capture', @pollinginterval = 1");
      st.execute("EXEC sys.sp_cdc_stop_job @job_type = N'capture'");
      st.execute("EXEC sys.sp_cdc_start_job @job_type = N'capture'");
      jobTuned = true;
    }
  }

  /** Waits until capture has processed the enable of {@code ci}; returns its start LSN. */
  private Lsn awaitInstanceStart(String ci) {
    Lsn[] start = {null};
    waitFor(
        "capture to process the enable of " + ci,
        () -> {
          Object min = adminQuery("SELECT CONVERT(varchar(22), sys.fn_cdc_get_min_lsn(?), 1)", ci);
          if (min == null || Lsn.parse(min.toString()).isZero()) {
            return false;
          }
          start[0] = Lsn.parse(min.toString());
          return true;
        });
    return start[0];
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
        keys.addAll(CaptureInstanceQueries.indexColumns(rs.getString(1)));
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
  public void grant(String grantStatement) {
    try (Statement st = admin.createStatement()) {
      st.execute(grantStatement);
    } catch (SQLException e) {
      throw new IllegalStateException(grantStatement, e);
    }
  }

  private static void waitFor(String what, java.util.function.BooleanSupplier done) {
    try {
      org.awaitility.Awaitility.await(what)
          .atMost(CAPTURE_WAIT)
          .pollDelay(Duration.ZERO)
          .pollInterval(Duration.ofMillis(200))
          .pollInSameThread()
          .until(done::getAsBoolean);
    } catch (org.awaitility.core.ConditionTimeoutException e) {
      throw new IllegalStateException("Timed out waiting for " + what, e);
    }
  }

  @Override
  public void close() {}
}
