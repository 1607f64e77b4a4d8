package org.lakecdc.pipelines.status;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.lakecdc.pipelines.JobFixture.ORDERS;
import static org.lakecdc.pipelines.JobFixture.at;
import static org.lakecdc.pipelines.JobFixture.order;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.beam.sdk.values.Row;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.pipelines.JobFixture;
import org.lakecdc.pipelines.Status;
import org.lakecdc.transforms.facts.FactsTable;

/**
 * {@code Status --html=<file>} on the tables of a real job run (the {@link JobFixture} history),
 * rendered by headless Chromium: the table's row with its values, marked failed, and a failure
 * detail holding markup shown as text, never as markup.
 */
@Timeout(300)
class StatusPageTest {
  /** Debian's Chromium, which the page test renders with. */
  private static final Path CHROMIUM = Path.of("/usr/bin/chromium");

  @TempDir Path dir;

  @Test
  void thePageShowsEveryTablesValuesEscapedAsChromiumRendersIt() throws Exception {
    Assumptions.assumeTrue(
        Files.isExecutable(CHROMIUM),
        "no headless Chromium at /usr/bin/chromium (apt-get install chromium): page not rendered");
    JobFixture f = JobFixture.history(dir);
    f.run();
    f.db.transaction(at(200)).insert(ORDERS, order(1000, "new", "10.00")).commit();
    String detail = "DataLossError: <script>alert(\"x\")</script> & 'q'";
    f.tables.append(
        f.facts,
        FactsTable.SCHEMA,
        List.of(
            FactsTable.row()
                .set(FactsTable.APP_ID, JobFixture.CI)
                .set(FactsTable.EVENT, FactsTable.EVENT_TABLE_FAILED)
                .set(FactsTable.ROWS, 0L)
                .set(FactsTable.END_LSN, "0x0000002A0000010000A1")
                .set(FactsTable.DETAIL, detail)
                .set(FactsTable.TARGET, f.bronze)
                .set(FactsTable.WRITTEN_AT, Instant.parse("2030-01-01T00:00:00Z"))
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
    Path page = dir.resolve("page/status.html");
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int code;
    try (PrintStream o =
            new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
        PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8)) {
      code =
          Status.run(
              new String[] {
                "--factsTable=" + f.facts,
                "--controlTable=" + f.control,
                "--fakePath=" + dir.resolve("source"),
                "--html=" + page
              },
              o,
              e,
              Clock.fixed(lastWritten, ZoneOffset.UTC),
              dir.resolve("no-demo-source"));
    }
    assertEquals(0, code, err.toString(StandardCharsets.UTF_8));

    String dom = chromium(page, "--dump-dom");
    assertFalse(dom.contains("<script"), "the failure's markup stays text: " + dom);
    assertTrue(
        dom.contains("<p id=\"summary\" class=\"bad\">1 table, 1 failed</p>"), "summary: " + dom);
    Matcher row =
        Pattern.compile("<tr class=\"failed\">(.*?)</tr>").matcher(dom.replace("\n", " "));
    List<String> cells = new ArrayList<>();
    assertTrue(row.find(), "a failed row: " + dom);
    Matcher cell = Pattern.compile("<td>(.*?)</td>").matcher(row.group(1));
    while (cell.find()) {
      cells.add(cell.group(1));
    }
    assertEquals(
        List.of(
            f.bronze,
            "dbo_orders",
            "dbo_orders",
            "0x0000002A0000010000A1 at 2026-09-28T15:55:00Z",
            "2 at " + lastWritten,
            "28",
            "2026-09-28T15:00:00Z",
            "4500",
            "at 0x0000002A0000010000A1: DataLossError: &lt;script&gt;alert(\"x\")&lt;/script&gt;"
                + " &amp; 'q'",
            "none",
            "no open snapshot"),
        cells);
  }

  /** Runs headless Chromium on {@code page} with {@code what} and returns its standard output. */
  private String chromium(Path page, String what) throws Exception {
    Path profile = Files.createTempDirectory(dir, "chromium-profile");
    Process p =
        new ProcessBuilder(
                CHROMIUM.toString(),
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
                "--user-data-dir=" + profile,
                "--window-size=1400,600",
                what,
                page.toUri().toString())
            .redirectError(dir.resolve("chromium.err").toFile())
            .start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(60, TimeUnit.SECONDS), "Chromium did not finish in 60 s");
    assertEquals(0, p.exitValue(), Files.readString(dir.resolve("chromium.err")));
    return out;
  }
}
