package org.lakecdc.cluster;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * One process of a cluster the tests start (a Spark Master or Worker, a Flink JobManager or
 * TaskManager, a submission): its output goes to a log file, and it is killed with everything it
 * started ({@link #close}) whatever the test's outcome.
 */
final class ClusterProcess implements AutoCloseable {
  final String name;
  final Process process;
  final Path log;

  private ClusterProcess(String name, Process process, Path log) {
    this.name = name;
    this.process = process;
    this.log = log;
  }

  /**
   * Starts {@code command} in {@code dir} with {@code env} over this JVM's environment, stdout and
   * stderr to {@code log}.
   */
  static ClusterProcess start(
      String name, List<String> command, Map<String, String> env, Path dir, Path log)
      throws IOException {
    Files.createDirectories(dir);
    ProcessBuilder builder =
        new ProcessBuilder(command)
            .directory(dir.toFile())
            .redirectErrorStream(true)
            .redirectOutput(log.toFile())
            .redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile()));
    builder.environment().putAll(env);
    return new ClusterProcess(name, builder.start(), log);
  }

  /** What the process printed so far. */
  String output() {
    try {
      return Files.readString(log, StandardCharsets.ISO_8859_1);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Waits until the process printed {@code text}; fails if it exits first. */
  void awaitOutput(String text, Duration timeout) {
    await(name + " printing '" + text + "'", () -> output().contains(text), timeout, this);
  }

  /**
   * Waits for the process to exit.
   *
   * @return its exit code
   */
  int awaitExit(Duration timeout) throws InterruptedException {
    if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
      throw new AssertionError(
          name + " did not exit in " + timeout + "; its output ends:\n" + tail(output()));
    }
    return process.exitValue();
  }

  /** The processes this one started, and theirs (a Worker's executors). */
  List<ProcessHandle> descendants() {
    return process.descendants().toList();
  }

  /** This process and every process it started that still runs. */
  List<ProcessHandle> selfAndDescendants() {
    List<ProcessHandle> all = new ArrayList<>();
    all.add(process.toHandle());
    all.addAll(descendants());
    return all;
  }

  /** kill -9 of this process alone (what a crashed machine does to it). */
  void killHard() throws InterruptedException {
    process.destroyForcibly();
    process.waitFor(30, TimeUnit.SECONDS);
  }

  /** Kills the process and every process it started, with SIGKILL. */
  @Override
  public void close() {
    List<ProcessHandle> all = new ArrayList<>(descendants());
    process.destroyForcibly();
    all.forEach(ProcessHandle::destroyForcibly);
    try {
      process.waitFor(30, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** The last 60 lines of {@code text}. */
  static String tail(String text) {
    String[] lines = text.split("\n");
    return String.join("\n", List.of(lines).subList(Math.max(0, lines.length - 60), lines.length));
  }

  /**
   * Waits until {@code condition} holds, checking it four times a second; fails when {@code
   * alive}'s process ends first (its output in the message) or after {@code timeout}.
   */
  static void await(
      String what, BooleanSupplier condition, Duration timeout, ClusterProcess alive) {
    long until = System.nanoTime() + timeout.toNanos();
    try {
      while (!condition.getAsBoolean()) {
        if (!alive.process.isAlive()) {
          throw new AssertionError(
              alive.name
                  + " exited with "
                  + alive.process.exitValue()
                  + " before "
                  + what
                  + "; its output ends:\n"
                  + tail(alive.output()));
        }
        if (System.nanoTime() > until) {
          throw new AssertionError(
              "timed out after "
                  + timeout
                  + " waiting for "
                  + what
                  + "; "
                  + alive.name
                  + "'s output ends:\n"
                  + tail(alive.output()));
        }
        // Returns at once when the process ends; otherwise after a quarter second.
        alive.process.waitFor(250, TimeUnit.MILLISECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError("interrupted waiting for " + what, e);
    }
  }

  /** A TCP port free on the loopback address now. */
  static int freePort() {
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return socket.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
