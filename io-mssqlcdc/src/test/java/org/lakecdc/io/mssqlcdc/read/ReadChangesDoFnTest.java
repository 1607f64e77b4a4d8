package org.lakecdc.io.mssqlcdc.read;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.CI;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.ORDERS;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.T0;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.V2;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.commitOrders;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.insertOrder;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.lsn;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.minutes;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.order;
import static org.lakecdc.io.mssqlcdc.read.Readers.bounded;
import static org.lakecdc.io.mssqlcdc.read.Readers.continuous;
import static org.lakecdc.io.mssqlcdc.read.Readers.read;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import org.apache.beam.sdk.transforms.DoFn.ProcessContinuation;
import org.apache.beam.sdk.transforms.splittabledofn.WatermarkEstimators;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;
import org.apache.beam.sdk.values.Row;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.io.mssqlcdc.ForwardingClientFactory;
import org.lakecdc.io.mssqlcdc.MssqlCdcIO;
import org.lakecdc.io.mssqlcdc.RecordingOutput;
import org.lakecdc.io.mssqlcdc.RecordingReceiver;
import org.lakecdc.io.mssqlcdc.client.DataLossError;
import org.lakecdc.io.mssqlcdc.fake.FakeScenarios;
import org.lakecdc.io.mssqlcdc.fake.FakeSqlServer;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.io.mssqlcdc.lsn.LsnRange;
import org.lakecdc.io.mssqlcdc.lsn.LsnRangeTracker;

/**
 * The splittable DoFn called directly (restriction, split, process, watermark), on the simulator.
 * Scenario ids refer to docs/scenarios.md.
 */
class ReadChangesDoFnTest {
  @TempDir Path dir;

  /** Processes one restriction to its end with a fresh tracker and estimator. */
  private static RecordingReceiver process(
      ReadChangesDoFn fn, LsnRange range, WatermarkEstimators.Manual watermark) {
    RecordingReceiver out = new RecordingReceiver();
    LsnRangeTracker tracker = new LsnRangeTracker(range);
    ProcessContinuation continuation = fn.processElement(CI, tracker, watermark, out);
    if (!range.isOpen()) {
      assertFalse(continuation.shouldResume(), "a bounded range finishes in one call");
      tracker.checkDone();
    }
    return out;
  }

  private static RecordingReceiver process(ReadChangesDoFn fn, LsnRange range) {
    return process(fn, range, new WatermarkEstimators.Manual(BoundedWindow.TIMESTAMP_MIN_VALUE));
  }

  private static List<Integer> orderIds(RecordingReceiver out) {
    return out.values(MssqlCdcIO.CHANGES).stream().map(r -> r.getInt32("order_id")).toList();
  }

  private static List<Long> batchRows(RecordingReceiver out) {
    return out.values(MssqlCdcIO.BATCHES).stream().map(ChangeBatch::rows).toList();
  }

  private static List<Lsn> batchEnds(RecordingReceiver out) {
    return out.values(MssqlCdcIO.BATCHES).stream().map(ChangeBatch::toLsn).toList();
  }

  /** Inserts rows {@code ids} in one transaction at {@code at}. */
  private static Lsn insertAll(FakeSqlServer db, Instant at, int... ids) {
    FakeSqlServer.Transaction tx = db.transaction(at);
    for (int id : ids) {
      tx.insert(ORDERS, order(id, "new", id + ".00"));
    }
    return tx.commit();
  }

  @Test
  void c001BatchesHoldAtMostMaxCommitsAndEndOnCommits() {
    FakeSqlServer db = FakeScenarios.orders(dir);
    for (int t = 0; t < 10; t++) {
      insertAll(db, minutes(t), t * 100, t * 100 + 1, t * 100 + 2);
    }
    ReadChangesDoFn fn = bounded(read(db.clientFactory()).withMaxCommitsPerBatch(4));
    RecordingReceiver out = process(fn, fn.initialRestriction(CI));
    assertEquals(List.of(12L, 12L, 6L), batchRows(out));
    assertEquals(List.of(lsn(3), lsn(7), lsn(9)), batchEnds(out));
    assertEquals(30, orderIds(out).stream().distinct().count());
    assertEquals(lsn(3).increment(), out.values(MssqlCdcIO.BATCHES).get(1).fromLsn());
  }

  @Test
  void c004BoundedFormStopsAtMaxLsnReadWhenItStarted() {
    FakeSqlServer db = FakeScenarios.orders(dir);
    commitOrders(db, 2);
    ReadChangesDoFn fn = bounded(read(db.clientFactory()).withMaxCommitsPerBatch(1));
    LsnRange range = fn.initialRestriction(CI);
    assertEquals(LsnRange.closed(lsn(0), lsn(1)), range);
    insertOrder(db, T0.plus(Duration.ofHours(1)), 900, "new", "9.00");
    RecordingReceiver out = process(fn, range);
    assertEquals(List.of(0, 1), orderIds(out));
    assertEquals(List.of(lsn(0), lsn(1)), batchEnds(out));
  }

  @Test
  void c002ARestartReadsOnlyTheCommitsAfterTheLastProcessedLsn() {
    FakeSqlServer db = FakeScenarios.orders(dir);
    for (int t = 0; t < 3; t++) {
      insertAll(db, minutes(t), t * 10, t * 10 + 1, t * 10 + 2);
    }
    ReadChangesDoFn first = bounded(read(db.clientFactory()));
    RecordingReceiver firstRun = process(first, first.initialRestriction(CI));
    Lsn end = batchEnds(firstRun).get(batchEnds(firstRun).size() - 1);
    insertAll(db, T0.plus(Duration.ofHours(1)), 900, 901);
    ReadChangesDoFn second =
        bounded(read(db.clientFactory()).withStartingLsn(StartingLsn.after(end)));
    RecordingReceiver secondRun = process(second, second.initialRestriction(CI));
    assertEquals(List.of(2L), batchRows(secondRun));
    assertEquals(List.of(900, 901), orderIds(secondRun));
    assertEquals(9, orderIds(firstRun).size());
  }

  @Test
  void c003AnIdleEntryEndsABatchWithoutRowsAndMovesTheWatermark() {
    FakeSqlServer db = FakeScenarios.orders(dir);
    insertAll(db, minutes(0), 1, 2, 3);
    Lsn l1 = insertAll(db, minutes(1), 4, 5, 6);
    Lsn idle = db.idle(Instant.parse("2026-09-28T15:55:00Z"));
    ReadChangesDoFn fn = bounded(read(db.clientFactory()).withStartingLsn(StartingLsn.after(l1)));
    LsnRange range = fn.initialRestriction(CI);
    WatermarkEstimators.Manual watermark =
        new WatermarkEstimators.Manual(fn.initialWatermark(range));
    assertEquals(
        new org.joda.time.Instant(Instant.parse("2026-09-28T13:51:00Z").toEpochMilli()),
        watermark.currentWatermark());
    RecordingReceiver out = process(fn, range, watermark);
    assertEquals(List.of(0L), batchRows(out));
    ChangeBatch batch = out.values(MssqlCdcIO.BATCHES).get(0);
    assertEquals(idle, batch.toLsn());
    assertEquals(Instant.parse("2026-09-28T15:55:00Z"), batch.toCommitTime());
    assertEquals(
        new org.joda.time.Instant(Instant.parse("2026-09-28T15:55:00Z").toEpochMilli()),
        watermark.currentWatermark());
  }

  @Test
  void theWatermarkNeverGoesBackwards() {
    FakeSqlServer db = FakeScenarios.orders(dir);
    commitOrders(db, 3);
    ReadChangesDoFn fn = bounded(read(db.clientFactory()));
    org.joda.time.Instant later = new org.joda.time.Instant(minutes(60).toEpochMilli());
    WatermarkEstimators.Manual watermark = new WatermarkEstimators.Manual(later);
    process(fn, fn.initialRestriction(CI), watermark);
    assertEquals(later, watermark.currentWatermark());
  }

  @Test
  void aCheckpointAfterABatchResumesExactlyAfterIt() {
    FakeSqlServer db = FakeScenarios.orders(dir);
    for (int t = 0; t < 10; t++) {
      insertAll(db, minutes(t), t * 100, t * 100 + 1, t * 100 + 2);
    }
    ReadChangesDoFn fn = bounded(read(db.clientFactory()).withMaxCommitsPerBatch(2));
    LsnRange range = fn.initialRestriction(CI);
    List<LsnRange> residuals = new ArrayList<>();
    LsnRangeTracker checkpointing =
        new LsnRangeTracker(range) {
          private int claims;

          @Override
          public boolean tryClaim(Lsn position) {
            boolean claimed = super.tryClaim(position);
            if (claimed && ++claims == 2) {
              residuals.add(trySplit(0).getResidual());
            }
            return claimed;
          }
        };
    RecordingReceiver first = new RecordingReceiver();
    ProcessContinuation stop =
        fn.processElement(
            CI,
            checkpointing,
            new WatermarkEstimators.Manual(BoundedWindow.TIMESTAMP_MIN_VALUE),
            first);
    assertFalse(stop.shouldResume());
    checkpointing.checkDone();
    assertEquals(List.of(lsn(1), lsn(3)), batchEnds(first));
    assertEquals(new LsnRange(lsn(3).increment(), range.to(), 2), residuals.get(0));

    RecordingReceiver second = process(fn, residuals.get(0));
    assertEquals(List.of(lsn(5), lsn(7), lsn(9)), batchEnds(second));
    assertEquals(lsn(3).increment(), second.values(MssqlCdcIO.BATCHES).get(0).fromLsn());
    List<Integer> all = new ArrayList<>(orderIds(first));
    all.addAll(orderIds(second));
    assertEquals(30, all.size());
    assertEquals(30, all.stream().distinct().count());
  }

  @Test
  void c031TheInitialRangeIsCutAtTheNewerInstancesStartLsn() {
    FakeScenarios.switchScenario(dir, List.of("order_id", "status", "amount", "updated_at"));
    FakeSqlServer db = FakeSqlServer.open(dir);
    ReadChangesDoFn fn = bounded(read(db.clientFactory()));
    LsnRange range = fn.initialRestriction(CI);
    assertEquals(LsnRange.closed(lsn(0), lsn(9)), range);
    List<LsnRange> parts = new ArrayList<>();
    fn.splitRestriction(CI, range, new RecordingOutput<>(parts));
    assertEquals(
        List.of(
            LsnRange.closed(lsn(0), lsn(5).decrement()),
            LsnRange.closed(lsn(5), lsn(9)).withFirstBatch(1)),
        parts);
    RecordingReceiver older = process(fn, parts.get(0));
    RecordingReceiver newer = process(fn, parts.get(1));
    assertEquals(List.of(0, 1, 2, 3, 4), orderIds(older));
    assertEquals(List.of(5, 6, 7, 8, 9), orderIds(newer));
    assertEquals(
        List.of(CI),
        older.values(MssqlCdcIO.CHANGES).stream()
            .map(r -> r.getString("_capture_instance"))
            .distinct()
            .toList());
    assertEquals(
        List.of(V2),
        newer.values(MssqlCdcIO.CHANGES).stream()
            .map(r -> r.getString("_capture_instance"))
            .distinct()
            .toList());
  }

  @Test
  void aBatchAcrossTheNewerInstancesStartReadsEachCommitOnce() {
    FakeScenarios.switchScenario(dir, List.of("order_id", "status", "amount", "updated_at"));
    FakeSqlServer db = FakeSqlServer.open(dir);
    ReadChangesDoFn fn = bounded(read(db.clientFactory()));
    RecordingReceiver out = process(fn, fn.initialRestriction(CI));
    assertEquals(List.of(0, 1, 2, 3, 4, 5, 6, 7, 8, 9), orderIds(out));
    assertEquals(List.of(CI, V2), out.values(MssqlCdcIO.BATCHES).get(0).readInstances());
  }

  @Test
  void c016PartsBalanceChangeRowsNotCommits() {
    FakeSqlServer db = FakeScenarios.orders(dir);
    for (int i = 0; i < 8; i++) {
      insertAll(db, minutes(i), i);
    }
    insertAll(db, minutes(8), 100, 101, 102, 103, 104, 105, 106, 107);
    ReadChangesDoFn fn =
        bounded(read(db.clientFactory()).withNumPartitions(2).withMinRowsPerPartition(1));
    List<LsnRange> parts = new ArrayList<>();
    fn.splitRestriction(CI, fn.initialRestriction(CI), new RecordingOutput<>(parts));
    assertEquals(
        List.of(
            LsnRange.closed(lsn(0), lsn(7)),
            LsnRange.closed(lsn(7).increment(), lsn(8)).withFirstBatch(1)),
        parts,
        "contiguous parts, each starting right after the previous part's last commit");
    assertEquals(8.0, fn.size(CI, parts.get(0)));
    assertEquals(8.0, fn.size(CI, parts.get(1)));
    List<Integer> ids = new ArrayList<>();
    for (LsnRange part : parts) {
      ids.addAll(orderIds(process(fn, part)));
    }
    assertEquals(16, ids.stream().distinct().count());
  }

  @Test
  void c063ChangesPurgedBeforeTheReadFailLoudly() {
    FakeSqlServer db = FakeScenarios.orders(dir);
    List<Lsn> first = commitOrders(db, 2);
    insertOrder(db, T0.plus(Duration.ofHours(1)), 700, "new", "7.00");
    Lsn last = insertOrder(db, T0.plus(Duration.ofHours(2)), 701, "new", "7.01");
    db.cleanup(CI, last);
    ReadChangesDoFn fn =
        bounded(read(db.clientFactory()).withStartingLsn(StartingLsn.after(first.get(1))));
    DataLossError e =
        assertThrows(DataLossError.class, () -> process(fn, fn.initialRestriction(CI)));
    assertEquals(
        "dbo_orders: change data from 0x0000002A000001000012 was purged by CDC cleanup before"
            + " reading of the range 0x0000002A000001000012..0x0000002A000001000031; the capture"
            + " instance's min_lsn is now 0x0000002A000001000031 (committed at"
            + " 2026-09-28T15:50:00Z). The changes in between are gone from cdc.dbo_orders_CT: a"
            + " re-snapshot is required (onDataLoss=resnapshot takes one automatically into a new"
            + " generation, onDataLoss=skip skips ahead and records the gap; raise the CDC"
            + " retention so the stream keeps up).",
        e.getMessage());
    assertEquals(last, e.minLsn());
    assertEquals(CI, e.captureInstance());
  }

  @Test
  void c064CleanupDuringTheReadFailsTheRead() {
    FakeSqlServer db = FakeScenarios.orders(dir);
    commitOrders(db, 3);
    Lsn l3 = insertOrder(db, T0.plus(Duration.ofHours(1)), 900, "new", "9.00");
    ForwardingClientFactory factory =
        new ForwardingClientFactory(
            db.clientFactory(),
            (method, args) -> {
              if (method.equals("readChanges")) {
                db.cleanup(CI, l3);
              }
            });
    ReadChangesDoFn fn = bounded(read(factory));
    LsnRange range = fn.initialRestriction(CI);
    DataLossError e = assertThrows(DataLossError.class, () -> process(fn, range));
    assertTrue(
        e.getMessage()
            .startsWith(
                "dbo_orders: change data from 0x0000002A000001000001 was purged by CDC cleanup"
                    + " during the read of the range"),
        e.getMessage());
    assertTrue(e.getMessage().contains("min_lsn is now " + l3), e.getMessage());
    assertTrue(e.getMessage().contains("a re-snapshot is required"), e.getMessage());
  }

  @Test
  void c067TheGuardChecksTheInstanceEachPartReads() {
    FakeScenarios.switchScenario(dir, List.of("order_id", "status", "amount", "updated_at"));
    FakeSqlServer db = FakeSqlServer.open(dir);
    db.cleanup(CI, lsn(3));
    ReadChangesDoFn pastS =
        bounded(read(db.clientFactory()).withStartingLsn(StartingLsn.after(lsn(5))));
    assertEquals(List.of(6, 7, 8, 9), orderIds(process(pastS, pastS.initialRestriction(CI))));
    ReadChangesDoFn beforeS =
        bounded(read(db.clientFactory()).withStartingLsn(StartingLsn.after(lsn(1))));
    DataLossError e =
        assertThrows(DataLossError.class, () -> process(beforeS, beforeS.initialRestriction(CI)));
    assertTrue(
        e.getMessage()
            .startsWith(
                "dbo_orders: change data from 0x0000002A000001000012 was purged by CDC cleanup"),
        e.getMessage());
  }

  @Test
  void c074NothingToReadAsksForNoMinimumLsn() {
    FakeSqlServer db = FakeScenarios.orders(dir);
    List<Lsn> commits = commitOrders(db, 2);
    ForwardingClientFactory factory =
        new ForwardingClientFactory(
            db.clientFactory(),
            (method, args) -> {
              if (method.equals("minLsn")) {
                throw new IllegalStateException("fn_cdc_get_min_lsn returned 0x00");
              }
            });
    ReadChangesDoFn fn = bounded(read(factory).withStartingLsn(StartingLsn.after(commits.get(1))));
    LsnRange range = fn.initialRestriction(CI);
    assertTrue(range.isEmpty());
    List<LsnRange> parts = new ArrayList<>();
    fn.splitRestriction(CI, range, new RecordingOutput<>(parts));
    assertEquals(List.of(), parts, "nothing to read gives no restriction at all");
    ReadChangesDoFn open =
        continuous(read(factory).withStartingLsn(StartingLsn.after(commits.get(1))));
    LsnRangeTracker tracker = new LsnRangeTracker(open.initialRestriction(CI));
    ProcessContinuation poll =
        open.processElement(
            CI,
            tracker,
            new WatermarkEstimators.Manual(BoundedWindow.TIMESTAMP_MIN_VALUE),
            new RecordingReceiver());
    assertTrue(poll.shouldResume());
    assertFalse(factory.calls.contains("minLsn"));
  }

  @Test
  void theContinuousFormResumesAfterThePollIntervalAndPicksUpNewCommits() {
    FakeSqlServer db = FakeScenarios.orders(dir);
    List<Lsn> commits = commitOrders(db, 2);
    ReadChangesDoFn fn =
        continuous(
            read(db.clientFactory())
                .withContinuous(true)
                .withPollInterval(org.joda.time.Duration.standardSeconds(7)));
    LsnRange range = fn.initialRestriction(CI);
    assertEquals(LsnRange.openFrom(lsn(0)), range);
    LsnRangeTracker tracker = new LsnRangeTracker(range);
    RecordingReceiver out = new RecordingReceiver();
    WatermarkEstimators.Manual watermark =
        new WatermarkEstimators.Manual(BoundedWindow.TIMESTAMP_MIN_VALUE);
    ProcessContinuation caughtUp = fn.processElement(CI, tracker, watermark, out);
    assertTrue(caughtUp.shouldResume());
    assertEquals(org.joda.time.Duration.standardSeconds(7), caughtUp.resumeDelay());
    assertEquals(List.of(0, 1), orderIds(out));
    LsnRange residual = tracker.trySplit(0).getResidual();
    assertEquals(LsnRange.openFrom(commits.get(1).increment()).withFirstBatch(1), residual);

    Lsn late = insertOrder(db, minutes(30), 555, "new", "5.55");
    RecordingReceiver next = process(fn, residual, watermark);
    assertEquals(List.of(555), orderIds(next));
    assertEquals(List.of(late), batchEnds(next));
    assertEquals(
        new org.joda.time.Instant(minutes(30).toEpochMilli()), watermark.currentWatermark());
  }

  @Test
  void c245CommitTimesAreConvertedFromTheServerZoneAcrossTheFallBackHour() {
    FakeSqlServer db = FakeScenarios.orders(dir).timeZone(ZoneId.of("America/New_York"));
    List<Instant> utc =
        List.of(
            Instant.parse("2026-11-01T05:30:00Z"),
            Instant.parse("2026-11-01T05:50:00Z"),
            Instant.parse("2026-11-01T06:10:00Z"),
            Instant.parse("2026-11-01T06:30:00Z"));
    for (int i = 0; i < utc.size(); i++) {
      insertOrder(db, utc.get(i), i, "new", "1.00");
    }
    ReadChangesDoFn fn = bounded(read(db.clientFactory()).withMaxCommitsPerBatch(1));
    RecordingReceiver out = process(fn, fn.initialRestriction(CI));
    assertEquals(
        utc.stream().map(t -> LocalDateTime.ofInstant(t, ZoneOffset.UTC)).toList(),
        out.values(MssqlCdcIO.CHANGES).stream()
            .map(r -> r.getLogicalTypeValue("_commit_ts", LocalDateTime.class))
            .toList());
    assertEquals(
        utc.stream().map(t -> new org.joda.time.Instant(t.toEpochMilli())).toList(),
        out.timestamps(MssqlCdcIO.CHANGES));
    assertEquals(
        utc, out.values(MssqlCdcIO.BATCHES).stream().map(ChangeBatch::toCommitTime).toList());
  }

  @Test
  void c204UpdatePairsShareCommandIdAndSeqvalAndRowsAreTyped() {
    FakeSqlServer db = FakeScenarios.orders(dir);
    db.transaction(T0)
        .insert(ORDERS, order(1, "new", "10.50"))
        .update(
            ORDERS,
            List.of(1),
            java.util.Map.of("status", "paid", "amount", new java.math.BigDecimal("12.25")))
        .delete(ORDERS, List.of(1))
        .commit();
    ReadChangesDoFn fn = bounded(read(db.clientFactory()));
    List<Row> rows = process(fn, fn.initialRestriction(CI)).values(MssqlCdcIO.CHANGES);
    assertEquals(List.of(2, 3, 4, 1), rows.stream().map(r -> r.getInt32("_operation")).toList());
    assertEquals(List.of(1, 2, 2, 4), rows.stream().map(r -> r.getInt32("_command_id")).toList());
    assertEquals(rows.get(1).getString("_seqval"), rows.get(2).getString("_seqval"));
    assertFalse(rows.get(0).getString("_seqval").equals(rows.get(1).getString("_seqval")));
    assertEquals(new java.math.BigDecimal("12.25"), rows.get(2).getDecimal("amount"));
    assertEquals(new java.math.BigDecimal("10.50"), rows.get(1).getDecimal("amount"));
    assertEquals("dbo_orders", rows.get(0).getString("_capture_instance"));
    assertEquals("0x0000002A000001000001", rows.get(0).getString("_start_lsn"));
    assertEquals(
        LocalDateTime.of(2026, 9, 28, 13, 50),
        rows.get(0).getLogicalTypeValue("_commit_ts", LocalDateTime.class));
  }

  @Test
  void c009AnIdleContinuousReadAsksSqlServerOnlyForMaxLsnOnEachPoll() {
    FakeSqlServer db = FakeScenarios.orders(dir);
    List<Lsn> commits = commitOrders(db, 2);
    ForwardingClientFactory factory = new ForwardingClientFactory(db.clientFactory(), (m, a) -> {});
    ReadChangesDoFn fn =
        continuous(read(factory).withStartingLsn(StartingLsn.after(commits.get(1))));
    LsnRange range = fn.initialRestriction(CI);
    WatermarkEstimators.Manual watermark =
        new WatermarkEstimators.Manual(BoundedWindow.TIMESTAMP_MIN_VALUE);
    factory.calls.clear();
    for (int poll = 0; poll < 3; poll++) {
      LsnRangeTracker tracker = new LsnRangeTracker(range);
      assertTrue(fn.processElement(CI, tracker, watermark, new RecordingReceiver()).shouldResume());
      range = tracker.trySplit(0).getResidual();
    }
    assertEquals(
        List.of("maxLsn", "maxLsn", "maxLsn"),
        List.copyOf(factory.calls),
        "one client per DoFn instance, kept open between polls");
    fn.teardown();
    assertEquals(List.of("maxLsn", "maxLsn", "maxLsn", "close"), List.copyOf(factory.calls));
  }
}
