package org.lakecdc.pipelines.runners;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.lakecdc.pipelines.cli.JobExit;
import org.lakecdc.pipelines.cli.RunnerSettings;

/**
 * What {@code mvn -Pflink exec:java} starts: runs a job's main class (the system property {@code
 * lakecdc.mainClass}, default the main job) with the given arguments, adding {@code --flinkConfDir}
 * unless the arguments name one.
 *
 * <p>Why: {@code exec:java} runs the job inside Maven's JVM, where the project's classes are not on
 * the system class path. Flink's embedded mini-cluster loads a job that ships no jars with the
 * system class loader and then cannot find its own classes ({@code ClassNotFoundException:
 * org.apache.flink.api.common.ExecutionConfig}). A Flink configuration naming a class path (an
 * empty directory) makes it load the job with a class loader whose parent has the project's
 * classes. A forked JVM, the tests and {@code flink run} do not need this; nothing here refers to
 * Flink, and the runner is still chosen with {@code --runner}. The file also holds what the job's
 * command line gives a local Flink run ({@link RunnerSettings#flinkSettings(String[])}), which the
 * command line leaves out once a {@code --flinkConfDir} is given.
 *
 * <p>It ends like the jobs ({@link JobExit}): the job's main exits the JVM with its code; a failure
 * of the launcher itself (an unknown {@code lakecdc.mainClass}, a configuration it cannot write) is
 * one {@code error:} line and exit code 1.
 */
public final class FlinkLocalLauncher {
  private FlinkLocalLauncher() {}

  /**
   * Runs the job's main class; exits the JVM (see the class comment).
   *
   * @param args the job's arguments
   */
  public static void main(String[] args) {
    JobExit.main(
        () -> {
          String mainClass =
              System.getProperty("lakecdc.mainClass", "org.lakecdc.pipelines.CdcToDelta").strip();
          Method main =
              Class.forName(mainClass, true, Thread.currentThread().getContextClassLoader())
                  .getMethod("main", String[].class);
          // exec:java closes the job's class loader when a main returns; the mini-cluster's JVM
          // shutdown hook then needs this class, so it is loaded while it still can be.
          preload("org.apache.flink.shaded.guava31.com.google.common.cache.RemovalCause");
          try {
            main.invoke(null, (Object) withFlinkConfDir(args));
          } catch (InvocationTargetException e) {
            if (e.getCause() instanceof Exception cause) {
              throw cause;
            }
            throw e;
          }
          return JobExit.OK;
        });
  }

  private static void preload(String className) {
    try {
      Class.forName(className, true, Thread.currentThread().getContextClassLoader());
    } catch (ClassNotFoundException e) {
      // Not on this class path: nothing to keep loaded.
    }
  }

  /** {@code args} with {@code --flinkConfDir} of a configuration made for this run added. */
  static String[] withFlinkConfDir(String[] args) {
    if (Arrays.stream(args).anyMatch(a -> a.startsWith("--flinkConfDir"))) {
      return args;
    }
    try {
      Path dir = Files.createTempDirectory("lakecdc-flink-conf");
      Path empty = Files.createDirectories(dir.resolve("empty-class-path"));
      Map<String, String> conf = new LinkedHashMap<>();
      conf.put("pipeline.classpaths", empty.toUri().toString());
      // What the job's command line gives a local Flink run (RunnerSettings), which it leaves out
      // once a --flinkConfDir is given.
      conf.putAll(RunnerSettings.flinkSettings(args));
      RunnerSettings.writeFlinkConf(
          dir, "lakecdc's FlinkLocalLauncher for mvn exec:java (see its Javadoc)", conf);
      dir.toFile().deleteOnExit();
      List<String> withConf = new ArrayList<>(Arrays.asList(args));
      withConf.add("--flinkConfDir=" + dir);
      return withConf.toArray(String[]::new);
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot write the Flink configuration of a local run", e);
    }
  }
}
