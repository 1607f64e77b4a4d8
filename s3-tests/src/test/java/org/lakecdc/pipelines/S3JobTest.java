package org.lakecdc.pipelines;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.lakecdc.pipelines.JobFixture.ORDERS;
import static org.lakecdc.pipelines.JobFixture.at;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.io.mssqlcdc.fake.FakeSqlServer;
import org.lakecdc.io.mssqlcdc.schema.MetadataColumns;
import org.lakecdc.locals3.LocalS3Server;
import org.lakecdc.transforms.delta.DeltaTables;

/**
 * Every job on {@code s3a://} tables on the local S3 server (S3Proxy on loopback), through the
 * command line a user types, with the server's settings in {@code --hadoopConf}: the main job
 * (stream, rerun, new changes, {@code --silver} with deletion vectors on S3), {@code ApplyChanges},
 * {@code Reconcile}, {@code Status}, {@code Show}; many tables in one pipeline, a chunked snapshot
 * finished by {@code Backfill} and {@code --onDataLoss=resnapshot}; a run killed with SIGKILL and
 * run again, every change once.
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class S3JobTest {
  @TempDir static Path s3dir;
  @TempDir Path dir;

  private static LocalS3Server server;
  private static DeltaTables tables;

  @BeforeAll
  static void startServer() throws IOException {
    server = LocalS3Server.start(s3dir);
    server.createBucket("jobs");
    tables = DeltaTables.create(server.hadoopConf());
  }

  @AfterAll
  static void stopServer() {
    if (server != null) {
      server.close();
    }
  }

  /** A run's exit code, standard output and error. */
  record Run(int code, String out, String err) {}

  /** Runs a job's {@code run} with its output captured (System.out too). */
  private static Run capture(JobRun job) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    PrintStream console = System.out;
    int code;
    try (PrintStream o = new PrintStream(out, true, StandardCharsets.UTF_8);
        PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8)) {
      System.setOut(o);
      try {
        code = job.run(o, e);
      } finally {
        System.setOut(console);
      }
    }
    return new Run(
        code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  private interface JobRun {
    int run(PrintStream out, PrintStream err);
  }

  private static String[] withServer(List<String> args) {
    List<String> all = new ArrayList<>(args);
    all.add(server.hadoopConfOption());
    return all.toArray(String[]::new);
  }

  private Run cdcToDelta(List<String> args) {
    return capture((o, e) -> CdcToDelta.run(withServer(args), e, UnaryOperator.identity()));
  }

  private List<String> mainArgs(JobFixture f, String... more) {
    List<String> args =
        new ArrayList<>(
            List.of(
                "--fakePath=" + f.dir.resolve("source"),
                "--captureInstance=" + JobFixture.CI,
                "--target=" + f.bronze,
                "--factsTable=" + f.facts,
                "--controlTable=" + f.control,
                "--logFile=" + dir.resolve("run.log")));
    args.addAll(List.of(more));
    return args;
  }

  private static List<String> withoutBatch(List<String> bronze) {
    return bronze.stream()
        .map(s -> s.substring(0, s.lastIndexOf('/')))
        .sorted()
        .collect(Collectors.toList());
  }

  /** Silver's rows as key → status. */
  private static Map<Integer, String> silver(String path) {
    Map<Integer, String> rows = new TreeMap<>();
    for (Map<String, Object> row : tables.scan(path)) {
      rows.put((Integer) row.get("order_id"), (String) row.get("status"));
    }
    return rows;
  }

  /** The objects of an s3a://jobs/... table on the server's disk, by file name suffix. */
  private static List<String> objects(String table, String suffix) throws IOException {
    Path root = server.bucketDirectory("jobs").resolve(table.substring("s3a://jobs/".length()));
    try (Stream<Path> files = Files.walk(root)) {
      return files
          .filter(Files::isRegularFile)
          .map(p -> root.relativize(p).toString())
          .filter(name -> name.endsWith(suffix))
          .sorted()
          .toList();
    }
  }

  @Test
  void theMainJobSilverApplyChangesReconcileStatusAndShowOnS3() throws IOException {
    JobFixture f = JobFixture.history(dir, "s3a://jobs/one", tables);
    String silver = "s3a://jobs/one/silver/dbo_orders";

    Run first = cdcToDelta(mainArgs(f, "--bootstrap=false", "--silver=" + silver));
    assertEquals(0, first.code(), first.out() + first.err());
    assertEquals(f.sourceChanges(), withoutBatch(f.bronzeChanges()));
    assertEquals(List.of("0:28:0x0000002A0000010000A1"), f.factBatches());
    Map<Integer, String> expected = new TreeMap<>();
    for (int t = 0; t < 8; t++) {
      for (int i = 0; i < 3; i++) {
        expected.put(t * 100 + i, "new");
      }
    }
    expected.put(100, "paid");
    expected.remove(200);
    expected.put(900, "new");
    assertEquals(expected, silver(silver));

    // A rerun with nothing new writes no batch: every change once.
    Run again = cdcToDelta(mainArgs(f, "--bootstrap=false", "--silver=" + silver));
    assertEquals(0, again.code(), again.out() + again.err());
    assertEquals(f.sourceChanges(), withoutBatch(f.bronzeChanges()));
    assertEquals(List.of("0:28:0x0000002A0000010000A1"), f.factBatches());

    // New changes of rows silver holds: the wave marks them in deletion vectors on S3.
    f.db.transaction(at(130)).update(ORDERS, List.of(0), Map.of("status", "paid")).commit();
    f.db.transaction(at(131)).delete(ORDERS, List.of(1)).commit();
    Run third = cdcToDelta(mainArgs(f, "--bootstrap=false", "--silver=" + silver));
    assertEquals(0, third.code(), third.out() + third.err());
    assertEquals(f.sourceChanges(), withoutBatch(f.bronzeChanges()));
    expected.put(0, "paid");
    expected.remove(1);
    assertEquals(expected, silver(silver));
    assertEquals(1, objects(silver, ".bin").size(), objects(silver, "").toString());
    assertTrue(objects(silver, ".bin").get(0).startsWith("deletion_vector_"));

    // ApplyChanges builds a second silver table from bronze on S3.
    String silver2 = "s3a://jobs/one/silver/dbo_orders_2";
    Run apply =
        capture(
            (o, e) ->
                ApplyChanges.run(
                    withServer(
                        List.of(
                            "--fakePath=" + f.dir.resolve("source"),
                            "--captureInstance=" + JobFixture.CI,
                            "--bronze=" + f.bronze,
                            "--facts=" + f.facts,
                            "--control=" + f.control,
                            "--silver=" + silver2,
                            "--logFile=" + dir.resolve("apply.log"))),
                    o,
                    e));
    assertEquals(0, apply.code(), apply.out() + apply.err());
    assertEquals(1, apply.out().lines().filter(l -> l.startsWith("Silver ")).count(), apply.out());
    assertEquals(expected, silver(silver2));

    // Reconcile proves silver equals the source; its report table is on S3 too.
    Run reconcile =
        capture(
            (o, e) ->
                Reconcile.run(
                    withServer(
                        List.of(
                            "--fakePath=" + f.dir.resolve("source"),
                            "--bronze=" + f.bronze,
                            "--silver=" + silver,
                            "--report=s3a://jobs/one/reconcile",
                            "--factsTable=" + f.facts,
                            "--bucketRows=10",
                            "--sample=1",
                            "--logFile=" + dir.resolve("reconcile.log"))),
                    o,
                    e));
    assertEquals(0, reconcile.code(), reconcile.out() + reconcile.err());
    assertTrue(reconcile.out().contains("silver matches the source"), reconcile.out());
    assertFalse(tables.scan("s3a://jobs/one/reconcile").isEmpty());

    // Status and Show read the tables on S3.
    Run status =
        capture(
            (o, e) ->
                Status.run(
                    withServer(
                        List.of(
                            "--factsTable=" + f.facts,
                            "--controlTable=" + f.control,
                            "--fakePath=" + f.dir.resolve("source"),
                            "--json")),
                    o,
                    e,
                    Clock.systemUTC(),
                    f.dir.resolve("source")));
    assertEquals(0, status.code(), status.out() + status.err());
    assertTrue(status.out().contains(f.bronze), status.out());
    Run show =
        capture(
            (o, e) ->
                Show.run(withServer(List.of("--table=" + f.bronze, "--limit=2", "--json")), o, e));
    assertEquals(0, show.code(), show.out() + show.err());
    assertEquals(2, show.out().lines().filter(l -> l.startsWith("{")).count(), show.out());
  }

  @Test
  void manyTablesAChunkedSnapshotWithBackfillAndAResnapshotOnS3() throws IOException {
    FakeSqlServer db = FakeSqlServer.open(dir.resolve("source"));
    db.createTable(
        "dbo.orders",
        List.of(
            org.lakecdc.io.mssqlcdc.fake.ColumnDefinition.of("order_id", "int"),
            org.lakecdc.io.mssqlcdc.fake.ColumnDefinition.of("status", "varchar(20)")),
        List.of("order_id"));
    db.createTable(
        "dbo.items",
        List.of(
            org.lakecdc.io.mssqlcdc.fake.ColumnDefinition.of("item_id", "int"),
            org.lakecdc.io.mssqlcdc.fake.ColumnDefinition.of("sku", "varchar(20)")),
        List.of("item_id"));
    db.enableCdc("dbo.orders");
    db.enableCdc("dbo.items");
    var tx = db.transaction(at(0));
    for (int i = 0; i < 12; i++) {
      tx.insert("dbo.orders", Map.of("order_id", i, "status", "new"));
      tx.insert("dbo.items", Map.of("item_id", i, "sku", "S-" + i));
    }
    tx.commit();
    String root = "s3a://jobs/many";
    List<String> shared =
        List.of(
            "--fakePath=" + dir.resolve("source"),
            "--targetTemplate=" + root + "/bronze_{ci}",
            "--factsTable=" + root + "/facts",
            "--controlTable=" + root + "/control",
            "--logFile=" + dir.resolve("run.log"));

    // Both tables in one pipeline; orders by a whole snapshot, items by chunks of 4 rows, one
    // wave of one chunk read by this run, the rest by Backfill.
    Path tablesFile = dir.resolve("tables.options");
    Files.writeString(
        tablesFile,
        "dbo_orders\n"
            + "dbo_items --snapshot=chunked --snapshotChunkRows=4 --chunksPerWave=1 --maxWaves=1\n");
    List<String> many = new ArrayList<>(shared);
    many.add("--tablesFile=" + tablesFile);
    Run run = cdcToDelta(many);
    assertEquals(0, run.code(), run.out() + run.err());
    assertEquals(12, snapshotRows(root + "/bronze_dbo_orders"));
    assertEquals(4, snapshotRows(root + "/bronze_dbo_items"));

    Run backfill =
        capture(
            (o, e) ->
                Backfill.run(
                    withServer(
                        List.of(
                            "--fakePath=" + dir.resolve("source"),
                            "--captureInstance=dbo_items",
                            "--target=" + root + "/bronze_dbo_items",
                            "--factsTable=" + root + "/facts",
                            "--controlTable=" + root + "/control",
                            "--logFile=" + dir.resolve("backfill.log"))),
                    o,
                    e,
                    Clock.systemUTC(),
                    UnaryOperator.identity()));
    assertEquals(0, backfill.code(), backfill.out() + backfill.err());
    assertTrue(
        backfill.out().contains("Backfill of dbo_items: done; chunks 3/3, 12 rows, 2 waves"),
        backfill.out());
    assertEquals(12, snapshotRows(root + "/bronze_dbo_items"));

    // CDC cleanup purges changes the stream had not read: a re-snapshot into generation 1.
    db.transaction(at(5)).update("dbo.orders", List.of(3), Map.of("status", "paid")).commit();
    db.cleanup("dbo_orders", db.idle(at(6)));
    List<String> orders = new ArrayList<>(shared);
    orders.addAll(
        List.of(
            "--captureInstance=dbo_orders",
            "--target=" + root + "/bronze_dbo_orders",
            "--onDataLoss=resnapshot"));
    orders.removeIf(a -> a.startsWith("--targetTemplate"));
    Run resnapshot = cdcToDelta(orders);
    assertEquals(0, resnapshot.code(), resnapshot.out() + resnapshot.err());
    assertTrue(
        resnapshot.out().contains("re-snapshotting (whole) into generation 1"), resnapshot.out());
    assertEquals(24, snapshotRows(root + "/bronze_dbo_orders"));
  }

  private static long snapshotRows(String bronze) {
    return tables.scan(bronze).stream()
        .filter(r -> ((Number) r.get(MetadataColumns.OPERATION)).intValue() == 0)
        .count();
  }

  @Test
  void aRunKilledWithSigkillOnS3IsRerunEveryChangeOnce() throws Exception {
    JobFixture f = JobFixture.history(dir, "s3a://jobs/killed", tables);
    List<String> args = mainArgs(f, "--bootstrap=false");
    args.removeIf(a -> a.startsWith("--maxCommitsPerBatch"));
    args.add("--maxCommitsPerBatch=1");
    List<String> command = ForkedJvm.javaCommand(List.of("-Xmx512m"));
    command.add(CdcToDelta.class.getName());
    command.addAll(List.of(withServer(args)));
    Path out = dir.resolve("killed.out");
    Process process =
        new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(out.toFile()).start();
    long until = System.nanoTime() + TimeUnit.MINUTES.toNanos(4);
    while (Files.readAllLines(out, StandardCharsets.UTF_8).stream()
        .noneMatch(l -> l.contains("batch 2:"))) {
      assertTrue(process.isAlive(), Files.readString(out));
      assertTrue(System.nanoTime() < until, Files.readString(out));
      process.waitFor(100, TimeUnit.MILLISECONDS);
    }
    process.destroyForcibly(); // SIGKILL
    assertTrue(process.waitFor(60, TimeUnit.SECONDS));
    assertEquals(137, process.exitValue());
    int killedBatches = f.factBatches().size();

    Run rerun = cdcToDelta(args);
    assertEquals(0, rerun.code(), rerun.out() + rerun.err());
    assertEquals(f.sourceChanges(), withoutBatch(f.bronzeChanges()));
    List<String> batches = f.factBatches();
    assertTrue(killedBatches >= 3 && killedBatches < batches.size(), killedBatches + " " + batches);
    for (int b = 0; b < batches.size(); b++) {
      assertTrue(batches.get(b).startsWith(b + ":"), batches.toString());
    }
    assertEquals(28L, batches.stream().mapToLong(s -> Long.parseLong(s.split(":")[1])).sum());
  }
}
