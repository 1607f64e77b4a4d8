package org.lakecdc.pipelines;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.UnaryOperator;
import org.apache.beam.sdk.values.Row;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.core.LoggerContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.lakecdc.io.mssqlcdc.client.CdcClientFactory;
import org.lakecdc.io.mssqlcdc.fake.ColumnDefinition;
import org.lakecdc.io.mssqlcdc.fake.FakeSqlServer;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.io.mssqlcdc.schema.MetadataColumns;
import org.lakecdc.pipelines.cdc.CdcToDeltaJob;
import org.lakecdc.pipelines.cdc.Continuous;
import org.lakecdc.pipelines.cdc.ContinuousMode;
import org.lakecdc.pipelines.cli.ConsoleLogging;
import org.lakecdc.pipelines.targets.JobConfig;
import org.lakecdc.pipelines.targets.SnapshotSettings;
import org.lakecdc.transforms.bronze.RecordedFailure;
import org.lakecdc.transforms.delta.DeltaColumn;
import org.lakecdc.transforms.delta.DeltaTables;
import org.lakecdc.transforms.facts.FactsTable;
import org.lakecdc.transforms.position.StreamPosition;

/**
 * Many tables in one pipeline ({@code --tables}, {@code --tablesFile}; docs/many-tables.md;
 * docs/scenarios.md C259 to C264 in Beam form): each capture instance into its own bronze table
 * under its own app id, one shared facts and control table; a table that meets data loss is stopped
 * alone (a {@code table_failed} facts row, exit code 3) while the others go on with every change
 * exactly once; an unknown capture instance is refused before anything is written.
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class ManyTablesJobTest {
  private static final Instant T0 = Instant.parse("2026-09-28T13:50:00Z");

  @TempDir Path dir;

  /** dbo.orders (inserts 1 and 2 at T0), dbo.customers ((7, Ana) at T0+1), dbo.items (at T0+2). */
  private FakeSqlServer source() {
    FakeSqlServer db = FakeSqlServer.open(dir.resolve("source"));
    db.createTable(
        "dbo.orders",
        List.of(
            ColumnDefinition.of("order_id", "int"), ColumnDefinition.of("status", "varchar(20)")),
        List.of("order_id"));
    db.createTable(
        "dbo.customers",
        List.of(ColumnDefinition.of("id", "int"), ColumnDefinition.of("name", "varchar(20)")),
        List.of("id"));
    db.createTable(
        "dbo.items",
        List.of(ColumnDefinition.of("item_id", "int"), ColumnDefinition.of("sku", "varchar(20)")),
        List.of("item_id"));
    db.enableCdc("dbo.orders");
    db.enableCdc("dbo.customers");
    db.enableCdc("dbo.items");
    db.transaction(T0)
        .insert("dbo.orders", Map.of("order_id", 1, "status", "new"))
        .insert("dbo.orders", Map.of("order_id", 2, "status", "new"))
        .commit();
    db.transaction(T0.plusSeconds(60))
        .insert("dbo.customers", Map.of("id", 7, "name", "Ana"))
        .commit();
    db.transaction(T0.plusSeconds(120))
        .insert("dbo.items", Map.of("item_id", 40, "sku", "A-40"))
        .commit();
    return db;
  }

  private String delta(String name) {
    return dir.resolve("delta").resolve(name).toString();
  }

  /** The shared options of the runs: the simulator, bronze_{ci}, {ci}-v1, no bootstrap. */
  private List<String> shared() {
    return new ArrayList<>(
        List.of(
            "--fakePath=" + dir.resolve("source"),
            "--targetTemplate=" + delta("bronze_{ci}"),
            "--appIdTemplate={ci}-v1",
            "--factsTable=" + delta("facts"),
            "--controlTable=" + delta("control"),
            "--bootstrap=false",
            "--logFile=" + dir.resolve("run.log")));
  }

  /** A run's exit code, what it printed and its error lines. */
  private record Run(int code, String out, String err) {}

  private Run run(List<String> args) {
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

  /** {@link #run} under the jobs' logging configuration: its console lines are in the output. */
  private Run runUnderJobsLogging(List<String> args) throws Exception {
    LoggerContext context = (LoggerContext) LogManager.getContext(false);
    URI tests = context.getConfigLocation();
    context.setConfigLocation(
        ManyTablesJobTest.class.getClassLoader().getResource("log4j2.xml").toURI());
    try {
      return run(args);
    } finally {
      context.setConfigLocation(tests);
      System.clearProperty(ConsoleLogging.LOG_FILE);
      System.clearProperty(ConsoleLogging.VERBOSE);
    }
  }

  private final DeltaTables tables = DeltaTables.create();

  /** A bronze table's rows as "capture instance/key/operation", in change order. */
  private List<String> bronze(String ci, String key) {
    String path = delta("bronze_" + ci);
    List<Row> rows;
    try {
      rows =
          new ArrayList<>(
              tables.scan(path, DeltaColumn.toBeamSchema(tables.describe(path).columns())));
    } catch (RuntimeException e) {
      return List.of(); // not created yet
    }
    rows.sort(
        Comparator.comparing((Row r) -> r.getString(MetadataColumns.START_LSN))
            .thenComparing(r -> r.getString(MetadataColumns.SEQVAL)));
    List<String> out = new ArrayList<>();
    for (Row r : rows) {
      out.add(
          r.getString(MetadataColumns.CAPTURE_INSTANCE)
              + "/"
              + r.getInt32(key)
              + "/"
              + r.getInt32(MetadataColumns.OPERATION));
    }
    return out;
  }

  /** Change rows of the facts table's batch rows per app id. */
  private Map<String, Long> factRowsByApp() {
    Map<String, Long> rows = new TreeMap<>();
    for (Row r : tables.scan(delta("facts"), FactsTable.SCHEMA)) {
      if (r.getString(FactsTable.EVENT) == null) {
        rows.merge(r.getString(FactsTable.APP_ID), r.getInt64(FactsTable.ROWS), Long::sum);
      }
    }
    return rows;
  }

  /** The facts rows of {@code event}, as "app_id|target|detail". */
  private List<String> events(String event) {
    List<String> out = new ArrayList<>();
    for (Row r : tables.scan(delta("facts"), FactsTable.SCHEMA)) {
      if (event.equals(r.getString(FactsTable.EVENT))) {
        out.add(
            r.getString(FactsTable.APP_ID)
                + "|"
                + r.getString(FactsTable.TARGET)
                + "|"
                + r.getString(FactsTable.DETAIL));
      }
    }
    out.sort(null);
    return out;
  }

  @Test
  void c259EachCaptureInstanceStreamsIntoItsOwnTargetWithOneSharedFactsTable() {
    source();
    List<String> args = shared();
    args.add("--tables=dbo_orders,dbo_customers");
    Run run = run(args);

    assertEquals(0, run.code(), run.out() + run.err());
    assertEquals(List.of("dbo_orders/1/2", "dbo_orders/2/2"), bronze("dbo_orders", "order_id"));
    assertEquals(List.of("dbo_customers/7/2"), bronze("dbo_customers", "id"));
    assertFalse(tables.exists(delta("bronze_dbo_items")), "a table not listed is not read");
    assertEquals(Map.of("dbo_customers-v1", 1L, "dbo_orders-v1", 2L), factRowsByApp());
    List<String> targets = new ArrayList<>();
    for (Row r : tables.scan(delta("facts"), FactsTable.SCHEMA)) {
      targets.add(r.getString(FactsTable.APP_ID) + "->" + r.getString(FactsTable.TARGET));
    }
    targets.sort(null);
    assertEquals(
        List.of(
            "dbo_customers-v1->" + delta("bronze_dbo_customers"),
            "dbo_orders-v1->" + delta("bronze_dbo_orders")),
        targets);
    assertTrue(run.out().contains("Done in "), run.out());
    assertTrue(
        run.out().lines().anyMatch(l -> l.matches("  dbo_orders +1 batch, 2 change rows .*")),
        run.out());

    Run again = run(args);
    assertEquals(0, again.code(), again.out() + again.err());
    assertEquals(2, bronze("dbo_orders", "order_id").size(), "nothing twice");
    assertEquals(
        2,
        again.out().lines().filter(l -> l.startsWith("Nothing new: max_lsn ")).count(),
        again.out());
  }

  /** What {@link CdcToDeltaJob#runAll} returned and printed. */
  private record AllRun(List<CdcToDeltaJob.TableOutcome> outcomes, String printed) {}

  private static AllRun runAll(List<JobConfig> configs, String runner, Runnable beforeStream) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    List<CdcToDeltaJob.TableOutcome> outcomes =
        CdcToDeltaJob.runAll(
            configs,
            Runners.options(runner),
            new PrintStream(bytes, true, StandardCharsets.UTF_8),
            beforeStream);
    return new AllRun(outcomes, bytes.toString(StandardCharsets.UTF_8));
  }

  @ParameterizedTest
  @ValueSource(strings = {"DirectRunner", "SparkRunner", "FlinkRunner"})
  void everyTableStreamsIntoItsOwnBronzeInOnePipelineOnEachRunner(String runner) {
    assumeTrue(Runners.available(runner), Runners.missing(runner));
    FakeSqlServer db = source();
    List<JobConfig> configs = new ArrayList<>();
    for (String ci : List.of("dbo_orders", "dbo_customers", "dbo_items")) {
      configs.add(
          JobConfig.builder(
                  db.clientFactory(), ci, delta("bronze_" + ci), delta("facts"), delta("control"))
              .appId(ci + "-v1")
              .bootstrap(false)
              .build());
    }
    AllRun run = runAll(configs, runner, () -> {});
    List<CdcToDeltaJob.TableOutcome> outcomes = run.outcomes();
    String printed = run.printed();
    assertEquals(List.of("dbo_orders/1/2", "dbo_orders/2/2"), bronze("dbo_orders", "order_id"));
    assertEquals(List.of("dbo_customers/7/2"), bronze("dbo_customers", "id"));
    assertEquals(List.of("dbo_items/40/2"), bronze("dbo_items", "item_id"));
    assertEquals(
        Map.of("dbo_customers-v1", 1L, "dbo_items-v1", 1L, "dbo_orders-v1", 2L), factRowsByApp());
    List<Long> rows = new ArrayList<>();
    for (CdcToDeltaJob.TableOutcome o : outcomes) {
      assertFalse(o.failed(), printed);
      rows.add(o.summary().rows());
    }
    assertEquals(List.of(2L, 1L, 1L), rows, "each table's own counters: " + printed);
  }

  @Test
  void templatesWithoutTheCaptureInstanceAreRefused() {
    source();
    List<String> args = shared();
    args.set(2, "--appIdTemplate=orders-v1");
    args.add("--tables=dbo_orders,dbo_customers");
    Run run = run(args);
    assertEquals(2, run.code());
    assertEquals(
        "error: --appIdTemplate='orders-v1' must contain '{ci}' (the capture instance)",
        run.err().strip());
    assertFalse(Files.exists(dir.resolve("delta")), "nothing written");
  }

  @Test
  void twoTablesWithOneTargetOrOneAppIdAreRefusedBeforeAnythingIsWritten() throws Exception {
    source();
    Path file = dir.resolve("tables.options");
    List<String> args = shared();
    args.add("--tablesFile=" + file);
    Files.writeString(
        file,
        "dbo_orders --target="
            + delta("same")
            + "\ndbo_customers --target="
            + delta("same")
            + "\n");
    Run target = run(args);
    assertEquals(2, target.code(), target.out() + target.err());
    assertEquals(
        "error: --tables: dbo_orders and dbo_customers would both write the bronze table "
            + delta("same")
            + ": give each table its own --target (or a --targetTemplate with {ci}); nothing was"
            + " written",
        target.err().strip());
    Files.writeString(file, "dbo_orders --appId=same\ndbo_customers --appid=same\n");
    Run app = run(args);
    assertEquals(2, app.code(), app.out() + app.err());
    assertEquals(
        "error: --tables: dbo_orders and dbo_customers would both write under the app id 'same':"
            + " give each table its own --appId (or an --appIdTemplate with {ci}); nothing was"
            + " written",
        app.err().strip());
    assertFalse(Files.exists(dir.resolve("delta")), "nothing written");

    List<String> single = shared();
    single.add("--captureInstance=dbo_orders");
    Run ignored = run(single);
    assertEquals(2, ignored.code(), ignored.out() + ignored.err());
    assertEquals(
        "error: --targetTemplate applies to the tables of --tables or --tablesFile; for the one"
            + " table of --captureInstance give --target",
        ignored.err().strip());
    assertFalse(Files.exists(dir.resolve("delta")), "nothing written");
  }

  @Test
  void c262AnUnknownCaptureInstanceIsRefusedBeforeAnythingIsWritten() {
    source();
    List<String> args = shared();
    args.add("--tables=dbo_orders,dbo_missing");
    Run run = run(args);
    assertEquals(2, run.code(), run.out() + run.err());
    assertEquals(
        "error: --tables: capture instance 'dbo_missing' not found in the source: nothing was"
            + " written; its capture instances are dbo_orders, dbo_customers and dbo_items",
        run.err().strip());
    assertFalse(Files.exists(dir.resolve("delta")), "nothing written: " + run.out());
    assertNull(
        System.getProperty(org.lakecdc.pipelines.cli.ConsoleLogging.LOG_FILE),
        "refused before the log file starts: nothing appended to it");

    List<String> two = shared();
    two.add("--tables=dbo_other,dbo_orders,dbo_missing");
    Run both = run(two);
    assertEquals(2, both.code(), both.out() + both.err());
    assertEquals(
        "error: --tables: capture instances 'dbo_other' and 'dbo_missing' not found in the source:"
            + " nothing was written; its capture instances are dbo_orders, dbo_customers and dbo_items",
        both.err().strip());
    assertFalse(Files.exists(dir.resolve("delta")), "nothing written: " + both.out());
  }

  @Test
  void anUnknownCaptureInstanceOfOneTableIsARefusedOptionNamingTheSourcesInstances() {
    source();
    Run run =
        run(
            List.of(
                "--fakePath=" + dir.resolve("source"),
                "--captureInstance=dbo_nope",
                "--target=" + delta("bronze"),
                "--factsTable=" + delta("facts"),
                "--controlTable=" + delta("control"),
                "--bootstrap=false",
                "--logFile=" + dir.resolve("run.log")));
    assertEquals(2, run.code(), run.out() + run.err());
    assertEquals(
        "error: --captureInstance: capture instance 'dbo_nope' not found in the source: nothing"
            + " was written; its capture instances are dbo_orders, dbo_customers and dbo_items\n",
        run.err());
    assertFalse(Files.exists(dir.resolve("delta")), "nothing written: " + run.out());
  }

  @Test
  void anUnknownCaptureInstanceOfATablesFileNamesTheFileAndItsLine() throws Exception {
    source();
    Path file = dir.resolve("tables.options");
    Files.writeString(file, "# two tables\ndbo_orders\ndbo_nope --maxCommitsPerBatch=5\n");
    List<String> args = shared();
    args.add("--tablesFile=" + file);
    Run run = run(args);
    assertEquals(2, run.code(), run.out() + run.err());
    assertEquals(
        "error: --tablesFile "
            + file
            + " line 3: capture instance 'dbo_nope' not found in the source: nothing was written;"
            + " its capture instances are dbo_orders, dbo_customers and dbo_items\n",
        run.err());
    assertFalse(Files.exists(dir.resolve("delta")), "nothing written: " + run.out());
  }

  @Test
  void c261ATablesFileGivesPerTableOptionsMatchedIgnoringCase() throws Exception {
    FakeSqlServer db = source();
    db.transaction(T0.plusSeconds(180))
        .insert("dbo.orders", Map.of("order_id", 3, "status", "new"))
        .commit();
    Path file = dir.resolve("tables.options");
    Files.writeString(
        file,
        "# two tables\n"
            + "dbo_orders --MAXCOMMITSPERBATCH=1 --granularity=minute\n"
            + "\n"
            + "dbo_customers   # the shared options\n");
    List<String> args = shared();
    args.add("--tablesFile=" + file);
    args.add("--maxCommitsPerBatch=100");
    Run run = run(args);
    assertEquals(0, run.code(), run.out() + run.err());
    Map<String, Long> batches = new TreeMap<>();
    for (Row r : tables.scan(delta("facts"), FactsTable.SCHEMA)) {
      if (r.getString(FactsTable.EVENT) == null) {
        batches.merge(r.getString(FactsTable.APP_ID), 1L, Long::sum);
      }
    }
    // dbo_orders: one commit a batch, the 4 commits of cdc.lsn_time_mapping (every table's);
    // dbo_customers: one batch.
    assertEquals(Map.of("dbo_customers-v1", 1L, "dbo_orders-v1", 4L), batches, run.out());
    assertEquals(
        List.of("dbo_orders/1/2", "dbo_orders/2/2", "dbo_orders/3/2"),
        bronze("dbo_orders", "order_id"));

    Files.writeString(file, "dbo_orders --captureInstance=dbo_items\n");
    Run refused = run(args);
    assertEquals(2, refused.code());
    assertEquals(
        "error: --tablesFile "
            + file
            + " line 1: --captureInstance is an option of the whole run, not of one table: give it"
            + " on the command line",
        refused.err().strip());
    Files.writeString(file, "dbo_orders --maxCommits=3\n");
    Run unknown = run(args);
    assertEquals(2, unknown.code());
    assertTrue(
        unknown
            .err()
            .startsWith(
                "error: --tablesFile "
                    + file
                    + " line 1: --maxCommits is not an option of a table"),
        unknown.err());
  }

  @Test
  void aTableWhoseChangesWerePurgedFailsAloneAndTheOthersCommitEveryChangeOnce() throws Exception {
    FakeSqlServer db = source();
    List<String> args = shared();
    args.add("--tables=dbo_orders,dbo_customers,dbo_items");
    assertEquals(0, run(args).code());

    db.transaction(T0.plusSeconds(600))
        .insert("dbo.orders", Map.of("order_id", 3, "status", "new"))
        .commit();
    Lsn kept =
        db.transaction(T0.plusSeconds(660))
            .insert("dbo.orders", Map.of("order_id", 4, "status", "new"))
            .insert("dbo.customers", Map.of("id", 8, "name", "Bia"))
            .commit();
    db.transaction(T0.plusSeconds(720))
        .insert("dbo.items", Map.of("item_id", 41, "sku", "A-41"))
        .commit();
    // CDC cleanup of dbo_orders past its position: order 3's change is gone before it was read.
    db.cleanup("dbo_orders", kept);

    Run broken = runUnderJobsLogging(args);
    assertEquals(3, broken.code(), broken.out() + broken.err());
    assertEquals(List.of("dbo_orders/1/2", "dbo_orders/2/2"), bronze("dbo_orders", "order_id"));
    assertEquals(List.of("dbo_customers/7/2", "dbo_customers/8/2"), bronze("dbo_customers", "id"));
    assertEquals(List.of("dbo_items/40/2", "dbo_items/41/2"), bronze("dbo_items", "item_id"));
    List<String> failed = events(FactsTable.EVENT_TABLE_FAILED);
    assertEquals(1, failed.size(), failed.toString());
    assertTrue(
        failed
            .get(0)
            .startsWith("dbo_orders-v1|" + delta("bronze_dbo_orders") + "|DataLossError: "),
        failed.get(0));
    RecordedFailure recorded =
        RecordedFailure.last(tables, delta("facts"), "dbo_orders-v1").orElseThrow();
    assertEquals("DataLossError", recorded.errorClass());
    assertEquals(1, recorded.batchId(), "batch 0 was committed, batch 1 could not be read");
    assertTrue(
        broken
            .err()
            .startsWith(
                "error: 1 table of 3 failed and stopped alone, the others completed: dbo_orders:"
                    + " DataLossError: dbo_orders: change data from "),
        broken.err());
    assertEquals(1, broken.err().strip().lines().count(), "one error line: " + broken.err());
    assertTrue(
        broken
            .out()
            .lines()
            .anyMatch(
                l ->
                    l.matches(
                        "  dbo_orders +FAILED at 0x[0-9A-F]{20} \\(batch 0\\) after 0 batches"
                            + " this run: DataLossError")),
        broken.out());
    // The message once: the closing error line says it; the summary and the warning of the run
    // name its class.
    assertEquals(
        1,
        (broken.out() + broken.err()).lines().filter(l -> l.contains("purged by CDC")).count(),
        broken.out() + broken.err());
    assertEquals(
        List.of(
            "warning: Target "
                + delta("bronze_dbo_orders")
                + " (app id dbo_orders-v1) stopped after 0x0000002A000001000021: DataLossError;"
                + " recorded as table_failed, the other tables go on"),
        broken
            .out()
            .lines()
            .filter(l -> l.contains("DataLossError") && !l.startsWith("  "))
            .toList(),
        broken.out());

    Run rerun = run(args);
    assertEquals(3, rerun.code(), "the table stays failed until it is recovered: " + rerun.err());
    assertEquals(
        List.of("dbo_customers/7/2", "dbo_customers/8/2"),
        bronze("dbo_customers", "id"),
        "nothing written twice");
    assertEquals(2, events(FactsTable.EVENT_TABLE_FAILED).size(), "one event per failed run");
  }

  @ParameterizedTest
  @ValueSource(strings = {"DirectRunner", "FlinkRunner"})
  void aContinuousRunGoesOnWithTheOtherTablesAfterOneMeetsDataLossMidRun(String runner)
      throws Exception {
    assumeTrue(Runners.available(runner), Runners.missing(runner));
    FakeSqlServer db = source();
    List<JobConfig> configs = new ArrayList<>();
    for (String ci : List.of("dbo_orders", "dbo_customers")) {
      configs.add(
          JobConfig.builder(
                  db.clientFactory(), ci, delta("bronze_" + ci), delta("facts"), delta("control"))
              .appId(ci + "-v1")
              .bootstrap(false)
              .build());
    }
    ContinuousRun run = ContinuousRun.start(configs, runner, () -> {}, Duration.ofMinutes(4));
    ContinuousMode.Stop stop = run.stop();
    ByteArrayOutputStream bytes = run.printed();
    CompletableFuture<List<CdcToDeltaJob.TableOutcome>> job = run.job();
    try {
      await(
          "the first changes are in bronze",
          () ->
              bronze("dbo_orders", "order_id").size() == 2
                  && bronze("dbo_customers", "id").size() == 1,
          job);
      // In one bulk, so the running read never sees order 3's commit before the cleanup.
      try (FakeSqlServer.Bulk bulk = db.bulk()) {
        db.transaction(T0.plusSeconds(600))
            .insert("dbo.orders", Map.of("order_id", 3, "status", "new"))
            .commit();
        Lsn kept =
            db.transaction(T0.plusSeconds(660))
                .insert("dbo.orders", Map.of("order_id", 4, "status", "new"))
                .commit();
        db.cleanup("dbo_orders", kept);
      }
      await(
          "dbo_orders stopped",
          () -> RecordedFailure.last(tables, delta("facts"), "dbo_orders-v1").isPresent(),
          job);
      db.transaction(T0.plusSeconds(720))
          .insert("dbo.customers", Map.of("id", 8, "name", "Bia"))
          .commit();
      await("dbo_customers went on", () -> bronze("dbo_customers", "id").size() == 2, job);
    } finally {
      stop.request();
    }
    List<CdcToDeltaJob.TableOutcome> outcomes = job.get(120, TimeUnit.SECONDS);
    stop.forget();
    String printed = bytes.toString(StandardCharsets.UTF_8);
    assertEquals(
        List.of("dbo_orders/1/2", "dbo_orders/2/2"), bronze("dbo_orders", "order_id"), printed);
    assertEquals(
        List.of("dbo_customers/7/2", "dbo_customers/8/2"), bronze("dbo_customers", "id"), printed);
    assertEquals("dbo_orders", outcomes.get(0).config().captureInstance());
    assertEquals("DataLossError", outcomes.get(0).failure().orElseThrow().errorClass(), printed);
    assertFalse(outcomes.get(1).failed(), printed);
    assertEquals(2, outcomes.get(1).summary().rows(), printed);
  }

  private static void await(String what, BooleanSupplier condition, CompletableFuture<?> job) {
    await(what, condition, job, Duration.ofSeconds(120));
  }

  private static void await(
      String what, BooleanSupplier condition, CompletableFuture<?> job, Duration atMost) {
    org.awaitility.Awaitility.await(what)
        .atMost(atMost)
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

  private static final List<String> SMALL = List.of("dbo_customers", "dbo_items", "dbo_parts");

  /** dbo.orders with rows 0..7; dbo.customers, dbo.items, dbo.parts with row 1; all (id, name). */
  private FakeSqlServer newTables() {
    FakeSqlServer db = FakeSqlServer.open(dir.resolve("source"));
    for (String t : List.of("orders", "customers", "items", "parts")) {
      db.createTable(
          "dbo." + t,
          List.of(ColumnDefinition.of("id", "int"), ColumnDefinition.of("name", "varchar(20)")),
          List.of("id"));
      db.enableCdc("dbo." + t);
    }
    FakeSqlServer.Transaction tx = db.transaction(T0);
    for (String t : List.of("orders", "customers", "items", "parts")) {
      for (int i = t.equals("orders") ? 0 : 1; i < (t.equals("orders") ? 8 : 2); i++) {
        tx.insert("dbo." + t, Map.of("id", i, "name", "new"));
      }
    }
    tx.commit();
    return db;
  }

  /** The facts rows of a batch (event NULL) by app id: their {@code written_at}. */
  private Map<String, List<LocalDateTime>> batchesWritten() {
    Map<String, List<LocalDateTime>> byApp = new TreeMap<>();
    if (!tables.exists(delta("facts"))) {
      return byApp;
    }
    for (Row r : tables.scan(delta("facts"), FactsTable.SCHEMA)) {
      if (r.getString(FactsTable.EVENT) == null) {
        byApp
            .computeIfAbsent(r.getString(FactsTable.APP_ID), a -> new ArrayList<>())
            .add(r.getLogicalTypeValue(FactsTable.WRITTEN_AT, LocalDateTime.class));
      }
    }
    return byApp;
  }

  private List<Row> factsOf(String event) {
    return tables.scan(delta("facts"), FactsTable.SCHEMA).stream()
        .filter(r -> event.equals(r.getString(FactsTable.EVENT)))
        .toList();
  }

  private JobConfig chunked(CdcClientFactory factory, String ci) {
    return JobConfig.builder(factory, ci, delta("bronze_" + ci), delta("facts"), delta("control"))
        .appId(ci + "-v1")
        .maxCommitsPerBatch(4)
        .snapshot(new SnapshotSettings(SnapshotSettings.Mode.CHUNKED, 2, 2, true, 0))
        .build();
  }

  /**
   * New tables bootstrapped with chunked snapshots in one run (docs/many-tables.md "Snapshots of
   * new tables"): the launcher only records S and plans the chunks; the pipeline reads the chunks
   * beside every table's stream, so a large table's snapshot holds back no other table. The large
   * table's first chunk read is held inside the source until the three small tables' first change
   * batches are in the facts table: a run that read the large snapshot before the streams would
   * never get there (and fail after two minutes).
   */
  @ParameterizedTest
  @ValueSource(strings = {Runners.DIRECT, Runners.SPARK, Runners.FLINK})
  void theSmallTablesStreamBeforeTheLargeTablesSnapshotCompletes(String runner) {
    assumeTrue(Runners.available(runner), Runners.missing(runner));
    FakeSqlServer db = newTables();
    ReadTableHook large = holdingOrdersUntilTheSmallTablesStream(db);
    List<JobConfig> configs = new ArrayList<>();
    configs.add(chunked(large, "dbo_orders"));
    for (String ci : SMALL) {
      // One source, one client factory (readAll()'s rule): it holds only the read of dbo.orders.
      configs.add(chunked(large, ci));
    }
    AllRun run = runWithOneUpdateInEveryTable(db, configs, runner);
    List<CdcToDeltaJob.TableOutcome> outcomes = run.outcomes();
    String printed = run.printed();
    assertTrue(large.ran(), printed);
    for (CdcToDeltaJob.TableOutcome outcome : outcomes) {
      assertFalse(outcome.failed(), printed);
    }

    // Every table's snapshot is complete: 8 rows of orders in 4 chunks, 1 row of each small one.
    Map<String, LocalDateTime> completedAt = bootstrapsOfEightAndOneRows();
    assertEquals(
        4,
        factsOf("snapshot_chunk").stream()
            .filter(r -> r.getString(FactsTable.APP_ID).equals("dbo_orders-v1"))
            .count());
    oneBatchOfTwoRowsPerTable();
    // Each small table's first batch was committed before the large snapshot's completion row.
    LocalDateTime largeDone = completedAt.get("dbo_orders-v1");
    assertTheSmallTablesStreamedBefore(largeDone);
    assertBronzeHoldsEachSnapshotAndItsUpdate();
  }

  /** The four snapshot lines, in the tables' order (printed from the committed records). */
  private void assertTheFourSnapshotLines(String printed) {
    assertEquals(
        List.of(
            "Snapshot: 8 rows written to " + delta("bronze_dbo_orders"),
            "Snapshot: 1 row written to " + delta("bronze_dbo_customers"),
            "Snapshot: 1 row written to " + delta("bronze_dbo_items"),
            "Snapshot: 1 row written to " + delta("bronze_dbo_parts")),
        printed.lines().filter(l -> l.startsWith("Snapshot: ")).toList(),
        printed);
  }

  /** {@code reads} saw rows read, none on this thread (the launcher's: the test runs the job). */
  private static void assertReadOffTheLaunchersThread(ReadTableHook reads, String printed) {
    String launcher = Thread.currentThread().getName();
    assertFalse(reads.readingThreads().isEmpty(), printed);
    assertFalse(
        reads.readingThreads().contains(launcher),
        "rows read on the launcher's thread " + launcher + ": " + reads.readingThreads());
  }

  /** Each small table's first batch was committed before the large snapshot's completion row. */
  private void assertTheSmallTablesStreamedBefore(LocalDateTime largeDone) {
    Map<String, List<LocalDateTime>> batches = batchesWritten();
    for (String app : appIdsOf(SMALL)) {
      assertTrue(
          batches.get(app).get(0).isBefore(largeDone),
          app
              + " streamed at "
              + batches.get(app)
              + ", the large snapshot completed at "
              + largeDone);
    }
  }

  /** Bronze of the held-snapshot runs: 8 + 2 rows of orders, 1 + 2 of each small table. */
  private void assertBronzeHoldsEachSnapshotAndItsUpdate() {
    assertEquals(8 + 2, tables.scan(delta("bronze_dbo_orders")).size());
    for (String ci : SMALL) {
      assertEquals(1 + 2, tables.scan(delta("bronze_" + ci)).size(), ci);
    }
  }

  /**
   * The bootstrap rows of the four tables of the held-snapshot runs, asserted: 8 rows of orders, 1
   * of each small table; returns each app id's bootstrap {@code written_at}.
   */
  private Map<String, LocalDateTime> bootstrapsOfEightAndOneRows() {
    Map<String, Long> completed = new TreeMap<>();
    Map<String, LocalDateTime> completedAt = new TreeMap<>();
    for (Row r : factsOf(FactsTable.EVENT_BOOTSTRAP)) {
      completed.put(r.getString(FactsTable.APP_ID), r.getInt64(FactsTable.ROWS));
      completedAt.put(
          r.getString(FactsTable.APP_ID),
          r.getLogicalTypeValue(FactsTable.WRITTEN_AT, LocalDateTime.class));
    }
    assertEquals(
        Map.of("dbo_customers-v1", 1L, "dbo_items-v1", 1L, "dbo_orders-v1", 8L, "dbo_parts-v1", 1L),
        completed);
    return completedAt;
  }

  /**
   * The batches of the held-snapshot runs, asserted: one per table, the update's two rows; returns
   * each app id's batches' {@code written_at}.
   */
  private Map<String, List<LocalDateTime>> oneBatchOfTwoRowsPerTable() {
    Map<String, List<LocalDateTime>> batches = batchesWritten();
    assertEquals(
        List.of("dbo_customers-v1", "dbo_items-v1", "dbo_orders-v1", "dbo_parts-v1"),
        List.copyOf(batches.keySet()));
    for (List<LocalDateTime> written : batches.values()) {
      assertEquals(1, written.size(), batches.toString());
    }
    for (Row r : tables.scan(delta("facts"), FactsTable.SCHEMA)) {
      if (r.getString(FactsTable.EVENT) == null) {
        assertEquals(2L, r.getInt64(FactsTable.ROWS), r.toString());
      }
    }
    return batches;
  }

  private JobConfig whole(CdcClientFactory factory, String ci) {
    return JobConfig.builder(factory, ci, delta("bronze_" + ci), delta("facts"), delta("control"))
        .appId(ci + "-v1")
        .maxCommitsPerBatch(4)
        .build();
  }

  /**
   * New tables bootstrapped with whole snapshots in one run (docs/many-tables.md "Snapshots of new
   * tables"): the launcher only records each S; every table's snapshot is read and committed in the
   * pipeline, in a branch of its own that then streams the table. The large table's read is held
   * inside the source until the three small tables' first change batches are in the facts table: a
   * run that read the large snapshot before the small tables' streams would never get there (and
   * fail after two minutes). No table's rows were read on the launcher's thread.
   */
  @Test
  void theSmallTablesStreamBeforeTheLargeTablesWholeSnapshotCompletes() {
    FakeSqlServer db = newTables();
    ReadTableHook large = holdingOrdersUntilTheSmallTablesStream(db);
    Map<String, LocalDateTime> completedAt =
        wholeSnapshotsThenOneBatchEach(db, large, Runners.DIRECT);
    LocalDateTime largeDone = completedAt.get("dbo_orders-v1");
    assertTheSmallTablesStreamedBefore(largeDone);
  }

  /**
   * A wave whose chunk reads hold every thread they get holds back no other table's snapshot
   * (docs/many-tables.md "Snapshots of new tables"): the large table is read in one wave of all its
   * chunks, each chunk's read held inside the source until the three small tables' whole snapshots
   * are committed, and the small tables' reads meet there ({@link ChunkReadRendezvous}: each waits
   * until all three have started). The DirectRunner's pool has a thread for each of the pipeline's
   * other branches beside the wave's chunks; with one thread to spare the small tables' reads would
   * come one after another and never meet, and the held chunks would fail after two minutes.
   */
  @Test
  void whileAWavesChunkReadsHoldTheirThreadsTheSmallTablesSnapshotsAreReadAtOnce() {
    FakeSqlServer db = newTables();
    ChunkReadRendezvous reads = new ChunkReadRendezvous(db.clientFactory(), SMALL.size());
    ReadTableHook held =
        ReadTableHook.beforeEachReadOf(
            reads,
            "orders",
            () ->
                org.awaitility.Awaitility.await("the small tables' snapshots committed")
                    .atMost(Duration.ofMinutes(2))
                    .pollDelay(Duration.ZERO)
                    .pollInterval(Duration.ofMillis(100))
                    .until(
                        () ->
                            factsOf(FactsTable.EVENT_BOOTSTRAP).stream()
                                    .map(r -> r.getString(FactsTable.APP_ID))
                                    .filter(appIdsOf(SMALL)::contains)
                                    .count()
                                == SMALL.size()));
    List<JobConfig> configs = new ArrayList<>();
    configs.add(
        JobConfig.builder(
                held, "dbo_orders", delta("bronze_dbo_orders"), delta("facts"), delta("control"))
            .appId("dbo_orders-v1")
            .maxCommitsPerBatch(4)
            .snapshot(new SnapshotSettings(SnapshotSettings.Mode.CHUNKED, 2, 8, true, 0))
            .build());
    for (String ci : SMALL) {
      configs.add(whole(held, ci));
    }
    AllRun run = runWithOneUpdateInEveryTable(db, configs, Runners.DIRECT);
    for (CdcToDeltaJob.TableOutcome outcome : run.outcomes()) {
      assertFalse(outcome.failed(), run.printed());
    }
    bootstrapsOfEightAndOneRows();
    long chunks =
        factsOf("snapshot_chunk").stream()
            .filter(r -> r.getString(FactsTable.APP_ID).equals("dbo_orders-v1"))
            .count();
    // The small tables' reads finished first (the chunks' waited for their commits), and met.
    List<ChunkReadRendezvous.Read> done = reads.reads();
    assertEquals(SMALL.size() + chunks, done.size(), done.toString());
    List<ChunkReadRendezvous.Read> small = done.subList(0, SMALL.size());
    assertTrue(small.stream().allMatch(ChunkReadRendezvous.Read::met), done.toString());
    assertEquals(
        SMALL.size(),
        small.stream().map(ChunkReadRendezvous.Read::thread).distinct().count(),
        done.toString());
    oneBatchOfTwoRowsPerTable();
    assertBronzeHoldsEachSnapshotAndItsUpdate();
  }

  /**
   * The same run's whole snapshots read and committed by the pipeline's workers on Spark's {@code
   * local[2]} and Flink's mini-cluster, each table streaming after its own snapshot. No read is
   * held here: Spark runs a bounded pipeline's branches one after another, so a held large snapshot
   * would hold the branches after it (docs/many-tables.md).
   */
  @ParameterizedTest
  @ValueSource(strings = {Runners.SPARK, Runners.FLINK})
  void wholeSnapshotsOfNewTablesAreReadByThePipelineOnSparkAndFlink(String runner) {
    assumeTrue(Runners.available(runner), Runners.missing(runner));
    FakeSqlServer db = newTables();
    ReadTableHook reads = ReadTableHook.beforeReadOf(db.clientFactory(), "orders", () -> {});
    wholeSnapshotsThenOneBatchEach(db, reads, runner);
  }

  /**
   * Runs {@link #newTables} as new targets with whole snapshots through {@code factory}, one update
   * of row 1 in every table after S; asserts each snapshot's rows, each table's one batch of 2
   * rows, bronze, the printed snapshot lines and that no row was read on this (the launcher's)
   * thread.
   *
   * @return when each table's {@code bootstrap} event was written, by app id
   */
  private Map<String, LocalDateTime> wholeSnapshotsThenOneBatchEach(
      FakeSqlServer db, ReadTableHook factory, String runner) {
    List<JobConfig> configs = new ArrayList<>();
    configs.add(whole(factory, "dbo_orders"));
    for (String ci : SMALL) {
      configs.add(whole(factory, ci));
    }
    AllRun run = runWithOneUpdateInEveryTable(db, configs, runner);
    String printed = run.printed();
    assertTrue(factory.ran(), printed);
    for (CdcToDeltaJob.TableOutcome outcome : run.outcomes()) {
      assertFalse(outcome.failed(), printed);
    }
    assertReadOffTheLaunchersThread(factory, printed);

    Map<String, LocalDateTime> completedAt = bootstrapsOfEightAndOneRows();
    oneBatchOfTwoRowsPerTable();
    assertBronzeHoldsEachSnapshotAndItsUpdate();
    // The snapshot lines come from the committed records, in the tables' order, after the run.
    assertTheFourSnapshotLines(printed);
    assertTrue(
        printed.indexOf("New target " + delta("bronze_dbo_parts") + ": taking a snapshot")
            < printed.indexOf("Snapshot: 8 rows"),
        printed);
    List<Long> snapshotRows = new ArrayList<>();
    for (CdcToDeltaJob.TableOutcome outcome : run.outcomes()) {
      snapshotRows.add(outcome.summary().snapshotRows());
    }
    assertEquals(List.of(8L, 1L, 1L, 1L), snapshotRows, printed);
    return completedAt;
  }

  /**
   * A continuous run of new tables (docs/many-tables.md "Snapshots of new tables"): as in a bounded
   * run, the launcher only records each S and the pipeline reads every whole snapshot in a branch
   * of its own, each table following the source from S once its own snapshot is committed. The
   * large table's read is held until the three small tables' first change rows are in the facts
   * table: a run that read the snapshots on the launcher (as continuous runs did) or before the
   * streams would never get there. No row is read on the launcher's thread.
   */
  @ParameterizedTest
  @ValueSource(strings = {Runners.DIRECT, Runners.FLINK})
  void aContinuousRunStreamsTheSmallTablesBeforeTheLargeTablesWholeSnapshotCompletes(String runner)
      throws Exception {
    assumeTrue(Runners.available(runner), Runners.missing(runner));
    FakeSqlServer db = newTables();
    ReadTableHook large = holdingOrdersUntilTheSmallTablesStream(db);
    List<JobConfig> configs = new ArrayList<>();
    configs.add(whole(large, "dbo_orders"));
    for (String ci : SMALL) {
      configs.add(whole(large, ci));
    }
    ContinuousRun run =
        ContinuousRun.start(configs, runner, oneUpdateInEveryTable(db), Duration.ofMinutes(10));
    ContinuousMode.Stop stop = run.stop();
    ByteArrayOutputStream bytes = run.printed();
    CompletableFuture<List<CdcToDeltaJob.TableOutcome>> job = run.job();
    try {
      await(
          "every table's update in bronze",
          () ->
              changeRowsCommitted()
                  .equals(
                      Map.of(
                          "dbo_customers-v1", 2L,
                          "dbo_items-v1", 2L,
                          "dbo_orders-v1", 2L,
                          "dbo_parts-v1", 2L)),
          job,
          // Four pipelines' worth of steps on two cores: as long as the run may follow.
          Duration.ofMinutes(5));
    } catch (org.awaitility.core.ConditionTimeoutException e) {
      throw new AssertionError(
          "committed "
              + changeRowsCommitted()
              + "; printed:\n"
              + bytes.toString(StandardCharsets.UTF_8),
          e);
    } finally {
      stop.request();
    }
    List<CdcToDeltaJob.TableOutcome> outcomes = job.get(120, TimeUnit.SECONDS);
    stop.forget();
    String printed = bytes.toString(StandardCharsets.UTF_8);
    assertTrue(large.ran(), printed);
    assertReadOffTheLaunchersThread(large, printed);
    Map<String, LocalDateTime> completedAt = bootstrapsOfEightAndOneRows();
    assertTheSmallTablesStreamedBefore(completedAt.get("dbo_orders-v1"));
    assertBronzeHoldsEachSnapshotAndItsUpdate();
    List<String> following =
        printed
            .lines()
            .filter(l -> l.startsWith("Following "))
            .map(l -> l.replaceAll("0x[0-9A-F]+", "S"))
            .toList();
    List<String> expected = new ArrayList<>();
    for (String ci : List.of("dbo_orders", "dbo_customers", "dbo_items", "dbo_parts")) {
      expected.add(
          "Following "
              + ci
              + " after S (no batch yet) once its snapshot is committed, polling every 1.0 s when"
              + " caught up, for 600 s or until stopped");
    }
    assertEquals(expected, following, printed);
    // The snapshot lines come from the committed records, in the tables' order, after the stop.
    assertTheFourSnapshotLines(printed);
    assertTrue(
        printed.indexOf("Stopped: every batch read was committed") < printed.indexOf("Snapshot: 8"),
        printed);
    List<Long> snapshotRows = new ArrayList<>();
    List<Long> changeRows = new ArrayList<>();
    for (CdcToDeltaJob.TableOutcome outcome : outcomes) {
      assertFalse(outcome.failed(), printed);
      snapshotRows.add(outcome.summary().snapshotRows());
      changeRows.add(outcome.summary().rows());
    }
    assertEquals(List.of(8L, 1L, 1L, 1L), snapshotRows, printed);
    assertEquals(List.of(2L, 2L, 2L, 2L), changeRows, printed);
  }

  /** The change rows each app id's batches committed (the facts rows without an event). */
  private Map<String, Long> changeRowsCommitted() {
    Map<String, Long> rows = new TreeMap<>();
    if (!tables.exists(delta("facts"))) {
      return rows;
    }
    for (Row r : tables.scan(delta("facts"), FactsTable.SCHEMA)) {
      if (r.getString(FactsTable.EVENT) == null) {
        rows.merge(r.getString(FactsTable.APP_ID), r.getInt64(FactsTable.ROWS), Long::sum);
      }
    }
    return rows;
  }

  /**
   * A whole snapshot read in the pipeline whose S CDC cleanup purged before its commit: that table
   * records {@code table_failed} and commits nothing; the other tables' snapshots commit.
   */
  @Test
  void aRefusedWholeSnapshotInThePipelineFailsItsTableAloneAndTheOthersCommit() {
    FakeSqlServer db = newTables();
    Lsn s = db.openClient().maxLsn().orElseThrow();
    java.util.concurrent.atomic.AtomicReference<Lsn> kept =
        new java.util.concurrent.atomic.AtomicReference<>();
    ReadTableHook purge =
        ReadTableHook.beforeReadOf(
            db.clientFactory(),
            "orders",
            () -> {
              db.transaction(T0.plusSeconds(60))
                  .update("dbo.orders", List.of(1), Map.of("name", "paid"))
                  .commit();
              kept.set(
                  db.transaction(T0.plusSeconds(120))
                      .update("dbo.orders", List.of(2), Map.of("name", "paid"))
                      .commit());
              db.cleanup("dbo_orders", kept.get());
            });
    List<JobConfig> configs = new ArrayList<>();
    configs.add(whole(purge, "dbo_orders"));
    for (String ci : SMALL) {
      configs.add(whole(purge, ci));
    }
    AllRun run = runAll(configs, Runners.DIRECT, () -> {});
    String printed = run.printed();
    assertTrue(purge.ran(), printed);
    List<Boolean> failed = run.outcomes().stream().map(o -> o.failed()).toList();
    assertEquals(List.of(true, false, false, false), failed, printed);
    RecordedFailure recorded =
        RecordedFailure.last(tables, delta("facts"), "dbo_orders-v1").orElseThrow();
    assertEquals("DataLossError", recorded.errorClass());
    assertTrue(
        recorded
            .text()
            .contains(
                "dbo_orders: the bootstrap snapshot of "
                    + delta("bronze_dbo_orders")
                    + " at S = "
                    + s
                    + " outlived the CDC retention"),
        recorded.text());
    assertEquals(1, factsOf(FactsTable.EVENT_TABLE_FAILED).size());
    assertEquals(List.of(), tables.scan(delta("bronze_dbo_orders")));
    assertTrue(
        tables.domainMetadata(delta("bronze_dbo_orders"), StreamPosition.BRONZE_DOMAIN).isEmpty(),
        "no position");
    Map<String, Long> bootstrapped = new TreeMap<>();
    for (Row r : factsOf(FactsTable.EVENT_BOOTSTRAP)) {
      bootstrapped.put(r.getString(FactsTable.APP_ID), r.getInt64(FactsTable.ROWS));
    }
    assertEquals(
        Map.of("dbo_customers-v1", 1L, "dbo_items-v1", 1L, "dbo_parts-v1", 1L), bootstrapped);
    for (String ci : SMALL) {
      assertEquals(1, tables.scan(delta("bronze_" + ci)).size(), ci);
    }
    assertTrue(printed.contains("Stopped dbo_orders: "), printed);
    assertEquals(
        3, printed.lines().filter(l -> l.startsWith("Nothing new: max_lsn " + s)).count(), printed);

    // The next run takes a new snapshot of dbo_orders at the new max_lsn; the others stay put.
    AllRun rerun = runAll(configs, Runners.DIRECT, () -> {});
    List<Boolean> failedAgain = rerun.outcomes().stream().map(o -> o.failed()).toList();
    assertEquals(List.of(false, false, false, false), failedAgain, rerun.printed());
    assertTrue(
        rerun
            .printed()
            .contains(
                "New target "
                    + delta("bronze_dbo_orders")
                    + ": taking a snapshot of dbo_orders stamped with S = "
                    + kept.get()),
        rerun.printed());
    assertEquals(
        List.of("Snapshot: 8 rows written to " + delta("bronze_dbo_orders")),
        rerun.printed().lines().filter(l -> l.startsWith("Snapshot: ")).toList());
    assertEquals(8, tables.scan(delta("bronze_dbo_orders")).size());
    Map<String, Long> after = new TreeMap<>();
    for (Row r : factsOf(FactsTable.EVENT_BOOTSTRAP)) {
      after.put(r.getString(FactsTable.APP_ID), r.getInt64(FactsTable.ROWS));
    }
    assertEquals(
        Map.of("dbo_customers-v1", 1L, "dbo_items-v1", 1L, "dbo_orders-v1", 8L, "dbo_parts-v1", 1L),
        after);
    assertEquals(1, factsOf(FactsTable.EVENT_TABLE_FAILED).size());
  }

  /** The source's clients, holding dbo.orders' first read until the small tables streamed. */
  private ReadTableHook holdingOrdersUntilTheSmallTablesStream(FakeSqlServer db) {
    return ReadTableHook.beforeReadOf(
        db.clientFactory(),
        "orders",
        () ->
            org.awaitility.Awaitility.await("the small tables' first batches in facts")
                .atMost(Duration.ofMinutes(2))
                .pollDelay(Duration.ZERO)
                .pollInterval(Duration.ofMillis(100))
                .until(() -> batchesWritten().keySet().containsAll(appIdsOf(SMALL))));
  }

  /** Runs {@code configs} with one update of row 1 in every table after S. */
  private static AllRun runWithOneUpdateInEveryTable(
      FakeSqlServer db, List<JobConfig> configs, String runner) {
    return runAll(configs, runner, oneUpdateInEveryTable(db));
  }

  /** After S: one change of row 1 in every table, the streams' first batches. */
  private static Runnable oneUpdateInEveryTable(FakeSqlServer db) {
    return () -> {
      FakeSqlServer.Transaction tx = db.transaction(T0.plusSeconds(60));
      for (String t : List.of("orders", "customers", "items", "parts")) {
        tx.update("dbo." + t, List.of(1), Map.of("name", "paid"));
      }
      tx.commit();
    };
  }

  /**
   * A continuous run of {@code configs} (STREAM form, polling every second) started on another
   * thread, stopped by {@link #stop}, printing into {@link #printed}.
   */
  private record ContinuousRun(
      CompletableFuture<List<CdcToDeltaJob.TableOutcome>> job,
      ContinuousMode.Stop stop,
      ByteArrayOutputStream printed) {
    static ContinuousRun start(
        List<JobConfig> configs, String runner, Runnable beforeStream, Duration runFor) {
      ContinuousMode.Stop stop = ContinuousMode.Stop.create();
      ByteArrayOutputStream bytes = new ByteArrayOutputStream();
      PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);
      return new ContinuousRun(
          CompletableFuture.supplyAsync(
              () ->
                  CdcToDeltaJob.runAllContinuously(
                      configs,
                      Runners.options(runner),
                      out,
                      beforeStream,
                      new Continuous(Continuous.Form.STREAM, Duration.ofSeconds(1), runFor, stop))),
          stop,
          bytes);
    }
  }

  private static List<String> appIdsOf(List<String> cis) {
    return cis.stream().map(ci -> ci + "-v1").toList();
  }
}
