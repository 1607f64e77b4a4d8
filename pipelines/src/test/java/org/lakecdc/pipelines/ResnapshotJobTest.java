package org.lakecdc.pipelines;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.lakecdc.pipelines.JobFixture.ORDERS;
import static org.lakecdc.pipelines.JobFixture.at;
import static org.lakecdc.pipelines.JobFixture.order;

import java.nio.file.Path;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.apache.beam.sdk.values.Row;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.lakecdc.io.mssqlcdc.client.DataLossError;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.io.mssqlcdc.read.DataLossPolicy;
import org.lakecdc.io.mssqlcdc.schema.MetadataColumns;
import org.lakecdc.pipelines.targets.JobConfig;
import org.lakecdc.transforms.bronze.CrashPoint;
import org.lakecdc.transforms.delta.DeltaColumn;
import org.lakecdc.transforms.facts.FactsTable;
import org.lakecdc.transforms.finalization.ControlTable;
import org.lakecdc.transforms.position.StreamPosition;

/**
 * {@code --onDataLoss=resnapshot} (docs/behaviour.md §9; docs/scenarios.md §10): the launcher
 * re-snapshots a target whose unread changes CDC cleanup purged into a new generation and streams
 * on, at most once per interval, resuming a crashed recovery without a second snapshot; silver
 * rebuilds from the newest snapshot.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class ResnapshotJobTest {
  @TempDir Path dir;

  /** C153's source: keyed orders 0..2 at T0..T0+2. */
  private static JobFixture orders(Path dir) {
    JobFixture f = new JobFixture(dir);
    f.db.enableCdc(ORDERS);
    for (int i = 0; i < 3; i++) {
      f.db.transaction(at(i)).insert(ORDERS, order(i, "new", i + ".00")).commit();
    }
    return f;
  }

  private String silver() {
    return dir.resolve("delta/silver/dbo_orders").toString();
  }

  private JobConfig config(JobFixture f, DataLossPolicy policy) {
    return JobConfig.builder(f.db.clientFactory(), JobFixture.CI, f.bronze, f.facts, f.control)
        .appId("loss-v1")
        .onDataLoss(policy)
        .silverPath(silver())
        .build();
  }

  private List<Row> scan(String path) {
    return f0.tables.scan(path, DeltaColumn.toBeamSchema(f0.tables.describe(path).columns()));
  }

  private JobFixture f0;

  /** The distinct snapshots in bronze (values of {@code _snapshot}), in order. */
  private Set<String> snapshots(JobFixture f) {
    Set<String> out = new TreeSet<>();
    for (Row r : scan(f.bronze)) {
      if (r.getString(MetadataColumns.SNAPSHOT) != null) {
        out.add(r.getString(MetadataColumns.SNAPSHOT));
      }
    }
    return out;
  }

  /** Silver's rows as "key/status", sorted. */
  private List<String> silverRows() {
    List<String> out = new ArrayList<>();
    for (Row r : scan(silver())) {
      out.add(r.getValue("order_id") + "/" + r.getValue("status"));
    }
    out.sort(null);
    return out;
  }

  private List<Row> events(JobFixture f, String event) {
    return f.tables.scan(f.facts, FactsTable.SCHEMA).stream()
        .filter(r -> event.equals(r.getString(FactsTable.EVENT)))
        .toList();
  }

  private static LocalDateTime utc(java.time.Instant t) {
    return LocalDateTime.ofInstant(t, java.time.ZoneOffset.UTC);
  }

  private StreamPosition bronzePosition(JobFixture f) {
    return StreamPosition.fromJson(f.tables.domainMetadata(f.bronze, StreamPosition.BRONZE_DOMAIN))
        .orElseThrow();
  }

  /** Batches' (app id, event) pairs of the facts table, as "app/event". */
  private Set<String> batchApps(JobFixture f) {
    Set<String> out = new TreeSet<>();
    for (Row r : f.tables.scan(f.facts, FactsTable.SCHEMA)) {
      if (r.getValue(FactsTable.BATCH_ID) != null && r.getString(FactsTable.EVENT) == null) {
        out.add(r.getString(FactsTable.APP_ID) + "/" + r.getString(FactsTable.EVENT));
      }
    }
    return out;
  }

  /** C153 up to the loss: bootstrap, insert 3 and stream it, then update 1, delete 2, cleanup. */
  private JobFixture lostAfterOrder3() {
    JobFixture f = orders(dir);
    f0 = f;
    f.run(config(f, DataLossPolicy.RESNAPSHOT));
    f.db.transaction(at(3)).insert(ORDERS, order(3, "new", "3.00")).commit();
    f.run(config(f, DataLossPolicy.RESNAPSHOT));
    f.db.transaction(at(4)).update(ORDERS, List.of(1), Map.of("status", "paid")).commit();
    f.db.transaction(at(5)).delete(ORDERS, List.of(2)).commit();
    Lsn idle = f.db.idle(at(7));
    f.db.cleanup(JobFixture.CI, idle);
    return f;
  }

  @Test
  void c153DataLossReSnapshotsIntoANewGenerationAtMostOncePerInterval() {
    JobFixture f = lostAfterOrder3();
    assertEquals(1, snapshots(f).size());
    Row bootstrap = events(f, "bootstrap").get(0);
    assertEquals("loss-v1", bootstrap.getString(FactsTable.APP_ID));
    assertEquals(3L, bootstrap.getInt64(FactsTable.ROWS));

    f.run(config(f, DataLossPolicy.RESNAPSHOT));
    assertEquals(2, snapshots(f).size());
    StreamPosition position = bronzePosition(f);
    assertEquals(1, position.generation());
    assertEquals("loss-v1.g1", position.appId());
    List<Row> resnapshots = events(f, "resnapshot");
    assertEquals(1, resnapshots.size());
    Row event = resnapshots.get(0);
    assertEquals("loss-v1.g1", event.getString(FactsTable.APP_ID));
    assertNull(event.getValue(FactsTable.BATCH_ID));
    assertEquals(3L, event.getInt64(FactsTable.ROWS));
    assertEquals(
        utc(at(3)), event.getLogicalTypeValue(FactsTable.LOST_FROM_TS, LocalDateTime.class));
    assertEquals(utc(at(7)), event.getLogicalTypeValue(FactsTable.LOST_TO_TS, LocalDateTime.class));
    assertEquals(
        utc(at(7)),
        event.getLogicalTypeValue(FactsTable.RETENTION_WATERMARK_TS, LocalDateTime.class));
    assertEquals(event.getString(FactsTable.MIN_LSN), event.getString(FactsTable.MAX_LSN));
    assertEquals(position.endLsn().toString(), event.getString(FactsTable.END_LSN));
    assertTrue(
        f.lastOutput.contains("re-snapshotting (whole) into generation 1 under app id loss-v1.g1"),
        f.lastOutput);
    // No verdict covers the gap: the hour of 13:53..13:57 is lost.
    Row control =
        f.tables.scan(f.control, ControlTable.SCHEMA).stream()
            .filter(r -> f.bronze.equals(r.getString(ControlTable.TABLE_NAME)))
            .findFirst()
            .orElseThrow();
    assertEquals(
        "[{\"from\":\"2026-09-28T13:00\",\"to\":\"2026-09-28T14:00\"}]",
        control.getString(ControlTable.LOST_PERIODS));
    assertEquals(List.of("0/new", "1/paid", "3/new"), silverRows());

    // Step 4: the generation is honoured whatever --onDataLoss says.
    f.db.transaction(at(8)).update(ORDERS, List.of(0), Map.of("status", "paid")).commit();
    f.db.transaction(at(9)).delete(ORDERS, List.of(3)).commit();
    f.run(config(f, DataLossPolicy.FAIL));
    assertEquals(2, snapshots(f).size());
    assertEquals(1, events(f, "resnapshot").size());
    assertEquals(Set.of("loss-v1/null", "loss-v1.g1/null"), batchApps(f));
    assertEquals(List.of("0/paid", "1/paid"), silverRows(), "key 2, deleted in the gap, is gone");

    // Step 5: a second loss within the interval fails loudly.
    f.db.transaction(at(10)).insert(ORDERS, order(7, "new", "7.00")).commit();
    Lsn idle = f.db.idle(at(11));
    f.db.cleanup(JobFixture.CI, idle);
    DataLossError e =
        assertThrows(DataLossError.class, () -> f.run(config(f, DataLossPolicy.RESNAPSHOT)));
    assertTrue(e.getMessage().contains("--resnapshotIntervalDays=7 ago"), e.getMessage());
    assertEquals(2, snapshots(f).size());
    assertEquals(1, bronzePosition(f).generation());

    // Step 6: with an interval of 0 it re-snapshots now.
    f.run(config(f, DataLossPolicy.RESNAPSHOT).toBuilder().resnapshotIntervalDays(0).build());
    assertEquals(3, snapshots(f).size());
    assertEquals(2, bronzePosition(f).generation());
    assertEquals(
        List.of("loss-v1.g1", "loss-v1.g2"),
        events(f, "resnapshot").stream()
            .map(r -> r.getString(FactsTable.APP_ID))
            .sorted()
            .toList());
    assertEquals(List.of("0/paid", "1/paid", "7/new"), silverRows());
  }

  /** The source's current rows as "key/status", sorted. */
  private static List<String> sourceRows(JobFixture f) {
    List<String> out = new ArrayList<>();
    for (Map<String, Object> r : f.db.rows(ORDERS)) {
      out.add(r.get("order_id") + "/" + r.get("status"));
    }
    out.sort(null);
    return out;
  }

  /** Bronze's rows of the snapshot at {@code s} as "key/status", sorted. */
  private List<String> snapshotRows(JobFixture f, String s) {
    List<String> out = new ArrayList<>();
    for (Row r : scan(f.bronze)) {
      if (s.equals(r.getString(MetadataColumns.SNAPSHOT))) {
        out.add(r.getValue("order_id") + "/" + r.getValue("status"));
      }
    }
    out.sort(null);
    return out;
  }

  /** Bronze's rows as "lsn/seqval/op/key/snapshot": a row written twice shows twice. */
  private List<String> bronzeKeys(JobFixture f) {
    List<String> out = new ArrayList<>();
    for (Row r : scan(f.bronze)) {
      out.add(
          r.getString(MetadataColumns.START_LSN)
              + "/"
              + r.getString(MetadataColumns.SEQVAL)
              + "/"
              + r.getInt32(MetadataColumns.OPERATION)
              + "/"
              + r.getValue("order_id")
              + "/"
              + r.getString(MetadataColumns.SNAPSHOT));
    }
    out.sort(null);
    return out;
  }

  /** A loss after the position: a commit, then cleanup to an idle entry after it. */
  private static void purge(JobFixture f, int minute, int order) {
    f.db.transaction(at(minute)).insert(ORDERS, order(order, "new", order + ".00")).commit();
    f.db.cleanup(JobFixture.CI, f.db.idle(at(minute + 1)));
  }

  @Test
  void c154ACrashAtEveryStepOfARecoveryIsFinishedByTheRerunWithOneSnapshotAndNoLostChange() {
    JobFixture f = orders(dir);
    f0 = f;
    JobConfig config =
        config(f, DataLossPolicy.RESNAPSHOT).toBuilder()
            .bootstrap(false)
            .silverPath(null)
            .resnapshotIntervalDays(0)
            .build();
    f.run(config);
    int minute = 10;
    int generation = 0;
    for (CrashPoint point :
        List.of(
            CrashPoint.AFTER_RECOVERY_RECORDED,
            CrashPoint.AFTER_RESNAPSHOT_COMMIT,
            CrashPoint.AFTER_RESNAPSHOT_EVENT)) {
      purge(f, minute, 100 + generation);
      minute += 10;
      generation++;
      // The launcher records the recovery; the commit and the event are the pipeline's steps, whose
      // crash the runner reports wrapped.
      RuntimeException crash =
          assertThrows(RuntimeException.class, () -> f.run(config.withCrash(point, -1)));
      assertTrue(
          crash instanceof CrashPoint.SimulatedCrash
              || crash.getCause() instanceof CrashPoint.SimulatedCrash,
          point + ": " + crash);
      f.run(config);
      StreamPosition position = bronzePosition(f);
      assertEquals(generation, position.generation(), point.name());
      assertEquals("loss-v1.g" + generation, position.appId(), point.name());
      assertEquals(generation, snapshots(f).size(), point + ": one snapshot per generation");
      assertEquals(generation, events(f, "resnapshot").size(), point.name());
      assertEquals(
          generation,
          events(f, "snapshot_open").stream()
              .filter(r -> r.getString(FactsTable.DETAIL).contains("\"kind\":\"resnapshot\""))
              .count(),
          point + ": the recovery is recorded once");
      assertEquals(sourceRows(f), snapshotRows(f, position.endLsn().toString()), point.name());
      List<String> rows = bronzeKeys(f);
      assertEquals(new TreeSet<>(rows).size(), rows.size(), point + ": no row written twice");
    }
    // The stream goes on in the last generation: a later change is read once.
    f.db.transaction(at(minute)).update(ORDERS, List.of(0), Map.of("status", "paid")).commit();
    f.run(config);
    assertEquals(Set.of("loss-v1/null", "loss-v1.g3/null"), batchApps(f));
  }

  /**
   * Runs {@code ApplyChanges} over {@code f}'s bronze into {@link #silver()}; returns its output.
   */
  private String applyChanges(JobFixture f) {
    java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
    java.io.ByteArrayOutputStream err = new java.io.ByteArrayOutputStream();
    int code;
    try (java.io.PrintStream o =
            new java.io.PrintStream(out, true, java.nio.charset.StandardCharsets.UTF_8);
        java.io.PrintStream e =
            new java.io.PrintStream(err, true, java.nio.charset.StandardCharsets.UTF_8)) {
      code =
          ApplyChanges.run(
              new String[] {
                "--fakePath=" + dir.resolve("source"),
                "--captureInstance=dbo_orders",
                "--bronze=" + f.bronze,
                "--silver=" + silver(),
                "--control=" + f.control,
                "--facts=" + f.facts,
                "--logFile=" + dir.resolve("run.log")
              },
              o,
              e);
    }
    String printed = out.toString(java.nio.charset.StandardCharsets.UTF_8);
    assertEquals(0, code, printed + err.toString(java.nio.charset.StandardCharsets.UTF_8));
    return printed;
  }

  private String silverSnapshot() {
    return org.lakecdc.transforms.silver.SilverPosition.read(f0.tables, silver())
        .orElseThrow()
        .snapshotLsn();
  }

  /**
   * A whole re-snapshot whose own S is purged before its read ends commits nothing to bronze: no
   * reader can take the failed attempt's rows as a snapshot. Between the failure and the next
   * successful re-snapshot, ApplyChanges leaves silver as the last snapshot that completed made it;
   * the next attempt is generation 2 (the failed attempt used 1) and silver rebuilds from it.
   */
  @Test
  void aFailedReSnapshotCommitsNoRowAndSilverKeepsTheLastCompletedSnapshotUntilTheNext() {
    JobFixture f = orders(dir);
    f0 = f;
    JobConfig config = config(f, DataLossPolicy.RESNAPSHOT);
    f.run(config);
    String bootstrap = bronzePosition(f).endLsn().toString();
    assertEquals(List.of("0/new", "1/new", "2/new"), silverRows());
    purge(f, 10, 100);
    JobConfig outlived =
        JobConfig.builder(
                ReadTableHook.before(f.db.clientFactory(), () -> purge(f, 20, 101)),
                JobFixture.CI,
                f.bronze,
                f.facts,
                f.control)
            .appId("loss-v1")
            .onDataLoss(DataLossPolicy.RESNAPSHOT)
            .silverPath(silver())
            .build();
    long bronzeVersion = f.tables.version(f.bronze);
    assertThrows(DataLossError.class, () -> f.run(outlived));
    Row failed = events(f, "resnapshot_failed").get(0);
    String sFailed = failed.getString(FactsTable.MIN_LSN);
    assertEquals("loss-v1.g1", failed.getString(FactsTable.APP_ID));
    assertEquals(bronzeVersion, f.tables.version(f.bronze), "nothing committed to bronze");
    assertEquals(List.of(bootstrap), List.copyOf(snapshots(f)), "no row under " + sFailed);
    assertEquals("loss-v1", bronzePosition(f).appId(), "still generation 0");

    // ApplyChanges between the failure and the next re-snapshot: silver stays as it was.
    String between = applyChanges(f);
    assertTrue(between.contains(", 0 waves, 0 keys applied"), between);
    assertEquals(List.of("0/new", "1/new", "2/new"), silverRows());
    assertEquals(bootstrap, silverSnapshot());

    f.run(config.toBuilder().resnapshotIntervalDays(0).build());
    StreamPosition g2 = bronzePosition(f);
    assertEquals("loss-v1.g2", g2.appId());
    assertEquals(List.of(bootstrap, g2.endLsn().toString()), List.copyOf(snapshots(f)));
    applyChanges(f);
    assertEquals(List.of("0/new", "1/new", "100/new", "101/new", "2/new"), silverRows());
    assertEquals(g2.endLsn().toString(), silverSnapshot());
  }

  /**
   * The same for a bootstrap: a whole snapshot whose S is purged before its read ends is never
   * committed, so the target stays new and the rerun takes a snapshot of its own and streams on.
   */
  @Test
  void aBootstrapWhoseSWasPurgedBeforeItsReadEndedCommitsNothingAndTheRerunStartsOver() {
    JobFixture f = orders(dir);
    f0 = f;
    Lsn first = f.db.openClient().maxLsn().orElseThrow();
    JobConfig outlived =
        JobConfig.builder(
                ReadTableHook.before(f.db.clientFactory(), () -> purge(f, 10, 100)),
                JobFixture.CI,
                f.bronze,
                f.facts,
                f.control)
            .appId("loss-v1")
            .build();
    DataLossError e = assertThrows(DataLossError.class, () -> f.run(outlived));
    assertEquals(
        "dbo_orders: the bootstrap snapshot of "
            + f.bronze
            + " at S = "
            + first
            + " outlived the CDC retention: cleanup purged the changes after S (min_lsn is now "
            + f.db.openClient().minLsn(JobFixture.CI)
            + ") before the read could be committed, so nothing was committed and the next run"
            + " takes a new snapshot. Lengthen the retention (sys.sp_cdc_change_job @retention),"
            + " read faster (--numPartitions), or use --snapshot=chunked.",
        e.getMessage());
    assertEquals(List.of(), scan(f.bronze), "no row in bronze");
    assertTrue(
        f.tables.domainMetadata(f.bronze, StreamPosition.BRONZE_DOMAIN).isEmpty(), "no position");
    assertEquals(List.of(), events(f, "bootstrap"));

    f.run(config(f, DataLossPolicy.FAIL).toBuilder().silverPath(null).build());
    assertTrue(f.lastOutput.contains("New target " + f.bronze + ": taking a snapshot"));
    String s = bronzePosition(f).endLsn().toString();
    assertEquals(Set.of(s), snapshots(f));
    assertEquals(List.of("0/new", "1/new", "100/new", "2/new"), snapshotRows(f, s));
    assertEquals(1, events(f, "bootstrap").size());
  }

  /** Where a test kills the recovering run: a crash point, or "mid-read" (its read throws). */
  private static final List<String> KILLS =
      List.of(
          "MID_READ",
          CrashPoint.AFTER_RECOVERY_RECORDED.name(),
          CrashPoint.AFTER_RESNAPSHOT_COMMIT.name(),
          CrashPoint.AFTER_RESNAPSHOT_EVENT.name());

  @ParameterizedTest
  @EnumSource(
      value = DataLossPolicy.class,
      names = {"FAIL", "SKIP"})
  void aRecoveryKilledAtAnyStepIsFinishedByARerunWhateverItsOnDataLoss(DataLossPolicy rerun) {
    JobFixture f = orders(dir);
    f0 = f;
    JobConfig recovering =
        config(f, DataLossPolicy.RESNAPSHOT).toBuilder()
            .bootstrap(false)
            .silverPath(null)
            .resnapshotIntervalDays(0)
            .build();
    JobConfig plain = recovering.toBuilder().onDataLoss(rerun).build();
    f.run(recovering);
    int minute = 10;
    int generation = 0;
    for (String kill : KILLS) {
      purge(f, minute, 100 + generation);
      minute += 10;
      generation++;
      JobConfig killed =
          kill.equals("MID_READ")
              ? JobConfig.builder(
                      ReadTableHook.before(
                          f.db.clientFactory(),
                          () -> {
                            throw new CrashPoint.SimulatedCrash(
                                CrashPoint.AFTER_RECOVERY_RECORDED, -1);
                          }),
                      JobFixture.CI,
                      f.bronze,
                      f.facts,
                      f.control)
                  .appId("loss-v1")
                  .bootstrap(false)
                  .onDataLoss(DataLossPolicy.RESNAPSHOT)
                  .resnapshotIntervalDays(0)
                  .build()
              : recovering.withCrash(CrashPoint.valueOf(kill), -1);
      assertThrows(RuntimeException.class, () -> f.run(killed));
      assertEquals(
          generation,
          events(f, "snapshot_open").stream()
              .filter(r -> r.getString(FactsTable.DETAIL).contains("\"kind\":\"resnapshot\""))
              .count(),
          kill + ": the recovery is recorded");
      f.run(plain);
      StreamPosition position = bronzePosition(f);
      assertEquals(generation, position.generation(), kill + ", rerun " + rerun);
      assertEquals("loss-v1.g" + generation, position.appId(), kill);
      assertEquals(generation, snapshots(f).size(), kill + ": one snapshot per generation");
      assertEquals(generation, events(f, "resnapshot").size(), kill + ": its event, once");
      assertEquals(sourceRows(f), snapshotRows(f, position.endLsn().toString()), kill);
      assertEquals(List.of(), events(f, "data_skipped"), kill + ": nothing skipped");
      List<String> rows = bronzeKeys(f);
      assertEquals(new TreeSet<>(rows).size(), rows.size(), kill + ": no row written twice");
    }
    f.db.transaction(at(minute)).update(ORDERS, List.of(0), Map.of("status", "paid")).commit();
    f.run(plain);
    assertEquals(Set.of("loss-v1/null", "loss-v1.g4/null"), batchApps(f));
  }

  @Test
  void c156TheReSnapshotOfAnEmptiedTableIsMarkedOnlyByItsEvent() {
    JobFixture f = orders(dir);
    f0 = f;
    f.run(config(f, DataLossPolicy.RESNAPSHOT));
    f.db
        .transaction(at(3))
        .delete(ORDERS, List.of(0))
        .delete(ORDERS, List.of(1))
        .delete(ORDERS, List.of(2))
        .commit();
    f.db.cleanup(JobFixture.CI, f.db.idle(at(4)));
    f.run(config(f, DataLossPolicy.RESNAPSHOT));
    assertEquals(1, bronzePosition(f).generation());
    assertEquals(1, snapshots(f).size(), "no rows to write: bronze holds the bootstrap's only");
    Row event = events(f, "resnapshot").get(0);
    assertEquals(0L, event.getInt64(FactsTable.ROWS));
    String maxLsn = event.getString(FactsTable.MAX_LSN);
    for (Row r : scan(f.bronze)) {
      assertTrue(maxLsn.compareTo(r.getString(MetadataColumns.START_LSN)) > 0, maxLsn);
    }
    assertEquals(List.of(), silverRows(), "the event is the rebuild point");
  }

  @Test
  void c157AReSnapshotRecoversAStreamStartedAtAPurgedLsn() {
    JobFixture f = orders(dir);
    f0 = f;
    Lsn given = f.db.idle(at(3));
    f.db.transaction(at(4)).delete(ORDERS, List.of(0)).commit();
    f.db.cleanup(JobFixture.CI, f.db.idle(at(5)));
    f.run(
        config(f, DataLossPolicy.RESNAPSHOT).toBuilder()
            .bootstrap(false)
            .silverPath(null)
            .startingLsn(org.lakecdc.io.mssqlcdc.read.StartingLsn.after(given))
            .build());
    assertEquals(1, bronzePosition(f).generation());
    assertEquals(List.of("1/new", "2/new"), snapshotRows(f, bronzePosition(f).endLsn().toString()));
  }

  @Test
  void c158AReSnapshotRecoversChangesOnlyADroppedOlderInstanceHeld() {
    JobFixture f = orders(dir);
    f0 = f;
    f.run(config(f, DataLossPolicy.RESNAPSHOT).toBuilder().bootstrap(false).build());
    f.db.transaction(at(3)).delete(ORDERS, List.of(0)).commit();
    f.db.enableCdc(
        ORDERS, org.lakecdc.io.mssqlcdc.fake.CaptureOptions.defaults().withName("dbo_orders_v2"));
    f.db.transaction(at(5)).insert(ORDERS, order(5, "new", "5.00")).commit();
    f.db.disableCdc(JobFixture.CI);
    f.run(config(f, DataLossPolicy.RESNAPSHOT).toBuilder().bootstrap(false).build());
    assertEquals(1, bronzePosition(f).generation());
    assertEquals(List.of("1/new", "2/new", "5/new"), silverRows());
  }

  @Test
  void aStreamThatMeetsTheLossDuringARunIsReSnapshotAndStreamsOnInTheSameRun() {
    JobFixture f = orders(dir);
    f0 = f;
    JobConfig config = config(f, DataLossPolicy.RESNAPSHOT).toBuilder().bootstrap(false).build();
    f.run(config);
    f.db.transaction(at(3)).insert(ORDERS, order(3, "new", "3.00")).commit();
    // Cleanup runs after the pre-flight found nothing purged, before the stream reads.
    f.run(config, JobFixture.direct(), () -> f.db.cleanup(JobFixture.CI, f.db.idle(at(4))));
    assertTrue(
        f.lastOutput.contains("dbo_orders: CDC cleanup passed the stream during the run"),
        f.lastOutput);
    assertEquals(1, bronzePosition(f).generation());
    assertEquals(List.of("0/new", "1/new", "2/new", "3/new"), silverRows());
  }

  @Test
  void c069SkipGoesOnFromMinLsnAndRecordsTheGapThatNoVerdictCovers() {
    JobFixture f = orders(dir);
    f0 = f;
    JobConfig skip =
        config(f, DataLossPolicy.SKIP).toBuilder().bootstrap(false).silverPath(null).build();
    f.run(skip);
    Lsn position = bronzePosition(f).endLsn();
    f.db.transaction(at(70)).insert(ORDERS, order(3, "new", "3.00")).commit();
    Lsn min = f.db.transaction(at(130)).insert(ORDERS, order(4, "new", "4.00")).commit();
    f.db.transaction(at(250)).insert(ORDERS, order(5, "new", "5.00")).commit();
    f.db.cleanup(JobFixture.CI, min);
    f.run(skip);
    List<Row> skipped = events(f, "data_skipped");
    assertEquals(1, skipped.size());
    Row gap = skipped.get(0);
    assertEquals("loss-v1", gap.getString(FactsTable.APP_ID));
    assertEquals(1L, gap.getInt64(FactsTable.BATCH_ID));
    assertEquals(min.toString(), gap.getString(FactsTable.END_LSN));
    assertEquals(utc(at(2)), gap.getLogicalTypeValue(FactsTable.LOST_FROM_TS, LocalDateTime.class));
    assertEquals(utc(at(130)), gap.getLogicalTypeValue(FactsTable.LOST_TO_TS, LocalDateTime.class));
    assertEquals(
        "{\"capture_instance\":\"dbo_orders\",\"from\":\""
            + f.db.openClient().incrementLsn(position)
            + "\",\"to\":\""
            + min
            + "\",\"certain\":true}",
        gap.getString(FactsTable.DETAIL));
    List<Integer> streamed = new ArrayList<>();
    for (Row r : scan(f.bronze)) {
      streamed.add((Integer) r.getValue("order_id"));
    }
    streamed.sort(null);
    assertEquals(List.of(0, 1, 2, 4, 5), streamed, "order 3 was purged before it was read");
    org.lakecdc.transforms.finalization.Finalization verdict =
        new org.lakecdc.transforms.finalization.Finalization(
            f.tables, f.control, java.time.Clock.systemUTC());
    assertEquals(LocalDateTime.of(2026, 9, 28, 18, 0), verdict.verdict(f.bronze).orElseThrow());
    assertEquals(
        List.of(
            new org.lakecdc.transforms.finalization.LostPeriod(
                LocalDateTime.of(2026, 9, 28, 13, 0), LocalDateTime.of(2026, 9, 28, 17, 0))),
        verdict.lostPeriods(f.bronze),
        "13:52 (the last change read) to 16:00 (min_lsn), whole hours");
    assertTrue(verdict.isFinal(f.bronze, LocalDateTime.of(2026, 9, 28, 13, 0)));
    assertEquals(false, verdict.isFinal(f.bronze, LocalDateTime.of(2026, 9, 28, 14, 0)));
    assertEquals(false, verdict.isFinal(f.bronze, LocalDateTime.of(2026, 9, 28, 17, 0)));
    assertTrue(verdict.isFinal(f.bronze, LocalDateTime.of(2026, 9, 28, 18, 0)));
  }

  @Test
  void aReSnapshotWhoseOwnSWasPurgedBeforeItsReadEndedFailsWithTheAdviceAndCountsForTheGuard() {
    JobFixture f = orders(dir);
    f0 = f;
    JobConfig config =
        config(f, DataLossPolicy.RESNAPSHOT).toBuilder().bootstrap(false).silverPath(null).build();
    f.run(config);
    purge(f, 10, 100);
    JobConfig outlived =
        JobConfig.builder(
                ReadTableHook.before(f.db.clientFactory(), () -> purge(f, 20, 101)),
                JobFixture.CI,
                f.bronze,
                f.facts,
                f.control)
            .appId("loss-v1")
            .bootstrap(false)
            .onDataLoss(DataLossPolicy.RESNAPSHOT)
            .build();
    DataLossError e = assertThrows(DataLossError.class, () -> f.run(outlived));
    assertTrue(
        e.getMessage().contains("the re-snapshot into generation 1 at S = ")
            && e.getMessage()
                .endsWith(
                    "Lengthen the retention (sys.sp_cdc_change_job @retention), read faster"
                        + " (--numPartitions), or use --snapshot=chunked, then rerun with"
                        + " --resnapshotIntervalDays=0."),
        e.getMessage());
    List<Row> failed = events(f, "resnapshot_failed");
    assertEquals(1, failed.size());
    assertEquals("loss-v1.g1", failed.get(0).getString(FactsTable.APP_ID));
    assertEquals(List.of(), events(f, "resnapshot"), "generation 1 never completed");
    // The failed attempt counts for the guard; with an interval of 0 the next one goes ahead.
    DataLossError guard = assertThrows(DataLossError.class, () -> f.run(config));
    assertTrue(guard.getMessage().contains("--resnapshotIntervalDays=7 ago"), guard.getMessage());
    f.run(config.toBuilder().resnapshotIntervalDays(0).build());
    assertEquals(2, bronzePosition(f).generation());
    assertEquals(
        List.of("loss-v1.g2"),
        events(f, "resnapshot").stream().map(r -> r.getString(FactsTable.APP_ID)).toList());
    assertEquals(sourceRows(f), snapshotRows(f, bronzePosition(f).endLsn().toString()));
  }
}
