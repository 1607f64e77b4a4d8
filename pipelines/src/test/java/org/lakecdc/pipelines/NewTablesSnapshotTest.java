package org.lakecdc.pipelines;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.apache.beam.sdk.values.Row;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.lakecdc.io.mssqlcdc.client.CdcClientFactory;
import org.lakecdc.io.mssqlcdc.fake.ColumnDefinition;
import org.lakecdc.io.mssqlcdc.fake.FakeSqlServer;
import org.lakecdc.pipelines.cdc.CdcToDeltaJob;
import org.lakecdc.pipelines.targets.JobConfig;
import org.lakecdc.pipelines.targets.SnapshotSettings;
import org.lakecdc.transforms.delta.DeltaTables;
import org.lakecdc.transforms.facts.FactsTable;

/**
 * New tables bootstrapped with chunked snapshots in one run of many tables (docs/many-tables.md
 * "Snapshots of new tables"): the launcher only records S and plans the chunks; the pipeline reads
 * the chunks beside every table's stream, so a large table's snapshot holds back no other table.
 * The large table's first chunk read is held inside the source until the three small tables' first
 * change batches are in the facts table: a run that read the large snapshot before the streams
 * would never get there (and fail after two minutes).
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class NewTablesSnapshotTest {
  private static final Instant T0 = Instant.parse("2026-09-28T13:50:00Z");
  private static final List<String> SMALL = List.of("dbo_customers", "dbo_items", "dbo_parts");

  @TempDir Path dir;

  private final DeltaTables tables = DeltaTables.create();

  private String delta(String name) {
    return dir.resolve("delta").resolve(name).toString();
  }

  /** dbo.orders with orders 0..7; dbo.customers, dbo.items, dbo.parts with one row each. */
  private FakeSqlServer source() {
    FakeSqlServer db = FakeSqlServer.open(dir.resolve("source"));
    db.createTable(
        "dbo.orders",
        List.of(
            ColumnDefinition.of("order_id", "int"), ColumnDefinition.of("status", "varchar(20)")),
        List.of("order_id"));
    for (String small : List.of("customers", "items", "parts")) {
      db.createTable(
          "dbo." + small,
          List.of(ColumnDefinition.of("id", "int"), ColumnDefinition.of("name", "varchar(20)")),
          List.of("id"));
    }
    for (String t : List.of("orders", "customers", "items", "parts")) {
      db.enableCdc("dbo." + t);
    }
    FakeSqlServer.Transaction tx = db.transaction(T0);
    for (int i = 0; i < 8; i++) {
      tx.insert("dbo.orders", Map.of("order_id", i, "status", "new"));
    }
    for (String small : List.of("customers", "items", "parts")) {
      tx.insert("dbo." + small, Map.of("id", 1, "name", "one"));
    }
    tx.commit();
    return db;
  }

  /** The facts rows of a batch (event NULL) by app id: their {@code written_at}. */
  private Map<String, List<LocalDateTime>> batchesWritten() {
    Map<String, List<LocalDateTime>> byApp = new TreeMap<>();
    if (!tables.exists(delta("facts"))) {
      return byApp;
    }
    for (Row r : tables.scan(delta("facts"), FactsTable.SCHEMA)) {
      if (r.getString(FactsTable.EVENT) == null) {
        byApp
            .computeIfAbsent(r.getString(FactsTable.APP_ID), a -> new ArrayList<>())
            .add(r.getLogicalTypeValue(FactsTable.WRITTEN_AT, LocalDateTime.class));
      }
    }
    return byApp;
  }

  private List<Row> facts(String event) {
    return tables.scan(delta("facts"), FactsTable.SCHEMA).stream()
        .filter(r -> event.equals(r.getString(FactsTable.EVENT)))
        .toList();
  }

  private JobConfig config(CdcClientFactory factory, String ci) {
    return JobConfig.builder(factory, ci, delta("bronze_" + ci), delta("facts"), delta("control"))
        .appId(ci + "-v1")
        .maxCommitsPerBatch(4)
        .snapshot(new SnapshotSettings(SnapshotSettings.Mode.CHUNKED, 2, 2, true, 0))
        .build();
  }

  @ParameterizedTest
  @ValueSource(strings = {Runners.DIRECT, Runners.SPARK, Runners.FLINK})
  void theSmallTablesStreamBeforeTheLargeTablesSnapshotCompletes(String runner) {
    assumeTrue(Runners.available(runner), Runners.missing(runner));
    FakeSqlServer db = source();
    HeldTableRead large =
        new HeldTableRead(
            db.clientFactory(),
            "orders",
            () ->
                org.awaitility.Awaitility.await("the small tables' first batches in facts")
                    .atMost(Duration.ofMinutes(2))
                    .pollDelay(Duration.ZERO)
                    .pollInterval(Duration.ofMillis(100))
                    .until(() -> batchesWritten().keySet().containsAll(appIds(SMALL))));
    List<JobConfig> configs = new ArrayList<>();
    configs.add(config(large, "dbo_orders"));
    for (String ci : SMALL) {
      // One source, one client factory (readAll()'s rule): it holds only the read of dbo.orders.
      configs.add(config(large, ci));
    }
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    List<CdcToDeltaJob.TableOutcome> outcomes =
        CdcToDeltaJob.runAll(
            configs,
            Runners.options(runner),
            new PrintStream(bytes, true, StandardCharsets.UTF_8),
            () -> {
              // After S: one change in every table, the streams' first batches.
              FakeSqlServer.Transaction tx = db.transaction(T0.plusSeconds(60));
              tx.update("dbo.orders", List.of(0), Map.of("status", "paid"));
              for (String small : List.of("customers", "items", "parts")) {
                tx.update("dbo." + small, List.of(1), Map.of("name", "two"));
              }
              tx.commit();
            });
    String printed = bytes.toString(StandardCharsets.UTF_8);
    assertTrue(large.held(), printed);
    for (CdcToDeltaJob.TableOutcome outcome : outcomes) {
      assertTrue(!outcome.failed(), printed);
    }

    // Every table's snapshot is complete: 8 rows of orders in 4 chunks, 1 row of each small one.
    Map<String, Long> completed = new TreeMap<>();
    Map<String, LocalDateTime> completedAt = new TreeMap<>();
    for (Row r : facts(FactsTable.EVENT_BOOTSTRAP)) {
      completed.put(r.getString(FactsTable.APP_ID), r.getInt64(FactsTable.ROWS));
      completedAt.put(
          r.getString(FactsTable.APP_ID),
          r.getLogicalTypeValue(FactsTable.WRITTEN_AT, LocalDateTime.class));
    }
    assertEquals(
        Map.of("dbo_customers-v1", 1L, "dbo_items-v1", 1L, "dbo_orders-v1", 8L, "dbo_parts-v1", 1L),
        completed);
    assertEquals(
        4,
        facts("snapshot_chunk").stream()
            .filter(r -> r.getString(FactsTable.APP_ID).equals("dbo_orders-v1"))
            .count());
    // One batch per table: the update's two rows.
    Map<String, List<LocalDateTime>> batches = batchesWritten();
    assertEquals(
        List.of("dbo_customers-v1", "dbo_items-v1", "dbo_orders-v1", "dbo_parts-v1"),
        List.copyOf(batches.keySet()));
    for (List<LocalDateTime> written : batches.values()) {
      assertEquals(1, written.size(), batches.toString());
    }
    for (Row r : tables.scan(delta("facts"), FactsTable.SCHEMA)) {
      if (r.getString(FactsTable.EVENT) == null) {
        assertEquals(2L, r.getInt64(FactsTable.ROWS), r.toString());
      }
    }
    // Each small table's first batch was committed before the large snapshot's completion row.
    LocalDateTime largeDone = completedAt.get("dbo_orders-v1");
    for (String app : appIds(SMALL)) {
      assertTrue(
          batches.get(app).get(0).isBefore(largeDone),
          app
              + " streamed at "
              + batches.get(app)
              + ", the large snapshot completed at "
              + largeDone);
    }
    assertEquals(8 + 2, tables.scan(delta("bronze_dbo_orders")).size());
    for (String ci : SMALL) {
      assertEquals(1 + 2, tables.scan(delta("bronze_" + ci)).size(), ci);
    }
  }

  private static List<String> appIds(List<String> cis) {
    return cis.stream().map(ci -> ci + "-v1").toList();
  }
}
