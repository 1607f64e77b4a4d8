package org.lakecdc.bench;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * How the runner comparison starts its jobs: the DirectRunner of the comparison on the same class
 * path and JVM options as Spark's and Flink's, the DirectRunner of every other figure on its own.
 */
class RunnerMeasuresTest {
  @TempDir Path benchDir;

  private BenchRun run() throws Exception {
    Path target = Files.createDirectories(benchDir.resolve("target"));
    Files.writeString(target.resolve("job-classpath.txt"), "/direct.jar\n");
    Files.writeString(target.resolve("job-classpath-all-runners.txt"), "/all.jar\n");
    BenchOptions options =
        PipelineOptionsFactory.fromArgs("--jobHeap=3g", "--jobJvmOptions=-XX:+UseSerialGC")
            .as(BenchOptions.class);
    return new BenchRun(
        options,
        new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8),
        benchDir,
        Set.of());
  }

  @Test
  void everyRunnersClassPathAndFlagsWhenAsked() throws Exception {
    BenchRun run = run();
    String classes = benchDir.resolve("target/classes").toAbsolutePath().toString();
    List<String> opens = new ArrayList<>();
    for (String p : ChildJvm.SPARK_ADD_OPENS) {
      opens.add("--add-opens=java.base/" + p + "=ALL-UNNAMED");
    }
    List<String> all = new ArrayList<>(List.of("-Xmx3g", "-XX:+UseSerialGC"));
    all.addAll(opens);

    assertThat(run.jobClasspath(true), is(classes + ":/all.jar"));
    assertThat(run.jobJvmArgs(true), is(all));
    assertThat(run.jobClasspath(false), is(classes + ":/direct.jar"));
    assertThat(run.jobJvmArgs(false), is(List.of("-Xmx3g", "-XX:+UseSerialGC")));

    // By runner: the DirectRunner alone on its own, Spark and Flink on every runner's.
    assertThat(run.jobClasspath("DirectRunner"), is(run.jobClasspath(false)));
    assertThat(run.jobJvmArgs("DirectRunner"), is(run.jobJvmArgs(false)));
    assertThat(run.jobClasspath("SparkRunner"), is(run.jobClasspath(true)));
    assertThat(run.jobJvmArgs("FlinkRunner"), is(run.jobJvmArgs(true)));
  }
}
