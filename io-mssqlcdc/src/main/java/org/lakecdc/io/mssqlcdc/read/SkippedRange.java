package org.lakecdc.io.mssqlcdc.read;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.Serializable;
import java.time.Instant;
import java.util.Objects;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;

/**
 * Changes a read with {@link DataLossPolicy#SKIP} skipped because CDC cleanup had purged them: the
 * capture instance's change rows with {@code from <= __$start_lsn < to} are gone, where {@code to}
 * is the instance's {@code min_lsn} when the gap was found (the first LSN it still holds). Recorded
 * by the sink as a {@code data_skipped} facts event (docs/behaviour.md §3.8, §4.5; docs/tables.md
 * "Facts").
 *
 * @param captureInstance the capture instance whose changes are gone
 * @param from the first LSN the read needed that is no longer held
 * @param to the instance's {@code min_lsn} when the gap was found
 * @param lostFrom UTC commit time of the last commit before {@code from} (the last commit the
 *     stream had processed), or null when there is none: changes committed after it are lost
 * @param lostTo UTC commit time of the last commit at or before {@code to} (the retention
 *     watermark), or null when unknown: changes committed up to it may be lost
 * @param certain true when the gap was found before the range was read (the changes are gone);
 *     false when cleanup moved {@code min_lsn} while the range was read (changes below it may be
 *     missing from what was read)
 * @param reason why a possible gap is only possible, or null for a certain one
 */
public record SkippedRange(
    String captureInstance,
    Lsn from,
    Lsn to,
    @Nullable Instant lostFrom,
    @Nullable Instant lostTo,
    boolean certain,
    @Nullable String reason)
    implements Serializable {
  public SkippedRange {
    Objects.requireNonNull(captureInstance, "captureInstance");
    Objects.requireNonNull(from, "from");
    Objects.requireNonNull(to, "to");
    if (!from.isBefore(to)) {
      throw new IllegalArgumentException("Empty skipped range [" + from + ", " + to + ")");
    }
  }

  /**
   * The JSON form: {@code {"capture_instance", "from", "to", "lost_from_ts", "lost_to_ts",
   * "certain"[, "reason"]}}, LSNs as canonical text, times as ISO-8601 UTC instants (absent when
   * unknown). Stored in coders and in bronze's batch record; {@link #fromJson} reads it.
   */
  public ObjectNode toJson() {
    ObjectNode node = JsonNodeFactory.instance.objectNode();
    node.put("capture_instance", captureInstance);
    node.put("from", from.toString());
    node.put("to", to.toString());
    if (lostFrom != null) {
      node.put("lost_from_ts", lostFrom.toString());
    }
    if (lostTo != null) {
      node.put("lost_to_ts", lostTo.toString());
    }
    node.put("certain", certain);
    if (reason != null) {
      node.put("reason", reason);
    }
    return node;
  }

  /**
   * {@link #toJson}'s form read back.
   *
   * @throws IllegalArgumentException when a field is missing or malformed
   */
  public static SkippedRange fromJson(JsonNode node) {
    try {
      return new SkippedRange(
          node.get("capture_instance").asText(),
          Lsn.parse(node.get("from").asText()),
          Lsn.parse(node.get("to").asText()),
          node.hasNonNull("lost_from_ts") ? Instant.parse(node.get("lost_from_ts").asText()) : null,
          node.hasNonNull("lost_to_ts") ? Instant.parse(node.get("lost_to_ts").asText()) : null,
          node.get("certain").asBoolean(),
          node.hasNonNull("reason") ? node.get("reason").asText() : null);
    } catch (RuntimeException e) {
      throw new IllegalArgumentException("Not a skipped range: " + node, e);
    }
  }

  /**
   * The {@code detail} of this gap's {@code data_skipped} facts event: {@code {"capture_instance",
   * "from", "to", "certain"[, "reason"]}} (docs/behaviour.md §3.8, §4.5).
   */
  public String detail() {
    ObjectNode node = JsonNodeFactory.instance.objectNode();
    node.put("capture_instance", captureInstance);
    node.put("from", from.toString());
    node.put("to", to.toString());
    node.put("certain", certain);
    if (reason != null) {
      node.put("reason", reason);
    }
    return node.toString();
  }
}
