package org.lakecdc.pipelines.status;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.pipelines.JobFixture;
import org.lakecdc.pipelines.Status;

/**
 * The verdict's age is measured against the wall clock, the lag against the source (docs/status.md
 * "Metrics and alerts"): a source whose commits are weeks old, as the demo's are (dated the
 * daylight-saving night), and a job that streamed all of them read 0 s of lag and a verdict weeks
 * old.
 */
@Timeout(300)
class VerdictAgeTest {
  @TempDir Path dir;

  @Test
  void aQuietSourceWithOldCommitsReadsNoLagAndAVerdictAsOldAsItsCommits() {
    JobFixture f = JobFixture.history(dir);
    f.run();
    // 35 days after the verdict 2026-09-28T15:00Z, as a status of the demo reads a month after
    // its 2026-11-01 commits.
    Instant readAt = Instant.parse("2026-11-02T15:00:00Z");
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
              Clock.fixed(readAt, ZoneOffset.UTC),
              dir.resolve("no-demo-source"));
    }
    assertEquals(0, code, err.toString(StandardCharsets.UTF_8));
    String labels =
        "{app_id=\"dbo_orders\",target=\"" + f.bronze + "\",capture_instance=\"dbo_orders\"}";
    List<String> samples =
        out.toString(StandardCharsets.UTF_8)
            .lines()
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
}
