package org.lakecdc.pipelines;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.lakecdc.pipelines.JobFixture.ORDERS;
import static org.lakecdc.pipelines.JobFixture.T0;
import static org.lakecdc.pipelines.JobFixture.at;
import static org.lakecdc.pipelines.JobFixture.order;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.beam.sdk.values.Row;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.io.mssqlcdc.fake.ColumnDefinition;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.transforms.facts.FactsTable;

/**
 * The source measurements of the facts rows (docs/tables.md "Facts"; C252–C254), translated to this
 * design: the reading stage measures them while it reads a batch and they travel with the batch's
 * description, so the committer never calls the source.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class FactsMeasurementsJobTest {
  @TempDir Path dir;

  /** The batch rows of the facts table (no event rows), in batch order. */
  private static List<Row> batchRows(JobFixture f) {
    List<Row> rows = new ArrayList<>();
    for (Row r : f.tables.scan(f.facts, FactsTable.SCHEMA)) {
      if (r.getString(FactsTable.EVENT) == null) {
        rows.add(r);
      }
    }
    rows.sort(Comparator.comparingLong(r -> r.getInt64(FactsTable.BATCH_ID)));
    return rows;
  }

  private static Instant instant(Row row, String column) {
    LocalDateTime utc = row.getLogicalTypeValue(column, LocalDateTime.class);
    return utc == null ? null : utc.toInstant(ZoneOffset.UTC);
  }

  @Test
  void c252ReadMetricsAndTheRetentionWatermarkReachTheFacts() {
    JobFixture f = new JobFixture(dir);
    f.db.enableCdc(ORDERS);
    Instant watermark = T0.minus(Duration.ofHours(70));
    Lsn idle = f.db.idle(watermark);
    f.db.cleanup(JobFixture.CI, idle);
    Lsn last = null;
    for (int t = 0; t < 4; t++) {
      last = f.db.transaction(at(t)).insert(ORDERS, order(t, "new", t + ".00")).commit();
    }
    f.run(f.config().toBuilder().maxCommitsPerBatch(0).build());

    List<Row> batches = batchRows(f);
    assertEquals(1, batches.size());
    Row batch = batches.get(0);
    assertEquals(4L, batch.getInt64(FactsTable.ROWS));
    assertEquals(last.toString(), batch.getString(FactsTable.END_LSN));
    assertTrue(batch.getDouble(FactsTable.READ_SECONDS) >= 0, "read_seconds is measured");
    double readMb = batch.getDouble(FactsTable.READ_MB);
    assertTrue(readMb > 0 && readMb < 1e6, "0 < read_mb < 1e6: " + readMb);
    assertNull(batch.getDouble(FactsTable.NETWORK_WAIT_MS), "the simulator has no network");
    assertNull(batch.getDouble(FactsTable.SOURCE_RTT_MS), "the simulator has no network");
    assertEquals(watermark, instant(batch, FactsTable.RETENTION_WATERMARK_TS));
    assertEquals(70.05, batch.getDouble(FactsTable.RETENTION_HEADROOM_HOURS));
  }

  @Test
  void c253CaptureLagAndIngestionLag() {
    JobFixture f = new JobFixture(dir);
    f.db.enableCdc(ORDERS);
    for (int t = 0; t < 3; t++) {
      f.db.transaction(at(t)).insert(ORDERS, order(t, "new", t + ".00")).commit();
    }
    f.run(f.config().toBuilder().maxCommitsPerBatch(2).build());

    List<Row> batches = batchRows(f);
    assertEquals(2, batches.size());
    for (Row batch : batches) {
      assertEquals(at(2), instant(batch, FactsTable.SOURCE_MAX_COMMIT_TS));
      assertTrue(batch.getDouble(FactsTable.CAPTURE_LAG_SECONDS) >= 0);
    }
    assertEquals(60.0, batches.get(0).getDouble(FactsTable.INGESTION_LAG_SECONDS));
    assertEquals(0.0, batches.get(1).getDouble(FactsTable.INGESTION_LAG_SECONDS));
  }

  @Test
  void c254AQuietTableIsMeasuredFromTheEndOffsetAndItsEmptyBatchesWriteFacts() {
    JobFixture f = new JobFixture(dir);
    f.db.createTable("dbo.other", List.of(ColumnDefinition.of("id", "int")), List.of("id"));
    f.db.enableCdc(ORDERS);
    f.db.enableCdc("dbo.other");
    Lsn watermark = f.db.idle(T0.minus(Duration.ofHours(70)));
    f.db.cleanup(JobFixture.CI, watermark);
    f.db.transaction(at(0)).insert(ORDERS, order(1, "new", "1.00")).commit();
    f.db.transaction(at(10)).insert("dbo.other", java.util.Map.of("id", 1)).commit();
    Lsn quiet = f.db.idle(at(15));
    f.db.transaction(at(20)).insert(ORDERS, order(2, "new", "2.00")).commit();
    f.db.transaction(at(30)).insert("dbo.other", java.util.Map.of("id", 2)).commit();
    f.run(f.config().toBuilder().maxCommitsPerBatch(2).numPartitions(2).build());

    List<Row> batches = batchRows(f);
    assertEquals(
        List.of(1L, 0L, 1L), batches.stream().map(r -> r.getInt64(FactsTable.ROWS)).toList());
    assertEquals(2, f.bronzeChanges().size());
    Row empty = batches.get(1);
    assertNull(empty.getString(FactsTable.MIN_LSN));
    assertNull(empty.getString(FactsTable.MAX_LSN));
    assertNull(empty.getValue(FactsTable.MAX_COMMIT_TS));
    assertEquals(0L, empty.getInt64(FactsTable.DELETES));
    assertEquals(0L, empty.getInt64(FactsTable.INSERTS));
    assertEquals(0L, empty.getInt64(FactsTable.UPDATES));
    assertEquals(0.0, empty.getDouble(FactsTable.READ_MB));
    assertEquals(quiet.toString(), empty.getString(FactsTable.END_LSN));
  }
}
