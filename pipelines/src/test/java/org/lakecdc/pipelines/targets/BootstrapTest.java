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
import java.util.regex.Pattern;
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

  /**
   * A run that recorded S (the {@code snapshot_open} row) and stopped before its snapshot's commit
   * (planned with the snapshot for the pipeline, which never ran): the rerun takes the snapshot at
   * that S while CDC holds the changes after it, so they stay in the change log; once cleanup
   * passed it, at a new S.
   */
  @Test
  void aRerunAfterAStoppedSnapshotKeepsItsSWhileCdcHoldsTheChangesAfterIt() {
    JobFixture f = new JobFixture(dir);
    Lsn s = stoppedSnapshot(f);
    JobConfig config = bootstrap(f, "DBO_ORDERS", "boot-v1");
    f.db.transaction(at(5)).update(ORDERS, List.of(1), Map.of("status", "paid")).commit();
    f.db.transaction(at(6)).insert(ORDERS, order(7, "new", "7.00")).commit();

    f.run(config);
    assertTrue(
        Pattern.compile(
                "taking a snapshot of DBO_ORDERS stamped with S = "
                    + s
                    + " \\(committed at 2026-09-28T13:53:00Z\\), the S recorded at"
                    + " \\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d(\\.\\d+)?Z by an earlier run"
                    + " of this target \\(stopped, or still running\\)\n")
            .matcher(f.lastOutput)
            .find(),
        f.lastOutput);
    assertEquals(s, WriteSnapshotToDelta.committedSnapshot(f.tables, f.bronze).orElseThrow());
    List<Row> rows = bronzeRows(f);
    // The snapshot read today's four orders; the update and the insert after S are in the change
    // log too (the latest image per key absorbs the overlap).
    assertEquals(
        Map.of(0, 4L, 3, 1L, 4, 1L, 2, 1L),
        rows.stream()
            .collect(
                java.util.stream.Collectors.groupingBy(
                    r -> r.getInt32(MetadataColumns.OPERATION),
                    java.util.stream.Collectors.counting())));
    assertEquals(Map.of(0, "new", 1, "paid", 2, "new", 7, "new"), latest(rows));
    assertEquals(1, snapshotOpens(f), "the rerun wrote no second snapshot_open row");
  }

  @Test
  void aRerunAfterAStoppedSnapshotWhoseChangesCleanupPurgedTakesANewS() {
    JobFixture f = new JobFixture(dir);
    Lsn s = stoppedSnapshot(f);
    JobConfig config = bootstrap(f, "DBO_ORDERS", "boot-v1");
    Lsn update =
        f.db.transaction(at(5)).update(ORDERS, List.of(1), Map.of("status", "paid")).commit();
    Lsn later = f.db.idle(at(6));
    f.db.cleanup("dbo_orders", later);

    f.run(config);
    assertTrue(
        f.lastOutput.contains(
            "taking a snapshot of DBO_ORDERS stamped with S = "
                + later
                + " (committed at 2026-09-28T13:56:00Z)\n"),
        f.lastOutput);
    assertTrue(update.isAfter(s));
    assertEquals(later, WriteSnapshotToDelta.committedSnapshot(f.tables, f.bronze).orElseThrow());
    assertEquals(Map.of(0, "new", 1, "paid", 2, "new"), latest(bronzeRows(f)));
    assertEquals(3, bronzeRows(f).size(), "the snapshot's three rows and no change row");
    assertEquals(2, snapshotOpens(f));
  }

  /**
   * Three orders, an idle entry (S), and a run that planned the bootstrap snapshot for its pipeline
   * (S recorded, the {@code snapshot_open} row written) and stopped before the pipeline ran.
   *
   * @return S
   */
  private Lsn stoppedSnapshot(JobFixture f) {
    f.db.enableCdc(ORDERS);
    for (int i = 0; i <= 2; i++) {
      f.db.transaction(at(i)).insert(ORDERS, order(i, "new", i + ".00")).commit();
    }
    Lsn s = f.db.idle(at(3));
    TablePlan stopped =
        TablePlan.prepare(
            Target.of(bootstrap(f, "DBO_ORDERS", "boot-v1"), f.tables),
            JobFixture.direct(),
            new java.io.PrintStream(java.io.OutputStream.nullOutputStream()),
            true);
    assertEquals(s, stopped.snapshot().atS().endLsn());
    return s;
  }

  private static long snapshotOpens(JobFixture f) {
    return f.tables.scan(f.facts, FactsTable.SCHEMA).stream()
        .filter(r -> "snapshot_open".equals(r.getString(FactsTable.EVENT)))
        .count();
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
