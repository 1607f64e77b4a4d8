package org.lakecdc.transforms.silver;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.lakecdc.transforms.silver.BronzeLog.del;
import static org.lakecdc.transforms.silver.BronzeLog.ins;
import static org.lakecdc.transforms.silver.BronzeLog.lsn;
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
import org.apache.beam.sdk.schemas.Schema.FieldType;
import org.apache.beam.sdk.schemas.logicaltypes.SqlTypes;
import org.apache.beam.sdk.values.Row;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.transforms.delta.DeltaTables;
import org.lakecdc.transforms.facts.FactsTable;
import org.lakecdc.transforms.finalization.ControlTable;
import org.lakecdc.transforms.finalization.Finalization;
import org.lakecdc.transforms.finalization.Granularity;
import org.lakecdc.transforms.snapshot.ChunkedSnapshotFacts;
import org.lakecdc.transforms.snapshot.ChunkedSnapshotFacts.ChunkFact;
import org.lakecdc.transforms.snapshot.ChunkedSnapshotFacts.Open;
import org.lakecdc.transforms.snapshot.ChunkedSnapshotFacts.Plan;

/**
 * SilverApplier during an open chunked snapshot (docs/behaviour.md §10.2 steps 4, 7, 8, 9, 11,
 * 14–16 and §10.4): facts rows written with {@link ChunkedSnapshotFacts}, bronze with {@link
 * BronzeLog}.
 */
class SilverChunkedTest {
  private static final String APP = "chunk-v1";
  private static final Instant NOW = Instant.parse("2026-09-30T12:00:00Z");

  @TempDir Path dir;

  private final DeltaTables tables = DeltaTables.create();
  private final Clock clock = Clock.fixed(NOW, ZoneOffset.UTC);
  private final List<String> warnings = new ArrayList<>();
  private final SilverApplier applier = new SilverApplier(tables, clock, warnings::add);

  private String path(String name) {
    return dir.resolve(name).toString();
  }

  private BronzeLog log(FieldType keyType) {
    return new BronzeLog(tables, path("bronze"), path("facts"), path("control"), true, keyType);
  }

  private SilverSpec spec(BronzeLog log) {
    return new SilverSpec(
        log.bronze,
        path("silver"),
        log.control,
        log.facts,
        Set.of("dbo_orders"),
        List.of("order_id"),
        Granularity.HOUR,
        1000);
  }

  private List<String> silverRows() {
    return BronzeLog.rows(tables, path("silver"));
  }

  private SilverPosition position() {
    return SilverPosition.read(tables, path("silver")).orElseThrow();
  }

  private Row controlRow(String table) {
    return new Finalization(tables, path("control"), clock).row(table).orElseThrow();
  }

  private void fact(BronzeLog log, Row row) {
    tables.append(log.facts, FactsTable.SCHEMA, List.of(row), null, 0, Map.of());
  }

  private static Instant instant(long n) {
    return ts(n).toInstant(ZoneOffset.UTC);
  }

  private Open open(BronzeLog log, long s, String kind) {
    Open open =
        new Open(
            APP,
            log.bronze,
            Lsn.parse(lsn(s)),
            instant(s),
            ChunkedSnapshotFacts.MODE_CHUNKED,
            kind,
            0,
            List.of("order_id"),
            null,
            null,
            null,
            instant(s));
    fact(log, open.toRow(instant(s)));
    return open;
  }

  private void plan(BronzeLog log, long s, String kind, int perWave, String chunksJson) {
    fact(
        log,
        new Plan(
                APP,
                log.bronze,
                Lsn.parse(lsn(s)),
                kind,
                List.of("order_id"),
                2,
                perWave,
                chunksJson,
                instant(s),
                1)
            .toRow(instant(s)));
  }

  /** A chunk's bronze rows (key/status pairs at stamp {@code lsn(stamp)}) and its facts row. */
  private void chunk(
      BronzeLog log,
      long s,
      int perWave,
      int index,
      String lo,
      String hi,
      boolean last,
      long stamp,
      Object... keyStatus) {
    log.chunk(s, stamp, index, keyStatus);
    fact(
        log,
        new ChunkFact(
                APP,
                log.bronze,
                Lsn.parse(lsn(s)),
                index,
                index / perWave,
                lo,
                hi,
                last,
                keyStatus.length / 2,
                Lsn.parse(lsn(stamp)),
                instant(stamp),
                null,
                null,
                null,
                null,
                null)
            .toRow(instant(stamp)));
  }

  private void complete(BronzeLog log, Open open, long rows, int chunks, long lastStamp) {
    fact(
        log,
        ChunkedSnapshotFacts.completionRow(
            open, rows, chunks, Lsn.parse(lsn(lastStamp)), instant(lastStamp)));
  }

  @Test
  void c098WavesAreAppliedAsTheyCompleteAndTheCompletionRebuildsFromS() {
    BronzeLog log = log(FieldType.INT32);
    Open open = open(log, 5, ChunkedSnapshotFacts.KIND_BOOTSTRAP);
    String plan = "[[0,null,2],[1,2,4],[2,4,6],[3,6,8]]";
    // Wave 0: update 1 new->paid, then delete 3 + insert 9, both before the chunks' reads.
    log.change(10, upd(1, "new", "paid"));
    log.change(11, del(3), ins(9, "new"));
    plan(log, 5, "int", 2, plan);
    chunk(log, 5, 2, 0, "null", "2", false, 11, 0, "new", 1, "paid");
    chunk(log, 5, 2, 1, "2", "4", false, 11, 2, "new");
    log.verdict(11);

    applier.apply(spec(log));
    // The wave-0 keys' latest images, and the insert of 9 (a change after S).
    assertEquals(List.of("0:new", "1:paid", "2:new", "9:new"), silverRows());
    assertEquals(new SilverPosition(lsn(11), null, lsn(5), 0, 2), position());
    Row control = controlRow(path("silver"));
    assertEquals(lsn(5), control.getString(ControlTable.OPEN_SNAPSHOT_LSN));
    assertEquals(0, control.getInt32(ControlTable.SNAPSHOT_WAVE));
    assertNull(control.getValue(ControlTable.FINALIZED_UNTIL), "verdict held while open");

    // Wave 1: delete 6, then update 0 new->late + insert 6 again; only chunk 2 is committed.
    log.change(12, del(6));
    log.change(13, upd(0, "new", "late"), ins(6, "again"));
    chunk(log, 5, 2, 2, "4", "6", false, 13, 4, "new", 5, "new");
    log.verdict(13);
    applier.apply(spec(log));
    // A partially committed wave is not applied: 4 and 5 are not in silver yet.
    assertEquals(List.of("0:late", "1:paid", "2:new", "6:again", "9:new"), silverRows());
    assertEquals(new SilverPosition(lsn(13), null, lsn(5), 0, 3), position());

    chunk(log, 5, 2, 3, "6", "8", true, 13, 6, "again", 7, "new");
    applier.apply(spec(log));
    assertEquals(
        List.of("0:late", "1:paid", "2:new", "4:new", "5:new", "6:again", "7:new", "9:new"),
        silverRows());
    assertEquals(new SilverPosition(lsn(13), null, lsn(5), 1, 4), position());
    assertNull(controlRow(path("silver")).getValue(ControlTable.FINALIZED_UNTIL));

    // Completion, then delete 4: the rebuild from S equals the source table.
    complete(log, open, 7, 4, 13);
    log.change(20, del(4));
    LocalDateTime bronzeVerdict = log.verdict(20);
    ApplyResult result = applier.apply(spec(log));
    assertEquals(true, result.rebuilt());
    assertEquals(
        List.of("0:late", "1:paid", "2:new", "5:new", "6:again", "7:new", "9:new"), silverRows());
    assertEquals(new SilverPosition(lsn(20), lsn(5), null, null, 6), position());
    control = controlRow(path("silver"));
    assertNull(control.getString(ControlTable.OPEN_SNAPSHOT_LSN));
    assertNull(control.getValue(ControlTable.SNAPSHOT_WAVE));
    assertEquals(lsn(5), control.getString(ControlTable.SNAPSHOT_LSN));
    assertEquals(
        bronzeVerdict,
        control.getLogicalTypeValue(ControlTable.FINALIZED_UNTIL, LocalDateTime.class));
    // The open row is the target's snapshot row while no bootstrap row exists: no warning.
    assertEquals(List.of(), warnings);
  }

  /** Silver's position but its commit number, as (applied, rebuilt_from, open, wave). */
  private List<Object> progress() {
    SilverPosition p = position();
    return java.util.Arrays.asList(
        p.appliedLsn(), p.snapshotLsn(), p.openSnapshotLsn(), p.snapshotWave());
  }

  @Test
  void c175AnOpenBootstrapAppliesItsWavesWithoutResurrectingDeletesAndHoldsTheVerdict() {
    BronzeLog log = log(FieldType.INT32);
    Open open = open(log, 100, ChunkedSnapshotFacts.KIND_BOOTSTRAP);
    plan(log, 100, "int", 2, "[[0,null,4],[1,4,7],[2,7,null]]");
    log.change(101, del(2));
    log.change(102, ins(10, "new"));
    log.change(111, del(5));
    log.verdict(111);
    ApplyResult result = applier.apply(spec(log));
    assertEquals(List.of("10:new"), silverRows());
    assertNull(result.finalizedUntil(), "held while the snapshot is open");
    assertEquals(java.util.Arrays.asList(lsn(111), null, lsn(100), null), progress());

    chunk(log, 100, 2, 0, "null", "4", false, 110, 1, "new", 3, "new");
    chunk(log, 100, 2, 1, "4", "7", false, 110, 4, "new", 5, "new", 6, "new");
    log.change(112, upd(4, "new", "paid"));
    log.verdict(112);
    result = applier.apply(spec(log));
    // 5 stays deleted: its delete (111) is newer than the stamp (110).
    assertEquals(List.of("10:new", "1:new", "3:new", "4:paid", "6:new"), silverRows());
    assertEquals(false, result.rebuilt());
    assertNull(result.finalizedUntil());
    assertEquals(java.util.Arrays.asList(lsn(112), null, lsn(100), 0), progress());

    chunk(log, 100, 2, 2, "7", "null", true, 120, 7, "new", 8, "new", 10, "new");
    log.change(121, del(1));
    log.change(122, BronzeLog.move(6, 66, "new"));
    log.verdict(122);
    applier.apply(spec(log));
    List<String> rows = List.of("10:new", "3:new", "4:paid", "66:new", "7:new", "8:new");
    assertEquals(rows, silverRows());
    assertEquals(java.util.Arrays.asList(lsn(122), null, lsn(100), 1), progress());

    long version = tables.version(path("silver"));
    assertEquals(0, applier.apply(spec(log)).waves());
    assertEquals(version, tables.version(path("silver")));

    // A crash that left the position at wave 0: wave 1 is replayed, with the same outcome.
    long next = position().wave() + 1;
    new SilverMerge(tables)
        .merge(
            path("silver"),
            List.of("order_id"),
            List.of(),
            SilverPosition.APP_ID,
            next,
            new SilverPosition(lsn(122), null, lsn(100), 0, next).domainMetadata());
    assertEquals(java.util.Arrays.asList(lsn(122), null, lsn(100), 0), progress());
    assertEquals(1, applier.apply(spec(log)).waves());
    assertEquals(rows, silverRows());
    assertEquals(java.util.Arrays.asList(lsn(122), null, lsn(100), 1), progress());

    complete(log, open, 8, 3, 120);
    LocalDateTime released = log.verdict(122);
    result = applier.apply(spec(log));
    assertEquals(true, result.rebuilt());
    assertEquals(rows, silverRows());
    assertEquals(released, result.finalizedUntil());
    assertEquals(java.util.Arrays.asList(lsn(122), lsn(100), null, null), progress());
    assertEquals(false, applier.apply(spec(log)).rebuilt());
  }

  @Test
  void c175ADeleteCommittedAfterAChunksStampIsNeverResurrected() {
    BronzeLog log = log(FieldType.INT32);
    open(log, 5, ChunkedSnapshotFacts.KIND_BOOTSTRAP);
    plan(log, 5, "int", 2, "[[0,null,2],[1,2,3]]");
    chunk(log, 5, 2, 0, "null", "2", false, 6, 0, "new", 1, "new");
    log.change(7, del(1));
    applier.apply(spec(log)); // the delete of 1 finds nothing to delete; wave 0 is incomplete
    assertEquals(List.of(), silverRows());

    chunk(log, 5, 2, 1, "2", "3", true, 8, 2, "new");
    applier.apply(spec(log));
    // Chunk 0 held 1 at stamp 6, but the delete at 7 outranks it.
    assertEquals(List.of("0:new", "2:new"), silverRows());
    assertEquals(
        List.of("0:new@" + lsn(6), "2:new@" + lsn(8)),
        BronzeLog.rowsWithLsn(tables, path("silver")));
  }

  @Test
  void c176AChunkedResnapshotRangeDeletesStaleIntegerKeys() {
    BronzeLog log = log(FieldType.INT32);
    List<Object> all = new ArrayList<>();
    for (int k = 0; k < 10; k++) {
      all.add(k);
      all.add("old");
    }
    log.whole(2, all.toArray());
    log.fact("bootstrap", 2);
    applier.apply(spec(log));
    assertEquals(10, silverRows().size());

    // 3 and 7 were deleted in a purged gap: no delete row reaches bronze.
    Open open = open(log, 20, ChunkedSnapshotFacts.KIND_RESNAPSHOT);
    // The last bound is MAX + 1 beyond BIGINT: open.
    plan(log, 20, "int", 1, "[[0,null,5],[1,5,9223372036854775808]]");
    chunk(log, 20, 1, 0, "null", "5", false, 21, 0, "old", 1, "old", 2, "old", 4, "old");
    applier.apply(spec(log));
    assertEquals(
        List.of("0:old", "1:old", "2:old", "4:old", "5:old", "6:old", "7:old", "8:old", "9:old"),
        silverRows());
    assertEquals(new SilverPosition(lsn(2), lsn(2), lsn(20), 0, 2), position());

    // 7 comes back after chunk 1's stamp: that later change wins over its range delete.
    chunk(
        log,
        20,
        1,
        1,
        "5",
        "9223372036854775808",
        true,
        23,
        5,
        "old",
        6,
        "old",
        8,
        "old",
        9,
        "old");
    log.change(24, ins(7, "back"));
    applier.apply(spec(log));
    List<String> expected =
        List.of("0:old", "1:old", "2:old", "4:old", "5:old", "6:old", "7:back", "8:old", "9:old");
    assertEquals(expected, silverRows());

    complete(log, open, 8, 2, 23);
    applier.apply(spec(log));
    assertEquals(expected, silverRows());
    assertEquals(new SilverPosition(lsn(24), lsn(20), null, null, 6), position());
  }

  @Test
  void c176AStaleNullKeyIsRangeDeletedOnlyByAWholeTableChunk() {
    BronzeLog log = log(FieldType.INT32);
    log.whole(2, null, "old", 1, "old", 2, "old");
    log.fact("bootstrap", 2);
    applier.apply(spec(log));

    // NULL and 2 were deleted in a purged gap; a two-chunk re-snapshot keeps NULL until completion.
    Open open = open(log, 20, ChunkedSnapshotFacts.KIND_RESNAPSHOT);
    plan(log, 20, "int", 2, "[[0,null,2],[1,2,null]]");
    chunk(log, 20, 2, 0, "null", "2", false, 21, 1, "snap");
    chunk(log, 20, 2, 1, "2", "null", true, 21);
    applier.apply(spec(log));
    assertEquals(List.of("1:snap", "null:old"), silverRows());
    complete(log, open, 1, 2, 21);
    applier.apply(spec(log));
    assertEquals(List.of("1:snap"), silverRows());

    // A later re-snapshot in one chunk over the whole table: the stale NULL key goes at its wave.
    log.change(30, ins(null, "back"), ins(3, "new"));
    applier.apply(spec(log));
    assertEquals(List.of("1:snap", "3:new", "null:back"), silverRows());
    open(log, 40, ChunkedSnapshotFacts.KIND_RESNAPSHOT);
    plan(log, 40, "int", 1, "[[0,null,null]]");
    chunk(log, 40, 1, 0, "null", "null", true, 41, 1, "snap", 3, "new");
    applier.apply(spec(log));
    assertEquals(List.of("1:snap", "3:new"), silverRows());
    assertEquals(lsn(40), position().openSnapshotLsn());
  }

  @Test
  void c114StaleDatetime2KeysAreRangeDeletedButOneInsideABoundsMicrosecondIsKept() {
    BronzeLog log = log(FieldType.logicalType(SqlTypes.DATETIME));
    LocalDateTime base = LocalDateTime.of(2026, 1, 1, 10, 0);
    LocalDateTime a = base.plusNanos(500_000_000);
    LocalDateTime x = base.plusSeconds(1);
    LocalDateTime k = base.plusSeconds(2).plusNanos(123_456_000); // …02.1234567 in the engine
    LocalDateTime c = base.plusSeconds(3);
    LocalDateTime y = base.plusSeconds(4); // …04.0000001 in the engine
    LocalDateTime z = base.plusSeconds(7);
    LocalDateTime m = base.plusSeconds(6);
    log.whole(2, a, "a", x, "x", k, "k", c, "c", y, "y", z, "z");
    log.fact("bootstrap", 2);
    log.change(3, ins(m, "m"));
    applier.apply(spec(log));
    assertEquals(
        List.of(a + ":a", x + ":x", k + ":k", c + ":c", y + ":y", m + ":m", z + ":z"),
        sortedRows());

    // x, y and z are deleted and the gap purged; a chunked re-snapshot with a forced plan.
    Open open = open(log, 20, ChunkedSnapshotFacts.KIND_RESNAPSHOT);
    String b1 = "\"2026-01-01T10:00:02.1234568\"";
    String b2 = "\"2026-01-01T10:00:05.0000000\"";
    plan(
        log,
        20,
        "keyset",
        1,
        "[[0,null," + b1 + "],[1," + b1 + "," + b2 + "],[2," + b2 + ",null]]");
    // SQL Server's k (…02.1234567) is below b1, so chunk 0 holds it.
    chunk(log, 20, 1, 0, "null", b1, false, 21, a, "a", k, "k");
    applier.apply(spec(log));
    assertEquals(List.of(a + ":a", k + ":k", c + ":c", y + ":y", m + ":m", z + ":z"), sortedRows());

    chunk(log, 20, 1, 1, b1, b2, false, 22, c, "c");
    applier.apply(spec(log));
    assertEquals(List.of(a + ":a", k + ":k", c + ":c", m + ":m", z + ":z"), sortedRows());

    chunk(log, 20, 1, 2, b2, "null", true, 23, m, "m");
    applier.apply(spec(log));
    assertEquals(List.of(a + ":a", k + ":k", c + ":c", m + ":m"), sortedRows());
    assertEquals(new SilverPosition(lsn(3), lsn(2), lsn(20), 2, 5), position());

    complete(log, open, 4, 3, 23);
    applier.apply(spec(log));
    assertEquals(List.of(a + ":a", k + ":k", c + ":c", m + ":m"), sortedRows());
    assertEquals(new SilverPosition(lsn(20), lsn(20), null, null, 6), position());
  }

  /** Silver's rows as "key:status", sorted by key. */
  private List<String> sortedRows() {
    List<Map<String, Object>> rows = new ArrayList<>(tables.scan(path("silver")));
    rows.sort(Comparator.comparing(row -> (LocalDateTime) row.get("order_id")));
    List<String> out = new ArrayList<>();
    for (Map<String, Object> row : rows) {
      out.add(row.get("order_id") + ":" + row.get("status"));
    }
    return out;
  }

  @Test
  void c178AStringKeyHasNoRangeDeletesItsStaleKeyGoesAtTheCompletionRebuild() {
    BronzeLog log = log(FieldType.STRING);
    log.whole(2, "a", "old", "b", "old", "c", "old");
    log.fact("bootstrap", 2);
    applier.apply(spec(log));

    // b was deleted in a purged gap.
    Open open = open(log, 20, ChunkedSnapshotFacts.KIND_RESNAPSHOT);
    plan(log, 20, "keyset", 1, "[[0,null,\"b\"],[1,\"b\",null]]");
    chunk(log, 20, 1, 0, "null", "\"b\"", false, 21, "a", "new");
    chunk(log, 20, 1, 1, "\"b\"", "null", true, 22, "c", "new");
    applier.apply(spec(log));
    assertEquals(List.of("a:new", "b:old", "c:new"), silverRows());
    assertEquals(new SilverPosition(lsn(2), lsn(2), lsn(20), 1, 3), position());

    complete(log, open, 2, 2, 22);
    applier.apply(spec(log));
    assertEquals(List.of("a:new", "c:new"), silverRows());
  }

  @Test
  void c175ACrashAfterAWavesSilverCommitBeforeTheControlRowConverges() {
    BronzeLog log = log(FieldType.INT32);
    open(log, 5, ChunkedSnapshotFacts.KIND_BOOTSTRAP);
    plan(log, 5, "int", 1, "[[0,null,2],[1,2,4]]");
    log.change(6, ins(9, "new"));
    applier.apply(spec(log));
    assertEquals(List.of("9:new"), silverRows());
    assertNull(controlRow(path("silver")).getValue(ControlTable.SNAPSHOT_WAVE));

    chunk(log, 5, 1, 0, "null", "2", false, 7, 0, "new", 1, "new");
    applier.hook(
        point -> {
          if (point.equals("committed")) {
            throw new IllegalStateException("crash after the wave's silver commit");
          }
        });
    assertThrows(IllegalStateException.class, () -> applier.apply(spec(log)));
    applier.hook(point -> {});
    long version = tables.version(path("silver"));
    assertEquals(new SilverPosition(lsn(6), null, lsn(5), 0, 2), position());
    Row control = controlRow(path("silver"));
    assertEquals(lsn(5), control.getString(ControlTable.OPEN_SNAPSHOT_LSN));
    assertNull(control.getValue(ControlTable.SNAPSHOT_WAVE));

    ApplyResult result = applier.apply(spec(log));
    assertEquals(0, result.waves());
    assertEquals(version, tables.version(path("silver")));
    assertEquals(List.of("0:new", "1:new", "9:new"), silverRows());
    control = controlRow(path("silver"));
    assertEquals(lsn(5), control.getString(ControlTable.OPEN_SNAPSHOT_LSN));
    assertEquals(0, control.getInt32(ControlTable.SNAPSHOT_WAVE));
  }

  @Test
  void c181ChunkRowsNeedFactsAndAnOpenRowForTheirTarget() {
    BronzeLog log = log(FieldType.INT32);
    log.chunk(5, 6, 0, 0, "new");
    SilverSpec noFacts =
        new SilverSpec(
            log.bronze,
            path("silver"),
            log.control,
            null,
            Set.of("dbo_orders"),
            List.of("order_id"),
            Granularity.HOUR,
            1000);
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> applier.apply(noFacts));
    assertEquals(
        "Bronze table "
            + log.bronze
            + " holds 1 row of a chunked snapshot, which silver "
            + path("silver")
            + " cannot apply without facts_table (pass the bronze stream's facts table)",
        e.getMessage());

    fact(
        log,
        new Open(
                APP,
                path("other-bronze"),
                Lsn.parse(lsn(5)),
                null,
                ChunkedSnapshotFacts.MODE_CHUNKED,
                ChunkedSnapshotFacts.KIND_BOOTSTRAP,
                0,
                List.of("order_id"),
                null,
                null,
                null,
                null)
            .toRow(NOW));
    e = assertThrows(IllegalArgumentException.class, () -> applier.apply(spec(log)));
    assertEquals(
        "Bronze table "
            + log.bronze
            + " holds 1 row of a chunked snapshot but facts table "
            + log.facts
            + " has no chunked snapshot_open row for target "
            + log.bronze
            + "; targets with one: ["
            + path("other-bronze")
            + "] (pass bronze spelled as the bronze job was given it)",
        e.getMessage());
  }

  /**
   * Changes committed before a chunk's read reach bronze (and silver) after the chunk's wave, as
   * the stream's batches may: the wave line names the images that changed nothing, so its parts add
   * up to its keys. Key 1 is held at the chunk's stamp (20), newer than its update (10): already
   * current; 8 was inserted and deleted (its latest image a delete of a key silver never held):
   * already absent; 9 is inserted.
   */
  @Test
  void aWaveLineNamesTheImagesThatChangedNothing() {
    List<String> lines = new ArrayList<>();
    SilverApplier printing = new SilverApplier(tables, clock, warnings::add, lines::add);
    BronzeLog log = log(FieldType.INT32);
    open(log, 5, ChunkedSnapshotFacts.KIND_BOOTSTRAP);
    plan(log, 5, "int", 1, "[[0,null,null]]");
    chunk(log, 5, 1, 0, "null", "null", true, 20, 1, "paid", 2, "new", 3, "new");
    printing.apply(spec(log));
    assertEquals(
        List.of(
            "Silver "
                + path("silver")
                + ": wave 0 of the chunked snapshot at "
                + lsn(5)
                + " applied (chunks [0]): 3 rows, 3 keys (3 inserted, 0 updated, 0 deleted)"),
        lines);
    lines.clear();

    log.change(10, upd(1, "new", "paid"));
    log.change(11, ins(8, "new"));
    log.change(12, del(8));
    log.change(13, ins(9, "new"));
    printing.apply(spec(log));
    assertEquals(
        List.of(
            "Silver "
                + path("silver")
                + ": wave 2 applied bronze "
                + path("bronze")
                + " up to "
                + lsn(13)
                + ": 5 rows, 3 keys (1 inserted, 0 updated, 0 deleted, 1 already current, 1"
                + " already absent)"),
        lines);
    assertEquals(List.of("1:paid", "2:new", "3:new", "9:new"), silverRows());
  }
}
