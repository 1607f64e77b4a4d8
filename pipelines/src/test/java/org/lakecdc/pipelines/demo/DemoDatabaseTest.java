package org.lakecdc.pipelines.demo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.io.mssqlcdc.client.CdcClient;
import org.lakecdc.io.mssqlcdc.client.CdcException;
import org.lakecdc.io.mssqlcdc.client.ChangeQuery;
import org.lakecdc.io.mssqlcdc.client.ChangeRow;
import org.lakecdc.io.mssqlcdc.client.CloseableIterator;
import org.lakecdc.io.mssqlcdc.client.Commit;
import org.lakecdc.io.mssqlcdc.fake.FakeCdcClientFactory;
import org.lakecdc.io.mssqlcdc.fake.FakeSqlServer;
import org.lakecdc.io.mssqlcdc.fake.FileReplacer;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;

/** The demo database: TPC-H rows loaded before CDC, then a seeded change history. */
class DemoDatabaseTest {
  @TempDir Path dir;

  @Test
  void buildsOnceWithTpchRowsAndAHistoryAcrossTheFallBackHour() {
    Path dir = this.dir.resolve("source");
    DemoDatabase.Summary built = DemoDatabase.ensure(dir, 0.001, 600);
    assertTrue(built.created());
    assertEquals(1500, built.orders());
    assertEquals(6005, built.lineItems());
    assertEquals(150, built.customers());
    assertEquals(200, built.parts());
    assertEquals(10, built.suppliers());
    assertEquals(300, built.transactions(), "the first half of the history");
    assertEquals(
        "Built the demo CDC database in "
            + dir.toAbsolutePath()
            + ": 1,500 orders, 6,005 line items, 150 customers, 200 parts and 10 suppliers loaded"
            + " before CDC was enabled, then 300 transactions (server zone America/New_York)",
        built.builtText(dir));
    try (CdcClient client = new FakeCdcClientFactory(dir.toString()).open()) {
      Lsn end = client.maxLsn().orElseThrow();
      assertEquals(
          Map.of(1, 34, 2, 104, 3, 160, 4, 160),
          operations(client, DemoDatabase.ORDERS_CI, Lsn.ZERO, end),
          "order changes of part 1 by operation");
      assertEquals(
          Map.of(1, 133, 2, 443, 3, 49, 4, 49),
          operations(client, DemoDatabase.LINEITEM_CI, Lsn.ZERO, end),
          "line item changes of part 1 by operation");
      assertEquals(
          Map.of(1, 7, 2, 16, 3, 104, 4, 104),
          operations(client, DemoDatabase.CUSTOMER_CI, Lsn.ZERO, end),
          "customers: a balance debit per new order, sign-ups, deletes of customers without orders");
      assertEquals(
          Map.of(3, 52, 4, 52),
          operations(client, DemoDatabase.PART_CI, Lsn.ZERO, end),
          "parts: a repricing per price correction that changed the order's total");
      assertEquals(
          Map.of(3, 49, 4, 49),
          operations(client, DemoDatabase.SUPPLIER_CI, Lsn.ZERO, end),
          "suppliers: a payment per order status that moved on");
    }

    DemoDatabase.Summary again = DemoDatabase.ensure(dir, 0.001, 600);
    assertFalse(again.created());
    assertEquals(
        new DemoDatabase.Continuation(2, 300),
        DemoDatabase.continueHistory(dir, 600, "dbo_orders"),
        "the second half, once");
    assertEquals(
        DemoDatabase.Continuation.NONE, DemoDatabase.continueHistory(dir, 600, "DBO_ORDERS"));

    try (CdcClient client = new FakeCdcClientFactory(dir.toString()).open()) {
      List<Instant> commitTimes = new ArrayList<>();
      Lsn last = client.minLsn(DemoDatabase.ORDERS_CI).decrement();
      while (true) {
        var next = client.nthCommitAfter(last, 1);
        if (next.isEmpty()) {
          break;
        }
        commitTimes.add(next.get().commitTime());
        last = next.get().lsn();
      }
      for (int i = 1; i < commitTimes.size(); i++) {
        assertFalse(
            commitTimes.get(i).isBefore(commitTimes.get(i - 1)),
            "UTC commit times never go backwards, even across the repeated hour");
      }
      assertTrue(commitTimes.get(0).isBefore(Instant.parse("2026-11-01T05:00:00Z")));
      assertTrue(
          commitTimes.get(commitTimes.size() - 1).isAfter(Instant.parse("2026-11-01T07:00:00Z")),
          "the history runs past the fall-back (06:00 UTC)");

      List<String> operations = new ArrayList<>();
      Commit end = client.lastCommitAtOrBefore(client.maxLsn().orElseThrow()).orElseThrow();
      try (CloseableIterator<ChangeRow> rows =
          client.readChanges(
              new ChangeQuery(
                  DemoDatabase.ORDERS_CI, Lsn.ZERO, end.lsn(), List.of("o_orderkey"), true))) {
        rows.forEachRemaining(r -> operations.add(String.valueOf(r.operation())));
      }
      assertTrue(operations.containsAll(List.of("1", "2", "3", "4")), "every operation occurs");
      assertEquals(
          LocalDateTime.of(2026, 11, 1, 8, 15, 27),
          LocalDateTime.ofInstant(end.commitTime(), ZoneOffset.UTC).withNano(0),
          "the seeded history is the same on every machine");
    }
  }

  @Test
  void neverBuildsOverADirectoryThatIsNotEmptyAndNeverWritesWhenReading() throws Exception {
    Path mine = Files.createDirectories(dir.resolve("mine"));
    java.nio.file.Files.writeString(mine.resolve("notes.txt"), "mine");
    IllegalArgumentException e =
        org.junit.jupiter.api.Assertions.assertThrows(
            IllegalArgumentException.class, () -> DemoDatabase.ensure(mine, 0.001, 10));
    assertTrue(e.getMessage().contains("is neither empty nor a CDC database"), e.getMessage());
    assertEquals(List.of("notes.txt"), List.of(mine.toFile().list()));

    Path demo = dir.resolve("demo");
    DemoDatabase.ensure(demo, 0.001, 10);
    Path server = demo.resolve("server.json");
    String before = java.nio.file.Files.readString(server);
    long modified = java.nio.file.Files.getLastModifiedTime(server).toMillis();
    assertFalse(DemoDatabase.ensure(demo, 0.001, 10).created());
    assertEquals(before, java.nio.file.Files.readString(server));
    assertEquals(modified, java.nio.file.Files.getLastModifiedTime(server).toMillis());
    assertEquals(
        "rw-r--r--",
        java.nio.file.attribute.PosixFilePermissions.toString(
            java.nio.file.Files.getPosixFilePermissions(server)));
  }

  /**
   * The history goes on once per capture instance: part 2 (quiet hour, fall-back) for the first
   * instance a job streams, part 3 for the second, never a part twice; an instance that is not the
   * demo's gets nothing.
   */
  @Test
  void theHistoryGoesOnOncePerCaptureInstance() {
    Path dir = this.dir.resolve("source");
    DemoDatabase.ensure(dir, 0.001, 600);
    Lsn afterPart1;
    try (CdcClient client = new FakeCdcClientFactory(dir.toString()).open()) {
      afterPart1 = client.maxLsn().orElseThrow();
    }
    assertEquals(
        DemoDatabase.Continuation.NONE, DemoDatabase.continueHistory(dir, 600, "dbo_customers"));
    assertEquals(
        DemoDatabase.Continuation.NONE,
        DemoDatabase.continueHistory(dir, 600, "dbo_customer"),
        "the other tables change in the parts of dbo_orders and dbo_lineitem");
    assertEquals(
        new DemoDatabase.Continuation(2, 300),
        DemoDatabase.continueHistory(dir, 600, "dbo_orders"));
    Lsn afterPart2;
    try (CdcClient client = new FakeCdcClientFactory(dir.toString()).open()) {
      afterPart2 = client.maxLsn().orElseThrow();
    }
    assertEquals(
        new DemoDatabase.Continuation(3, 300),
        DemoDatabase.continueHistory(dir, 600, "dbo_lineitem"));
    assertEquals(
        " (more of the same night, after the fall-back)",
        new DemoDatabase.Continuation(3, 300).description());
    assertEquals("", DemoDatabase.Continuation.NONE.description());
    assertEquals(
        DemoDatabase.Continuation.NONE, DemoDatabase.continueHistory(dir, 600, "dbo_lineitem"));
    assertEquals(
        DemoDatabase.Continuation.NONE, DemoDatabase.continueHistory(dir, 600, "dbo_orders"));
    try (CdcClient client = new FakeCdcClientFactory(dir.toString()).open()) {
      Commit end = client.lastCommitAtOrBefore(client.maxLsn().orElseThrow()).orElseThrow();
      assertEquals(
          LocalDateTime.of(2026, 11, 1, 9, 50, 54),
          LocalDateTime.ofInstant(end.commitTime(), ZoneOffset.UTC).withNano(0),
          "part 3 follows part 2 on the same night");
      List<ChangeRow> lines = new ArrayList<>();
      try (CloseableIterator<ChangeRow> rows =
          client.readChanges(
              new ChangeQuery(
                  DemoDatabase.LINEITEM_CI,
                  afterPart2.increment(),
                  end.lsn(),
                  List.of("l_orderkey"),
                  true))) {
        rows.forEachRemaining(lines::add);
      }
      assertEquals(632, lines.size(), "line item changes of part 3");
      List<Map<Integer, Integer>> expected =
          List.of(
              Map.of(1, 8, 2, 14, 3, 107, 4, 107),
              Map.of(3, 59, 4, 59),
              Map.of(3, 56, 4, 56),
              Map.of(1, 9, 2, 10, 3, 100, 4, 100),
              Map.of(3, 59, 4, 59),
              Map.of(3, 62, 4, 62));
      List<String> others =
          List.of(DemoDatabase.CUSTOMER_CI, DemoDatabase.PART_CI, DemoDatabase.SUPPLIER_CI);
      for (int i = 0; i < 3; i++) {
        assertEquals(
            expected.get(i),
            operations(client, others.get(i), afterPart1.increment(), afterPart2),
            others.get(i) + " in part 2");
        assertEquals(
            expected.get(3 + i),
            operations(client, others.get(i), afterPart2.increment(), end.lsn()),
            others.get(i) + " in part 3");
      }
    }
    FakeSqlServer db = FakeSqlServer.open(dir);
    assertEquals(166, db.rows("dbo.customer").size(), "150 + 40 signed up - 24 deleted");
    assertEquals(200, db.rows("dbo.part").size());
    assertEquals(10, db.rows("dbo.supplier").size());
    Set<Object> customers = new HashSet<>();
    db.rows("dbo.customer").forEach(c -> customers.add(c.get("c_custkey")));
    for (Map<String, Object> order : db.rows("dbo.orders")) {
      assertTrue(
          customers.contains(order.get("o_custkey")),
          "only customers without orders are deleted: " + order);
    }
  }

  /**
   * The other tables' changes ride in the orders' and line items' transactions after their
   * statements: the demo's orders, line items and commits are byte for byte those of the demo
   * before it had customers, parts and suppliers (the SHA-256 of its files then, all three parts).
   */
  @Test
  void theOrdersLineItemsAndCommitsAreThoseOfTheDemoWithoutTheOtherTables() throws Exception {
    Path dir = this.dir.resolve("source");
    DemoDatabase.ensure(dir, 0.001, 600);
    DemoDatabase.continueHistory(dir, 600, "dbo_orders");
    DemoDatabase.continueHistory(dir, 600, "dbo_lineitem");
    assertEquals(
        "295b4eee73d793ab672d1155dc1df4fb8aaebe0d1f8cbc53461eb8699b11aeca",
        sha256(dir.resolve("cdc.dbo_orders_CT.jsonl")));
    assertEquals(
        "55c1ad9ba43c4b7c17935417d181937eaf0bf17f2bec98b657190cde6f87a198",
        sha256(dir.resolve("cdc.dbo_lineitem_CT.jsonl")));
    assertEquals(
        "c59b1ef7dc4ade9207aeca9520dbacea333b6255c7a0166e576371cd311b17c1",
        sha256(dir.resolve("cdc.lsn_time_mapping.jsonl")));
    try (CdcClient client = new FakeCdcClientFactory(dir.toString()).open()) {
      Lsn end = client.maxLsn().orElseThrow();
      for (String ci : DemoDatabase.CAPTURE_INSTANCES) {
        try (CloseableIterator<ChangeRow> rows =
            client.readChanges(new ChangeQuery(ci, Lsn.ZERO, end, List.of(), true))) {
          assertTrue(rows.hasNext(), ci + " has changes");
        }
      }
    }
  }

  /** Change rows of {@code ci} committed from {@code from} to {@code to}, by operation. */
  private static Map<Integer, Integer> operations(CdcClient client, String ci, Lsn from, Lsn to) {
    Map<Integer, Integer> out = new TreeMap<>();
    try (CloseableIterator<ChangeRow> rows =
        client.readChanges(new ChangeQuery(ci, from, to, List.of(), true))) {
      rows.forEachRemaining(r -> out.merge(r.operation(), 1, Integer::sum));
    }
    return out;
  }

  private static String sha256(Path file) throws Exception {
    return java.util.HexFormat.of()
        .formatHex(
            java.security.MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(file)));
  }

  /**
   * A crash at any file written while the history goes on (in the copy or while copying it over)
   * leaves the database readable as before the part or, once the mapping is in, as after it; the
   * rerun writes the part once, to the very bytes of a run that did not crash.
   */
  @Test
  void aCrashAtAnyFileWhileTheHistoryGoesOnLeavesNoHalfAndTheRerunWritesThePartOnce()
      throws Exception {
    Path built = dir.resolve("built");
    DemoDatabase.ensure(built, 0.001, 40);
    Path reference = copy(built, dir.resolve("reference"));
    assertEquals(
        new DemoDatabase.Continuation(2, 20),
        DemoDatabase.continueHistory(reference, 40, "dbo_orders"));
    Map<String, String> expected = contents(reference);
    int crashAt = 1;
    for (; ; crashAt++) {
      Path b = copy(built, dir.resolve("crash" + crashAt));
      AtomicInteger replaces = new AtomicInteger();
      int n = crashAt;
      FileReplacer crashing =
          (source, target) -> {
            if (replaces.incrementAndGet() == n) {
              throw new IOException("simulated crash");
            }
            FileReplacer.atomicMove().replace(source, target);
          };
      try {
        DemoDatabase.continueHistory(b, 40, "dbo_orders", System.out, crashing);
      } catch (UncheckedIOException e) {
        try (CdcClient client = new FakeCdcClientFactory(b.toString()).open()) {
          Lsn max = client.maxLsn().orElseThrow();
          for (String ci : DemoDatabase.CAPTURE_INSTANCES) {
            try (CloseableIterator<ChangeRow> rows =
                client.readChanges(new ChangeQuery(ci, Lsn.ZERO, max, List.of(), true))) {
              rows.forEachRemaining(r -> {});
            }
          }
        }
        assertEquals(
            new DemoDatabase.Continuation(2, 20),
            DemoDatabase.continueHistory(b, 40, "dbo_orders"),
            "the rerun after a crash at file " + n);
        assertEquals(expected, contents(b), "after a crash at file " + n);
        assertEquals(
            DemoDatabase.Continuation.NONE, DemoDatabase.continueHistory(b, 40, "dbo_orders"));
        assertFalse(Files.exists(dir.resolve(".crash" + n + ".continuing")));
        continue;
      }
      assertEquals(expected, contents(b));
      break;
    }
    assertEquals(
        31,
        crashAt,
        "files written: 12 in the copy (server, 5 change tables, 5 source tables, mapping), 18"
            + " copied over, and then none");
  }

  /**
   * Two first runs at once: the second says plainly that another run is building the demo and stops
   * before writing anything (it would bootstrap the same target); once the database is built, a run
   * uses it. A run continuing the history while another holds the lock waits for it.
   */
  @Test
  void aSecondFirstRunIsToldThatAnotherRunIsBuildingTheDemo() throws Exception {
    Path demo = dir.resolve("lakecdc-demo").resolve("source");
    Path lock = dir.resolve("lakecdc-demo").resolve(".source.lock").toAbsolutePath();
    try (AutoCloseable held = DemoLock.holdLock(demo)) {
      CdcException e = assertThrows(CdcException.class, () -> DemoDatabase.ensure(demo, 0.001, 10));
      assertEquals(
          "Another run is building the demo database in "
              + demo.toAbsolutePath()
              + " (lock "
              + lock
              + "): run again when it has finished (two first runs at once would both bootstrap"
              + " the same target)",
          e.getMessage());
      assertEquals(List.of(".source.lock"), List.of(demo.getParent().toFile().list()));
      Path other = dir.resolve("other");
      DemoDatabase.ensure(other, 0.001, 10);
      Files.move(other, demo, StandardCopyOption.ATOMIC_MOVE);
      assertFalse(DemoDatabase.ensure(demo, 0.001, 10).created(), "a built database is read");

      ByteArrayOutputStream said = new ByteArrayOutputStream();
      PrintStream out = new PrintStream(said, true, StandardCharsets.UTF_8);
      ExecutorService executor = Executors.newSingleThreadExecutor();
      try {
        Future<DemoDatabase.Continuation> more =
            executor.submit(() -> DemoDatabase.continueHistory(demo, 10, "dbo_orders", out));
        org.awaitility.Awaitility.await("the waiting notice")
            .atMost(java.time.Duration.ofSeconds(60))
            .pollDelay(java.time.Duration.ZERO)
            .pollInterval(java.time.Duration.ofMillis(10))
            .pollInSameThread()
            .until(() -> said.toString(StandardCharsets.UTF_8).endsWith(System.lineSeparator()));
        assertEquals(
            "Another run is writing the demo database in "
                + demo.toAbsolutePath()
                + "; waiting for it to finish (lock "
                + lock
                + ")"
                + System.lineSeparator(),
            said.toString(StandardCharsets.UTF_8));
        assertFalse(more.isDone(), "the history waits for the lock");
        held.close();
        assertEquals(new DemoDatabase.Continuation(2, 5), more.get(60, TimeUnit.SECONDS));
      } finally {
        executor.shutdownNow();
      }
    }

    Path both = dir.resolve("both").resolve("source");
    ExecutorService two = Executors.newFixedThreadPool(2);
    try {
      List<Future<DemoDatabase.Summary>> runs =
          two.invokeAll(
              List.of(
                  () -> DemoDatabase.ensure(both, 0.001, 10),
                  () -> DemoDatabase.ensure(both, 0.001, 10)));
      int created = 0;
      for (Future<DemoDatabase.Summary> run : runs) {
        try {
          created += run.get().created() ? 1 : 0;
        } catch (java.util.concurrent.ExecutionException e) {
          assertTrue(
              e.getCause().getMessage().startsWith("Another run is building the demo database"),
              e.getCause().getMessage());
        }
      }
      assertEquals(1, created, "one run builds, the other is told or uses its database");
      assertEquals(
          List.of(".source.lock", "source"),
          Stream.of(both.getParent().toFile().list()).sorted().toList(),
          "no build directory left behind");
    } finally {
      two.shutdownNow();
    }
  }

  private static Path copy(Path from, Path to) throws IOException {
    Files.createDirectories(to);
    try (Stream<Path> files = Files.list(from)) {
      for (Path f : (Iterable<Path>) files::iterator) {
        Files.copy(f, to.resolve(f.getFileName().toString()));
      }
    }
    return to;
  }

  /**
   * The database's files and their text; not the hidden key indexes beside the source tables
   * ({@code .<schema>.<table>.jsonl.keys}), which name the very file version they index (its inode
   * and modification time), so two directories with the same rows never have the same ones.
   */
  private static Map<String, String> contents(Path directory) throws IOException {
    Map<String, String> out = new TreeMap<>();
    try (Stream<Path> files = Files.list(directory)) {
      for (Path f : (Iterable<Path>) files::iterator) {
        if (!f.getFileName().toString().startsWith(".")) {
          out.put(f.getFileName().toString(), Files.readString(f));
        }
      }
    }
    return out;
  }
}
