package org.lakecdc.pipelines;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.pipelines.cli.JobExit;
import org.lakecdc.transforms.delta.DeltaTables;

/**
 * The path options of every job, checked before any work: an input table that does not exist (a
 * mistyped {@code --bronze}, {@code --silver}, {@code --target}, ...) is a usage error, not a run
 * that finds nothing and exits 0; an output path that cannot be written ({@code --html} or {@code
 * --report} below a plain file, ...) is refused before the work whose result it would hold. Each is
 * one {@code error:} line naming the option and the path, exit code 2, nothing written.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class PathOptionsTest {
  @TempDir Path dir;

  private final DeltaTables tables = DeltaTables.create();

  /** A job's exit code, standard output and error. */
  private record Run(int code, String out, String err) {}

  private interface Job {
    int run(String[] args, PrintStream out, PrintStream err);
  }

  private Run run(Job job, List<String> args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    PrintStream console = System.out;
    int code;
    try (PrintStream o = new PrintStream(out, true, StandardCharsets.UTF_8);
        PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8)) {
      System.setOut(o);
      List<String> all = new ArrayList<>(args);
      if (all.stream().noneMatch(a -> a.startsWith("--logFile="))) {
        all.add("--logFile=" + dir.resolve("run.log"));
      }
      code = job.run(all.toArray(String[]::new), o, e);
    } finally {
      System.setOut(console);
    }
    return new Run(
        code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  private Run applyChanges(String... args) {
    return run(ApplyChanges::run, List.of(args));
  }

  private Run reconcile(String... args) {
    return run(Reconcile::run, List.of(args));
  }

  private Run main(String... args) {
    return run((a, o, e) -> CdcToDelta.run(a, e, UnaryOperator.identity()), List.of(args));
  }

  private Run backfill(String... args) {
    return run(
        (a, o, e) -> Backfill.run(a, o, e, Clock.systemUTC(), UnaryOperator.identity()),
        List.of(args));
  }

  private Run status(String... args) {
    return run(
        (a, o, e) -> Status.run(a, o, e, Clock.systemUTC(), dir.resolve("none")), List.of(args));
  }

  /** Asserts a refusal: exit code 2, exactly {@code line} on standard error, nothing printed. */
  private static void assertRefused(String line, Run run) {
    assertEquals(JobExit.BAD_OPTION, run.code(), run.out() + run.err());
    assertEquals(line + "\n", run.err());
    assertEquals("", run.out());
  }

  private String delta(String name) {
    return dir.resolve("delta").resolve(name).toString();
  }

  private String source() {
    return "--fakePath=" + dir.resolve("source");
  }

  /** The job fixture's history streamed by the main job into bronze, facts and control. */
  private JobFixture streamed(String... more) {
    JobFixture f = JobFixture.history(dir);
    List<String> args =
        new ArrayList<>(
            List.of(
                source(),
                "--target=" + f.bronze,
                "--factsTable=" + f.facts,
                "--controlTable=" + f.control,
                "--bootstrap=false"));
    args.addAll(List.of(more));
    Run run = main(args.toArray(String[]::new));
    assertEquals(0, run.code(), run.out() + run.err());
    return f;
  }

  /** The case: a mistyped --bronze printed a warning twice, then exit 0. */
  @Test
  void applyChangesOfABronzeThatDoesNotExistIsAUsageError() {
    new JobFixture(dir).db.enableCdc(JobFixture.ORDERS);
    Run run =
        applyChanges(
            source(),
            "--bronze=" + delta("dbo_ordres"),
            "--silver=" + delta("silver/dbo_orders"),
            "--control=" + delta("table_finalization"),
            "--facts=" + delta("facts"));
    assertRefused(
        "error: --bronze "
            + delta("dbo_ordres")
            + " holds no Delta table (no _delta_log with a commit): give the bronze table the"
            + " main job wrote (its --target)",
        run);
    assertFalse(Files.exists(dir.resolve("delta")), "nothing is written");
  }

  /**
   * --tables: a table whose bronze (from --bronzeTemplate) does not exist; a --facts given and
   * missing; --maintenance of a silver that does not exist.
   */
  @Test
  void applyChangesChecksEveryInputTable() {
    JobFixture f = streamed();
    assertRefused(
        "error: --bronzeTemplate "
            + delta("bronze_dbo_orders")
            + " holds no Delta table (no _delta_log with a commit): give the bronze table the"
            + " main job wrote (its --target)",
        applyChanges(
            source(),
            "--tables=dbo_orders",
            "--bronzeTemplate=" + delta("bronze_{ci}"),
            "--silverTemplate=" + delta("silver/{ci}"),
            "--control=" + f.control,
            "--facts=" + f.facts));
    assertRefused(
        "error: --facts "
            + delta("fcats")
            + " holds no Delta table (no _delta_log with a commit): give the facts table the main"
            + " job wrote for these bronze tables (leave --facts out to apply without one)",
        applyChanges(
            source(),
            "--bronze=" + f.bronze,
            "--silver=" + delta("silver/dbo_orders"),
            "--control=" + f.control,
            "--facts=" + delta("fcats")));
    assertRefused(
        "error: --silver "
            + delta("silver/dbo_orders")
            + " holds no Delta table (no _delta_log with a commit): maintenance keeps an existing"
            + " silver table healthy; apply bronze to it first (without --maintenance)",
        applyChanges(
            source(),
            "--bronze=" + f.bronze,
            "--silver=" + delta("silver/dbo_orders"),
            "--control=" + f.control,
            "--facts=" + f.facts,
            "--maintenance=compact"));
    assertFalse(Files.exists(dir.resolve("delta/silver")), "no silver is written");
  }

  @Test
  void reconcileBackfillStatusAndSeedRefuseAMissingInputTable() {
    JobFixture f = streamed("--silver=" + delta("silver/dbo_orders"));
    assertRefused(
        "error: --silver "
            + delta("silver/dbo_ordres")
            + " holds no Delta table: run ApplyChanges (or --silver) first",
        reconcile(
            source(), "--silver=" + delta("silver/dbo_ordres"), "--report=" + delta("reconcile")));
    assertRefused(
        "error: --bronze "
            + delta("dbo_ordres")
            + " holds no Delta table (no _delta_log with a commit): give the bronze table silver"
            + " was applied from (leave --bronze out to take the one silver records)",
        reconcile(
            source(),
            "--silver=" + delta("silver/dbo_orders"),
            "--bronze=" + delta("dbo_ordres"),
            "--report=" + delta("reconcile")));
    assertRefused(
        "error: --factsTable "
            + delta("fcats")
            + " holds no Delta table (no _delta_log with a commit): give the facts table bronze's"
            + " runs wrote (leave --factsTable out to skip the chunk checks)",
        reconcile(
            source(),
            "--silver=" + delta("silver/dbo_orders"),
            "--factsTable=" + delta("fcats"),
            "--report=" + delta("reconcile")));
    assertFalse(Files.exists(dir.resolve("delta/reconcile")), "no report is written");

    assertRefused(
        "error: --target "
            + delta("dbo_ordres")
            + " holds no Delta table (no _delta_log with a commit): give the bronze table whose"
            + " chunked snapshot CdcToDelta --snapshot=chunked opened",
        backfill(
            source(),
            "--target=" + delta("dbo_ordres"),
            "--factsTable=" + f.facts,
            "--controlTable=" + f.control));
    assertRefused(
        "error: --factsTable "
            + delta("fcats")
            + " holds no Delta table (no _delta_log with a commit): give the facts table of the"
            + " run that opened the chunked snapshot",
        backfill(
            source(),
            "--target=" + f.bronze,
            "--factsTable=" + delta("fcats"),
            "--controlTable=" + f.control));

    assertRefused(
        "error: --controlTable "
            + delta("contrl")
            + " holds no Delta table (no _delta_log with a commit): give the control table the job"
            + " wrote (leave --controlTable out to print without verdicts when there is none)",
        status("--factsTable=" + f.facts, "--controlTable=" + delta("contrl")));
    assertRefused(
        "error: --factsTable "
            + delta("fcats")
            + " holds no Delta table (no _delta_log with a commit): give the path or URI of a"
            + " table the job wrote",
        status("--factsTable=" + delta("fcats")));

    assertRefused(
        "error: --seedTable "
            + delta("copy")
            + " is not a Delta table: pass the path or URI of a Delta table holding a copy of the"
            + " source table",
        main(
            source(),
            "--target=" + delta("seeded"),
            "--factsTable=" + f.facts,
            "--controlTable=" + f.control,
            "--seedTable=" + delta("copy"),
            "--seedAsOf=2026-09-28T14:00:00Z"));
    assertFalse(Files.exists(dir.resolve("delta/seeded")), "no bronze is created");
  }

  /** The case: --html below a plain file failed after every row was compared. */
  @Test
  void reconcileRefusesAnOutputItCouldNotWriteBeforeComparing() throws Exception {
    streamed("--silver=" + delta("silver/dbo_orders"));
    Path file = Files.writeString(dir.resolve("afile"), "x");
    assertRefused(
        "error: --html "
            + file.resolve("reconcile.html")
            + " cannot be created: "
            + file
            + " is a file, not a directory; choose a path whose parents are directories",
        reconcile(
            source(),
            "--silver=" + delta("silver/dbo_orders"),
            "--report=" + delta("reconcile"),
            "--html=" + file.resolve("reconcile.html")));
    assertRefused(
        "error: --html "
            + dir.resolve("delta")
            + " is a directory: name a file (in it, or elsewhere)",
        reconcile(
            source(),
            "--silver=" + delta("silver/dbo_orders"),
            "--report=" + delta("reconcile"),
            "--html=" + dir.resolve("delta")));
    assertFalse(Files.exists(dir.resolve("delta/reconcile")), "no report row is appended");
    assertRefused(
        "error: --report "
            + file.resolve("reconcile")
            + " cannot be created: "
            + file
            + " is a file, not a directory; choose a path whose parents are directories",
        reconcile(
            source(),
            "--silver=" + delta("silver/dbo_orders"),
            "--report=" + file.resolve("reconcile")));
    assertRefused(
        "error: --report "
            + delta("facts")
            + " is a facts table, not a reconcile table: give the report a path of its own",
        reconcile(
            source(), "--silver=" + delta("silver/dbo_orders"), "--report=" + delta("facts")));
    long factsVersion = tables.version(delta("facts"));

    Run ok =
        reconcile(
            source(),
            "--silver=" + delta("silver/dbo_orders"),
            "--report=" + delta("reconcile"),
            "--html=" + dir.resolve("pages/reconcile.html"));
    assertEquals(0, ok.code(), ok.out() + ok.err());
    assertTrue(Files.isRegularFile(dir.resolve("pages/reconcile.html")));
    assertEquals(factsVersion, tables.version(delta("facts")), "the facts table is untouched");
  }

  /** Silver and the log file below a plain file are refused before bronze is written. */
  @Test
  void theMainJobAndApplyChangesRefuseOutputsBelowAFile() throws Exception {
    JobFixture f = JobFixture.history(dir);
    Path file = Files.writeString(dir.resolve("afile"), "x");
    String cannot =
        " cannot be created: "
            + file
            + " is a file, not a directory; choose a path whose parents are directories";
    List<String> args =
        List.of(
            source(),
            "--target=" + f.bronze,
            "--factsTable=" + f.facts,
            "--controlTable=" + f.control,
            "--bootstrap=false");
    List<String> silver = new ArrayList<>(args);
    silver.add("--silver=" + file.resolve("silver"));
    assertRefused(
        "error: --silver " + file.resolve("silver") + cannot, main(silver.toArray(String[]::new)));
    List<String> facts = new ArrayList<>(args);
    facts.set(2, "--factsTable=" + file.resolve("facts"));
    assertRefused(
        "error: --factsTable " + file.resolve("facts") + cannot,
        main(facts.toArray(String[]::new)));
    assertFalse(Files.exists(dir.resolve("delta")), "nothing is written");

    List<String> log = new ArrayList<>(args);
    log.add("--logFile=" + file.resolve("job.log"));
    assertRefused(
        "error: --logFile " + file.resolve("job.log") + cannot, main(log.toArray(String[]::new)));
    assertFalse(Files.exists(dir.resolve("delta")), "nothing is written");

    Run streamed = main(args.toArray(String[]::new));
    assertEquals(0, streamed.code(), streamed.out() + streamed.err());
    long control = tables.version(f.control);
    assertRefused(
        "error: --silver " + file.resolve("silver") + cannot,
        applyChanges(
            source(),
            "--bronze=" + f.bronze,
            "--silver=" + file.resolve("silver"),
            "--control=" + f.control,
            "--facts=" + f.facts));
    assertRefused(
        "error: --control " + file.resolve("control") + cannot,
        applyChanges(
            source(),
            "--bronze=" + f.bronze,
            "--silver=" + delta("silver/dbo_orders"),
            "--control=" + file.resolve("control"),
            "--facts=" + f.facts));
    assertEquals(control, tables.version(f.control), "the control table is untouched");
    assertFalse(Files.exists(dir.resolve("delta/silver")));
    assertRefused(
        "error: --output " + file.resolve("status.json") + cannot,
        status("--factsTable=" + f.facts, "--output=" + file.resolve("status.json")));
  }
}
