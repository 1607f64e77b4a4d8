package org.lakecdc.bench;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.io.mssqlcdc.fake.FakeSqlServer;

/**
 * The reconcile measurement: where the differences are planted, and end to end on 2,000 rows (the
 * main job and Reconcile in their own JVMs, the answer checked, the figures' names; never their
 * values).
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class ReconcileBenchTest {
  @TempDir Path work;

  @Test
  void plantsTenDifferencesAtTheTwentiethsOfTheTable() {
    assertThat(
        ReconcileBench.positions(2000),
        is(
            Map.of(
                100L, 0, 300L, 1, 500L, 2, 700L, 3, 900L, 4, 1100L, 5, 1300L, 6, 1500L, 7, 1700L, 8,
                1900L, 9)));
    // TPC-H order keys: the first 8 of every 32, so position p has key p / 8 * 32 + p % 8 + 1.
    assertThat(ReconcileBench.unusedKey(1), is(16));
    assertThat(ReconcileBench.unusedKey(5989), is(6000));
    assertThat(
        ReconcileBench.expectedKeys(2000),
        is(
            List.of(
                "{\"o_orderkey\":1189} RECORD_DIFF",
                "{\"o_orderkey\":1989} RECORD_DIFF",
                "{\"o_orderkey\":2789} RECORD_DIFF",
                "{\"o_orderkey\":3589} MISSING_SOURCE",
                "{\"o_orderkey\":389} RECORD_DIFF",
                "{\"o_orderkey\":4389} MISSING_SOURCE",
                "{\"o_orderkey\":5189} MISSING_SOURCE",
                "{\"o_orderkey\":6000} MISSING_TARGET",
                "{\"o_orderkey\":6800} MISSING_TARGET",
                "{\"o_orderkey\":7600} MISSING_TARGET")));
  }

  @Test
  void theSourceHoldsThePlantedRows() {
    ReconcileBench.source(work.resolve("db"), 2000, true);
    FakeSqlServer db = FakeSqlServer.open(work.resolve("db"));
    List<Map<String, Object>> rows = db.rows(Orders.TABLE);
    assertThat(rows.size(), is(2000));
    assertThat(
        rows.stream()
            .filter(r -> ReconcileBench.CHANGED_COMMENT.equals(r.get("o_comment")))
            .map(r -> r.get("o_orderkey"))
            .toList(),
        is(List.of(389, 1189, 1989, 2789)));
    assertThat(db.captureInstances(), is(List.of(Orders.CAPTURE_INSTANCE)));
  }

  @Test
  void reconcileFindsExactlyThePlantedDifferencesAndPrintsItsFigures() {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int code =
        Bench.run(
            new String[] {
              "--skip=bronze,parquet,parquetio,deltaspark,overhead,heap,latency,manytables,silver,s3,history",
              "--reconcileRows=2000",
              "--jobHeap=1g",
              "--workDir=" + work
            },
            new PrintStream(out, true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8));
    String text = out.toString(StandardCharsets.UTF_8);
    assertThat(err.toString(StandardCharsets.UTF_8) + text, code, is(0));
    assertThat(
        text.lines().filter(l -> l.startsWith("FIGURE ")).map(l -> l.split(" ")[1]).toList(),
        is(List.of("reconcile_rows_per_s", "reconcile_2k_seconds")));
    assertThat(text, text.contains("Benchmark: reconcile\n"), is(true));
    assertThat(
        text,
        text.contains("4,000 rows compared, 1 bucket (1 mismatched), exactly the 10 planted keys"),
        is(true));
    assertThat(Files.exists(work.resolve("reconcile-2000/ready")), is(true));
    assertThat(Files.exists(work.resolve("reconcile-2000/source-job")), is(false));
  }
}
