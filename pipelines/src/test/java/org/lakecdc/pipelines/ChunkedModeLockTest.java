package org.lakecdc.pipelines;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.lakecdc.pipelines.JobFixture.ORDERS;
import static org.lakecdc.pipelines.JobFixture.at;
import static org.lakecdc.pipelines.JobFixture.order;

import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.beam.sdk.values.Row;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.pipelines.cli.OptionRefusedException;
import org.lakecdc.pipelines.targets.ChunkedSnapshot;
import org.lakecdc.pipelines.targets.JobConfig;
import org.lakecdc.pipelines.targets.SnapshotSettings;
import org.lakecdc.pipelines.targets.Target;
import org.lakecdc.transforms.facts.FactsTable;
import org.lakecdc.transforms.snapshot.ChunkedSnapshotFacts;

/**
 * One snapshot mode per run (docs/behaviour.md §6.10): a whole bootstrap records its full open
 * first; a whole run is refused while a chunked snapshot is open, a chunked run while a whole one
 * is still being read; nothing is written by a refused run.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class ChunkedModeLockTest {
  @TempDir Path dir;

  private static JobFixture orders(Path dir) {
    JobFixture f = new JobFixture(dir);
    f.db.enableCdc(ORDERS);
    for (int i = 0; i < 4; i++) {
      f.db.transaction(at(i)).insert(ORDERS, order(i, "new", i + ".00")).commit();
    }
    return f;
  }

  private static JobConfig config(JobFixture f, SnapshotSettings.Mode mode) {
    return JobConfig.builder(f.db.clientFactory(), JobFixture.CI, f.bronze, f.facts, f.control)
        .appId("lock-v1")
        .snapshot(SnapshotSettings.DEFAULTS.withMode(mode))
        .build();
  }

  private static void open(JobFixture f, String mode, Lsn s) {
    f.tables.createIfAbsent(f.facts, FactsTable.definition());
    ChunkedSnapshotFacts.Open open =
        new ChunkedSnapshotFacts.Open(
            "lock-v1",
            f.bronze,
            s,
            at(3),
            mode,
            ChunkedSnapshotFacts.KIND_BOOTSTRAP,
            0,
            List.of("order_id"),
            mode.equals(ChunkedSnapshotFacts.MODE_CHUNKED)
                ? "{\"kind\":\"int\",\"lo\":0,\"hi\":3,\"rows\":4}"
                : null,
            null,
            null,
            null);
    f.tables.append(
        f.facts, FactsTable.SCHEMA, List.of(open.toRow(Instant.now())), null, 0, Map.of());
  }

  @Test
  void aWholeBootstrapWritesItsFullOpenBeforeReadingAndItsBootstrapRowCompletesIt() {
    JobFixture f = orders(dir);
    f.run(config(f, SnapshotSettings.Mode.WHOLE));
    List<Row> opens =
        f.tables.scan(f.facts, FactsTable.SCHEMA).stream()
            .filter(r -> "snapshot_open".equals(r.getString(FactsTable.EVENT)))
            .toList();
    assertEquals(1, opens.size());
    Row open = opens.get(0);
    String s = f.db.openClient().maxLsn().orElseThrow().toString();
    assertEquals("lock-v1", open.getString(FactsTable.APP_ID));
    assertEquals(s, open.getString(FactsTable.MIN_LSN));
    assertEquals(s, open.getString(FactsTable.MAX_LSN));
    assertEquals(0L, open.getInt64(FactsTable.ROWS));
    assertEquals(
        "{\"mode\":\"full\",\"kind\":\"bootstrap\",\"keys\":[\"order_id\"],\"plan\":null,"
            + "\"generation\":0,\"lost_from_ts\":null,\"lost_to_ts\":null,\"capture_instance\":\"dbo_orders\",\"target_id\":\""
            + f.tables.tableId(f.bronze)
            + "\"}",
        open.getString(FactsTable.DETAIL));
    ChunkedSnapshotFacts.Snapshots snapshots =
        ChunkedSnapshot.read(Target.of(config(f, SnapshotSettings.Mode.WHOLE), f.tables));
    assertEquals(Lsn.parse(s), snapshots.fullOpen().orElseThrow().s());
    assertTrue(snapshots.fullOpenComplete(), "the bootstrap row has max_lsn = S");
    // Complete: a chunked run of the target is not refused (it continues the stream).
    ChunkedSnapshot.checkModeLock(
        Target.of(config(f, SnapshotSettings.Mode.CHUNKED), f.tables),
        SnapshotSettings.Mode.CHUNKED,
        "-");
  }

  @Test
  void aWholeRunIsRefusedWhileAChunkedSnapshotIsOpen() {
    JobFixture f = orders(dir);
    open(f, ChunkedSnapshotFacts.MODE_CHUNKED, Lsn.parse("0x0000002A000000400001"));
    OptionRefusedException e =
        assertThrows(
            OptionRefusedException.class, () -> f.run(config(f, SnapshotSettings.Mode.WHOLE)));
    assertEquals(
        "Target "
            + f.bronze
            + " has a chunked snapshot open at S = 0x0000002A000000400001 (generation 0, not"
            + " planned yet, 0 rows) that is not complete: run Backfill (or CdcToDelta with"
            + " --snapshot=chunked) until it is done before running with --snapshot=whole",
        e.getMessage());
    assertFalse(f.tables.exists(f.bronze), "nothing written");
  }

  @Test
  void aChunkedRunIsRefusedWhileAWholeSnapshotIsBeingReadAndNotOnceCleanupPassedItsS() {
    JobFixture f = orders(dir);
    Lsn s = f.db.openClient().maxLsn().orElseThrow();
    open(f, ChunkedSnapshotFacts.MODE_FULL, s);
    OptionRefusedException e =
        assertThrows(
            OptionRefusedException.class, () -> f.run(config(f, SnapshotSettings.Mode.CHUNKED)));
    assertEquals(
        "Target "
            + f.bronze
            + " has a whole snapshot open at S = "
            + s
            + " (generation 0) that is not complete: rerun with --snapshot=whole to finish it, or"
            + " wait until CDC cleanup passes its S, before running with --snapshot=chunked",
        e.getMessage());
    assertFalse(f.tables.exists(f.bronze), "nothing written");
    // Once CDC cleanup passed its S, the whole snapshot can never complete: no longer open.
    Lsn later = f.db.transaction(at(5)).insert(ORDERS, order(5, "new", "5.00")).commit();
    f.db.cleanup(JobFixture.CI, later);
    ChunkedSnapshot.checkModeLock(
        Target.of(config(f, SnapshotSettings.Mode.CHUNKED), f.tables),
        SnapshotSettings.Mode.CHUNKED,
        "-");
  }
}
