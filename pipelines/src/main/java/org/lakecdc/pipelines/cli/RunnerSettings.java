package org.lakecdc.pipelines.cli;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.beam.sdk.options.PipelineOptions;

/**
 * What a job's command line sets for the SparkRunner beyond Beam's defaults, for a run that starts
 * its own local Spark: the settings a one-JVM job does not need and pays for at start-up. Nothing
 * here refers to Spark (it may not be on the class path): Spark reads every {@code spark.*} system
 * property into the configuration Beam's SparkRunner creates its context from ({@code new
 * SparkConf()}), so a setting is a system property set before the pipeline runs.
 *
 * <p>Set only when all of these hold, so that what users get elsewhere stays as it was:
 *
 * <ul>
 *   <li>the runner is the SparkRunner ({@code --runner=SparkRunner});
 *   <li>the job starts a local Spark itself: no {@code spark.master} system property (which {@code
 *       spark-submit} sets for the driver: a submitted job keeps every Spark default) and a {@code
 *       --sparkMaster} that is {@code local}, {@code local[...]} or absent (Beam's default, {@code
 *       local[4]});
 *   <li>the system property is not set already ({@code -Dspark.ui.enabled=true} on the job's JVM
 *       keeps the UI on).
 * </ul>
 *
 * <p>The settings ({@link #SPARK_LOCAL}):
 *
 * <ul>
 *   <li>{@code spark.ui.enabled=false}: no web UI. Spark's default starts a Jetty server on port
 *       4040 (or the next free one) with its pages before the context is ready; a job in one JVM
 *       has its progress in its log and its summary.
 * </ul>
 */
public final class RunnerSettings {
  private RunnerSettings() {}

  /** The system properties set for a job that starts its own local Spark, name to value. */
  public static final Map<String, String> SPARK_LOCAL = Map.of("spark.ui.enabled", "false");

  /**
   * Sets the properties of {@link #sparkSettings} as system properties.
   *
   * @param options the parsed options (their runner)
   * @param given the command line's options by name ({@link CommandLine#given})
   */
  static void apply(PipelineOptions options, Map<String, List<String>> given) {
    sparkSettings(runnerName(options), given, System.getProperties()).forEach(System::setProperty);
  }

  /**
   * The system properties to set for a run (see the class comment): {@link #SPARK_LOCAL} less those
   * {@code system} already has, when the run starts its own local Spark; none otherwise.
   *
   * @param runner the runner's simple class name ({@code SparkRunner}; null: Beam's default)
   * @param given the command line's options by name ({@link CommandLine#given})
   * @param system the JVM's system properties
   * @return property name to value; empty when none applies
   */
  static Map<String, String> sparkSettings(
      String runner, Map<String, List<String>> given, Properties system) {
    Map<String, String> set = new HashMap<>();
    List<String> master = given.getOrDefault("sparkMaster", List.of());
    boolean local =
        master.isEmpty()
            || master.get(master.size() - 1).equals("local")
            || master.get(master.size() - 1).startsWith("local[");
    if ("SparkRunner".equals(runner) && system.getProperty("spark.master") == null && local) {
      SPARK_LOCAL.forEach(
          (name, value) -> {
            if (system.getProperty(name) == null) {
              set.put(name, value);
            }
          });
    }
    return set;
  }

  private static String runnerName(PipelineOptions options) {
    return options.getRunner() == null ? null : options.getRunner().getSimpleName();
  }
}
