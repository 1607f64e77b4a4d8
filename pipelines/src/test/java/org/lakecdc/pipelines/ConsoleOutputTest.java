package org.lakecdc.pipelines;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.lakecdc.pipelines.JobFixture.ORDERS;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.apache.beam.runners.direct.DirectRunner;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.core.LoggerContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.io.mssqlcdc.fake.FakeSqlServer;
import org.lakecdc.pipelines.cdc.CdcToDeltaJob;
import org.lakecdc.pipelines.cdc.CdcToDeltaLauncher;
import org.lakecdc.pipelines.cdc.JobSummary;
import org.lakecdc.pipelines.cli.CommandLine;
import org.lakecdc.pipelines.cli.ConsoleLogging;
import org.lakecdc.pipelines.options.CdcToDeltaOptions;
import org.lakecdc.pipelines.targets.JobConfig;
import org.lakecdc.transforms.snapshot.WriteSnapshotToDelta;

/**
 * What a person sees: the console of a job run under the jobs' logging configuration (log4j2.xml)
 * has one plain line per event, the detail is in the log file; counts take singular or plural.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class ConsoleOutputTest {
  /** A log line's prefix: a time, then a level, a [thread] or a logger name. */
  private static final Pattern LOG_PREFIX =
      Pattern.compile(
          "^(\\d{4}-\\d\\d-\\d\\d )?\\d\\d:\\d\\d:\\d\\d|\\[[^]]*\\] (INFO|WARN)|INFO ");

  @TempDir Path dir;

  /** Runs the history job under log4j2.xml with {@code args}; returns what the console got. */
  private String consoleOfARun(JobFixture fixture, String... args) throws Exception {
    return consoleOfARun(fixture.config(), () -> {}, args);
  }

  /**
   * Runs the job of {@code config} under log4j2.xml with {@code args}, {@code beforeStream} after
   * its bootstrap; returns what the console got.
   */
  private String consoleOfARun(JobConfig config, Runnable beforeStream, String... args)
      throws Exception {
    LoggerContext context = (LoggerContext) LogManager.getContext(false);
    URI tests = context.getConfigLocation();
    URI jobs = ConsoleOutputTest.class.getClassLoader().getResource("log4j2.xml").toURI();
    PrintStream console = System.out;
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (PrintStream captured = new PrintStream(bytes, true, StandardCharsets.UTF_8)) {
      System.setOut(captured);
      CdcToDeltaOptions options = CommandLine.parse(args, CdcToDeltaOptions.class);
      options.setRunner(DirectRunner.class);
      context.setConfigLocation(jobs);
      assertEquals(ConsoleLogging.CONFIGURATION, context.getConfiguration().getName());
      assertTrue(ConsoleLogging.apply(options), "the jobs' configuration takes the options");
      ConsoleLogging.startFile(options);
      CdcToDeltaJob.run(config, options, captured, beforeStream);
    } finally {
      System.setOut(console);
      context.setConfigLocation(tests);
      System.clearProperty(ConsoleLogging.VERBOSE);
      System.clearProperty(ConsoleLogging.LOG_FILE);
    }
    return bytes.toString(StandardCharsets.UTF_8);
  }

  @Test
  void aJobRunPrintsPlainLinesAndWritesTheDetailToTheLogFile() throws Exception {
    Path log = dir.resolve("logs/run.log");
    String out = consoleOfARun(JobFixture.history(dir), "--logFile=" + log);
    List<String> lines = out.lines().toList();
    for (String line : lines) {
      assertFalse(LOG_PREFIX.matcher(line).find(), "a log prefix on the console: " + line);
    }
    assertTrue(
        lines.stream()
            .anyMatch(
                l -> l.startsWith("batch 0: 12 rows (12 inserts, 0 updates, 0 deletes) up to ")),
        out);
    assertTrue(
        lines.stream()
            .anyMatch(
                l ->
                    l.startsWith(
                        "batch 2: 4 rows (1 insert, 1 update in 2 rows, 1 delete) up to ")),
        out);
    String logged = Files.readString(log);
    assertTrue(
        Pattern.compile(
                "(?m)^\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d\\.\\d{3} INFO  \\[[^]]+\\]"
                    + " org\\.lakecdc\\.transforms\\.bronze\\.BatchCommitter - batch 1: 12"
                    + " rows")
            .matcher(logged)
            .find(),
        logged);
  }

  @Test
  void verboseShowsTheDetailedLinesOnTheConsole() throws Exception {
    String out =
        consoleOfARun(JobFixture.history(dir), "--logFile=" + dir.resolve("run.log"), "--verbose");
    assertTrue(
        Pattern.compile(
                "(?m)^\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d\\.\\d{3} INFO  \\[[^]]+\\]"
                    + " org\\.lakecdc\\.transforms\\.bronze\\.BatchCommitter - batch 1: 12"
                    + " rows")
            .matcher(out)
            .find(),
        out);
  }

  @Test
  void theSummaryCountsInSingularAndPluralAndTheVerdictIsUtcOnlyWhenThereIsOne() {
    JobFixture fixture = new JobFixture(dir);
    JobConfig config = fixture.config();
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8)) {
      CdcToDeltaLauncher.printSummary(
          config,
          new JobSummary(
              1,
              Map.of("rows", 1L, "insert", 1L, "update", 0L, "delete", 0L),
              1,
              1.0,
              Optional.empty(),
              Optional.empty(),
              1.0,
              2.0),
          out);
      CdcToDeltaLauncher.printSummary(
          config,
          new JobSummary(
              2,
              Map.of("rows", 5L, "insert", 0L, "update", 2L, "delete", 1L),
              -1,
              0,
              Optional.empty(),
              Optional.of(LocalDateTime.parse("2026-11-01T08:00")),
              0.5,
              1.0),
          out);
    }
    List<String> lines = bytes.toString(StandardCharsets.UTF_8).lines().toList();
    assertEquals(
        "Done in 2.0 s: 1 batch, 1 change row (1 insert, 0 updates, 0 deletes) in 1.0 s of"
            + " streaming, 1 change row/s; a snapshot of 1 row in 1.0 s, 1 row/s",
        lines.get(1));
    assertEquals("Verdict: finalized_until = none yet (hour periods)", lines.get(2));
    int second = lines.indexOf("") == 0 ? lines.subList(1, lines.size()).indexOf("") + 1 : -1;
    assertEquals(
        "Done in 1.0 s: 2 batches, 5 change rows (0 inserts, 2 updates in 4 rows, 1 delete) in"
            + " 0.5 s of streaming, 10 change rows/s",
        lines.get(second + 1));
    assertEquals(
        "Verdict: finalized_until = 2026-11-01T08:00 UTC (hour periods)", lines.get(second + 2));
  }

  @Test
  void aTablesFileRunNamesItsBronzeTableAndSaysOnePerTableOnlyWhenThereAreSeveral() {
    JobConfig config = new JobFixture(dir).config();
    JobSummary summary =
        new JobSummary(
            1,
            Map.of("rows", 1L, "insert", 1L, "update", 0L, "delete", 0L),
            -1,
            0,
            Optional.empty(),
            Optional.empty(),
            1.0,
            1.0);
    CdcToDeltaJob.TableOutcome outcome =
        new CdcToDeltaJob.TableOutcome(config, summary, Optional.empty());
    for (int tables : new int[] {1, 2}) {
      ByteArrayOutputStream bytes = new ByteArrayOutputStream();
      try (PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8)) {
        CdcToDeltaLauncher.printSummary(Collections.nCopies(tables, outcome), out);
      }
      List<String> lines = bytes.toString(StandardCharsets.UTF_8).lines().toList();
      int at = lines.indexOf("Tables (Delta):");
      assertEquals(
          (tables == 1 ? "  bronze  " : "  bronze  one per table, e.g. ") + config.bronzePath(),
          lines.get(at + 1));
      assertEquals("  facts   " + config.factsPath(), lines.get(at + 2));
      assertEquals("  control " + config.controlPath(), lines.get(at + 3));
    }
  }

  @Test
  void snapshotRowsAndChangeRowsEachHaveTheirOwnRate() {
    JobFixture fixture = new JobFixture(dir);
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8)) {
      CdcToDeltaLauncher.printSummary(
          fixture.config(),
          new JobSummary(0, Map.of(), 12_000, 4.0, Optional.empty(), Optional.empty(), 2.0, 7.5),
          out);
    }
    assertEquals(
        "Done in 7.5 s: 0 batches, 0 change rows (0 inserts, 0 updates, 0 deletes) in 2.0 s of"
            + " streaming, 0 change rows/s; a snapshot of 12,000 rows in 4.0 s, 3,000 rows/s",
        bytes.toString(StandardCharsets.UTF_8).lines().toList().get(1));
  }

  @Test
  void aRateBelowOneRowPerSecondIsPrintedWithTwoSignificantDigits() {
    JobFixture fixture = new JobFixture(dir);
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8)) {
      CdcToDeltaLauncher.printSummary(
          fixture.config(),
          new JobSummary(
              1,
              Map.of("rows", 1L, "insert", 1L, "update", 0L, "delete", 0L),
              -1,
              0,
              Optional.empty(),
              Optional.empty(),
              4.0,
              5.0),
          out);
      CdcToDeltaLauncher.printSummary(
          fixture.config(),
          new JobSummary(
              2,
              Map.of("rows", 2L, "insert", 2L, "update", 0L, "delete", 0L),
              -1,
              0,
              Optional.empty(),
              Optional.empty(),
              30.0,
              31.0),
          out);
    }
    List<String> done =
        bytes.toString(StandardCharsets.UTF_8).lines().filter(l -> l.startsWith("Done")).toList();
    assertEquals(
        List.of(
            "Done in 5.0 s: 1 batch, 1 change row (1 insert, 0 updates, 0 deletes) in 4.0 s of"
                + " streaming, 0.25 change rows/s",
            "Done in 31.0 s: 2 batches, 2 change rows (2 inserts, 0 updates, 0 deletes) in 30.0 s"
                + " of streaming, 0.067 change rows/s"),
        done);
  }

  /**
   * A run with silver prints one line per silver commit and the run's silver line, every count with
   * thousands separators and its singular or plural noun, and the parts of each count adding up:
   * the snapshot of 1,500 orders rebuilds silver, then one wave applies the stream's batch (an
   * update of order 7, two rows, and an insert of order 2000); no per-apply line in the log's style
   * ("wave(s)", "key(s)").
   */
  @Test
  void aSilverRunPrintsItsCountsInOneFormatAndTheyAddUp() throws Exception {
    JobFixture f = new JobFixture(dir);
    f.db.enableCdc(ORDERS);
    FakeSqlServer.Transaction load = f.db.transaction(JobFixture.at(0));
    for (int i = 0; i < 1500; i++) {
      load.insert(ORDERS, JobFixture.order(i, "new", i + ".00"));
    }
    load.commit();
    String silver = dir.resolve("delta/silver/dbo_orders").toString();
    String out =
        consoleOfARun(
            f.config().toBuilder().bootstrap(true).silverPath(silver).build(),
            () -> {
              f.db
                  .transaction(JobFixture.at(1))
                  .update(ORDERS, List.of(7), Map.of("status", "paid"))
                  .insert(ORDERS, JobFixture.order(2000, "new", "20.00"))
                  .commit();
            },
            "--logFile=" + dir.resolve("run.log"));
    String s = WriteSnapshotToDelta.committedSnapshot(f.tables, f.bronze).orElseThrow().toString();
    String end = f.factBatches().get(0).split(":")[2];
    List<String> lines = out.lines().toList();
    // The snapshot is read in the pipeline, after the commit at(1) (after S): it holds order 2000
    // and order 7's new status too, which are also among the changes after S.
    assertTrue(lines.contains("Snapshot: 1,501 rows written to " + f.bronze), out);
    assertTrue(
        lines.stream()
            .anyMatch(
                l ->
                    l.startsWith(
                        "batch 0: 3 rows (1 insert, 1 update in 2 rows, 0 deletes) up to "
                            + end
                            + " ")),
        out);
    List<String> silverLines = lines.stream().filter(l -> l.contains(silver)).toList();
    assertEquals(
        List.of(
            "Delta table " + silver + ": created as a SILVER table (version 1)",
            "Silver "
                + silver
                + ": rebuilt from the snapshot at "
                + s
                + " of bronze "
                + f.bronze
                + ": 1,501 rows",
            "Silver "
                + silver
                + ": wave 2 applied bronze "
                + f.bronze
                + " up to "
                + end
                + ": 3 rows, 2 keys (0 inserted, 2 updated, 0 deleted)",
            "Silver dbo_orders "
                + silver
                + ": rebuilt, applied_lsn "
                + end
                + ", finalized_until 2026-09-28T13:00 UTC, 2 waves, 1,503 keys applied"),
        silverLines,
        out);
    assertFalse(out.contains("(s)"), out);
  }

  /**
   * Maven itself adds nothing around what a job prints under {@code mvn -B -q ... exec:java}: its
   * console library (Jansi) would write a colour reset ({@code ESC[0m}) when it starts and when it
   * ends, batch mode or not, unless the JVM starts with {@code -Djansi.noreset=true}, which the
   * repository's {@code .mvn/jvm.config} gives every {@code mvn} run from the repository. Checked
   * with the {@code mvn} on the path, from the repository's root.
   */
  @Test
  void mavenRunFromTheRepositoryPrintsNoEscapeCodes() throws Exception {
    Path root = Path.of("").toAbsolutePath().getParent();
    assertTrue(Files.isDirectory(root.resolve(".mvn")), root.toString());
    Process mvn =
        new ProcessBuilder("mvn", "-B", "-q", "-v")
            .directory(root.toFile())
            .redirectErrorStream(true)
            .start();
    String out = new String(mvn.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(mvn.waitFor(2, TimeUnit.MINUTES), "mvn -v did not end");
    assertEquals(0, mvn.exitValue(), out);
    assertFalse(out.contains("\u001B"), out.replace("\u001B", "ESC"));
    assertTrue(out.matches("\\d+\\.\\d+\\.\\d+\\R"), "-q -v prints Maven's version alone: " + out);
  }
}
