package org.lakecdc.bench;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The silver measurements end to end on tiny tables: silver's waves in their own JVMs, the checks,
 * and the figures' names and order (never their values). delta-spark's MERGE of the same waves is
 * left out ({@code --skip=deltasparkmerge}) to keep the test run short: a Spark JVM's start and
 * three MERGEs cost more than the rest together; every real bench run checks its answer (the same
 * row count and row digest as silver) before printing a figure.
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class SilverBenchTest {
  @TempDir Path work;

  @Test
  void silverEndsWithTheExpectedRowsAndEverySilverFigureIsPrinted() {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int code =
        Bench.run(
            new String[] {
              "--skip=bronze,parquet,parquetio,deltaspark,overhead,heap,latency,manytables,deltasparkmerge,reconcile,s3,history",
              "--silverRows=3000",
              "--silverSmallRows=1000",
              "--silverWaveKeys=100",
              "--silverWaves=1",
              "--jobHeap=1g",
              "--workDir=" + work
            },
            new PrintStream(out, true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8));
    String text = out.toString(StandardCharsets.UTF_8);
    assertThat(err.toString(StandardCharsets.UTF_8) + text, code, is(0));

    List<String> names =
        text.lines().filter(l -> l.startsWith("FIGURE ")).map(l -> l.split(" ")[1]).toList();
    assertThat(
        names,
        is(
            List.of(
                "silver_wave_s",
                "silver_wave_s_1m",
                "silver_wave_s_5m",
                "silver_wave_5m_vs_1m",
                "silver_wave_cpu_s_1m",
                "silver_wave_cpu_s_5m",
                "silver_wave_cpu_5m_vs_1m",
                "silver_cold_wave_s")));
    // Three waves (cold, warm-up, one measured) of 80 updates, 9 deletes and 11 inserts each.
    Path run = work.resolve("runs/01-silver");
    assertThat(new BronzeTable(run.resolve("silver-large")).rows(), is(3006L));
    assertThat(Files.exists(run.resolve("deltaspark-large")), is(false));
    assertThat(new BronzeTable(run.resolve("silver-small")).rows(), is(1006L));
    assertThat(
        text,
        !text.contains("deltaspark merge")
            && text.contains("3 waves of 100 keys into 3,000 rows")
            && text.contains("3 waves of 100 keys into 1,000 rows"),
        is(true));
  }
}
