package org.lakecdc.pipelines.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.beam.runners.flink.FlinkExecutionEnvironments;
import org.apache.beam.runners.flink.FlinkPipelineOptions;
import org.apache.flink.api.java.ExecutionEnvironment;
import org.apache.flink.configuration.GlobalConfiguration;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.configuration.TaskManagerOptions;
import org.apache.spark.SparkConf;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.pipelines.options.CdcToDeltaOptions;

/** The settings a job's command line sets for a local Spark or Flink run, and only for one. */
class RunnerSettingsTest {
  private static Map<String, String> settings(String runner, Properties system, String... args) {
    return RunnerSettings.sparkSettings(runner, CommandLine.given(args), system);
  }

  @Test
  void aLocalSparkRunHasNoWebUi() {
    Map<String, String> off = Map.of("spark.ui.enabled", "false");
    assertEquals(off, settings("SparkRunner", new Properties()));
    assertEquals(off, settings("SparkRunner", new Properties(), "--sparkMaster=local[2]"));
    assertEquals(off, settings("SparkRunner", new Properties(), "--sparkMaster=local"));
  }

  @Test
  void whatTheUserOrSparkSubmitSetIsKept() {
    Properties ui = new Properties();
    ui.setProperty("spark.ui.enabled", "true");
    assertEquals(Map.of(), settings("SparkRunner", ui, "--sparkMaster=local[2]"));
    Properties submitted = new Properties();
    submitted.setProperty("spark.master", "local[2]");
    assertEquals(Map.of(), settings("SparkRunner", submitted));
    assertEquals(
        Map.of(), settings("SparkRunner", new Properties(), "--sparkMaster=spark://host:7077"));
  }

  @Test
  void otherRunnersGetNothing() {
    assertEquals(Map.of(), settings("DirectRunner", new Properties()));
    assertEquals(Map.of(), settings("FlinkRunner", new Properties()));
    assertEquals(Map.of(), settings(null, new Properties()));
  }

  /** The job's parse sets it where Spark's own configuration (Beam's SparkRunner's) reads it. */
  @Test
  void sparksConfigurationSeesTheSetting() {
    String before = System.getProperty("spark.ui.enabled");
    System.clearProperty("spark.ui.enabled");
    try {
      CommandLine.parseOnly(
          new String[] {"--runner=SparkRunner", "--sparkMaster=local[2]"}, CdcToDeltaOptions.class);
      assertEquals("false", new SparkConf().get("spark.ui.enabled"));
    } finally {
      if (before == null) {
        System.clearProperty("spark.ui.enabled");
      } else {
        System.setProperty("spark.ui.enabled", before);
      }
    }
  }

  private static final long MANAGED = 3L << 30;

  private static Map<String, String> flink(String runner, Map<String, String> env, String... args) {
    return RunnerSettings.flinkSettings(runner, CommandLine.given(args), env, MANAGED);
  }

  @Test
  void aLocalFlinkRunSizesItsManagedMemoryItself() {
    assertEquals(
        Map.of("taskmanager.memory.managed.size", "3221225472b"),
        flink("FlinkRunner", Map.of(), "--flinkMaster=[local]", "--parallelism=2"));
  }

  @Test
  void whatTheUserOrAClusterSetIsKeptOnFlink() {
    assertEquals(
        Map.of(), flink("FlinkRunner", Map.of(), "--flinkMaster=[local]", "--flinkConfDir=/c"));
    assertEquals(
        Map.of(), flink("FlinkRunner", Map.of("FLINK_CONF_DIR", "/c"), "--flinkMaster=[local]"));
    assertEquals(Map.of(), flink("FlinkRunner", Map.of()));
    assertEquals(Map.of(), flink("FlinkRunner", Map.of(), "--flinkMaster=[auto]"));
    assertEquals(Map.of(), flink("FlinkRunner", Map.of(), "--flinkMaster=host:8081"));
    assertEquals(Map.of(), flink("SparkRunner", Map.of(), "--flinkMaster=[local]"));
    assertEquals(Map.of(), flink(null, Map.of(), "--flinkMaster=[local]"));
  }

  /** A launcher's unparsed command line: the runner by its simple or its full class name. */
  @Test
  void anUnparsedCommandLineNamesTheRunnerEitherWay() {
    assertEquals(
        List.of("taskmanager.memory.managed.size"),
        List.copyOf(
            RunnerSettings.flinkSettings(
                    new String[] {
                      "--runner=org.apache.beam.runners.flink.FlinkRunner", "--flinkMaster=[local]"
                    })
                .keySet()));
    assertEquals(
        1,
        RunnerSettings.flinkSettings(new String[] {"--runner=FlinkRunner", "--flinkMaster=[local]"})
            .size());
    assertEquals(Map.of(), RunnerSettings.flinkSettings(new String[] {"--flinkMaster=[local]"}));
  }

  @Test
  void managedMemoryIsFlinksShareOfTheHeapNotInUse() {
    Runtime r = Runtime.getRuntime();
    long before = r.maxMemory() - (r.totalMemory() - r.freeMemory());
    long managed = RunnerSettings.flinkManagedBytes(r);
    long after = r.maxMemory() - (r.totalMemory() - r.freeMemory());
    assertTrue(managed <= (long) (0.4 * Math.max(before, after)) + 1, managed + " bytes");
    assertTrue(managed >= (long) (0.4 * Math.min(before, after)) - 1, managed + " bytes");
  }

  /**
   * The job's parse gives a local Flink run a configuration directory whose managed memory Beam's
   * FlinkRunner keeps (it sizes it itself, after a System.gc(), only when the key is absent).
   */
  @Test
  void flinksEnvironmentSeesTheSetting() {
    FlinkPipelineOptions options =
        CommandLine.parseOnly(
                new String[] {"--runner=FlinkRunner", "--flinkMaster=[local]", "--parallelism=2"},
                CdcToDeltaOptions.class)
            .as(FlinkPipelineOptions.class);
    String dir = options.getFlinkConfDir();
    assertNotNull(dir);
    MemorySize managed =
        GlobalConfiguration.loadConfiguration(dir).get(TaskManagerOptions.MANAGED_MEMORY_SIZE);
    ExecutionEnvironment env = FlinkExecutionEnvironments.createBatchExecutionEnvironment(options);
    assertEquals(managed, env.getConfiguration().get(TaskManagerOptions.MANAGED_MEMORY_SIZE));
  }

  /** A configuration directory the user names is the one Flink reads. */
  @Test
  void theUsersFlinkConfigurationWins(@TempDir Path dir) throws Exception {
    Files.writeString(dir.resolve("flink-conf.yaml"), "taskmanager.memory.managed.size: 64m\n");
    FlinkPipelineOptions options =
        CommandLine.parseOnly(
                new String[] {
                  "--runner=FlinkRunner", "--flinkMaster=[local]", "--flinkConfDir=" + dir
                },
                CdcToDeltaOptions.class)
            .as(FlinkPipelineOptions.class);
    assertEquals(dir.toString(), options.getFlinkConfDir());
    ExecutionEnvironment env = FlinkExecutionEnvironments.createBatchExecutionEnvironment(options);
    assertEquals(
        MemorySize.parse("64m"),
        env.getConfiguration().get(TaskManagerOptions.MANAGED_MEMORY_SIZE));
  }
}
