package org.lakecdc.io.mssqlcdc.fake;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.CI;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.ORDERS;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.T0;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.insertOrder;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.minutes;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.nio.file.Path;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.io.mssqlcdc.client.CdcClient;
import org.lakecdc.io.mssqlcdc.client.CdcClientFactory;
import org.lakecdc.io.mssqlcdc.client.CdcException;
import org.lakecdc.io.mssqlcdc.client.CloseableIterator;
import org.lakecdc.io.mssqlcdc.client.Commit;
import org.lakecdc.io.mssqlcdc.client.IsolationLevel;
import org.lakecdc.io.mssqlcdc.client.SplitPoint;
import org.lakecdc.io.mssqlcdc.client.TableQuery;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;

/**
 * Reader operations over the timeline, split points and source tables (docs/scenarios.md, section
 * "13, 15, 18, 19").
 */
class ReaderTest {
  @TempDir Path dir;

  /**
   * The simulator's current time: clock_utc (the last event written) run on at the machine's pace
   * since server.json was written, never before clock_utc; none without clock_utc.
   */
  @Test
  void currentTimeRunsOnFromTheLastEventSinceServerJsonWasWritten() throws Exception {
    Path server = dir.resolve("server.json");
    java.nio.file.Files.writeString(
        server, "{\"format_version\":1,\"clock_utc\":\"2026-11-01T08:15:27Z\"}\n");
    java.nio.file.Files.setLastModifiedTime(
        server, java.nio.file.attribute.FileTime.from(Instant.parse("2026-12-01T11:00:00Z")));
    try (CdcClient client =
        new FileBackedCdcClient(
            dir, java.time.Clock.fixed(Instant.parse("2026-12-01T11:00:42Z"), ZoneOffset.UTC))) {
      assertEquals(Optional.of(Instant.parse("2026-11-01T08:16:09Z")), client.currentTime());
    }
    try (CdcClient client =
        new FileBackedCdcClient(
            dir, java.time.Clock.fixed(Instant.parse("2026-12-01T10:59:00Z"), ZoneOffset.UTC))) {
      assertEquals(
          Optional.of(Instant.parse("2026-11-01T08:15:27Z")),
          client.currentTime(),
          "a machine clock behind the file's time: the clock stands still");
    }
    java.nio.file.Files.writeString(server, "{\"format_version\":1}\n");
    try (CdcClient client = new FileBackedCdcClient(dir)) {
      assertEquals(Optional.empty(), client.currentTime());
    }
  }

  @Test
  void maxLsnIsEmptyBeforeCaptureWritesAnything() {
    FakeScenarios.orders(dir);
    try (CdcClient client = new FileBackedCdcClient(dir)) {
      assertEquals(Optional.empty(), client.maxLsn());
    }
  }

  @Test
  void commitMapsOnlyAnEntrysOwnLsn() {
    FakeSqlServer db = FakeScenarios.orders(dir);
    Lsn l0 = insertOrder(db, T0, 1, "new", "1.00");
    Lsn ddl = db.dropColumn(ORDERS, "status");
    try (CdcClient client = db.openClient()) {
      assertEquals(
          Optional.of(new Commit(l0, Instant.parse("2026-09-28T13:50:00.000Z"))),
          client.commit(l0));
      assertEquals(Optional.empty(), client.commit(l0.increment()));
      assertEquals(Optional.empty(), client.commit(l0.decrement()));
      assertEquals(Optional.empty(), client.commit(ddl));
    }
  }

  @Test
  void incrementAndDecrementAreNeighboursAndDecrementClampsAtZero() {
    FakeScenarios.orders(dir);
    Lsn x = Lsn.parse("0x0000002A0000010000FF");
    try (CdcClient client = new FileBackedCdcClient(dir)) {
      assertEquals(Lsn.parse("0x0000002A000001000100"), client.incrementLsn(x));
      assertTrue(client.incrementLsn(x).isAfter(x));
      assertEquals(x, client.decrementLsn(client.incrementLsn(x)));
      assertEquals(Lsn.ZERO, client.decrementLsn(Lsn.ZERO));
    }
  }

  @Test
  void nthCommitAfterCountsIdleEntriesAndStopsAtTheLast() {
    FakeSqlServer db = FakeScenarios.orders(dir);
    Lsn l0 = insertOrder(db, T0, 0, "new", "1.00");
    Lsn idle = db.idle(minutes(1));
    Lsn l2 = insertOrder(db, minutes(2), 2, "new", "1.00");
    try (CdcClient client = db.openClient()) {
      assertEquals(l0, client.nthCommitAfter(l0.decrement(), 1).orElseThrow().lsn());
      assertEquals(idle, client.nthCommitAfter(l0, 1).orElseThrow().lsn());
      assertEquals(l2, client.nthCommitAfter(l0, 2).orElseThrow().lsn());
      assertEquals(l2, client.nthCommitAfter(l0, 5).orElseThrow().lsn());
      assertEquals(Optional.empty(), client.nthCommitAfter(l2, 1));
      assertEquals(minutes(1), client.nthCommitAfter(l0, 1).orElseThrow().commitTime());
    }
  }

  @Test
  void nthCommitAfterNeedsAPositiveCount() {
    FakeScenarios.orders(dir);
    try (CdcClient client = new FileBackedCdcClient(dir)) {
      IllegalArgumentException e =
          assertThrows(IllegalArgumentException.class, () -> client.nthCommitAfter(Lsn.ZERO, 0));
      assertEquals("n must be at least 1, got 0", e.getMessage());
    }
  }

  @Test
  void lastCommitAtOrBeforeTakesTheLastEntryNotAfterTheLsn() {
    FakeSqlServer db = FakeScenarios.orders(dir);
    Lsn l0 = insertOrder(db, T0, 0, "new", "1.00");
    Lsn ddl = db.dropColumn(ORDERS, "status");
    Lsn l2 = db.idle(minutes(2));
    try (CdcClient client = db.openClient()) {
      assertEquals(Optional.empty(), client.lastCommitAtOrBefore(l0.decrement()));
      assertEquals(l0, client.lastCommitAtOrBefore(l0).orElseThrow().lsn());
      assertEquals(l0, client.lastCommitAtOrBefore(ddl).orElseThrow().lsn());
      assertEquals(l2, client.lastCommitAtOrBefore(Lsn.MAX).orElseThrow().lsn());
    }
  }

  /** Ten rows in commits of 1, 2, 3 and 4 rows: l0 (1), l1 (2), l2 (3), l3 (4). */
  private List<Lsn> unevenCommits(FakeSqlServer db) {
    List<Lsn> out = new ArrayList<>();
    int id = 0;
    for (int commit = 0; commit < 4; commit++) {
      FakeSqlServer.Transaction tx = db.transaction(minutes(commit));
      for (int row = 0; row <= commit; row++) {
        tx.insert(ORDERS, FakeScenarios.order(id++, "new", "1.00"));
      }
      out.add(tx.commit());
    }
    return out;
  }

  @Test
  void splitPointsTileRowsWithTheFirstTilesOneRowLarger() {
    FakeSqlServer db = FakeScenarios.orders(dir);
    List<Lsn> l = unevenCommits(db);
    try (CdcClient client = db.openClient()) {
      // NTILE(3) of 10 rows: 4, 3, 3. Rows by LSN: l0 l1 l1 l2 | l2 l2 l3 | l3 l3 l3.
      assertEquals(
          List.of(
              new SplitPoint(l.get(2), l.get(2).increment(), 4),
              new SplitPoint(l.get(3), l.get(3).increment(), 3),
              new SplitPoint(l.get(3), l.get(3).increment(), 3)),
          client.splitPoints(CI, Lsn.ZERO, Lsn.MAX, 3));
    }
  }

  @Test
  void splitPointsGiveOneTilePerRowWhenRowsAreFewerThanN() {
    FakeSqlServer db = FakeScenarios.orders(dir);
    List<Lsn> l = unevenCommits(db);
    try (CdcClient client = db.openClient()) {
      List<SplitPoint> tiles = client.splitPoints(CI, l.get(0), l.get(1), 10);
      assertEquals(
          List.of(
              new SplitPoint(l.get(0), l.get(0).increment(), 1),
              new SplitPoint(l.get(1), l.get(1).increment(), 1),
              new SplitPoint(l.get(1), l.get(1).increment(), 1)),
          tiles);
    }
  }

  @Test
  void splitPointsClampNBelowOneToOneTile() {
    FakeSqlServer db = FakeScenarios.orders(dir);
    List<Lsn> l = unevenCommits(db);
    try (CdcClient client = db.openClient()) {
      assertEquals(
          List.of(new SplitPoint(l.get(3), l.get(3).increment(), 10)),
          client.splitPoints(CI, Lsn.ZERO, Lsn.MAX, 0));
    }
  }

  @Test
  void splitPointsOfAnEmptyRangeAreEmpty() {
    FakeSqlServer db = FakeScenarios.orders(dir);
    List<Lsn> l = unevenCommits(db);
    try (CdcClient client = db.openClient()) {
      assertEquals(List.of(), client.splitPoints(CI, l.get(3).increment(), Lsn.MAX, 4));
    }
  }

  private FakeSqlServer regions() {
    FakeSqlServer db = FakeSqlServer.open(dir);
    db.createTable(
        "dbo.sales",
        List.of(
            ColumnDefinition.of("region", "varchar(10)"),
            ColumnDefinition.of("id", "int"),
            ColumnDefinition.of("total", "decimal(10,2)")),
        List.of("region", "id"));
    List<Map<String, Object>> rows = new ArrayList<>();
    Object[][] keys = {{"b", 1}, {null, 2}, {"a", 2}, {"a", 1}, {"b", null}};
    for (Object[] k : keys) {
      Map<String, Object> row = new HashMap<>();
      row.put("region", k[0]);
      row.put("id", k[1]);
      row.put("total", "1.00");
      rows.add(row);
    }
    db.loadRows("dbo.sales", rows);
    return db;
  }

  private List<List<Object>> read(TableQuery query) {
    List<List<Object>> out = new ArrayList<>();
    try (CdcClient client = new FileBackedCdcClient(dir);
        CloseableIterator<List<Object>> it = client.readTable(query)) {
      it.forEachRemaining(out::add);
    }
    return out;
  }

  @Test
  void readTableReturnsRowsInKeyOrderWithNullsFirst() {
    regions();
    assertEquals(
        List.of(
            Arrays.asList(null, 2),
            Arrays.asList("a", 1),
            Arrays.asList("a", 2),
            Arrays.asList("b", null),
            Arrays.asList("b", 1)),
        read(
            new TableQuery(
                "dbo",
                "sales",
                List.of("region", "id"),
                List.of("region", "id"),
                Optional.empty(),
                Optional.empty(),
                IsolationLevel.READ_COMMITTED)));
  }

  @Test
  void readTableRangeIsLowerInclusiveUpperExclusive() {
    regions();
    assertEquals(
        List.of(Arrays.asList("a", 2), Arrays.asList("b", null)),
        read(
            new TableQuery(
                "DBO",
                "Sales",
                List.of("region", "id"),
                List.of("region", "id"),
                Optional.of(List.of("a", 2)),
                Optional.of(List.of("b", 1)),
                IsolationLevel.SNAPSHOT)));
  }

  @Test
  void readTableReadsAMissingColumnAsNull() {
    regions();
    assertEquals(
        List.of(Arrays.asList(null, new java.math.BigDecimal("1.00"))),
        read(
            new TableQuery(
                "dbo",
                "sales",
                List.of("gone", "total"),
                List.of("region", "id"),
                Optional.empty(),
                Optional.of(List.of("a", 1)),
                IsolationLevel.READ_COMMITTED)));
  }

  @Test
  void readTableOverOtherColumnsSortsThem() {
    regions();
    assertEquals(
        List.of(Arrays.asList((Object) null), List.of(1), List.of(1), List.of(2), List.of(2)),
        read(
            new TableQuery(
                "dbo",
                "sales",
                List.of("id"),
                List.of("id"),
                Optional.empty(),
                Optional.empty(),
                IsolationLevel.READ_COMMITTED)));
  }

  @Test
  void readTableOfAnUnknownTableFails() {
    regions();
    CdcException e =
        assertThrows(
            CdcException.class,
            () ->
                read(
                    new TableQuery(
                        "dbo",
                        "nope",
                        List.of("id"),
                        List.of("id"),
                        Optional.empty(),
                        Optional.empty(),
                        IsolationLevel.READ_COMMITTED)));
    assertTrue(e.getMessage().startsWith("Invalid object name 'dbo.nope'"), e.getMessage());
  }

  @Test
  void readTableSeesTheTableAfterItsChanges() {
    FakeSqlServer db = FakeScenarios.orders(dir);
    insertOrder(db, T0, 1, "new", "1.00");
    insertOrder(db, minutes(1), 2, "new", "2.00");
    db.transaction(minutes(2))
        .update(ORDERS, List.of(1), Map.of("status", "paid"))
        .delete(ORDERS, List.of(2))
        .commit();
    assertEquals(
        List.of(List.of(1, "paid")),
        read(
            new TableQuery(
                "dbo",
                "orders",
                List.of("order_id", "status"),
                List.of("order_id"),
                Optional.empty(),
                Optional.empty(),
                IsolationLevel.READ_COMMITTED)));
  }

  @Test
  void aClosedClientRefusesCalls() {
    FakeScenarios.orders(dir);
    CdcClient client = new FileBackedCdcClient(dir);
    client.close();
    client.close();
    IllegalStateException e = assertThrows(IllegalStateException.class, client::maxLsn);
    assertEquals("This FileBackedCdcClient is closed", e.getMessage());
  }

  @Test
  void aDirectoryWithoutAServerIsRefused() {
    CdcException e = assertThrows(CdcException.class, () -> new FileBackedCdcClient(dir));
    assertEquals("No fake SQL Server in " + dir + " (server.json is missing)", e.getMessage());
  }

  @Test
  void theFactorySurvivesSerializationAndOpensReaders() throws Exception {
    FakeSqlServer db = FakeScenarios.orders(dir);
    Lsn l0 = insertOrder(db, T0, 1, "new", "1.00");
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
      out.writeObject(db.clientFactory());
    }
    CdcClientFactory copy;
    try (ObjectInputStream in =
        new ObjectInputStream(new ByteArrayInputStream(bytes.toByteArray()))) {
      copy = (CdcClientFactory) in.readObject();
    }
    assertEquals(db.clientFactory(), copy);
    try (CdcClient client = copy.open()) {
      assertEquals(Optional.of(l0), client.maxLsn());
    }
  }
}
