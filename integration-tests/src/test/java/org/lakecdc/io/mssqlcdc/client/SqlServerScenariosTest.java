package org.lakecdc.io.mssqlcdc.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.IntFunction;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.lakecdc.io.mssqlcdc.fake.ColumnDefinition;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.io.mssqlcdc.time.CommitTimeConverter;

/**
 * The client-level {@code [SQL Server]} scenarios of docs/scenarios.md that the shared contract
 * does not cover: C088 (key tiles of composite, string and collated keys), C089 (each range seeks
 * only its own rows, from the server's actual plans), C090 (CDC refuses a unique index over
 * nullable columns), C244 (the pre-2022 fixed-offset clock equals the named zone) and C245 (a
 * look-up by time's server clock across daylight saving, as SQL Server evaluates it). Runs in the
 * integration profile ({@code mvn -B -Pit verify}) where a Docker engine is available; otherwise
 * every test reports skipped with the reason.
 */
@ExtendWith(IntegrationCondition.class)
class SqlServerScenariosTest {
  private static final IsolationLevel RC = IsolationLevel.READ_COMMITTED;
  private static SqlServerCdcTestDatabase server;

  @BeforeAll
  static void startSqlServer() throws Exception {
    server = SqlServerCdcTestDatabase.start();
  }

  @AfterAll
  static void stopSqlServer() {
    if (server != null) {
      server.stop();
    }
  }

  /**
   * One key shape of C088: the key columns (name and declared type, collation included) and the key
   * values of row {@code i} (0..9) as T-SQL literals.
   */
  private record KeyShape(String table, List<ColumnDefinition> keys, IntFunction<String> values) {}

  private static List<KeyShape> c088Shapes() {
    List<KeyShape> shapes = new ArrayList<>();
    shapes.add(
        new KeyShape(
            "k_nv_int_dt2",
            List.of(
                ColumnDefinition.of("k1", "nvarchar(10)"),
                ColumnDefinition.of("k2", "int"),
                ColumnDefinition.of("k3", "datetime2(7)")),
            i -> "N'r" + (i % 3) + "', " + (i / 3) + ", '2026-09-28T13:50:0" + i + ".1234567'"));
    shapes.add(
        new KeyShape(
            "k_varchar_latin",
            List.of(ColumnDefinition.of("k1", "varchar(12) COLLATE SQL_Latin1_General_CP1_CI_AS")),
            i -> "'" + (char) ('a' + i) + "-" + i + "'"));
    // Greek_CI_AS sorts Greek letters by the Greek alphabet: bounds compared under another
    // collation would read 0, 0 and 10 rows.
    String[] greek = {"α", "β", "γ", "δ", "ε", "ζ", "η", "θ", "ι", "κ"};
    shapes.add(
        new KeyShape(
            "k_varchar_greek_int",
            List.of(
                ColumnDefinition.of("k1", "varchar(10) COLLATE Greek_CI_AS"),
                ColumnDefinition.of("k2", "int")),
            i -> "N'" + greek[i] + "', " + i));
    shapes.add(
        new KeyShape(
            "k_varchar_case_int",
            List.of(ColumnDefinition.of("k1", "varchar(5)"), ColumnDefinition.of("k2", "int")),
            i -> (i % 2 == 0 ? "'n'" : "'N'") + ", " + i));
    shapes.add(
        new KeyShape(
            "k_date_int",
            List.of(ColumnDefinition.of("k1", "date"), ColumnDefinition.of("k2", "int")),
            i -> "'2026-09-" + (10 + i) + "', " + i));
    shapes.add(
        new KeyShape(
            "k_datetime_int",
            List.of(ColumnDefinition.of("k1", "datetime"), ColumnDefinition.of("k2", "int")),
            i -> "'2026-09-28T13:50:0" + i + ".123', " + i));
    shapes.add(
        new KeyShape(
            "k_decimal_int",
            List.of(ColumnDefinition.of("k1", "decimal(18,10)"), ColumnDefinition.of("k2", "int")),
            i -> "1.000000000" + i + ", " + i));
    shapes.add(
        new KeyShape(
            "k_varbinary_int",
            List.of(ColumnDefinition.of("k1", "varbinary(4)"), ColumnDefinition.of("k2", "int")),
            i -> "0x0" + i + "FF, " + i));
    shapes.add(
        new KeyShape(
            "k_bit_int",
            List.of(ColumnDefinition.of("k1", "bit"), ColumnDefinition.of("k2", "int")),
            i -> (i % 2) + ", " + i));
    shapes.add(
        new KeyShape(
            "k_guid_int",
            List.of(
                ColumnDefinition.of("k1", "uniqueidentifier"), ColumnDefinition.of("k2", "int")),
            i -> "'6F9619FF-8B86-D011-B42D-00C04FC964F" + i + "', " + i));
    shapes.add(
        new KeyShape(
            "k_dto_int",
            List.of(
                ColumnDefinition.of("k1", "datetimeoffset(3)"), ColumnDefinition.of("k2", "int")),
            i -> "'2026-09-28T13:50:0" + i + ".123-03:00', " + i));
    return shapes;
  }

  @Test
  void c088KeyTilesOfCompositeAndStringKeysReadFourThreeThreeRowsAndEveryKeyOnce() {
    for (KeyShape shape : c088Shapes()) {
      List<ColumnDefinition> columns = new ArrayList<>(shape.keys());
      columns.add(ColumnDefinition.of("payload", "int"));
      List<String> keys = shape.keys().stream().map(ColumnDefinition::name).toList();
      server.createCapturedTable(shape.table(), columns, keys, true);
      for (int i = 0; i < 10; i++) {
        server.execute(
            "INSERT INTO dbo.["
                + shape.table()
                + "] ("
                + String.join(", ", keys)
                + ", payload) VALUES ("
                + shape.values().apply(i)
                + ", "
                + i
                + ")");
      }
      try (CdcClient client = server.clientFactory().open()) {
        List<List<Object>> bounds = client.keyTiles("dbo", shape.table(), keys, 3, RC);
        assertEquals(2, bounds.size(), shape.table() + ": NTILE(3) of 10 rows has two bounds");
        List<Integer> sizes = new ArrayList<>();
        Set<Object> payloads = new HashSet<>();
        for (int t = 0; t <= bounds.size(); t++) {
          Optional<List<Object>> lo = t == 0 ? Optional.empty() : Optional.of(bounds.get(t - 1));
          Optional<List<Object>> hi =
              t == bounds.size() ? Optional.empty() : Optional.of(bounds.get(t));
          List<String> read = new ArrayList<>(keys);
          read.add("payload");
          int n = 0;
          try (CloseableIterator<List<Object>> it =
              client.readTable(new TableQuery("dbo", shape.table(), read, keys, lo, hi, RC))) {
            while (it.hasNext()) {
              List<Object> row = it.next();
              assertTrue(
                  payloads.add(row.get(row.size() - 1)),
                  shape.table() + ": row " + row + " read twice");
              n++;
            }
          }
          sizes.add(n);
        }
        assertEquals(List.of(4, 3, 3), sizes, shape.table() + " tiles " + bounds);
        assertEquals(10, payloads.size(), shape.table() + ": every row read once");
      }
    }
  }

  /**
   * C089: 40,000 rows keyed by (company, id), company being 1, {@code n % 3} or the string {@code
   * 'r' + n % 20}; each of 8 tiles returns 5,000 rows and reads exactly 5,000 (ActualRowsRead of
   * the server's actual plan), and no plan converts a column (CONVERT_IMPLICIT): every piece of a
   * range is a seek on the key.
   */
  @Test
  void c089EachSnapshotRangeSeeksOnlyItsOwnRows() throws Exception {
    Map<String, String> companies =
        Map.of(
            "c089_one", "1",
            "c089_mod3", "n % 3",
            "c089_text", "'r' + CAST(n % 20 AS varchar(2))");
    for (Map.Entry<String, String> shape : new java.util.TreeMap<>(companies).entrySet()) {
      String table = shape.getKey();
      String type = table.equals("c089_text") ? "varchar(10)" : "int";
      server.createCapturedTable(
          table,
          List.of(
              ColumnDefinition.of("company", type),
              ColumnDefinition.of("id", "int"),
              ColumnDefinition.of("payload", "int")),
          List.of("company", "id"),
          true);
      server.execute(
          "WITH numbers AS (SELECT TOP (40000) ROW_NUMBER() OVER (ORDER BY (SELECT NULL)) - 1 AS n"
              + " FROM sys.all_objects a CROSS JOIN sys.all_objects b)"
              + " INSERT INTO dbo.["
              + table
              + "] (company, id, payload) SELECT "
              + shape.getValue()
              + ", n, n FROM numbers");
      server.execute("GRANT SHOWPLAN TO [" + SqlServerCdcTestDatabase.READER + "]");
      List<String> plans = new java.util.concurrent.CopyOnWriteArrayList<>();
      try (SqlCdcClient client =
          new SqlCdcClient(
              server.readerConfig(),
              () -> connectRecordingPlans(server.readerConfig(), table, plans),
              RetryPolicy.standard())) {
        List<String> keys = List.of("company", "id");
        List<List<Object>> bounds = client.keyTiles("dbo", table, keys, 8, RC);
        assertEquals(7, bounds.size(), table);
        for (int t = 0; t <= bounds.size(); t++) {
          Optional<List<Object>> lo = t == 0 ? Optional.empty() : Optional.of(bounds.get(t - 1));
          Optional<List<Object>> hi =
              t == bounds.size() ? Optional.empty() : Optional.of(bounds.get(t));
          int n = 0;
          try (CloseableIterator<List<Object>> it =
              client.readTable(
                  new TableQuery(
                      "dbo", table, List.of("company", "id", "payload"), keys, lo, hi, RC))) {
            while (it.hasNext()) {
              it.next();
              n++;
            }
          }
          assertEquals(5_000, n, table + " tile " + t + " returns its rows");
          assertEquals(t + 1, plans.size(), table + ": one actual plan per range read");
          String plan = plans.get(t);
          assertEquals(5_000, actualRowsRead(plan), table + " tile " + t + " reads its rows only");
          assertFalse(plan.contains("CONVERT_IMPLICIT"), table + " tile " + t + ": " + plan);
        }
      }
    }
  }

  /** The sum of ActualRowsRead over the plan's operators (seeks and scans report it). */
  private static long actualRowsRead(String showplanXml) throws Exception {
    javax.xml.parsers.DocumentBuilderFactory factory =
        javax.xml.parsers.DocumentBuilderFactory.newInstance();
    factory.setNamespaceAware(true);
    org.w3c.dom.Document doc =
        factory
            .newDocumentBuilder()
            .parse(new org.xml.sax.InputSource(new java.io.StringReader(showplanXml)));
    org.w3c.dom.NodeList counters = doc.getElementsByTagNameNS("*", "RunTimeCountersPerThread");
    long read = 0;
    for (int i = 0; i < counters.getLength(); i++) {
      String value = ((org.w3c.dom.Element) counters.item(i)).getAttribute("ActualRowsRead");
      if (!value.isEmpty()) {
        read += Long.parseLong(value);
      }
    }
    return read;
  }

  /**
   * A real connection that turns on {@code SET STATISTICS XML} for the client's reads of {@code
   * table} (not its NTILE query) and keeps each read's actual plan, which SQL Server sends as a
   * result set after the rows.
   */
  private static Connection connectRecordingPlans(
      SqlCdcClientFactory config, String table, List<String> plans) throws java.sql.SQLException {
    Connection real = SqlServerCdcTestDatabase.readerConnection(config);
    ClassLoader loader = SqlServerScenariosTest.class.getClassLoader();
    return (Connection)
        Proxy.newProxyInstance(
            loader,
            new Class<?>[] {Connection.class},
            (proxy, method, args) -> {
              if (method.getName().equals("prepareStatement")
                  && args[0] instanceof String sql
                  && sql.contains("[" + table + "]")
                  && !sql.contains("NTILE")) {
                try (Statement on = real.createStatement()) {
                  on.execute("SET STATISTICS XML ON");
                }
                PreparedStatement ps = (PreparedStatement) invoke(method, real, args);
                return recordingPlan(loader, real, ps, plans);
              }
              return invoke(method, real, args);
            });
  }

  private static PreparedStatement recordingPlan(
      ClassLoader loader, Connection real, PreparedStatement ps, List<String> plans) {
    PreparedStatement[] self = new PreparedStatement[1];
    self[0] =
        (PreparedStatement)
            Proxy.newProxyInstance(
                loader,
                new Class<?>[] {PreparedStatement.class},
                (proxy, method, args) -> {
                  switch (method.getName()) {
                    case "executeQuery" -> {
                      ResultSet rs = (ResultSet) invoke(method, ps, args);
                      return Proxy.newProxyInstance(
                          loader,
                          new Class<?>[] {ResultSet.class},
                          (p, m, a) ->
                              m.getName().equals("getStatement") ? self[0] : invoke(m, rs, a));
                    }
                    case "close" -> {
                      try {
                        while (true) {
                          if (ps.getMoreResults()) {
                            try (ResultSet r = ps.getResultSet()) {
                              if (r.getMetaData().getColumnName(1).contains("Showplan")
                                  && r.next()) {
                                plans.add(r.getString(1));
                              }
                            }
                          } else if (ps.getUpdateCount() == -1) {
                            break;
                          }
                        }
                      } finally {
                        ps.close();
                        try (Statement off = real.createStatement()) {
                          off.execute("SET STATISTICS XML OFF");
                        }
                      }
                      return null;
                    }
                    default -> {
                      return invoke(method, ps, args);
                    }
                  }
                });
    return self[0];
  }

  private static Object invoke(java.lang.reflect.Method method, Object target, Object[] args)
      throws Throwable {
    try {
      return method.invoke(target, args);
    } catch (InvocationTargetException e) {
      throw e.getCause();
    }
  }

  @Test
  void c090CdcRefusesAUniqueIndexOverNullableColumns() {
    server.execute(
        "CREATE TABLE dbo.nullable_key (a int NULL, b int NULL, v int)",
        "CREATE UNIQUE INDEX ux_nullable_key ON dbo.nullable_key (a, b)");
    IllegalStateException e =
        assertThrows(
            IllegalStateException.class,
            () ->
                server.execute(
                    "EXEC sys.sp_cdc_enable_table @source_schema = N'dbo', @source_name ="
                        + " N'nullable_key', @role_name = NULL, @index_name = N'ux_nullable_key',"
                        + " @supports_net_changes = 0"));
    assertTrue(
        e.getCause().getMessage().contains("must be defined as NOT NULL"),
        e.getCause().getMessage());
  }

  @Test
  void c244ThePre2022FixedOffsetClockEqualsTheNamedZone() {
    server.createCapturedTable(
        "clock_probe",
        List.of(ColumnDefinition.of("id", "int"), ColumnDefinition.of("v", "int")),
        List.of("id"),
        true);
    server.transaction("INSERT INTO dbo.clock_probe (id, v) VALUES (1, 1)");
    String zone = (String) server.adminQuery("SELECT CURRENT_TIMEZONE_ID()");
    try (SqlCdcClient named = (SqlCdcClient) server.readerConfig().open();
        SqlCdcClient version15 =
            new SqlCdcClient(
                server.readerConfig(),
                () -> connectAsVersion15(server.readerConfig()),
                RetryPolicy.standard())) {
      assertEquals(zone, named.timeZone(), "the named client's clock is the zone");
      // America/Sao_Paulo has kept UTC-3 all year since 2019.
      assertEquals("UTC-03:00", version15.timeZone());
      Lsn max = named.maxLsn().orElseThrow();
      assertEquals(
          named.lastCommitAtOrBefore(max).orElseThrow().commitTime(),
          version15.lastCommitAtOrBefore(max).orElseThrow().commitTime());
    }
  }

  @Test
  void c245TheServerClockOfALookUpByTimeStaysBeforeTheRepeatedHourInEasternTime() {
    ServerClock eastern = ServerClock.named("Eastern Standard Time");
    // The client's own expression, evaluated by SQL Server; read back as ISO text so that the
    // JVM's zone plays no part.
    String sql =
        "SELECT CONVERT(varchar(19), s.v, 126) FROM ("
            + CdcStatements.serverTimeAtOrBefore(eastern)
            + ") AS s(v)";
    Map<String, String> expected = new LinkedHashMap<>();
    expected.put("2026-11-01T05:45:00", "2026-11-01T00:45:00");
    expected.put("2026-11-01T06:30:00", "2026-11-01T01:30:00");
    expected.put("2026-03-08T06:30:00", "2026-03-08T01:30:00");
    expected.put("2026-07-01T12:00:00", "2026-07-01T08:00:00");
    Map<String, String> actual = new LinkedHashMap<>();
    for (String utc : expected.keySet()) {
      actual.put(utc, (String) server.adminQuery(sql, utc, utc));
    }
    assertEquals(expected, actual);
    // The Java twin the simulator uses agrees with SQL Server.
    CommitTimeConverter twin = CommitTimeConverter.named(ZoneId.of("America/New_York"));
    for (Map.Entry<String, String> e : expected.entrySet()) {
      assertEquals(
          LocalDateTime.parse(e.getValue()),
          twin.serverTimeAtOrBefore(Instant.parse(e.getKey() + "Z")),
          e.getKey());
    }
    // The client's whole look-up statement in that zone runs on SQL Server: nothing is at or
    // before 2000, and the last mapping entry (if capture wrote one yet) is before 2100.
    String lookUp = CdcStatements.lastCommitLsnAtOrBefore(eastern);
    Object none = server.adminQuery(lookUp, "2000-01-01T00:00:00", "2000-01-01T00:00:00");
    assertTrue(none == null || Lsn.parse(none.toString()).isZero(), "before 2000: " + none);
    Lsn max = server.maxLsn();
    if (max != null && !max.isZero()) {
      assertEquals(
          max.toString(),
          Lsn.parse(
                  server
                      .adminQuery(lookUp, "2100-01-01T00:00:00", "2100-01-01T00:00:00")
                      .toString())
              .toString());
    }
  }

  /**
   * A real connection that answers the version probe as SQL Server 2019 (major 15, Standard
   * edition): the client must then use the fixed-offset fallback.
   */
  private static Connection connectAsVersion15(SqlCdcClientFactory config)
      throws java.sql.SQLException {
    Connection real = SqlServerCdcTestDatabase.readerConnection(config);
    InvocationHandler handler =
        (proxy, method, args) -> {
          if (method.getName().equals("prepareStatement")
              && args != null
              && CdcStatements.SERVER_VERSION.equals(args[0])) {
            return versionStatement();
          }
          try {
            return method.invoke(real, args);
          } catch (InvocationTargetException e) {
            throw e.getCause();
          }
        };
    return (Connection)
        Proxy.newProxyInstance(
            SqlServerScenariosTest.class.getClassLoader(),
            new Class<?>[] {Connection.class},
            handler);
  }

  private static PreparedStatement versionStatement() {
    boolean[] read = {false};
    ResultSet rs =
        (ResultSet)
            Proxy.newProxyInstance(
                SqlServerScenariosTest.class.getClassLoader(),
                new Class<?>[] {ResultSet.class},
                (proxy, method, args) ->
                    switch (method.getName()) {
                      case "next" -> {
                        boolean first = !read[0];
                        read[0] = true;
                        yield first;
                      }
                      case "getInt" -> ((Integer) args[0]) == 1 ? 15 : 2;
                      case "wasNull" -> false;
                      case "close" -> null;
                      default ->
                          throw new UnsupportedOperationException("version probe: " + method);
                    });
    return (PreparedStatement)
        Proxy.newProxyInstance(
            SqlServerScenariosTest.class.getClassLoader(),
            new Class<?>[] {PreparedStatement.class},
            (proxy, method, args) ->
                switch (method.getName()) {
                  case "executeQuery" -> rs;
                  case "close", "setQueryTimeout", "setFetchSize" -> null;
                  default -> throw new UnsupportedOperationException("version probe: " + method);
                });
  }
}
