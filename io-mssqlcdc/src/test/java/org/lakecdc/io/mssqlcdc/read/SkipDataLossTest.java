package org.lakecdc.io.mssqlcdc.read;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.CI;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.commitOrders;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.minutes;
import static org.lakecdc.io.mssqlcdc.read.Readers.bounded;
import static org.lakecdc.io.mssqlcdc.read.Readers.read;

import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.apache.beam.sdk.transforms.splittabledofn.WatermarkEstimators;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;
import org.apache.beam.sdk.values.Row;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.io.mssqlcdc.MssqlCdcIO;
import org.lakecdc.io.mssqlcdc.RecordingReceiver;
import org.lakecdc.io.mssqlcdc.client.CdcClient;
import org.lakecdc.io.mssqlcdc.client.DataLossError;
import org.lakecdc.io.mssqlcdc.fake.FakeScenarios;
import org.lakecdc.io.mssqlcdc.fake.FakeSqlServer;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.io.mssqlcdc.lsn.LsnRange;
import org.lakecdc.io.mssqlcdc.lsn.LsnRangeTracker;

/**
 * {@code onDataLoss=skip} in the reader (docs/behaviour.md §3.8, §4.5; docs/scenarios.md §5): a
 * batch whose range starts below the capture instance's {@code min_lsn} reads from it on and
 * carries the gap; cleanup during a read leaves a possible gap; batch boundaries never move; the
 * loss test of the re-snapshot (docs/behaviour.md §9.2). Scenario ids refer to docs/scenarios.md.
 */
class SkipDataLossTest {
  @TempDir Path dir;

  private static RecordingReceiver process(ReadChangesDoFn<Row> fn, Runnable beforeFirstRow) {
    RecordingReceiver out = new RecordingReceiver(beforeFirstRow);
    LsnRange range = fn.initialRestriction(CI);
    LsnRangeTracker tracker = new LsnRangeTracker(range);
    fn.processElement(
        CI, tracker, new WatermarkEstimators.Manual(BoundedWindow.TIMESTAMP_MIN_VALUE), out);
    tracker.checkDone();
    return out;
  }

  private static List<Integer> orderIds(RecordingReceiver out) {
    return out.values(MssqlCdcIO.CHANGES).stream().map(r -> r.getInt32("order_id")).toList();
  }

  @Test
  void c066SkipReadsFromMinLsnWithoutMovingBatchBoundariesOrInvertingARange() {
    FakeSqlServer db = FakeScenarios.orders(dir);
    FakeScenarios.customers(db); // its low watermark keeps the database-wide mapping rows
    List<Lsn> l = commitOrders(db, 10);
    db.cleanup(CI, l.get(6));
    ReadChangesDoFn<Row> fn =
        bounded(
            read(db)
                .withMaxCommitsPerBatch(2)
                .withStartingLsn(StartingLsn.after(l.get(0)))
                .withOnDataLoss(DataLossPolicy.SKIP));
    RecordingReceiver out = process(fn, () -> {});
    assertEquals(List.of(6, 7, 8, 9), orderIds(out));
    List<ChangeBatch> batches = out.values(MssqlCdcIO.BATCHES);
    assertEquals(
        List.of(l.get(2), l.get(4), l.get(6), l.get(8), l.get(9)),
        batches.stream().map(ChangeBatch::toLsn).toList(),
        "the batches end where they would without the loss");
    for (ChangeBatch batch : batches) {
      assertFalse(batch.toLsn().isBefore(batch.fromLsn()), "never inverted: " + batch);
    }
    assertEquals(
        List.of(
            new SkippedRange(
                CI, l.get(0).increment(), l.get(6), minutes(0), minutes(6), true, null),
            new SkippedRange(
                CI, l.get(2).increment(), l.get(6), minutes(2), minutes(6), true, null),
            new SkippedRange(
                CI, l.get(4).increment(), l.get(6), minutes(4), minutes(6), true, null)),
        batches.stream().flatMap(b -> b.source().skipped().stream()).toList());
    assertEquals(List.of(0L, 0L, 1L, 2L, 1L), batches.stream().map(ChangeBatch::rows).toList());
  }

  @Test
  void c069ASkipFoundBeforeTheReadIsACertainGapWithItsCommitTimes() throws Exception {
    FakeSqlServer db = FakeScenarios.orders(dir);
    FakeScenarios.customers(db);
    List<Lsn> l = commitOrders(db, 4);
    db.cleanup(CI, l.get(2));
    ReadChangesDoFn<Row> fn =
        bounded(
            read(db)
                .withStartingLsn(StartingLsn.after(l.get(0)))
                .withOnDataLoss(DataLossPolicy.SKIP));
    RecordingReceiver out = process(fn, () -> {});
    assertEquals(List.of(2, 3), orderIds(out));
    ChangeBatch batch = out.values(MssqlCdcIO.BATCHES).get(0);
    SkippedRange gap = batch.source().skipped().get(0);
    assertEquals(
        new SkippedRange(CI, l.get(0).increment(), l.get(2), minutes(0), minutes(2), true, null),
        gap);
    assertEquals("0x0000002A000001000002", gap.from().toString());
    assertEquals(
        "{\"capture_instance\":\"dbo_orders\",\"from\":\"0x0000002A000001000002\","
            + "\"to\":\"0x0000002A000001000021\",\"certain\":true}",
        gap.detail());
    // The gap travels with the batch through its coder.
    assertEquals(batch, ChangeBatchCoder.fromJson(ChangeBatchCoder.toJson(batch)));
  }

  @Test
  void c070CleanupDuringTheReadLeavesAPossibleGapAndKeepsWhatWasRead() {
    FakeSqlServer db = FakeScenarios.orders(dir);
    List<Lsn> l = commitOrders(db, 4);
    ReadChangesDoFn<Row> fn = bounded(read(db).withOnDataLoss(DataLossPolicy.SKIP));
    RecordingReceiver out = process(fn, () -> db.cleanup(CI, l.get(2)));
    ChangeBatch batch = out.values(MssqlCdcIO.BATCHES).get(0);
    Lsn from = batch.fromLsn();
    assertEquals(
        List.of(
            new SkippedRange(
                CI,
                from,
                l.get(2),
                null,
                minutes(2),
                false,
                "CDC cleanup moved min_lsn past the start of the range "
                    + from
                    + ".."
                    + l.get(3)
                    + " while it was read: its changes below min_lsn may be missing")),
        batch.source().skipped());
    assertEquals(batch.rows(), orderIds(out).size());
    // The same cleanup with onDataLoss=fail fails the read.
    FakeSqlServer other = FakeScenarios.orders(dir.resolve("fail"));
    List<Lsn> m = commitOrders(other, 4);
    ReadChangesDoFn<Row> failing = bounded(read(other));
    DataLossError e =
        assertThrows(
            DataLossError.class, () -> process(failing, () -> other.cleanup(CI, m.get(2))));
    assertTrue(e.getMessage().contains("during the read"), e.getMessage());
  }

  @Test
  void c072TheLossTestChecksTheInstanceThatReadsNext() {
    FakeSqlServer db = FakeScenarios.switchScenario(dir, FakeScenarios.ORDERS_COLUMN_NAMES);
    try (CdcClient client = db.openClient()) {
      Lsn s = client.captureInstances(CI).get(1).startLsn().orElseThrow();
      Lsn c3 = FakeScenarios.lsn(3);
      Lsn c9 = client.maxLsn().orElseThrow();
      db.cleanup(CI, c3);
      // Past S only the newer instance is read: nothing lost for a stream at S or after.
      assertEquals(Optional.empty(), StartingLsn.lostAfter(client, CI, s));
      assertEquals(Optional.empty(), StartingLsn.lostAfter(client, CI, s.decrement()));
      // Before c3 the older instance would be read, and cleanup has passed it.
      assertEquals(Optional.of(c3), StartingLsn.lostAfter(client, CI, FakeScenarios.lsn(1)));
      // A stream right before the low watermark cannot tell whether changes were purged: lost.
      assertEquals(Optional.of(c3), StartingLsn.lostAfter(client, CI, FakeScenarios.lsn(2)));
      assertEquals(Optional.empty(), StartingLsn.lostAfter(client, CI, c3));
      assertEquals(Optional.empty(), StartingLsn.lostAfter(client, CI, c9));
    }
  }

  @Test
  void policiesParseByNameAndRefuseOthersInOneLine() {
    assertEquals(DataLossPolicy.SKIP, DataLossPolicy.parse(" Skip "));
    assertEquals(DataLossPolicy.RESNAPSHOT, DataLossPolicy.parse("resnapshot"));
    assertEquals(DataLossPolicy.FAIL, DataLossPolicy.parse("FAIL"));
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> DataLossPolicy.parse("ignore"));
    assertEquals("onDataLoss must be 'fail', 'skip' or 'resnapshot', not 'ignore'", e.getMessage());
  }
}
