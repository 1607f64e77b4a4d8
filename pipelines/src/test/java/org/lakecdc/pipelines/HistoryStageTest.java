package org.lakecdc.pipelines;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.lakecdc.pipelines.JobFixture.ORDERS;
import static org.lakecdc.pipelines.JobFixture.at;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.pipelines.cdc.ContinuousMode;
import org.lakecdc.pipelines.cdc.JobSummary;
import org.lakecdc.pipelines.targets.JobConfig;
import org.lakecdc.transforms.delta.DeltaTables;

/**
 * The main job applies its history tables inside the pipeline, where it applies silver: a
 * continuous run's history moves with every wave, not only when the run stops.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class HistoryStageTest {
  private static final Duration WAIT = Duration.ofSeconds(120);

  @TempDir Path dir;

  private final DeltaTables tables = DeltaTables.create();

  /**
   * Three commits wait in the source when a continuous run starts; while it runs, the history holds
   * their six versions, then the versions of an update and a delete committed after the start
   * (order 100's first version closed at 14:20 and its second opened there, order 0's closed at
   * 14:21 by its delete), all before the run is stopped. After the stop the history is as it was,
   * silver beside it holds the latest images, and the run's history line counts the versions the
   * pipeline opened and closed.
   */
  @Test
  void aContinuousRunsHistoryHoldsTheVersionsCommittedSoFarBeforeItStops() throws Exception {
    JobFixture f = new JobFixture(dir);
    f.db.enableCdc(ORDERS);
    for (int t = 0; t < 3; t++) {
      f.insertCommit(t, 2);
    }
    String history = dir.resolve("delta/history/dbo_orders").toString();
    String silver = dir.resolve("delta/silver/dbo_orders").toString();
    JobConfig config =
        f.config().toBuilder()
            .silverPath(silver)
            .history(history, List.of())
            .silverIntervalSeconds(1)
            .build();
    ContinuousMode.Stop stop = ContinuousMode.Stop.create();
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);
    CompletableFuture<JobSummary> job =
        JobFixture.following(config, JobFixture.direct(), out, WAIT.multipliedBy(2), stop);
    List<String> first =
        List.of(
            "0/new/2026-09-28T13:50/open/false",
            "1/new/2026-09-28T13:50/open/false",
            "100/new/2026-09-28T13:51/open/false",
            "101/new/2026-09-28T13:51/open/false",
            "200/new/2026-09-28T13:52/open/false",
            "201/new/2026-09-28T13:52/open/false");
    List<String> later =
        List.of(
            "0/new/2026-09-28T13:50/2026-09-28T14:21/true",
            "1/new/2026-09-28T13:50/open/false",
            "100/new/2026-09-28T13:51/2026-09-28T14:20/false",
            "100/paid/2026-09-28T14:20/open/false",
            "101/new/2026-09-28T13:51/open/false",
            "200/new/2026-09-28T13:52/open/false",
            "201/new/2026-09-28T13:52/open/false");
    List<String> whileRunning = new ArrayList<>();
    try {
      whileRunning.add(String.join(",", await(() -> versions(history), first, job)));
      f.db.transaction(at(30)).update(ORDERS, List.of(100), Map.of("status", "paid")).commit();
      f.db.transaction(at(31)).delete(ORDERS, List.of(0)).commit();
      whileRunning.add(String.join(",", await(() -> versions(history), later, job)));
      assertTrue(!job.isDone(), "the run was still following when the history held them");
    } finally {
      stop.request();
    }
    job.get(WAIT.toSeconds(), TimeUnit.SECONDS);
    stop.forget();
    String printed = bytes.toString(StandardCharsets.UTF_8);
    assertEquals(List.of(String.join(",", first), String.join(",", later)), whileRunning, printed);
    assertEquals(later, versions(history));
    assertEquals(
        List.of("1/new", "100/paid", "101/new", "200/new", "201/new"),
        tables.scan(silver).stream()
            .map(r -> r.get("order_id") + "/" + r.get("status"))
            .sorted()
            .toList());
    List<String> lines = printed.lines().filter(l -> l.startsWith("History dbo_orders")).toList();
    assertEquals(1, lines.size(), printed);
    assertTrue(
        lines.get(0).endsWith(", 7 versions opened, 2 closed, 0 updated in place"), lines.get(0));
  }

  /** Every version, "id/status/from/to/deleted" (to "open" while current), sorted. */
  private List<String> versions(String history) {
    if (!tables.exists(history)) {
      return List.of();
    }
    List<String> out = new ArrayList<>();
    for (Map<String, Object> row : tables.scan(history)) {
      Object to = row.get("_valid_to_ts");
      out.add(
          row.get("order_id")
              + "/"
              + row.get("status")
              + "/"
              + time(row.get("_valid_from_ts"))
              + "/"
              + (to == null ? "open" : time(to))
              + "/"
              + row.get("_deleted"));
    }
    out.sort(
        (a, b) -> {
          int ka = Integer.parseInt(a.substring(0, a.indexOf('/')));
          int kb = Integer.parseInt(b.substring(0, b.indexOf('/')));
          return ka != kb ? Integer.compare(ka, kb) : a.compareTo(b);
        });
    return out;
  }

  private static String time(Object value) {
    return (value instanceof java.time.Instant i
            ? LocalDateTime.ofInstant(i, java.time.ZoneOffset.UTC)
            : (LocalDateTime) value)
        .toString();
  }

  /** {@code read}'s value once it equals {@code expected}, or the last read when WAIT passes. */
  private static List<String> await(
      Supplier<List<String>> read, List<String> expected, CompletableFuture<?> job) {
    @SuppressWarnings("unchecked")
    List<String>[] last = new List[] {List.of()};
    try {
      org.awaitility.Awaitility.await("the history holds " + expected)
          .atMost(WAIT)
          .pollDelay(Duration.ZERO)
          .pollInterval(Duration.ofMillis(200))
          .pollInSameThread()
          .until(
              () -> {
                try {
                  last[0] = read.get();
                } catch (RuntimeException e) {
                  return false; // a commit landing under the read: read again
                }
                if (last[0].equals(expected)) {
                  return true;
                }
                if (job.isDone()) {
                  job.get();
                  throw new AssertionError("the job ended before the history held " + expected);
                }
                return false;
              });
    } catch (org.awaitility.core.ConditionTimeoutException e) {
      return last[0];
    }
    return last[0];
  }
}
