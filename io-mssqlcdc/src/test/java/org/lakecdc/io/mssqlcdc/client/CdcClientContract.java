package org.lakecdc.io.mssqlcdc.client;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigDecimal;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.io.mssqlcdc.client.CdcTestDatabase.Change;
import org.lakecdc.io.mssqlcdc.fake.ColumnDefinition;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.io.mssqlcdc.schema.CapturedColumn;
import org.lakecdc.io.mssqlcdc.schema.SqlServerType;

/**
 * The behaviour every {@link CdcClient} shares, with exact values: run against the simulator always
 * ({@link FileBackedCdcClientContractTest}) and against SQL Server 2022 in a container in the
 * integration profile ({@link SqlServerCdcClientContractTest}). Each test creates its own table, so
 * one server can hold them all. Commit times are compared with the wall clock around the commit
 * (the simulator commits at the wall clock), allowing 2 seconds.
 */
abstract class CdcClientContract {
  private static final AtomicInteger TABLES = new AtomicInteger();
  private static final Duration CLOCK_SLACK = Duration.ofSeconds(2);

  @TempDir Path tempDir;
  CdcTestDatabase db;
  CdcClient client;

  /** The database under test; a shared server returns a view whose close() keeps it. */
  abstract CdcTestDatabase openDatabase(Path tempDir);

  @BeforeEach
  void open() {
    db = openDatabase(tempDir);
    client = db.clientFactory().open();
  }

  @AfterEach
  void closeAll() {
    if (client != null) {
      client.close();
    }
    if (db != null) {
      db.close();
    }
  }

  /** A table name no other test uses. */
  static String table(String prefix) {
    return prefix + "_" + TABLES.incrementAndGet();
  }

  static final List<ColumnDefinition> ORDERS =
      List.of(
          ColumnDefinition.of("order_id", "int"),
          ColumnDefinition.of("status", "varchar(20)"),
          ColumnDefinition.of("amount", "decimal(18,2)"),
          ColumnDefinition.of("updated_at", "datetime2(7)"),
          ColumnDefinition.computed("total", "int"));

  static final List<String> ORDER_COLUMNS =
      List.of("order_id", "status", "amount", "updated_at", "total");

  static Map<String, Object> order(int id, String status, String amount, String updatedAt) {
    Map<String, Object> row = new LinkedHashMap<>();
    row.put("order_id", id);
    row.put("status", status);
    row.put("amount", new BigDecimal(amount));
    row.put("updated_at", LocalDateTime.parse(updatedAt));
    return row;
  }

  static List<Object> values(Object... v) {
    return Arrays.asList(v);
  }

  private static List<ChangeRow> read(CdcClient client, ChangeQuery query) {
    List<ChangeRow> rows = new ArrayList<>();
    try (CloseableIterator<ChangeRow> it = client.readChanges(query)) {
      it.forEachRemaining(rows::add);
    }
    return rows;
  }

  private static List<List<Object>> read(CdcClient client, TableQuery query) {
    List<List<Object>> rows = new ArrayList<>();
    try (CloseableIterator<List<Object>> it = client.readTable(query)) {
      it.forEachRemaining(rows::add);
    }
    return rows;
  }

  /** The four commits of the orders history: insert 1; insert 2 and 3; update 1; delete 2. */
  private record History(
      String table, String ci, Lsn c1, Lsn c2, Lsn c3, Lsn c4, Instant before, Instant after) {}

  private History history() {
    String t = table("orders");
    String ci = db.createCapturedTable(t, ORDERS, List.of("order_id"));
    Instant before = db.now();
    Lsn c1 =
        db.commit(
            List.of(Change.insert(t, order(1, "new", "10.50", "2026-09-28T13:50:01.1234567"))));
    Lsn c2 =
        db.commit(
            List.of(
                Change.insert(t, order(2, "new", "20.00", "2026-09-28T13:51:00")),
                Change.insert(t, order(3, "new", "30.25", "2026-09-28T13:52:00"))));
    Lsn c3 = db.commit(List.of(Change.update(t, List.of(1), Map.of("status", "paid"))));
    Lsn c4 = db.commit(List.of(Change.delete(t, List.of(2))));
    return new History(t, ci, c1, c2, c3, c4, before, db.now());
  }

  @Test
  void readsEveryOperationInOrderWithTypedValues() {
    History h = history();
    assertEquals("dbo_" + h.table(), h.ci());
    List<ChangeRow> rows =
        read(
            client,
            new ChangeQuery(
                h.ci(),
                h.c1(),
                h.c4(),
                List.of("order_id", "STATUS", "amount", "updated_at", "total", "not_captured"),
                true));
    LocalDateTime t1 = LocalDateTime.parse("2026-09-28T13:50:01.1234567");
    assertEquals(6, rows.size(), rows.toString());
    assertRow(rows.get(0), h.c1(), 2, 1, values(1, "new", new BigDecimal("10.50"), t1, null, null));
    assertRow(
        rows.get(1),
        h.c2(),
        2,
        1,
        values(
            2,
            "new",
            new BigDecimal("20.00"),
            LocalDateTime.parse("2026-09-28T13:51:00"),
            null,
            null));
    assertRow(
        rows.get(2),
        h.c2(),
        2,
        2,
        values(
            3,
            "new",
            new BigDecimal("30.25"),
            LocalDateTime.parse("2026-09-28T13:52:00"),
            null,
            null));
    assertRow(rows.get(3), h.c3(), 3, 1, values(1, "new", new BigDecimal("10.50"), t1, null, null));
    assertRow(
        rows.get(4), h.c3(), 4, 1, values(1, "paid", new BigDecimal("10.50"), t1, null, null));
    assertRow(
        rows.get(5),
        h.c4(),
        1,
        1,
        values(
            2,
            "new",
            new BigDecimal("20.00"),
            LocalDateTime.parse("2026-09-28T13:51:00"),
            null,
            null));
    assertTrue(rows.get(1).seqval().isBefore(rows.get(2).seqval()), "statement order in a commit");
    assertEquals(rows.get(3).seqval(), rows.get(4).seqval(), "an update's two images share seqval");
    for (ChangeRow row : rows) {
      assertEquals(client.commit(row.startLsn()).orElseThrow().commitTime(), row.commitTime());
    }
  }

  private static void assertRow(
      ChangeRow row, Lsn start, int operation, Integer commandId, List<Object> values) {
    assertEquals(start, row.startLsn(), row.toString());
    assertEquals(operation, row.operation(), row.toString());
    assertEquals(commandId, row.commandId(), row.toString());
    assertEquals(values, row.values(), row.toString());
  }

  @Test
  void readsOnlyTheAskedRangeAndNoCommandIdWhenNotAsked() {
    History h = history();
    List<ChangeRow> rows =
        read(client, new ChangeQuery(h.ci(), h.c2(), h.c3(), List.of("order_id"), false));
    assertEquals(4, rows.size());
    for (ChangeRow row : rows) {
      assertEquals(null, row.commandId());
      assertFalse(row.startLsn().isBefore(h.c2()) || row.startLsn().isAfter(h.c3()));
    }
    assertEquals(
        List.of(List.of(2), List.of(3), List.of(1), List.of(1)),
        rows.stream().map(ChangeRow::values).toList());
    assertTrue(
        read(
                client,
                new ChangeQuery(h.ci(), h.c4().increment(), Lsn.MAX, List.of("order_id"), true))
            .isEmpty());
  }

  @Test
  void c277MapsCommitLsnsToUtcTimesAndNothingElse() {
    History h = history();
    Commit c1 = client.commit(h.c1()).orElseThrow();
    assertEquals(h.c1(), c1.lsn());
    assertFalse(c1.commitTime().isBefore(h.before().minus(CLOCK_SLACK)), c1 + " vs " + h.before());
    assertFalse(c1.commitTime().isAfter(h.after().plus(CLOCK_SLACK)), c1 + " vs " + h.after());
    assertEquals(0, c1.commitTime().getNano() % 1_000_000, "millisecond precision");
    Instant previous = Instant.MIN;
    for (Lsn c : List.of(h.c1(), h.c2(), h.c3(), h.c4())) {
      Instant t = client.commit(c).orElseThrow().commitTime();
      assertFalse(t.isBefore(previous), "commit times never go backwards in LSN order");
      previous = t;
    }
    assertEquals(Optional.empty(), client.commit(client.incrementLsn(h.c1())));
    assertEquals(Optional.empty(), client.commit(client.decrementLsn(h.c1())));
    assertEquals(
        Optional.of(client.commit(h.c2()).orElseThrow()),
        client.lastCommitAtOrBefore(client.incrementLsn(h.c2())));
    assertEquals(h.c2(), client.lastCommitAtOrBefore(h.c2()).orElseThrow().lsn());
  }

  /** The first whole second at or after {@code t}: from then on a commit at t counts. */
  private static Instant ceilToSecond(Instant t) {
    Instant floor = t.truncatedTo(ChronoUnit.SECONDS);
    return floor.equals(t) ? t : floor.plusSeconds(1);
  }

  /**
   * Commits one insert on the server clock's next second but one after {@code previous}: at least a
   * full second after the second {@code previous} counts from, so look-ups by time, which drop
   * fractions, can tell the two commits apart. The simulator's clock is moved there; SQL Server's
   * is waited for.
   */
  private Lsn commitASecondAfter(String table, int id, Instant previous)
      throws InterruptedException {
    db.awaitClock(ceilToSecond(previous).plusMillis(1_100));
    return db.commit(
        List.of(Change.insert(table, order(id, "new", "1.00", "2026-09-28T13:50:00"))));
  }

  @Test
  void c245FindsTheLastCommitAtOrBeforeAUtcInstantToTheSecond() throws InterruptedException {
    String t = table("asof");
    db.createCapturedTable(t, ORDERS, List.of("order_id"));
    Lsn z = db.commit(List.of(Change.insert(t, order(1, "new", "1.00", "2026-09-28T13:50:00"))));
    Instant tz = client.commit(z).orElseThrow().commitTime();
    Lsn a = commitASecondAfter(t, 2, tz);
    Instant ta = client.commit(a).orElseThrow().commitTime();
    Lsn b = commitASecondAfter(t, 3, ta);
    Instant tb = client.commit(b).orElseThrow().commitTime();
    Instant aCounts = ceilToSecond(ta);
    assertFalse(tz.isAfter(ta.truncatedTo(ChronoUnit.SECONDS)), "z and a share no second");
    assertFalse(tb.isBefore(aCounts.plusSeconds(1)), "b is a second after a: " + ta + ", " + tb);

    // Before the first commit of the mapping.
    assertEquals(
        Optional.empty(), client.lastCommitLsnAtOrBefore(Instant.parse("2000-01-01T00:00:00Z")));
    // At a commit's second: a counts from the whole second at or after its commit time ...
    assertEquals(Optional.of(a), client.lastCommitLsnAtOrBefore(aCounts));
    // ... and not within its own second before it, since fractions are dropped (unless a
    // committed on a whole second).
    assertEquals(Optional.of(ta.equals(aCounts) ? a : z), client.lastCommitLsnAtOrBefore(ta));
    // Between commits: the earlier one.
    assertEquals(Optional.of(a), client.lastCommitLsnAtOrBefore(aCounts.plusMillis(999)));
    assertEquals(Optional.of(b), client.lastCommitLsnAtOrBefore(ceilToSecond(tb)));
    assertThrows(
        IllegalArgumentException.class,
        () -> client.lastCommitLsnAtOrBefore(Instant.parse("1700-01-01T00:00:00Z")));
  }

  @Test
  void countsCommitsOfTheMappingForBatchEnds() {
    History h = history();
    Lsn before = client.decrementLsn(h.c1());
    assertEquals(h.c1(), client.nthCommitAfter(before, 1).orElseThrow().lsn());
    assertEquals(h.c3(), client.nthCommitAfter(before, 3).orElseThrow().lsn());
    assertEquals(h.c4(), client.nthCommitAfter(h.c1(), 3).orElseThrow().lsn());
    assertEquals(client.commit(h.c3()), client.nthCommitAfter(before, 3));
    assertThrows(IllegalArgumentException.class, () -> client.nthCommitAfter(before, 0));
    Lsn max = client.maxLsn().orElseThrow();
    assertFalse(max.isBefore(h.c4()));
  }

  @Test
  void stepsLsnsOnTheServer() {
    History h = history();
    Lsn next = client.incrementLsn(h.c1());
    assertTrue(next.isAfter(h.c1()));
    assertEquals(h.c1(), client.decrementLsn(next));
    assertTrue(client.decrementLsn(h.c1()).isBefore(h.c1()));
    assertEquals(Lsn.ZERO, client.decrementLsn(Lsn.ZERO));
  }

  @Test
  void describesCaptureInstancesAndTheirColumns() {
    History h = history();
    List<CaptureInstance> instances = client.captureInstances(h.ci());
    assertEquals(1, instances.size());
    CaptureInstance ci = instances.get(0);
    assertEquals(h.ci(), ci.name());
    assertEquals("dbo", ci.sourceSchema());
    assertEquals(h.table(), ci.sourceTable());
    assertEquals(List.of("order_id"), ci.keyColumns());
    assertFalse(ci.startLsn().orElseThrow().isAfter(h.c1()));
    assertTrue(ci.createDate().isPresent());
    assertEquals(instances, client.captureInstances(h.ci().toUpperCase(java.util.Locale.ROOT)));
    assertEquals(
        List.of(
            new CapturedColumn("order_id", 1, SqlServerType.of("int"), false),
            new CapturedColumn("status", 2, SqlServerType.parse("varchar(20)"), false),
            new CapturedColumn("amount", 3, SqlServerType.of("decimal", 18, 2), false),
            new CapturedColumn("updated_at", 4, SqlServerType.parse("datetime2(7)"), false),
            new CapturedColumn("total", 5, SqlServerType.of("int"), true)),
        client.capturedColumns(h.ci()));
  }

  @Test
  void refusesUnknownCaptureInstancesListingTheExistingOnes() {
    History h = history();
    for (Runnable call :
        List.<Runnable>of(
            () -> client.minLsn("dbo_nope"),
            () -> client.captureInstances("dbo_nope"),
            () -> client.capturedColumns("dbo_nope"),
            () -> client.ddlHistory("dbo_nope", Lsn.ZERO, Lsn.MAX),
            () -> client.splitPoints("dbo_nope", Lsn.ZERO, Lsn.MAX, 2),
            () -> read(client, new ChangeQuery("dbo_nope", Lsn.ZERO, Lsn.MAX, List.of(), true)))) {
      CaptureInstanceNotFoundError e = assertThrows(CaptureInstanceNotFoundError.class, call::run);
      assertEquals("dbo_nope", e.captureInstance());
      assertTrue(e.existing().contains(h.ci()), e.existing().toString());
    }
    assertThrows(IllegalArgumentException.class, () -> client.minLsn("dbo_x]; DROP TABLE y --"));
  }

  @Test
  void movesTheLowWatermarkAtCleanupAndReadsWhatIsLeft() {
    History h = history();
    assertFalse(client.minLsn(h.ci()).isAfter(h.c1()));
    db.cleanup(h.ci(), h.c3());
    assertEquals(h.c3(), client.minLsn(h.ci()));
    List<ChangeRow> rows =
        read(client, new ChangeQuery(h.ci(), h.c1(), h.c4(), List.of("order_id"), true));
    assertEquals(List.of(h.c3(), h.c3(), h.c4()), rows.stream().map(ChangeRow::startLsn).toList());
  }

  @Test
  void listsDdlInsideTheRangeWithTheCommitTimeBeforeIt() {
    History h = history();
    String command = "ALTER TABLE dbo." + h.table() + " ADD note varchar(20)";
    db.ddl(h.table(), command);
    List<DdlChange> ddl = client.ddlHistory(h.ci(), h.c4(), Lsn.MAX);
    assertEquals(1, ddl.size(), ddl.toString());
    DdlChange change = ddl.get(0);
    assertEquals(h.ci(), change.captureInstance());
    assertEquals(command, change.command().strip());
    assertTrue(change.lsn().isAfter(h.c4()));
    assertEquals(
        client.lastCommitAtOrBefore(change.lsn()).map(Commit::commitTime), change.commitTime());
    assertTrue(client.ddlHistory(h.ci(), change.lsn(), Lsn.MAX).isEmpty());
    assertTrue(client.ddlHistory(h.ci(), h.c1(), h.c4()).isEmpty());
    assertEquals(ddl, client.ddlHistory(h.ci(), client.decrementLsn(change.lsn()), change.lsn()));
  }

  @Test
  void c017TilesTheChangeTableByRowsNotCommits() {
    String t = table("tiles");
    String ci = db.createCapturedTable(t, ORDERS, List.of("order_id"));
    List<Lsn> commits = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      commits.add(
          db.commit(List.of(Change.insert(t, order(i, "new", "1.00", "2026-09-28T13:50:00")))));
    }
    List<Change> big = new ArrayList<>();
    for (int i = 100; i < 108; i++) {
      big.add(Change.insert(t, order(i, "new", "1.00", "2026-09-28T13:50:00")));
    }
    Lsn c9 = db.commit(big);
    Lsn c8 = commits.get(7);
    assertEquals(
        List.of(
            new SplitPoint(c8, client.incrementLsn(c8), 8),
            new SplitPoint(c9, client.incrementLsn(c9), 8)),
        client.splitPoints(ci, commits.get(0), c9, 2));
    assertEquals(
        List.of(new SplitPoint(c9, client.incrementLsn(c9), 16)),
        client.splitPoints(ci, commits.get(0), c9, 1));
    // One commit of 8 rows in 4 tiles: every tile ends at that commit (it stays whole).
    SplitPoint quarter = new SplitPoint(c9, client.incrementLsn(c9), 2);
    assertEquals(List.of(quarter, quarter, quarter, quarter), client.splitPoints(ci, c9, c9, 4));
    assertTrue(client.splitPoints(ci, client.incrementLsn(c9), Lsn.MAX, 2).isEmpty());
  }

  @Test
  void readsKeyRangesOfTheSourceTableAndTilesItsKeys() {
    String t = table("snap");
    db.createCapturedTable(t, ORDERS, List.of("order_id"));
    List<Change> rows = new ArrayList<>();
    for (int i = 1; i <= 10; i++) {
      rows.add(Change.insert(t, order(i, "s" + i, i + ".00", "2026-09-28T13:50:00")));
    }
    db.commit(rows);
    for (IsolationLevel isolation : IsolationLevel.values()) {
      assertEquals(
          List.of(List.of(5), List.of(8)),
          client.keyTiles("dbo", t, List.of("order_id"), 3, isolation));
      assertEquals(List.of(), client.keyTiles("dbo", t, List.of("order_id"), 1, isolation));
      assertEquals(
          List.of(values(5, "s5", null), values(6, "s6", null), values(7, "s7", null)),
          read(client, range(t, 5, 8, isolation)));
    }
    assertEquals(
        List.of(values(1, "s1", null), values(2, "s2", null)),
        read(client, range(t, null, 3, IsolationLevel.READ_COMMITTED)));
    assertEquals(
        List.of(values(9, "s9", null), values(10, "s10", null)),
        read(client, range(t, 9, null, IsolationLevel.READ_COMMITTED)));
    assertEquals(10, read(client, range(t, null, null, IsolationLevel.READ_COMMITTED)).size());
    assertTrue(read(client, range(t, 4, 4, IsolationLevel.READ_COMMITTED)).isEmpty());
    assertThrows(
        CdcException.class,
        () ->
            client.keyTiles(
                "dbo", t + "_nope", List.of("order_id"), 2, IsolationLevel.READ_COMMITTED));
  }

  /**
   * Character keys compare under the column's collation on both servers (docs/behaviour.md §6.3):
   * under {@code SQL_Latin1_General_CP1_CI_AS} {@code 'n' = 'N'} (distinct rows by the second key
   * column) and trailing spaces never count, in order and in bounds; under {@code
   * Latin1_General_BIN2} upper case sorts first. Values come back as stored.
   */
  @Test
  void c112ComparesCharacterKeysUnderTheColumnsCollation() {
    String t = table("coll");
    db.createCapturedTable(
        t,
        List.of(
            ColumnDefinition.of("name", "varchar(5)").collate("SQL_Latin1_General_CP1_CI_AS"),
            ColumnDefinition.of("n", "int"),
            ColumnDefinition.of("tag", "varchar(5)").collate("Latin1_General_BIN2")),
        List.of("name", "n"));
    String[][] rows = {{"n", "1", "c"}, {"N", "2", "B"}, {"b ", "1", "a"}, {"B", "2", "A"}};
    List<Change> inserts = new ArrayList<>();
    for (String[] r : rows) {
      inserts.add(Change.insert(t, Map.of("name", r[0], "n", Integer.parseInt(r[1]), "tag", r[2])));
    }
    inserts.add(Change.insert(t, Map.of("name", "a", "n", 3)));
    db.commit(inserts);
    List<String> key = List.of("name", "n");
    IsolationLevel rc = IsolationLevel.READ_COMMITTED;
    assertEquals(
        List.of(values("a", 3), values("b ", 1), values("B", 2), values("n", 1), values("N", 2)),
        read(client, new TableQuery("dbo", t, key, key, Optional.empty(), Optional.empty(), rc)));
    assertEquals(
        List.of(values("b ", 1), values("B", 2)),
        read(
            client,
            new TableQuery(
                "dbo",
                t,
                key,
                key,
                Optional.of(values("B  ", 1)),
                Optional.of(values("N", 1)),
                rc)));
    assertEquals(
        List.of(values("N", 2)),
        read(
            client,
            new TableQuery(
                "dbo", t, key, key, Optional.of(values("n ", 2)), Optional.empty(), rc)));
    assertEquals(List.of(values("n", 1)), client.keyTiles("dbo", t, key, 2, rc));
    List<String> tag = List.of("tag");
    assertEquals(
        List.of(values((Object) null), values("A"), values("B"), values("a"), values("c")),
        read(client, new TableQuery("dbo", t, tag, tag, Optional.empty(), Optional.empty(), rc)));
  }

  /**
   * Chunk planning's key queries (docs/scenarios.md C117): a composite key {@code (a = n % 4, b =
   * 'b' + n)} over 30 rows, and an int column {@code s = n - 15} for slices.
   */
  @Test
  void c117SeeksCountsAndEstimatesKeysForChunkPlans() {
    String t = table("chunks");
    String ci =
        db.createCapturedTable(
            t,
            List.of(
                ColumnDefinition.of("a", "int"),
                ColumnDefinition.of("b", "varchar(10)"),
                ColumnDefinition.of("s", "int")),
            List.of("a", "b"));
    List<Change> rows = new ArrayList<>();
    List<List<Object>> keys = new ArrayList<>();
    for (int n = 0; n < 30; n++) {
      Map<String, Object> row = new LinkedHashMap<>();
      row.put("a", n % 4);
      row.put("b", "b" + n);
      row.put("s", n - 15);
      rows.add(Change.insert(t, row));
      keys.add(values(n % 4, "b" + n));
    }
    db.commit(rows);
    keys.sort(
        java.util.Comparator.<List<Object>, Integer>comparing(k -> (Integer) k.get(0))
            .thenComparing(k -> (String) k.get(1)));
    List<String> key = List.of("a", "b");
    IsolationLevel rc = IsolationLevel.READ_COMMITTED;
    assertEquals(30, client.rowEstimate("dbo", t));
    assertEquals(Optional.of(keys.get(29)), client.keyMax("dbo", t, key, rc));
    assertEquals(Optional.of(values(0, 3)), client.keyRange("dbo", t, "a", rc));
    assertEquals(Optional.of(values("b0", "b9")), client.keyRange("dbo", t, "b", rc));
    for (IsolationLevel isolation : IsolationLevel.values()) {
      assertEquals(
          Optional.of(keys.get(10)),
          client.keyBound("dbo", t, key, Optional.empty(), Optional.empty(), 10, isolation));
    }
    assertEquals(
        Optional.empty(),
        client.keyBound("dbo", t, key, Optional.of(keys.get(10)), Optional.empty(), 25, rc));
    assertEquals(
        Optional.of(keys.get(19)),
        client.keyBound(
            "dbo", t, key, Optional.of(keys.get(10)), Optional.of(keys.get(20)), 9, rc));
    assertEquals(
        Optional.empty(),
        client.keyBound(
            "dbo", t, key, Optional.of(keys.get(10)), Optional.of(keys.get(20)), 10, rc));
    assertEquals(
        Optional.of(keys.get(0)),
        client.keyBound("dbo", t, key, Optional.empty(), Optional.of(keys.get(1)), 0, rc));
    assertEquals(
        new java.util.TreeMap<>(Map.of(0L, 16L, 1L, 14L)),
        client.keySlices("dbo", t, "a", 2, 0, 3, rc));
    assertEquals(
        new java.util.TreeMap<>(Map.of(-3L, 2L, -2L, 4L, -1L, 4L, 0L, 4L, 1L, 4L, 2L, 3L)),
        client.keySlices("dbo", t, "s", 4, -10, 10, rc),
        "negative keys are floored");
    assertEquals(
        new java.util.TreeMap<>(Map.of(-2L, 5L, -1L, 10L, 0L, 10L, 1L, 5L)),
        client.keySlices("dbo", t, "s", 10, Long.MIN_VALUE, Long.MAX_VALUE, rc));
    org.lakecdc.io.mssqlcdc.chunk.ChunkPlanner planner =
        org.lakecdc.io.mssqlcdc.chunk.ChunkPlanner.forInstance(client, ci, rc);
    org.lakecdc.io.mssqlcdc.chunk.SnapshotExtent extent = planner.extent();
    assertEquals(org.lakecdc.io.mssqlcdc.chunk.SnapshotExtent.ofKeyset(keys.get(29)), extent);
    assertEquals(
        List.of(
            new org.lakecdc.io.mssqlcdc.chunk.Chunk(0, null, keys.get(8)),
            new org.lakecdc.io.mssqlcdc.chunk.Chunk(1, keys.get(8), keys.get(16)),
            new org.lakecdc.io.mssqlcdc.chunk.Chunk(2, keys.get(16), keys.get(24)),
            new org.lakecdc.io.mssqlcdc.chunk.Chunk(3, keys.get(24), null)),
        planner.plan(extent, 8));
    assertThrows(CdcException.class, () -> client.keyMax("dbo", t, List.of("nope"), rc));
    assertThrows(CdcException.class, () -> client.rowEstimate("dbo", t + "_nope"));
  }

  /**
   * Reconcile's tier 1 on the server (docs/scenarios.md C201): an int column {@code n = id - 25}
   * (ids 0..49, so -25..24, plus one row with a NULL n) in fine buckets of 10 floors negative keys
   * (-25..-21 are bucket -3); 50 dates from 1969-12-02 in buckets of 7 days are numbered from
   * 1970-01-01 (1969-12-02 is day -30, bucket -5); the whole table counts 51 rows.
   */
  @Test
  void c201CountsKeyBucketsWithFlooredOrdinals() {
    String t = table("buckets");
    db.createCapturedTable(
        t,
        List.of(
            ColumnDefinition.of("id", "int"),
            ColumnDefinition.of("n", "int"),
            ColumnDefinition.of("d", "date")),
        List.of("id"));
    List<Change> rows = new ArrayList<>();
    for (int id = 0; id < 50; id++) {
      Map<String, Object> row = new LinkedHashMap<>();
      row.put("id", id);
      row.put("n", id - 25);
      row.put("d", LocalDate.of(1969, 12, 2).plusDays(id));
      rows.add(Change.insert(t, row));
    }
    Map<String, Object> nulls = new LinkedHashMap<>();
    nulls.put("id", 50);
    nulls.put("n", null);
    nulls.put("d", null);
    rows.add(Change.insert(t, nulls));
    db.commit(rows);
    IsolationLevel rc = IsolationLevel.READ_COMMITTED;
    java.util.TreeMap<Long, KeyBucket> ints = new java.util.TreeMap<>();
    ints.put(-3L, bucket(5, -115));
    ints.put(-2L, bucket(10, -155));
    ints.put(-1L, bucket(10, -55));
    ints.put(0L, bucket(10, 45));
    ints.put(1L, bucket(10, 145));
    ints.put(2L, bucket(5, 110));
    for (IsolationLevel isolation : IsolationLevel.values()) {
      assertEquals(ints, client.keyBuckets("dbo", t, "n", 10, isolation));
    }
    java.util.TreeMap<Long, KeyBucket> dates = new java.util.TreeMap<>();
    dates.put(-5L, bucket(2, -59));
    dates.put(-4L, bucket(7, -175));
    dates.put(-3L, bucket(7, -126));
    dates.put(-2L, bucket(7, -77));
    dates.put(-1L, bucket(7, -28));
    dates.put(0L, bucket(7, 21));
    dates.put(1L, bucket(7, 70));
    dates.put(2L, bucket(6, 99));
    assertEquals(dates, client.keyBuckets("dbo", t, "d", 7, rc));
    assertEquals(
        new java.util.TreeMap<>(Map.of(0L, bucket(51, 1275))),
        client.keyBuckets("dbo", t, "id", 100, rc),
        "the NULL-free key (ids 0..50): one bucket of every row");
    assertEquals(51, client.rowCount("dbo", t, rc));
    assertEquals(51, client.rowCount("dbo", t, IsolationLevel.SNAPSHOT));
    assertThrows(IllegalArgumentException.class, () -> client.keyBuckets("dbo", t, "n", 0, rc));
    assertThrows(CdcException.class, () -> client.keyBuckets("dbo", t, "nope", 10, rc));
    assertThrows(CdcException.class, () -> client.rowCount("dbo", t + "_nope", rc));
  }

  private static KeyBucket bucket(long rows, long keySum) {
    return new KeyBucket(rows, java.math.BigInteger.valueOf(keySum));
  }

  private static TableQuery range(String t, Integer lo, Integer hi, IsolationLevel isolation) {
    return new TableQuery(
        "dbo",
        t,
        List.of("order_id", "status", "total"),
        List.of("order_id"),
        Optional.ofNullable(lo).map(v -> List.<Object>of(v)),
        Optional.ofNullable(hi).map(v -> List.<Object>of(v)),
        isolation);
  }

  static final List<ColumnDefinition> TYPES =
      List.of(
          ColumnDefinition.of("id", "int"),
          ColumnDefinition.of("b", "bit"),
          ColumnDefinition.of("ti", "tinyint"),
          ColumnDefinition.of("si", "smallint"),
          ColumnDefinition.of("bi", "bigint"),
          ColumnDefinition.of("r", "real"),
          ColumnDefinition.of("f", "float"),
          ColumnDefinition.of("d", "decimal(38,10)"),
          ColumnDefinition.of("m", "money"),
          ColumnDefinition.of("dt", "date"),
          ColumnDefinition.of("dtm", "datetime"),
          ColumnDefinition.of("dt2", "datetime2(7)"),
          ColumnDefinition.of("sdt", "smalldatetime"),
          ColumnDefinition.of("dto", "datetimeoffset(7)"),
          ColumnDefinition.of("tm", "time(7)"),
          ColumnDefinition.of("s", "varchar(10)"),
          ColumnDefinition.of("ns", "nvarchar(10)"),
          ColumnDefinition.of("u", "uniqueidentifier"),
          ColumnDefinition.of("vb", "varbinary(8)"),
          ColumnDefinition.of("fb", "binary(4)"));

  @Test
  void c211MapsEveryTypeToItsJavaValueWithoutTheJvmZone() {
    String t = table("types");
    String ci = db.createCapturedTable(t, TYPES, List.of("id"));
    Map<String, Object> row = new LinkedHashMap<>();
    row.put("id", 1);
    row.put("b", true);
    row.put("ti", (short) 255);
    row.put("si", (short) -2);
    row.put("bi", 1L << 40);
    row.put("r", 1.5f);
    row.put("f", 2.25d);
    row.put("d", new BigDecimal("12345678901234567890.1234567890"));
    row.put("m", new BigDecimal("10.5000"));
    row.put("dt", LocalDate.parse("2018-11-04"));
    row.put("dtm", LocalDateTime.parse("2018-11-04T00:30:01.997"));
    row.put("dt2", LocalDateTime.parse("2018-11-04T00:30:01.1234567"));
    row.put("sdt", LocalDateTime.parse("2018-11-04T00:30"));
    row.put("dto", OffsetDateTime.parse("2026-09-28T13:50:01.1234567-03:00"));
    row.put("tm", java.time.LocalTime.parse("13:50:01.1234567"));
    row.put("s", "abc");
    row.put("ns", "Olá");
    row.put("u", "6f9619ff-8b86-d011-b42d-00c04fc964ff");
    row.put("vb", new byte[] {0, -1, 16});
    row.put("fb", new byte[] {1, 2});
    Lsn c = db.commit(List.of(Change.insert(t, row)));
    List<String> names = TYPES.stream().map(ColumnDefinition::name).toList();
    List<Object> expected =
        values(
            1,
            true,
            (short) 255,
            (short) -2,
            1L << 40,
            1.5f,
            2.25d,
            new BigDecimal("12345678901234567890.1234567890"),
            new BigDecimal("10.5000"),
            LocalDate.parse("2018-11-04"),
            LocalDateTime.parse("2018-11-04T00:30:01.997"),
            LocalDateTime.parse("2018-11-04T00:30:01.1234567"),
            LocalDateTime.parse("2018-11-04T00:30"),
            Instant.parse("2026-09-28T16:50:01.1234567Z"),
            "13:50:01.1234567",
            "abc",
            "Olá",
            "6F9619FF-8B86-D011-B42D-00C04FC964FF");
    List<ChangeRow> changes = read(client, new ChangeQuery(ci, c, c, names, true));
    assertEquals(1, changes.size());
    assertTypedRow(expected, changes.get(0).values());
    List<List<Object>> table =
        read(
            client,
            new TableQuery(
                "dbo",
                t,
                names,
                List.of("id"),
                Optional.empty(),
                Optional.empty(),
                IsolationLevel.READ_COMMITTED));
    assertEquals(1, table.size());
    assertTypedRow(expected, table.get(0));
  }

  private static void assertTypedRow(List<Object> expected, List<Object> actual) {
    for (int i = 0; i < expected.size(); i++) {
      assertEquals(expected.get(i), actual.get(i), "column " + i);
      assertEquals(expected.get(i).getClass(), actual.get(i).getClass(), "column " + i);
    }
    assertArrayEquals(new byte[] {0, -1, 16}, (byte[]) actual.get(expected.size()));
    assertArrayEquals(new byte[] {1, 2, 0, 0}, (byte[]) actual.get(expected.size() + 1));
  }
}
