package org.lakecdc.pipelines;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.io.mssqlcdc.fake.ColumnDefinition;
import org.lakecdc.io.mssqlcdc.fake.FakeSqlServer;
import org.lakecdc.pipelines.cli.JobExit;

/**
 * Values the main job can only judge against the source, refused before it creates anything (one
 * {@code error:} line, exit code 2): a {@code --columns} type that cannot hold a captured column's
 * SQL Server type, and a bad value on a line of {@code --tablesFile}, which names the file, the
 * line and the capture instance. The source is the demo's {@code dbo.orders} ({@code o_orderkey
 * int, o_orderstatus char(1)}) and {@code dbo.lineitem}.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class RefusedBeforeWritingTest {
  @TempDir Path dir;

  private void source() {
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
            ColumnDefinition.of("l_orderkey", "int"), ColumnDefinition.of("l_linenumber", "int")),
        List.of("l_orderkey", "l_linenumber"));
    db.enableCdc("dbo.orders");
    db.enableCdc("dbo.lineitem");
    db.transaction(Instant.parse("2026-11-01T05:00:00Z"))
        .insert("dbo.orders", Map.of("o_orderkey", 1, "o_orderstatus", "F"))
        .insert("dbo.lineitem", Map.of("l_orderkey", 1, "l_linenumber", 1))
        .commit();
  }

  /** The error output of a main-job run, which must be refused (exit 2) with nothing written. */
  private String refused(String... more) {
    List<String> args =
        new ArrayList<>(
            List.of(
                "--fakePath=" + dir.resolve("source"),
                "--factsTable=" + dir.resolve("delta/facts"),
                "--controlTable=" + dir.resolve("delta/table_finalization"),
                "--logFile=" + dir.resolve("run.log")));
    args.addAll(List.of(more));
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    PrintStream console = System.out;
    int code;
    try (PrintStream o = new PrintStream(out, true, StandardCharsets.UTF_8);
        PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8)) {
      System.setOut(o);
      code = CdcToDelta.run(args.toArray(String[]::new), e, UnaryOperator.identity());
    } finally {
      System.setOut(console);
    }
    String text = err.toString(StandardCharsets.UTF_8);
    assertEquals(JobExit.BAD_OPTION, code, out.toString(StandardCharsets.UTF_8) + text);
    assertFalse(Files.exists(dir.resolve("delta")), "nothing is created: " + text);
    return text;
  }

  /**
   * The case: {@code --columns='o_orderkey INT, o_orderstatus INT'} created bronze, facts
   * and control, then failed reading 'F' as INT (exit 1).
   */
  @Test
  void aDeclaredTypeThatCannotHoldTheCapturedTypeIsRefusedBeforeAnythingIsCreated() {
    source();
    assertEquals(
        "error: --columns: the declared type of a column cannot hold every captured value:"
            + " o_orderstatus INT cannot hold char(1) (the type dbo_orders captures; declare STRING"
            + " or another type that holds every char(1) value)\n",
        refused(
            "--target=" + dir.resolve("delta/dbo_orders"),
            "--columns=o_orderkey INT, o_orderstatus INT"));
    assertEquals(
        "error: --columns: No capture instance of the table (dbo_orders) captures o_status; fix"
            + " 'columns' (withColumns) or capture the column on dbo.orders with a new capture"
            + " instance\n",
        refused(
            "--target=" + dir.resolve("delta/dbo_orders"),
            "--columns=o_orderkey INT, o_status STRING",
            "--snapshot=chunked"));
    // Silver's key comes from the source when --keys is not given: the line names --columns.
    assertEquals(
        "error: dbo_orders's key column o_orderkey (its unique index) is not among the columns of"
            + " --columns (o_orderstatus): add them to --columns, or pass --keys=<captured columns>"
            + " for silver\n",
        refused(
            "--target=" + dir.resolve("delta/dbo_orders"),
            "--columns=o_orderstatus STRING",
            "--silver=" + dir.resolve("delta/silver/dbo_orders")));
  }

  /** The case: a bad value in --tablesFile did not say where it was. */
  @Test
  void aBadValueInATablesFileNamesTheFileTheLineAndTheCaptureInstance() throws Exception {
    source();
    Path file = dir.resolve("tables.options");
    Files.writeString(
        file, "# the demo's tables\n" + "dbo_orders\n" + "dbo_lineitem --maxCommitsPerBatch=-2\n");
    String template = "--targetTemplate=" + dir.resolve("delta/{ci}");
    assertEquals(
        "error: --tablesFile "
            + file
            + " line 3 (dbo_lineitem): --maxCommitsPerBatch must be a positive integer, or 0 to"
            + " read up to max_lsn, not '-2'\n",
        refused("--tablesFile=" + file, template));

    Files.writeString(
        file, "dbo_lineitem\ndbo_orders --columns='o_orderkey BIGINT, o_orderstatus DATE'\n");
    assertEquals(
        "error: --tablesFile "
            + file
            + " line 2 (dbo_orders): --columns: the declared type of a column cannot hold every"
            + " captured value: o_orderstatus DATE cannot hold char(1) (the type dbo_orders"
            + " captures; declare STRING or another type that holds every char(1) value)\n",
        refused("--tablesFile=" + file, template));

    Files.writeString(file, "dbo_orders --granularity=hourly\n");
    assertEquals(
        "error: --tablesFile "
            + file
            + " line 1 (dbo_orders): --granularity must be 'minute', 'hour' or 'day', not"
            + " 'hourly'\n",
        refused("--tablesFile=" + file, template));
  }

  /**
   * A new user's case: several bad lines came one run at a time, and not in line order (a word the
   * line cannot hold before an earlier line's value, an unknown capture instance after both). Every
   * bad line is named at once, in line order, one {@code error:} line each; the good lines are not.
   */
  @Test
  void everyBadLineOfATablesFileIsNamedAtOnceInLineOrder() throws Exception {
    source();
    Path file = dir.resolve("tables.options");
    Files.writeString(
        file,
        "# the demo's tables\n"
            + "dbo_orders --maxCommitsPerBatch=-2\n"
            + "dbo_nope\n"
            + "dbo_lineitem --maxCommits=3\n"
            + "\n"
            + "DBO_ORDERS\n"
            + "dbo_lineitem --columns='l_orderkey DATE'\n");
    String template = "--targetTemplate=" + dir.resolve("delta/{ci}");
    assertEquals(
        List.of(
            "error: --tablesFile "
                + file
                + " line 2 (dbo_orders): --maxCommitsPerBatch must be a positive integer, or 0 to"
                + " read up to max_lsn, not '-2'",
            "error: --tablesFile "
                + file
                + " line 3: capture instance 'dbo_nope' not found in the source: nothing was"
                + " written; its capture instances are dbo_orders and dbo_lineitem",
            "error: --tablesFile "
                + file
                + " line 4: --maxCommits is not an option of a table (a table's options: ",
            "error: --tablesFile "
                + file
                + " line 6: capture instance DBO_ORDERS is listed twice (names match ignoring"
                + " case)",
            "error: --tablesFile "
                + file
                + " line 7 (dbo_lineitem): --columns: the declared type of a column cannot hold"
                + " every captured value: l_orderkey DATE cannot hold int (the type dbo_lineitem"
                + " captures; declare INT or another type that holds every int value)"),
        refused("--tablesFile=" + file, template)
            .lines()
            .map(
                l -> l.contains("(a table's options: ") ? l.substring(0, l.indexOf("(a ") + 20) : l)
            .toList());

    // A bad value of the command line, which every table takes: one line, as for one table.
    Files.writeString(file, "dbo_orders\ndbo_lineitem\n");
    assertEquals(
        "error: --tablesFile "
            + file
            + " line 1 (dbo_orders): --maxCommitsPerBatch must be a positive integer, or 0 to read"
            + " up to max_lsn, not '-2'\n",
        refused("--tablesFile=" + file, template, "--maxCommitsPerBatch=-2"));
  }
}
