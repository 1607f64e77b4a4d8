package org.lakecdc.transforms.finalization;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.transforms.delta.DeltaTables;

/**
 * Lost periods of the verdict (docs/tables.md "Control"): changes CDC cleanup purged before they
 * were read, skipped or re-snapshotted past; no period overlapping one is ever complete, whatever
 * {@code finalized_until} says.
 */
class LostPeriodTest {
  @TempDir Path dir;

  private static LocalDateTime t(int hour, int minute) {
    return LocalDateTime.of(2026, 9, 28, hour, minute);
  }

  @Test
  void aGapCoversEveryPeriodHoldingItsCommitTimesAtBothEnds() {
    LostPeriod hours =
        LostPeriod.of(
            Instant.parse("2026-09-28T13:50:00Z"),
            Instant.parse("2026-09-28T15:52:00Z"),
            Granularity.HOUR);
    assertEquals(new LostPeriod(t(13, 0), t(16, 0)), hours);
    assertEquals(
        new LostPeriod(t(13, 50), t(15, 53)),
        LostPeriod.of(
            Instant.parse("2026-09-28T13:50:00Z"),
            Instant.parse("2026-09-28T15:52:30Z"),
            Granularity.MINUTE));
    assertEquals(
        new LostPeriod(null, t(14, 0)),
        LostPeriod.of(null, Instant.parse("2026-09-28T13:10:00Z"), Granularity.HOUR),
        "an unknown start: everything before the end is suspect");
    assertEquals("2026-09-28T13:00Z to 2026-09-28T16:00Z", hours.toString());
  }

  @Test
  void periodsMergeInOrderAndReadBackFromTheirJson() {
    List<LostPeriod> merged =
        LostPeriod.merge(
            List.of(new LostPeriod(t(10, 0), t(11, 0)), new LostPeriod(t(14, 0), t(15, 0))),
            List.of(new LostPeriod(t(11, 0), t(12, 0)), new LostPeriod(t(14, 30), t(16, 0))));
    assertEquals(
        List.of(new LostPeriod(t(10, 0), t(12, 0)), new LostPeriod(t(14, 0), t(16, 0))), merged);
    String json = LostPeriod.toJson(merged);
    assertEquals(
        "[{\"from\":\"2026-09-28T10:00\",\"to\":\"2026-09-28T12:00\"},"
            + "{\"from\":\"2026-09-28T14:00\",\"to\":\"2026-09-28T16:00\"}]",
        json);
    assertEquals(merged, LostPeriod.fromJson(json));
    assertEquals(List.of(), LostPeriod.fromJson(null));
    assertEquals(
        List.of(new LostPeriod(null, t(12, 0))),
        LostPeriod.merge(
            List.of(new LostPeriod(t(10, 0), t(11, 0))), List.of(new LostPeriod(null, t(12, 0)))));
  }

  @Test
  void noVerdictEverCoversALostPeriodWhileLaterPeriodsBecomeFinal() {
    DeltaTables tables = DeltaTables.create();
    String control = dir.resolve("control").toString();
    Finalization f =
        new Finalization(
            tables, control, Clock.fixed(Instant.parse("2026-09-28T18:00:00Z"), ZoneOffset.UTC));
    String table = "/lake/dbo_orders";
    f.advance(
        table,
        Lsn.parse("0x0000002A000001000001"),
        Instant.parse("2026-09-28T13:20:00Z"),
        Granularity.HOUR);
    // The stream skipped what was committed after 13:50 up to 15:52.
    List<LostPeriod> lost =
        f.recordLost(
            table,
            List.of(
                LostPeriod.of(
                    Instant.parse("2026-09-28T13:50:00Z"),
                    Instant.parse("2026-09-28T15:52:00Z"),
                    Granularity.HOUR)));
    assertEquals(List.of(new LostPeriod(t(13, 0), t(16, 0))), lost);
    assertEquals(lost, f.recordLost(table, lost), "recording it again changes nothing");
    f.advance(
        table,
        Lsn.parse("0x0000002A000001000091"),
        Instant.parse("2026-09-28T17:05:00Z"),
        Granularity.HOUR);
    assertEquals(t(17, 0), f.verdict(table).orElseThrow());
    assertTrue(f.isFinal(table, t(13, 0)), "13:00 ends before the gap");
    assertFalse(f.isFinal(table, t(14, 0)), "the hour 13:00-14:00 holds lost changes");
    assertFalse(f.isFinal(table, t(16, 0)), "the hour 15:00-16:00 holds lost changes");
    assertTrue(f.isFinal(table, t(17, 0)), "16:00-17:00 is after the gap and before the verdict");
    assertFalse(f.isFinal(table, t(18, 0)), "after the verdict");
    assertFalse(f.isFinal(table, t(12, 0), t(17, 0)), "a day-like span over the gap");
    assertTrue(f.isFinal(table, t(16, 0), t(17, 0)));
    assertEquals(lost, f.lostPeriods(table));
    assertEquals(List.of(), f.lostPeriods("/lake/other"));
  }
}
