package org.lakecdc.transforms.history;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.lakecdc.transforms.silver.BronzeLog.del;
import static org.lakecdc.transforms.silver.BronzeLog.ins;
import static org.lakecdc.transforms.silver.BronzeLog.lsn;
import static org.lakecdc.transforms.silver.BronzeLog.move;
import static org.lakecdc.transforms.silver.BronzeLog.ts;
import static org.lakecdc.transforms.silver.BronzeLog.upd;

import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.transforms.delta.DeltaTables;
import org.lakecdc.transforms.delta.TableKind;
import org.lakecdc.transforms.finalization.Granularity;
import org.lakecdc.transforms.silver.BronzeLog;

/** HistoryApplier: versions per change, tracked columns, snapshots, crashes, and the proof. */
class HistoryApplierTest {
  @TempDir Path dir;

  private final DeltaTables tables = DeltaTables.create();
  private final Clock clock = Clock.fixed(Instant.parse("2026-09-30T12:00:00Z"), ZoneOffset.UTC);
  private final List<String> lines = new ArrayList<>();
  private final HistoryApplier applier = new HistoryApplier(tables, clock, lines::add);

  private String path(String name) {
    return dir.resolve(name).toString();
  }

  private BronzeLog log() {
    return new BronzeLog(tables, path("bronze"), path("facts"), path("control"), true);
  }

  private HistorySpec spec(BronzeLog log, String history, List<String> tracked, int waveRows) {
    return new HistorySpec(
        log.bronze,
        path(history),
        log.control,
        log.facts,
        Set.of("dbo_orders"),
        List.of("order_id"),
        tracked,
        Granularity.HOUR,
        waveRows);
  }

  /** The history's rows as {@code key:status n..m}, n and m the LSN numbers, D when deleted. */
  private List<String> versions(String history) {
    List<String> rows = new ArrayList<>();
    for (Map<String, Object> row : tables.scan(path(history))) {
      Object to = row.get(HistoryTable.VALID_TO_LSN);
      rows.add(
          row.get("order_id")
              + ":"
              + row.get("status")
              + " "
              + number(row.get(HistoryTable.VALID_FROM_LSN))
              + ".."
              + (to == null ? "" : number(to))
              + (Boolean.TRUE.equals(row.get(HistoryTable.DELETED)) ? " D" : "")
              + (row.get(HistoryTable.LOST_FROM_LSN) == null
                  ? ""
                  : " lost after " + number(row.get(HistoryTable.LOST_FROM_LSN))));
    }
    rows.sort(Comparator.naturalOrder());
    return rows;
  }

  private static long number(Object lsn) {
    return Long.parseLong(((String) lsn).substring(2), 16);
  }

  /** The stream of the proof: updates, deletes, re-inserts, a key move, a NULL key, bursts. */
  private static void stream(BronzeLog log) {
    log.whole(1, 1, "a", 2, "b", 3, "c");
    log.fact("bootstrap", 1);
    log.change(2, upd(1, "a", "a2"), ins(4, "d"));
    log.change(3, del(2), ins(null, "n1"));
    log.change(4, ins(2, "b2"), upd(null, "n1", "n2"));
    log.change(5, move(3, 5, "c"), upd(4, "d", "d2"), upd(4, "d2", "d3"));
    log.change(6, ins(1, "x"), del(1), ins(1, "a3"), del(null));
  }

  /** The versions {@link #stream} gives, however its changes are cut in waves. */
  private static final List<String> STREAM_VERSIONS =
      List.of(
          "1:a 1..2",
          "1:a2 2..6",
          "1:a3 6..",
          "1:x 6..6 D",
          "2:b 1..3 D",
          "2:b2 4..",
          "3:c 1..5 D",
          "4:d 2..5",
          "4:d2 5..5",
          "4:d3 5..",
          "5:c 5..",
          "null:n1 3..4",
          "null:n2 4..6 D");

  @Test
  void everyChangeOpensAVersionAndClosesTheKeysPreviousOne() {
    BronzeLog log = log();
    stream(log);
    HistoryResult result = applier.apply(spec(log, "history", List.of(), 100));

    assertEquals(STREAM_VERSIONS, versions("history"));
    assertEquals(lsn(6), result.appliedLsn());
    assertEquals(2, result.waves());
    assertEquals(TableKind.HISTORY.propertyValue(), tables.describe(path("history")).kind().get());
    assertEquals(
        List.of(
            "History "
                + path("history")
                + ": opened 3 versions from the snapshot at "
                + lsn(1)
                + " of bronze "
                + log.bronze,
            "History "
                + path("history")
                + ": wave 2 applied bronze "
                + log.bronze
                + " up to "
                + lsn(6)
                + ": 18 rows, 6 keys (10 versions opened, 9 closed, 0 updated in place)"),
        lines);

    // Nothing new: no commit.
    long version = tables.version(path("history"));
    HistoryResult again = applier.apply(spec(log, "history", List.of(), 100));
    assertEquals(0, again.waves());
    assertEquals(version, tables.version(path("history")));
  }

  /**
   * A wave writes the versions it closes and the ones it opens to files apart, so a later wave
   * reads only files of current versions: of the stream's one wave, one file holds the 9 versions
   * it closed, another the 4 current ones (the snapshot's file has no live row left).
   */
  @Test
  void aWaveWritesTheVersionsItClosesAndTheOnesItOpensToFilesApart() {
    BronzeLog log = log();
    stream(log);
    applier.apply(spec(log, "history", List.of(), 100));
    Map<String, int[]> byFile = new java.util.TreeMap<>();
    tables
        .deletionVectors()
        .scanLiveRows(
            path("history"),
            tables.version(path("history")),
            List.of(HistoryTable.VALID_TO_LSN),
            (file, position, values) ->
                byFile.computeIfAbsent(file, f -> new int[2])[values[0] == null ? 1 : 0]++);
    List<String> files = new ArrayList<>();
    for (int[] counts : byFile.values()) {
      files.add(counts[0] + " closed, " + counts[1] + " current");
    }
    files.sort(Comparator.naturalOrder());
    assertEquals(List.of("0 closed, 4 current", "9 closed, 0 current"), files);
    assertEquals(STREAM_VERSIONS, versions("history"));
  }

  /**
   * A history with more current versions than the key index may hold (silver's cap, here 2) keeps
   * no index: each wave finds its keys by one scan, holding only the wave's keys, and writes the
   * same versions as an indexed history.
   */
  @Test
  void aHistoryAboveTheKeyIndexCapScansForEachWaveAndWritesTheSameVersions() {
    BronzeLog log = log();
    log.whole(1, 1, "a", 2, "b", 3, "c");
    log.fact("bootstrap", 1);
    HistoryApplier capped = new HistoryApplier(tables, clock, line -> {}, 2);
    HistoryApplier indexed = new HistoryApplier(tables, clock, line -> {});
    List<Runnable> changes =
        List.of(
            () -> log.change(2, upd(1, "a", "a2"), ins(4, "d")),
            () -> log.change(3, del(2), ins(null, "n1")),
            () -> log.change(4, ins(2, "b2"), upd(null, "n1", "n2")),
            () -> log.change(5, move(3, 5, "c"), upd(4, "d", "d2"), upd(4, "d2", "d3")),
            () -> log.change(6, ins(1, "x"), del(1), ins(1, "a3"), del(null)));
    capped.apply(spec(log, "capped", List.of(), 100));
    indexed.apply(spec(log, "indexed", List.of(), 100));
    for (Runnable change : changes) {
      change.run();
      capped.apply(spec(log, "capped", List.of(), 100));
      indexed.apply(spec(log, "indexed", List.of(), 100));
    }
    assertEquals(STREAM_VERSIONS, versions("capped"));
    assertEquals(STREAM_VERSIONS, versions("indexed"));
    assertEquals(5, capped.keyScans());
    assertEquals(1, indexed.keyScans());
  }

  @Test
  void wavesAcrossCallsCloseVersionsTheTableHoldsWithDeletionVectors() {
    BronzeLog log = log();
    log.whole(1, 1, "a", 2, "b");
    log.fact("bootstrap", 1);
    applier.apply(spec(log, "history", List.of(), 100));
    log.change(2, upd(1, "a", "a2"));
    applier.apply(spec(log, "history", List.of(), 100));
    log.change(3, del(1), upd(2, "b", "b2"));
    // A fresh applier (no key index kept) finds the current versions by a scan.
    new HistoryApplier(tables, clock).apply(spec(log, "history", List.of(), 100));

    assertEquals(List.of("1:a 1..2", "1:a2 2..3 D", "2:b 1..3", "2:b2 3.."), versions("history"));
    assertEquals(
        List.of("2:b2 3.."), versions("history").stream().filter(v -> v.endsWith("..")).toList());
  }

  @Test
  void trackedColumnsLeftAsTheyWereUpdateTheCurrentVersionInPlace() {
    BronzeLog log = log();
    log.whole(1, 1, "a");
    log.fact("bootstrap", 1);
    log.change(2, upd(1, "a", "a2"));
    log.change(3, upd(1, "a2", "a3"), ins(2, "b"));
    log.change(4, move(2, 3, "b"));
    HistoryResult result = applier.apply(spec(log, "history", List.of("ORDER_ID"), 2));

    assertEquals(List.of("1:a3 1..", "2:b 3..4 D", "3:b 4.."), versions("history"));
    assertEquals(2, result.updatedInPlace());
  }

  @Test
  void historyColumnsMustBeCapturedColumns() {
    BronzeLog log = log();
    log.whole(1, 1, "a");
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> applier.apply(spec(log, "history", List.of("status", "price"), 100)));
    assertEquals(
        "historyColumns [price] are not captured columns of bronze "
            + log.bronze
            + "; captured: [order_id, status]",
        e.getMessage());
    assertEquals(false, tables.exists(path("history")));
  }

  @Test
  void aResnapshotClosesGoneAndChangedKeysAtSNamingWhereTheLostChangesBegan() {
    BronzeLog log = log();
    log.whole(1, 1, "a", 2, "b", 3, "c");
    log.fact("bootstrap", 1);
    log.change(2, upd(1, "a", "a2"));
    applier.apply(spec(log, "history", List.of(), 2));
    // Changes 3 to 9 were purged before they were read: a re-snapshot at 10.
    log.whole(10, 1, "a2", 2, "b9", 4, "d");
    log.fact("resnapshot", 10);
    log.change(11, upd(4, "d", "d2"));
    HistoryResult result = applier.apply(spec(log, "history", List.of(), 2));

    assertEquals(
        List.of(
            "1:a 1..2",
            "1:a2 2..",
            "2:b 1..10 lost after 2",
            "2:b9 10..",
            "3:c 1..10 D lost after 2",
            "4:d 10..11",
            "4:d2 11.."),
        versions("history"));
    assertEquals(lsn(11), result.appliedLsn());
    assertEquals(
        HistoryPosition.read(tables, path("history")).orElseThrow().snapshotLsn(), lsn(10));
  }

  @Test
  void theStateAtEveryCommitTimeAndBetweenEqualsTheLatestImageFromBronze() {
    BronzeLog log = log();
    stream(log);
    applier.apply(spec(log, "history", List.of(), 3));
    log.change(7, upd(5, "c", "c2"), ins(6, "f"));
    log.change(8, del(6), upd(2, "b2", "b3"));
    applier.apply(spec(log, "history", List.of(), 3));
    log.whole(12, 1, "a3", 2, "b4", 5, "c2", 7, "g");
    log.fact("resnapshot", 12);
    log.change(13, upd(7, "g", "g2"), del(5), ins(5, "c3"));
    applier.apply(spec(log, "history", List.of(), 3));

    int checked = 0;
    for (int n = 1; n <= 14; n++) {
      for (LocalDateTime t : List.of(ts(n), ts(n).plusSeconds(30))) {
        assertEquals(
            HistoryModel.fromBronze(tables, log.bronze, t, "order_id", List.of("status")),
            HistoryModel.fromHistory(tables, path("history"), t, "order_id", List.of("status")),
            "at " + t);
        checked++;
      }
    }
    assertEquals(28, checked);
  }

  @Test
  void trackedColumnsKeepTheProofForThemWhileUntrackedOnesShowTheLatestImage() {
    BronzeLog log = log();
    stream(log);
    applier.apply(spec(log, "history", List.of("order_id"), 3));
    for (int n = 1; n <= 7; n++) {
      LocalDateTime t = ts(n).plusSeconds(30);
      assertEquals(
          HistoryModel.fromBronze(tables, log.bronze, t, "order_id", List.of("order_id")),
          HistoryModel.fromHistory(tables, path("history"), t, "order_id", List.of("order_id")),
          "at " + t);
    }
  }

  @Test
  void aCrashBeforeOrAfterAWaveCommitThenARerunGivesTheIdenticalTable() {
    BronzeLog log = log();
    stream(log);
    applier.apply(spec(log, "clean", List.of(), 3));
    List<String> clean = HistoryModel.allRows(tables, path("clean"));
    for (int crashAt = 1; crashAt <= 4; crashAt++) {
      String name = "crashed" + crashAt;
      HistoryApplier crashing = new HistoryApplier(tables, clock);
      int[] commits = {0};
      int at = crashAt;
      crashing.beforeWaveCommit(
          () -> {
            if (++commits[0] == at) {
              throw new IllegalStateException("kill -9");
            }
          });
      IllegalStateException crash =
          assertThrows(
              IllegalStateException.class, () -> crashing.apply(spec(log, name, List.of(), 3)));
      assertEquals("kill -9", crash.getMessage());
      new HistoryApplier(tables, clock).apply(spec(log, name, List.of(), 3));
      assertEquals(clean, HistoryModel.allRows(tables, path(name)), "crash at commit " + crashAt);
    }
    // Killed after a commit, before the control row: the rerun goes on from the position.
    for (int crashAt = 1; crashAt <= 3; crashAt++) {
      String name = "after" + crashAt;
      HistoryApplier crashing = new HistoryApplier(tables, clock);
      int[] commits = {0};
      int at = crashAt;
      crashing.hook(
          point -> {
            if (point.equals("committed") && ++commits[0] == at) {
              throw new IllegalStateException("kill -9");
            }
          });
      assertThrows(
          IllegalStateException.class, () -> crashing.apply(spec(log, name, List.of(), 3)));
      assertEquals(at, HistoryPosition.read(tables, path(name)).orElseThrow().wave());
      new HistoryApplier(tables, clock).apply(spec(log, name, List.of(), 3));
      assertEquals(clean, HistoryModel.allRows(tables, path(name)), "killed after " + crashAt);
    }
  }

  /**
   * A chunked snapshot's rows carry their chunk's stamp L (and its commit time); their versions
   * open at S, with S's commit time from the snapshot's completion row (docs/tables.md: {@code
   * _valid_from_ts} is the commit time of {@code _valid_from_lsn}).
   */
  @Test
  void aChunkedSnapshotsVersionsOpenAtSWithSsCommitTimeNotTheirChunksStamps() {
    BronzeLog log = log();
    log.chunk(10, 20, 0, 1, "a", 2, "b");
    log.chunk(10, 30, 1, 3, "c");
    log.completion("bootstrap", 10);
    log.verdict(30);
    applier.apply(spec(log, "history", List.of(), 100));

    List<String> opened = new ArrayList<>();
    for (Map<String, Object> row : tables.scan(path("history"))) {
      Object from = row.get(HistoryTable.VALID_FROM_TS);
      LocalDateTime at =
          from instanceof Instant instant
              ? LocalDateTime.ofInstant(instant, ZoneOffset.UTC)
              : (LocalDateTime) from;
      opened.add(row.get("order_id") + " " + row.get(HistoryTable.VALID_FROM_LSN) + " " + at);
    }
    opened.sort(Comparator.naturalOrder());
    assertEquals(
        List.of(
            "1 " + BronzeLog.lsn(10) + " " + BronzeLog.ts(10),
            "2 " + BronzeLog.lsn(10) + " " + BronzeLog.ts(10),
            "3 " + BronzeLog.lsn(10) + " " + BronzeLog.ts(10)),
        opened);
  }

  @Test
  void theVerdictFollowsBronzesAndAnOpenChunkedSnapshotHoldsIt() {
    BronzeLog log = log();
    log.whole(1, 1, "a");
    log.fact("bootstrap", 1);
    log.change(62, upd(1, "a", "a2"));
    log.verdict(62);
    HistoryResult first = applier.apply(spec(log, "history", List.of(), 100));
    assertEquals(LocalDateTime.of(2026, 9, 30, 10, 0), first.finalizedUntil());

    // A chunked snapshot opened after it: the history's verdict stays while it is open.
    log.fact("snapshot_open", 70);
    log.change(125, upd(1, "a2", "a3"));
    log.verdict(125);
    HistoryResult held = applier.apply(spec(log, "history", List.of(), 100));
    assertEquals(LocalDateTime.of(2026, 9, 30, 10, 0), held.finalizedUntil());
    assertEquals(lsn(62), held.appliedLsn());
    assertEquals(0, held.waves());

    // Completed (its bootstrap row at S): the snapshot's rows open at S and the verdict moves on.
    log.whole(70, 1, "a2");
    log.fact("bootstrap", 70);
    HistoryResult completed = applier.apply(spec(log, "history", List.of(), 100));
    assertEquals(LocalDateTime.of(2026, 9, 30, 11, 0), completed.finalizedUntil());
    assertEquals(List.of("1:a 1..62", "1:a2 62..125", "1:a3 125.."), versions("history"));
    assertEquals(lsn(125), completed.appliedLsn());
  }
}
