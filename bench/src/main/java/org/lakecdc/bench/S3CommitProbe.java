package org.lakecdc.bench;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.beam.sdk.values.Row;
import org.lakecdc.transforms.delta.DeltaTables;
import org.lakecdc.transforms.facts.FactsTable;

/**
 * One writer of the S3 commit measurement, in a JVM of its own: {@code S3CommitProbe <table>
 * <writer> <count> k=v...} opens the facts table with the S3A settings given, prints {@code ready},
 * waits for a line on standard input (so that concurrent writers start together), then appends
 * {@code count} facts rows, one commit each with its own transaction identifier (as a committer
 * appends), and prints {@code done <elapsed ms> <latency ms>,<latency ms>,...}: the wall time of
 * all appends and each one's, in milliseconds.
 */
public final class S3CommitProbe {
  private S3CommitProbe() {}

  /**
   * Runs one writer (see the class comment).
   *
   * @param args table, writer number, count, then S3A settings as {@code key=value}
   * @throws Exception whatever fails: the JVM exits non-zero with the stack trace
   */
  public static void main(String[] args) throws Exception {
    String table = args[0];
    int writer = Integer.parseInt(args[1]);
    int count = Integer.parseInt(args[2]);
    Map<String, String> conf = new LinkedHashMap<>();
    for (int i = 3; i < args.length; i++) {
      int eq = args[i].indexOf('=');
      conf.put(args[i].substring(0, eq), args[i].substring(eq + 1));
    }
    DeltaTables tables = DeltaTables.create(conf);
    tables.version(table);
    System.out.println("ready");
    System.out.flush();
    new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine();
    String appId = "bench-writer-" + writer;
    List<String> latencies = new ArrayList<>();
    long start = System.nanoTime();
    for (int i = 0; i < count; i++) {
      Row row =
          FactsTable.row()
              .set(FactsTable.APP_ID, appId)
              .set(FactsTable.BATCH_ID, (long) i)
              .set(FactsTable.ROWS, 1L)
              .build();
      long t = System.nanoTime();
      tables.append(table, FactsTable.SCHEMA, List.of(row), appId, i, Map.of());
      latencies.add(String.valueOf((System.nanoTime() - t) / 1_000_000));
    }
    long elapsed = (System.nanoTime() - start) / 1_000_000;
    System.out.println("done " + elapsed + " " + String.join(",", latencies));
    System.out.flush();
    System.exit(0);
  }
}
