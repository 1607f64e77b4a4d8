package org.lakecdc.pipelines.reconcile;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.transforms.Counts;
import org.lakecdc.transforms.reconcile.BronzeGeneration;
import org.lakecdc.transforms.reconcile.Bucket;
import org.lakecdc.transforms.reconcile.ReconcilePlan;
import org.lakecdc.transforms.reconcile.ReconcileReport;
import org.lakecdc.transforms.reconcile.ReconcileSpec;

/**
 * A {@code Reconcile} run's outcome, read back from the report.
 *
 * @param plan the plan
 * @param generation the bronze generation silver reflects, or null when bronze holds no stream
 *     position
 * @param buckets the bucket rows
 * @param keyRows the key rows, in key order
 * @param chunkRows the chunk rows (CHUNK_TILING, CHUNK_ROWS, CHUNK_STAMP), in chunk order
 * @param rowsCompared rows read on both sides by tier 2
 * @param seconds the run's wall time
 */
public record ReconcileResult(
    ReconcilePlan plan,
    @Nullable BronzeGeneration generation,
    List<Map<String, Object>> buckets,
    List<Map<String, Object>> keyRows,
    List<Map<String, Object>> chunkRows,
    long rowsCompared,
    double seconds) {
  private static final ObjectMapper JSON = new ObjectMapper();

  /** Key rows the summary, the JSON and the page list at most. */
  public static final int FIRST_KEYS = 20;

  public static ReconcileResult of(
      ReconcilePlan plan,
      @Nullable BronzeGeneration generation,
      List<Map<String, Object>> rows,
      long rowsCompared,
      double seconds) {
    List<Map<String, Object>> buckets = new ArrayList<>();
    List<Map<String, Object>> keyRows = new ArrayList<>();
    List<Map<String, Object>> chunkRows = new ArrayList<>();
    for (Map<String, Object> r : rows) {
      if (r.get(ReconcileReport.STATUS) != null) {
        buckets.add(r);
      } else if (r.get(ReconcileReport.KEY) != null) {
        keyRows.add(r);
      } else {
        chunkRows.add(r);
      }
    }
    buckets.sort(Comparator.comparing(r -> plan.buckets().indexOf(bucketOf(plan, r))));
    keyRows.sort(Comparator.comparing(r -> (String) r.get(ReconcileReport.KEY)));
    chunkRows.sort(
        Comparator.comparing((Map<String, Object> r) -> chunkOf(r))
            .thenComparing(r -> (String) r.get(ReconcileReport.FAILURE_TYPE)));
    return new ReconcileResult(
        plan, generation, buckets, keyRows, chunkRows, rowsCompared, seconds);
  }

  /** The chunk index in a chunk row's detail. */
  public static int chunkOf(Map<String, Object> chunkRow) {
    try {
      return JSON.readTree((String) chunkRow.get(ReconcileReport.DETAIL)).path("chunk").asInt();
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  private static Bucket bucketOf(ReconcilePlan plan, Map<String, Object> row) {
    for (Bucket b : plan.buckets()) {
      if (java.util.Objects.equals(
              ReconcileReport.lo(b, plan.ordinal()), row.get(ReconcileReport.BUCKET_LO))
          && java.util.Objects.equals(
              ReconcileReport.hi(b, plan.ordinal()), row.get(ReconcileReport.BUCKET_HI))) {
        return b;
      }
    }
    return plan.buckets().get(0);
  }

  public long count(String status) {
    return buckets.stream().filter(r -> status.equals(r.get(ReconcileReport.STATUS))).count();
  }

  public long hashed() {
    return buckets.stream().filter(r -> Boolean.TRUE.equals(r.get(ReconcileReport.HASHED))).count();
  }

  /** Key and chunk rows per failure type, in name order. */
  public TreeMap<String, Long> failures() {
    TreeMap<String, Long> out = new TreeMap<>();
    for (Map<String, Object> r : keyRows) {
      out.merge((String) r.get(ReconcileReport.FAILURE_TYPE), 1L, Long::sum);
    }
    for (Map<String, Object> r : chunkRows) {
      out.merge((String) r.get(ReconcileReport.FAILURE_TYPE), 1L, Long::sum);
    }
    return out;
  }

  /**
   * Whether the run found a mismatch: a MISMATCH bucket, a key failure not in flight or a chunk
   * failure.
   */
  public boolean mismatched() {
    return count("MISMATCH") > 0
        || failures().keySet().stream().anyMatch(t -> !t.equals(ReconcileReport.IN_FLIGHT));
  }

  long rowsPerSecond() {
    return seconds <= 0 ? rowsCompared : Math.round(rowsCompared / seconds);
  }

  /** Prints the text report of the run of {@code spec}: a header, the buckets, the first keys. */
  public void print(ReconcileSpec spec, PrintStream out) {
    ReconcileReport.Run run = plan.run();
    out.printf(
        "Reconcile of %s (%s.%s) with silver %s version %d (applied_lsn %s), source at %s:%n",
        spec.captureInstance(),
        spec.sourceSchema(),
        spec.sourceTable(),
        spec.silver(),
        run.silverVersion(),
        run.silverLsn(),
        run.sourceLsn());
    if (generation != null) {
      out.println("  " + generation.describe());
    }
    out.printf(
        "  %s: %,d matched, %,d in flight, %,d mismatched; %,d compared row by row%n",
        Counts.of(buckets.size(), "bucket", "buckets"),
        count("MATCH"),
        count("IN_FLIGHT"),
        count("MISMATCH"),
        hashed());
    TreeMap<String, Long> failures = failures();
    List<String> byType = new ArrayList<>();
    failures.forEach(
        (type, n) -> {
          if (!type.startsWith("CHUNK_")) {
            byType.add(type + " " + n);
          }
        });
    out.println("  keys: " + (byType.isEmpty() ? "no differing key" : String.join(", ", byType)));
    for (int i = 0; i < Math.min(FIRST_KEYS, keyRows.size()); i++) {
      Map<String, Object> r = keyRows.get(i);
      out.printf(
          "    %s %s in [%s, %s) %s%n",
          r.get(ReconcileReport.KEY),
          r.get(ReconcileReport.FAILURE_TYPE),
          bound(r.get(ReconcileReport.BUCKET_LO)),
          bound(r.get(ReconcileReport.BUCKET_HI)),
          r.get(ReconcileReport.DETAIL));
    }
    if (!chunkRows.isEmpty()) {
      out.println(
          "  chunks of the chunked snapshot: "
              + Counts.of(chunkRows.size(), "failed check", "failed checks"));
      for (Map<String, Object> r : chunkRows) {
        out.printf(
            "    chunk %d %s in [%s, %s) %s%n",
            chunkOf(r),
            r.get(ReconcileReport.FAILURE_TYPE),
            bound(r.get(ReconcileReport.BUCKET_LO)),
            bound(r.get(ReconcileReport.BUCKET_HI)),
            r.get(ReconcileReport.DETAIL));
      }
    }
    out.printf(
        "  %s compared in %.1f s, %s rows/s; report %s run_id %s%n",
        Counts.of(rowsCompared, "row", "rows"),
        seconds,
        String.format(Locale.ROOT, "%,d", rowsPerSecond()),
        spec.report(),
        run.runId());
    out.println(
        mismatched()
            ? "  MISMATCH: silver differs from the source (exit code 4)"
            : count("IN_FLIGHT") > 0 || failures.containsKey(ReconcileReport.IN_FLIGHT)
                ? "  silver matches, apart from changes in flight (run again once it has caught up)"
                : "  silver matches the source");
  }

  private static @Nullable String lsnText(@Nullable Lsn lsn) {
    return lsn == null ? null : lsn.toString();
  }

  private static String bound(@Nullable Object v) {
    return v == null ? "open" : v.toString();
  }

  /** The JSON report of the run of {@code spec} (docs/options.md "Reconcile" lists the fields). */
  public String json(ReconcileSpec spec) {
    ObjectNode node = JSON.createObjectNode();
    ReconcileReport.Run run = plan.run();
    node.put("run_id", run.runId());
    node.put("silver", spec.silver());
    node.put("silver_version", run.silverVersion());
    node.put("silver_lsn", run.silverLsn());
    node.put("source_lsn", run.sourceLsn());
    if (generation == null) {
      node.putNull("bronze_generation");
    } else {
      ObjectNode g = node.putObject("bronze_generation");
      g.put("bronze", spec.bronze());
      g.put("generation", generation.generation());
      g.put("app_id", generation.appId());
      g.put("resnapshot_lsn", lsnText(generation.resnapshotLsn()));
      g.put("complete", generation.complete());
      g.put("silver_snapshot_lsn", lsnText(generation.silverSnapshotLsn()));
      g.put("silver_reflects", generation.silverReflects());
    }
    node.put("buckets", buckets.size());
    node.put("match", count("MATCH"));
    node.put("in_flight", count("IN_FLIGHT"));
    node.put("mismatch", count("MISMATCH"));
    node.put("hashed", hashed());
    ObjectNode failures = node.putObject("failures");
    failures().forEach(failures::put);
    node.put("rows_compared", rowsCompared);
    node.put("seconds", Math.round(seconds * 1000) / 1000.0);
    node.put("rows_per_s", rowsPerSecond());
    node.put("report", spec.report());
    node.put("matched", !mismatched());
    ArrayNode keys = node.putArray("keys");
    for (int i = 0; i < Math.min(FIRST_KEYS, keyRows.size()); i++) {
      Map<String, Object> r = keyRows.get(i);
      ObjectNode k = keys.addObject();
      k.put("key", (String) r.get(ReconcileReport.KEY));
      k.put("failure_type", (String) r.get(ReconcileReport.FAILURE_TYPE));
      k.put("bucket_lo", (String) r.get(ReconcileReport.BUCKET_LO));
      k.put("bucket_hi", (String) r.get(ReconcileReport.BUCKET_HI));
      k.put("detail", (String) r.get(ReconcileReport.DETAIL));
    }
    ArrayNode chunks = node.putArray("chunks");
    for (Map<String, Object> r : chunkRows) {
      ObjectNode k = chunks.addObject();
      k.put("chunk", chunkOf(r));
      k.put("failure_type", (String) r.get(ReconcileReport.FAILURE_TYPE));
      k.put("bucket_lo", (String) r.get(ReconcileReport.BUCKET_LO));
      k.put("bucket_hi", (String) r.get(ReconcileReport.BUCKET_HI));
      k.put("detail", (String) r.get(ReconcileReport.DETAIL));
    }
    return node.toString();
  }
}
