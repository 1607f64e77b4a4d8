package org.lakecdc.transforms.finalization;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.transforms.delta.DeltaTables;

/** A committer round's verdicts moved together ({@link Finalization#advanceAll}). */
class AdvanceAllTest {
  @TempDir Path dir;

  private static final Lsn L1 = Lsn.parse("0x0000002A000001000001");
  private static final Lsn L2 = Lsn.parse("0x0000002A000001000011");
  private final Clock clock = Clock.fixed(Instant.parse("2026-09-28T16:00:00Z"), ZoneOffset.UTC);

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
