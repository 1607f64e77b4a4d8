package org.lakecdc.pipelines;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.beam.sdk.values.Row;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.io.mssqlcdc.client.IntegrationCondition;
import org.lakecdc.io.mssqlcdc.client.SqlServerCdcTestDatabase;
import org.lakecdc.io.mssqlcdc.fake.ColumnDefinition;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.io.mssqlcdc.read.StopCondition;
import org.lakecdc.io.mssqlcdc.schema.MetadataColumns;
import org.lakecdc.pipelines.cdc.CdcToDeltaJob;
import org.lakecdc.pipelines.cdc.CdcToDeltaLauncher;
import org.lakecdc.pipelines.cdc.Continuous;
import org.lakecdc.pipelines.cdc.JobSummary;
import org.lakecdc.pipelines.cli.CommandLine;
import org.lakecdc.pipelines.options.CdcToDeltaOptions;
import org.lakecdc.pipelines.targets.JobConfig;
import org.lakecdc.transforms.delta.DeltaColumn;
import org.lakecdc.transforms.delta.DeltaTables;
import org.lakecdc.transforms.facts.FactsTable;

/**
 * The main job end to end against SQL Server 2022 in a container, set up by a DBA's {@code sql/}
 * scripts and read as the least-privilege login, with the options a user passes on the command line
 * ({@code --connectionUrl}, {@code --user}, {@code --passwordFile}): the {@code [SQL Server]}
 * scenarios of docs/scenarios.md sections 1 to 6 and 13 to 15 that concern the job (C012 to C014,
 * C045 to C049, C061, C075, C086, C087, C184, C212, C243). The server's clock is America/Sao_Paulo
 * (UTC-3). Runs in the integration profile ({@code mvn -B -Pit verify}) where a Docker engine is
 * available; otherwise every test reports skipped with the reason.
 */
@ExtendWith(IntegrationCondition.class)
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class SqlServerJobTest {
  private static SqlServerCdcTestDatabase server;

  @TempDir Path dir;

  @BeforeAll
  static void startSqlServer() throws Exception {
    server = SqlServerCdcTestDatabase.start();
    // A bootstrap stamps its rows with the commit time of its snapshot LSN and refuses to guess
    // one on a database whose capture has never mapped a commit (SnapshotPlanner): one captured
    // commit first, whichever test runs first.
    server.awaitCapture();
  }

  @AfterAll
  static void stopSqlServer() {
    if (server != null) {
      server.stop();
    }
  }

  private static final List<ColumnDefinition> ORDERS =
      List.of(
          ColumnDefinition.of("order_id", "int"),
          ColumnDefinition.of("status", "varchar(20)"),
          ColumnDefinition.of("amount", "decimal(18,2)"),
          ColumnDefinition.of("updated_at", "datetime2(7)"));

  private static final List<ColumnDefinition> ID_V =
      List.of(ColumnDefinition.of("id", "int"), ColumnDefinition.of("v", "int"));

  /** One target of the job in the test's directory: bronze, facts and control of a table. */
  private final class Target {
    final String bronze;
    final String facts;
    final String control;
    final DeltaTables tables = DeltaTables.create();
    String lastOutput = "";

    Target(String name) {
      this.bronze = dir.resolve(name + "/bronze").toString();
      this.facts = dir.resolve(name + "/facts").toString();
      this.control = dir.resolve(name + "/control").toString();
    }

    /** The command line a user passes, for this target and {@code captureInstance}. */
    String[] args(String captureInstance, String... extra) {
      List<String> args =
          new ArrayList<>(
              List.of(
                  "--runner=DirectRunner",
                  "--connectionUrl=" + server.jdbcUrl() + ";trustServerCertificate=true",
                  "--user=" + SqlServerCdcTestDatabase.READER,
                  "--passwordFile=" + server.passwordFile(),
                  "--captureInstance=" + captureInstance,
                  "--target=" + bronze,
                  "--factsTable=" + facts,
                  "--controlTable=" + control,
                  "--appId=it-" + Path.of(bronze).getParent().getFileName()));
      args.addAll(List.of(extra));
      return args.toArray(String[]::new);
    }

    /** Runs the job once, as {@code CdcToDelta} does after parsing the command line. */
    JobSummary run(String captureInstance, String... extra) {
      CdcToDeltaOptions options =
          CommandLine.parse(args(captureInstance, extra), CdcToDeltaOptions.class);
      JobConfig config = CdcToDeltaLauncher.config(options);
      ByteArrayOutputStream bytes = new ByteArrayOutputStream();
      try (PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8)) {
        return CdcToDeltaJob.run(config, options, out);
      } finally {
        lastOutput = bytes.toString(StandardCharsets.UTF_8);
      }
    }

    /** Runs the job once more when a run stops at a newer instance asking for a restart. */
    JobSummary runRestartingOnSchemaChange(String captureInstance, String... extra) {
      try {
        return run(captureInstance, extra);
      } catch (RuntimeException e) {
        if (!causeMessages(e).contains("SchemaChangedError")
            && !causeMessages(e).toLowerCase(java.util.Locale.ROOT).contains("restart")) {
          throw e;
        }
        return run(captureInstance, extra);
      }
    }

    /** Every bronze row, in change order. */
    List<Row> bronzeRows() {
      List<Row> rows =
          new ArrayList<>(
              tables.scan(bronze, DeltaColumn.toBeamSchema(tables.describe(bronze).columns())));
      rows.sort(BronzeOracle.CHANGE_ORDER);
      return rows;
    }

    List<String> bronzeColumns() {
      return tables.describe(bronze).columns().stream().map(DeltaColumn::name).toList();
    }

    /** This target's facts rows. */
    List<Row> facts() {
      return tables.scan(facts, FactsTable.SCHEMA);
    }

    List<Row> events(String event) {
      return facts().stream().filter(r -> event.equals(r.getString(FactsTable.EVENT))).toList();
    }

    /** Rows of each batch with rows, in batch order. */
    List<Long> nonEmptyBatchRows() {
      return facts().stream()
          .filter(r -> r.getString(FactsTable.EVENT) == null && r.getInt64(FactsTable.ROWS) > 0)
          .sorted(Comparator.comparing(r -> r.getInt64(FactsTable.BATCH_ID)))
          .map(r -> r.getInt64(FactsTable.ROWS))
          .toList();
    }
  }

  /** The source table as sa reads it: key → {@code columns}, ordered by key. */
  private static Map<Integer, List<Object>> source(String table, String key, String... columns) {
    Map<Integer, List<Object>> rows = new TreeMap<>();
    for (List<Object> r :
        server.rows(
            "SELECT [" + key + "], " + String.join(", ", columns) + " FROM dbo.[" + table + "]")) {
      List<Object> values = new ArrayList<>();
      for (int i = 1; i < r.size(); i++) {
        values.add(BronzeOracle.normal(r.get(i)));
      }
      rows.put(((Number) r.get(0)).intValue(), values);
    }
    return rows;
  }

  private static String causeMessages(Throwable e) {
    StringBuilder all = new StringBuilder();
    for (Throwable t = e; t != null; t = t.getCause()) {
      all.append(t.getClass().getSimpleName()).append(": ").append(t.getMessage()).append('\n');
    }
    return all.toString();
  }

  private static Instant utc(LocalDateTime t) {
    return t.toInstant(ZoneOffset.UTC);
  }

  private static void assertWithin(Duration limit, Instant expected, Instant actual, String what) {
    Duration off = Duration.between(expected, actual).abs();
    assertTrue(
        off.compareTo(limit) <= 0, what + ": " + actual + " is " + off + " from " + expected);
  }

  /**
   * Creates {@code dbo.<table> (id int, v int)} holding ids 1..{@code rows} with v = 0, rows older
   * than CDC, then captures it as {@code dbo_<table>} granted to the reader.
   */
  private static void idValueTable(String table, int rows) {
    server.createTable(table, ID_V, List.of("id"));
    for (int id = 1; id <= rows; id++) {
      server.execute("INSERT INTO dbo.[" + table + "] (id, v) VALUES (" + id + ", 0)");
    }
    server.enableCapture(table, "dbo_" + table, true);
  }

  // ---- the main job end to end, C086, C243 ------------------------------------------------------

  @Test
  void c086TheMainJobBootstrapsAndStreamsATableFromSqlServerWithUtcCommitTimes() {
    String table = "boot";
    server.createTable(table, ORDERS, List.of("order_id"));
    for (int id = 1; id <= 6; id++) {
      server.execute(
          "INSERT INTO dbo.boot (order_id, status, amount, updated_at) VALUES ("
              + id
              + ", 'old', "
              + id
              + ".50, '2026-09-28T13:50:00')");
    }
    // C086: rows older than CDC; the instance named in upper case; three snapshot ranges.
    server.enableCapture(table, "dbo_boot", true);
    Target t = new Target(table);
    JobSummary first = t.run("DBO_BOOT", "--bootstrap=true", "--numPartitions=3");
    assertEquals(6, first.snapshotRows());
    List<Row> snapshot = t.bronzeRows();
    assertEquals(
        List.of("1 old 0", "2 old 0", "3 old 0", "4 old 0", "5 old 0", "6 old 0"),
        snapshot.stream()
            .sorted(Comparator.comparing(r -> r.getInt32("order_id")))
            .map(
                r ->
                    r.getInt32("order_id")
                        + " "
                        + r.getString("status")
                        + " "
                        + r.getInt32(MetadataColumns.OPERATION))
            .toList());
    assertEquals(1, t.events(FactsTable.EVENT_BOOTSTRAP).size());

    Instant before = server.serverUtcNow();
    server.transaction("UPDATE dbo.boot SET status = 'paid' WHERE order_id = 1");
    server.transaction("DELETE FROM dbo.boot WHERE order_id = 2");
    server.transaction(
        "INSERT INTO dbo.boot (order_id, status, amount, updated_at)"
            + " VALUES (7, 'new', 7.25, '2026-09-28T13:55:00.1234567')");
    Instant after = server.serverUtcNow();
    JobSummary second = t.run("DBO_BOOT", "--bootstrap=true", "--numPartitions=3");

    List<Row> bronze = t.bronzeRows();
    assertEquals(
        6, bronze.stream().filter(r -> r.getInt32(MetadataColumns.OPERATION) == 0).count());
    assertEquals(10, bronze.size(), "6 snapshot rows, an update (2 rows), a delete, an insert");
    assertEquals(
        source(table, "order_id", "status", "amount"),
        BronzeOracle.latest(bronze, "order_id", "status", "amount"));
    assertEquals(4, second.rows());
    // C243: commit times are UTC although the server's clock is UTC-3.
    for (Row r : bronze) {
      if (r.getInt32(MetadataColumns.OPERATION) != 0) {
        Instant commit = utc(r.getLogicalTypeValue(MetadataColumns.COMMIT_TS, LocalDateTime.class));
        assertTrue(
            !commit.isBefore(before.minusSeconds(60)) && !commit.isAfter(after.plusSeconds(60)),
            "commit time " + commit + " outside [" + before + ", " + after + "] ± 1 minute");
      }
    }
    Instant end = second.position().orElseThrow().endCommitTime();
    assertNotNull(end);
    assertWithin(Duration.ofMinutes(1), after, end, "the position's commit time");
    assertTrue(second.verdict().isPresent(), "the verdict moved with the data");
    assertEquals(
        "2026-09-28T13:55:00.123456",
        bronze.stream()
            .filter(r -> r.getInt32("order_id") == 7)
            .findFirst()
            .orElseThrow()
            .getLogicalTypeValue("updated_at", LocalDateTime.class)
            .toString(),
        "datetime2(7) keeps microseconds, no zone applied");

    JobSummary third = t.run("DBO_BOOT", "--bootstrap=true", "--numPartitions=3");
    assertEquals(0, third.batches());
    assertTrue(t.lastOutput.contains("Nothing new"), t.lastOutput);
    assertEquals(10, t.bronzeRows().size());
  }

  // ---- 11. Silver (C184) -----------------------------------------------------------------------

  /**
   * C184: silver with a composite primary key (its keys taken from the unique index, no --keys)
   * converges to the table; SQL Server records the update of a key column as a delete and an
   * insert, never as an update's before-image of the old key.
   */
  @Test
  void c184SilverWithACompositeKeyConvergesAndAKeyUpdateArrivesAsDeleteAndInsert() {
    String table = "pair";
    server.createTable(
        table,
        List.of(
            ColumnDefinition.of("a", "int"),
            ColumnDefinition.of("b", "varchar(10)"),
            ColumnDefinition.of("v", "varchar(10)")),
        List.of("a", "b"));
    server.execute(
        "INSERT INTO dbo.pair (a, b, v) VALUES (1, 'x', 'old')",
        "INSERT INTO dbo.pair (a, b, v) VALUES (1, 'y', 'old')",
        "INSERT INTO dbo.pair (a, b, v) VALUES (2, 'w', 'old')");
    server.enableCapture(table, "dbo_pair", true);
    Target t = new Target(table);
    String silver = dir.resolve(table + "/silver").toString();
    t.run("dbo_pair", "--bootstrap=true", "--silver=" + silver);
    assertEquals(List.of("1 x old", "1 y old", "2 w old"), silverRows(t, silver));

    server.transaction("UPDATE dbo.pair SET v = 'new' WHERE a = 1 AND b = 'y'");
    server.transaction("DELETE FROM dbo.pair WHERE a = 2");
    server.transaction("UPDATE dbo.pair SET b = 'z' WHERE a = 1 AND b = 'x'");
    t.run("dbo_pair", "--bootstrap=true", "--silver=" + silver);

    List<String> inTable =
        server.rows("SELECT a, b, v FROM dbo.pair").stream()
            .map(r -> r.get(0) + " " + r.get(1) + " " + r.get(2))
            .sorted()
            .toList();
    assertEquals(List.of("1 y new", "1 z old"), inTable);
    assertEquals(inTable, silverRows(t, silver));
    List<String> operations =
        t.bronzeRows().stream()
            .filter(r -> r.getInt32(MetadataColumns.OPERATION) != 0)
            .map(r -> r.getInt32(MetadataColumns.OPERATION) + " " + r.getString("b"))
            .toList();
    assertTrue(operations.contains("1 x"), operations.toString());
    assertTrue(operations.contains("2 z"), operations.toString());
    assertFalse(operations.contains("3 x"), operations.toString());
  }

  /** Silver's rows as "a b v", sorted. */
  private static List<String> silverRows(Target t, String silver) {
    return t
        .tables
        .scan(silver, DeltaColumn.toBeamSchema(t.tables.describe(silver).columns()))
        .stream()
        .map(r -> r.getInt32("a") + " " + r.getString("b") + " " + r.getString("v"))
        .sorted()
        .toList();
  }

  // ---- 6. Seed (C087)
  // ----------------------------------------------------------------------------

  @Test
  void c087SeedMapsItsUtcStartOntoTheServerClock() throws Exception {
    String table = "seeded";
    server.createTable(table, ORDERS, List.of("order_id"));
    server.enableCapture(table, "dbo_seeded", true);
    for (int id = 1; id <= 4; id++) {
      server.transaction(
          "INSERT INTO dbo.seeded (order_id, status, amount, updated_at) VALUES ("
              + id
              + ", 'new', "
              + id
              + ".25, '2026-09-28T13:50:00.1234567')");
    }
    Lsn inserts = server.maxLsn();
    // as_of is truncated to whole seconds: start the copy's read in a later second of the
    // server's clock than the inserts'.
    Instant inserted = server.serverUtcNow().truncatedTo(java.time.temporal.ChronoUnit.SECONDS);
    org.awaitility.Awaitility.await("the server's clock in a later second than the inserts")
        .atMost(Duration.ofSeconds(10))
        .pollInterval(Duration.ofMillis(50))
        .pollInSameThread()
        .until(
            () ->
                server
                    .serverUtcNow()
                    .truncatedTo(java.time.temporal.ChronoUnit.SECONDS)
                    .isAfter(inserted));
    Instant asOf = server.serverUtcNow();
    List<DeltaColumn> columns =
        List.of(
            DeltaColumn.nullable("order_id", org.lakecdc.io.mssqlcdc.schema.OutputType.INT, null),
            DeltaColumn.nullable("status", org.lakecdc.io.mssqlcdc.schema.OutputType.STRING, null),
            DeltaColumn.nullable(
                "amount", org.lakecdc.io.mssqlcdc.schema.OutputType.decimal(18, 2), null),
            DeltaColumn.nullable(
                "updated_at", org.lakecdc.io.mssqlcdc.schema.OutputType.STRING, null));
    org.apache.beam.sdk.schemas.Schema schema = DeltaColumn.toBeamSchema(columns);
    List<Row> copyRows = new ArrayList<>();
    for (List<Object> r :
        server.rows(
            "SELECT order_id, status, amount, CONVERT(varchar(27), updated_at, 126)"
                + " FROM dbo.seeded")) {
      copyRows.add(
          Row.withSchema(schema)
              .addValues(
                  ((Number) r.get(0)).intValue(),
                  r.get(1),
                  new java.math.BigDecimal(r.get(2).toString()),
                  r.get(3))
              .build());
    }
    String copy = dir.resolve("seeded/copy").toString();
    DeltaTables tables = DeltaTables.create();
    tables.createIfAbsent(
        copy,
        org.lakecdc.transforms.delta.TableDefinition.of(
            org.lakecdc.transforms.delta.TableKind.SILVER, columns));
    tables.append(copy, schema, copyRows, null, 0, Map.of());

    Target t = new Target(table);
    JobSummary seeded = t.run("dbo_seeded", "--seedTable=" + copy, "--seedAsOf=" + asOf);
    assertEquals(4, seeded.snapshotRows());
    assertTrue(t.lastOutput.contains("Seeded " + t.bronze + " from " + copy), t.lastOutput);
    org.lakecdc.transforms.snapshot.WriteSnapshotToDelta.SnapshotRecord record =
        org.lakecdc.transforms.snapshot.WriteSnapshotToDelta.committedRecord(tables, t.bronze)
            .orElseThrow();
    assertFalse(record.lsn().isBefore(inserts), record.lsn() + " before " + inserts);
    assertFalse(record.commitTime().isAfter(asOf), record.commitTime() + " after " + asOf);

    t.run("dbo_seeded", "--bootstrap=true");
    List<Row> bronze = t.bronzeRows();
    assertEquals(
        4, bronze.stream().filter(r -> r.getInt32(MetadataColumns.OPERATION) == 0).count());
    assertEquals(1, t.events(FactsTable.EVENT_BOOTSTRAP).size());
    assertEquals(
        source(table, "order_id", "status", "amount"),
        BronzeOracle.latest(bronze, "order_id", "status", "amount"));
  }

  // ---- 1. Offsets and read limits ---------------------------------------------------------------

  @Test
  void c012ARerunResumesAfterItsPositionAndATransactionsRowsKeepStatementOrder() {
    String table = "c012";
    String ci = server.createCapturedTable(table, ORDERS, List.of("order_id"), true);
    server.transaction(
        "INSERT INTO dbo.c012 (order_id, status, amount) VALUES (1, 'new', 1.00)",
        "UPDATE dbo.c012 SET status = 'paid' WHERE order_id = 1",
        "DELETE FROM dbo.c012 WHERE order_id = 1");
    Target t = new Target(table);
    t.run(ci, "--bootstrap=false");
    List<Row> first = t.bronzeRows();
    assertEquals(
        List.of(2, 3, 4, 1),
        first.stream().map(r -> r.getInt32(MetadataColumns.OPERATION)).toList());
    List<Integer> commandIds =
        first.stream().map(r -> r.getInt32(MetadataColumns.COMMAND_ID)).toList();
    assertFalse(commandIds.contains(null), "command ids " + commandIds);
    for (int i = 1; i < commandIds.size(); i++) {
      assertTrue(commandIds.get(i - 1) <= commandIds.get(i), "command ids " + commandIds);
    }
    assertEquals(
        1, first.stream().map(r -> r.getString(MetadataColumns.START_LSN)).distinct().count());

    server.transaction("INSERT INTO dbo.c012 (order_id, status, amount) VALUES (2, 'new', 2.00)");
    t.run(ci, "--bootstrap=false");
    List<Row> second = t.bronzeRows();
    assertEquals(5, second.size());
    List<Row> added = new ArrayList<>(second);
    added.removeIf(
        r ->
            first.stream()
                .anyMatch(
                    f ->
                        f.getString(MetadataColumns.SEQVAL)
                                .equals(r.getString(MetadataColumns.SEQVAL))
                            && f.getInt32(MetadataColumns.OPERATION)
                                .equals(r.getInt32(MetadataColumns.OPERATION))));
    assertEquals(
        List.of("2/2"),
        added.stream()
            .map(r -> r.getInt32("order_id") + "/" + r.getInt32(MetadataColumns.OPERATION))
            .toList());
  }

  @Test
  void c013MaxCommitsPerBatchOfOneReadsOneTransactionPerBatch() {
    String table = "c013";
    String ci = server.createCapturedTable(table, ORDERS, List.of("order_id"), true);
    for (int tx = 0; tx < 4; tx++) {
      server.transaction(
          "INSERT INTO dbo.c013 (order_id, status) VALUES (" + (tx * 10) + ", 'new')",
          "INSERT INTO dbo.c013 (order_id, status) VALUES (" + (tx * 10 + 1) + ", 'new')");
    }
    Target t = new Target(table);
    t.run(ci, "--bootstrap=false", "--maxCommitsPerBatch=1");
    // Commits of other tables (capture's marker) are batches without rows of this table.
    assertEquals(List.of(2L, 2L, 2L, 2L), t.nonEmptyBatchRows());
    List<Row> bronze = t.bronzeRows();
    assertEquals(8, bronze.size());
    assertEquals(
        8,
        bronze.stream()
            .map(
                r ->
                    r.getString(MetadataColumns.START_LSN)
                        + r.getString(MetadataColumns.SEQVAL)
                        + r.getInt32(MetadataColumns.OPERATION))
            .distinct()
            .count());
  }

  @Test
  void c014TheHeartbeatJobKeepsAnIdleStreamCurrent() throws Exception {
    String table = "c014";
    String ci = server.createCapturedTable(table, ID_V, List.of("id"), true);
    server.transaction("INSERT INTO dbo.c014 (id, v) VALUES (1, 1)");
    Target t = new Target(table);
    Lsn firstEnd = t.run(ci, "--bootstrap=false").position().orElseThrow().endLsn();
    String job = server.installHeartbeat(10);
    try {
      // The heartbeat job's first commit, captured: the idle stream has something to move to.
      org.awaitility.Awaitility.await("a heartbeat captured after the first run's end")
          .atMost(Duration.ofSeconds(90))
          .pollInterval(Duration.ofMillis(500))
          .pollInSameThread()
          .until(() -> server.maxLsn().isAfter(firstEnd));
      JobSummary second = t.run(ci, "--bootstrap=false");
      Instant now = server.serverUtcNow();
      Lsn secondEnd = second.position().orElseThrow().endLsn();
      assertTrue(secondEnd.isAfter(firstEnd), secondEnd + " after " + firstEnd);
      Instant end = second.position().orElseThrow().endCommitTime();
      assertNotNull(end);
      assertTrue(
          Duration.between(end, now).compareTo(Duration.ofSeconds(30)) < 0,
          "the position's commit time " + end + " is within 30 s of " + now);
      assertEquals(1, t.bronzeRows().size(), "heartbeats are not rows of the table");
    } finally {
      server.deleteAgentJob(job);
    }
  }

  // ---- 3. Capture instance switch ---------------------------------------------------------------

  @Test
  void c045AnInstanceEnabledUnderWritesTakesOverAtItsStartLsn() throws Exception {
    String table = "sw_live";
    idValueTable(table, 10);
    // A commit every 30 ms on one connection, from before the enable until after the second run.
    java.util.concurrent.atomic.AtomicInteger commits =
        new java.util.concurrent.atomic.AtomicInteger();
    java.util.concurrent.ScheduledExecutorService writer =
        java.util.concurrent.Executors.newSingleThreadScheduledExecutor();
    try (Connection c = server.adminConnection();
        Statement st = c.createStatement()) {
      java.util.concurrent.ScheduledFuture<?> writes =
          writer.scheduleWithFixedDelay(
              () -> {
                int n = commits.get();
                int id = 1 + n % 10;
                try {
                  if (n % 7 == 0) {
                    st.execute("INSERT INTO dbo.sw_live (id, v) VALUES (" + (100 + n) + ", 1)");
                  } else {
                    st.execute("UPDATE dbo.sw_live SET v = v + 1 WHERE id = " + id);
                  }
                } catch (java.sql.SQLException e) {
                  throw new IllegalStateException(e);
                }
                commits.incrementAndGet();
              },
              0,
              30,
              TimeUnit.MILLISECONDS);
      Target t = new Target(table);
      t.run("dbo_sw_live", "--bootstrap=true");
      Lsn s = server.enableNewerInstance(table, "dbo_sw_live", "dbo_sw_live_v2", true);
      // Writes under the newer instance, captured, before the second run.
      org.awaitility.Awaitility.await("a write after the newer instance's start, captured")
          .atMost(Duration.ofSeconds(90))
          .pollInterval(Duration.ofMillis(200))
          .pollInSameThread()
          .until(() -> server.maxLsn().isAfter(s));
      t.run("dbo_sw_live", "--bootstrap=true");
      if (writes.isDone()) {
        writes.get(); // a failed write: its exception
      }
      writer.shutdown();
      assertTrue(writer.awaitTermination(60, TimeUnit.SECONDS));
      assertTrue(commits.get() > 0);
      server.awaitCapture();
      t.run("dbo_sw_live", "--bootstrap=true");

      List<Row> changes =
          t.bronzeRows().stream().filter(r -> r.getInt32(MetadataColumns.OPERATION) != 0).toList();
      Set<String> seen = new HashSet<>();
      for (Row r : changes) {
        assertTrue(
            seen.add(
                r.getString(MetadataColumns.START_LSN)
                    + "/"
                    + r.getString(MetadataColumns.SEQVAL)
                    + "/"
                    + r.getInt32(MetadataColumns.OPERATION)),
            "duplicate change " + r);
        boolean belowS = Lsn.parse(r.getString(MetadataColumns.START_LSN)).isBefore(s);
        assertEquals(
            belowS ? "dbo_sw_live" : "dbo_sw_live_v2",
            r.getString(MetadataColumns.CAPTURE_INSTANCE),
            "the instance of a change at " + r.getString(MetadataColumns.START_LSN));
      }
      assertTrue(
          changes.stream().anyMatch(r -> "dbo_sw_live".equals(r.getString("_capture_instance"))));
      assertTrue(
          changes.stream()
              .anyMatch(r -> "dbo_sw_live_v2".equals(r.getString("_capture_instance"))));
      assertEquals(source(table, "id", "v"), BronzeOracle.latest(t.bronzeRows(), "id", "v"));
      List<Row> switches = t.events("capture_instance_switched");
      assertEquals(1, switches.size());
      assertEquals("dbo_sw_live -> dbo_sw_live_v2", switches.get(0).getString(FactsTable.DETAIL));
      assertEquals(s.toString(), switches.get(0).getString(FactsTable.MIN_LSN));
    } finally {
      writer.shutdownNow();
    }
  }

  @Test
  void c046AnOlderInstanceDisabledBeforeTheStreamReachedItsSuccessorMeansDataLoss() {
    String table = "sw_gone";
    idValueTable(table, 10);
    Target t = new Target(table);
    t.run("dbo_sw_gone", "--bootstrap=true");
    server.transaction("DELETE FROM dbo.sw_gone WHERE id = 1");
    server.enableNewerInstance(table, "dbo_sw_gone", "dbo_sw_gone_v2", true);
    server.transaction("UPDATE dbo.sw_gone SET v = 2 WHERE id = 2");
    server.disableInstance(table, "dbo_sw_gone");
    int before = t.bronzeRows().size();

    RuntimeException e = assertThrows(RuntimeException.class, () -> t.run("dbo_sw_gone"));
    String messages = causeMessages(e);
    assertTrue(
        messages.contains("or held only by capture instance 'dbo_sw_gone', disabled before"),
        messages);
    assertTrue(messages.contains("re-snapshot is required"), messages);
    assertEquals(before, t.bronzeRows().size(), "nothing written after the loss");
  }

  @Test
  void c047AColumnAddedReachesBronzeThroughANewInstanceWithItsValues() {
    String table = "ddl_add";
    idValueTable(table, 3);
    Target t = new Target(table);
    t.run("dbo_ddl_add", "--bootstrap=true");

    server.ddl(table, "ALTER TABLE dbo.ddl_add ADD note varchar(20) NULL");
    server.transaction("UPDATE dbo.ddl_add SET note = 'before v2' WHERE id = 1");
    server.transaction("UPDATE dbo.ddl_add SET v = 1 WHERE id = 2");
    t.run("dbo_ddl_add");
    List<Row> schemaChanges = t.events("schema_change");
    assertEquals(1, schemaChanges.size());
    assertTrue(
        schemaChanges.get(0).getString(FactsTable.DETAIL).contains(" ADD note "),
        schemaChanges.get(0).getString(FactsTable.DETAIL));
    assertFalse(t.bronzeColumns().contains("note"), "the old instance does not capture note");

    server.enableNewerInstance(table, "dbo_ddl_add", "dbo_ddl_add_v2", true);
    server.transaction("UPDATE dbo.ddl_add SET note = 'after v2' WHERE id = 3");
    t.runRestartingOnSchemaChange("dbo_ddl_add");
    assertTrue(t.bronzeColumns().contains("note"), t.bronzeColumns().toString());
    List<Row> switches = t.events("capture_instance_switched");
    assertEquals(1, switches.size());
    assertEquals("dbo_ddl_add -> dbo_ddl_add_v2", switches.get(0).getString(FactsTable.DETAIL));

    Map<Integer, List<Object>> expectedSource = new LinkedHashMap<>();
    expectedSource.put(1, java.util.Collections.singletonList("before v2"));
    expectedSource.put(2, java.util.Collections.singletonList(null));
    expectedSource.put(3, java.util.Collections.singletonList("after v2"));
    assertEquals(expectedSource, source(table, "id", "note"));
    // Without a snapshot on the switch (not built), id 1's note set before v2 existed never
    // reaches bronze: the old instance wrote no change row for it.
    Map<Integer, List<Object>> expectedBronze = new LinkedHashMap<>(expectedSource);
    expectedBronze.put(1, java.util.Collections.singletonList(null));
    assertEquals(expectedBronze, BronzeOracle.latest(t.bronzeRows(), "id", "note"));
  }

  @Test
  void c048ANewInstanceWithoutItsGrantNamesItsChangeTable() {
    String table = "sw_grant";
    String ci = server.createCapturedTable(table, ID_V, List.of("id"), true);
    server.transaction("INSERT INTO dbo.sw_grant (id, v) VALUES (1, 1)");
    Target t = new Target(table);
    t.run(ci, "--bootstrap=false");
    server.enableNewerInstance(table, ci, "dbo_sw_grant_v2", false);
    server.transaction("INSERT INTO dbo.sw_grant (id, v) VALUES (2, 2)");

    RuntimeException e = assertThrows(RuntimeException.class, () -> t.run(ci, "--bootstrap=false"));
    String grant =
        "GRANT SELECT ON cdc.[dbo_sw_grant_v2_CT] TO [" + SqlServerCdcTestDatabase.READER + "]";
    assertTrue(causeMessages(e).contains(grant), causeMessages(e));
    server.grant(grant);
    t.run(ci, "--bootstrap=false");
    assertEquals(
        List.of("1 dbo_sw_grant", "2 dbo_sw_grant_v2"),
        t.bronzeRows().stream()
            .map(r -> r.getInt32("id") + " " + r.getString(MetadataColumns.CAPTURE_INSTANCE))
            .toList());
  }

  @Test
  void c049ATransactionOpenDuringTheEnableIsReadWholeFromOneInstance() throws Exception {
    String table = "sw_tx";
    String ci =
        server.createCapturedTable(
            table, List.of(ColumnDefinition.of("id", "int")), List.of("id"), true);
    Lsn s;
    try (Connection a = server.adminConnection()) {
      a.setAutoCommit(false);
      Object session;
      try (Statement st = a.createStatement()) {
        st.execute("INSERT INTO dbo.sw_tx (id) VALUES (1), (2), (3)");
        try (java.sql.ResultSet rs = st.executeQuery("SELECT @@SPID")) {
          rs.next();
          session = rs.getObject(1);
        }
      }
      CompletableFuture<Lsn> enable =
          CompletableFuture.supplyAsync(
              () -> server.enableNewerInstance(table, ci, "dbo_sw_tx_v2", true));
      // The enable is waiting once a request (its sp_cdc_enable_table) is blocked by the open
      // transaction's session; watched on a connection of its own, as the enable holds the
      // test database's admin connection.
      try (Connection watch = server.adminConnection();
          java.sql.PreparedStatement blocked =
              watch.prepareStatement(
                  "SELECT COUNT(*) FROM sys.dm_exec_requests WHERE blocking_session_id = ?")) {
        blocked.setObject(1, session);
        org.awaitility.Awaitility.await("a request blocked by session " + session)
            .atMost(Duration.ofSeconds(60))
            .pollInterval(Duration.ofMillis(100))
            .pollInSameThread()
            .until(
                () -> {
                  if (enable.isDone()) {
                    return true;
                  }
                  try (java.sql.ResultSet rs = blocked.executeQuery()) {
                    return rs.next() && rs.getInt(1) > 0;
                  }
                });
      }
      assertFalse(enable.isDone(), "the enable waits for the open transaction");
      a.commit();
      s = enable.get(120, TimeUnit.SECONDS);
    }
    server.transaction("INSERT INTO dbo.sw_tx (id) VALUES (11), (12), (13)");
    assertEquals(
        List.of(List.of(3, 3)),
        server.rows(
            "SELECT SUM(CASE WHEN id < 10 THEN 1 ELSE 0 END), SUM(CASE WHEN id > 10 THEN 1 ELSE 0"
                + " END) FROM cdc.[dbo_sw_tx_CT]"));
    assertEquals(
        List.of(List.of(0, 3)),
        server.rows(
            "SELECT ISNULL(SUM(CASE WHEN id < 10 THEN 1 ELSE 0 END), 0), ISNULL(SUM(CASE WHEN id >"
                + " 10 THEN 1 ELSE 0 END), 0) FROM cdc.[dbo_sw_tx_v2_CT]"));

    Target t = new Target(table);
    t.run(ci, "--bootstrap=false");
    List<Row> bronze = t.bronzeRows();
    assertEquals(List.of(1, 2, 3, 11, 12, 13), bronze.stream().map(r -> r.getInt32("id")).toList());
    for (Row r : bronze) {
      boolean first = r.getInt32("id") < 10;
      Lsn lsn = Lsn.parse(r.getString(MetadataColumns.START_LSN));
      assertEquals(first ? ci : "dbo_sw_tx_v2", r.getString(MetadataColumns.CAPTURE_INSTANCE));
      assertEquals(first, lsn.isBefore(s), r.getInt32("id") + " at " + lsn + ", S = " + s);
    }
  }

  // ---- 4. Schema change -------------------------------------------------------------------------

  @Test
  void c061ATypeChangeStopsTheRunningQueryBeforeItsBatchIsWritten() throws Exception {
    String table = "type_change";
    String ci =
        server.createCapturedTable(
            table,
            List.of(
                ColumnDefinition.of("id", "int"), ColumnDefinition.of("amount", "decimal(9,2)")),
            List.of("id"),
            true);
    server.transaction("INSERT INTO dbo.type_change (id, amount) VALUES (1, 1.5)");
    Target t = new Target(table);
    CdcToDeltaOptions options =
        CommandLine.parse(t.args(ci, "--bootstrap=false"), CdcToDeltaOptions.class);
    JobConfig config = CdcToDeltaLauncher.config(options);
    CompletableFuture<JobSummary> following =
        CompletableFuture.supplyAsync(
            () ->
                CdcToDeltaJob.runContinuously(
                    config,
                    options,
                    new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8),
                    () -> {},
                    new Continuous(
                        Continuous.Form.STREAM,
                        Duration.ofSeconds(1),
                        Duration.ofMinutes(3),
                        StopCondition.at(Long.MAX_VALUE))));
    org.awaitility.Awaitility.await("the running query wrote id 1")
        .atMost(Duration.ofSeconds(120))
        .pollDelay(Duration.ZERO)
        .pollInterval(Duration.ofMillis(500))
        .pollInSameThread()
        .until(() -> t.tables.exists(t.bronze) && t.bronzeRows().size() == 1);
    server.stopCapture();
    server.execute("INSERT INTO dbo.type_change (id, amount) VALUES (2, 2.5)");
    server.execute("ALTER TABLE dbo.type_change ALTER COLUMN amount decimal(18,4)");
    server.execute("INSERT INTO dbo.type_change (id, amount) VALUES (3, 123456789.1234)");
    server.startCapture();

    ExecutionException failed =
        assertThrows(ExecutionException.class, () -> following.get(150, TimeUnit.SECONDS));
    String messages = causeMessages(failed);
    assertTrue(messages.contains("amount DECIMAL(18,4) (read as decimal(9,2))"), messages);
    assertEquals(1, t.bronzeRows().size(), "nothing of the failed batch was written");

    RuntimeException restart =
        assertThrows(RuntimeException.class, () -> t.run(ci, "--bootstrap=false"));
    assertTrue(causeMessages(restart).contains("delta.enableTypeWidening"), causeMessages(restart));
    assertEquals(1, t.bronzeRows().size());

    // The owner enables type widening on bronze (Kernel writes it; delta-spark 3.3 then cannot
    // read the decimal change, Delta 4.0 can: docs/tables.md): the run widens amount and goes on.
    t.tables.setTableProperties(t.bronze, Map.of("delta.enableTypeWidening", "true"));
    t.run(ci, "--bootstrap=false");
    assertEquals(
        "DECIMAL(18,4)",
        t.tables.describe(t.bronze).column("amount").orElseThrow().type().toString());
    assertEquals(
        List.of("1 1.5", "2 2.5", "3 123456789.1234"),
        t.bronzeRows().stream()
            .map(r -> r.getInt32("id") + " " + BronzeOracle.normal(r.getDecimal("amount")))
            .toList());
    List<Row> ddl = t.events("schema_change");
    assertEquals(1, ddl.size());
    assertTrue(
        ddl.get(0).getString(FactsTable.DETAIL).contains("ALTER COLUMN amount"),
        ddl.get(0).getString(FactsTable.DETAIL));
  }

  // ---- 5. Data loss guard -----------------------------------------------------------------------

  @Test
  void c075APurgedRangeStopsTheStream() {
    String table = "purged";
    String ci = server.createCapturedTable(table, ID_V, List.of("id"), true);
    server.transaction("INSERT INTO dbo.purged (id, v) VALUES (1, 1)");
    Target t = new Target(table);
    t.run(ci, "--bootstrap=false");
    server.transaction("INSERT INTO dbo.purged (id, v) VALUES (2, 2)");
    server.transaction("INSERT INTO dbo.purged (id, v) VALUES (3, 3)");
    server.cleanup(ci, Objects.requireNonNull(server.maxLsn()));

    RuntimeException e = assertThrows(RuntimeException.class, () -> t.run(ci, "--bootstrap=false"));
    assertTrue(causeMessages(e).contains("re-snapshot is required"), causeMessages(e));
    assertEquals(1, t.bronzeRows().size());
  }

  // ---- 13. Type mapping -------------------------------------------------------------------------

  @Test
  void c212AnUnsupportedTypeFailsAtLoadPointingToColumns() {
    String table = "geo";
    String ci =
        server.createCapturedTable(
            table,
            List.of(ColumnDefinition.of("id", "int"), ColumnDefinition.of("g", "geography")),
            List.of("id"),
            true);
    Target t = new Target(table);
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> t.run(ci, "--bootstrap=false"));
    assertTrue(e.getMessage().matches("(?s).*geography.*'columns'.*"), e.getMessage());
    assertFalse(Files.exists(Path.of(t.bronze)), "nothing written");
  }
}
