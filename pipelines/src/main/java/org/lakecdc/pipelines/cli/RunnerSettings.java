package org.lakecdc.pipelines.cli;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.beam.sdk.options.PipelineOptions;

/**
 * What a job's command line sets for the SparkRunner and the FlinkRunner beyond Beam's defaults,
 * for a run that starts its own local Spark or Flink: what a one-JVM job does not need and pays for
 * at start-up. Nothing here refers to Spark or Flink (they may not be on the class path): Spark
 * reads every {@code spark.*} system property into the configuration Beam's SparkRunner creates its
 * context from ({@code new SparkConf()}), so a Spark setting is a system property set before the
 * pipeline runs.
 *
 * <p>Spark's are set only when all of these hold, so that what users get elsewhere stays as it was:
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
 *
 * <p>For the FlinkRunner, what a run that starts its own mini-cluster ({@code
 * --flinkMaster=[local]}) sets ({@link #flinkSettings}): Flink reads no system properties, only a
 * configuration directory, so the settings go into a {@code flink-conf.yaml} in a new temporary
 * directory that the command line passes as {@code --flinkConfDir}. Set only when the runner is the
 * FlinkRunner, {@code --flinkMaster} is {@code [local]}, and the user names no configuration of
 * their own (no {@code --flinkConfDir}, no {@code FLINK_CONF_DIR} in the environment): theirs is
 * read as it is, and {@code flink run} and a cluster's master keep the cluster's settings.
 *
 * <ul>
 *   <li>{@code taskmanager.memory.managed.size}: {@value #FLINK_MANAGED_FRACTION} of the heap not
 *       in use when the job starts ({@link #flinkManagedBytes}). Beam's FlinkRunner sizes a local
 *       mini-cluster's managed memory the same way when the key is absent, but measures the free
 *       heap after a {@code System.gc()}: a full collection of the whole heap, every thread
 *       stopped, before the job starts (0.46 s in a run on a loaded two-core machine; longer the
 *       more the heap holds).
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

  /**
   * Flink's default share of a TaskManager's memory given to managed memory ({@code
   * taskmanager.memory.managed.fraction}), the share Beam's FlinkRunner takes of the free heap.
   */
  static final double FLINK_MANAGED_FRACTION = 0.4;

  /**
   * The arguments to add to a command line for a run that starts its own local Flink (see the class
   * comment): {@code --flinkConfDir=<dir>} of a new temporary directory holding a {@code
   * flink-conf.yaml} with {@link #flinkSettings}, deleted when the JVM exits; none otherwise.
   *
   * @param options the parsed options (their runner)
   * @param given the command line's options by name ({@link CommandLine#given})
   * @return the arguments to add; empty when none applies
   * @throws UncheckedIOException when the directory or its file cannot be written
   */
  static List<String> flinkArguments(PipelineOptions options, Map<String, List<String>> given) {
    Map<String, String> settings =
        flinkSettings(
            runnerName(options), given, System.getenv(), flinkManagedBytes(Runtime.getRuntime()));
    if (settings.isEmpty()) {
      return List.of();
    }
    try {
      Path dir = Files.createTempDirectory("lakecdc-flink-conf");
      dir.toFile().deleteOnExit();
      writeFlinkConf(dir, "lakecdc for a local Flink run (docs/runners.md)", settings);
      dir.resolve("flink-conf.yaml").toFile().deleteOnExit();
      return List.of("--flinkConfDir=" + dir);
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot write the Flink configuration of a local run", e);
    }
  }

  /**
   * Writes {@code dir/flink-conf.yaml}: a comment line naming its writer, then one {@code key:
   * value} line per setting, in the map's order.
   *
   * @param dir an existing directory
   * @param writtenBy who wrote it and why, for the comment line
   * @param settings key to value
   * @throws IOException when the file cannot be written
   */
  public static void writeFlinkConf(Path dir, String writtenBy, Map<String, String> settings)
      throws IOException {
    StringBuilder yaml = new StringBuilder("# Written by " + writtenBy + ".\n");
    settings.forEach((name, value) -> yaml.append(name).append(": ").append(value).append('\n'));
    Files.writeString(dir.resolve("flink-conf.yaml"), yaml, StandardCharsets.UTF_8);
  }

  /**
   * The Flink configuration for a run (see the class comment), key to value: none unless {@code
   * runner} is the FlinkRunner, {@code --flinkMaster} is {@code [local]} and neither {@code
   * --flinkConfDir} nor {@code FLINK_CONF_DIR} is given.
   *
   * @param runner the runner's simple class name ({@code FlinkRunner}; null: Beam's default)
   * @param given the command line's options by name ({@link CommandLine#given})
   * @param env the process's environment
   * @param managedBytes the managed memory to give the mini-cluster, in bytes ({@link
   *     #flinkManagedBytes})
   * @return key to value, in the order written; empty when none applies
   */
  static Map<String, String> flinkSettings(
      String runner, Map<String, List<String>> given, Map<String, String> env, long managedBytes) {
    List<String> master = given.getOrDefault("flinkMaster", List.of());
    boolean local = !master.isEmpty() && master.get(master.size() - 1).equals("[local]");
    if (!"FlinkRunner".equals(runner)
        || !local
        || given.containsKey("flinkConfDir")
        || env.get("FLINK_CONF_DIR") != null) {
      return Map.of();
    }
    Map<String, String> set = new LinkedHashMap<>();
    set.put("taskmanager.memory.managed.size", managedBytes + "b");
    return set;
  }

  /**
   * {@link #flinkSettings(String, Map, Map, long)} for a command line not parsed yet, for a
   * launcher that writes the run's Flink configuration itself ({@code FlinkLocalLauncher}, whose
   * {@code --flinkConfDir} the parse then leaves alone): the runner is the simple class name of the
   * last {@code --runner} (none: Beam's default), the environment this process's, the managed
   * memory {@link #flinkManagedBytes} of this JVM.
   *
   * @param args the job's command line
   * @return key to value; empty when none applies
   */
  public static Map<String, String> flinkSettings(String[] args) {
    Map<String, List<String>> given = CommandLine.given(args);
    List<String> runners = given.getOrDefault("runner", List.of());
    String runner = runners.isEmpty() ? null : runners.get(runners.size() - 1);
    return flinkSettings(
        runner == null ? null : runner.substring(runner.lastIndexOf('.') + 1),
        given,
        System.getenv(),
        flinkManagedBytes(Runtime.getRuntime()));
  }

  /**
   * {@value #FLINK_MANAGED_FRACTION} of the heap {@code runtime} may still use: its maximum less
   * what it holds now (live objects and garbage not yet collected, so a little less than Beam's
   * measure after a full collection), at least 1 MB.
   *
   * @param runtime the JVM's runtime
   * @return bytes
   */
  static long flinkManagedBytes(Runtime runtime) {
    long free = runtime.maxMemory() - (runtime.totalMemory() - runtime.freeMemory());
    return Math.max(1L << 20, (long) (FLINK_MANAGED_FRACTION * free));
  }

  private static String runnerName(PipelineOptions options) {
    return options.getRunner() == null ? null : options.getRunner().getSimpleName();
  }
}
