package org.lakecdc.pipelines;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;
import static org.lakecdc.pipelines.JobFixture.ORDERS;
import static org.lakecdc.pipelines.JobFixture.at;
import static org.lakecdc.pipelines.JobFixture.order;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.UnaryOperator;
import org.apache.beam.sdk.values.Row;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.lakecdc.io.mssqlcdc.fake.ColumnDefinition;
import org.lakecdc.io.mssqlcdc.schema.MetadataColumns;
import org.lakecdc.pipelines.cdc.CdcToDeltaJob;
import org.lakecdc.pipelines.cdc.Continuous;
import org.lakecdc.pipelines.cdc.ContinuousMode;
import org.lakecdc.pipelines.cdc.JobSummary;
import org.lakecdc.pipelines.targets.JobConfig;
import org.lakecdc.transforms.bronze.CrashPoint;
import org.lakecdc.transforms.delta.DataFileRows;
import org.lakecdc.transforms.delta.DeltaColumn;
import org.lakecdc.transforms.delta.DeltaTables;

/**
 * Silver kept current by the jobs on the DirectRunner: the main job with {@code --silver} (bounded,
 * continuous, many tables with {@code --silverTemplate}, after a crash between a bronze commit and
 * its silver apply) and {@link ApplyChanges} on an existing bronze. After each run silver equals
 * the latest image per key computed here, independently of the engine, from bronze's rows (ranked
 * by {@code _start_lsn}, {@code _command_id}, {@code _seqval}, {@code _operation}, descending; a
 * delete or an update's before-image removes the key), and equals the simulator's table.
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class SilverJobTest {
  private static final Duration WAIT = Duration.ofSeconds(120);

  @TempDir Path dir;

  private final DeltaTables tables = DeltaTables.create();

  private String silver(String name) {
    return dir.resolve("delta/silver").resolve(name).toString();
  }

  /** Every row of a table, read with its own schema. */
  private List<Row> scan(String path) {
    return tables.scan(path, DeltaColumn.toBeamSchema(tables.describe(path).columns()));
  }

  /** Silver's rows as "key/status/amount", sorted. */
  private List<String> silverRows(String path, String key) {
    List<String> out = new ArrayList<>();
    for (Row r : scan(path)) {
      out.add(text(r.getValue(key), r.getValue("status"), r.getValue("amount")));
    }
    out.sort(null);
    return out;
  }

  /**
   * The latest image per key of bronze's rows, as "key/status/amount", sorted: the greatest by
   * {@code _start_lsn}, then {@code _command_id} (nulls first), {@code _seqval} (nulls first),
   * {@code _operation}; none when it is a delete (1) or a before-image (3).
   */
  private List<String> latestFromBronze(String bronze, String key) {
    Comparator<Row> order =
        Comparator.comparing((Row r) -> r.getString(MetadataColumns.START_LSN))
            .thenComparing(
                r -> r.getValue(MetadataColumns.COMMAND_ID),
                Comparator.nullsFirst(Comparator.comparing(v -> ((Number) v).longValue())))
            .thenComparing(
                r -> r.getString(MetadataColumns.SEQVAL),
                Comparator.nullsFirst(Comparator.<String>naturalOrder()))
            .thenComparing(r -> r.getInt32(MetadataColumns.OPERATION));
    Map<Object, Row> latest = new HashMap<>();
    for (Row r : scan(bronze)) {
      latest.merge(r.getValue(key), r, (a, b) -> order.compare(a, b) >= 0 ? a : b);
    }
    List<String> out = new ArrayList<>();
    for (Row r : latest.values()) {
      int op = r.getInt32(MetadataColumns.OPERATION);
      if (op != 1 && op != 3) {
        out.add(text(r.getValue(key), r.getValue("status"), r.getValue("amount")));
      }
    }
    out.sort(null);
    return out;
  }

  /** The simulator's current rows of {@code table}, as "key/status/amount", sorted. */
  private static List<String> sourceRows(JobFixture f, String table, String key) {
    List<String> out = new ArrayList<>();
    for (Map<String, Object> r : f.db.rows(table)) {
      out.add(text(r.get(key), r.get("status"), r.get("amount")));
    }
    out.sort(null);
    return out;
  }

  private static String text(Object key, Object status, Object amount) {
    return key
        + "/"
        + status
        + "/"
        + (amount instanceof BigDecimal d ? d.toPlainString() : Objects.toString(amount));
  }

  /** A run's exit code, what it printed and its error lines. */
  private record Run(int code, String out, String err) {}

  private static Run main(List<String> args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    PrintStream console = System.out;
    int code;
    try (PrintStream o = new PrintStream(out, true, StandardCharsets.UTF_8);
        PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8)) {
      System.setOut(o);
      try {
        code = CdcToDelta.run(args.toArray(String[]::new), e, UnaryOperator.identity());
      } finally {
        System.setOut(console);
      }
    }
    return new Run(
        code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  private static Run applyChanges(List<String> args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int code;
    try (PrintStream o = new PrintStream(out, true, StandardCharsets.UTF_8);
        PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8)) {
      code = ApplyChanges.run(args.toArray(String[]::new), o, e);
    }
    return new Run(
        code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  /** The main job's options over {@code f}'s tables: no bootstrap, 4 commits a batch. */
  private List<String> jobArgs(JobFixture f, String... more) {
    List<String> args =
        new ArrayList<>(
            List.of(
                "--fakePath=" + dir.resolve("source"),
                "--target=" + f.bronze,
                "--factsTable=" + f.facts,
                "--controlTable=" + f.control,
                "--bootstrap=false",
                "--maxCommitsPerBatch=4",
                "--logFile=" + dir.resolve("run.log")));
    args.addAll(List.of(more));
    return args;
  }

  /** The line the run printed for a table's silver. */
  private static String silverLine(Run run, String ci) {
    return run.out()
        .lines()
        .filter(l -> l.startsWith("Silver " + ci + " "))
        .reduce((a, b) -> b)
        .orElseThrow(() -> new AssertionError("no silver line: " + run.out() + run.err()));
  }

  /**
   * {@code --silver} on the history of JobFixture: silver holds the 24 orders the source holds (100
   * updated to paid, 200 deleted, 900 inserted), equal to bronze's latest images; a rerun with
   * nothing new applies nothing.
   */
  @Test
  void theMainJobKeepsSilverEqualToTheLatestImagePerKey() {
    JobFixture f = JobFixture.history(dir);
    String path = silver("dbo_orders");
    Run run = main(jobArgs(f, "--silver=" + path));
    assertEquals(0, run.code(), run.out() + run.err());

    List<String> expected = latestFromBronze(f.bronze, "order_id");
    assertEquals(24, expected.size(), expected.toString());
    assertTrue(expected.contains("100/paid/100.00"), expected.toString());
    assertTrue(expected.stream().noneMatch(s -> s.startsWith("200/")), expected.toString());
    assertEquals(expected, silverRows(path, "order_id"));
    assertEquals(sourceRows(f, ORDERS, "order_id"), silverRows(path, "order_id"));
    assertTrue(
        silverLine(run, "dbo_orders").startsWith("Silver dbo_orders " + path + ": "),
        silverLine(run, "dbo_orders"));
    assertTrue(run.out().contains("\n  silver  " + path + "\n"), run.out());

    // Status shows silver's position and verdict from its control row: those the run printed.
    String line = silverLine(run, "dbo_orders");
    String applied = line.replaceAll(".*applied_lsn (0x[0-9A-F]{20}),.*", "$1");
    String verdict = line.replaceAll(".*finalized_until ([^,]*) UTC,.*", "$1");
    ByteArrayOutputStream status = new ByteArrayOutputStream();
    int code =
        Status.run(
            new String[] {
              "--factsTable=" + f.facts,
              "--controlTable=" + f.control,
              "--fakePath=" + dir.resolve("source"),
              "--logFile=" + dir.resolve("run.log")
            },
            new PrintStream(status, true, StandardCharsets.UTF_8),
            System.err,
            java.time.Clock.systemUTC(),
            dir.resolve("none"));
    assertEquals(0, code);
    String shown = status.toString(StandardCharsets.UTF_8);
    assertTrue(
        shown.contains(
            path
                + "  (silver)\n  applied_lsn       "
                + applied
                + "\n  finalized_until   "
                + java.time.LocalDateTime.parse(verdict).toInstant(java.time.ZoneOffset.UTC)
                + "\n"),
        line + "\n" + shown);

    long version = tables.version(path);
    Run again = main(jobArgs(f, "--silver=" + path));
    assertEquals(0, again.code(), again.out() + again.err());
    assertTrue(
        silverLine(again, "dbo_orders").endsWith(", 0 waves, 0 keys applied"),
        silverLine(again, "dbo_orders"));
    assertEquals(version, tables.version(path), "no silver commit when nothing is new");
  }

  /**
   * A crash after a batch's bronze and facts commits, before the silver apply of the batch: the
   * rerun converges (silver equals the latest images), also when the crash was at the last batch
   * and the rerun has nothing new to read.
   */
  @Test
  void aCrashBetweenTheBronzeCommitAndTheSilverApplyIsRepairedByTheRerun() {
    JobFixture f = JobFixture.history(dir);
    String path = silver("dbo_orders");
    String[] args = jobArgs(f, "--silver=" + path).toArray(String[]::new);
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int crashed =
        CdcToDelta.run(
            args,
            new PrintStream(err, true, StandardCharsets.UTF_8),
            c -> c.withCrash(CrashPoint.AFTER_FACTS_COMMIT, 2));
    assertEquals(1, crashed, err.toString(StandardCharsets.UTF_8));
    assertEquals(
        List.of(
            "0:12:0x0000002A000001000031",
            "1:12:0x0000002A000001000071",
            "2:4:0x0000002A0000010000A1"),
        f.factBatches(),
        "every batch is in bronze and facts");

    Run rerun = main(List.of(args));
    assertEquals(0, rerun.code(), rerun.out() + rerun.err());
    assertTrue(rerun.out().contains("Nothing new"), rerun.out());
    assertEquals(latestFromBronze(f.bronze, "order_id"), silverRows(path, "order_id"));
    assertEquals(sourceRows(f, ORDERS, "order_id"), silverRows(path, "order_id"));
  }

  /** The continuous job applies each batch as it is committed, while it runs. */
  @Test
  void aContinuousRunAppliesTheBatchesAsTheyArrive() throws Exception {
    JobFixture f = new JobFixture(dir);
    f.db.enableCdc(ORDERS);
    for (int t = 0; t < 5; t++) {
      f.insertCommit(t, 2);
    }
    String path = silver("dbo_orders");
    JobConfig config = f.config().toBuilder().silverPath(path).build();
    ContinuousMode.Stop stop = ContinuousMode.Stop.create();
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);
    CompletableFuture<JobSummary> job =
        CompletableFuture.supplyAsync(
            () ->
                CdcToDeltaJob.runContinuously(
                    config,
                    JobFixture.direct(),
                    out,
                    () -> {},
                    new Continuous(
                        Continuous.Form.STREAM,
                        Duration.ofSeconds(1),
                        WAIT.multipliedBy(2),
                        stop)));
    try {
      await("the first orders are in silver", () -> rowsOrNone(path).size() == 10, job);
      f.db
          .transaction(at(30))
          .insert(ORDERS, order(3000, "new", "30.00"))
          .update(ORDERS, List.of(100), Map.of("status", "paid"))
          .commit();
      f.db.transaction(at(31)).delete(ORDERS, List.of(0)).commit();
      await(
          "the later commits are in silver",
          () -> rowsOrNone(path).contains("100/paid/100.00") && rowsOrNone(path).size() == 10,
          job);
    } finally {
      stop.request();
    }
    job.get(WAIT.toSeconds(), TimeUnit.SECONDS);
    stop.forget();
    assertEquals(sourceRows(f, ORDERS, "order_id"), silverRows(path, "order_id"));
    assertEquals(latestFromBronze(f.bronze, "order_id"), silverRows(path, "order_id"));
  }

  /** What the committer hooks of a test do, by the test's key (the hook runs on a worker). */
  private static final Map<String, java.util.function.LongConsumer> HOOKS =
      new java.util.concurrent.ConcurrentHashMap<>();

  /**
   * A continuous run with a backlog follows with silver while it commits it: twelve one-commit
   * batches wait in the source, and the committer is held right after batch 0 and again right after
   * batch 5 (a test hook) until silver holds what bronze holds then. With {@code
   * --silverIntervalSeconds=1} silver holds, while bronze stands at batch 0, exactly orders 0 and
   * 1, and while it stands at batch 5 exactly the latest images of batches 0 to 5 (orders 0 to 501:
   * order 0 paid, 101 deleted). Before, silver was applied only once the runner handed the
   * committer's output on, at the end of its bundle: held after batch 0, silver never existed. At
   * the end silver holds the latest images of all twelve. On the DirectRunner and the FlinkRunner.
   */
  @ParameterizedTest
  @ValueSource(strings = {"DirectRunner", Runners.FLINK})
  void aContinuousRunAppliesSilverWhileItCommitsABacklog(String runner) throws Exception {
    assumeTrue(Runners.available(runner), Runners.missing(runner));
    JobFixture f = new JobFixture(dir);
    f.db.enableCdc(ORDERS);
    f.insertCommit(0, 2);
    f.insertCommit(1, 2);
    f.insertCommit(2, 2);
    f.db.transaction(at(3)).update(ORDERS, List.of(0), Map.of("status", "paid")).commit();
    f.db.transaction(at(4)).delete(ORDERS, List.of(101)).commit();
    f.insertCommit(5, 2);
    f.db.transaction(at(6)).update(ORDERS, List.of(500), Map.of("status", "shipped")).commit();
    f.db.transaction(at(7)).delete(ORDERS, List.of(0)).commit();
    for (int t = 8; t < 12; t++) {
      f.insertCommit(t, 1);
    }
    String path = silver("dbo_orders");
    List<String> atBatch5 =
        List.of(
            "0/paid/0.00",
            "1/new/1.00",
            "100/new/100.00",
            "200/new/200.00",
            "201/new/201.00",
            "500/new/500.00",
            "501/new/501.00");
    List<String> atBatch0 = List.of("0/new/0.00", "1/new/1.00");
    List<List<String>> seenAtBatch0 = new ArrayList<>();
    List<List<String>> seenAtBatch5 = new ArrayList<>();
    java.util.concurrent.CountDownLatch allCommitted = new java.util.concurrent.CountDownLatch(1);
    String key = dir.toString();
    HOOKS.put(
        key,
        batch -> {
          if (batch == 0) {
            seenAtBatch0.add(awaitSilver(path, atBatch0));
          } else if (batch == 5 && seenAtBatch0.equals(List.of(atBatch0))) {
            seenAtBatch5.add(awaitSilver(path, atBatch5));
          } else if (batch == 11) {
            allCommitted.countDown();
          }
        });
    JobConfig config =
        f.config().toBuilder()
            .silverPath(path)
            .maxCommitsPerBatch(1)
            .silverIntervalSeconds(1)
            .afterCommit(batch -> HOOKS.get(key).accept(batch))
            .build();
    ContinuousMode.Stop stop = ContinuousMode.Stop.create();
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);
    CompletableFuture<JobSummary> job =
        ContinuousJobTest.start(
            config,
            runner,
            out,
            () -> {},
            new Continuous(
                Continuous.Form.STREAM, Duration.ofSeconds(1), WAIT.multipliedBy(2), stop));
    try {
      CompletableFuture.anyOf(job, CompletableFuture.runAsync(() -> awaitLatch(allCommitted)))
          .get(WAIT.multipliedBy(3).toSeconds(), TimeUnit.SECONDS);
    } finally {
      stop.request();
    }
    JobSummary summary = job.get(WAIT.toSeconds(), TimeUnit.SECONDS);
    stop.forget();
    HOOKS.remove(key);
    assertEquals(12, summary.batches(), bytes.toString(StandardCharsets.UTF_8));
    assertEquals(List.of(atBatch0), seenAtBatch0, bytes.toString(StandardCharsets.UTF_8));
    assertEquals(List.of(atBatch5), seenAtBatch5, bytes.toString(StandardCharsets.UTF_8));
    assertEquals(
        List.of(
            "1/new/1.00",
            "100/new/100.00",
            "1000/new/1000.00",
            "1100/new/1100.00",
            "200/new/200.00",
            "201/new/201.00",
            "500/shipped/500.00",
            "501/new/501.00",
            "800/new/800.00",
            "900/new/900.00"),
        silverRows(path, "order_id"));
    assertEquals(latestFromBronze(f.bronze, "order_id"), silverRows(path, "order_id"));
  }

  private static void awaitLatch(java.util.concurrent.CountDownLatch latch) {
    try {
      latch.await(WAIT.multipliedBy(3).toSeconds(), TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * Silver's rows once they equal {@code expected}, or as they stand when {@link #WAIT} passes
   * first: waits on the file system's notices of new files under the silver table (its commits),
   * not on a clock.
   */
  private List<String> awaitSilver(String path, List<String> expected) {
    Path table = Path.of(path);
    List<Path> chain =
        List.of(
            table.getParent().getParent(), table.getParent(), table, table.resolve("_delta_log"));
    try (java.nio.file.WatchService watcher = table.getFileSystem().newWatchService()) {
      java.util.Set<Path> watched = new java.util.HashSet<>();
      long until = System.nanoTime() + WAIT.toNanos();
      while (true) {
        for (Path each : chain) {
          if (java.nio.file.Files.isDirectory(each) && watched.add(each)) {
            each.register(
                watcher,
                java.nio.file.StandardWatchEventKinds.ENTRY_CREATE,
                java.nio.file.StandardWatchEventKinds.ENTRY_MODIFY);
          }
        }
        List<String> rows = rowsOrNone(path);
        long left = until - System.nanoTime();
        if (rows.equals(expected) || left <= 0) {
          return rows;
        }
        java.nio.file.WatchKey changed = watcher.poll(left, TimeUnit.NANOSECONDS);
        if (changed != null) {
          changed.pollEvents();
          changed.reset();
        }
      }
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return rowsOrNone(path);
    }
  }

  /** Silver's rows, or none while it does not exist. */
  private List<String> rowsOrNone(String path) {
    try {
      return tables.exists(path) ? silverRows(path, "order_id") : List.of();
    } catch (RuntimeException e) {
      return List.of();
    }
  }

  private static void await(String what, BooleanSupplier condition, CompletableFuture<?> job) {
    org.awaitility.Awaitility.await(what)
        .atMost(WAIT)
        .pollDelay(Duration.ZERO)
        .pollInterval(Duration.ofMillis(200))
        .pollInSameThread()
        .until(
            () -> {
              if (condition.getAsBoolean()) {
                return true;
              }
              if (job.isDone()) {
                job.get(); // the job failed: its exception
                throw new AssertionError("the job ended before " + what);
              }
              return false;
            });
  }

  /**
   * Many tables with {@code --silverTemplate}: each table's silver is its own, keyed by its own
   * primary key, and equals its source table.
   */
  @Test
  void manyTablesEachKeepTheirOwnSilver() {
    JobFixture f = JobFixture.history(dir);
    f.db.createTable(
        "dbo.customers",
        List.of(
            ColumnDefinition.of("id", "int"),
            ColumnDefinition.of("status", "varchar(20)"),
            ColumnDefinition.of("amount", "int")),
        List.of("id"));
    f.db.enableCdc("dbo.customers");
    f.db
        .transaction(at(40))
        .insert("dbo.customers", Map.of("id", 7, "status", "a", "amount", 1))
        .insert("dbo.customers", Map.of("id", 8, "status", "b", "amount", 2))
        .commit();
    f.db.transaction(at(41)).update("dbo.customers", List.of(7), Map.of("status", "c")).commit();
    f.db.transaction(at(42)).delete("dbo.customers", List.of(8)).commit();
    Run run =
        main(
            List.of(
                "--fakePath=" + dir.resolve("source"),
                "--tables=dbo_orders,dbo_customers",
                "--targetTemplate=" + dir.resolve("delta/bronze_{ci}"),
                "--silverTemplate=" + silver("{ci}"),
                "--factsTable=" + f.facts,
                "--controlTable=" + f.control,
                "--bootstrap=false",
                "--maxCommitsPerBatch=4",
                "--logFile=" + dir.resolve("run.log")));
    assertEquals(0, run.code(), run.out() + run.err());
    assertEquals(sourceRows(f, ORDERS, "order_id"), silverRows(silver("dbo_orders"), "order_id"));
    assertEquals(List.of("7/c/1"), silverRows(silver("dbo_customers"), "id"));
    assertEquals(
        latestFromBronze(dir.resolve("delta/bronze_dbo_customers").toString(), "id"),
        silverRows(silver("dbo_customers"), "id"));
    assertTrue(silverLine(run, "dbo_orders").contains(silver("dbo_orders")), run.out());
    assertTrue(silverLine(run, "dbo_customers").contains(silver("dbo_customers")), run.out());
  }

  /** ApplyChanges on a bronze table the main job wrote without silver; a rerun applies nothing. */
  @Test
  void applyChangesBuildsSilverFromAnExistingBronze() {
    JobFixture f = JobFixture.history(dir);
    Run bronze = main(jobArgs(f));
    assertEquals(0, bronze.code(), bronze.out() + bronze.err());
    String path = silver("dbo_orders");
    List<String> args =
        List.of(
            "--fakePath=" + dir.resolve("source"),
            "--captureInstance=dbo_orders",
            "--bronze=" + f.bronze,
            "--silver=" + path,
            "--control=" + f.control,
            "--facts=" + f.facts,
            "--logFile=" + dir.resolve("run.log"));
    Run run = applyChanges(args);
    assertEquals(0, run.code(), run.out() + run.err());
    assertEquals(latestFromBronze(f.bronze, "order_id"), silverRows(path, "order_id"));
    assertEquals(sourceRows(f, ORDERS, "order_id"), silverRows(path, "order_id"));
    assertEquals(1, run.out().lines().filter(l -> l.startsWith("Silver ")).count(), run.out());

    long version = tables.version(path);
    Run again = applyChanges(args);
    assertEquals(0, again.code(), again.out() + again.err());
    assertTrue(silverLine(again, "dbo_orders").endsWith(", 0 waves, 0 keys applied"), again.out());
    assertEquals(version, tables.version(path));
  }

  /**
   * Many tables, one of whose silver cannot be written (its path holds a facts table): that table
   * is stopped alone with a {@code table_failed} facts row naming its silver, the other table's
   * silver is applied, and the run exits with code 3.
   */
  @Test
  void aTableWhoseSilverFailsStopsAloneAndTheRunExits3() {
    JobFixture f = JobFixture.history(dir);
    f.db.createTable(
        "dbo.customers",
        List.of(
            ColumnDefinition.of("id", "int"),
            ColumnDefinition.of("status", "varchar(20)"),
            ColumnDefinition.of("amount", "int")),
        List.of("id"));
    f.db.enableCdc("dbo.customers");
    f.db
        .transaction(at(40))
        .insert("dbo.customers", Map.of("id", 7, "status", "a", "amount", 1))
        .commit();
    // A silver table whose status column is an INT: bronze's varchar cannot be written to it, which
    // only the apply finds (a table of another kind at the path is refused before the run).
    String broken = silver("dbo_customers");
    tables.createIfAbsent(
        broken,
        org.lakecdc.transforms.silver.SilverTable.definition(
            org.lakecdc.transforms.delta.DeltaColumn.toBeamSchema(
                List.of(
                    org.lakecdc.transforms.delta.DeltaColumn.nullable(
                        "id", org.lakecdc.io.mssqlcdc.schema.OutputType.INT, null),
                    org.lakecdc.transforms.delta.DeltaColumn.nullable(
                        "status", org.lakecdc.io.mssqlcdc.schema.OutputType.INT, null),
                    org.lakecdc.transforms.delta.DeltaColumn.nullable(
                        "amount", org.lakecdc.io.mssqlcdc.schema.OutputType.INT, null),
                    org.lakecdc.transforms.delta.DeltaColumn.nullable(
                        "_start_lsn", org.lakecdc.io.mssqlcdc.schema.OutputType.STRING, null),
                    org.lakecdc.transforms.delta.DeltaColumn.nullable(
                        "_commit_ts",
                        org.lakecdc.io.mssqlcdc.schema.OutputType.TIMESTAMP_NTZ,
                        null)))));
    Run run =
        main(
            List.of(
                "--fakePath=" + dir.resolve("source"),
                "--tables=dbo_orders,dbo_customers",
                "--targetTemplate=" + dir.resolve("delta/bronze_{ci}"),
                "--silverTemplate=" + silver("{ci}"),
                "--factsTable=" + f.facts,
                "--controlTable=" + f.control,
                "--bootstrap=false",
                "--maxCommitsPerBatch=4",
                "--logFile=" + dir.resolve("run.log")));
    assertEquals(3, run.code(), run.out() + run.err());
    assertEquals(sourceRows(f, ORDERS, "order_id"), silverRows(silver("dbo_orders"), "order_id"));
    org.lakecdc.transforms.bronze.RecordedFailure failure =
        org.lakecdc.transforms.bronze.RecordedFailure.last(tables, f.facts, "dbo_customers")
            .orElseThrow();
    assertEquals(broken, failure.target());
    assertTrue(
        failure.message().startsWith("silver " + broken + " could not be applied: "),
        failure.message());
    assertTrue(
        run.err()
            .startsWith(
                "error: 1 table of 2 failed and stopped alone, the others completed:"
                    + " dbo_customers: "),
        run.err());
    assertEquals(
        List.of("7/a/1"),
        latestFromBronze(dir.resolve("delta/bronze_dbo_customers").toString(), "id"),
        "bronze went on");
  }

  /** ApplyChanges's options for the maintenance of {@code silver}, over {@code f}'s tables. */
  private List<String> maintenanceArgs(JobFixture f, String silver, String... more) {
    List<String> args =
        new ArrayList<>(
            List.of(
                "--fakePath=" + dir.resolve("source"),
                "--captureInstance=dbo_orders",
                "--bronze=" + f.bronze,
                "--silver=" + silver,
                "--control=" + f.control,
                "--facts=" + f.facts,
                "--logFile=" + dir.resolve("run.log")));
    args.addAll(List.of(more));
    return args;
  }

  /** Bad maintenance options: one error line naming the option, exit 2, nothing written. */
  @Test
  void badMaintenanceOptionsAreRefusedBeforeAnythingIsWritten() {
    JobFixture f = JobFixture.history(dir);
    String path = silver("dbo_orders");
    Map<String, String> refused = new java.util.LinkedHashMap<>();
    refused.put(
        "--maintenance=compact,optimize",
        "error: --maintenance must be compact, vacuum or compact,vacuum, not 'compact,optimize'\n");
    refused.put(
        "--maintenance=vacuum,vacuum",
        "error: --maintenance must be compact, vacuum or compact,vacuum, not 'vacuum,vacuum'\n");
    refused.put(
        "--silverCompactDeletedFraction=0",
        "error: --silverCompactDeletedFraction must be a number greater than 0 and at most 1, not"
            + " '0'\n");
    refused.put(
        "--silverCompactDeletedFraction=2",
        "error: --silverCompactDeletedFraction must be a number greater than 0 and at most 1, not"
            + " '2'\n");
    refused.put(
        "--silverCompactDeletedFraction=1.5",
        "error: --silverCompactDeletedFraction must be a number greater than 0 and at most 1, not"
            + " '1.5'\n");
    refused.put(
        "--silverVacuumRetentionHours=0",
        "error: --silverVacuumRetentionHours must be a whole number of hours, at least 1 (a"
            + " shorter retention can delete the files of a write in flight), not '0'\n");
    for (Map.Entry<String, String> e : refused.entrySet()) {
      String[] more =
          e.getKey().startsWith("--maintenance=")
              ? new String[] {e.getKey()}
              : new String[] {"--maintenance=compact,vacuum", e.getKey()};
      Run run = applyChanges(maintenanceArgs(f, path, more));
      assertEquals(2, run.code(), e.getKey() + ": " + run.out() + run.err());
      assertEquals(e.getValue(), run.err(), e.getKey());
      assertEquals("", run.out(), e.getKey());
    }
    assertTrue(!tables.exists(path), "nothing written");
  }

  /**
   * {@code ApplyChanges --maintenance=compact,vacuum} on the silver the main job kept over
   * JobFixture's history: compaction rewrites its files into one without deletion vectors and the
   * rows stay those of the source; vacuum (retention 1 hour, the clock 2 hours on) deletes the
   * removed files, their vectors and an orphan, and the table stays readable.
   */
  @Test
  void applyChangesMaintenanceCompactsAndVacuumsSilver() throws java.io.IOException {
    JobFixture f = JobFixture.history(dir);
    String path = silver("dbo_orders");
    Run bronze = main(jobArgs(f));
    assertEquals(0, bronze.code(), bronze.out() + bronze.err());
    // Waves of 2 bronze rows: many small files, and deletion vectors where later waves change keys.
    Run built = applyChanges(maintenanceArgs(f, path, "--silverWaveRows=2"));
    assertEquals(0, built.code(), built.out() + built.err());
    List<String> rows = silverRows(path, "order_id");
    List<DataFileRows> before = tables.deletionVectors().dataFileRows(path, tables.version(path));
    assertEquals(18, before.size(), before.toString());
    assertEquals(2, before.stream().filter(d -> d.deletedRows() > 0).count(), before.toString());
    List<String> vectors =
        filesOnDisk(path).stream().filter(n -> n.startsWith("deletion_vector_")).toList();
    assertEquals(1, vectors.size(), vectors.toString());
    long removedBytes =
        before.stream().mapToLong(DataFileRows::sizeBytes).sum()
            + java.nio.file.Files.size(Path.of(path, vectors.get(0)));

    Run compacted = applyChanges(maintenanceArgs(f, path, "--maintenance=compact"));
    assertEquals(0, compacted.code(), compacted.out() + compacted.err());
    assertEquals(
        "Silver maintenance dbo_orders "
            + path
            + ": compacted 18 files into 1 file (24 rows, 2 deleted rows purged)\n",
        compacted.out());
    assertEquals(rows, silverRows(path, "order_id"));
    List<DataFileRows> after = tables.deletionVectors().dataFileRows(path, tables.version(path));
    assertEquals(1, after.size(), after.toString());
    assertEquals(24, after.get(0).numRecords());
    assertEquals(0, after.get(0).deletedRows());
    assertEquals(20, filesOnDisk(path).size(), "removed files stay until the vacuum");

    java.nio.file.Files.writeString(dir.resolve("delta/silver/dbo_orders/orphan.parquet"), "x");
    java.time.Clock later =
        java.time.Clock.offset(java.time.Clock.systemUTC(), Duration.ofHours(2));
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    int code =
        ApplyChanges.run(
            maintenanceArgs(f, path, "--maintenance=vacuum", "--silverVacuumRetentionHours=1")
                .toArray(String[]::new),
            new PrintStream(out, true, StandardCharsets.UTF_8),
            System.err,
            later);
    assertEquals(0, code);
    assertEquals(
        "Silver maintenance dbo_orders "
            + path
            + ": vacuumed 20 files ("
            + String.format(java.util.Locale.ROOT, "%,d", removedBytes + 1)
            + " bytes)\n",
        out.toString(StandardCharsets.UTF_8));
    assertEquals(List.of(after.get(0).file()), filesOnDisk(path));
    assertEquals(rows, silverRows(path, "order_id"));
    assertEquals(sourceRows(f, ORDERS, "order_id"), silverRows(path, "order_id"));
  }

  /** The data and deletion vector files in a table's directory, by name, sorted. */
  private static List<String> filesOnDisk(String table) throws java.io.IOException {
    try (java.util.stream.Stream<Path> files = java.nio.file.Files.list(Path.of(table))) {
      return files
          .map(p -> p.getFileName().toString())
          .filter(n -> n.endsWith(".parquet") || n.endsWith(".bin"))
          .sorted()
          .toList();
    }
  }

  /** The main job with a silver table on the SparkRunner and the FlinkRunner. */
  @ParameterizedTest
  @ValueSource(strings = {Runners.SPARK, Runners.FLINK})
  void theMainJobKeepsSilverCurrentOnEveryRunner(String runner) {
    assumeTrue(Runners.available(runner), Runners.missing(runner));
    JobFixture f = JobFixture.history(dir);
    String path = silver("dbo_orders");
    f.run(f.config().toBuilder().silverPath(path).build(), Runners.options(runner), () -> {});
    assertEquals(latestFromBronze(f.bronze, "order_id"), silverRows(path, "order_id"));
    assertEquals(sourceRows(f, ORDERS, "order_id"), silverRows(path, "order_id"));
    assertTrue(f.lastOutput.contains("Silver dbo_orders " + path + ": "), f.lastOutput);
  }
}
