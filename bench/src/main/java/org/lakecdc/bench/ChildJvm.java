package org.lakecdc.bench;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A Java program in its own JVM (the job, or the delta-spark writer), on a class path read from a
 * file that the build writes ({@code maven-dependency-plugin:build-classpath}). Output and errors
 * go to one log file.
 */
final class ChildJvm {
  /** The packages Spark needs open on Java 17 (its own launcher opens the same). */
  static final List<String> SPARK_ADD_OPENS =
      List.of(
          "java.lang",
          "java.lang.invoke",
          "java.lang.reflect",
          "java.io",
          "java.net",
          "java.nio",
          "java.util",
          "java.util.concurrent",
          "java.util.concurrent.atomic",
          "sun.nio.ch",
          "sun.nio.cs",
          "sun.security.action",
          "sun.util.calendar");

  private final Process process;
  private final Path log;
  private final String name;

  private ChildJvm(Process process, Path log, String name) {
    this.process = process;
    this.log = log;
    this.name = name;
  }

  /**
   * The class path of a build's class path file and its classes directories.
   *
   * @param classpathFile the file {@code build-classpath} wrote
   * @param classes directories to put first
   * @throws IllegalStateException when the file is missing (the module was not built)
   */
  static String classpath(Path classpathFile, Path... classes) {
    if (!Files.exists(classpathFile)) {
      throw new IllegalStateException(
          classpathFile
              + " is missing: build the bench module first (mvn -B -pl bench -am compile)");
    }
    List<String> parts = new ArrayList<>();
    for (Path c : classes) {
      parts.add(c.toAbsolutePath().toString());
    }
    try {
      parts.add(Files.readString(classpathFile, StandardCharsets.UTF_8).strip());
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot read " + classpathFile, e);
    }
    return String.join(File.pathSeparator, parts);
  }

  /**
   * Starts {@code java <jvmArgs> -cp <classpath> <mainClass> <args>}.
   *
   * @param classpath the class path
   * @param jvmArgs options of the JVM (heap, add-opens)
   * @param mainClass the main class
   * @param args its arguments
   * @param log where its output and errors go (replaced)
   */
  static ChildJvm start(
      String classpath, List<String> jvmArgs, String mainClass, List<String> args, Path log) {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.addAll(jvmArgs);
    command.add("-cp");
    command.add(classpath);
    command.add(mainClass);
    command.addAll(args);
    try {
      Files.createDirectories(log.getParent());
      Process process =
          new ProcessBuilder(command)
              .redirectErrorStream(true)
              .redirectOutput(log.toFile())
              .start();
      return new ChildJvm(process, log, mainClass.substring(mainClass.lastIndexOf('.') + 1));
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot start a JVM for " + mainClass, e);
    }
  }

  /** True while the JVM runs. */
  boolean isAlive() {
    return process.isAlive();
  }

  /**
   * Waits for the JVM to exit.
   *
   * @param timeoutSeconds how long to wait before killing it
   * @throws IllegalStateException when it does not finish in time or exits with a code other than 0
   *     (with the end of its log)
   */
  void await(long timeoutSeconds) throws InterruptedException {
    int code = awaitCode(timeoutSeconds);
    if (code != 0) {
      throw new IllegalStateException(
          name + " failed with exit code " + code + "; see " + log + tail());
    }
  }

  /**
   * Waits for the JVM to exit and returns its exit code (for a program whose non-zero codes are
   * answers, such as Reconcile's 4).
   *
   * @param timeoutSeconds how long to wait before killing it
   * @return the exit code
   * @throws IllegalStateException when it does not finish in time (with the end of its log)
   */
  int awaitCode(long timeoutSeconds) throws InterruptedException {
    if (!process.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
      process.destroyForcibly().waitFor();
      throw new IllegalStateException(
          name + " did not finish in " + timeoutSeconds + " s; see " + log + tail());
    }
    return process.exitValue();
  }

  /** Asks the JVM to stop (SIGTERM, its shutdown hooks run) and waits up to {@code seconds}. */
  void stop(long seconds) throws InterruptedException {
    process.destroy();
    if (!process.waitFor(seconds, TimeUnit.SECONDS)) {
      process.destroyForcibly().waitFor();
    }
  }

  /** The log file. */
  Path log() {
    return log;
  }

  private String tail() {
    try {
      List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
      return "\n  "
          + String.join("\n  ", lines.subList(Math.max(0, lines.size() - 15), lines.size()));
    } catch (IOException e) {
      return "";
    }
  }
}
