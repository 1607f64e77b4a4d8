package org.lakecdc.pipelines.status;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.lakecdc.pipelines.JobFixture.ORDERS;
import static org.lakecdc.pipelines.JobFixture.at;
import static org.lakecdc.pipelines.JobFixture.order;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import org.apache.beam.sdk.values.Row;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.pipelines.JobFixture;
import org.lakecdc.pipelines.Status;
import org.lakecdc.transforms.facts.FactsTable;

/**
 * {@code Status --format=prometheus} on the tables of a real job run (the {@link JobFixture}
 * history): every gauge of the table, its labels, the values in Unix seconds, and the escaping of
 * label values.
 */
@Timeout(300)
class StatusPrometheusTest {
  @TempDir Path dir;

  private static String seconds(Instant instant) {
    return new BigDecimal(instant.toEpochMilli())
        .movePointLeft(3)
        .stripTrailingZeros()
        .toPlainString();
  }

  @Test
  void aTableWithAVerdictALagAndAFailureGivesEveryGaugeWithItsLabels() throws Exception {
    JobFixture f = JobFixture.history(dir);
    f.run();
    // The source goes on after the run: its newest commit is 75 minutes after the position.
    f.db.transaction(at(200)).insert(ORDERS, order(1000, "new", "10.00")).commit();
    Instant failedAt = Instant.parse("2030-01-01T00:00:00Z");
    f.tables.append(
        f.facts,
        FactsTable.SCHEMA,
        List.of(
            FactsTable.row()
                .set(FactsTable.APP_ID, JobFixture.CI)
                .set(FactsTable.EVENT, FactsTable.EVENT_TABLE_FAILED)
                .set(FactsTable.ROWS, 0L)
                .set(FactsTable.END_LSN, "0x0000002A0000010000A1")
                .set(FactsTable.DETAIL, "DataLossError: cleaned up")
                .set(FactsTable.TARGET, f.bronze)
                .set(FactsTable.WRITTEN_AT, failedAt)
                .build()),
        null,
        0,
        Map.of());
    Instant lastWritten = null;
    for (Row r : f.tables.scan(f.facts, FactsTable.SCHEMA)) {
      if (r.getString(FactsTable.EVENT) == null && r.getInt64(FactsTable.BATCH_ID) == 2) {
        lastWritten =
            r.getLogicalTypeValue(FactsTable.WRITTEN_AT, LocalDateTime.class)
                .toInstant(ZoneOffset.UTC);
      }
    }
    Instant readAt = lastWritten.truncatedTo(ChronoUnit.MILLIS);
    String out = prometheus(f, lastWritten);
    String labels =
        "{app_id=\"dbo_orders\",target=\"" + f.bronze + "\",capture_instance=\"dbo_orders\"}";
    Instant finalized = Instant.parse("2026-09-28T15:00:00Z");
    assertEquals(
        List.of(
            "# HELP lakecdc_status_read_timestamp_seconds When the status was read (Unix s).",
            "# TYPE lakecdc_status_read_timestamp_seconds gauge",
            "lakecdc_status_read_timestamp_seconds " + seconds(readAt),
            "# HELP lakecdc_table_lag_seconds Source's newest commit time minus the table's"
                + " position's commit time, in seconds (the last batch's source_max_commit_ts -"
                + " end_commit_ts without a source).",
            "# TYPE lakecdc_table_lag_seconds gauge",
            "lakecdc_table_lag_seconds" + labels + " 4500",
            "# HELP lakecdc_table_finalized_until_timestamp_seconds The verdict finalized_until"
                + " of the table's control row (Unix s, UTC).",
            "# TYPE lakecdc_table_finalized_until_timestamp_seconds gauge",
            "lakecdc_table_finalized_until_timestamp_seconds" + labels + " 1790607600",
            "# HELP lakecdc_table_verdict_age_seconds Seconds from the verdict finalized_until to"
                + " when the status was read.",
            "# TYPE lakecdc_table_verdict_age_seconds gauge",
            "lakecdc_table_verdict_age_seconds"
                + labels
                + " "
                + seconds(Instant.ofEpochMilli(readAt.toEpochMilli() - finalized.toEpochMilli())),
            "# HELP lakecdc_table_position_commit_timestamp_seconds Commit time of the table's"
                + " position (Unix s, UTC).",
            "# TYPE lakecdc_table_position_commit_timestamp_seconds gauge",
            "lakecdc_table_position_commit_timestamp_seconds" + labels + " 1790610900",
            "# HELP lakecdc_table_last_batch_id The current generation's last batch id.",
            "# TYPE lakecdc_table_last_batch_id gauge",
            "lakecdc_table_last_batch_id" + labels + " 2",
            "# HELP lakecdc_table_last_batch_timestamp_seconds When the last batch's facts row was"
                + " written (Unix s).",
            "# TYPE lakecdc_table_last_batch_timestamp_seconds gauge",
            "lakecdc_table_last_batch_timestamp_seconds" + labels + " " + seconds(readAt),
            "# HELP lakecdc_table_rows_today Change rows of the batches written today (UTC day).",
            "# TYPE lakecdc_table_rows_today gauge",
            "lakecdc_table_rows_today" + labels + " 28",
            "# HELP lakecdc_table_failed 1 while the table is stopped by a failure (a table_failed"
                + " facts row), else 0.",
            "# TYPE lakecdc_table_failed gauge",
            "lakecdc_table_failed" + labels + " 1",
            "# HELP lakecdc_table_generation The table's stream generation (re-snapshots).",
            "# TYPE lakecdc_table_generation gauge",
            "lakecdc_table_generation" + labels + " 0",
            "# HELP lakecdc_table_open_snapshot 1 while a snapshot is open, else 0.",
            "# TYPE lakecdc_table_open_snapshot gauge",
            "lakecdc_table_open_snapshot" + labels + " 0",
            "# HELP lakecdc_table_lost_periods Periods of the verdict whose changes CDC cleanup"
                + " purged (control lost_periods).",
            "# TYPE lakecdc_table_lost_periods gauge",
            "lakecdc_table_lost_periods" + labels + " 0"),
        out.lines().toList());
  }

  /** {@code Status --format=prometheus} of the fixture's tables and source, read at {@code at}. */
  private String prometheus(JobFixture f, Instant at) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int code;
    try (PrintStream o = new PrintStream(out, true, StandardCharsets.UTF_8);
        PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8)) {
      code =
          Status.run(
              new String[] {
                "--factsTable=" + f.facts,
                "--controlTable=" + f.control,
                "--fakePath=" + dir.resolve("source"),
                "--format=prometheus"
              },
              o,
              e,
              Clock.fixed(at, ZoneOffset.UTC),
              dir.resolve("no-demo-source"));
    }
    assertEquals(0, code, err.toString(StandardCharsets.UTF_8));
    return out.toString(StandardCharsets.UTF_8);
  }

  /**
   * The verdict's age is measured against the wall clock, the lag against the source
   * (docs/status.md "Metrics and alerts"): a source whose commits are weeks old, as the demo's are
   * (dated the daylight-saving night), and a job that streamed all of them read 0 s of lag and a
   * verdict weeks old.
   */
  @Test
  void aQuietSourceWithOldCommitsReadsNoLagAndAVerdictAsOldAsItsCommits() {
    JobFixture f = JobFixture.history(dir);
    f.run();
    // 35 days after the verdict 2026-09-28T15:00Z, as a status of the demo reads a month after
    // its 2026-11-01 commits.
    String out = prometheus(f, Instant.parse("2026-11-02T15:00:00Z"));
    String labels =
        "{app_id=\"dbo_orders\",target=\"" + f.bronze + "\",capture_instance=\"dbo_orders\"}";
    List<String> samples =
        out.lines()
            .filter(
                l ->
                    l.startsWith("lakecdc_table_lag_seconds{")
                        || l.startsWith("lakecdc_table_verdict_age_seconds{")
                        || l.startsWith("lakecdc_table_finalized_until_timestamp_seconds{"))
            .toList();
    assertEquals(
        List.of(
            "lakecdc_table_lag_seconds" + labels + " 0",
            "lakecdc_table_finalized_until_timestamp_seconds" + labels + " 1790607600",
            "lakecdc_table_verdict_age_seconds" + labels + " 3024000"),
        samples);
  }

  @Test
  void labelValuesEscapeBackslashQuoteAndNewline() {
    assertEquals(
        "{table=\"C:\\\\lake\\\\\\\"x\\\"\\nsilver\"}",
        StatusPrometheus.labels("table", "C:\\lake\\\"x\"\nsilver"));
  }

  @Test
  void anUnknownFormatIsOneLineNamingTheOption() {
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int code;
    try (PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8)) {
      code =
          Status.run(
              new String[] {"--format=yaml"},
              new PrintStream(new ByteArrayOutputStream()),
              e,
              Clock.systemUTC(),
              dir.resolve("no-demo-source"));
    }
    assertEquals(2, code);
    assertEquals(
        "error: --format must be text, json or prometheus, not 'yaml'\n",
        err.toString(StandardCharsets.UTF_8));
  }
}
