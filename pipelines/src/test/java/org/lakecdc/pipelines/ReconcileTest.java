package org.lakecdc.pipelines;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import org.apache.beam.sdk.schemas.Schema;
import org.apache.beam.sdk.values.Row;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.io.mssqlcdc.fake.ColumnDefinition;
import org.lakecdc.io.mssqlcdc.fake.FakeSqlServer;
import org.lakecdc.transforms.delta.DeltaColumn;
import org.lakecdc.transforms.delta.DeltaTables;

/**
 * The {@link Reconcile} job on the DirectRunner against the simulator (docs/scenarios.md §12): the
 * reconcile setup ({@code dbo.orders} with captured {@code order_id int, status varchar(20)}, two
 * commits inserting 0..49 and 50..99 from 2026-10-01 09:00, streamed and applied to silver by the
 * main job), {@code --bucketRows=10}, {@code --seed=7}.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class ReconcileTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Instant T = Instant.parse("2026-10-01T09:00:00Z");

  @TempDir Path dir;

  private final DeltaTables tables = DeltaTables.create();

  private FakeSqlServer db;

  private String silver() {
    return dir.resolve("delta/silver/dbo_orders").toString();
  }

  /** The reconcile setup: 100 orders in two commits, streamed and applied. */
  private void orders() {
    db = FakeSqlServer.open(dir.resolve("source"));
    db.createTable(
        "dbo.orders",
        List.of(
            ColumnDefinition.of("order_id", "int"), ColumnDefinition.of("status", "varchar(20)")),
        List.of("order_id"));
    db.enableCdc("dbo.orders");
    for (int t = 0; t < 2; t++) {
      FakeSqlServer.Transaction tx = db.transaction(T.plusSeconds(60L * t));
      for (int i = t * 50; i < t * 50 + 50; i++) {
        tx.insert("dbo.orders", Map.of("order_id", i, "status", "new"));
      }
      tx.commit();
    }
    stream();
  }

  /** The main job with --silver: streams what is new and applies it. */
  private void stream() {
    ByteArrayOutputStream sink = new ByteArrayOutputStream();
    PrintStream console = System.out;
    try (PrintStream o = new PrintStream(sink, true, StandardCharsets.UTF_8)) {
      System.setOut(o);
      int code =
          CdcToDelta.run(
              new String[] {
                "--fakePath=" + dir.resolve("source"),
                "--target=" + dir.resolve("delta/dbo_orders"),
                "--factsTable=" + dir.resolve("delta/facts"),
                "--controlTable=" + dir.resolve("delta/table_finalization"),
                "--silver=" + silver(),
                "--bootstrap=false",
                "--logFile=" + dir.resolve("run.log")
              },
              o,
              UnaryOperator.identity());
      assertEquals(0, code, sink.toString(StandardCharsets.UTF_8));
    } finally {
      System.setOut(console);
    }
  }

  /** A run's exit code, its output and error lines. */
  private record Run(int code, String out, String err) {
    JsonNode json() {
      try {
        return JSON.readTree(out);
      } catch (java.io.IOException e) {
        throw new AssertionError(out + err, e);
      }
    }
  }

  private Run reconcile(String... more) {
    List<String> args = new ArrayList<>(List.of("--bucketRows=10", "--seed=7"));
    args.addAll(List.of(more));
    return reconcileWith(args);
  }

  private Run reconcileWith(List<String> more) {
    List<String> args =
        new ArrayList<>(
            List.of(
                "--fakePath=" + dir.resolve("source"),
                "--bronze=" + dir.resolve("delta/dbo_orders"),
                "--silver=" + silver(),
                "--report=" + dir.resolve("delta/reconcile"),
                "--logFile=" + dir.resolve("run.log")));
    args.addAll(more);
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int code;
    try (PrintStream o = new PrintStream(out, true, StandardCharsets.UTF_8);
        PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8)) {
      code = Reconcile.run(args.toArray(String[]::new), o, e);
    }
    return new Run(
        code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  /** "key failure lo hi" of each key row of a JSON result. */
  private static List<String> keys(JsonNode result) {
    List<String> out = new ArrayList<>();
    for (JsonNode k : result.get("keys")) {
      out.add(
          k.get("key").asText()
              + " "
              + k.get("failure_type").asText()
              + " "
              + k.get("bucket_lo").asText()
              + " "
              + k.get("bucket_hi").asText());
    }
    return out;
  }

  /** Rewrites silver with {@code edit} applied to its rows. */
  private void editSilver(UnaryOperator<List<Row>> edit) {
    Schema schema = DeltaColumn.toBeamSchema(tables.describe(silver()).columns());
    tables.rewrite(silver(), schema, edit.apply(new ArrayList<>(tables.scan(silver(), schema))));
  }

  private static Row withStatus(Row r, String status) {
    return Row.fromRow(r).withFieldValue("status", status).build();
  }

  /**
   * C186: silver loses order 3, order 15 gets status 'lost', and a copy of order 5 is appended as
   * order 1000 (a delete silver missed, beyond the source's last key).
   */
  @Test
  void shouldFindAndClassifyAMissedInsertDeleteAndUpdate() throws Exception {
    orders();
    Run clean = reconcile("--sample=1", "--json", "--html=" + dir.resolve("page/report.html"));
    assertEquals(0, clean.code(), clean.err());
    JsonNode c = clean.json();
    assertEquals(10, c.get("buckets").asInt());
    assertEquals(10, c.get("match").asInt());
    assertEquals(10, c.get("hashed").asInt());
    assertEquals(0, c.get("mismatch").asInt());
    assertEquals("{}", c.get("failures").toString());
    assertEquals(200, c.get("rows_compared").asLong(), "100 rows on each side");
    assertTrue(c.get("matched").asBoolean());
    editSilver(
        rows -> {
          List<Row> out = new ArrayList<>();
          Row five = null;
          for (Row r : rows) {
            int id = r.getInt32("order_id");
            if (id == 5) {
              five = r;
            }
            if (id != 3) {
              out.add(id == 15 ? withStatus(r, "lost") : r);
            }
          }
          out.add(Row.fromRow(five).withFieldValue("order_id", 1000).build());
          return out;
        });
    Run zero = reconcile("--sample=0", "--json");
    assertEquals(JobExit.MISMATCH, zero.code(), zero.err());
    JsonNode z = zero.json();
    assertEquals(11, z.get("buckets").asInt());
    assertEquals(9, z.get("match").asInt());
    assertEquals(2, z.get("mismatch").asInt());
    assertEquals(2, z.get("hashed").asInt());
    assertEquals(
        List.of(
            "{\"order_id\":1000} MISSING_SOURCE 1000 1001", "{\"order_id\":3} MISSING_TARGET 0 10"),
        keys(z));
    assertEquals("{\"MISSING_SOURCE\":1,\"MISSING_TARGET\":1}", z.get("failures").toString());
    JsonNode detail = JSON.readTree(z.get("keys").get(0).get("detail").asText());
    assertTrue(detail.get("silver_start_lsn").asText().startsWith("0x"), detail.toString());
    List<String> mismatchBuckets = new ArrayList<>();
    for (Map<String, Object> r :
        org.lakecdc.transforms.reconcile.ReconcileReport.read(
            tables, dir.resolve("delta/reconcile").toString(), z.get("run_id").asText())) {
      if ("MISMATCH".equals(r.get("status"))) {
        mismatchBuckets.add("(" + r.get("source_rows") + "," + r.get("silver_rows") + ")");
      }
    }
    mismatchBuckets.sort(null);
    assertEquals(List.of("(0,1)", "(10,9)"), mismatchBuckets);
    Run all = reconcile("--sample=1", "--json");
    assertEquals(JobExit.MISMATCH, all.code());
    JsonNode a = all.json();
    assertEquals(
        List.of(
            "{\"order_id\":1000} MISSING_SOURCE 1000 1001",
            "{\"order_id\":15} RECORD_DIFF 10 20",
            "{\"order_id\":3} MISSING_TARGET 0 10"),
        keys(a));
    assertEquals(
        "[\"status\"]",
        JSON.readTree(a.get("keys").get(1).get("detail").asText()).get("columns").toString());
    assertEquals(
        "{\"MISSING_SOURCE\":1,\"MISSING_TARGET\":1,\"RECORD_DIFF\":1}",
        a.get("failures").toString());
    String page = Files.readString(dir.resolve("page/report.html"));
    assertTrue(page.contains("<svg id=\"buckets\""), page);
    assertEquals(10, page.split("<rect class=\"bucket MATCH\"", -1).length - 1, page);
    assertTrue(page.contains("No differing key."), page);
  }

  /**
   * C189 (1, 2): a change committed in the simulator and not streamed is IN_FLIGHT, not a mismatch;
   * a real difference beside it is.
   */
  @Test
  void shouldReportChangesNotYetStreamedAsInFlight() {
    orders();
    db.transaction(T.plusSeconds(600))
        .update("dbo.orders", List.of(20), Map.of("status", "paid"))
        .commit();
    Run run = reconcile("--sample=1", "--json");
    assertEquals(0, run.code(), run.out() + run.err());
    JsonNode r = run.json();
    assertEquals(List.of("{\"order_id\":20} IN_FLIGHT 20 30"), keys(r));
    assertEquals(0, r.get("mismatch").asInt());
    assertEquals(10, r.get("match").asInt(), "counts and key sums are equal");
    editSilver(
        rows -> {
          List<Row> out = new ArrayList<>();
          for (Row x : rows) {
            out.add(x.getInt32("order_id") == 45 ? withStatus(x, "lost") : x);
          }
          return out;
        });
    Run both = reconcile("--sample=1", "--json");
    assertEquals(JobExit.MISMATCH, both.code());
    assertEquals(
        List.of("{\"order_id\":20} IN_FLIGHT 20 30", "{\"order_id\":45} RECORD_DIFF 40 50"),
        keys(both.json()));
  }

  /** C193: bad values are refused in one line naming the option, before anything is read. */
  @Test
  void shouldRefuseBadOptions() {
    Run rows = reconcileWith(List.of("--bucketRows=0"));
    assertEquals(JobExit.BAD_OPTION, rows.code());
    assertEquals(
        "error: --bucketRows must be a whole number of rows, at least 1, not '0'\n", rows.err());
    Run sample = reconcileWith(List.of("--sample=1.5"));
    assertEquals(JobExit.BAD_OPTION, sample.code());
    assertEquals("error: --sample must be a number from 0 to 1, not '1.5'\n", sample.err());
    assertTrue(!Files.exists(dir.resolve("delta/reconcile")));
  }
}
