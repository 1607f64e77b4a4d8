package org.lakecdc.transforms.finalization;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import org.checkerframework.checker.nullness.qual.Nullable;

/**
 * A span of time whose changes a target lost for good: CDC cleanup purged them before the stream
 * read them, and the stream skipped them ({@code --onDataLoss=skip}) or re-snapshotted past them
 * ({@code --onDataLoss=resnapshot}). No period that overlaps it is ever complete in the target,
 * whatever {@code finalized_until} says (docs/tables.md "Control").
 *
 * <p>Stored in the control row's {@code lost_periods} column as a JSON array, ordered and merged:
 * {@code [{"from":"2026-11-01T08:00","to":"2026-11-01T10:00"}]}, UTC date-times without zone, the
 * span {@code [from, to)} widened to whole periods of the granularity it was recorded with; {@code
 * "from": null} when the gap's start is unknown (everything before {@code to} is suspect).
 *
 * @param from the start (UTC, inclusive), or null for "since the beginning"
 * @param to the end (UTC, exclusive)
 */
public record LostPeriod(@Nullable LocalDateTime from, LocalDateTime to) {
  private static final ObjectMapper JSON = new ObjectMapper();

  public LostPeriod {
    Objects.requireNonNull(to, "to");
    if (from != null && !from.isBefore(to)) {
      throw new IllegalArgumentException("Empty lost period [" + from + ", " + to + ")");
    }
  }

  /**
   * The periods of {@code granularity} that hold commits in {@code [lostFrom, lostTo]}: changes
   * committed after the last commit the stream processed (at {@code lostFrom}) and up to the
   * capture instance's {@code min_lsn} (at {@code lostTo}) are gone; commits sharing either time
   * may be among them, so both ends' periods are included.
   *
   * @param lostFrom UTC commit time of the last commit processed before the gap, or null when
   *     unknown
   * @param lostTo UTC commit time of the first LSN still held
   */
  public static LostPeriod of(@Nullable Instant lostFrom, Instant lostTo, Granularity granularity) {
    LocalDateTime to = granularity.nextPeriod(LocalDateTime.ofInstant(lostTo, ZoneOffset.UTC));
    LocalDateTime from =
        lostFrom == null
            ? null
            : granularity.truncate(LocalDateTime.ofInstant(lostFrom, ZoneOffset.UTC));
    return new LostPeriod(from != null && from.isBefore(to) ? from : null, to);
  }

  /** Whether the period {@code [start, end)} overlaps this span ({@code start} null: unbounded). */
  public boolean overlaps(@Nullable LocalDateTime start, LocalDateTime end) {
    boolean beginsBeforeEnd = from == null || from.isBefore(end);
    boolean endsAfterStart = start == null || start.isBefore(to);
    return beginsBeforeEnd && endsAfterStart;
  }

  /**
   * {@code periods} with {@code added}, ordered by start and with overlapping or touching spans
   * merged.
   */
  public static List<LostPeriod> merge(List<LostPeriod> periods, List<LostPeriod> added) {
    List<LostPeriod> all = new ArrayList<>(periods);
    all.addAll(added);
    all.sort(
        Comparator.comparing(
            LostPeriod::from, Comparator.nullsFirst(Comparator.<LocalDateTime>naturalOrder())));
    List<LostPeriod> merged = new ArrayList<>();
    for (LostPeriod next : all) {
      if (!merged.isEmpty()) {
        LostPeriod last = merged.get(merged.size() - 1);
        if (next.from() == null || !next.from().isAfter(last.to())) {
          LocalDateTime to = next.to().isAfter(last.to()) ? next.to() : last.to();
          merged.set(merged.size() - 1, new LostPeriod(last.from(), to));
          continue;
        }
      }
      merged.add(next);
    }
    return merged;
  }

  /** The JSON array form of {@code periods} (the {@code lost_periods} column). */
  public static String toJson(List<LostPeriod> periods) {
    ArrayNode array = JSON.createArrayNode();
    for (LostPeriod p : periods) {
      ObjectNode node = array.addObject();
      if (p.from() == null) {
        node.putNull("from");
      } else {
        node.put("from", p.from().toString());
      }
      node.put("to", p.to().toString());
    }
    return array.toString();
  }

  /**
   * The periods of a {@code lost_periods} value; empty for null.
   *
   * @throws IllegalArgumentException when the text is not that JSON form
   */
  public static List<LostPeriod> fromJson(@Nullable String json) {
    List<LostPeriod> periods = new ArrayList<>();
    if (json == null || json.isBlank()) {
      return periods;
    }
    try {
      for (JsonNode node : JSON.readTree(json)) {
        periods.add(
            new LostPeriod(
                node.hasNonNull("from") ? LocalDateTime.parse(node.get("from").asText()) : null,
                LocalDateTime.parse(node.get("to").asText())));
      }
      return periods;
    } catch (JsonProcessingException | RuntimeException e) {
      throw new IllegalArgumentException("Not a lost_periods value: " + json, e);
    }
  }

  @Override
  public String toString() {
    return (from == null ? "(start)" : from + "Z") + " to " + to + "Z";
  }
}
