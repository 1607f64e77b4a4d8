package org.lakecdc.pipelines;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.pipelines.cli.JobExit;
import org.lakecdc.transforms.bronze.CrashPoint;

/**
 * A fatal error on a worker ends the main job's JVM (docs/behaviour.md §13.2): the job runs in a
 * JVM of its own ({@link FatalJob}, the main of {@link CdcToDelta} with a real {@link
 * OutOfMemoryError} or {@link StackOverflowError} thrown at a crash point on a DirectRunner
 * worker), which must exit within 60 s with exactly one {@code error:} line and exit code 1; the
 * rerun then writes every change exactly once.
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class FatalErrorJvmTest {
  @TempDir Path dir;

  private record Exited(int code, List<String> output) {
    List<String> errorLines() {
      return output.stream().filter(l -> l.startsWith("error:")).toList();
    }
  }

  /** Runs {@link FatalJob} on {@code f}'s tables; waits at most 60 s for its exit. */
  private static Exited fork(
      JobFixture f,
      List<String> jvmOptions,
      CrashPoint.Failure failure,
      CrashPoint point,
      long batch,
      String... more)
      throws IOException, InterruptedException {
    return fork(f, jvmOptions, null, failure, point, batch, more);
  }

  /**
   * Runs {@link FatalJob} on {@code f}'s tables; once its output has a line starting with {@code
   * signalAfter} (unless null), sends it SIGTERM; waits at most 60 s for its exit.
   */
  private static Exited fork(
      JobFixture f,
      List<String> jvmOptions,
      String signalAfter,
      CrashPoint.Failure failure,
      CrashPoint point,
      long batch,
      String... more)
      throws IOException, InterruptedException {
    List<String> options =
        new ArrayList<>(
            List.of(
                // A short run: the client compiler and the serial collector start fastest.
                "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"));
    options.addAll(jvmOptions);
    List<String> command = ForkedJvm.javaCommand(options);
    command.addAll(
        List.of(
            FatalJob.class.getName(),
            failure.name(),
            point.name(),
            String.valueOf(batch),
            "--fakePath=" + f.dir.resolve("source"),
            "--captureInstance=" + JobFixture.CI,
            "--target=" + f.bronze,
            "--factsTable=" + f.facts,
            "--controlTable=" + f.control,
            "--bootstrap=false",
            "--maxCommitsPerBatch=4"));
    command.addAll(List.of(more));
    Path log = f.dir.resolve("job.log");
    Process process =
        new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    if (signalAfter != null) {
      try {
        org.awaitility.Awaitility.await("the line '" + signalAfter + "' or the JVM's end")
            .atMost(java.time.Duration.ofSeconds(120))
            .pollDelay(java.time.Duration.ZERO)
            .pollInterval(java.time.Duration.ofMillis(200))
            .pollInSameThread()
            .until(() -> printed(log, signalAfter) || !process.isAlive());
      } catch (org.awaitility.core.ConditionTimeoutException e) {
        // checked below, with the log
      }
      if (!printed(log, signalAfter)) {
        process.destroyForcibly().waitFor();
        throw new AssertionError(
            "no line '" + signalAfter + "':\n" + Files.readString(log, StandardCharsets.UTF_8));
      }
      process.destroy(); // SIGTERM
    }
    if (!process.waitFor(60, TimeUnit.SECONDS)) {
      process.destroyForcibly().waitFor();
      throw new AssertionError(
          "the job did not exit within 60 s:\n" + Files.readString(log, StandardCharsets.UTF_8));
    }
    return new Exited(process.exitValue(), Files.readAllLines(log, StandardCharsets.UTF_8));
  }

  /** The crashed target, rerun, holds every change once and one facts row per batch. */
  /** Whether the job's log has a line starting with {@code prefix}. */
  private static boolean printed(Path log, String prefix) throws IOException {
    return Files.readAllLines(log, StandardCharsets.UTF_8).stream()
        .anyMatch(l -> l.startsWith(prefix));
  }

  private static void assertRerunWritesEachChangeOnce(JobFixture crashed) {
    crashed.run();
    assertEquals(
        crashed.sourceChanges(),
        crashed.bronzeChanges().stream()
            .map(s -> s.substring(0, s.lastIndexOf('/')))
            .sorted()
            .toList(),
        "every change exactly once");
    assertEquals(
        List.of(
            "0:12:0x0000002A000001000031",
            "1:12:0x0000002A000001000071",
            "2:4:0x0000002A0000010000A1"),
        crashed.factBatches(),
        "one facts row per batch");
  }

  @Test
  void anOutOfMemoryErrorOnAWorkerEndsTheJvmWithTheHeapAndExitCode1() throws Exception {
    JobFixture f = JobFixture.history(dir.resolve("crashed"));
    Exited exited =
        fork(
            f,
            List.of("-Xmx256m"),
            CrashPoint.Failure.OUT_OF_MEMORY,
            CrashPoint.AFTER_DATA_FILES,
            1);
    String all = String.join("\n", exited.output());
    assertEquals(JobExit.FAILED, exited.code(), all);
    assertEquals(1, exited.errorLines().size(), all);
    Matcher line =
        Pattern.compile(
                "error: the run failed: out of memory \\(OutOfMemoryError: Java heap space\\) with a maximum heap"
                    + " of (\\d+) MiB: give the JVM more \\(java -Xmx1024m …; for mvn exec:java,"
                    + " MAVEN_OPTS=-Xmx1024m\\) or read fewer commits per batch"
                    + " \\(--maxCommitsPerBatch; one transaction is always read whole\\)")
            .matcher(exited.errorLines().get(0));
    assertTrue(line.matches(), exited.errorLines().get(0));
    long heap = Long.parseLong(line.group(1));
    assertTrue(heap > 128 && heap <= 256, "the JVM's maximum heap of -Xmx256m: " + heap);
    assertTrue(all.lines().noneMatch(l -> l.contains("halted")), "System.exit completed: " + all);
    assertEquals(
        List.of("0:12:0x0000002A000001000031"), f.factBatches(), "batch 0 committed: " + all);
    assertRerunWritesEachChangeOnce(f);
  }

  @Test
  void aStackOverflowInContinuousModeEndsTheJvmEvenWhenAShutdownHookHangs() throws Exception {
    JobFixture f = JobFixture.history(dir.resolve("crashed"));
    Exited exited =
        fork(
            f,
            List.of("-Dlakecdc.test.hangShutdown=true"),
            CrashPoint.Failure.STACK_OVERFLOW,
            CrashPoint.AFTER_BRONZE_COMMIT,
            1,
            "--continuous=true",
            "--pollIntervalSeconds=1");
    String all = String.join("\n", exited.output());
    assertEquals(JobExit.FAILED, exited.code(), all);
    assertEquals(
        List.of(
            "error: the run failed: stack overflow (StackOverflowError in"
                + " org.lakecdc.transforms.bronze.CrashPoint$Failure.recurse): give each thread"
                + " a larger stack (java -Xss16m …; for mvn exec:java, MAVEN_OPTS=-Xss16m)"),
        exited.errorLines(),
        all);
    assertEquals(
        "(the JVM did not exit within 10 s of the failure: a shutdown hook or thread is stuck;"
            + " halted with exit code 1)",
        exited.output().get(exited.output().size() - 1),
        all);
    // Batch 1 stopped after its bronze commit: its facts row is the rerun's to write (the crash
    // tests of CdcToDeltaJobTest rerun from every crash point).
    assertEquals(
        List.of("0:12:0x0000002A000001000031"), f.factBatches(), "batch 0's facts row: " + all);
    assertEquals(
        24, f.bronzeChanges().size(), "batches 0 and 1 in bronze, each change once: " + all);
  }

  @Test
  void sigtermStopsAContinuousRunCleanlyAndTheJvmExitsEvenWhenAShutdownHookHangs()
      throws Exception {
    JobFixture f = JobFixture.history(dir.resolve("following"));
    // The crash point is never reached: batch 99 does not come.
    Exited exited =
        fork(
            f,
            List.of("-Dlakecdc.test.hangShutdown=true"),
            "Following dbo_orders",
            CrashPoint.Failure.STACK_OVERFLOW,
            CrashPoint.AFTER_DATA_FILES,
            99,
            "--continuous=true",
            "--pollIntervalSeconds=1");
    String all = String.join("\n", exited.output());
    assertEquals(JobExit.OK, exited.code(), all);
    assertEquals(List.of(), exited.errorLines(), all);
    assertTrue(exited.output().contains("Stopping: committing what was read, then exiting"), all);
    assertTrue(exited.output().contains("Stopped: every batch read was committed"), all);
    assertEquals(
        "(the JVM did not exit within 10 s of the end of the run: a shutdown hook or thread is"
            + " stuck; halted with exit code 0)",
        exited.output().get(exited.output().size() - 1),
        all);
  }
}
