package org.lakecdc.pipelines.status;

import java.math.BigDecimal;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.pipelines.status.StatusModel.Report;
import org.lakecdc.pipelines.status.StatusModel.SilverStatus;
import org.lakecdc.pipelines.status.StatusModel.TableStatus;

/**
 * {@code Status --format=prometheus}: a {@link StatusModel.Report} in Prometheus' text exposition
 * format (version 0.0.4), for a node exporter's textfile collector or any scraper of files. Every
 * metric is a gauge; each table's carry the labels {@code app_id} (the stream family's), {@code
 * target} (the bronze table's path, or {@code ""}) and {@code capture_instance} ({@code ""} when
 * unknown), each silver and history table's the label {@code table} (a silver table's verdict is
 * {@code lakecdc_silver_...}, a history table's {@code lakecdc_history_...}). Times are Unix
 * seconds (UTC), durations seconds. A value that is unknown (no verdict yet, no lag) is left out
 * rather than written as 0, so an alert on it never fires on a guess. Label values are escaped as
 * the format asks ({@code \\}, {@code \"}, {@code \n}). docs/status.md lists the metrics and the
 * alerts to set on them.
 */
public final class StatusPrometheus {
  private StatusPrometheus() {}

  /** A metric family: its name, help text and samples (labels, value) in order. */
  private record Family(String name, String help, List<Map.Entry<String, String>> samples) {}

  /**
   * The report as exposition text: one {@code # HELP}, one {@code # TYPE ... gauge} and the samples
   * of each metric with at least one sample, every line ending in {@code \n}.
   */
  public static String render(Report report) {
    Map<String, Family> families = new LinkedHashMap<>();
    family(families, "lakecdc_status_read_timestamp_seconds", "When the status was read (Unix s).");
    family(
        families,
        "lakecdc_table_lag_seconds",
        "Source's newest commit time minus the table's position's commit time, in seconds (the"
            + " last batch's source_max_commit_ts - end_commit_ts without a source).");
    family(
        families,
        "lakecdc_table_finalized_until_timestamp_seconds",
        "The verdict finalized_until of the table's control row (Unix s, UTC).");
    family(
        families,
        "lakecdc_table_verdict_age_seconds",
        "Seconds from the verdict finalized_until to when the status was read.");
    family(
        families,
        "lakecdc_table_position_commit_timestamp_seconds",
        "Commit time of the table's position (Unix s, UTC).");
    family(families, "lakecdc_table_last_batch_id", "The current generation's last batch id.");
    family(
        families,
        "lakecdc_table_last_batch_timestamp_seconds",
        "When the last batch's facts row was written (Unix s).");
    family(
        families,
        "lakecdc_table_rows_today",
        "Change rows of the batches written today (UTC day).");
    family(
        families,
        "lakecdc_table_failed",
        "1 while the table is stopped by a failure (a table_failed facts row), else 0.");
    family(families, "lakecdc_table_generation", "The table's stream generation (re-snapshots).");
    family(families, "lakecdc_table_open_snapshot", "1 while a snapshot is open, else 0.");
    family(
        families,
        "lakecdc_table_snapshot_chunks_done",
        "Chunks recorded of the open chunked snapshot.");
    family(
        families,
        "lakecdc_table_snapshot_chunks_planned",
        "Chunks planned of the open chunked snapshot (absent before planning).");
    family(
        families,
        "lakecdc_table_lost_periods",
        "Periods of the verdict whose changes CDC cleanup purged (control lost_periods).");
    family(
        families,
        "lakecdc_silver_finalized_until_timestamp_seconds",
        "A silver table's verdict finalized_until (Unix s, UTC).");
    family(
        families,
        "lakecdc_history_finalized_until_timestamp_seconds",
        "A history table's verdict finalized_until (Unix s, UTC).");

    sample(families, "lakecdc_status_read_timestamp_seconds", "", seconds(report.readAt()));
    for (TableStatus t : report.tables()) {
      String labels =
          labels(
              "app_id", t.appId(),
              "target", Objects.requireNonNullElse(t.target(), ""),
              "capture_instance", Objects.requireNonNullElse(t.captureInstance(), ""));
      sample(families, "lakecdc_table_lag_seconds", labels, number(t.lagSeconds()));
      LocalDateTime finalized = t.verdict() == null ? null : t.verdict().finalizedUntil();
      if (finalized != null) {
        Instant until = finalized.toInstant(ZoneOffset.UTC);
        sample(families, "lakecdc_table_finalized_until_timestamp_seconds", labels, seconds(until));
        sample(
            families,
            "lakecdc_table_verdict_age_seconds",
            labels,
            seconds(Duration.between(until, report.readAt())));
      }
      sample(
          families,
          "lakecdc_table_position_commit_timestamp_seconds",
          labels,
          t.positionCommitTime() == null ? null : seconds(t.positionCommitTime()));
      if (t.lastBatch() != null) {
        sample(
            families,
            "lakecdc_table_last_batch_id",
            labels,
            t.lastBatch().batchId() == null ? null : String.valueOf(t.lastBatch().batchId()));
        sample(
            families,
            "lakecdc_table_last_batch_timestamp_seconds",
            labels,
            t.lastBatch().writtenAt() == null ? null : seconds(t.lastBatch().writtenAt()));
      }
      sample(families, "lakecdc_table_rows_today", labels, String.valueOf(t.rowsToday()));
      sample(families, "lakecdc_table_failed", labels, t.failure() == null ? "0" : "1");
      sample(families, "lakecdc_table_generation", labels, String.valueOf(t.generation()));
      sample(families, "lakecdc_table_open_snapshot", labels, t.openSnapshot() == null ? "0" : "1");
      if (t.openSnapshot() != null && t.openSnapshot().chunks() != null) {
        StatusModel.ChunkProgress chunks = t.openSnapshot().chunks();
        sample(
            families, "lakecdc_table_snapshot_chunks_done", labels, String.valueOf(chunks.done()));
        sample(
            families,
            "lakecdc_table_snapshot_chunks_planned",
            labels,
            chunks.planned() < 0 ? null : String.valueOf(chunks.planned()));
      }
      sample(
          families, "lakecdc_table_lost_periods", labels, String.valueOf(t.lostPeriods().size()));
    }
    for (SilverStatus s : report.silvers()) {
      if (s.finalizedUntil() != null) {
        sample(
            families,
            "lakecdc_" + s.kind() + "_finalized_until_timestamp_seconds",
            labels("table", s.table()),
            seconds(s.finalizedUntil().toInstant(ZoneOffset.UTC)));
      }
    }
    StringBuilder out = new StringBuilder();
    for (Family f : families.values()) {
      if (f.samples().isEmpty()) {
        continue;
      }
      out.append("# HELP ").append(f.name()).append(' ').append(f.help()).append('\n');
      out.append("# TYPE ").append(f.name()).append(" gauge\n");
      for (Map.Entry<String, String> s : f.samples()) {
        out.append(f.name()).append(s.getKey()).append(' ').append(s.getValue()).append('\n');
      }
    }
    return out.toString();
  }

  private static void family(Map<String, Family> families, String name, String help) {
    families.put(name, new Family(name, help, new ArrayList<>()));
  }

  private static void sample(
      Map<String, Family> families, String name, String labels, @Nullable String value) {
    if (value != null) {
      families.get(name).samples().add(Map.entry(labels, value));
    }
  }

  /** {@code {k1="v1",k2="v2"}} from alternating names and values, values escaped. */
  static String labels(String... namesAndValues) {
    StringBuilder out = new StringBuilder("{");
    for (int i = 0; i < namesAndValues.length; i += 2) {
      if (i > 0) {
        out.append(',');
      }
      out.append(namesAndValues[i]).append("=\"").append(escape(namesAndValues[i + 1])).append('"');
    }
    return out.append('}').toString();
  }

  /** A label value as the text format writes it: backslash, double quote and newline escaped. */
  static String escape(String value) {
    return value.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n");
  }

  private static String seconds(Instant instant) {
    return new BigDecimal(instant.toEpochMilli())
        .movePointLeft(3)
        .stripTrailingZeros()
        .toPlainString();
  }

  private static String seconds(Duration duration) {
    return new BigDecimal(duration.toMillis())
        .movePointLeft(3)
        .stripTrailingZeros()
        .toPlainString();
  }

  private static @Nullable String number(@Nullable BigDecimal value) {
    return value == null ? null : value.stripTrailingZeros().toPlainString();
  }
}
