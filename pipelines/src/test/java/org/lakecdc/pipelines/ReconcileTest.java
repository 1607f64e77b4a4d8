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
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.io.mssqlcdc.read.DataLossPolicy;
import org.lakecdc.io.mssqlcdc.schema.OutputType;
import org.lakecdc.pipelines.cli.JobExit;
import org.lakecdc.pipelines.targets.JobConfig;
import org.lakecdc.transforms.delta.DeltaColumn;
import org.lakecdc.transforms.delta.DeltaTables;
import org.lakecdc.transforms.facts.FactsTable;

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
    stream("--silver=" + silver(), "--bootstrap=false");
  }

  /** The main job on {@code dbo_orders} with {@code more} options (e.g. without --silver). */
  private void stream(String... more) {
    List<String> args =
        new ArrayList<>(
            List.of(
                "--fakePath=" + dir.resolve("source"),
                "--target=" + dir.resolve("delta/dbo_orders"),
                "--factsTable=" + dir.resolve("delta/facts"),
                "--controlTable=" + dir.resolve("delta/table_finalization"),
                "--logFile=" + dir.resolve("run.log")));
    args.addAll(List.of(more));
    ByteArrayOutputStream sink = new ByteArrayOutputStream();
    PrintStream console = System.out;
    try (PrintStream o = new PrintStream(sink, true, StandardCharsets.UTF_8)) {
      System.setOut(o);
      int code = CdcToDelta.run(args.toArray(String[]::new), o, UnaryOperator.identity());
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
                "--factsTable=" + dir.resolve("delta/facts"),
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
  void c186FindsAndClassifiesAMissedInsertDeleteAndUpdate() throws Exception {
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
  void c189ReportsChangesNotYetStreamedAsInFlight() {
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
  void c193RefusesBadOptionsInOneLineBeforeAnythingIsRead() {
    Run rows = reconcileWith(List.of("--bucketRows=0"));
    assertEquals(JobExit.BAD_OPTION, rows.code());
    assertEquals(
        "error: --bucketRows must be a whole number of rows, at least 1, not '0'\n", rows.err());
    Run sample = reconcileWith(List.of("--sample=1.5"));
    assertEquals(JobExit.BAD_OPTION, sample.code());
    assertEquals("error: --sample must be a number from 0 to 1, not '1.5'\n", sample.err());
    // Echoed as typed: '2', not the parsed 2.0.
    Run two = reconcileWith(List.of("--sample=2"));
    assertEquals(JobExit.BAD_OPTION, two.code());
    assertEquals("error: --sample must be a number from 0 to 1, not '2'\n", two.err());
    assertTrue(!Files.exists(dir.resolve("delta/reconcile")));
  }

  /** A new simulator with {@code dbo.orders} of {@code columns}, keyed by {@code key}, CDC on. */
  private void table(List<ColumnDefinition> columns, String key) {
    db = FakeSqlServer.open(dir.resolve("source"));
    db.createTable("dbo.orders", columns, List.of(key));
    db.enableCdc("dbo.orders");
  }

  /** Rewrites silver, keeping the rows {@code keep} accepts, each changed by {@code edit}. */
  private void editSilver(java.util.function.Predicate<Row> keep, UnaryOperator<Row> edit) {
    editSilver(
        rows -> {
          List<Row> out = new ArrayList<>();
          for (Row r : rows) {
            if (keep.test(r)) {
              out.add(edit.apply(r));
            }
          }
          return out;
        });
  }

  /** The run's report rows as "failure_type bucket_lo bucket_hi key status", sorted. */
  private List<String> reportRows(JsonNode result, boolean withBuckets) {
    List<String> out = new ArrayList<>();
    for (Map<String, Object> r :
        org.lakecdc.transforms.reconcile.ReconcileReport.read(
            tables, dir.resolve("delta/reconcile").toString(), result.get("run_id").asText())) {
      if (withBuckets || r.get("status") == null) {
        out.add(
            r.get("failure_type")
                + " "
                + r.get("bucket_lo")
                + " "
                + r.get("bucket_hi")
                + " "
                + r.get("key")
                + " "
                + r.get("status"));
      }
    }
    out.sort(null);
    return out;
  }

  /**
   * C187: a computed column (captured NULL, as SQL Server's CDC stores it) is left out of the row
   * hash: bronze and silver leave it out, and when silver holds a column of its name anyway (added
   * here, {@code total = 1} for ids below 5) its values are no difference.
   */
  @Test
  void c187LeavesAComputedColumnOutOfTheComparison() {
    table(
        List.of(
            ColumnDefinition.of("order_id", "int"),
            ColumnDefinition.of("status", "varchar(20)"),
            new ColumnDefinition("total", ColumnDefinition.of("total", "int").type(), true)),
        "order_id");
    FakeSqlServer.Transaction tx = db.transaction(T);
    for (int i = 0; i < 20; i++) {
      tx.insert("dbo.orders", Map.of("order_id", i, "status", "new"));
    }
    tx.commit();
    stream();
    assertEquals(
        List.of("order_id", "status", "_start_lsn", "_commit_ts"),
        DeltaColumn.toBeamSchema(tables.describe(silver()).columns()).getFieldNames(),
        "bronze, and so silver, leave the computed column out");
    tables.addColumns(
        silver(),
        List.of(DeltaColumn.nullable("total", OutputType.INT, "a computed column's copy")));
    editSilver(
        r -> true,
        r -> r.getInt32("order_id") < 5 ? Row.fromRow(r).withFieldValue("total", 1).build() : r);
    Run run = reconcile("--sample=1", "--json");
    assertEquals(0, run.code(), run.out() + run.err());
    JsonNode j = run.json();
    assertEquals("{}", j.get("failures").toString());
    assertEquals(2, j.get("buckets").asInt());
    assertEquals(2, j.get("match").asInt());
    assertEquals(2, j.get("hashed").asInt());
  }

  /**
   * C188 (1, 2): differences bronze explains (streamed, not applied to silver) are IN_FLIGHT; after
   * the apply every bucket matches.
   */
  @Test
  void c188ReportsDifferencesBronzeExplainsAsInFlight() {
    orders();
    db.transaction(T.plusSeconds(600))
        .insert("dbo.orders", Map.of("order_id", 100, "status", "new"))
        .delete("dbo.orders", List.of(30))
        .commit();
    db.transaction(T.plusSeconds(660))
        .update("dbo.orders", List.of(20), Map.of("status", "paid"))
        .commit();
    stream("--bootstrap=false");
    Run run = reconcile("--sample=1", "--json");
    assertEquals(0, run.code(), run.out() + run.err());
    JsonNode r = run.json();
    List<String> statuses = new ArrayList<>();
    for (String row : reportRows(r, true)) {
      if (!row.endsWith("MATCH")) {
        statuses.add(row);
      }
    }
    assertEquals(
        List.of(
            "IN_FLIGHT 20 30 {\"order_id\":20} null",
            "null 100 101 null IN_FLIGHT",
            "null 30 40 null IN_FLIGHT"),
        statuses,
        "bucket 20 matches (counts and key sums equal), its key 20 is in flight");
    assertEquals(0, r.get("mismatch").asInt());
    assertEquals(2, r.get("in_flight").asInt());
    assertEquals("{\"IN_FLIGHT\":1}", r.get("failures").toString());
    stream();
    Run applied = reconcile("--sample=1", "--json");
    assertEquals(0, applied.code(), applied.out() + applied.err());
    JsonNode a = applied.json();
    assertEquals(10, a.get("buckets").asInt());
    assertEquals(10, a.get("match").asInt());
    assertEquals("{}", a.get("failures").toString());
  }

  /**
   * A target re-snapshotted into generation 1 (orders 0..2 streamed, order 1 paid and purged by
   * cleanup before it was read, then a run with {@code --onDataLoss=resnapshot} and {@code
   * --silver}): every bucket matches, and the summary and the JSON name generation 1, its app id
   * and the re-snapshot's S, which silver was rebuilt from.
   */
  @Test
  void namesTheBronzeGenerationSilverReflects() {
    JobFixture f = new JobFixture(dir);
    f.db.enableCdc(JobFixture.ORDERS);
    for (int i = 0; i < 3; i++) {
      f.db
          .transaction(JobFixture.at(i))
          .insert(JobFixture.ORDERS, JobFixture.order(i, "new", i + ".00"))
          .commit();
    }
    JobConfig config =
        JobConfig.builder(f.db.clientFactory(), JobFixture.CI, f.bronze, f.facts, f.control)
            .appId("dbo_orders")
            .onDataLoss(DataLossPolicy.RESNAPSHOT)
            .silverPath(silver())
            .build();
    f.run(config);
    Run before = reconcile("--json");
    assertEquals(0, before.code(), before.out() + before.err());
    assertEquals(
        "{\"bronze\":\""
            + f.bronze
            + "\",\"generation\":0,\"app_id\":\"dbo_orders\","
            + "\"resnapshot_lsn\":null,\"complete\":true,"
            + "\"silver_snapshot_lsn\":\"0x0000002A000001000021\",\"silver_reflects\":true}",
        before.json().get("bronze_generation").toString());
    f.db
        .transaction(JobFixture.at(3))
        .update(JobFixture.ORDERS, List.of(1), Map.of("status", "paid"))
        .commit();
    f.db.cleanup(JobFixture.CI, f.db.idle(JobFixture.at(5)));
    f.run(config);
    String s = "0x0000002A000001000041";
    Row event =
        tables.scan(f.facts, FactsTable.SCHEMA).stream()
            .filter(r -> "resnapshot".equals(r.getString(FactsTable.EVENT)))
            .findFirst()
            .orElseThrow();
    assertEquals(s, event.getString(FactsTable.MAX_LSN));

    Run json = reconcile("--sample=1", "--json");
    assertEquals(0, json.code(), json.out() + json.err());
    JsonNode j = json.json();
    assertEquals(1, j.get("buckets").asInt());
    assertEquals(1, j.get("match").asInt());
    assertEquals("{}", j.get("failures").toString());
    assertEquals(6, j.get("rows_compared").asLong(), "3 rows on each side");
    assertEquals(
        "{\"bronze\":\""
            + f.bronze
            + "\",\"generation\":1,\"app_id\":\"dbo_orders.g1\","
            + "\"resnapshot_lsn\":\""
            + s
            + "\",\"complete\":true,"
            + "\"silver_snapshot_lsn\":\""
            + s
            + "\",\"silver_reflects\":true}",
        j.get("bronze_generation").toString());
    Run summary = reconcile("--sample=1");
    assertEquals(0, summary.code(), summary.out() + summary.err());
    List<String> lines = summary.out().lines().toList();
    assertEquals(
        "  bronze generation 1 (app id dbo_orders.g1, re-snapshot at S = "
            + s
            + "); silver rebuilt from it",
        lines.get(1));
    assertEquals(
        "  1 bucket: 1 matched, 0 in flight, 0 mismatched; 1 compared row by row", lines.get(2));
    assertEquals("  silver matches the source", lines.get(lines.size() - 1));
  }

  /**
   * C192: a string key is one whole-table count compared from the source's rows; other keys can be
   * named, and a key that is not a captured column is refused.
   */
  @Test
  void c192CountsAStringKeyWholeAndAcceptsOtherKeys() {
    table(
        List.of(ColumnDefinition.of("code", "varchar(10)"), ColumnDefinition.of("qty", "int")),
        "code");
    FakeSqlServer.Transaction tx = db.transaction(T);
    for (int i = 0; i < 30; i++) {
      tx.insert("dbo.orders", Map.of("code", String.format("k%02d", i), "qty", i));
    }
    tx.commit();
    stream();
    editSilver(
        r -> !r.getString("code").equals("k07"),
        r ->
            r.getString("code").equals("k21")
                ? Row.fromRow(r).withFieldValue("qty", -1).build()
                : r);
    Run whole = reconcile("--sample=1", "--json");
    assertEquals(JobExit.MISMATCH, whole.code(), whole.out() + whole.err());
    JsonNode w = whole.json();
    assertEquals(1, w.get("buckets").asInt());
    assertEquals(1, w.get("mismatch").asInt());
    assertEquals(
        List.of(
            "MISSING_TARGET null null {\"code\":\"k07\"} null",
            "RECORD_DIFF null null {\"code\":\"k21\"} null",
            "null null null null MISMATCH"),
        reportRows(w, true));
    List<String> counts = new ArrayList<>();
    for (Map<String, Object> r :
        org.lakecdc.transforms.reconcile.ReconcileReport.read(
            tables, dir.resolve("delta/reconcile").toString(), w.get("run_id").asText())) {
      if (r.get("status") != null) {
        counts.add(r.get("source_rows") + " " + r.get("silver_rows"));
      }
    }
    assertEquals(List.of("30 29"), counts);
    Run qty = reconcile("--sample=1", "--json", "--keys=qty");
    assertEquals(JobExit.MISMATCH, qty.code(), qty.out() + qty.err());
    assertEquals(
        List.of(
            "{\"qty\":-1} MISSING_SOURCE -1 10",
            "{\"qty\":21} MISSING_TARGET 20 30",
            "{\"qty\":7} MISSING_TARGET -1 10"),
        keys(qty.json()));
    Run nope = reconcile("--keys=nope");
    assertEquals(JobExit.BAD_OPTION, nope.code());
    assertEquals(
        "error: --keys: nope is not a captured column of dbo_orders (captured: code, qty)\n",
        nope.err());
  }

  /**
   * C200: a chunked bootstrap (12 rows in 4 chunks of 3) reconciles clean with no chunk row; then
   * tampered facts (chunk 0 stamped zero, chunk 1's row gone, chunk 3's lo 9 → 8) and a key silver
   * lost give exactly those chunk rows beside the one MISSING_TARGET.
   */
  @Test
  void c200ChecksTheChunksOfAChunkedSnapshot() {
    table(
        List.of(
            ColumnDefinition.of("order_id", "int"), ColumnDefinition.of("status", "varchar(20)")),
        "order_id");
    FakeSqlServer.Transaction tx = db.transaction(T);
    for (int i = 0; i < 12; i++) {
      tx.insert("dbo.orders", Map.of("order_id", i, "status", "new"));
    }
    tx.commit();
    db.idle(T.plusSeconds(60));
    stream(
        "--silver=" + silver(), "--snapshot=chunked", "--snapshotChunkRows=3", "--chunksPerWave=2");
    Run clean = reconcile("--sample=1", "--json");
    assertEquals(0, clean.code(), clean.out() + clean.err());
    JsonNode c = clean.json();
    assertEquals("{}", c.get("failures").toString());
    assertEquals("[]", c.get("chunks").toString());
    assertEquals(c.get("buckets").asInt(), c.get("match").asInt());
    String facts = dir.resolve("delta/facts").toString();
    List<Row> tampered = new ArrayList<>();
    String s = null;
    for (Row r : tables.scan(facts, FactsTable.SCHEMA)) {
      if (!"snapshot_chunk".equals(r.getString(FactsTable.EVENT))) {
        tampered.add(r);
        continue;
      }
      String detail = r.getString(FactsTable.DETAIL);
      s = r.getString(FactsTable.MIN_LSN);
      if (detail.contains("\"chunk\":0,")) {
        tampered.add(
            Row.fromRow(r).withFieldValue(FactsTable.MIN_LSN, Lsn.ZERO.toString()).build());
      } else if (detail.contains("\"chunk\":3,")) {
        assertTrue(detail.contains("\"lo\":9,\"hi\":12"), detail);
        tampered.add(
            Row.fromRow(r)
                .withFieldValue(FactsTable.DETAIL, detail.replace("\"lo\":9", "\"lo\":8"))
                .build());
      } else if (!detail.contains("\"chunk\":1,")) {
        tampered.add(r);
      }
    }
    tables.rewrite(facts, FactsTable.SCHEMA, tampered);
    editSilver(r -> r.getInt32("order_id") != 4, r -> r);
    Run run = reconcile("--sample=1", "--json");
    assertEquals(JobExit.MISMATCH, run.code(), run.out() + run.err());
    JsonNode j = run.json();
    assertEquals(
        "{\"CHUNK_ROWS\":1,\"CHUNK_STAMP\":1,\"CHUNK_TILING\":2,\"MISSING_TARGET\":1}",
        j.get("failures").toString());
    assertEquals(1, j.get("mismatch").asInt());
    assertEquals(0, j.get("in_flight").asInt());
    assertEquals(j.get("buckets").asInt() - 1, j.get("match").asInt());
    List<String> chunks = new ArrayList<>();
    for (JsonNode k : j.get("chunks")) {
      chunks.add(k.get("chunk").asInt() + " " + k.get("failure_type").asText());
    }
    assertEquals(
        List.of("0 CHUNK_STAMP", "1 CHUNK_ROWS", "1 CHUNK_TILING", "3 CHUNK_TILING"), chunks);
    String snapshot = null;
    for (JsonNode k : j.get("chunks")) {
      JsonNode d;
      try {
        d = JSON.readTree(k.get("detail").asText());
      } catch (java.io.IOException e) {
        throw new AssertionError(e);
      }
      snapshot = d.get("snapshot").asText();
      if (k.get("failure_type").asText().equals("CHUNK_STAMP")) {
        assertEquals(Lsn.ZERO.toString(), d.get("lsn").asText());
      } else if (k.get("failure_type").asText().equals("CHUNK_ROWS")) {
        assertTrue(d.get("facts_rows").isNull(), d.toString());
        assertEquals(3, d.get("bronze_rows").asInt());
      }
    }
    assertTrue(snapshot.startsWith("0x") && s != null, snapshot);
    List<String> written = new ArrayList<>();
    for (String row : reportRows(j, false)) {
      if (row.startsWith("CHUNK_")) {
        written.add(row);
      }
    }
    assertEquals(
        List.of(
            "CHUNK_ROWS null null null null",
            "CHUNK_STAMP null 3 null null",
            "CHUNK_TILING 8 12 null null",
            "CHUNK_TILING null null null null"),
        written);
  }

  /** Debian's Chromium, which the page test renders with. */
  private static final Path CHROMIUM = Path.of("/usr/bin/chromium");

  private static int count(String text, String part) {
    return text.split(java.util.regex.Pattern.quote(part), -1).length - 1;
  }

  /** Runs headless Chromium on {@code page} with {@code what} and returns its standard output. */
  private String chromium(Path page, String what) throws Exception {
    Path profile = Files.createTempDirectory(dir, "chromium-profile");
    Process p =
        new ProcessBuilder(
                CHROMIUM.toString(),
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
                "--user-data-dir=" + profile,
                "--window-size=1100,900",
                what,
                page.toUri().toString())
            .redirectError(dir.resolve("chromium.err").toFile())
            .start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(60, TimeUnit.SECONDS), "Chromium did not finish in 60 s");
    assertEquals(0, p.exitValue(), Files.readString(dir.resolve("chromium.err")));
    return out;
  }

  /**
   * Whether the tests run in CI: the environment variable {@code CI} is set (and not {@code
   * false}), as {@code .ci/run} and CI services set it.
   */
  static boolean inCi() {
    String ci = System.getenv("CI");
    return ci != null && !ci.isBlank() && !ci.equalsIgnoreCase("false");
  }

  /**
   * The {@code --html} page as headless Chromium renders it: 11 bars, one per bucket (9 MATCH, 2
   * MISMATCH), the verdict, and the differing keys in the key table of the DOM Chromium built; the
   * screenshot is a PNG. Without {@code /usr/bin/chromium} it is skipped, except in CI ({@link
   * #inCi}), where it fails: {@code .ci/run} installs Debian's {@code chromium} when it is missing.
   */
  @Test
  void thePageRendersInChromium() throws Exception {
    String missing =
        "no headless Chromium at /usr/bin/chromium (apt-get install chromium): page not rendered";
    if (inCi()) {
      assertTrue(Files.isExecutable(CHROMIUM), missing + " (CI is set: .ci/run installs it)");
    } else {
      org.junit.jupiter.api.Assumptions.assumeTrue(Files.isExecutable(CHROMIUM), missing);
    }
    orders();
    editSilver(
        rows -> {
          List<Row> out = new ArrayList<>();
          for (Row r : rows) {
            int id = r.getInt32("order_id");
            if (id != 3) {
              out.add(id == 15 ? withStatus(r, "lost") : r);
            }
          }
          out.add(Row.fromRow(rows.get(0)).withFieldValue("order_id", 1000).build());
          return out;
        });
    Path page = dir.resolve("page/report.html");
    Run run = reconcile("--sample=0", "--json", "--html=" + page);
    assertEquals(JobExit.MISMATCH, run.code(), run.out() + run.err());
    String dom = chromium(page, "--dump-dom");
    assertEquals(11, count(dom, "<rect class=\"bucket "), dom);
    assertEquals(9, count(dom, "<rect class=\"bucket MATCH\""), dom);
    assertEquals(2, count(dom, "<rect class=\"bucket MISMATCH\""), dom);
    assertTrue(
        dom.contains(
            "<p id=\"verdict\" class=\"bad\">MISMATCH: silver differs from the source</p>"),
        dom);
    java.util.regex.Matcher row =
        java.util.regex.Pattern.compile("<tr><td>([^<]*)</td><td>([^<]*)</td><td>([^<]*)</td>")
            .matcher(dom.substring(dom.indexOf("<table id=\"keys\">")));
    List<String> keys = new ArrayList<>();
    while (row.find()) {
      keys.add(row.group(1) + " " + row.group(2) + " " + row.group(3));
    }
    assertEquals(
        List.of(
            "{\"order_id\":1000} MISSING_SOURCE [1000, 1001)",
            "{\"order_id\":3} MISSING_TARGET [0, 10)"),
        keys);
    Path png = dir.resolve("page/report.png");
    chromium(page, "--screenshot=" + png);
    byte[] head = java.util.Arrays.copyOf(Files.readAllBytes(png), 8);
    assertEquals(
        List.of(0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A),
        java.util.stream.IntStream.range(0, 8).mapToObj(i -> head[i] & 0xFF).toList());
  }
}
