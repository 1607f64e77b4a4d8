package org.lakecdc.transforms.snapshot;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;

class BackfillProgressTest {
  @Test
  void theLineGivesTheRunsRateAndTheEtaOfTheRemainingChunksAtItsPace() {
    // 3 chunks (1,200 rows) in 1.5 s this run: 800 rows/s; 4 chunks left at 0.5 s each.
    assertEquals(
        "Backfill of dbo_orders: wave 2 committed, chunks 6/10, 2,400 rows, 800 rows/s, ETA 2 s",
        BackfillProgress.line("dbo_orders", 2, 6, 10, 2400, 3, 1200, 1.5));
  }

  @Test
  void theLastWaveSaysDoneAndARunWithoutAChunkHasNoEta() {
    assertEquals(
        "Backfill of dbo_orders: wave 4 committed, chunks 10/10, 1 row, 2 rows/s, done",
        BackfillProgress.line("dbo_orders", 4, 10, 10, 1, 1, 1, 0.5));
    assertEquals(
        "Backfill of dbo_orders: wave 0 committed, chunks 2/10, 400 rows, 0 rows/s, ETA unknown",
        BackfillProgress.line("dbo_orders", 0, 2, 10, 400, 0, 0, 3));
  }

  @Test
  void theCompletionLineGivesTheSnapshotsRowsChunksAndLastStamp() {
    assertEquals(
        "Chunked snapshot 0x0000002A000001000001 of /data/dbo_orders complete: 1 row in 1 chunk,"
            + " last stamp 0x0000002A000001000001",
        BackfillProgress.completion(
            Lsn.parse("0x0000002A000001000001"),
            "/data/dbo_orders",
            1,
            1,
            Lsn.parse("0x0000002A000001000001")));
    assertEquals(
        "Chunked snapshot 0x0000002A000001000001 of /data/dbo_orders complete: 15,038 rows in 8"
            + " chunks, last stamp 0x0000002A000001002621",
        BackfillProgress.completion(
            Lsn.parse("0x0000002A000001000001"),
            "/data/dbo_orders",
            15038,
            8,
            Lsn.parse("0x0000002A000001002621")));
  }

  @Test
  void longEtasAreInMinutesThenHours() {
    assertEquals("119 s", BackfillProgress.duration(119));
    assertEquals("2 min", BackfillProgress.duration(120));
    assertEquals("119 min", BackfillProgress.duration(7140));
    assertEquals("2 h", BackfillProgress.duration(7141));
  }
}
