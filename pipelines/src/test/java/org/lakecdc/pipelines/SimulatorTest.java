package org.lakecdc.pipelines;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.io.mssqlcdc.client.CaptureInstance;
import org.lakecdc.io.mssqlcdc.client.CdcClient;
import org.lakecdc.io.mssqlcdc.client.ChangeQuery;
import org.lakecdc.io.mssqlcdc.client.ChangeRow;
import org.lakecdc.io.mssqlcdc.client.CloseableIterator;
import org.lakecdc.io.mssqlcdc.client.Commit;
import org.lakecdc.io.mssqlcdc.client.DdlChange;
import org.lakecdc.io.mssqlcdc.fake.FakeCdcClientFactory;
import org.lakecdc.io.mssqlcdc.fake.FakeSqlServer;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.pipelines.demo.DemoDatabase;

/**
 * {@link Simulator}: each verb's effect on a small demo database (TPC-H scale 0.001, 40
 * transactions), read back through the {@link CdcClient} interface, its line, and the refusals with
 * their exact lines, exit code 2 and nothing written. The machine clock is fixed before the
 * history, so the simulator's now is its last event ({@code clock_utc}).
 */
@Timeout(120)
class SimulatorTest {
  private static final Clock BEFORE_THE_HISTORY =
      Clock.fixed(Instant.parse("2026-01-01T00:00:00Z"), ZoneOffset.UTC);

  @TempDir static Path built;

  @TempDir Path dir;

  private Path demo;

  @BeforeAll
  static void buildDemo() {
    DemoDatabase.ensure(built.resolve("source"), 0.001, 40);
  }

  @BeforeEach
  void copyDemo() throws IOException {
    demo = dir.resolve("source");
    Files.createDirectories(demo);
    try (Stream<Path> files = Files.list(built.resolve("source"))) {
      for (Path f : (Iterable<Path>) files::iterator) {
        Files.copy(f, demo.resolve(f.getFileName()));
      }
    }
  }

  private static StatusTest.Output simulator(String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int code;
    try (PrintStream o = new PrintStream(out, true, StandardCharsets.UTF_8);
        PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8)) {
      code = Simulator.run(args, o, e, BEFORE_THE_HISTORY);
    }
    return new StatusTest.Output(
        code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  private StatusTest.Output ok(String... args) {
    StatusTest.Output run = simulator(args);
    assertEquals(0, run.code(), run.err());
    assertEquals("", run.err());
    assertEquals(1, run.lines().size(), run.out());
    return run;
  }

  private static CdcClient client(Path path) {
    return new FakeCdcClientFactory(path.toString(), BEFORE_THE_HISTORY).open();
  }

  private static List<Commit> commits(CdcClient client, Lsn after) {
    List<Commit> out = new ArrayList<>();
    for (Optional<Commit> c = client.nthCommitAfter(after, 1);
        c.isPresent();
        c = client.nthCommitAfter(c.get().lsn(), 1)) {
      out.add(c.get());
    }
    return out;
  }

  private static List<ChangeRow> rows(CdcClient client, String ci, Lsn from, Lsn to) {
    List<String> columns = client.capturedColumns(ci).stream().map(c -> c.name()).toList();
    List<ChangeRow> out = new ArrayList<>();
    try (CloseableIterator<ChangeRow> it =
        client.readChanges(new ChangeQuery(ci, from, to, columns, true))) {
      it.forEachRemaining(out::add);
    }
    return out;
  }

  /** Every file of the directory and its bytes: "nothing written" is this map unchanged. */
  private static Map<String, String> files(Path path) throws IOException {
    Map<String, String> out = new TreeMap<>();
    try (Stream<Path> files = Files.list(path)) {
      for (Path f : (Iterable<Path>) files::iterator) {
        out.put(f.getFileName().toString(), Files.readString(f));
      }
    }
    return out;
  }

  @Test
  void commitWritesTheDemoApplicationsTransactionsAfterTheLastCommit() {
    Lsn before;
    Instant lastTime;
    try (CdcClient client = client(demo)) {
      before = client.maxLsn().orElseThrow();
      lastTime = client.commit(before).orElseThrow().commitTime();
    }
    StatusTest.Output run = ok("commit", "--transactions=5", "--fakePath=" + demo);
    try (CdcClient client = client(demo)) {
      List<Commit> added = commits(client, before);
      assertEquals(5, added.size());
      Commit first = added.get(0);
      Commit last = added.get(4);
      assertEquals(
          "committed 5 transactions in "
              + demo
              + ": "
              + first.lsn()
              + " ("
              + first.commitTime()
              + ") to "
              + last.lsn()
              + " ("
              + last.commitTime()
              + "); max_lsn "
              + last.lsn(),
          run.lines().get(0));
      // 10 to 29 seconds of server time apart, from the last commit on.
      long gap = Duration.between(lastTime, first.commitTime()).toSeconds();
      assertTrue(gap >= 10 && gap <= 29 * 5, "gap " + gap);
      assertTrue(rows(client, DemoDatabase.ORDERS_CI, first.lsn(), last.lsn()).size() >= 5);
    }
  }

  @Test
  void commitWithACaptureInstanceCountsTheTransactionsThatChangedItsTable() {
    Lsn before;
    try (CdcClient client = client(demo)) {
      before = client.maxLsn().orElseThrow();
    }
    StatusTest.Output run =
        ok("commit", "--transactions=3", "--captureInstance=dbo_part", "--fakePath=" + demo);
    try (CdcClient client = client(demo)) {
      List<Commit> added = commits(client, before);
      List<Lsn> withParts =
          rows(client, DemoDatabase.PART_CI, client.incrementLsn(before), Lsn.MAX).stream()
              .map(ChangeRow::startLsn)
              .distinct()
              .toList();
      assertEquals(3, withParts.size());
      Commit last = added.get(added.size() - 1);
      assertEquals(withParts.get(2), last.lsn());
      String counted =
          added.size() == 3 ? "all with changes in dbo_part" : "3 with changes in dbo_part";
      assertEquals(
          "committed "
              + Simulator.count(added.size(), "transaction")
              + " in "
              + demo
              + ": "
              + added.get(0).lsn()
              + " ("
              + added.get(0).commitTime()
              + ") to "
              + last.lsn()
              + " ("
              + last.commitTime()
              + "), "
              + counted
              + "; max_lsn "
              + last.lsn(),
          run.lines().get(0));
    }
  }

  @Test
  void idleWritesMappingRowsWithoutChangeRowsEveryIntervalAfterTheLastCommit() throws Exception {
    Commit last;
    try (CdcClient client = client(demo)) {
      last = client.commit(client.maxLsn().orElseThrow()).orElseThrow();
    }
    Lsn first = nextLsn();
    Lsn second = Lsn.fromBigInteger(first.toBigInteger().add(FakeSqlServer.LSN_STEP));
    StatusTest.Output run = ok("idle", "--entries=2", "--interval=5m", "--fakePath=" + demo);
    try (CdcClient client = client(demo)) {
      assertEquals(
          List.of(
              new Commit(first, last.commitTime().plusSeconds(300)),
              new Commit(second, last.commitTime().plusSeconds(600))),
          commits(client, last.lsn()));
      for (String ci : DemoDatabase.CAPTURE_INSTANCES) {
        assertEquals(List.of(), rows(client, ci, first, second));
      }
    }
    assertEquals(
        "wrote 2 idle entries in "
            + demo
            + ", 5m apart after the last commit: "
            + first
            + " ("
            + last.commitTime().plusSeconds(300)
            + ") to "
            + second
            + " ("
            + last.commitTime().plusSeconds(600)
            + "); max_lsn "
            + second,
        run.lines().get(0));
    String mapping = Files.readString(demo.resolve("cdc.lsn_time_mapping.jsonl"));
    assertTrue(mapping.contains("{\"start_lsn\":\"" + second + "\",\"tran_begin_time\":"), mapping);
    assertTrue(mapping.strip().endsWith("\"tran_id\":\"0x00000000000000000000\"}"), mapping);
  }

  @Test
  void cleanupWithRetentionZeroMovesMinLsnToTheNewestCommitAndDeletesTheRowsBelow() {
    Lsn max;
    long below;
    Instant maxTime;
    try (CdcClient client = client(demo)) {
      max = client.maxLsn().orElseThrow();
      maxTime = client.commit(max).orElseThrow().commitTime();
      below = rows(client, "dbo_orders", Lsn.ZERO, client.decrementLsn(max)).size();
      assertTrue(below > 0);
    }
    StatusTest.Output run =
        ok("cleanup", "--captureInstance=dbo_orders", "--retention=0m", "--fakePath=" + demo);
    try (CdcClient client = client(demo)) {
      assertEquals(max, client.minLsn("dbo_orders"));
      assertEquals(List.of(), rows(client, "dbo_orders", Lsn.ZERO, client.decrementLsn(max)));
      // The other instances keep theirs, and with them the mapping rows.
      assertEquals(FakeSqlServer.FIRST_LSN, client.minLsn("dbo_lineitem"));
    }
    assertEquals(
        "cleanup of dbo_orders in "
            + demo
            + ": min_lsn "
            + max
            + " (committed "
            + maxTime
            + "), "
            + Simulator.count(below, "change row")
            + " deleted; low watermark = the newest commit at or before "
            + maxTime
            + " (now "
            + maxTime
            + " minus retention 0m)",
        run.lines().get(0));
  }

  @Test
  void cleanupWithALowWatermarkOrForEveryInstanceMovesEachMinLsnExactly() {
    Lsn third;
    Lsn max;
    long below;
    try (CdcClient client = client(demo)) {
      third = commits(client, Lsn.ZERO).get(2).lsn();
      max = client.maxLsn().orElseThrow();
      below = rows(client, "dbo_lineitem", Lsn.ZERO, client.decrementLsn(third)).size();
    }
    StatusTest.Output run =
        ok(
            "cleanup",
            "--captureInstance=dbo_lineitem",
            "--lowWatermark=" + third,
            "--fakePath=" + demo);
    assertTrue(
        run.lines()
            .get(0)
            .endsWith(Simulator.count(below, "change row") + " deleted; low watermark " + third),
        run.out());
    try (CdcClient client = client(demo)) {
      assertEquals(third, client.minLsn("dbo_lineitem"));
      assertEquals(FakeSqlServer.FIRST_LSN, client.minLsn("dbo_orders"));
    }
    StatusTest.Output all = ok("cleanup", "--allInstances", "--retention=0m", "--fakePath=" + demo);
    assertTrue(all.lines().get(0).startsWith("cleanup of 5 capture instances in "), all.out());
    try (CdcClient client = client(demo)) {
      for (String ci : DemoDatabase.CAPTURE_INSTANCES) {
        assertEquals(max, client.minLsn(ci), ci);
      }
      // Every instance's low watermark is max_lsn: the mapping keeps only its row.
      assertEquals(List.of(max), commits(client, Lsn.ZERO).stream().map(Commit::lsn).toList());
    }
    StatusTest.Output again =
        ok("cleanup", "--captureInstance=dbo_orders", "--retention=3d", "--fakePath=" + demo);
    assertTrue(
        again
            .lines()
            .get(0)
            .startsWith(
                "cleanup of dbo_orders in "
                    + demo
                    + ": nothing to delete, no commit is that old; "),
        again.out());
  }

  @Test
  void enableInstanceAddsASecondInstanceAndDisableInstanceDropsIt() {
    Lsn s = nextLsn();
    StatusTest.Output run =
        ok(
            "enable-instance",
            "--table=dbo.orders",
            "--captureInstance=dbo_orders_v2",
            "--capturedColumns=o_orderkey,o_orderstatus",
            "--fakePath=" + demo);
    try (CdcClient client = client(demo)) {
      List<CaptureInstance> instances = client.captureInstances("dbo_orders");
      assertEquals(
          List.of("dbo_orders", "dbo_orders_v2"),
          instances.stream().map(CaptureInstance::name).toList());
      assertEquals(
          List.of("o_orderkey", "o_orderstatus"),
          client.capturedColumns("dbo_orders_v2").stream().map(c -> c.name()).toList());
    }
    assertEquals(
        "enabled capture instance dbo_orders_v2 on dbo.orders in "
            + demo
            + ": start_lsn "
            + s
            + ", 2 captured columns; dbo.orders has capture instances dbo_orders, dbo_orders_v2",
        run.lines().get(0));
    ok("commit", "--transactions=2", "--captureInstance=dbo_orders_v2", "--fakePath=" + demo);
    int v2Rows;
    try (CdcClient client = client(demo)) {
      assertEquals(s, client.minLsn("dbo_orders_v2"));
      v2Rows = rows(client, "dbo_orders_v2", Lsn.ZERO, Lsn.MAX).size();
      assertTrue(v2Rows >= 2);
    }
    StatusTest.Output dropped =
        ok("disable-instance", "--captureInstance=dbo_orders_v2", "--fakePath=" + demo);
    assertEquals(
        "disabled capture instance dbo_orders_v2 of dbo.orders in "
            + demo
            + ": its change table ("
            + Simulator.count(v2Rows, "row")
            + ") and DDL history dropped; dbo.orders has capture instance dbo_orders",
        dropped.lines().get(0));
    try (CdcClient client = client(demo)) {
      assertEquals(
          List.of("dbo_orders"),
          client.captureInstances("dbo_orders").stream().map(CaptureInstance::name).toList());
    }
  }

  @Test
  void alterAddsAColumnRecordedInTheDdlHistoryAndTheApplicationWritesOn() {
    Lsn ddl = nextLsn();
    StatusTest.Output run =
        ok("alter", "--table=dbo.orders", "--addColumn=o_note varchar(100)", "--fakePath=" + demo);
    assertEquals(
        "ALTER TABLE [dbo].[orders] ADD [o_note] varchar(100) at ddl_lsn "
            + ddl
            + " in "
            + demo
            + "; recorded in cdc.ddl_history of dbo_orders",
        run.lines().get(0));
    try (CdcClient client = client(demo)) {
      List<DdlChange> history = client.ddlHistory("dbo_orders", Lsn.ZERO, Lsn.MAX);
      assertEquals(1, history.size());
      assertEquals(ddl, history.get(0).lsn());
      assertEquals(
          "ALTER TABLE [dbo].[orders] ADD [o_note] varchar(100)", history.get(0).command());
      assertEquals(List.of(), client.ddlHistory("dbo_lineitem", Lsn.ZERO, Lsn.MAX));
    }
    ok("commit", "--transactions=2", "--fakePath=" + demo);
  }

  @Test
  void anExportImportedAndReplayedInStepsReadsAsTheSource() {
    Path export = dir.resolve("export");
    Path copy = dir.resolve("copy");
    StatusTest.Output exported =
        ok(
            "export",
            "--tables=dbo_orders,dbo_lineitem",
            "--exportPath=" + export,
            "--fakePath=" + demo);
    List<Commit> source;
    try (CdcClient client = client(demo)) {
      source = commits(client, Lsn.ZERO);
    }
    assertTrue(
        exported
            .lines()
            .get(0)
            .startsWith(
                "exported 2 capture instances (dbo_orders, dbo_lineitem) of dbo.orders,"
                    + " dbo.lineitem from "
                    + demo
                    + " to "
                    + export
                    + ": "
                    + Simulator.count(source.size(), "commit")
                    + " "
                    + source.get(0).lsn()),
        exported.out());
    StatusTest.Output imported =
        ok("import", "--exportPath=" + export, "--commits=5", "--fakePath=" + copy);
    assertTrue(
        imported
            .lines()
            .get(0)
            .startsWith(
                "imported 5 commits of "
                    + export
                    + " into "
                    + copy
                    + ": "
                    + source.get(0).lsn()
                    + " to "
                    + source.get(4).lsn()
                    + " (last committed "
                    + source.get(4).commitTime()
                    + "), "),
        imported.out());
    assertTrue(
        imported
            .lines()
            .get(0)
            .endsWith(
                ", capture instances dbo_orders, dbo_lineitem added; "
                    + Simulator.count(source.size() - 5, "commit")
                    + " left to replay"),
        imported.out());
    ok("replay", "--exportPath=" + export, "--toLsn=" + source.get(9).lsn(), "--fakePath=" + copy);
    try (CdcClient client = client(copy)) {
      assertEquals(Optional.of(source.get(9).lsn()), client.maxLsn());
    }
    StatusTest.Output rest = ok("replay", "--exportPath=" + export, "--fakePath=" + copy);
    assertTrue(rest.lines().get(0).endsWith("; the export is replayed whole"), rest.out());
    try (CdcClient a = client(demo);
        CdcClient b = client(copy)) {
      assertEquals(source, commits(b, Lsn.ZERO));
      for (String ci : List.of("dbo_orders", "dbo_lineitem")) {
        assertEquals(a.minLsn(ci), b.minLsn(ci));
        assertEquals(a.capturedColumns(ci), b.capturedColumns(ci));
        assertEquals(rows(a, ci, Lsn.ZERO, Lsn.MAX), rows(b, ci, Lsn.ZERO, Lsn.MAX));
      }
    }
    assertEquals(
        "nothing to replay: "
            + copy
            + " is at max_lsn "
            + source.get(source.size() - 1).lsn()
            + ", the last commit of "
            + export,
        ok("replay", "--exportPath=" + export, "--fakePath=" + copy).lines().get(0));
  }

  /** A refused command line: its one {@code error:} line, exit code 2, the database unchanged. */
  private void refused(String expected, String... args) throws IOException {
    Map<String, String> before = files(demo);
    StatusTest.Output run = simulator(args);
    assertEquals(2, run.code(), run.out() + run.err());
    assertEquals("", run.out());
    assertEquals(List.of("error: " + expected), run.err().lines().toList());
    assertEquals(before, files(demo));
  }

  @Test
  void badVerbsOptionsAndValuesAreRefusedInOneLineWithNothingWritten() throws IOException {
    String f = "--fakePath=" + demo;
    String verbs =
        "commit, idle, cleanup, enable-instance, disable-instance, alter, export, import or replay";
    refused(
        "The first argument must be a verb: " + verbs + " (docs/fake-format.md \"Command line\")");
    refused(
        "The first argument must be a verb: "
            + verbs
            + ", not 'purge' (docs/fake-format.md \"Command line\")",
        "purge",
        f);
    refused("--retention applies to cleanup, not to idle", "idle", "--retention=5m", f);
    refused("--transactions must be a positive integer, not '0'", "commit", "--transactions=0", f);
    refused(
        "--transactions must be a positive integer, not 'ten'", "commit", "--transactions=ten", f);
    refused(
        "cleanup needs either --retention (a duration such as 0m, 30m, 72h or 3d: the low watermark"
            + " is the newest commit at or before now minus it) or --lowWatermark (a commit LSN),"
            + " and got neither",
        "cleanup",
        f);
    refused(
        "--retention must be a duration such as 0m, 30m, 72h or 3d (a number alone is minutes),"
            + " not 'soon'",
        "cleanup",
        "--retention=soon",
        f);
    refused(
        "--lowWatermark 0x0000002A000001000002 is not the start_lsn of a row of"
            + " cdc.lsn_time_mapping (SQL Server refuses it too): give a commit LSN, such as max_lsn "
            + maxLsn(),
        "cleanup",
        "--lowWatermark=0x0000002A000001000002",
        f);
    refused(
        "--lowWatermark must be an LSN, 0x followed by 20 hexadecimal digits"
            + " (0x0000002A000001000001), not '0x2A'",
        "cleanup",
        "--lowWatermark=0x2A",
        f);
    refused(
        "--captureInstance dbo_nope: Capture instance 'dbo_nope' not found (not enabled, no"
            + " permission, or capture has not processed its creation yet); the database has"
            + " capture instances [dbo_orders, dbo_lineitem, dbo_customer, dbo_part, dbo_supplier]",
        "cleanup",
        "--captureInstance=dbo_nope",
        "--retention=0m",
        f);
    refused(
        "alter --table=dbo.orders: Key column 'o_orderkey' cannot be dropped or altered",
        "alter",
        "--table=dbo.orders",
        "--dropColumn=o_orderkey",
        f);
    refused(
        "--addColumn must be '<column> <type>', such as 'o_note varchar(100)', not 'o_note'",
        "alter",
        "--table=dbo.orders",
        "--addColumn=o_note",
        f);
    refused(
        "disable-instance needs --captureInstance, the capture instance to drop (its change table"
            + " and DDL history go with it)",
        "disable-instance",
        f);
    refused(
        "--fakePath "
            + dir.resolve("nowhere")
            + " holds no simulator database (no server.json; docs/fake-format.md describes the"
            + " directory): check the path, or import an export into it",
        "idle",
        "--fakePath=" + dir.resolve("nowhere"));
    refused(
        "--exportPath " + demo + " is not empty: give a new or empty directory",
        "export",
        "--tables=dbo_orders",
        "--exportPath=" + demo,
        f);
    refused(
        "--user applies to --connectionUrl (a real SQL Server); add --connectionUrl, or leave"
            + " --user out",
        "export",
        "--tables=dbo_orders",
        "--exportPath=" + dir.resolve("x"),
        "--user=cdc_reader",
        f);
    ok("enable-instance", "--table=dbo.orders", "--captureInstance=dbo_orders_v2", f);
    refused(
        "enable-instance --table=dbo.orders: A table can have at most two capture instances",
        "enable-instance",
        "--table=dbo.orders",
        "--captureInstance=dbo_orders_v3",
        f);
  }

  private Lsn maxLsn() {
    try (CdcClient client = client(demo)) {
      return client.maxLsn().orElseThrow();
    }
  }

  /** The LSN the database issues next (a commit that wrote no row took one too). */
  private Lsn nextLsn() {
    return FakeSqlServer.open(demo).nextLsn();
  }
}
