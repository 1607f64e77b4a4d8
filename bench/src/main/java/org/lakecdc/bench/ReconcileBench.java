package org.lakecdc.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.trino.tpch.Order;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import org.lakecdc.io.mssqlcdc.fake.FakeSqlServer;

/**
 * The reconcile measurement (docs/performance.md "Reconcile"): the {@code Reconcile} job proving a
 * silver table of N rows against its source table, in which exactly 10 differences were planted,
 * run through its command line ({@code org.lakecdc.pipelines.Reconcile}) in a child JVM.
 *
 * <p><b>The tables.</b> Two simulator databases hold {@code dbo.orders} with the first N TPC-H
 * orders ({@link Orders}), loaded before CDC is enabled (no change rows) and followed by one idle
 * entry, by the same steps, so their LSNs are the same: {@code source-job}, which the main job
 * ({@code org.lakecdc.pipelines.CdcToDelta} with its default whole bootstrap snapshot and {@code
 * --silver}) reads once into bronze and silver, and {@code source}, the same table with 10 rows
 * changed behind CDC's back: {@link #PLANTED} (the orders at positions (2j+1)·N/20, j = 0..9, in
 * the order they are generated): j = 0..3 get another {@code o_comment} (RECORD_DIFF), j = 4..6 are
 * left out (MISSING_SOURCE: only in silver), j = 7..9 gain a copy under an order key TPC-H never
 * uses, the next multiple of 32 less 16 (MISSING_TARGET: only in the source). The values silver
 * holds are thus the project's own conversions of the source's. Everything is built once per N in
 * the work directory ({@code reconcile-<N>}, a {@code ready} file written last) and reused.
 *
 * <p><b>The run.</b> {@code Reconcile --fakePath=<source> --sample=1 --json} (every bucket compared
 * row by row, so a RECORD_DIFF in a bucket whose counts match is found too), in a JVM with {@code
 * -Xmx} = {@code --jobHeap}, a new report table each time. Its time is the job's own {@code
 * seconds} (from after option parsing to the report read back: tier 1, tier 2, the report commit),
 * JVM start-up not counted. The answer is checked before any figure is given: exit code 4, exactly
 * the 10 planted keys with their outcomes (RECORD_DIFF naming only {@code o_comment}), failures
 * {@code {"MISSING_SOURCE":3,"MISSING_TARGET":3,"RECORD_DIFF":4}}, no key or bucket in flight, no
 * chunk failure, every bucket hashed, and 2N rows compared (N in the source, N in silver).
 */
final class ReconcileBench {
  /** Differences planted: 4 RECORD_DIFF, 3 MISSING_SOURCE, 3 MISSING_TARGET. */
  static final int PLANTED = 10;

  /** The {@code o_comment} of the 4 rows changed at the source. */
  static final String CHANGED_COMMENT = "changed behind CDC's back";

  private static final String RECONCILE_MAIN = "org.lakecdc.pipelines.Reconcile";
  private static final String JOB_MAIN = "org.lakecdc.pipelines.CdcToDelta";
  private static final ObjectMapper JSON = new ObjectMapper();

  /**
   * One reconcile run's answer and time.
   *
   * @param seconds the job's own wall time, seconds
   * @param rowsCompared rows read by tier 2 on both sides
   * @param buckets tier 1 buckets
   * @param mismatched MISMATCH buckets
   */
  record Run(double seconds, long rowsCompared, int buckets, int mismatched) {}

  private final Path benchDir;
  private final Path work;
  private final String heap;
  private final PrintStream out;

  /**
   * @param benchDir the bench module's directory
   * @param work the work directory (the built tables are cached there)
   * @param heap the child JVMs' {@code -Xmx}
   * @param out where progress lines go
   */
  ReconcileBench(Path benchDir, Path work, String heap, PrintStream out) {
    this.benchDir = benchDir;
    this.work = work;
    this.heap = heap;
    this.out = out;
  }

  /**
   * Builds the databases, bronze and silver of {@code rows} orders when they are not built yet.
   *
   * @param rows N, at least 20
   * @return the directory holding them
   * @throws IllegalStateException when the main job fails or silver does not hold N rows
   */
  Path ensure(long rows) throws InterruptedException {
    Path dir = work.resolve("reconcile-" + rows);
    if (Files.exists(dir.resolve("ready"))) {
      return dir;
    }
    SourceDatabase.delete(dir);
    long start = System.nanoTime();
    source(dir.resolve("source-job"), rows, false);
    source(dir.resolve("source"), rows, true);
    double sources = (System.nanoTime() - start) / 1e9;
    long job = System.nanoTime();
    ChildJvm jvm =
        ChildJvm.start(
            classpath(),
            List.of("-Xmx" + heap),
            JOB_MAIN,
            List.of(
                "--fakePath=" + dir.resolve("source-job"),
                "--captureInstance=" + Orders.CAPTURE_INSTANCE,
                "--target=" + dir.resolve("bronze"),
                "--factsTable=" + dir.resolve("facts"),
                "--controlTable=" + dir.resolve("control"),
                "--silver=" + dir.resolve("silver"),
                "--logFile=" + dir.resolve("job.log")),
            dir.resolve("job-output.log"));
    jvm.await(6 * 3600);
    long silverRows = new BronzeTable(dir.resolve("silver")).rows();
    if (silverRows != rows) {
      throw new IllegalStateException(
          "the main job's silver table holds "
              + silverRows
              + " rows, not the "
              + rows
              + " of the source; see "
              + jvm.log());
    }
    SourceDatabase.delete(dir.resolve("source-job"));
    try {
      Files.writeString(dir.resolve("ready"), "", StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot write " + dir.resolve("ready"), e);
    }
    out.printf(
        Locale.ROOT,
        "  %-24s %,d rows: two source databases in %.1f s, bronze and silver (CdcToDelta,"
            + " bootstrap snapshot, --silver) in %.1f s%n",
        "reconcile build",
        rows,
        sources,
        (System.nanoTime() - job) / 1e9);
    return dir;
  }

  /**
   * A simulator database of the first {@code rows} orders, loaded before CDC is enabled, then one
   * idle entry; with {@code planted}, the 10 differences of the class comment.
   */
  static void source(Path dir, long rows, boolean planted) {
    FakeSqlServer db = FakeSqlServer.open(dir).timeZone(ZoneOffset.UTC);
    db.createTable(Orders.TABLE, Orders.COLUMNS, Orders.KEY);
    Map<Long, Integer> plantedAt = positions(rows);
    try (FakeSqlServer.Bulk bulk = db.bulk()) {
      List<Map<String, Object>> batch = new ArrayList<>();
      long position = 0;
      for (Iterator<Order> it = Orders.first(rows); it.hasNext(); position++) {
        Map<String, Object> row = Orders.row(it.next());
        Integer j = planted ? plantedAt.get(position) : null;
        if (j == null) {
          batch.add(row);
        } else if (j < 4) {
          row.put("o_comment", CHANGED_COMMENT);
          batch.add(row);
        } else if (j >= 7) {
          batch.add(row);
          Map<String, Object> copy = new LinkedHashMap<>(row);
          copy.put("o_orderkey", unusedKey((Integer) row.get("o_orderkey")));
          batch.add(copy);
        }
        if (batch.size() >= 100_000) {
          db.loadRows(Orders.TABLE, batch);
          batch.clear();
        }
      }
      db.loadRows(Orders.TABLE, batch);
      db.enableCdc(Orders.TABLE);
      db.idle(SourceDatabase.START);
    }
  }

  /** Position (0-based, in generation order) of each planted order to its j, 0..9. */
  static Map<Long, Integer> positions(long rows) {
    Map<Long, Integer> out = new TreeMap<>();
    for (int j = 0; j < PLANTED; j++) {
      out.put((2L * j + 1) * rows / (2L * PLANTED), j);
    }
    return out;
  }

  /**
   * An order key TPC-H never generates near {@code key}: TPC-H uses the first 8 of every 32 keys
   * (1..8, 33..40, ...), so the key 16 above the start of {@code key}'s group of 32 is free.
   */
  static int unusedKey(int key) {
    return (key - 1) / 32 * 32 + 16;
  }

  /**
   * The planted keys and their outcomes, as Reconcile's JSON lists them ({@code {"o_orderkey":k}
   * FAILURE}), sorted as its key rows are (by the key's JSON text).
   */
  static List<String> expectedKeys(long rows) {
    Map<Long, Integer> plantedAt = positions(rows);
    List<String> out = new ArrayList<>();
    long position = 0;
    for (Iterator<Order> it = Orders.first(rows); it.hasNext(); position++) {
      Order o = it.next();
      Integer j = plantedAt.get(position);
      if (j == null) {
        continue;
      }
      int key = (int) o.getOrderKey();
      if (j < 4) {
        out.add(keyJson(key) + " RECORD_DIFF");
      } else if (j < 7) {
        out.add(keyJson(key) + " MISSING_SOURCE");
      } else {
        out.add(keyJson(unusedKey(key)) + " MISSING_TARGET");
      }
    }
    out.sort(null);
    return out;
  }

  private static String keyJson(int key) {
    return "{\"o_orderkey\":" + key + "}";
  }

  /**
   * Runs Reconcile once on the built tables (a new report table in {@code run}) and checks its
   * answer.
   *
   * @param dir what {@link #ensure} returned
   * @param rows N
   * @param run the run directory (report table, logs)
   * @return the run's time and counts
   * @throws IllegalStateException when the JVM fails or the answer is not exactly the planted
   *     differences (naming what differs and the log)
   */
  Run reconcile(Path dir, long rows, Path run) throws InterruptedException {
    ChildJvm jvm =
        ChildJvm.start(
            classpath(),
            List.of("-Xmx" + heap),
            RECONCILE_MAIN,
            List.of(
                "--fakePath=" + dir.resolve("source"),
                "--captureInstance=" + Orders.CAPTURE_INSTANCE,
                "--bronze=" + dir.resolve("bronze"),
                "--silver=" + dir.resolve("silver"),
                "--factsTable=" + dir.resolve("facts"),
                "--report=" + run.resolve("report"),
                "--sample=1",
                "--json",
                "--logFile=" + run.resolve("reconcile.log")),
            run.resolve("reconcile-output.log"));
    int code = jvm.awaitCode(6 * 3600);
    JsonNode result = null;
    for (String line : DeltaSparkAnchor.lines(jvm.log())) {
      if (line.startsWith("{\"run_id\"")) {
        try {
          result = JSON.readTree(line);
        } catch (IOException e) {
          throw new UncheckedIOException("Reconcile's JSON does not parse; see " + jvm.log(), e);
        }
      }
    }
    if (code != 4 || result == null) {
      throw new IllegalStateException(
          "Reconcile ended with exit code "
              + code
              + (result == null ? " and no JSON" : "")
              + ", not 4 (the planted mismatches); see "
              + jvm.log());
    }
    List<String> keys = new ArrayList<>();
    List<String> wrong = new ArrayList<>();
    for (JsonNode k : result.get("keys")) {
      String type = k.get("failure_type").asText();
      keys.add(k.get("key").asText() + " " + type);
      if (type.equals("RECORD_DIFF")) {
        try {
          String columns = JSON.readTree(k.get("detail").asText()).get("columns").toString();
          if (!columns.equals("[\"o_comment\"]")) {
            wrong.add(k.get("key").asText() + " differs in " + columns + ", not [\"o_comment\"]");
          }
        } catch (IOException | NullPointerException e) {
          wrong.add(k.get("key").asText() + " has the detail " + k.get("detail"));
        }
      }
    }
    check(wrong, "keys", expectedKeys(rows), keys);
    check(
        wrong,
        "failures",
        "{\"MISSING_SOURCE\":3,\"MISSING_TARGET\":3,\"RECORD_DIFF\":4}",
        result.get("failures").toString());
    check(wrong, "in_flight", 0, result.get("in_flight").asInt());
    check(wrong, "chunks", "[]", result.get("chunks").toString());
    check(wrong, "hashed", result.get("buckets").asInt(), result.get("hashed").asInt());
    check(wrong, "rows_compared", 2 * rows, result.get("rows_compared").asLong());
    if (!wrong.isEmpty()) {
      throw new IllegalStateException(
          "Reconcile did not report exactly the "
              + PLANTED
              + " planted differences: "
              + String.join("; ", wrong)
              + "; see "
              + jvm.log());
    }
    Run r =
        new Run(
            result.get("seconds").asDouble(),
            result.get("rows_compared").asLong(),
            result.get("buckets").asInt(),
            result.get("mismatch").asInt());
    out.printf(
        Locale.ROOT,
        "  %-24s %,d rows: %.1f s, %,d rows compared, %d %s (%d mismatched), exactly the"
            + " %d planted keys%n",
        "reconcile",
        rows,
        r.seconds(),
        r.rowsCompared(),
        r.buckets(),
        r.buckets() == 1 ? "bucket" : "buckets",
        r.mismatched(),
        PLANTED);
    return r;
  }

  private static void check(List<String> wrong, String what, Object expected, Object actual) {
    if (!expected.equals(actual)) {
      wrong.add(what + " " + actual + ", expected " + expected);
    }
  }

  private String classpath() {
    Path target = benchDir.resolve("target");
    return ChildJvm.classpath(target.resolve("job-classpath.txt"), target.resolve("classes"));
  }
}
