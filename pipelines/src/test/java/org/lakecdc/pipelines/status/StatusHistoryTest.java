package org.lakecdc.pipelines.status;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.pipelines.JobFixture;
import org.lakecdc.pipelines.Status;
import org.lakecdc.transforms.history.HistoryPosition;
import org.lakecdc.transforms.silver.SilverPosition;

/**
 * {@code Status} on a run that keeps a silver and a history table of one bronze table: every output
 * (text, {@code --format=json}, {@code --format=prometheus}, {@code --html}) shows the history's
 * position and verdict and names it as a history table, and the silver as silver.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class StatusHistoryTest {
  @TempDir Path dir;

  private String status(JobFixture f, String... more) {
    List<String> args =
        new ArrayList<>(
            List.of(
                "--factsTable=" + f.facts,
                "--controlTable=" + f.control,
                "--fakePath=" + dir.resolve("source"),
                "--logFile=" + dir.resolve("status.log")));
    args.addAll(List.of(more));
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int code =
        Status.run(
            args.toArray(String[]::new),
            new PrintStream(out, true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8),
            Clock.systemUTC(),
            dir.resolve("none"));
    assertEquals(0, code, err.toString(StandardCharsets.UTF_8));
    return out.toString(StandardCharsets.UTF_8);
  }

  @Test
  void everyOutputShowsTheHistorysPositionAndVerdictAndNamesItAHistoryTable() throws Exception {
    JobFixture f = JobFixture.history(dir);
    String silver = dir.resolve("delta/silver/dbo_orders").toString();
    String history = dir.resolve("delta/history/dbo_orders").toString();
    f.run(f.config().toBuilder().silverPath(silver).history(history, List.of()).build());
    String historyLsn = HistoryPosition.read(f.tables, history).orElseThrow().appliedLsn();
    String silverLsn = SilverPosition.read(f.tables, silver).orElseThrow().appliedLsn();
    // Both verdicts follow bronze's: 2026-09-28T15:00 UTC.
    String text = status(f);
    assertTrue(
        text.contains(
            "\n"
                + history
                + "  (history)\n  applied_lsn       "
                + historyLsn
                + "\n  finalized_until   2026-09-28T15:00:00Z\n"),
        text);
    assertTrue(
        text.contains(
            "\n"
                + silver
                + "  (silver)\n  applied_lsn       "
                + silverLsn
                + "\n  finalized_until   2026-09-28T15:00:00Z\n"),
        text);

    JsonNode json = new ObjectMapper().readTree(status(f, "--format=json"));
    assertEquals(
        new ObjectMapper()
            .readTree(
                "[{\"table\": \""
                    + history
                    + "\", \"kind\": \"history\", \"applied_lsn\": \""
                    + historyLsn
                    + "\", \"finalized_until\": \"2026-09-28T15:00:00Z\"},"
                    + " {\"table\": \""
                    + silver
                    + "\", \"kind\": \"silver\", \"applied_lsn\": \""
                    + silverLsn
                    + "\", \"finalized_until\": \"2026-09-28T15:00:00Z\"}]"),
        json.get("silver_tables"));

    List<String> prometheus = status(f, "--format=prometheus").lines().toList();
    int at = prometheus.indexOf("# TYPE lakecdc_silver_finalized_until_timestamp_seconds gauge");
    assertEquals(
        List.of(
            "# HELP lakecdc_silver_finalized_until_timestamp_seconds A silver table's verdict"
                + " finalized_until (Unix s, UTC).",
            "# TYPE lakecdc_silver_finalized_until_timestamp_seconds gauge",
            "lakecdc_silver_finalized_until_timestamp_seconds{table=\"" + silver + "\"} 1790607600",
            "# HELP lakecdc_history_finalized_until_timestamp_seconds A history table's verdict"
                + " finalized_until (Unix s, UTC).",
            "# TYPE lakecdc_history_finalized_until_timestamp_seconds gauge",
            "lakecdc_history_finalized_until_timestamp_seconds{table=\""
                + history
                + "\"} 1790607600"),
        prometheus.subList(at - 1, at + 5));

    Path page = dir.resolve("status.html");
    status(f, "--html=" + page);
    String html = Files.readString(page, StandardCharsets.UTF_8);
    assertTrue(
        html.contains(
            "<table id=\"silver\"><tr><th>silver or history table</th><th>kind</th>"
                + "<th>applied_lsn</th><th>finalized_until</th></tr>\n"
                + "<tr><td>"
                + history
                + "</td><td>history</td><td>"
                + historyLsn
                + "</td><td>2026-09-28T15:00:00Z</td></tr>\n"
                + "<tr><td>"
                + silver
                + "</td><td>silver</td><td>"
                + silverLsn
                + "</td><td>2026-09-28T15:00:00Z</td></tr>\n</table>\n"),
        html);
  }
}
