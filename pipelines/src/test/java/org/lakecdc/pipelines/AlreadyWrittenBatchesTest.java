package org.lakecdc.pipelines;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.core.LoggerContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.lakecdc.pipelines.cdc.CdcToDeltaJob;
import org.lakecdc.pipelines.cdc.CdcToDeltaLauncher;
import org.lakecdc.pipelines.cdc.JobSummary;
import org.lakecdc.pipelines.cli.ConsoleLogging;
import org.lakecdc.pipelines.targets.JobConfig;
import org.lakecdc.transforms.snapshot.WriteSnapshotToDelta;

/**
 * A run that finds its batches already written (another run of the same target committed them
 * between its planning and its commits) says so apart: its summary counts what it wrote, and on one
 * line what it found already written, never a batch twice.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class AlreadyWrittenBatchesTest {
  private static final String FOUND =
      "Found already written: %s (committed by another run of %s, or by an earlier attempt of"
          + " this run's task: skipped, not counted above)";

  @TempDir Path dir;

  /** The summary's lines with every duration and rate replaced by {@code _}. */
  private static List<String> printed(ByteArrayOutputStream bytes) {
    return bytes
        .toString(StandardCharsets.UTF_8)
        .lines()
        .map(l -> l.replaceAll("[0-9][0-9.,]* (s|change rows?/s)\\b", "_"))
        .toList();
  }

  /** The first three lines of the one-table summary of {@code summary}, durations as {@code _}. */
  private static List<String> firstSummaryLines(JobConfig config, JobSummary summary) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8)) {
      CdcToDeltaLauncher.printSummary(config, summary, out);
    }
    return printed(bytes).subList(0, 3);
  }

  /** A run that wrote nothing: its summary's first lines, then what it found already written. */
  private static List<String> foundAfterNothingDone(String found) {
    return List.of(
        "",
        "Done in _: 0 batches, 0 change rows (0 inserts, 0 updates, 0 deletes) in _ of streaming, _",
        String.format(FOUND, found, "this target"));
  }

  @Test
  void batchesAnotherRunCommittedFirstAreFoundAlreadyWrittenNotWritten() {
    JobFixture f = JobFixture.history(dir);
    JobSummary[] other = new JobSummary[1];
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    JobSummary late;
    try (PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8)) {
      // The other run starts and ends after this one planned from the empty target.
      late = CdcToDeltaJob.run(f.config(), JobFixture.direct(), out, () -> other[0] = f.run());
    }
    assertEquals(3, other[0].batches());
    assertEquals(28, other[0].rows());
    assertEquals(0, other[0].skippedBatches());
    assertEquals(0, late.batches());
    assertEquals(0, late.rows());
    assertEquals(3, late.skippedBatches());
    assertEquals(28, late.skippedRows());
    assertEquals(
        List.of(
            "0:12:0x0000002A000001000031",
            "1:12:0x0000002A000001000071",
            "2:4:0x0000002A0000010000A1"),
        f.factBatches(),
        "one facts row per batch");

    assertEquals(
        foundAfterNothingDone("3 batches, 28 change rows"), firstSummaryLines(f.config(), late));
  }

  /**
   * Two first runs of one new target started together: the later one records S, the other plans
   * from that S, takes the snapshot and commits it while the later one reads. The later one finds
   * the snapshot already written: it says so with the snapshot's rows, and never counts them as its
   * own; the other one says whose S it took, without claiming that run stopped. On every runner
   * (the later run's; the other one runs on the DirectRunner).
   */
  @ParameterizedTest
  @ValueSource(strings = {Runners.DIRECT, Runners.SPARK, Runners.FLINK})
  void aSnapshotAnotherRunCommittedFirstIsFoundAlreadyWrittenNotWritten(String runner) {
    assumeTrue(Runners.available(runner), Runners.missing(runner));
    JobFixture f = SnapshotOffTheLauncherTest.tenOrders(dir);
    JobConfig config =
        JobConfig.builder(f.db.clientFactory(), JobFixture.CI, f.bronze, f.facts, f.control)
            .maxCommitsPerBatch(4)
            .build();
    JobSummary[] other = new JobSummary[1];
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    JobSummary late;
    try (PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8)) {
      // The other run starts and ends after this one recorded S, before this one reads a row.
      late =
          CdcToDeltaJob.run(config, Runners.options(runner), out, () -> other[0] = f.run(config));
    }
    String otherOutput = f.lastOutput;
    String lateOutput = bytes.toString(StandardCharsets.UTF_8);
    assertEquals(10, other[0].snapshotRows(), otherOutput);
    assertEquals(-1, other[0].foundSnapshotRows(), otherOutput);
    assertEquals(-1, late.snapshotRows(), lateOutput);
    assertEquals(10, late.foundSnapshotRows(), lateOutput);
    assertEquals(
        1,
        f.tables.history(f.bronze).stream()
            .filter(c -> c.txnAppId() != null && c.txnAppId().endsWith("#snapshot"))
            .count(),
        "one snapshot commit in bronze");

    String s = WriteSnapshotToDelta.committedSnapshot(f.tables, f.bronze).orElseThrow().toString();
    List<String> otherNew = otherOutput.lines().filter(l -> l.startsWith("New target ")).toList();
    assertEquals(1, otherNew.size(), otherOutput);
    assertTrue(
        otherNew
            .get(0)
            .matches(
                java.util.regex.Pattern.quote(
                        "New target "
                            + f.bronze
                            + ": taking a snapshot of dbo_orders stamped with S = "
                            + s
                            + " (committed at ")
                    + "[^)]+\\), the S recorded at \\S+Z by an earlier run of this target"
                    + java.util.regex.Pattern.quote(" (stopped, or still running)")),
        otherNew.get(0));
    assertTrue(
        otherOutput.contains("Snapshot: 10 rows written to " + f.bronze + "\n"), otherOutput);
    assertTrue(
        lateOutput.contains(
            "Snapshot: found already written to "
                + f.bronze
                + ": 10 rows at S = "
                + s
                + " (committed by another run of this target, or by an earlier attempt of this"
                + " run's task: not written by this run)\n"),
        lateOutput);
    assertFalse(lateOutput.contains("Snapshot: 10 rows written"), lateOutput);

    assertEquals(foundAfterNothingDone("a snapshot of 10 rows"), firstSummaryLines(config, late));
  }

  /**
   * Under the jobs' logging configuration the console shows the batches of the run that wrote them,
   * and none of those the other run found already written (neither its batch lines nor its Delta
   * replays: they go to the log file, and its summary counts them on the line above).
   */
  @Test
  void theConsoleShowsNoLineOfABatchFoundAlreadyWritten() throws Exception {
    JobFixture f = JobFixture.history(dir);
    LoggerContext context = (LoggerContext) LogManager.getContext(false);
    URI tests = context.getConfigLocation();
    URI jobs = getClass().getClassLoader().getResource("log4j2.xml").toURI();
    Path log = dir.resolve("logs/lakecdc.log");
    PrintStream console = System.out;
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    JobSummary late;
    try (PrintStream captured = new PrintStream(bytes, true, StandardCharsets.UTF_8);
        PrintStream quiet =
            new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8)) {
      System.setOut(captured);
      System.setProperty(ConsoleLogging.LOG_FILE, log.toString());
      context.setConfigLocation(jobs);
      late = CdcToDeltaJob.run(f.config(), JobFixture.direct(), quiet, () -> f.run());
    } finally {
      System.setOut(console);
      System.clearProperty(ConsoleLogging.LOG_FILE);
      context.setConfigLocation(tests);
    }
    assertEquals(3, late.skippedBatches());
    // The late run's planning, then the other run's three batches; nothing of the late run's.
    assertEquals(
        List.of(
            "Delta table " + f.bronze + ": created as a BRONZE table (version 1)",
            "Delta table " + f.facts + ": created as a FACTS table (version 1)",
            "Delta table " + f.control + ": created as a CONTROL table (version 1)",
            "batch 0: 12 rows (12 inserts, 0 updates, 0 deletes) up to 0x0000002A000001000031"
                + " committed at 2026-09-28T13:53:00Z; bronze version 2, finalized_until"
                + " 2026-09-28T13:00",
            "batch 1: 12 rows (12 inserts, 0 updates, 0 deletes) up to 0x0000002A000001000071"
                + " committed at 2026-09-28T13:57:00Z; bronze version 3, finalized_until"
                + " 2026-09-28T13:00",
            "batch 2: 4 rows (1 insert, 1 update in 2 rows, 1 delete) up to"
                + " 0x0000002A0000010000A1 committed at 2026-09-28T15:55:00Z; bronze version 4,"
                + " finalized_until 2026-09-28T15:00"),
        bytes.toString(StandardCharsets.UTF_8).lines().toList());
    // The late run's line of each batch it found already written: in the log file only.
    List<String> detail =
        Files.readAllLines(log).stream()
            .filter(l -> l.contains(" org.lakecdc.detail.BatchCommitter - "))
            .map(l -> l.substring(l.indexOf(" - ") + 3).replaceAll("^(\\S+ \\d+).*", "$1"))
            .map(l -> l.toLowerCase(java.util.Locale.ROOT))
            .toList();
    assertEquals(List.of("batch 0", "batch 1", "batch 2"), detail, Files.readString(log));
  }

  @Test
  void aTableOfManySaysWhatItFoundAlreadyWrittenOnItsLine() {
    JobFixture f = new JobFixture(dir);
    JobSummary wroteSome =
        new JobSummary(
            1,
            Map.of("rows", 2L, "insert", 2L, "update", 0L, "delete", 0L),
            -1,
            0,
            Optional.empty(),
            Optional.empty(),
            4.0,
            5.0,
            22,
            33,
            7);
    JobSummary wroteAll =
        new JobSummary(
            2,
            Map.of("rows", 3L, "insert", 3L, "update", 0L, "delete", 0L),
            -1,
            0,
            Optional.empty(),
            Optional.empty(),
            4.0,
            5.0);
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8)) {
      CdcToDeltaLauncher.printSummary(
          List.of(
              new CdcToDeltaJob.TableOutcome(f.config(), wroteSome, Optional.empty()),
              new CdcToDeltaJob.TableOutcome(
                  org.lakecdc.pipelines.targets.JobConfig.builder(
                          f.db.clientFactory(),
                          "dbo_items",
                          dir.resolve("bronze_items").toString(),
                          f.facts,
                          f.control)
                      .build(),
                  wroteAll,
                  Optional.empty())),
          out);
    }
    assertEquals(
        List.of(
            "",
            "Done in _: 2 tables, 3 batches, 5 change rows in _ of streaming, _",
            String.format(FOUND, "22 batches, 33 change rows", "these targets"),
            "  dbo_orders  1 batch, 2 change rows (2 inserts, 0 updates, 0 deletes); found already"
                + " written: 22 batches, 33 change rows and a snapshot of 7 rows; no position;"
                + " finalized_until = none yet",
            "  dbo_items   2 batches, 3 change rows (3 inserts, 0 updates, 0 deletes); no position;"
                + " finalized_until = none yet"),
        printed(bytes).subList(0, 5));
  }
}
