package org.lakecdc.pipelines.backfill;

import io.delta.kernel.expressions.Column;
import io.delta.kernel.expressions.Literal;
import io.delta.kernel.expressions.Predicate;
import io.delta.kernel.utils.CloseableIterator;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.time.Clock;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.Map;
import java.util.Optional;
import org.lakecdc.transforms.delta.DeltaTables;
import org.lakecdc.transforms.facts.FactsTable;

/**
 * {@code --minHeadroomHours} of {@code Backfill} (docs/behaviour.md §6.9, docs/scenarios.md C100):
 * a wave is read only while the stream keeps up with the CDC retention. The stream's newest batch
 * facts row (event NULL, a batch id, app id = the snapshot's generation, the target's) by {@code
 * written_at} gives {@code retention_headroom_hours}; that row's age in hours (by {@code clock},
 * UTC) is taken off it.
 */
public final class BackfillThrottle {
  private BackfillThrottle() {}

  /**
   * Why the next wave must wait, or empty when it may run.
   *
   * @param minHeadroomHours the least headroom, at least 0
   * @return {@link BackfillState#WAITING_METRICS} with {@code no facts row with
   *     retention_headroom_hours} (no batch row, or its headroom is NULL), or {@link
   *     BackfillState#WAITING_HEADROOM} with {@code below min_headroom_hours=<x>}
   */
  public static Optional<Pause> check(
      DeltaTables tables,
      String factsPath,
      String appId,
      String target,
      double minHeadroomHours,
      Clock clock) {
    Map<String, Object> newest = null;
    Instant newestAt = null;
    if (tables.exists(factsPath)) {
      Predicate ofApp = new Predicate("=", new Column(FactsTable.APP_ID), Literal.ofString(appId));
      try (CloseableIterator<Map<String, Object>> rows =
          tables.scanAtVersion(factsPath, tables.version(factsPath), ofApp)) {
        while (rows.hasNext()) {
          Map<String, Object> row = rows.next();
          if (row.get(FactsTable.EVENT) != null
              || row.get(FactsTable.BATCH_ID) == null
              || !appId.equals(row.get(FactsTable.APP_ID))
              || !target.equals(row.get(FactsTable.TARGET))) {
            continue;
          }
          Instant at = utc(row.get(FactsTable.WRITTEN_AT));
          if (at != null && (newestAt == null || at.isAfter(newestAt))) {
            newest = row;
            newestAt = at;
          }
        }
      } catch (IOException e) {
        throw new UncheckedIOException("Cannot read Delta table " + factsPath, e);
      }
    }
    if (newest == null || !(newest.get(FactsTable.RETENTION_HEADROOM_HOURS) instanceof Number h)) {
      return Optional.of(
          new Pause(BackfillState.WAITING_METRICS, "no facts row with retention_headroom_hours"));
    }
    double ageHours = (clock.millis() - newestAt.toEpochMilli()) / 3_600_000.0;
    if (h.doubleValue() - ageHours < minHeadroomHours) {
      return Optional.of(
          new Pause(
              BackfillState.WAITING_HEADROOM,
              "below min_headroom_hours="
                  + BigDecimal.valueOf(minHeadroomHours).stripTrailingZeros().toPlainString()));
    }
    return Optional.empty();
  }

  /**
   * A paused backfill.
   *
   * @param state why: waiting for headroom or for metrics
   * @param reason the reason's text
   */
  public record Pause(BackfillState state, String reason) {}

  private static Instant utc(Object value) {
    if (value instanceof LocalDateTime t) {
      return t.toInstant(ZoneOffset.UTC);
    }
    return value instanceof Instant i ? i : null;
  }
}
