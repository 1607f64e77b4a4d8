package org.lakecdc.pipelines.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Map;
import java.util.Properties;
import org.apache.spark.SparkConf;
import org.junit.jupiter.api.Test;
import org.lakecdc.pipelines.options.CdcToDeltaOptions;

/** The settings a job's command line sets for a local Spark run, and only for one. */
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
}
