package org.lakecdc.pipelines.targets;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.lakecdc.pipelines.JobFixture.ORDERS;
import static org.lakecdc.pipelines.JobFixture.at;
import static org.lakecdc.pipelines.JobFixture.order;

import java.nio.file.Path;
import java.time.LocalDateTime;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.values.Row;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.io.mssqlcdc.schema.MetadataColumns;
import org.lakecdc.pipelines.BronzeOracle;
import org.lakecdc.pipelines.JobFixture;
import org.lakecdc.pipelines.cdc.CdcToDeltaLauncher;
import org.lakecdc.pipelines.options.CdcToDeltaOptions;
import org.lakecdc.transforms.delta.DeltaColumn;
import org.lakecdc.transforms.facts.FactsTable;
import org.lakecdc.transforms.snapshot.WriteSnapshotToDelta;

/** The bootstrap snapshot of a new target (docs/scenarios.md C082) and the sink's facts (C121). */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class BootstrapTest {
  @TempDir Path dir;

  private static JobConfig bootstrap(JobFixture f, String captureInstance, String app) {
    return JobConfig.builder(f.db.clientFactory(), captureInstance, f.bronze, f.facts, f.control)
        .appId(app)
        .maxCommitsPerBatch(4)
        .numPartitions(2)
        .build();
  }

  private static List<Row> bronzeRows(JobFixture f) {
    return f.tables.scan(f.bronze, DeltaColumn.toBeamSchema(f.tables.describe(f.bronze).columns()));
  }

  /** The latest status per order ({@link BronzeOracle#latest}). */
  private static Map<Integer, String> latest(List<Row> bronze) {
    Map<Integer, String> image = new TreeMap<>();
    BronzeOracle.latest(bronze, "order_id", "status")
        .forEach((k, v) -> image.put(k, (String) v.get(0)));
    return image;
  }

  @Test
  void c082BootstrapSnapshotsOnceAndTheStreamContinuesFromIt() {
    JobFixture f = new JobFixture(dir);
    f.db.enableCdc(ORDERS);
    for (int i = 0; i <= 5; i++) {
      f.db.transaction(at(i)).insert(ORDERS, order(i, "new", i + ".00")).commit();
    }
    f.db.transaction(at(7)).delete(ORDERS, List.of(4)).commit();
    Lsn idle = f.db.idle(at(8));
    assertEquals(Lsn.parse("0x0000002A000001000071"), idle);
    f.db.cleanup("dbo_orders", idle);

    f.run(bootstrap(f, "DBO_ORDERS", "boot-v1"));
    List<Row> first = bronzeRows(f);
    assertEquals(5, first.size());
    assertTrue(first.stream().allMatch(r -> r.getInt32(MetadataColumns.OPERATION) == 0));
    assertEquals(
        List.of(0, 1, 2, 3, 5), first.stream().map(r -> r.getInt32("order_id")).sorted().toList());

    f.db.transaction(at(9)).update(ORDERS, List.of(1), Map.of("status", "paid")).commit();
    f.db.transaction(at(10)).insert(ORDERS, order(9, "new", "9.00")).commit();
    f.run(bootstrap(f, "DBO_ORDERS", "boot-v1"));
    List<Row> second = bronzeRows(f);
    assertEquals(8, second.size());
    assertEquals(
        5, second.stream().filter(r -> r.getInt32(MetadataColumns.OPERATION) == 0).count());

    Lsn s = WriteSnapshotToDelta.committedSnapshot(f.tables, f.bronze).orElseThrow();
    assertEquals(idle, s, "S is the max_lsn recorded before the read: the idle entry");
    for (Row r : second) {
      if (r.getInt32(MetadataColumns.OPERATION) == 0) {
        assertEquals(s.toString(), r.getString(MetadataColumns.START_LSN));
        assertEquals(s.toString(), r.getString(MetadataColumns.SNAPSHOT));
        assertNull(r.getInt32(MetadataColumns.BATCH_ID));
        assertNull(r.getString(MetadataColumns.SEQVAL));
        assertNull(r.getInt32(MetadataColumns.COMMAND_ID));
        assertEquals(
            LocalDateTime.of(2026, 9, 28, 13, 58),
            r.getLogicalTypeValue(MetadataColumns.COMMIT_TS, LocalDateTime.class));
      } else {
        assertNull(r.getString(MetadataColumns.SNAPSHOT));
      }
      assertNull(r.getInt32(MetadataColumns.CHUNK));
    }
    assertEquals(
        Map.of(0, "new", 1, "paid", 2, "new", 3, "new", 5, "new", 9, "new"), latest(second));

    List<Row> bootstrapFacts =
        f.tables.scan(f.facts, FactsTable.SCHEMA).stream()
            .filter(r -> "bootstrap".equals(r.getString(FactsTable.EVENT)))
            .toList();
    assertEquals(1, bootstrapFacts.size(), "one bootstrap event over both runs");
    assertEquals(5L, bootstrapFacts.get(0).getInt64(FactsTable.ROWS));
    assertEquals(s.toString(), bootstrapFacts.get(0).getString(FactsTable.END_LSN));
  }

  @Test
  void c082StartingLsnWithBootstrapIsRefusedNamingBothOptions() {
    CdcToDeltaOptions options =
        PipelineOptionsFactory.fromArgs("--startingLsn=latest", "--fakePath=" + dir)
            .as(CdcToDeltaOptions.class);
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> CdcToDeltaLauncher.config(options));
    assertEquals(
        "--startingLsn cannot be combined with --bootstrap=true (the snapshot decides where the"
            + " stream starts); pass --bootstrap=false to start at an LSN",
        e.getMessage());
  }

  @Test
  void c121OneFactsRowPerBatchWithItsRowsAndTimings() {
    JobFixture f = new JobFixture(dir);
    f.db.enableCdc(ORDERS);
    for (int i = 0; i < 5; i++) {
      f.db.transaction(at(20L * i)).insert(ORDERS, order(i, "new", i + ".00")).commit();
    }
    f.run(
        JobConfig.builder(f.db.clientFactory(), "dbo_orders", f.bronze, f.facts, f.control)
            .appId("orders-v1")
            .bootstrap(false)
            .maxCommitsPerBatch(2)
            .build());
    assertEquals(5, bronzeRows(f).size());
    List<Row> facts = f.tables.scan(f.facts, FactsTable.SCHEMA);
    assertEquals(
        List.of(2L, 2L, 1L),
        facts.stream()
            .sorted(Comparator.comparing((Row r) -> r.getInt64(FactsTable.BATCH_ID)))
            .map(r -> r.getInt64(FactsTable.ROWS))
            .toList());
    for (Row r : facts) {
      assertEquals("orders-v1", r.getString(FactsTable.APP_ID));
      LocalDateTime started = r.getLogicalTypeValue(FactsTable.STARTED_AT, LocalDateTime.class);
      LocalDateTime written = r.getLogicalTypeValue(FactsTable.WRITTEN_AT, LocalDateTime.class);
      assertTrue(!started.isAfter(written), started + " <= " + written);
      assertTrue(r.getInt64(FactsTable.DURATION_MS) >= 0);
      assertEquals(r.getInt64(FactsTable.ROWS), r.getInt64(FactsTable.INSERTS));
    }
  }
}
