package org.lakecdc.pipelines;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
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
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.io.mssqlcdc.fake.ColumnDefinition;
import org.lakecdc.io.mssqlcdc.fake.FakeSqlServer;
import org.lakecdc.io.mssqlcdc.schema.MetadataColumns;
import org.lakecdc.pipelines.cdc.CdcToDeltaJob;
import org.lakecdc.pipelines.cdc.Continuous;
import org.lakecdc.pipelines.cdc.ContinuousMode;
import org.lakecdc.pipelines.cdc.TableListing;
import org.lakecdc.pipelines.cli.CommandLine;
import org.lakecdc.pipelines.options.CdcToDeltaOptions;
import org.lakecdc.pipelines.targets.JobConfig;
import org.lakecdc.pipelines.targets.MembershipFacts;
import org.lakecdc.transforms.delta.DeltaColumn;
import org.lakecdc.transforms.delta.DeltaTables;
import org.lakecdc.transforms.facts.FactsTable;

/**
 * Tables added to and removed from a running continuous run of many tables (docs/many-tables.md
 * "Adding and removing tables"): a line appended to its {@code --tablesFile} is snapshotted and
 * then streamed while the others keep committing; a bad line is printed once and ignored; a removed
 * line stops its table, whose position a later run continues from; a changed line is refused.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class TablesJoiningWhileRunningTest {
  private static final Instant T0 = Instant.parse("2026-09-28T13:50:00Z");

  @TempDir Path dir;

  private final DeltaTables tables = DeltaTables.create();

  /** dbo.orders (1, 2 at T0), dbo.customers ((7, Ana) at T0+60 s), dbo.items (40 at T0+120 s). */
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

  private Path file() {
    return dir.resolve("tables.options");
  }

  /** The command line: the simulator, bronze_{ci}, {ci}-v1, the tables file. */
  private String[] args() {
    return new String[] {
      "--fakePath=" + dir.resolve("source"),
      "--tablesFile=" + file(),
      "--targetTemplate=" + delta("bronze_{ci}"),
      "--appIdTemplate={ci}-v1",
      "--factsTable=" + delta("facts"),
      "--controlTable=" + delta("control"),
      "--runner=DirectRunner"
    };
  }

  private TableListing listing() {
    String[] args = args();
    return CdcToDelta.tablesFile(
        args, CommandLine.parse(args, CdcToDeltaOptions.class), UnaryOperator.identity());
  }

  /** The tables the file lists now. */
  private List<JobConfig> listed() {
    return listing().read().stream().map(TableListing.Listed::config).toList();
  }

  /** A continuous run of the tables file on the DirectRunner, and what it printed. */
  private record Job(
      CompletableFuture<List<CdcToDeltaJob.TableOutcome>> outcomes,
      ContinuousMode.Stop stop,
      ByteArrayOutputStream printed) {
    String out() {
      return printed.toString(StandardCharsets.UTF_8);
    }

    /** A stream that prints where the run printed. */
    PrintStream printedTo() {
      return new PrintStream(printed, true, StandardCharsets.UTF_8);
    }

    List<CdcToDeltaJob.TableOutcome> stopped() throws Exception {
      stop.request();
      List<CdcToDeltaJob.TableOutcome> done = outcomes.get(120, TimeUnit.SECONDS);
      stop.forget();
      return done;
    }
  }

  /**
   * A run of a file listing dbo_orders and dbo_customers, once both snapshots are in bronze (the
   * run stopped if they never come).
   */
  private Job followOrdersAndCustomers(Continuous.Form form) throws Exception {
    Files.writeString(file(), "dbo_orders\ndbo_customers\n");
    Job job = follow(form);
    try {
      await(
          "the first changes are streamed",
          () ->
              bronze("dbo_orders", "order_id").size() == 2
                  && bronze("dbo_customers", "id").size() == 1,
          job);
    } catch (RuntimeException | AssertionError e) {
      job.stop().request();
      throw e;
    }
    return job;
  }

  private Job follow(Continuous.Form form) {
    ContinuousMode.Stop stop = ContinuousMode.Stop.create();
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);
    List<JobConfig> configs = listed();
    TableListing listing = listing();
    return new Job(
        CompletableFuture.supplyAsync(
            () ->
                CdcToDeltaJob.runAllContinuously(
                    configs,
                    Runners.options("DirectRunner"),
                    out,
                    () -> {},
                    new Continuous(form, Duration.ofSeconds(1), Duration.ofMinutes(4), stop),
                    listing)),
        stop,
        bytes);
  }

  private static void await(String what, BooleanSupplier condition, Job job) {
    try {
      awaitOrTimeOut(what, condition, job);
    } catch (org.awaitility.core.ConditionTimeoutException e) {
      throw new AssertionError(e.getMessage() + "; printed: " + job.out(), e);
    }
  }

  private static void awaitOrTimeOut(String what, BooleanSupplier condition, Job job) {
    org.awaitility.Awaitility.await(what)
        .atMost(Duration.ofSeconds(150))
        .pollDelay(Duration.ZERO)
        .pollInterval(Duration.ofMillis(200))
        .pollInSameThread()
        .until(
            () -> {
              if (condition.getAsBoolean()) {
                return true;
              }
              if (job.outcomes().isDone()) {
                job.outcomes().get(); // the job failed: its exception
                throw new AssertionError("the job ended before " + what + ": " + job.out());
              }
              return false;
            });
  }

  /** A bronze table's rows as "key/operation", in change order (empty before it exists). */
  private List<String> bronze(String ci, String key) {
    String path = delta("bronze_" + ci);
    List<Row> rows;
    try {
      rows =
          new ArrayList<>(
              tables.scan(path, DeltaColumn.toBeamSchema(tables.describe(path).columns())));
    } catch (RuntimeException e) {
      return List.of();
    }
    // Snapshot rows (no seqval) first, then the changes in LSN order.
    rows.sort(
        Comparator.comparing(
                (Row r) -> r.getString(MetadataColumns.START_LSN),
                Comparator.nullsFirst(Comparator.<String>naturalOrder()))
            .thenComparing(
                r -> r.getString(MetadataColumns.SEQVAL),
                Comparator.nullsFirst(Comparator.<String>naturalOrder()))
            .thenComparing(r -> r.getInt32(key)));
    List<String> out = new ArrayList<>();
    for (Row r : rows) {
      out.add(r.getInt32(key) + "/" + r.getValue(MetadataColumns.OPERATION));
    }
    return out;
  }

  private List<Row> facts() {
    if (!tables.exists(delta("facts"))) {
      return List.of();
    }
    return tables.scan(delta("facts"), FactsTable.SCHEMA);
  }

  /** Per app id, the sum of the rows of the facts rows of {@code event} (null: batches). */
  private Map<String, Long> rowsByApp(String event) {
    Map<String, Long> rows = new TreeMap<>();
    for (Row r : facts()) {
      if (java.util.Objects.equals(event, r.getString(FactsTable.EVENT))) {
        rows.merge(r.getString(FactsTable.APP_ID), r.getInt64(FactsTable.ROWS), Long::sum);
      }
    }
    return rows;
  }

  /** The facts rows of {@code event} as "app_id|target|detail", sorted. */
  private List<String> events(String event) {
    List<String> out = new ArrayList<>();
    for (Row r : facts()) {
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

  /**
   * Per app id, the change rows of the batches written after {@code after} (how many batches carry
   * them depends on when each read polls: an idle poll between two commits ends a batch of 0 rows).
   */
  private Map<String, Long> changeRowsAfter(LocalDateTime after) {
    Map<String, Long> out = new TreeMap<>();
    for (Row r : facts()) {
      if (r.getString(FactsTable.EVENT) == null
          && r.getLogicalTypeValue(FactsTable.WRITTEN_AT, LocalDateTime.class).isAfter(after)) {
        out.merge(r.getString(FactsTable.APP_ID), r.getInt64(FactsTable.ROWS), Long::sum);
      }
    }
    return out;
  }

  private LocalDateTime writtenAt(String event) {
    return facts().stream()
        .filter(r -> event.equals(r.getString(FactsTable.EVENT)))
        .map(r -> r.getLogicalTypeValue(FactsTable.WRITTEN_AT, LocalDateTime.class))
        .findFirst()
        .orElseThrow();
  }

  /** Order 3, committed at T0 + 3 min: the change every test looks for in dbo_orders. */
  private static void commitOrder3(FakeSqlServer db) {
    db.transaction(T0.plusSeconds(180))
        .insert("dbo.orders", Map.of("order_id", 3, "status", "new"))
        .commit();
  }

  private void append(String line) throws Exception {
    Files.writeString(file(), line + "\n", StandardOpenOption.APPEND);
  }

  private String bronzePath(String ci) {
    return org.lakecdc.transforms.delta.TablePaths.normalize(delta("bronze_" + ci));
  }

  @Test
  void aLineAppendedWhileRunningIsSnapshottedThenStreamedWhileTheOthersCommit() throws Exception {
    FakeSqlServer db = source();
    Job job = followOrdersAndCustomers(Continuous.Form.STREAM);
    List<CdcToDeltaJob.TableOutcome> outcomes;
    try {
      append("dbo_items");
      await("dbo_items joined", () -> bronze("dbo_items", "item_id").size() == 1, job);
      commitOrder3(db);
      db.transaction(T0.plusSeconds(240))
          .insert("dbo.customers", Map.of("id", 8, "name", "Bia"))
          .commit();
      db.transaction(T0.plusSeconds(300))
          .insert("dbo.items", Map.of("item_id", 41, "sku", "A-41"))
          .commit();
      await(
          "every table streamed its later change",
          () ->
              bronze("dbo_orders", "order_id").size() == 3
                  && bronze("dbo_customers", "id").size() == 2
                  && bronze("dbo_items", "item_id").size() == 2,
          job);
    } finally {
      outcomes = job.stopped();
    }
    String printed = job.out();
    assertEquals(
        1,
        printed
            .lines()
            .filter(
                l ->
                    l.equals(
                        "Added dbo_items (--tablesFile "
                            + file()
                            + " line 3): planning it, then following it beside the running"
                            + " tables"))
            .count(),
        printed);
    assertEquals(
        List.of("dbo_items-v1|" + bronzePath("dbo_items") + "|--tablesFile " + file() + " line 3"),
        events(MembershipFacts.EVENT_JOINED),
        printed);
    // The joined table's snapshot is read by its own pipeline, which follows it until the run's
    // stop; its snapshot is printed from its record when that pipeline ends; one Stopped line.
    assertEquals(
        List.of(
            "Following dbo_items after S (no batch yet) once its snapshot is committed, polling"
                + " every 1.0 s when caught up, until the run stops"),
        printed
            .lines()
            .filter(l -> l.startsWith("Following dbo_items"))
            .map(l -> l.replaceAll("0x[0-9A-F]+", "S"))
            .toList(),
        printed);
    assertEquals(1, printed.lines().filter(l -> l.startsWith("Stopped")).count(), printed);
    String joinedSnapshot = "Snapshot: 1 row written to " + delta("bronze_dbo_items");
    assertEquals(1, printed.lines().filter(joinedSnapshot::equals).count(), printed);
    assertTrue(printed.indexOf("Following dbo_items") < printed.indexOf(joinedSnapshot), printed);
    assertEquals(
        Map.of("dbo_customers-v1", 1L, "dbo_items-v1", 1L, "dbo_orders-v1", 2L),
        rowsByApp(FactsTable.EVENT_BOOTSTRAP),
        printed);
    assertEquals(
        Map.of("dbo_customers-v1", 1L, "dbo_items-v1", 1L, "dbo_orders-v1", 1L),
        rowsByApp(null),
        printed);
    assertEquals(
        Map.of("dbo_customers-v1", 1L, "dbo_items-v1", 1L, "dbo_orders-v1", 1L),
        changeRowsAfter(writtenAt(MembershipFacts.EVENT_JOINED)),
        "the first two tables commit their changes after the third joined: " + printed);
    assertEquals(List.of("1/0", "2/0", "3/2"), bronze("dbo_orders", "order_id"), printed);
    assertEquals(List.of("40/0", "41/2"), bronze("dbo_items", "item_id"), printed);
    assertEquals(
        List.of("dbo_orders", "dbo_customers", "dbo_items"),
        outcomes.stream().map(o -> o.config().captureInstance()).toList(),
        printed);
    assertEquals(
        List.of(1L, 1L, 1L), outcomes.stream().map(o -> o.summary().rows()).toList(), printed);
    StatusOut status = status(false);
    assertEquals(
        1,
        status.lines().stream()
            .filter(
                l ->
                    l.equals(
                        "  joined            "
                            + writtenText(MembershipFacts.EVENT_JOINED)
                            + " (--tablesFile "
                            + file()
                            + " line 3)"))
            .count(),
        status.out());
  }

  @Test
  void badLinesAppendedWhileRunningArePrintedOnceAndIgnored() throws Exception {
    FakeSqlServer db = source();
    Job job = followOrdersAndCustomers(Continuous.Form.STREAM);
    List<CdcToDeltaJob.TableOutcome> outcomes;
    String unknown =
        "--tablesFile "
            + file()
            + " line 3: capture instance 'dbo_nope' not found in the source (its capture"
            + " instances are dbo_orders, dbo_customers and dbo_items); ignored, the running"
            + " tables go on";
    String badValue =
        "--tablesFile "
            + file()
            + " line 4 (dbo_items): --maxCommitsPerBatch must be a positive integer, or 0 to read"
            + " up to max_lsn, not '-2'; ignored, the running tables go on";
    String twice =
        "--tablesFile "
            + file()
            + " line 6: capture instance DBO_ORDERS is listed twice (names match ignoring case);"
            + " ignored, the running tables go on";
    String[] used = new String[1];
    try {
      used[0] =
          "--tablesFile "
              + file()
              + " line 5 (dbo_items): its bronze table "
              + bronzePath("dbo_orders")
              + " is the one of dbo_orders, a table of this run: give it its own (--target,"
              + " --appId, --silver); ignored, the running tables go on";
      append(
          "dbo_nope\ndbo_items --maxCommitsPerBatch=-2\ndbo_items --target="
              + delta("bronze_dbo_orders")
              + "\nDBO_ORDERS");
      await(
          "the bad lines are printed",
          () ->
              job.out().contains(unknown)
                  && job.out().contains(badValue)
                  && job.out().contains(used[0])
                  && job.out().contains(twice),
          job);
      // A blank first line moves every line down one: the same refusals are not printed again.
      Files.writeString(file(), "\n" + Files.readString(file()));
      Thread.sleep(2_500);
      commitOrder3(db);
      await("dbo_orders went on", () -> bronze("dbo_orders", "order_id").size() == 3, job);
    } finally {
      outcomes = job.stopped();
    }
    String printed = job.out();
    for (String line : List.of(unknown, badValue, used[0], twice)) {
      assertEquals(1, printed.lines().filter(line::equals).count(), "printed once: " + printed);
      String moved = line.replaceAll(" line ([0-9]+)", " line X");
      assertEquals(
          1,
          printed
              .lines()
              .filter(l -> l.replaceAll(" line ([0-9]+)", " line X").equals(moved))
              .count(),
          "not again under its new line number: " + printed);
    }
    assertEquals(List.of(), events(MembershipFacts.EVENT_JOINED), printed);
    assertFalse(tables.exists(delta("bronze_dbo_items")), printed);
    assertEquals(List.of("1/0", "2/0", "3/2"), bronze("dbo_orders", "order_id"), printed);
    assertEquals(
        List.of("dbo_orders", "dbo_customers"),
        outcomes.stream().map(o -> o.config().captureInstance()).toList(),
        printed);
    assertFalse(outcomes.get(0).failed() || outcomes.get(1).failed(), printed);
  }

  @Test
  void aRemovedLineStopsItsTableAndALaterRunContinuesItFromItsPosition() throws Exception {
    FakeSqlServer db = source();
    Job job = followOrdersAndCustomers(Continuous.Form.STREAM);
    List<CdcToDeltaJob.TableOutcome> outcomes;
    try {
      Files.writeString(file(), "dbo_customers --maxCommitsPerBatch=5\n");
      await("dbo_orders left", () -> !events(MembershipFacts.EVENT_LEFT).isEmpty(), job);
      commitOrder3(db);
      db.transaction(T0.plusSeconds(240))
          .insert("dbo.customers", Map.of("id", 8, "name", "Bia"))
          .commit();
      await("dbo_customers went on", () -> bronze("dbo_customers", "id").size() == 2, job);
    } finally {
      outcomes = job.stopped();
    }
    String printed = job.out();
    for (String line :
        List.of(
            "Removed dbo_orders from --tablesFile "
                + file()
                + ": its read stops after the batch it is reading; its position is kept for a"
                + " later run",
            "--tablesFile "
                + file()
                + " line 1 (dbo_customers): its options changed while it runs (from '' to"
                + " '--maxCommitsPerBatch=5'): not applied, it goes on with the options it started"
                + " with; the next run takes the new ones")) {
      assertEquals(1, printed.lines().filter(line::equals).count(), line + " in: " + printed);
    }
    assertEquals(
        List.of("dbo_orders-v1|" + bronzePath("dbo_orders") + "|--tablesFile " + file()),
        events(MembershipFacts.EVENT_LEFT),
        printed);
    assertEquals(List.of("1/0", "2/0"), bronze("dbo_orders", "order_id"), "stopped: " + printed);
    assertEquals(List.of("7/0", "8/2"), bronze("dbo_customers", "id"), printed);
    assertEquals(List.of(0L, 1L), outcomes.stream().map(o -> o.summary().rows()).toList(), printed);

    StatusOut statusText = status(false);
    String left = writtenText(MembershipFacts.EVENT_LEFT);
    assertEquals(
        1,
        statusText.lines().stream()
            .filter(l -> l.equals("  left              " + left + " (--tablesFile " + file() + ")"))
            .count(),
        statusText.out());
    com.fasterxml.jackson.databind.JsonNode json =
        new com.fasterxml.jackson.databind.ObjectMapper().readTree(status(true).out());
    com.fasterxml.jackson.databind.JsonNode orders = null;
    for (com.fasterxml.jackson.databind.JsonNode t : json.get("tables")) {
      if (t.get("app_id").asText().equals("dbo_orders-v1")) {
        orders = t;
      }
    }
    assertEquals(left, orders.get("left").get("written_at").asText(), json.toString());
    assertEquals("--tablesFile " + file(), orders.get("left").get("listing").asText());
    assertEquals(true, orders.get("joined").isNull(), json.toString());

    // The line back: the next run continues dbo_orders from its position, nothing lost or doubled.
    Files.writeString(file(), "dbo_orders\ndbo_customers\n");
    List<CdcToDeltaJob.TableOutcome> again =
        CdcToDeltaJob.runAll(listed(), Runners.options("DirectRunner"), job.printedTo(), () -> {});
    assertEquals(List.of("1/0", "2/0", "3/2"), bronze("dbo_orders", "order_id"), job.out());
    assertEquals(List.of("7/0", "8/2"), bronze("dbo_customers", "id"), job.out());
    assertEquals(List.of(1L, 0L), again.stream().map(o -> o.summary().rows()).toList());
    assertEquals(Map.of("dbo_customers-v1", 1L, "dbo_orders-v1", 1L), rowsByApp(null), job.out());
  }

  /**
   * Repeated bounded runs (Spark's form, here on the DirectRunner): the run after the change reads
   * the file again, takes the added table's snapshot and streams it, and leaves the removed one
   * out.
   */
  @Test
  void repeatedBoundedRunsTakeTheAddedLineAndLeaveTheRemovedOneOut() throws Exception {
    FakeSqlServer db = source();
    Job job = followOrdersAndCustomers(Continuous.Form.REPEAT);
    List<CdcToDeltaJob.TableOutcome> outcomes;
    try {
      Files.writeString(file(), "dbo_customers\ndbo_items\n");
      await(
          "dbo_items joined and dbo_orders left",
          () ->
              bronze("dbo_items", "item_id").size() == 1
                  && !events(MembershipFacts.EVENT_LEFT).isEmpty(),
          job);
      commitOrder3(db);
      db.transaction(T0.plusSeconds(240))
          .insert("dbo.items", Map.of("item_id", 41, "sku", "A-41"))
          .commit();
      await("dbo_items streamed", () -> bronze("dbo_items", "item_id").size() == 2, job);
    } finally {
      outcomes = job.stopped();
    }
    String printed = job.out();
    assertEquals(
        List.of("dbo_items-v1|" + bronzePath("dbo_items") + "|--tablesFile " + file() + " line 2"),
        events(MembershipFacts.EVENT_JOINED),
        printed);
    assertEquals(
        List.of("dbo_orders-v1|" + bronzePath("dbo_orders") + "|--tablesFile " + file()),
        events(MembershipFacts.EVENT_LEFT),
        printed);
    assertEquals(List.of("1/0", "2/0"), bronze("dbo_orders", "order_id"), printed);
    assertEquals(List.of("40/0", "41/2"), bronze("dbo_items", "item_id"), printed);
    assertEquals(
        Map.of("dbo_customers-v1", 1L, "dbo_items-v1", 1L, "dbo_orders-v1", 2L),
        rowsByApp(FactsTable.EVENT_BOOTSTRAP),
        printed);
    // dbo_customers' batches end at the idle entries of the other tables' commits: 0 rows.
    assertEquals(Map.of("dbo_customers-v1", 0L, "dbo_items-v1", 1L), rowsByApp(null), printed);
    assertEquals(
        List.of("dbo_orders", "dbo_customers", "dbo_items"),
        outcomes.stream().map(o -> o.config().captureInstance()).toList(),
        printed);
  }

  /** What Status printed, as text or JSON. */
  private record StatusOut(int code, String out) {
    List<String> lines() {
      return out.lines().toList();
    }
  }

  private StatusOut status(boolean json) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int code;
    List<String> args =
        new ArrayList<>(
            List.of("--factsTable=" + delta("facts"), "--controlTable=" + delta("control")));
    if (json) {
      args.add("--json");
    }
    try (PrintStream o = new PrintStream(out, true, StandardCharsets.UTF_8);
        PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8)) {
      code =
          org.lakecdc.pipelines.Status.run(
              args.toArray(String[]::new),
              o,
              e,
              java.time.Clock.systemUTC(),
              dir.resolve("no-demo-source"));
    }
    assertEquals(0, code, err.toString(StandardCharsets.UTF_8));
    return new StatusOut(code, out.toString(StandardCharsets.UTF_8));
  }

  /** The written_at of the first facts row of {@code event}, as Status prints a time (UTC). */
  private String writtenText(String event) {
    return org.lakecdc.pipelines.cli.TableReading.text(
        writtenAt(event).toInstant(java.time.ZoneOffset.UTC));
  }
}
