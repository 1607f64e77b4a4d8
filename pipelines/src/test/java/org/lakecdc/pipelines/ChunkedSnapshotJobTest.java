package org.lakecdc.pipelines;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.lakecdc.pipelines.JobFixture.ORDERS;
import static org.lakecdc.pipelines.JobFixture.at;
import static org.lakecdc.pipelines.JobFixture.order;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.apache.beam.sdk.options.PipelineOptions;
import org.apache.beam.sdk.values.Row;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.io.mssqlcdc.schema.MetadataColumns;
import org.lakecdc.pipelines.backfill.BackfillState;
import org.lakecdc.pipelines.backfill.BackfillWaves;
import org.lakecdc.pipelines.targets.ChunkedSnapshot;
import org.lakecdc.pipelines.targets.JobConfig;
import org.lakecdc.pipelines.targets.SnapshotSettings;
import org.lakecdc.pipelines.targets.Target;
import org.lakecdc.transforms.delta.DeltaColumn;
import org.lakecdc.transforms.facts.FactsTable;

/**
 * Chunked snapshots through the jobs (docs/behaviour.md §6.7-§6.10, docs/scenarios.md C098): the
 * main job opens the snapshot and streams from S at once; the Backfill job reads it in waves; the
 * rebuild from S equals the source table.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class ChunkedSnapshotJobTest {
  static final ObjectMapper JSON = new ObjectMapper();

  @TempDir Path dir;

  /** Orders 0..7 "new", inserted in one commit at T0 after CDC was enabled. */
  static JobFixture orders(Path dir, int n) {
    JobFixture f = new JobFixture(dir);
    f.db.enableCdc(ORDERS);
    FakeTx tx = new FakeTx(f, at(0));
    for (int i = 0; i < n; i++) {
      tx.insert(i);
    }
    tx.commit();
    return f;
  }

  /** A simulator transaction inserting orders "new". */
  record FakeTx(JobFixture f, org.lakecdc.io.mssqlcdc.fake.FakeSqlServer.Transaction tx) {
    FakeTx(JobFixture f, java.time.Instant at) {
      this(f, f.db.transaction(at));
    }

    void insert(int id) {
      tx.insert(ORDERS, order(id, "new", id + ".00"));
    }

    Lsn commit() {
      return tx.commit();
    }
  }

  static JobConfig chunked(JobFixture f, boolean backfill, int maxWaves) {
    return JobConfig.builder(f.db.clientFactory(), JobFixture.CI, f.bronze, f.facts, f.control)
        .appId("chunk-v1")
        .maxCommitsPerBatch(4)
        .snapshot(new SnapshotSettings(SnapshotSettings.Mode.CHUNKED, 2, 2, backfill, maxWaves))
        .build();
  }

  /** Runs Backfill with {@code config} on the DirectRunner; its output goes to {@code printed}. */
  BackfillWaves.Result backfill(JobConfig config) {
    return backfill(config, JobFixture.direct());
  }

  String printed = "";

  BackfillWaves.Result backfill(JobConfig config, PipelineOptions options) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8)) {
      try {
        return BackfillWaves.run(config, options, 0, null, Clock.systemUTC(), out);
      } finally {
        printed = bytes.toString(StandardCharsets.UTF_8);
      }
    }
  }

  static List<Row> facts(JobFixture f, String event) {
    return f.tables.scan(f.facts, FactsTable.SCHEMA).stream()
        .filter(r -> event.equals(r.getString(FactsTable.EVENT)))
        .toList();
  }

  static JsonNode detail(Row r) {
    try {
      return JSON.readTree(r.getString(FactsTable.DETAIL));
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  static List<Row> bronze(JobFixture f) {
    return f.tables.scan(f.bronze, DeltaColumn.toBeamSchema(f.tables.describe(f.bronze).columns()));
  }

  /**
   * The rebuild rule (docs/behaviour.md §6.7): rows of snapshot S plus changes after S, latest per
   * key in change order, deletes dropped; key → status.
   */
  static Map<Integer, String> rebuild(List<Row> bronze, Lsn s) {
    List<Row> rows = new ArrayList<>();
    for (Row r : bronze) {
      int op = r.getInt32(MetadataColumns.OPERATION);
      if (op == 0
          ? s.toString().equals(r.getString(MetadataColumns.SNAPSHOT))
          : op != 3 && Lsn.parse(r.getString(MetadataColumns.START_LSN)).isAfter(s)) {
        rows.add(r);
      }
    }
    rows.sort(BronzeOracle.CHANGE_ORDER);
    Map<Integer, String> image = new TreeMap<>();
    for (Row r : rows) {
      if (r.getInt32(MetadataColumns.OPERATION) == 1) {
        image.remove(r.getInt32("order_id"));
      } else {
        image.put(r.getInt32("order_id"), r.getString("status"));
      }
    }
    return image;
  }

  /** The chunk facts rows as "chunk,wave,lo,hi,last" in chunk order. */
  static List<String> chunkFacts(JobFixture f) {
    List<String> out = new ArrayList<>();
    for (Row r : facts(f, "snapshot_chunk")) {
      JsonNode d = detail(r);
      out.add(
          d.get("chunk").asInt()
              + ","
              + d.get("wave").asInt()
              + ","
              + d.get("lo")
              + ","
              + d.get("hi")
              + ","
              + d.get("last").asBoolean());
    }
    out.sort(Comparator.comparing(s -> Integer.parseInt(s.substring(0, s.indexOf(',')))));
    return out;
  }

  @Test
  void c098AChunkedBootstrapStreamsFromSWhileBackfillReadsInWaves() {
    JobFixture f = orders(dir, 8);
    Lsn s = f.db.openClient().maxLsn().orElseThrow();

    f.run(chunked(f, false, 1));
    List<Row> opens = facts(f, "snapshot_open");
    assertEquals(1, opens.size());
    Row open = opens.get(0);
    assertEquals("chunk-v1", open.getString(FactsTable.APP_ID));
    assertEquals(s.toString(), open.getString(FactsTable.MIN_LSN));
    assertEquals(s.toString(), open.getString(FactsTable.MAX_LSN));
    assertEquals(null, open.getInt64(FactsTable.BATCH_ID));
    assertEquals(
        "{\"mode\":\"chunked\",\"kind\":\"bootstrap\",\"keys\":[\"order_id\"],"
            + "\"plan\":{\"kind\":\"int\",\"lo\":0,\"hi\":7,\"rows\":8},\"generation\":0,"
            + "\"lost_from_ts\":null,\"lost_to_ts\":null,\"capture_instance\":\"dbo_orders\",\"target_id\":\""
            + f.tables.tableId(f.bronze)
            + "\"}",
        open.getString(FactsTable.DETAIL));
    assertTrue(bronze(f).isEmpty(), "the table is not read yet");
    assertTrue(f.lastOutput.contains("opened a chunked snapshot of dbo_orders at S = " + s));

    // Wave 0: planned first (as Backfill does at its first wave), then a commit lands before the
    // wave's read.
    f.db.transaction(at(10)).update(ORDERS, List.of(1), Map.of("status", "paid")).commit();
    Target target = Target.of(chunked(f, false, 1), f.tables);
    ChunkedSnapshot.plan(target, ChunkedSnapshot.read(target).chunked().orElseThrow(), System.out);
    FakeTx t11 = new FakeTx(f, at(11));
    t11.tx().delete(ORDERS, List.of(3));
    t11.insert(9);
    t11.commit();
    BackfillWaves.Result first = backfill(chunked(f, false, 1));
    assertEquals(
        new BackfillWaves.Result(BackfillState.RUNNING, "stopped after --maxWaves=1", 1, 2, 4, 3),
        first);
    assertTrue(printed.contains("Backfill of dbo_orders: wave 0 committed, chunks 2/4, 3 rows"));

    // Wave 1.
    f.db.transaction(at(12)).delete(ORDERS, List.of(6)).commit();
    FakeTx t13 = new FakeTx(f, at(13));
    t13.tx().update(ORDERS, List.of(0), Map.of("status", "late"));
    t13.tx().insert(ORDERS, order(6, "again", "6.00"));
    t13.commit();
    BackfillWaves.Result second = backfill(chunked(f, false, 1));
    assertEquals(new BackfillWaves.Result(BackfillState.DONE, "", 1, 4, 4, 7), second);
    assertEquals(
        "Backfill of dbo_orders: done; chunks 4/4, 7 rows, 1 wave this run",
        BackfillWaves.stateLine(chunked(f, false, 1), second));

    f.db.transaction(at(20)).delete(ORDERS, List.of(4)).commit();
    f.run(chunked(f, false, 1));
    List<Row> bronze = bronze(f);
    assertEquals(
        Map.of(0, "late", 1, "paid", 2, "new", 5, "new", 6, "again", 7, "new", 9, "new"),
        rebuild(bronze, s));

    List<Row> snapshotRows =
        bronze.stream().filter(r -> r.getInt32(MetadataColumns.OPERATION) == 0).toList();
    assertEquals(7, snapshotRows.size());
    assertEquals(
        List.of(0, 1, 2, 4, 5, 6, 7),
        snapshotRows.stream().map(r -> r.getInt32("order_id")).sorted().toList(),
        "each key once");
    for (Row r : snapshotRows) {
      assertEquals(s.toString(), r.getString(MetadataColumns.SNAPSHOT));
      assertFalse(Lsn.parse(r.getString(MetadataColumns.START_LSN)).isBefore(s));
      assertEquals(null, r.getString(MetadataColumns.SEQVAL));
      assertEquals(null, r.getInt32(MetadataColumns.BATCH_ID));
    }
    assertEquals(
        Map.of(0, 2L, 1, 1L, 2, 2L, 3, 2L),
        snapshotRows.stream()
            .collect(
                java.util.stream.Collectors.groupingBy(
                    r -> r.getInt32(MetadataColumns.CHUNK),
                    TreeMap::new,
                    java.util.stream.Collectors.counting())));
    assertEquals(
        List.of("0,0,null,2,false", "1,0,2,4,false", "2,1,4,6,false", "3,1,6,8,true"),
        chunkFacts(f));
    long chunkRows = 0;
    for (Row r : facts(f, "snapshot_chunk")) {
      assertEquals(s.toString(), detail(r).get("snapshot").asText());
      assertFalse(Lsn.parse(r.getString(FactsTable.MIN_LSN)).isBefore(s));
      chunkRows += r.getInt64(FactsTable.ROWS);
    }
    assertEquals(7, chunkRows);

    List<Row> bootstraps = facts(f, "bootstrap");
    assertEquals(1, bootstraps.size());
    Row done = bootstraps.get(0);
    assertEquals("chunk-v1", done.getString(FactsTable.APP_ID));
    assertEquals(s.toString(), done.getString(FactsTable.MIN_LSN));
    assertEquals(s.toString(), done.getString(FactsTable.MAX_LSN));
    assertEquals(7L, done.getInt64(FactsTable.ROWS));
    assertEquals(4, detail(done).get("chunks").asInt());
    assertEquals(
        open.getLogicalTypeValue(FactsTable.WRITTEN_AT, LocalDateTime.class),
        done.getLogicalTypeValue(FactsTable.STARTED_AT, LocalDateTime.class));
    assertTrue(done.getInt64(FactsTable.DURATION_MS) > 0);
    assertEquals(1, facts(f, "snapshot_open").size());
    assertEquals(1, facts(f, "snapshot_plan").size());

    // Done: Backfill again reads nothing; a whole-mode rerun writes nothing to bronze.
    assertEquals(
        new BackfillWaves.Result(BackfillState.DONE, "", 0, 4, 4, 7),
        backfill(chunked(f, false, 1)));
    long version = f.tables.version(f.bronze);
    f.run(chunked(f, false, 0).toBuilder().snapshot(SnapshotSettings.DEFAULTS).build());
    assertEquals(version, f.tables.version(f.bronze), "no new bronze version");
    assertEquals(1, facts(f, "bootstrap").size());
    assertEquals(1, facts(f, "snapshot_open").size());
  }
}
