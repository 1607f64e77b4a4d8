package org.lakecdc.io.mssqlcdc.snapshot;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.CI;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.ORDERS;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.SNAPSHOT_AT;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.T0;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.commitOrders;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.lsn;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.minutes;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.file.Path;
import java.time.Instant;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.beam.sdk.transforms.DoFn.OutputReceiver;
import org.apache.beam.sdk.values.Row;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.io.mssqlcdc.ForwardingClientFactory;
import org.lakecdc.io.mssqlcdc.MssqlCdcIO;
import org.lakecdc.io.mssqlcdc.RecordingOutput;
import org.lakecdc.io.mssqlcdc.Resolved;
import org.lakecdc.io.mssqlcdc.SourceConfiguration;
import org.lakecdc.io.mssqlcdc.client.CaptureInstance;
import org.lakecdc.io.mssqlcdc.client.CdcClient;
import org.lakecdc.io.mssqlcdc.client.CdcClientFactory;
import org.lakecdc.io.mssqlcdc.client.IsolationLevel;
import org.lakecdc.io.mssqlcdc.client.TableQuery;
import org.lakecdc.io.mssqlcdc.fake.ColumnDefinition;
import org.lakecdc.io.mssqlcdc.fake.FakeScenarios;
import org.lakecdc.io.mssqlcdc.fake.FakeSqlServer;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;

/**
 * The snapshot's planner and DoFns called directly on the simulator (docs/architecture.md "Data
 * flow"; docs/scenarios.md C057, C076, C078, C079).
 */
class SnapshotReadTest {
  @TempDir Path dir;

  private static final Instant AT_TIME = Instant.parse("2026-09-28T14:50:00Z");

  private static SourceConfiguration source(CdcClientFactory factory) {
    return SourceConfiguration.create(CI).withClientFactory(factory);
  }

  private static MssqlCdcIO.Snapshot snapshot(CdcClientFactory factory) {
    return MssqlCdcIO.snapshot().withSourceConfiguration(source(factory));
  }

  /** Plans through the first DoFn, as the pipeline does. */
  private static List<SnapshotRange> plan(SnapshotSpec spec) {
    List<SnapshotRange> ranges = new ArrayList<>();
    new PlanSnapshotRangesFn(spec).processElement(new RecordingOutput<>(ranges));
    return ranges;
  }

  /** Reads one range through the reading DoFn, checking every row's timestamp. */
  private static List<Row> read(SnapshotSpec spec, SnapshotRange range) {
    List<Row> rows = new ArrayList<>();
    ReadSnapshotRangeFn<Row> fn = ReadSnapshotRangeFn.emittingRows(spec);
    fn.setup();
    fn.processElement(
        range,
        new OutputReceiver<Row>() {
          @Override
          public void output(Row row) {
            throw new AssertionError("snapshot rows are timestamped");
          }

          @Override
          public void outputWithTimestamp(Row row, org.joda.time.Instant timestamp) {
            assertEquals(range.commitTime().toEpochMilli(), timestamp.getMillis());
            rows.add(row);
          }
        });
    fn.teardown();
    return rows;
  }

  private static List<List<Row>> readAll(SnapshotSpec spec) {
    return plan(spec).stream().map(r -> read(spec, r)).toList();
  }

  private static List<Integer> ids(List<Row> rows) {
    return rows.stream().map(r -> r.getInt32("order_id")).toList();
  }

  private static List<Object> bound(Object... values) {
    return Arrays.asList(values);
  }

  @Test
  void c076EveryRowIsStampedWithSAndReadOnceAcrossThreeRanges() {
    FakeSqlServer db = FakeScenarios.snapshotScenario(dir);
    SnapshotSpec spec =
        Resolved.spec(
            MssqlCdcIO.snapshot()
                .withSourceConfiguration(
                    source(db.clientFactory()).withColumns("order_id INT, status STRING"))
                .withNumPartitions(3));
    assertEquals(SNAPSHOT_AT, spec.snapshotLsn());
    List<SnapshotRange> ranges = plan(spec);
    // NTILE(3) of NULL,0,1,2,3,4,6,7,8,9: tiles of 4, 3, 3 starting at NULL, 3 and 7.
    assertEquals(
        Arrays.asList(null, List.of(3), List.of(7)),
        ranges.stream().map(SnapshotRange::lowerInclusive).toList());
    assertEquals(
        Arrays.asList(List.of(3), List.of(7), null),
        ranges.stream().map(SnapshotRange::upperExclusive).toList());
    assertEquals(List.of(0, 1, 2), ranges.stream().map(SnapshotRange::number).toList());
    for (SnapshotRange range : ranges) {
      assertEquals("dbo", range.sourceSchema());
      assertEquals("orders", range.sourceTable());
      assertEquals(List.of("order_id"), range.keyColumns());
      assertEquals(AT_TIME, range.commitTime());
    }
    List<List<Row>> parts = readAll(spec);
    assertEquals(
        List.of(Arrays.asList(null, 0, 1, 2), List.of(3, 4, 6), List.of(7, 8, 9)),
        parts.stream().map(SnapshotReadTest::ids).toList());
    List<Row> rows = parts.stream().flatMap(List::stream).toList();
    for (Row row : rows) {
      assertEquals(CI, row.getString("_capture_instance"));
      assertEquals("0x0000002A0000010000D1", row.getString("_start_lsn"));
      assertNull(row.getString("_seqval"));
      assertEquals(0, row.getInt32("_operation"));
      assertNull(row.getInt32("_command_id"));
      assertEquals(LocalDateTime.of(2026, 9, 28, 14, 50), row.getValue("_commit_ts"));
    }
    assertEquals(
        List.of("no key", "new", "new", "new", "paid", "new", "new", "new", "new", "new"),
        rows.stream().map(r -> r.getString("status")).toList());
    assertEquals(spec.source().schema(), rows.get(0).getSchema());
  }

  @Test
  void c079ACompositeKeyWithNullsIsReadExactlyOnceInFourRanges() {
    FakeSqlServer db = FakeSqlServer.open(dir);
    db.createTable(
        "dbo.sales",
        List.of(
            ColumnDefinition.of("region", "int"),
            ColumnDefinition.of("id", "varchar(10)"),
            ColumnDefinition.of("status", "varchar(10)")),
        List.of("region", "id"));
    db.enableCdc("dbo.sales");
    Object[][] keys = {
      {2, "b"}, {null, "y"}, {1, "a"}, {2, null}, {null, null}, {1, null}, {null, "x"}, {1, "b"}
    };
    FakeSqlServer.Transaction tx = db.transaction(T0);
    for (Object[] k : keys) {
      Map<String, Object> row = new HashMap<>();
      row.put("region", k[0]);
      row.put("id", k[1]);
      row.put("status", "s" + k[0] + k[1]);
      tx.insert("dbo.sales", row);
    }
    Lsn s = tx.commit();
    SnapshotSpec spec =
        Resolved.spec(
            MssqlCdcIO.snapshot()
                .withSourceConfiguration(
                    SourceConfiguration.create("dbo_sales").withClientFactory(db.clientFactory()))
                .withNumPartitions(4));
    assertEquals(s, spec.snapshotLsn());
    List<SnapshotRange> ranges = plan(spec);
    assertEquals(
        Arrays.asList(null, bound(null, "y"), bound(1, "a"), bound(2, null)),
        ranges.stream().map(SnapshotRange::lowerInclusive).toList());
    List<List<Row>> parts = readAll(spec);
    assertEquals(List.of(2, 2, 2, 2), parts.stream().map(List::size).toList());
    assertEquals(
        List.of(
            bound(null, null),
            bound(null, "x"),
            bound(null, "y"),
            bound(1, null),
            bound(1, "a"),
            bound(1, "b"),
            bound(2, null),
            bound(2, "b")),
        parts.stream()
            .flatMap(List::stream)
            .map(r -> bound(r.getInt32("region"), r.getString("id")))
            .toList());
    assertEquals(
        "snullnull", parts.get(0).get(0).getString("status"), "values come with their own key");
  }

  @Test
  void c078AStringKeyIsCutIntoNtileRanges() {
    FakeSqlServer db = FakeSqlServer.open(dir);
    db.createTable(
        "dbo.codes",
        List.of(ColumnDefinition.of("code", "varchar(10)"), ColumnDefinition.of("n", "int")),
        List.of("code"));
    db.enableCdc("dbo.codes");
    for (int i = 4; i >= 0; i--) {
      db.transaction(minutes(4 - i)).insert("dbo.codes", Map.of("code", "C" + i, "n", i)).commit();
    }
    SnapshotSpec spec =
        Resolved.spec(
            MssqlCdcIO.snapshot()
                .withSourceConfiguration(
                    SourceConfiguration.create("dbo_codes").withClientFactory(db.clientFactory()))
                .withNumPartitions(4));
    List<SnapshotRange> ranges = plan(spec);
    assertEquals(
        Arrays.asList(null, List.of("C2"), List.of("C3"), List.of("C4")),
        ranges.stream().map(SnapshotRange::lowerInclusive).toList());
    assertEquals(
        List.of(List.of("C0", "C1"), List.of("C2"), List.of("C3"), List.of("C4")),
        readAll(spec).stream()
            .map(rows -> rows.stream().map(r -> r.getString("code")).toList())
            .toList());
  }

  @Test
  void anEmptyTableIsOneRangeWithoutRows() {
    FakeSqlServer db = FakeScenarios.orders(dir);
    db.idle(T0);
    SnapshotSpec spec = Resolved.spec(snapshot(db.clientFactory()).withNumPartitions(4));
    List<SnapshotRange> ranges = plan(spec);
    assertEquals(1, ranges.size());
    assertNull(ranges.get(0).lowerInclusive());
    assertNull(ranges.get(0).upperExclusive());
    assertEquals(List.of(), read(spec, ranges.get(0)));
  }

  @Test
  void onePartitionDoesNotAskForKeyTiles() {
    FakeSqlServer db = FakeScenarios.orders(dir);
    commitOrders(db, 5);
    ForwardingClientFactory factory =
        new ForwardingClientFactory(db.clientFactory(), (method, args) -> {});
    SnapshotSpec spec = Resolved.spec(snapshot(factory));
    List<SnapshotRange> ranges = plan(spec);
    assertEquals(1, ranges.size());
    assertFalse(factory.calls.contains("keyTiles"));
    assertEquals(List.of(0, 1, 2, 3, 4), ids(read(spec, ranges.get(0))));
  }

  @Test
  void theIsolationLevelReachesTheTilesAndEveryRangeRead() {
    FakeSqlServer db = FakeScenarios.orders(dir);
    commitOrders(db, 6);
    List<IsolationLevel> seen = new ArrayList<>();
    ForwardingClientFactory factory =
        new ForwardingClientFactory(
            db.clientFactory(),
            (method, args) -> {
              if (method.equals("keyTiles")) {
                seen.add((IsolationLevel) args[4]);
              } else if (method.equals("readTable")) {
                seen.add(((TableQuery) args[0]).isolation());
              }
            });
    SnapshotSpec spec =
        Resolved.spec(
            snapshot(factory).withNumPartitions(3).withIsolationLevel(IsolationLevel.SNAPSHOT));
    assertEquals(IsolationLevel.SNAPSHOT, spec.isolationLevel());
    assertEquals(
        List.of(List.of(0, 1), List.of(2, 3), List.of(4, 5)),
        readAll(spec).stream().map(SnapshotReadTest::ids).toList());
    assertEquals(List.of(IsolationLevel.SNAPSHOT), seen.stream().distinct().toList());
    assertEquals(4, seen.size());
    SnapshotSpec byDefault = Resolved.spec(snapshot(db.clientFactory()));
    assertEquals(IsolationLevel.READ_COMMITTED, byDefault.isolationLevel());
  }

  @Test
  void rangesReadTheConfiguredColumnsOfTheInstancesTable() {
    FakeSqlServer db = FakeScenarios.orders(dir);
    commitOrders(db, 2);
    List<TableQuery> queries = new ArrayList<>();
    ForwardingClientFactory factory =
        new ForwardingClientFactory(
            db.clientFactory(),
            (method, args) -> {
              if (method.equals("readTable")) {
                queries.add((TableQuery) args[0]);
              }
            });
    SnapshotSpec spec =
        Resolved.spec(
            MssqlCdcIO.snapshot()
                .withSourceConfiguration(
                    source(factory).withColumns("amount STRING, order_id BIGINT")));
    List<Row> rows = readAll(spec).get(0);
    assertEquals(
        new TableQuery(
            "dbo",
            "orders",
            List.of("amount", "order_id"),
            List.of("order_id"),
            java.util.Optional.empty(),
            java.util.Optional.empty(),
            IsolationLevel.READ_COMMITTED),
        queries.get(0));
    assertEquals(List.of("0.00", "1.00"), rows.stream().map(r -> r.getString("amount")).toList());
    assertEquals(List.of(0L, 1L), rows.stream().map(r -> r.getInt64("order_id")).toList());
  }

  /** A client whose capture instance reports no key columns (a table without a unique index). */
  private static CdcClientFactory keyless(CdcClientFactory delegate) {
    return () -> {
      CdcClient client = delegate.open();
      return (CdcClient)
          Proxy.newProxyInstance(
              CdcClient.class.getClassLoader(),
              new Class<?>[] {CdcClient.class},
              (proxy, method, args) -> {
                if (method.getName().equals("keyTiles")) {
                  throw new AssertionError("a table without key columns has no key tiles");
                }
                Object out;
                try {
                  out = method.invoke(client, args);
                } catch (InvocationTargetException e) {
                  throw e.getCause();
                }
                if (method.getName().equals("captureInstances")) {
                  List<CaptureInstance> stripped = new ArrayList<>();
                  for (Object o : (List<?>) out) {
                    CaptureInstance i = (CaptureInstance) o;
                    stripped.add(
                        new CaptureInstance(
                            i.name(),
                            i.sourceSchema(),
                            i.sourceTable(),
                            i.startLsn(),
                            i.createDate(),
                            List.of()));
                  }
                  return stripped;
                }
                return out;
              });
    };
  }

  @Test
  void aTableWithoutKeyColumnsIsOneRange() {
    FakeSqlServer db = FakeScenarios.orders(dir);
    commitOrders(db, 4);
    SnapshotSpec spec = Resolved.spec(snapshot(keyless(db.clientFactory())).withNumPartitions(4));
    List<SnapshotRange> ranges = plan(spec);
    assertEquals(1, ranges.size());
    assertEquals(List.of(), ranges.get(0).keyColumns());
    assertEquals(List.of(0, 1, 2, 3), ids(read(spec, ranges.get(0))));
  }

  @Test
  void equalTilesOverANonUniqueKeyGiveNoEmptyRange() {
    FakeSqlServer db = FakeScenarios.orders(dir);
    commitOrders(db, 4);
    CdcClientFactory factory =
        () -> {
          CdcClient client = db.openClient();
          return (CdcClient)
              Proxy.newProxyInstance(
                  CdcClient.class.getClassLoader(),
                  new Class<?>[] {CdcClient.class},
                  (proxy, method, args) -> {
                    if (method.getName().equals("keyTiles")) {
                      return List.of(List.of(1), List.of(1), List.of(3), List.of(3));
                    }
                    try {
                      return method.invoke(client, args);
                    } catch (InvocationTargetException e) {
                      throw e.getCause();
                    }
                  });
        };
    SnapshotSpec spec = Resolved.spec(snapshot(factory).withNumPartitions(5));
    List<SnapshotRange> ranges = plan(spec);
    assertEquals(
        Arrays.asList(null, List.of(1), List.of(3)),
        ranges.stream().map(SnapshotRange::lowerInclusive).toList());
    assertEquals(
        List.of(List.of(0), List.of(1, 2), List.of(3)),
        ranges.stream().map(r -> ids(read(spec, r))).toList());
  }

  @Test
  void c057AColumnTheTableNoLongerHasReadsNull() {
    FakeSqlServer db = FakeScenarios.orders(dir);
    FakeScenarios.insertOrder(db, T0, 1, "new", "1.00");
    db.dropColumn(ORDERS, "status");
    db.idle(minutes(5));
    SnapshotSpec spec = Resolved.spec(snapshot(db.clientFactory()).withNumPartitions(2));
    assertTrue(spec.source().columnNames().contains("status"));
    List<Row> rows = readAll(spec).stream().flatMap(List::stream).toList();
    assertEquals(1, rows.size());
    assertEquals(1, rows.get(0).getInt32("order_id"));
    assertNull(rows.get(0).getString("status"));
    assertEquals(new java.math.BigDecimal("1.00"), rows.get(0).getDecimal("amount"));
  }

  @Test
  void aGivenSIsStampedAsIsAndItsCommitTimeIsTheLastCommitAtOrBeforeIt() {
    FakeSqlServer db = FakeScenarios.orders(dir);
    commitOrders(db, 3);
    Lsn between = lsn(1).increment();
    SnapshotSpec spec = Resolved.spec(snapshot(db.clientFactory()).withSnapshotLsn(between));
    assertEquals(between, spec.snapshotLsn());
    List<Row> rows = readAll(spec).get(0);
    assertEquals(List.of(0, 1, 2), ids(rows));
    assertEquals(between.toString(), rows.get(0).getString("_start_lsn"));
    assertEquals(LocalDateTime.of(2026, 9, 28, 13, 51), rows.get(0).getValue("_commit_ts"));
  }

  @Test
  void withoutAnyCommitAtOrBeforeSThePlanFailsExplainingWhy() {
    FakeSqlServer db = FakeScenarios.orders(dir);
    SnapshotSpec spec = Resolved.spec(snapshot(db.clientFactory()));
    assertEquals(lsn(0).decrement(), spec.snapshotLsn());
    IllegalStateException e = assertThrows(IllegalStateException.class, () -> plan(spec));
    assertEquals(
        "Snapshot LSN 0x0000002A000001000000 of capture instance dbo_orders has no commit time:"
            + " cdc.lsn_time_mapping has no entry at or before it (the capture job has not written"
            + " one yet, or cleanup removed them), so _commit_ts cannot be stamped; retry once the"
            + " capture job has run, or pass a snapshot LSN CDC still maps",
        e.getMessage());
  }

  @Test
  void displayDataShowsTheOptions() {
    FakeSqlServer db = FakeScenarios.orders(dir);
    org.apache.beam.sdk.transforms.display.DisplayData data =
        org.apache.beam.sdk.transforms.display.DisplayData.from(
            MssqlCdcIO.snapshot()
                .withSourceConfiguration(source(db.clientFactory()).withColumns("order_id INT"))
                .withSnapshotLsn(lsn(3))
                .withNumPartitions(4)
                .withIsolationLevel(IsolationLevel.SNAPSHOT));
    Map<String, Object> items = new HashMap<>();
    data.items().forEach(i -> items.put(i.getKey(), i.getValue()));
    assertEquals(CI, items.get("captureInstance"));
    assertEquals(lsn(3).toString(), items.get("snapshotLsn"));
    assertEquals(4L, items.get("numPartitions"));
    assertEquals("SNAPSHOT", items.get("isolationLevel"));
    assertEquals(true, items.get("includeCommandId"));
    assertEquals("order_id INT", items.get("columns"));
  }

  @Test
  void planningReadsNoRowAndSComesBeforeEverything() {
    FakeSqlServer db = FakeScenarios.snapshotScenario(dir);
    ForwardingClientFactory factory =
        new ForwardingClientFactory(db.clientFactory(), (method, args) -> {});
    SnapshotSpec spec = Resolved.spec(snapshot(factory).withNumPartitions(2));
    assertEquals(
        List.of("captureInstances", "maxLsn", "decrementLsn"), factory.calls.subList(0, 3));
    assertFalse(factory.calls.contains("readTable"));
    factory.calls.clear();
    plan(spec);
    assertEquals(
        List.of("commit", "captureInstances", "keyTiles", "close"), List.copyOf(factory.calls));
  }
}
