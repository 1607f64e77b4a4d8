package org.lakecdc.pipelines;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
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
import java.time.Clock;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.lakecdc.io.mssqlcdc.schema.MetadataColumns;
import org.lakecdc.pipelines.targets.JobConfig;
import org.lakecdc.transforms.bronze.CrashPlan;
import org.lakecdc.transforms.delta.DeltaTables;
import org.lakecdc.transforms.finalization.Granularity;
import org.lakecdc.transforms.history.HistoryApplier;
import org.lakecdc.transforms.history.HistorySpec;
import org.lakecdc.transforms.history.HistoryState;
import org.lakecdc.transforms.silver.LatestImage;
import org.lakecdc.transforms.silver.SilverTarget;

/**
 * History tables kept by {@link ApplyChanges} ({@code --history}) on the DirectRunner, read back as
 * of instants by {@link Show} ({@code --asOf}); the refusals of their options.
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class HistoryJobTest {
  @TempDir Path dir;

  private final DeltaTables tables = DeltaTables.create();

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

  private static Run show(String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int code;
    try (PrintStream o = new PrintStream(out, true, StandardCharsets.UTF_8);
        PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8)) {
      code = Show.run(args, o, e);
    }
    return new Run(
        code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  private JobFixture bronze() {
    JobFixture f = JobFixture.history(dir);
    Run run =
        main(
            List.of(
                "--fakePath=" + dir.resolve("source"),
                "--target=" + f.bronze,
                "--factsTable=" + f.facts,
                "--controlTable=" + f.control,
                "--bootstrap=false",
                "--maxCommitsPerBatch=4",
                "--logFile=" + dir.resolve("run.log")));
    assertEquals(0, run.code(), run.out() + run.err());
    return f;
  }

  private List<String> applyArgs(JobFixture f, String... more) {
    List<String> args =
        new ArrayList<>(
            List.of(
                "--fakePath=" + dir.resolve("source"),
                "--captureInstance=dbo_orders",
                "--bronze=" + f.bronze,
                "--control=" + f.control,
                "--facts=" + f.facts,
                "--logFile=" + dir.resolve("apply.log")));
    args.addAll(List.of(more));
    return args;
  }

  private String history() {
    return dir.resolve("delta/history/dbo_orders").toString();
  }

  private static String text(Map<String, Object> row) {
    Object amount = row.get("amount");
    return row.get("status")
        + "/"
        + (amount instanceof BigDecimal d ? d.toPlainString() : String.valueOf(amount));
  }

  /** Key to "status/amount" from bronze rows committed at or before t (no snapshot here). */
  private Map<String, String> fromBronze(String bronze, LocalDateTime t) {
    List<Map<String, Object>> changes = new ArrayList<>();
    for (Map<String, Object> row : tables.scan(bronze)) {
      if (!time(row.get(MetadataColumns.COMMIT_TS)).isAfter(t)) {
        changes.add(row);
      }
    }
    changes.sort(LatestImage.order(true));
    Map<String, String> state = new TreeMap<>();
    for (Map<String, Object> row : changes) {
      String key = String.valueOf(row.get("order_id"));
      if (LatestImage.deletes(((Number) row.get(MetadataColumns.OPERATION)).intValue())) {
        state.remove(key);
      } else {
        state.put(key, text(row));
      }
    }
    return state;
  }

  /** Key to "status/amount" of the history's versions current at t. */
  private Map<String, String> fromHistory(String history, LocalDateTime t) {
    Map<String, String> state = new TreeMap<>();
    for (Map<String, Object> row : tables.scan(history)) {
      if (HistoryState.isCurrentAt(row, t)) {
        assertEquals(null, state.put(String.valueOf(row.get("order_id")), text(row)), "at " + t);
      }
    }
    return state;
  }

  /**
   * The proof: at every commit time of bronze and half a second after it, the history's versions
   * current then equal bronze's latest image per key.
   *
   * @return the instants checked
   */
  private int proof(String bronze) {
    TreeSet<LocalDateTime> instants = new TreeSet<>();
    for (Map<String, Object> row : tables.scan(bronze)) {
      LocalDateTime t = time(row.get(MetadataColumns.COMMIT_TS));
      instants.add(t);
      instants.add(t.plusNanos(500_000_000));
    }
    for (LocalDateTime t : instants) {
      assertEquals(fromBronze(bronze, t), fromHistory(history(), t), "at " + t);
    }
    return instants.size();
  }

  private static LocalDateTime time(Object value) {
    return value instanceof Instant i
        ? LocalDateTime.ofInstant(i, ZoneOffset.UTC)
        : (LocalDateTime) value;
  }

  @Test
  void applyChangesBuildsAHistoryWhoseStateAtEveryInstantIsBronzesLatestImage() {
    JobFixture f = bronze();
    Run run = applyChanges(applyArgs(f, "--history=" + history()));
    assertEquals(0, run.code(), run.out() + run.err());
    List<String> lines = run.out().lines().filter(l -> l.startsWith("History dbo_orders")).toList();
    assertEquals(1, lines.size(), run.out());
    assertTrue(
        lines.get(0).startsWith("History dbo_orders " + history() + ": applied_lsn 0x"), run.out());
    assertTrue(
        lines.get(0).endsWith(", 1 wave, 26 versions opened, 2 closed, 0 updated in place"),
        lines.get(0));
    assertEquals("history", tables.describe(history()).kind().orElseThrow());

    TreeSet<LocalDateTime> instants = new TreeSet<>();
    for (Map<String, Object> row : tables.scan(f.bronze)) {
      LocalDateTime t = time(row.get(MetadataColumns.COMMIT_TS));
      instants.add(t);
      instants.add(t.plusNanos(500_000_000));
      instants.add(t.minusNanos(1_000));
    }
    for (LocalDateTime t : instants) {
      assertEquals(fromBronze(f.bronze, t), fromHistory(history(), t), "at " + t);
    }
    assertEquals(30, instants.size());
    assertEquals(24, fromHistory(history(), instants.last()).size());

    // Status shows the history's position and verdict as it shows silver's.
    ByteArrayOutputStream statusOut = new ByteArrayOutputStream();
    int statusCode;
    try (PrintStream o = new PrintStream(statusOut, true, StandardCharsets.UTF_8);
        PrintStream e =
            new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8)) {
      statusCode =
          Status.run(
              new String[] {
                "--factsTable=" + f.facts,
                "--controlTable=" + f.control,
                "--fakePath=" + dir.resolve("source")
              },
              o,
              e,
              java.time.Clock.systemUTC(),
              dir.resolve("no-demo-source"));
    }
    assertEquals(0, statusCode);
    List<String> status = statusOut.toString(StandardCharsets.UTF_8).lines().toList();
    int at = status.indexOf(history() + "  (history)");
    assertTrue(at > 0, String.join("\n", status));
    String applied = lines.get(0).replaceAll(".*applied_lsn (0x[0-9A-F]+),.*", "$1");
    assertEquals("  applied_lsn       " + applied, status.get(at + 1));
    assertTrue(
        status.get(at + 2).startsWith("  finalized_until   2026-09-28T"), status.get(at + 2));

    long version = tables.version(history());
    Run again = applyChanges(applyArgs(f, "--history=" + history()));
    assertEquals(0, again.code(), again.out() + again.err());
    assertTrue(again.out().contains(", 0 waves, 0 versions opened, 0 closed"), again.out());
    assertEquals(version, tables.version(history()));

    Run maintained =
        applyChanges(applyArgs(f, "--history=" + history(), "--maintenance=compact,vacuum"));
    assertEquals(0, maintained.code(), maintained.out() + maintained.err());
    // The wave wrote the versions it closed and the current ones to two small files, one of each
    // kind, and neither has deleted rows: compaction never packs the two kinds together.
    assertEquals(
        "History maintenance dbo_orders "
            + history()
            + ": nothing to compact, vacuumed 0 files (0 bytes)\n",
        maintained.out());
  }

  @Test
  void showAsOfPrintsTheVersionsCurrentAtThatInstant() {
    JobFixture f = bronze();
    Run run = applyChanges(applyArgs(f, "--history=" + history()));
    assertEquals(0, run.code(), run.out() + run.err());
    LocalDateTime last =
        tables.scan(f.bronze).stream()
            .map(r -> time(r.get(MetadataColumns.COMMIT_TS)))
            .max(LocalDateTime::compareTo)
            .orElseThrow();
    String at = last.toInstant(ZoneOffset.UTC).toString();
    Run shown = show("--table=" + history(), "--asOf=" + at, "--limit=100");
    assertEquals(0, shown.code(), shown.err());
    List<String> out = shown.out().lines().toList();
    assertEquals(
        history() + " (history): as of " + at + ", the first 24 rows in stored order", out.get(0));
    assertEquals(26, out.size(), shown.out());
    assertTrue(out.get(1).startsWith("order_id"), out.get(1));
    assertEquals(
        fromHistory(history(), last).size(), out.size() - 2, "one row per key current at " + at);
  }

  /**
   * An instant before the history's first version (a history built after a re-snapshot starts at
   * the current generation) shows no row, and says where the history starts instead of "the first 0
   * rows".
   */
  @Test
  void showAsOfBeforeTheHistoryStartsSaysWhereItStarts() {
    JobFixture f = bronze();
    Run run = applyChanges(applyArgs(f, "--history=" + history()));
    assertEquals(0, run.code(), run.out() + run.err());
    Instant first =
        tables.scan(history()).stream()
            .map(r -> time(r.get(org.lakecdc.transforms.history.HistoryTable.VALID_FROM_TS)))
            .min(LocalDateTime::compareTo)
            .orElseThrow()
            .toInstant(ZoneOffset.UTC);
    Instant before = first.minusSeconds(3600);

    Run shown = show("--table=" + history(), "--asOf=" + before);

    assertEquals(0, shown.code(), shown.err());
    assertEquals(
        history()
            + " (history): as of "
            + before
            + ", no version of any key: the history starts at "
            + first
            + "\n",
        shown.out());
    Run atFirst = show("--table=" + history(), "--asOf=" + first, "--limit=1");
    assertEquals(
        history() + " (history): as of " + first + ", the first row in stored order",
        atFirst.out().lines().findFirst().orElseThrow());
  }

  @Test
  void badHistoryOptionsAreRefusedWithOneLineAndNothingWritten() {
    JobFixture f = bronze();
    long bronzeVersion = tables.version(f.bronze);
    Run columns =
        applyChanges(applyArgs(f, "--history=" + history(), "--historyColumns=status,price"));
    assertEquals(2, columns.code(), columns.out() + columns.err());
    assertEquals(
        "error: --historyColumns: [price] are not captured columns of bronze "
            + f.bronze
            + " (captured: order_id, status, amount, updated_at); nothing was written\n",
        columns.err());
    assertFalse(tables.exists(history()));

    for (String other : List.of(f.bronze, f.facts, f.control)) {
      Run kind = applyChanges(applyArgs(f, "--history=" + other));
      assertEquals(2, kind.code(), kind.out() + kind.err());
      assertEquals(
          "error: --history: "
              + other
              + " is another table of this run (bronze, silver, facts or control), not a history"
              + " table: give the history a path of its own; nothing was written\n",
          kind.err());
    }
    String silver = dir.resolve("delta/silver/dbo_orders").toString();
    Run silverRun = applyChanges(applyArgs(f, "--silver=" + silver));
    assertEquals(0, silverRun.code(), silverRun.out() + silverRun.err());
    long silverVersion = tables.version(silver);
    Run onSilver = applyChanges(applyArgs(f, "--history=" + silver));
    assertEquals(2, onSilver.code(), onSilver.out() + onSilver.err());
    assertEquals(
        "error: --history: "
            + silver
            + " is a silver table, not a history table: give the history a path of its own;"
            + " nothing was written\n",
        onSilver.err());
    assertEquals(silverVersion, tables.version(silver));
    assertEquals(bronzeVersion, tables.version(f.bronze));

    Run badInstant = show("--table=" + f.bronze, "--asOf=2026-11-01 08:30");
    assertEquals(2, badInstant.code());
    assertEquals(
        "error: --asOf must be an ISO-8601 instant with a zone offset such as"
            + " 2026-11-01T08:30:00Z, not '2026-11-01 08:30'\n",
        badInstant.err());
    Run notHistory = show("--table=" + f.bronze, "--asOf=2026-11-01T08:30:00Z");
    assertEquals(2, notHistory.code());
    assertEquals(
        "error: --asOf reads a history table; "
            + f.bronze
            + " is a bronze table (give --table a history table, or leave --asOf out)\n",
        notHistory.err());
  }

  @Test
  void theMainJobAppliesItsHistoryOnceItsBronzeCommitsAreDone() {
    JobFixture f = JobFixture.history(dir);
    Run run =
        main(
            List.of(
                "--fakePath=" + dir.resolve("source"),
                "--target=" + f.bronze,
                "--factsTable=" + f.facts,
                "--controlTable=" + f.control,
                "--bootstrap=false",
                "--maxCommitsPerBatch=4",
                "--history=" + history(),
                "--logFile=" + dir.resolve("run.log")));
    assertEquals(0, run.code(), run.out() + run.err());
    List<String> lines = run.out().lines().filter(l -> l.startsWith("History dbo_orders")).toList();
    assertEquals(1, lines.size(), run.out());
    assertTrue(
        lines.get(0).startsWith("History dbo_orders " + history() + ": applied_lsn 0x"), run.out());
    assertTrue(
        lines.get(0).endsWith(", 1 wave, 26 versions opened, 2 closed, 0 updated in place"),
        lines.get(0));
    assertEquals(20, proof(f.bronze));
  }

  /**
   * The proof on the SparkRunner and the FlinkRunner, where the main job applies the history in its
   * pipeline: at every bronze commit time and half a second after it, the versions current then
   * equal bronze's latest image per key, across an update, deletes, a re-insert of a deleted key
   * and three changes of one key in one transaction.
   */
  @ParameterizedTest
  @ValueSource(strings = {Runners.SPARK, Runners.FLINK})
  void theHistoryProofHoldsOnEveryRunner(String runner) {
    assumeTrue(Runners.available(runner), Runners.missing(runner));
    JobFixture f = JobFixture.history(dir);
    f.db
        .transaction(at(126))
        .insert(ORDERS, order(200, "back", "2.00"))
        .update(ORDERS, List.of(900), Map.of("status", "paid"))
        .update(ORDERS, List.of(900), Map.of("status", "shipped"))
        .commit();
    f.db.transaction(at(127)).delete(ORDERS, List.of(900)).commit();
    f.run(
        f.config().toBuilder().history(history(), List.of()).build(),
        Runners.options(runner),
        () -> {});
    List<String> lines =
        f.lastOutput.lines().filter(l -> l.startsWith("History dbo_orders")).toList();
    assertEquals(1, lines.size(), f.lastOutput);
    assertTrue(
        lines.get(0).endsWith(", 29 versions opened, 5 closed, 0 updated in place"), lines.get(0));
    assertEquals(24, proof(f.bronze));
    assertEquals(
        Map.of("1", "new/1.00", "100", "paid/100.00", "200", "back/2.00"), threeOrdersAt1600());
  }

  /**
   * A crash in the middle of a history wave the main job's pipeline applies (the apply after a
   * bronze batch, in its second wave: after the wave's file is written and before its commit, or
   * right after the commit), then a rerun: the history holds exactly the rows a fresh applier
   * writes from the final bronze in one call (what an uninterrupted run holds), and the proof holds
   * at every bronze commit time and half a second after it.
   */
  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  void aCrashInThePipelinesHistoryWaveThenARerunGivesTheUninterruptedHistory(boolean afterCommit) {
    JobFixture f = JobFixture.history(dir);
    JobConfig config =
        f.config().toBuilder().history(history(), List.of()).silverWaveRows(2).build();
    f.run(config);
    f.db.transaction(at(126)).insert(ORDERS, order(200, "back", "2.00")).commit();
    f.db.transaction(at(127)).update(ORDERS, List.of(900), Map.of("status", "paid")).commit();
    f.db.transaction(at(128)).delete(ORDERS, List.of(900)).commit();
    long before = tables.version(history());
    long batch = tables.latestTransactionVersion(f.bronze, JobFixture.CI).orElseThrow() + 1;
    JobConfig crashing =
        config.toBuilder()
            .maxCommitsPerBatch(100)
            .crash(CrashPlan.history(batch, afterCommit))
            .build();

    RuntimeException crash = assertThrows(RuntimeException.class, () -> f.run(crashing));
    boolean simulated = false;
    for (Throwable t = crash; t != null; t = t.getCause()) {
      simulated |= t instanceof SilverTarget.SimulatedSilverCrash;
    }
    assertTrue(simulated, crash.toString());
    // Its first wave (the re-insert of 200) is committed; the second (900 paid) only after it.
    assertEquals(before + (afterCommit ? 2 : 1), tables.version(history()));

    f.run(config.toBuilder().maxCommitsPerBatch(100).build());
    String reference = dir.resolve("delta/history/reference").toString();
    new HistoryApplier(tables, Clock.systemUTC())
        .apply(
            new HistorySpec(
                f.bronze,
                reference,
                f.control,
                f.facts,
                Set.of(JobFixture.CI),
                List.of("order_id"),
                List.of(),
                Granularity.HOUR,
                JobConfig.DEFAULT_SILVER_WAVE_ROWS));
    List<String> rows = allColumns(history());
    assertEquals(28, rows.size(), String.join("\n", rows));
    assertEquals(allColumns(reference), rows);
    assertEquals(26, proof(f.bronze));
    assertEquals(
        Map.of("1", "new/1.00", "100", "paid/100.00", "200", "back/2.00"), threeOrdersAt1600());
    assertFalse(fromHistory(history(), LocalDateTime.of(2026, 9, 28, 16, 0)).containsKey("900"));
  }

  /** Orders 1, 100 and 200 as the history's versions current at 2026-09-28T16:00 show them. */
  private Map<String, String> threeOrdersAt1600() {
    Map<String, String> state = fromHistory(history(), LocalDateTime.of(2026, 9, 28, 16, 0));
    return Map.of("1", state.get("1"), "100", state.get("100"), "200", state.get("200"));
  }

  /** Every row of a table, all its columns by name, sorted. */
  private List<String> allColumns(String table) {
    List<String> rows = new ArrayList<>();
    for (Map<String, Object> row : tables.scan(table)) {
      rows.add(new TreeMap<>(row).toString());
    }
    rows.sort(null);
    return rows;
  }

  @Test
  void theMainJobRefusesBadHistoryOptionsBeforeWritingAnything() throws Exception {
    JobFixture f = new JobFixture(dir);
    f.db.enableCdc(JobFixture.ORDERS);
    f.db.createTable(
        "dbo.customers",
        List.of(
            org.lakecdc.io.mssqlcdc.fake.ColumnDefinition.of("id", "int"),
            org.lakecdc.io.mssqlcdc.fake.ColumnDefinition.of("name", "varchar(20)")),
        List.of("id"));
    f.db.enableCdc("dbo.customers");
    f.insertCommit(0, 2);
    String shared = dir.resolve("delta/history/shared").toString();
    java.nio.file.Path file = dir.resolve("tables.txt");
    java.nio.file.Files.writeString(
        file, "dbo_orders --history=" + shared + "\ndbo_customers --history=" + shared + "\n");
    List<String> common =
        List.of(
            "--fakePath=" + dir.resolve("source"),
            "--factsTable=" + dir.resolve("delta/facts"),
            "--controlTable=" + dir.resolve("delta/control"),
            "--bootstrap=false",
            "--logFile=" + dir.resolve("run.log"));
    List<List<String>> cases =
        List.of(
            List.of("--tablesFile=" + file, "--targetTemplate=" + dir.resolve("delta/{ci}")),
            List.of(
                "--tables=dbo_orders,dbo_customers",
                "--targetTemplate=" + dir.resolve("delta/{ci}"),
                "--history=" + shared),
            List.of(
                "--captureInstance=dbo_orders",
                "--target=" + dir.resolve("delta/dbo_orders"),
                "--history=" + history(),
                "--historyColumns=status,price"),
            List.of(
                "--captureInstance=dbo_orders",
                "--target=" + dir.resolve("delta/dbo_orders"),
                "--history=" + dir.resolve("delta/facts")));
    List<String> errors = new ArrayList<>();
    for (List<String> more : cases) {
      List<String> args = new ArrayList<>(common);
      args.addAll(more);
      Run run = main(args);
      assertEquals(2, run.code(), run.out() + run.err());
      assertFalse(java.nio.file.Files.exists(dir.resolve("delta")), run.err());
      errors.add(run.err().strip());
    }
    assertEquals(
        List.of(
            "error: --history: tables dbo_orders (--tablesFile "
                + file
                + " line 1) and dbo_customers (--tablesFile "
                + file
                + " line 2) would share the history table "
                + shared
                + ": give each table its own history; nothing was written",
            "error: --history names one table's history; with --tables or --tablesFile use"
                + " --historyTemplate (with {ci}), or a table's own --history in --tablesFile",
            "error: --historyColumns: [price] are not captured columns of dbo_orders (captured:"
                + " order_id, status, amount, updated_at); nothing was written",
            "error: --history: "
                + dir.resolve("delta/facts")
                + " is another table of this run (bronze, silver, facts or control), not a history"
                + " table: give the history a path of its own; nothing was written"),
        errors);
  }
}
