package org.lakecdc.pipelines.backfill;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.transforms.delta.DeltaTables;
import org.lakecdc.transforms.facts.FactsTable;

/**
 * {@code --minHeadroomHours} of the Backfill job (docs/scenarios.md C100): its states and reasons.
 */
class BackfillThrottleTest {
  private static final Instant WRITTEN = Instant.parse("2026-09-28T14:00:00Z");

  @TempDir Path dir;

  private final DeltaTables tables = DeltaTables.create();

  private String facts() {
    String facts = dir.resolve("facts").toString();
    tables.createIfAbsent(facts, FactsTable.definition());
    return facts;
  }

  private void batch(String facts, String app, String target, long batch, Double headroom) {
    tables.append(
        facts,
        FactsTable.SCHEMA,
        List.of(
            FactsTable.row()
                .set(FactsTable.APP_ID, app)
                .set(FactsTable.BATCH_ID, batch)
                .set(FactsTable.ROWS, 1L)
                .set(FactsTable.RETENTION_HEADROOM_HOURS, headroom)
                .set(FactsTable.TARGET, target)
                .set(FactsTable.WRITTEN_AT, WRITTEN.plusSeconds(batch))
                .build()),
        null,
        0,
        Map.of());
  }

  private Optional<BackfillThrottle.Pause> check(String facts, double min, Duration later) {
    return BackfillThrottle.check(
        tables,
        facts,
        "chunk-v1",
        "/t/bronze",
        min,
        Clock.fixed(WRITTEN.plusSeconds(1).plus(later), ZoneOffset.UTC));
  }

  @Test
  void c100WithoutABatchRowGivingAHeadroomTheBackfillWaitsForMetrics() {
    String facts = facts();
    BackfillThrottle.Pause metrics =
        new BackfillThrottle.Pause(
            BackfillState.WAITING_METRICS, "no facts row with retention_headroom_hours");
    assertEquals(Optional.of(metrics), check(facts, 0, Duration.ZERO), "no row at all");
    batch(facts, "other-app", "/t/bronze", 0, 5.0);
    batch(facts, "chunk-v1", "/t/other", 0, 5.0);
    assertEquals(Optional.of(metrics), check(facts, 0, Duration.ZERO), "rows of others only");
    batch(facts, "chunk-v1", "/t/bronze", 0, null);
    assertEquals(Optional.of(metrics), check(facts, 0, Duration.ZERO), "a NULL headroom");
  }

  @Test
  void c100TheNewestBatchRowsHeadroomLessItsAgeMustReachTheMinimum() {
    String facts = facts();
    batch(facts, "chunk-v1", "/t/bronze", 0, 9.0);
    batch(facts, "chunk-v1", "/t/bronze", 1, 0.05);
    assertEquals(
        Optional.of(
            new BackfillThrottle.Pause(
                BackfillState.WAITING_HEADROOM, "below min_headroom_hours=1")),
        check(facts, 1, Duration.ZERO),
        "the newest row (0.05 h) counts, not the older 9 h");
    assertEquals(Optional.empty(), check(facts, 0.01, Duration.ZERO));
    assertEquals(
        Optional.of(
            new BackfillThrottle.Pause(
                BackfillState.WAITING_HEADROOM, "below min_headroom_hours=0.01")),
        check(facts, 0.01, Duration.ofHours(1)),
        "the headroom shrinks with the row's age");
    assertEquals(Optional.empty(), check(facts, 0.05, Duration.ZERO), "exactly the minimum");
  }
}
