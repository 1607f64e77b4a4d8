package org.lakecdc.deltaspark;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * A writer program running in its own JVM on another module's test classpath: Delta Kernel needs
 * Parquet 1.16 and Spark 3.5 ships 1.13, so a Kernel writer never shares this module's classpath.
 * The module's directory comes from a system property the pom sets; its {@code
 * target/test-classpath.txt} (written by its build) lists the dependencies.
 */
final class WriterJvm {
  private final String mainClass;
  private final Process process;
  private final Path log;

  private WriterJvm(String mainClass, Process process, Path log) {
    this.mainClass = mainClass;
    this.process = process;
    this.log = log;
  }

  /**
   * Starts {@code mainClass <target> [args...]} on the test classpath of the module in system
   * property {@code moduleProperty}; its output goes to {@code <target>/writer.log}, or {@code
   * <target>/writer-<args joined by '-'>.log} with arguments (other characters than letters,
   * digits, {@code _.=-} as {@code _}, at most 80 of them).
   */
  static WriterJvm start(String moduleProperty, String mainClass, Path target, String... args)
      throws IOException {
    Path module = Path.of(System.getProperty(moduleProperty)).toAbsolutePath();
    Path classpathFile = module.resolve("target/test-classpath.txt");
    if (!Files.exists(classpathFile)) {
      throw new IllegalStateException(
          classpathFile
              + " is missing: build "
              + module.getFileName()
              + " in the same run (mvn -pl delta-spark-check -am verify)");
    }
    String dependencies = Files.readString(classpathFile, StandardCharsets.UTF_8).strip();
    String classpath =
        String.join(
            File.pathSeparator,
            module.resolve("target/test-classes").toString(),
            module.resolve("target/classes").toString(),
            dependencies);
    Files.createDirectories(target);
    String name = String.join("-", args).replaceAll("[^A-Za-z0-9_.=-]", "_");
    Path log =
        target.resolve(
            args.length == 0
                ? "writer.log"
                : "writer-" + name.substring(0, Math.min(name.length(), 80)) + ".log");
    java.util.List<String> command =
        new java.util.ArrayList<>(
            java.util.List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx1g",
                // A short run: the client compiler and the serial collector start fastest.
                "-XX:TieredStopAtLevel=1",
                "-XX:+UseSerialGC",
                "-cp",
                classpath,
                mainClass,
                target.toString()));
    command.addAll(java.util.List.of(args));
    Process process =
        new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    return new WriterJvm(mainClass, process, log);
  }

  /** Waits for the writer (at most 5 minutes) and fails with its output unless it exited with 0. */
  void await() throws IOException, InterruptedException {
    String name = mainClass.substring(mainClass.lastIndexOf('.') + 1);
    if (!process.waitFor(5, TimeUnit.MINUTES)) {
      process.destroyForcibly();
      throw new IllegalStateException(name + " did not finish in 5 minutes; see " + log);
    }
    if (process.exitValue() != 0) {
      throw new IllegalStateException(
          name
              + " failed with exit code "
              + process.exitValue()
              + ":\n"
              + Files.readString(log, StandardCharsets.UTF_8));
    }
  }
}
