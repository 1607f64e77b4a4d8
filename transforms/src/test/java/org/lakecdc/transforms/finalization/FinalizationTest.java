package org.lakecdc.transforms.finalization;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.beam.sdk.values.Row;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.transforms.delta.DeltaTables;

/**
 * The completeness verdict (docs/tables.md "Control"; docs/scenarios.md C141, C142, C145, C174).
 */
class FinalizationTest {
  @TempDir Path dir;

  private static final Lsn L1 = Lsn.parse("0x0000002A000001000001");
  private static final Lsn L2 = Lsn.parse("0x0000002A000001000011");
  private final Clock clock = Clock.fixed(Instant.parse("2026-09-28T16:00:00Z"), ZoneOffset.UTC);

  @Test
  void c141TruncatesToTheGranularity() {
    LocalDateTime t = LocalDateTime.of(2026, 9, 28, 13, 52, 17, 123_000_000);
    assertEquals(LocalDateTime.of(2026, 9, 28, 13, 52), Granularity.MINUTE.truncate(t));
    assertEquals(LocalDateTime.of(2026, 9, 28, 13, 0), Granularity.HOUR.truncate(t));
    assertEquals(LocalDateTime.of(2026, 9, 28, 0, 0), Granularity.DAY.truncate(t));
  }

  @Test
  void c142TheCandidateExcludesThePeriodThatContainsTheEnd() {
    assertEquals(
        LocalDateTime.of(2026, 9, 28, 13, 0),
        Finalization.candidate(Instant.parse("2026-09-28T13:59:59.999Z"), Granularity.HOUR));
    assertEquals(
        LocalDateTime.of(2026, 9, 28, 14, 0),
        Finalization.candidate(Instant.parse("2026-09-28T14:00:00Z"), Granularity.HOUR));
  }

  @Test
  void c174AWrongGranularityIsRefusedNamingTheValues() {
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> Granularity.parse("week"));
    assertEquals("granularity must be 'minute', 'hour' or 'day', not 'week'", e.getMessage());
    assertEquals(Granularity.HOUR, Granularity.parse(" Hour "));
  }

  @Test
  void c145AdvanceNeverMovesTheVerdictBackwardsAndIsFinalFollowsIt() {
    DeltaTables tables = DeltaTables.create();
    String control = dir.resolve("control").toString();
    Finalization f = new Finalization(tables, control, clock);
    assertEquals(Optional.empty(), f.verdict("t"));
    assertFalse(f.isFinal("t", LocalDateTime.of(2026, 9, 28, 13, 0)));

    assertEquals(
        LocalDateTime.of(2026, 9, 28, 15, 0),
        f.advance("t", L2, Instant.parse("2026-09-28T15:55:00Z"), Granularity.HOUR));
    assertEquals(
        LocalDateTime.of(2026, 9, 28, 15, 0),
        f.advance("t", L1, Instant.parse("2026-09-28T13:51:00Z"), Granularity.HOUR),
        "an older end never moves the verdict back");
    assertEquals(
        LocalDateTime.of(2026, 9, 28, 14, 0),
        f.advance("u", L1, Instant.parse("2026-09-28T14:10:00Z"), Granularity.HOUR));

    assertTrue(f.isFinal("t", LocalDateTime.of(2026, 9, 28, 15, 0)));
    assertFalse(f.isFinal("t", LocalDateTime.of(2026, 9, 28, 15, 0, 1)));
    assertFalse(f.isFinal("v", LocalDateTime.of(2000, 1, 1, 0, 0)));
    assertTrue(
        f.isFinal("t", java.time.OffsetDateTime.parse("2026-09-28T12:00:00-03:00")),
        "C146: 12:00 at UTC-3 is 15:00 UTC, at the verdict");
    assertFalse(f.isFinal("t", java.time.OffsetDateTime.parse("2026-09-28T16:30:00+01:00")));

    List<Row> rows = tables.scan(control, ControlTable.SCHEMA);
    assertEquals(2, rows.size(), "one row per target");
    Row t = rows.stream().filter(r -> r.getString("table_name").equals("t")).findFirst().get();
    assertEquals(L2.toString(), t.getString(ControlTable.END_LSN));
    assertEquals(
        LocalDateTime.of(2026, 9, 28, 15, 55),
        t.getLogicalTypeValue(ControlTable.END_COMMIT_TS, LocalDateTime.class));
    assertEquals(
        LocalDateTime.of(2026, 9, 28, 16, 0),
        t.getLogicalTypeValue(ControlTable.UPDATED_AT, LocalDateTime.class));
  }

  @Test
  void anAdvanceThatCannotMoveTheVerdictReadsNothingAndOneThatMovesItRewritesOnce() {
    DeltaTables tables = DeltaTables.create();
    String control = dir.resolve("control").toString();
    Finalization f = new Finalization(tables, control, clock);
    assertEquals(
        LocalDateTime.of(2026, 9, 28, 15, 0),
        f.advance("t", L1, Instant.parse("2026-09-28T15:05:00Z"), Granularity.HOUR));
    long version = tables.version(control);

    long loads = tables.snapshotLoads();
    for (int minute = 6; minute < 60; minute++) {
      assertEquals(
          LocalDateTime.of(2026, 9, 28, 15, 0),
          f.advance(
              "t",
              L2,
              Instant.parse("2026-09-28T15:00:00Z").plusSeconds(60L * minute),
              Granularity.HOUR));
    }
    assertEquals(0, tables.snapshotLoads() - loads, "the period's batches read no table");
    assertEquals(version, tables.version(control), "nor write one");

    loads = tables.snapshotLoads();
    assertEquals(
        LocalDateTime.of(2026, 9, 28, 16, 0),
        f.advance("t", L2, Instant.parse("2026-09-28T16:00:00Z"), Granularity.HOUR));
    assertEquals(
        0,
        tables.snapshotLoads() - loads,
        "read and rewritten on the snapshot of its last rewrite");
    assertEquals(version + 1, tables.version(control));

    DeltaTables otherTables = DeltaTables.create();
    Finalization other = new Finalization(otherTables, control, clock);
    assertEquals(
        LocalDateTime.of(2026, 9, 28, 16, 0),
        other.advance("t", L1, Instant.parse("2026-09-28T15:30:00Z"), Granularity.HOUR),
        "a new instance reads the stored verdict and keeps it");
    assertEquals(version + 1, tables.version(control));
    assertEquals(
        LocalDateTime.of(2026, 9, 28, 14, 0),
        other.advance("u", L1, Instant.parse("2026-09-28T14:10:00Z"), Granularity.HOUR));

    assertEquals(
        LocalDateTime.of(2026, 9, 28, 17, 0),
        f.advance("t", L2, Instant.parse("2026-09-28T17:00:00Z"), Granularity.HOUR));
    assertEquals(
        Optional.of(LocalDateTime.of(2026, 9, 28, 14, 0)),
        new Finalization(DeltaTables.create(), control, clock).verdict("u"),
        "the other writer's row is kept, not clobbered by a rewrite of an older snapshot");
    assertEquals(Optional.of(LocalDateTime.of(2026, 9, 28, 17, 0)), other.verdict("t"));
    assertEquals(2, tables.scan(control, ControlTable.SCHEMA).size());
  }

  @Test
  void recordSilverPositionInsertsUpdatesAndKeepsTheVerdict() {
    DeltaTables tables = DeltaTables.create();
    String control = dir.resolve("control").toString();
    Finalization finalization = new Finalization(tables, control, clock);

    assertTrue(finalization.recordSilverPosition("silver", L1.toString(), null, null, null));
    assertFalse(finalization.recordSilverPosition("silver", L1.toString(), null, null, null));
    finalization.advance("silver", L1, Instant.parse("2026-09-28T13:10:00Z"), Granularity.HOUR);
    assertTrue(
        finalization.recordSilverPosition("silver", L2.toString(), L1.toString(), "0x01", 3));

    Row row = finalization.row("silver").orElseThrow();
    assertEquals(L2.toString(), row.getString(ControlTable.APPLIED_LSN));
    assertEquals(L1.toString(), row.getString(ControlTable.SNAPSHOT_LSN));
    assertEquals("0x01", row.getString(ControlTable.OPEN_SNAPSHOT_LSN));
    assertEquals(3, row.getInt32(ControlTable.SNAPSHOT_WAVE));
    assertEquals(
        LocalDateTime.of(2026, 9, 28, 13, 0),
        row.getLogicalTypeValue(ControlTable.FINALIZED_UNTIL, LocalDateTime.class));
    assertEquals(L1.toString(), row.getString(ControlTable.END_LSN));
    assertEquals(Optional.empty(), finalization.row("other"));
  }

  private static Finalization.Advance advance(String table, Lsn lsn, String end) {
    return new Finalization.Advance(table, lsn, Instant.parse(end), Granularity.HOUR);
  }

  @Test
  void theVerdictsOfARoundMoveInOneControlRewriteAndOnlyThoseThatMove() {
    DeltaTables tables = DeltaTables.create();
    String control = dir.resolve("control").toString();
    Finalization f = new Finalization(tables, control, clock);
    assertEquals(
        LocalDateTime.of(2026, 9, 28, 15, 0),
        f.advance("c", L2, Instant.parse("2026-09-28T15:10:00Z"), Granularity.HOUR));
    long before = tables.version(control);

    Map<String, LocalDateTime> verdicts =
        f.advanceAll(
            List.of(
                advance("a", L1, "2026-09-28T13:51:00Z"),
                advance("b", L2, "2026-09-28T14:20:00Z"),
                advance("c", L1, "2026-09-28T13:05:00Z")));

    assertEquals(
        Map.of(
            "a", LocalDateTime.of(2026, 9, 28, 13, 0),
            "b", LocalDateTime.of(2026, 9, 28, 14, 0),
            "c", LocalDateTime.of(2026, 9, 28, 15, 0)),
        verdicts,
        "c's older end leaves its verdict");
    assertEquals(before + 1, tables.version(control), "one rewrite for a and b");
    assertEquals(LocalDateTime.of(2026, 9, 28, 13, 0), f.verdict("a").orElseThrow());
    assertEquals(LocalDateTime.of(2026, 9, 28, 14, 0), f.verdict("b").orElseThrow());
    assertEquals(LocalDateTime.of(2026, 9, 28, 15, 0), f.verdict("c").orElseThrow());

    // Nothing moves: no read, no commit.
    assertEquals(
        Map.of(
            "a", LocalDateTime.of(2026, 9, 28, 13, 0), "b", LocalDateTime.of(2026, 9, 28, 14, 0)),
        f.advanceAll(
            List.of(
                advance("a", L1, "2026-09-28T13:59:00Z"),
                advance("b", L2, "2026-09-28T14:30:00Z"))));
    assertEquals(before + 1, tables.version(control));

    // Another instance (another JVM's committer) with a stale view: the stored verdicts win.
    Finalization other = new Finalization(tables, control, clock);
    assertEquals(
        Map.of("a", LocalDateTime.of(2026, 9, 28, 13, 0)),
        other.advanceAll(List.of(advance("a", L1, "2026-09-28T13:10:00Z"))));
    assertEquals(
        before + 1, tables.version(control), "a verdict that does not move is not written");
  }

  /** A run's summary reads every table's verdict in one scan: tables without one are absent. */
  @Test
  void theVerdictsOfEveryTableAreReadInOneScan() {
    DeltaTables tables = DeltaTables.create();
    String control = dir.resolve("control").toString();
    Finalization f = new Finalization(tables, control, clock);
    assertEquals(Map.of(), f.verdicts(), "no control table yet");
    f.advanceAll(
        List.of(
            advance("a", L1, "2026-09-28T13:51:00Z"), advance("b", L2, "2026-09-28T14:20:00Z")));
    assertTrue(f.recordSilverPosition("silver", L1.toString(), null, null, null));

    Map<String, LocalDateTime> verdicts = new Finalization(tables, control, clock).verdicts();

    assertEquals(
        Map.of(
            "a", LocalDateTime.of(2026, 9, 28, 13, 0), "b", LocalDateTime.of(2026, 9, 28, 14, 0)),
        verdicts,
        "silver has a row but no verdict");
    assertEquals(Optional.empty(), f.verdict("silver"));
    assertEquals(Optional.of(LocalDateTime.of(2026, 9, 28, 14, 0)), f.verdict("b"));
  }

  @Test
  void aTableGivenTwiceIsRefused() {
    Finalization f =
        new Finalization(DeltaTables.create(), dir.resolve("control").toString(), clock);
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () ->
                f.advanceAll(
                    List.of(
                        advance("a", L1, "2026-09-28T13:51:00Z"),
                        advance("a", L2, "2026-09-28T14:20:00Z"))));
    assertEquals("The verdict of a is advanced twice in one control rewrite", e.getMessage());
  }
}
