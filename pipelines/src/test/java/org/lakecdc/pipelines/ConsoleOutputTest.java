package org.lakecdc.pipelines;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
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
      CdcToDeltaJob.run(fixture.config(), options, captured);
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
            .anyMatch(l -> l.startsWith("batch 2: 4 rows (1 insert, 1 update, 1 delete) up to ")),
        out);
    String logged = Files.readString(log);
    assertTrue(
        Pattern.compile(
                "(?m)^\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d\\.\\d{3} INFO  \\[[^]]+\\]"
                    + " org\\.lakecdc\\.transforms\\.write\\.BatchCommitter - batch 1: 12"
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
                    + " org\\.lakecdc\\.transforms\\.write\\.BatchCommitter - batch 1: 12"
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
      CdcToDelta.printSummary(
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
      CdcToDelta.printSummary(
          config,
          new JobSummary(
              2,
              Map.of("rows", 3L, "insert", 0L, "update", 2L, "delete", 1L),
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
        "Done in 1.0 s: 2 batches, 3 change rows (0 inserts, 2 updates, 1 delete) in 0.5 s of"
            + " streaming, 6 change rows/s",
        lines.get(second + 1));
    assertEquals(
        "Verdict: finalized_until = 2026-11-01T08:00 UTC (hour periods)", lines.get(second + 2));
  }

  @Test
  void snapshotRowsAndChangeRowsEachHaveTheirOwnRate() {
    JobFixture fixture = new JobFixture(dir);
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8)) {
      CdcToDelta.printSummary(
          fixture.config(),
          new JobSummary(0, Map.of(), 12_000, 4.0, Optional.empty(), Optional.empty(), 2.0, 7.5),
          out);
    }
    assertEquals(
        "Done in 7.5 s: 0 batches, 0 change rows (0 inserts, 0 updates, 0 deletes) in 2.0 s of"
            + " streaming, 0 change rows/s; a snapshot of 12,000 rows in 4.0 s, 3,000 rows/s",
        bytes.toString(StandardCharsets.UTF_8).lines().toList().get(1));
  }
}
