package org.lakecdc.pipelines;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import org.apache.beam.sdk.options.PipelineOptions;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.core.LoggerContext;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.io.mssqlcdc.schema.OutputType;
import org.lakecdc.pipelines.cli.CommandLine;
import org.lakecdc.pipelines.cli.ConsoleLogging;
import org.lakecdc.pipelines.options.ApplyChangesOptions;
import org.lakecdc.pipelines.options.BackfillOptions;
import org.lakecdc.pipelines.options.CdcToDeltaOptions;
import org.lakecdc.pipelines.options.OutputOptions;
import org.lakecdc.pipelines.options.PrintChangesOptions;
import org.lakecdc.pipelines.options.ReconcileOptions;
import org.lakecdc.pipelines.options.ShowOptions;
import org.lakecdc.pipelines.options.SimulatorOptions;
import org.lakecdc.pipelines.options.StatusOptions;
import org.lakecdc.transforms.delta.CompactionHook;
import org.lakecdc.transforms.delta.CreationHook;
import org.lakecdc.transforms.delta.DeltaColumn;
import org.lakecdc.transforms.delta.DeltaTables;
import org.lakecdc.transforms.delta.HadoopConf;
import org.lakecdc.transforms.delta.KernelRetries;
import org.lakecdc.transforms.delta.OpenResult;
import org.lakecdc.transforms.delta.TableDefinition;
import org.lakecdc.transforms.delta.TableKind;
import org.lakecdc.transforms.facts.FactsTable;

/**
 * Where the log lines go without {@code --logFile}: {@code lakecdc.log} next to the first table the
 * run writes (the working directory for a table on an object store), for every job; and the main
 * job's summary ends saying where.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class LogFileTest {
  @TempDir Path dir;

  @AfterEach
  void clearLoggingProperties() {
    System.clearProperty(ConsoleLogging.VERBOSE);
    System.clearProperty(ConsoleLogging.LOG_FILE);
  }

  private static <T extends PipelineOptions> String logFile(Class<T> type, String... args) {
    return ((OutputOptions) CommandLine.parse(args, type)).getLogFile();
  }

  @Test
  void aTablePathBelowAPlainFileLeavesTheLogInTheWorkingDirectoryForTheTablesOwnRefusal()
      throws Exception {
    Path file = Files.writeString(dir.resolve("plainfile"), "x");
    assertEquals(
        "lakecdc.log",
        logFile(CdcToDeltaOptions.class, "--target=" + file.resolve("b"), "--bootstrap=false"));
  }

  @Test
  void withoutLogFileTheLogIsNextToTheFirstTableTheRunWrites() {
    assertEquals("lakecdc-demo/delta/lakecdc.log", logFile(CdcToDeltaOptions.class));
    assertEquals(
        "lakecdc-demo/delta/lakecdc.log",
        logFile(CdcToDeltaOptions.class, "--captureInstance=dbo_lineitem"));
    assertEquals(
        "/data/cdc/bronze/lakecdc.log",
        logFile(CdcToDeltaOptions.class, "--target=/data/cdc/bronze/orders"));
    assertEquals(
        "/data/cdc/lakecdc.log",
        logFile(CdcToDeltaOptions.class, "--target=file:///data/cdc/orders"));
    assertEquals(
        "lakecdc.log", logFile(CdcToDeltaOptions.class, "--target=s3a://bucket/cdc/orders"));
    assertEquals("lakecdc.log", logFile(CdcToDeltaOptions.class, "--target=orders"));
    assertEquals(
        "/data/many/lakecdc.log",
        logFile(
            CdcToDeltaOptions.class,
            "--tables=dbo_orders,dbo_customer",
            "--targetTemplate=/data/many/{ci}"));
    assertEquals(
        "/data/part/lakecdc.log",
        logFile(BackfillOptions.class, "--captureInstance=dbo_part", "--target=/data/part/p"));
    assertEquals(
        "/data/silver/lakecdc.log",
        logFile(ApplyChangesOptions.class, "--silver=/data/silver/dbo_orders"));
    assertEquals(
        "/data/history/lakecdc.log",
        logFile(ApplyChangesOptions.class, "--history=/data/history/dbo_orders"));
    assertEquals(
        "/data/hist/lakecdc.log",
        logFile(
            ApplyChangesOptions.class,
            "--tables=dbo_orders,dbo_customer",
            "--historyTemplate=/data/hist/{ci}"));
    assertEquals(
        "/data/silver/lakecdc.log",
        logFile(
            ApplyChangesOptions.class,
            "--silver=/data/silver/dbo_orders",
            "--history=/data/history/dbo_orders"));
    assertEquals("lakecdc-demo/delta/lakecdc.log", logFile(ReconcileOptions.class));
    assertEquals(
        "/r/lakecdc.log", logFile(ReconcileOptions.class, "--report=/r/reconcile", "--silver=/s"));
    assertEquals("lakecdc-demo/delta/lakecdc.log", logFile(StatusOptions.class));
    assertEquals("/t/lakecdc.log", logFile(ShowOptions.class, "--table=/t/facts"));
    assertEquals("lakecdc-demo/lakecdc.log", logFile(SimulatorOptions.class));
    assertEquals("/sim/lakecdc.log", logFile(PrintChangesOptions.class, "--fakePath=/sim/source"));
    assertEquals(
        "/logs/run.log",
        logFile(CdcToDeltaOptions.class, "--target=/data/x", "--logFile=/logs/run.log"));
  }

  /**
   * Runs the main job on {@code f}'s source and tables ({@code --bootstrap=false}) as its entry
   * point does, under the jobs' logging configuration, its console in {@code bytes}; waits for the
   * background compactions before returning, as the entry point does before the JVM exits.
   *
   * @return the console's text; the run's exit code was 0
   */
  private String runMainJob(JobFixture f, ByteArrayOutputStream bytes) throws Exception {
    LoggerContext context = (LoggerContext) LogManager.getContext(false);
    URI tests = context.getConfigLocation();
    URI jobs = LogFileTest.class.getClassLoader().getResource("log4j2.xml").toURI();
    PrintStream console = System.out;
    int code;
    try (PrintStream captured = new PrintStream(bytes, true, StandardCharsets.UTF_8)) {
      System.setOut(captured);
      context.setConfigLocation(jobs);
      code =
          CdcToDelta.run(
              new String[] {
                "--fakePath=" + dir.resolve("source"),
                "--target=" + f.bronze,
                "--factsTable=" + f.facts,
                "--controlTable=" + f.control,
                "--bootstrap=false",
                "--maxCommitsPerBatch=4"
              },
              System.err,
              UnaryOperator.identity());
      HadoopConf.awaitSharedCompactions();
    } finally {
      System.setOut(console);
      context.setConfigLocation(tests);
    }
    String out = bytes.toString(StandardCharsets.UTF_8);
    assertEquals(0, code, out);
    return out;
  }

  /**
   * A run of the main job without {@code --logFile}, under the jobs' logging configuration, writes
   * its log lines to {@code <dir>/delta/lakecdc.log}, next to its bronze table, and its summary's
   * last line says so.
   */
  @Test
  void theMainJobsSummarySaysWhereItsLogIs() throws Exception {
    JobFixture f = JobFixture.history(dir);
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    String out = runMainJob(f, bytes);
    Path log = dir.resolve("delta/lakecdc.log");
    List<String> lines = out.lines().toList();
    assertEquals("Log file: " + log, lines.get(lines.size() - 1), out);
    assertTrue(Files.readString(log).contains("BatchCommitter - batch 2: 4 rows"), out);
  }

  /**
   * A background compaction of the facts table that the run's commits started ends before the
   * summary: its console line comes before the summary, and {@code Log file:} stays the run's last
   * line. The facts table (created at version 1) holds 97 one-row files of another app id before
   * the run, so the run's first facts commit lands version 99 and hands the table to the
   * compaction.
   */
  @Test
  void aCompactionTheRunStartedIsPrintedBeforeTheSummaryWhoseLogFileLineIsLast() throws Exception {
    JobFixture f = JobFixture.history(dir);
    f.tables.createIfAbsent(f.facts, FactsTable.definition());
    for (long v = 1; v <= 97; v++) {
      f.tables.append(
          f.facts,
          FactsTable.SCHEMA,
          List.of(
              FactsTable.row().set(FactsTable.APP_ID, "other").set(FactsTable.BATCH_ID, v).build()),
          "other",
          v,
          java.util.Map.of());
    }
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    // The job's shared tables (no Hadoop entries): their compaction holds its commit until the
    // summary has begun, for at most 3 s, as a compaction of many files outlasts a short run.
    DeltaTables shared = HadoopConf.empty().tables();
    java.util.concurrent.atomic.AtomicInteger held =
        new java.util.concurrent.atomic.AtomicInteger();
    CompactionHook.beforeBackgroundCommit(
        shared,
        () -> {
          held.incrementAndGet();
          long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
          while (!bytes.toString(StandardCharsets.UTF_8).contains("Done in ")
              && System.nanoTime() < until) {
            java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
          }
        });
    String out;
    try {
      out = runMainJob(f, bytes);
    } finally {
      CompactionHook.beforeBackgroundCommit(shared, () -> {});
    }
    List<String> lines = out.lines().toList();
    List<Integer> compacted = new java.util.ArrayList<>();
    int done = -1;
    for (int i = 0; i < lines.size(); i++) {
      if (lines.get(i).startsWith("Delta table " + f.facts + ": compacted ")) {
        compacted.add(i);
      }
      if (done < 0 && lines.get(i).startsWith("Done in ")) {
        done = i;
      }
    }
    assertEquals("", lines.get(done - 1), out);
    assertTrue(held.get() > 0, "the compaction's commit held: " + out);
    assertEquals(1, compacted.size(), out);
    assertTrue(compacted.get(0) < done, out);
    assertEquals("Log file: " + dir.resolve("delta/lakecdc.log"), lines.get(lines.size() - 1), out);
  }

  /**
   * What {@code body} prints on the console under the jobs' logging configuration (log4j2.xml),
   * with {@code log} as its log file; the tests' configuration is back afterwards.
   */
  private static String underJobsLogging(Path log, Runnable body) throws Exception {
    LoggerContext context = (LoggerContext) LogManager.getContext(false);
    URI tests = context.getConfigLocation();
    URI jobs = LogFileTest.class.getClassLoader().getResource("log4j2.xml").toURI();
    PrintStream console = System.out;
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (PrintStream captured = new PrintStream(bytes, true, StandardCharsets.UTF_8)) {
      System.setOut(captured);
      System.setProperty(ConsoleLogging.LOG_FILE, log.toString());
      context.setConfigLocation(jobs);
      body.run();
    } finally {
      System.setOut(console);
      System.clearProperty(ConsoleLogging.LOG_FILE);
      context.setConfigLocation(tests);
    }
    return bytes.toString(StandardCharsets.UTF_8);
  }

  /**
   * Under the jobs' logging configuration the project's routine detail ({@code org.lakecdc.detail}:
   * a compaction's lost race retried, a checkpoint interval skipped, a Delta Kernel step retried
   * from a fresh snapshot with its exception) goes to the log file only, the project's other lines
   * to the console and the file.
   */
  @Test
  void routineDetailGoesToTheLogFileOnly() throws Exception {
    Path log = dir.resolve("detail/lakecdc.log");
    String printed =
        underJobsLogging(
            log,
            () -> {
              org.slf4j.LoggerFactory.getLogger("org.lakecdc.detail.SmallFileCompaction")
                  .info("Delta table t: compaction lost to a concurrent commit (attempt 1 of 3)");
              try (KernelRetries.Attempts attempts = new KernelRetries.Attempts("t", "an append")) {
                attempts.pauseOrThrow(
                    new UncheckedIOException(new IOException("connection reset")));
              }
              org.slf4j.LoggerFactory.getLogger("org.lakecdc.transforms.delta.SmallFileCompaction")
                  .info("Delta table t: compacted 2 small files into 1 (4 rows), version 7");
            });
    assertEquals(
        List.of("Delta table t: compacted 2 small files into 1 (4 rows), version 7"),
        printed.lines().toList());
    List<String> file = Files.readAllLines(log);
    assertEquals(3, file.size(), String.join("\n", file));
    assertTrue(
        file.get(0)
            .endsWith(
                "org.lakecdc.detail.SmallFileCompaction - Delta table t: compaction lost to a"
                    + " concurrent commit (attempt 1 of 3)"),
        file.get(0));
    assertTrue(
        file.get(1)
            .endsWith(
                "org.lakecdc.detail.KernelRetries - Delta table t: an append failed (attempt 1),"
                    + " retried from a fresh snapshot: java.io.UncheckedIOException:"
                    + " java.io.IOException: connection reset"),
        file.get(1));
    assertTrue(
        file.get(2)
            .endsWith(
                "org.lakecdc.transforms.delta.SmallFileCompaction - Delta table t: compacted 2"
                    + " small files into 1 (4 rows), version 7"),
        file.get(2));
  }

  /**
   * Two first runs of one new target create its tables at once: the one whose creation commit loses
   * uses the winner's table, and says so in the log file only (with Kernel's exception), never on
   * the console; the winner's creation line is the console's only line.
   */
  @Test
  void aCreationLostToAConcurrentCreatorGoesToTheLogFileOnly() throws Exception {
    Path log = dir.resolve("race/lakecdc.log");
    String path = dir.resolve("race/bronze").toString();
    TableDefinition definition =
        TableDefinition.of(
            TableKind.BRONZE,
            List.of(DeltaColumn.nullable("order_id", OutputType.INT, "The order")));
    DeltaTables loser = DeltaTables.create();
    DeltaTables winner = DeltaTables.create();
    List<OpenResult> opened = new java.util.ArrayList<>();
    String printed =
        underJobsLogging(
            log,
            () ->
                opened.add(
                    CreationHook.createIfAbsent(
                        loser, path, definition, () -> winner.createIfAbsent(path, definition))));
    assertFalse(opened.get(0).created(), "the winner's table is used");
    assertEquals(1, opened.get(0).version(), "the winner's two commits, nothing of the loser's");
    assertEquals(
        List.of("Delta table " + path + ": created as a BRONZE table (version 1)"),
        printed.lines().toList());
    List<String> file = Files.readAllLines(log);
    List<String> lost =
        file.stream().filter(l -> l.contains("org.lakecdc.detail.TableLifecycle")).toList();
    assertEquals(1, lost.size(), String.join("\n", file));
    assertTrue(
        lost.get(0)
            .endsWith(
                "org.lakecdc.detail.TableLifecycle - Delta table "
                    + path
                    + ": creation lost to a concurrent creator; using its table"),
        lost.get(0));
    assertTrue(
        file.stream().anyMatch(l -> l.startsWith("io.delta.kernel.exceptions.")),
        "Kernel's exception with its stack, in the file: " + String.join("\n", file));
  }

  /**
   * A refused run, under the jobs' logging configuration, leaves nothing behind: no log file and no
   * directory for it, whether an option was refused, or a table it reads is missing (the main job,
   * Status, Show).
   */
  @Test
  void aRefusedRunLeavesNoLogFileAndNoDirectory() throws Exception {
    JobFixture f = JobFixture.history(dir);
    LoggerContext context = (LoggerContext) LogManager.getContext(false);
    URI tests = context.getConfigLocation();
    URI jobs = LogFileTest.class.getClassLoader().getResource("log4j2.xml").toURI();
    PrintStream console = System.out;
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    ByteArrayOutputStream errors = new ByteArrayOutputStream();
    List<Integer> codes = new java.util.ArrayList<>();
    try (PrintStream captured = new PrintStream(bytes, true, StandardCharsets.UTF_8);
        PrintStream err = new PrintStream(errors, true, StandardCharsets.UTF_8)) {
      System.setOut(captured);
      context.setConfigLocation(jobs);
      codes.add(
          CdcToDelta.run(
              new String[] {
                "--fakePath=" + dir.resolve("source"),
                "--target=" + dir.resolve("refused/bronze"),
                "--factsTable=" + f.facts,
                "--controlTable=" + f.control,
                "--numPartitions=0"
              },
              err,
              UnaryOperator.identity()));
      codes.add(
          Status.run(
              new String[] {"--factsTable=" + dir.resolve("missing/facts")},
              captured,
              err,
              java.time.Clock.systemUTC(),
              dir.resolve("source")));
      codes.add(Show.run(new String[] {"--table=" + dir.resolve("gone/table")}, captured, err));
    } finally {
      System.setOut(console);
      context.setConfigLocation(tests);
      System.clearProperty(ConsoleLogging.LOG_FILE);
    }
    assertEquals(List.of(2, 2, 2), codes, errors.toString(StandardCharsets.UTF_8));
    assertEquals(
        List.of(
            "error: --numPartitions must be a positive integer, not '0'",
            "error: --factsTable "
                + dir.resolve("missing/facts")
                + " holds no Delta table (no _delta_log with a commit): give the path or URI of a"
                + " table the job wrote",
            "error: --table "
                + dir.resolve("gone/table")
                + " holds no Delta table (no _delta_log with a commit): give the path or URI of a"
                + " table the job wrote"),
        errors.toString(StandardCharsets.UTF_8).lines().toList());
    assertFalse(Files.exists(dir.resolve("refused")), "the main job's log directory");
    assertFalse(Files.exists(dir.resolve("missing")), "Status' log directory");
    assertFalse(Files.exists(dir.resolve("gone")), "Show's log directory");
  }
}
