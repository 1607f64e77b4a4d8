package org.lakecdc.pipelines;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import org.apache.beam.sdk.schemas.Schema;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.io.mssqlcdc.fake.ColumnDefinition;
import org.lakecdc.io.mssqlcdc.fake.FakeSqlServer;
import org.lakecdc.pipelines.cli.JobExit;
import org.lakecdc.transforms.delta.DeltaColumn;
import org.lakecdc.transforms.delta.DeltaTables;
import org.lakecdc.transforms.silver.SilverTable;

/**
 * A job given another table's silver or bronze without {@code --captureInstance} takes the capture
 * instance from the table itself (silver's table properties {@code mssql_cdc.capture_instances} and
 * {@code mssql_cdc.bronze}, bronze's position), and never blames an option the command line did not
 * give: the demo's {@code dbo_orders} (the default capture instance) and {@code dbo_lineitem},
 * whose silver is reconciled.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class SilverSourceTest {
  private static final Instant T = Instant.parse("2026-11-01T05:00:00Z");

  @TempDir Path dir;

  private final DeltaTables tables = DeltaTables.create();

  private record Run(int code, String out, String err) {}

  private interface Job {
    int run(String[] args, PrintStream out, PrintStream err);
  }

  private Run run(Job job, String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    PrintStream console = System.out;
    int code;
    try (PrintStream o = new PrintStream(out, true, StandardCharsets.UTF_8);
        PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8)) {
      System.setOut(o);
      List<String> all = new ArrayList<>(List.of(args));
      all.add("--fakePath=" + dir.resolve("source"));
      all.add("--logFile=" + dir.resolve("run.log"));
      code = job.run(all.toArray(String[]::new), o, e);
    } finally {
      System.setOut(console);
    }
    return new Run(
        code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  private String delta(String name) {
    return dir.resolve("delta").resolve(name).toString();
  }

  /**
   * dbo.orders (o_orderkey, o_orderstatus char(1)) and dbo.lineitem (l_orderkey, l_linenumber,
   * l_quantity), three line items in one commit; the main job streams dbo_lineitem into its bronze
   * and, with {@code silver}, its silver.
   */
  private void lineitems(String... more) {
    FakeSqlServer db = FakeSqlServer.open(dir.resolve("source"));
    db.createTable(
        "dbo.orders",
        List.of(
            ColumnDefinition.of("o_orderkey", "int"),
            ColumnDefinition.of("o_orderstatus", "char(1)")),
        List.of("o_orderkey"));
    db.createTable(
        "dbo.lineitem",
        List.of(
            ColumnDefinition.of("l_orderkey", "int"),
            ColumnDefinition.of("l_linenumber", "int"),
            ColumnDefinition.of("l_quantity", "decimal(15,2)")),
        List.of("l_orderkey", "l_linenumber"));
    db.enableCdc("dbo.orders");
    db.enableCdc("dbo.lineitem");
    FakeSqlServer.Transaction tx = db.transaction(T);
    tx.insert("dbo.orders", Map.of("o_orderkey", 1, "o_orderstatus", "F"));
    for (int line = 1; line <= 3; line++) {
      tx.insert(
          "dbo.lineitem",
          Map.of(
              "l_orderkey", 1, "l_linenumber", line, "l_quantity", new BigDecimal(line + ".00")));
    }
    tx.commit();
    List<String> args =
        new ArrayList<>(
            List.of(
                "--captureInstance=dbo_lineitem",
                "--target=" + delta("dbo_lineitem"),
                "--factsTable=" + delta("facts"),
                "--controlTable=" + delta("table_finalization"),
                "--bootstrap=false"));
    args.addAll(List.of(more));
    Run streamed =
        run(
            (a, o, e) -> CdcToDelta.run(a, e, UnaryOperator.identity()),
            args.toArray(String[]::new));
    assertEquals(0, streamed.code(), streamed.out() + streamed.err());
  }

  private Run reconcile(String... args) {
    List<String> all = new ArrayList<>(List.of(args));
    all.add("--report=" + delta("reconcile"));
    all.add("--factsTable=" + delta("facts"));
    return run(Reconcile::run, all.toArray(String[]::new));
  }

  /**
   * The case: Reconcile of dbo_lineitem's silver without --captureInstance blamed --keys
   * (o_orderkey, dbo_orders's key); it now reconciles the table silver records.
   */
  @Test
  void reconcileTakesTheCaptureInstanceAndBronzeSilverRecords() {
    lineitems("--silver=" + delta("silver/dbo_lineitem"));
    Map<String, String> properties = tables.describe(delta("silver/dbo_lineitem")).properties();
    assertEquals("dbo_lineitem", properties.get(SilverTable.CAPTURE_INSTANCES));
    assertEquals(delta("dbo_lineitem"), properties.get(SilverTable.BRONZE));

    Run run = reconcile("--silver=" + delta("silver/dbo_lineitem"), "--sample=1");
    assertEquals(0, run.code(), run.out() + run.err());
    assertEquals("", run.err());
    List<String> lines = run.out().lines().toList();
    assertTrue(
        lines
            .get(0)
            .startsWith(
                "Reconcile of dbo_lineitem (dbo.lineitem) with silver "
                    + delta("silver/dbo_lineitem")
                    + " version "),
        run.out());
    assertEquals("  bronze generation 0 (app id dbo_lineitem)", lines.get(1), run.out());
    assertEquals("  silver matches the source", lines.get(lines.size() - 1), run.out());

    Run other =
        reconcile("--silver=" + delta("silver/dbo_lineitem"), "--captureInstance=dbo_orders");
    assertEquals(JobExit.BAD_OPTION, other.code(), other.out() + other.err());
    assertEquals(
        "error: --captureInstance dbo_orders: silver "
            + delta("silver/dbo_lineitem")
            + " holds dbo_lineitem (its table property mssql_cdc.capture_instances): leave"
            + " --captureInstance out, or name the silver table of dbo_orders\n",
        other.err());
  }

  /**
   * A silver created before lakecdc recorded its capture instance: the refusal names the default
   * capture instance and what to pass, not --keys.
   */
  @Test
  void aSilverWithoutARecordNamesTheDefaultCaptureInstance() {
    lineitems();
    String silver = delta("silver/old");
    Schema bronze = DeltaColumn.toBeamSchema(tables.describe(delta("dbo_lineitem")).columns());
    tables.createIfAbsent(silver, SilverTable.definition(SilverTable.schema(bronze)));
    Run applied =
        run(
            ApplyChanges::run,
            "--captureInstance=dbo_lineitem",
            "--bronze=" + delta("dbo_lineitem"),
            "--silver=" + silver,
            "--control=" + delta("table_finalization"),
            "--facts=" + delta("facts"));
    assertEquals(0, applied.code(), applied.out() + applied.err());
    assertFalse(tables.describe(silver).properties().containsKey(SilverTable.CAPTURE_INSTANCES));

    Run run = reconcile("--silver=" + silver);
    assertEquals(JobExit.BAD_OPTION, run.code(), run.out() + run.err());
    assertEquals(
        "error: dbo_orders's key column o_orderkey (its unique index) is not among the columns of"
            + " silver "
            + silver
            + " (l_orderkey, l_linenumber, l_quantity): silver records no capture instance (it was"
            + " created before lakecdc recorded one in its table property"
            + " mssql_cdc.capture_instances): pass --captureInstance=<the capture instance silver"
            + " holds> (without it, dbo_orders)\n",
        run.err());
    assertFalse(Files.exists(dir.resolve("delta/reconcile")), "nothing is written");
  }

  /**
   * ApplyChanges given another table's bronze without --captureInstance takes the capture instance
   * bronze's position records (its key columns, its silver line).
   */
  @Test
  void applyChangesTakesTheCaptureInstanceBronzeRecords() {
    lineitems();
    Run run =
        run(
            ApplyChanges::run,
            "--bronze=" + delta("dbo_lineitem"),
            "--silver=" + delta("silver/dbo_lineitem"),
            "--control=" + delta("table_finalization"),
            "--facts=" + delta("facts"));
    assertEquals(0, run.code(), run.out() + run.err());
    List<String> silverLines = run.out().lines().filter(l -> l.startsWith("Silver ")).toList();
    assertEquals(1, silverLines.size(), run.out());
    assertTrue(
        silverLines.get(0).startsWith("Silver dbo_lineitem " + delta("silver/dbo_lineitem") + ": "),
        run.out());
    assertEquals(
        "dbo_lineitem",
        tables
            .describe(delta("silver/dbo_lineitem"))
            .properties()
            .get(SilverTable.CAPTURE_INSTANCES));
  }
}
