package org.lakecdc.transforms.delta;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.beam.sdk.values.Row;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.transforms.facts.FactsTable;
import org.lakecdc.transforms.finalization.Finalization;
import org.lakecdc.transforms.finalization.Granularity;

/**
 * One writer JVM of the S3 concurrency tests: opens the tables with the Hadoop configuration of its
 * arguments, waits for a line on standard input (so that all writers start at once), then writes
 * and prints one line per step on standard output.
 *
 * <ul>
 *   <li>{@code append <table> <writer> <count> k=v...}: {@code count} appends of one facts row each
 *       (app id {@code writer-<writer>}, batch {@code i}) the way a committer appends, printing
 *       {@code <writer> <i> <status> <version>} per append;
 *   <li>{@code control <table> <writer> <count> k=v...}: {@code count} advances of the verdict of
 *       target {@code target-<writer>} in a shared control table, minute {@code i} after {@link
 *       #T0}, printing {@code <writer> <i> <verdict>}.
 * </ul>
 */
final class S3Writer {
  static final Instant T0 = Instant.parse("2026-11-01T00:00:00Z");

  private S3Writer() {}

  public static void main(String[] args) throws IOException {
    String mode = args[0];
    String table = args[1];
    int writer = Integer.parseInt(args[2]);
    int count = Integer.parseInt(args[3]);
    Map<String, String> conf = new LinkedHashMap<>();
    for (int i = 4; i < args.length; i++) {
      int eq = args[i].indexOf('=');
      conf.put(args[i].substring(0, eq), args[i].substring(eq + 1));
    }
    DeltaTables tables = DeltaTables.create(conf);
    PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
    if (mode.equals("append")) {
      tables.version(table);
      awaitGo();
      for (int i = 0; i < count; i++) {
        Row row =
            FactsTable.row()
                .set(FactsTable.APP_ID, "writer-" + writer)
                .set(FactsTable.BATCH_ID, (long) i)
                .set(FactsTable.ROWS, 1L)
                .build();
        CommitResult result =
            tables.append(table, FactsTable.SCHEMA, List.of(row), "writer-" + writer, i, Map.of());
        out.println(writer + " " + i + " " + result.status() + " " + result.version());
      }
    } else {
      Finalization finalization = new Finalization(tables, table, Clock.systemUTC());
      String target = "target-" + writer;
      awaitGo();
      for (int i = 1; i <= count; i++) {
        Instant end = T0.plusSeconds(60L * i);
        out.println(
            writer
                + " "
                + i
                + " "
                + finalization.advance(target, Lsn.ZERO, end, Granularity.MINUTE));
      }
    }
    System.exit(0);
  }

  private static void awaitGo() throws IOException {
    System.out.println("ready");
    System.out.flush();
    new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine();
  }

  /** Each writer's output lines after "ready", and its exit code. */
  record Result(List<List<String>> lines, List<Integer> exitCodes, List<String> errors) {}

  /** Runs {@code writers} writer JVMs at once and waits for them. */
  static Result runAll(String mode, String table, int writers, int count, Map<String, String> conf)
      throws IOException, InterruptedException {
    Path module = Path.of("").toAbsolutePath();
    String classpath =
        String.join(
            File.pathSeparator,
            module.resolve("target/test-classes").toString(),
            module.resolve("target/classes").toString(),
            Files.readString(module.resolve("target/test-classpath.txt")).strip());
    List<Process> processes = new ArrayList<>();
    List<BufferedReader> outputs = new ArrayList<>();
    for (int w = 0; w < writers; w++) {
      List<String> command =
          new ArrayList<>(
              List.of(
                  Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                  "-Xmx256m",
                  "-XX:+UseSerialGC",
                  // A writer lives for a few hundred commits: C1's quick code is ready sooner and
                  // costs far less CPU than C2's, on two cores shared with the other writers.
                  "-XX:TieredStopAtLevel=1",
                  "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
                  "-cp",
                  classpath,
                  S3Writer.class.getName(),
                  mode,
                  table,
                  String.valueOf(w),
                  String.valueOf(count)));
      conf.forEach((k, v) -> command.add(k + "=" + v));
      Process p =
          new ProcessBuilder(command)
              .redirectError(module.resolve("target/s3-writer-" + w + ".err").toFile())
              .start();
      processes.add(p);
      BufferedReader reader =
          new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
      outputs.add(reader);
    }
    for (BufferedReader reader : outputs) {
      String ready = reader.readLine();
      if (!"ready".equals(ready)) {
        throw new IllegalStateException("A writer did not start: " + ready);
      }
    }
    for (Process p : processes) {
      p.getOutputStream().write("go\n".getBytes(StandardCharsets.UTF_8));
      p.getOutputStream().flush();
    }
    List<List<String>> lines = new ArrayList<>();
    List<Integer> codes = new ArrayList<>();
    List<String> errors = new ArrayList<>();
    for (int w = 0; w < writers; w++) {
      List<String> mine = new ArrayList<>();
      String line;
      while ((line = outputs.get(w).readLine()) != null) {
        mine.add(line);
      }
      Process p = processes.get(w);
      if (!p.waitFor(5, TimeUnit.MINUTES)) {
        p.destroyForcibly().waitFor();
      }
      lines.add(mine);
      codes.add(p.exitValue());
      errors.add(Files.readString(module.resolve("target/s3-writer-" + w + ".err")));
    }
    return new Result(lines, codes, errors);
  }
}
