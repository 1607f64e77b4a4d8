package org.lakecdc.bench;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.is;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Properties;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The job JVM's probe writes its measures however the job exits: here a refused option (exit code
 * 2, before any pipeline), so the test stays short; the smoke test runs it around whole jobs.
 */
class JobProbeTest {
  @TempDir Path dir;

  @Test
  void writesItsMeasuresWhenTheJobExits() throws Exception {
    Path benchDir = Path.of(System.getProperty("lakecdc.bench.dir"));
    Path probe = dir.resolve("probe.properties");
    ChildJvm jvm =
        ChildJvm.start(
            ChildJvm.classpath(
                benchDir.resolve("target/job-classpath.txt"), benchDir.resolve("target/classes")),
            List.of("-Xmx256m"),
            JobProbe.class.getName(),
            List.of(
                probe.toString(), "--maxCommitsPerBatch=-1", "--logFile=" + dir.resolve("job.log")),
            dir.resolve("job-output.log"));

    IllegalStateException failed = assertThrows(IllegalStateException.class, () -> jvm.await(120));

    assertThat(failed.getMessage(), containsString("JobProbe failed with exit code 2"));
    assertThat(
        failed.getMessage(),
        containsString(
            "error: --maxCommitsPerBatch must be a positive integer, or 0 to read up to max_lsn,"
                + " not '-1'"));
    Properties measures = new Properties();
    try (Reader reader = Files.newBufferedReader(probe, StandardCharsets.UTF_8)) {
      measures.load(reader);
    }
    assertThat(
        new TreeSet<>(measures.stringPropertyNames()).toString(),
        is(
            "[cpu_by_thread, cpu_ms, elapsed_ms, gc_ms, heap_after_gc_max_bytes, heap_peak_bytes,"
                + " jit_ms]"));
    assertThat(Long.parseLong(measures.getProperty("heap_peak_bytes")) > 0, is(true));
    // A JVM that parsed a command line has spent CPU time, and no more than its cores allow.
    long cpu = Long.parseLong(measures.getProperty("cpu_ms"));
    long elapsed = Long.parseLong(measures.getProperty("elapsed_ms"));
    assertThat(measures.toString(), cpu > 0, is(true));
    // The live threads' CPU seconds by name, largest first: name:seconds, comma-separated.
    assertThat(
        measures.getProperty("cpu_by_thread"),
        measures
            .getProperty("cpu_by_thread")
            .matches("[^:,]+:[0-9]+\\.[0-9](,[^:,]+:[0-9]+\\.[0-9])*"),
        is(true));
    assertThat(
        measures.toString(),
        cpu <= (elapsed + 1) * Runtime.getRuntime().availableProcessors(),
        is(true));
  }
}
