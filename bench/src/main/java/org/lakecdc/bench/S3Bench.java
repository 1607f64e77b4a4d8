package org.lakecdc.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.lakecdc.locals3.LocalS3Server;
import org.lakecdc.transforms.delta.DeltaTables;
import org.lakecdc.transforms.facts.FactsTable;

/**
 * Commits on the local S3 server (S3Proxy on loopback, {@link LocalS3Server}) with the project's
 * conditional log store: {@value #APPENDS} appends of one facts row by one writer JVM, then by
 * {@value #WRITERS} writer JVMs started together on one table ({@link S3CommitProbe}); the commits
 * per second of all writers together and each commit's latency.
 */
final class S3Bench {
  /** Appends per writer. */
  static final int APPENDS = 50;

  /** Concurrent writers. */
  static final int WRITERS = 4;

  /** One measurement: commits per second of all writers, and the commits' latencies in ms. */
  record Commits(double perSecond, List<Double> latenciesMs) {}

  private S3Bench() {}

  /** The next line starting with {@code prefix} (the job's log lines may come between), or null. */
  private static String lineStarting(BufferedReader out, String prefix) throws IOException {
    for (String line = out.readLine(); line != null; line = out.readLine()) {
      if (line.startsWith(prefix)) {
        return line;
      }
    }
    return null;
  }

  /**
   * Runs {@code writers} writer JVMs at once on a new facts table {@code s3a://lake/<name>}.
   *
   * @param server the running server (bucket {@code lake})
   * @param classpath the writers' class path
   * @param name the table's name in the bucket
   * @param writers how many writer JVMs
   * @param logs where the writers' logs go
   * @return all writers' commits per second (their commits over the longest writer's time) and
   *     every commit's latency
   */
  static Commits run(LocalS3Server server, String classpath, String name, int writers, Path logs)
      throws InterruptedException {
    String table = "s3a://lake/" + name;
    DeltaTables.create(server.hadoopConf()).createIfAbsent(table, FactsTable.definition());
    List<Process> processes = new ArrayList<>();
    List<BufferedReader> outputs = new ArrayList<>();
    try {
      Files.createDirectories(logs);
      for (int w = 0; w < writers; w++) {
        List<String> command =
            new ArrayList<>(
                List.of(
                    Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-Xmx512m",
                    "-cp",
                    classpath,
                    S3CommitProbe.class.getName(),
                    table,
                    String.valueOf(w),
                    String.valueOf(APPENDS)));
        server.hadoopConf().forEach((k, v) -> command.add(k + "=" + v));
        Process p =
            new ProcessBuilder(command)
                .redirectError(
                    logs.resolve(name.replace('/', '-') + "-writer-" + w + ".log").toFile())
                .start();
        processes.add(p);
        outputs.add(
            new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8)));
      }
      for (BufferedReader out : outputs) {
        if (lineStarting(out, "ready") == null) {
          throw new IllegalStateException("An S3 writer did not start; see " + logs);
        }
      }
      for (Process p : processes) {
        p.getOutputStream().write("go\n".getBytes(StandardCharsets.UTF_8));
        p.getOutputStream().flush();
      }
      long longest = 0;
      List<Double> latencies = new ArrayList<>();
      for (int w = 0; w < writers; w++) {
        String done = lineStarting(outputs.get(w), "done ");
        if (done == null) {
          throw new IllegalStateException("S3 writer " + w + " failed; see " + logs);
        }
        String[] parts = done.split(" ");
        longest = Math.max(longest, Long.parseLong(parts[1]));
        for (String ms : parts[2].split(",")) {
          latencies.add(Double.parseDouble(ms));
        }
        if (!processes.get(w).waitFor(60, TimeUnit.SECONDS)) {
          throw new IllegalStateException("S3 writer " + w + " did not exit; see " + logs);
        }
      }
      return new Commits(writers * APPENDS / (longest / 1000.0), latencies);
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot run the S3 writers", e);
    } finally {
      for (Process p : processes) {
        p.destroyForcibly();
      }
    }
  }
}
