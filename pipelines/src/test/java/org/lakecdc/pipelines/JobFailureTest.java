package org.lakecdc.pipelines;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.pipelines.cli.JobExit;

/**
 * A failure of the main job's run, in-process through {@link CdcToDelta#run} (what {@code main}
 * runs before it exits with the code): exactly one {@code error:} line naming the cause and the
 * fix, exit code 1, never a stack trace unless {@code --verbose}.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class JobFailureTest {
  @TempDir Path dir;

  private record Outcome(int code, String err) {}

  private Outcome run(String... args) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (PrintStream err = new PrintStream(bytes, true, StandardCharsets.UTF_8)) {
      int code = CdcToDelta.run(args, err, UnaryOperator.identity());
      return new Outcome(code, bytes.toString(StandardCharsets.UTF_8));
    }
  }

  private String[] args(JobFixture f, String target, String... more) {
    List<String> all =
        new java.util.ArrayList<>(
            List.of(
                "--fakePath=" + f.dir.resolve("source"),
                "--captureInstance=" + JobFixture.CI,
                "--target=" + target,
                "--factsTable=" + f.facts,
                "--controlTable=" + f.control,
                "--bootstrap=false"));
    all.addAll(List.of(more));
    return all.toArray(String[]::new);
  }

  @Test
  void aTargetThatCannotBeCreatedIsOneErrorLineAndExitCode1() {
    JobFixture f = JobFixture.history(dir);
    // /proc refuses new directories for every user, root included (a read-only directory does not
    // stop root, who runs CI).
    Outcome o = run(args(f, "/proc/lakecdc-no-such-dir/orders"));
    assertEquals(
        List.of(
            "error: cannot create the directory /proc/lakecdc-no-such-dir/orders/_delta_log of a"
                + " Delta table: the file system at /proc refused it (read-only?); choose a"
                + " location the job may write (--target, --factsTable, --controlTable) or make"
                + " /proc writable"),
        o.err().lines().toList());
    assertEquals(JobExit.FAILED, o.code());
    assertFalse(Files.exists(Path.of(f.facts)), "nothing else was created");
    assertFalse(Files.exists(Path.of(f.control)), "nothing else was created");
  }

  @Test
  void aTargetWhoseSchemeHasNoFileSystemNamesTheDependency() {
    JobFixture f = JobFixture.history(dir);
    Outcome o = run(args(f, "s3a://bucket/x"));
    assertEquals(
        List.of(
            "error: no Hadoop FileSystem for s3a:// paths on the class path (class"
                + " org.apache.hadoop.fs.s3a.S3AFileSystem not found): add"
                + " org.apache.hadoop:hadoop-aws:3.3.4 and software.amazon.awssdk:s3 with"
                + " software.amazon.awssdk:apache5-client (the log store's SDK; -Ps3 brings all"
                + " three) to the job's class path (the default build,"
                + " -Pspark and -Pflink bundle none; with spark-submit, --packages)"),
        o.err().lines().toList());
    assertEquals(JobExit.FAILED, o.code());
  }

  @Test
  void verbosePrintsTheStackTraceBeforeTheErrorLine() {
    JobFixture f = JobFixture.history(dir);
    Outcome o = run(args(f, "s3a://bucket/x", "--verbose"));
    List<String> lines = o.err().lines().toList();
    assertEquals(JobExit.FAILED, o.code());
    assertTrue(
        lines.get(0).startsWith("io.delta.kernel.exceptions.KernelEngineException: "), o.err());
    assertTrue(lines.size() > 10, o.err());
    assertEquals(1, lines.stream().filter(l -> l.startsWith("error:")).count(), o.err());
    assertTrue(lines.get(lines.size() - 1).startsWith("error: no Hadoop FileSystem for s3a://"));
  }
}
