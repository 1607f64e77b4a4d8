package org.lakecdc.transforms.bronze;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Instant;
import java.time.LocalDateTime;
import java.util.List;
import org.apache.beam.sdk.util.CoderUtils;
import org.junit.jupiter.api.Test;
import org.lakecdc.transforms.delta.DataFileAction;

/**
 * The coders of what travels from the reading stage to the committer and out of it: every field
 * survives, and none of them is Java serialization.
 */
class BatchCodersTest {
  private static final BatchStats STATS =
      new BatchStats(
          17,
          3,
          "0x0000002A000001000001",
          "0x0000002A000001000031",
          Instant.parse("2026-09-28T13:50:00Z"),
          Instant.parse("2026-09-28T13:53:00.123456Z"),
          1,
          1,
          1);

  @Test
  void batchFilesKeepEveryFileAndTheCounts() throws Exception {
    BatchFiles files =
        new BatchFiles(
            17,
            List.of(
                new DataFileAction(
                    "file:/data/bronze/a-000.parquet", 1234, 2, "{\"add\":{\"path\":\"a\"}}"),
                new DataFileAction("file:/data/bronze/a-001.parquet", 99, -1, "{\"add\":{}}")),
            STATS);
    assertEquals(
        files,
        CoderUtils.decodeFromByteArray(
            BatchFilesCoder.of(), CoderUtils.encodeToByteArray(BatchFilesCoder.of(), files)));
    BatchFiles none = new BatchFiles(18, List.of(), BatchStats.empty(18));
    assertEquals(
        none,
        CoderUtils.decodeFromByteArray(
            BatchFilesCoder.of(), CoderUtils.encodeToByteArray(BatchFilesCoder.of(), none)));
  }

  @Test
  void aCommittedBatchKeepsItsVerdictOrItsAbsence() throws Exception {
    CommittedBatch committed =
        new CommittedBatch(
            17,
            STATS,
            "0x0000002A000001000031",
            Instant.parse("2026-09-28T13:53:00Z"),
            5,
            false,
            LocalDateTime.of(2026, 9, 28, 13, 0),
            4096,
            "dbo_orders",
            null);
    CommittedBatch skipped =
        new CommittedBatch(
            18,
            BatchStats.empty(18),
            "0x0000002A000001000041",
            Instant.parse("2026-09-28T13:54:00Z"),
            -1,
            true,
            null,
            0,
            "dbo_orders",
            null);
    CommittedBatch failed =
        new CommittedBatch(
            19,
            BatchStats.empty(19),
            "0x0000002A000001000041",
            Instant.parse("2026-09-28T13:54:00Z"),
            -1,
            true,
            null,
            0,
            "dbo_orders",
            "DataLossError: changes purged");
    for (CommittedBatch batch : List.of(committed, skipped, failed)) {
      assertEquals(
          batch,
          CoderUtils.decodeFromByteArray(
              CommittedBatchCoder.of(),
              CoderUtils.encodeToByteArray(CommittedBatchCoder.of(), batch)));
    }
  }
}
