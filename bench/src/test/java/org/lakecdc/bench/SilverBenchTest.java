package org.lakecdc.bench;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The silver measurements end to end on tiny tables: silver's waves in their own JVMs,
 * delta-spark's MERGE of the same waves, the checks, and the figures' names and order (never their
 * values).
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class SilverBenchTest {
  @TempDir Path work;

  @Test
  void silverAndDeltaSparkEndWithTheSameRowsAndEverySilverFigureIsPrinted() {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int code =
        Bench.run(
            new String[] {
              "--skip=bronze,parquet,deltaspark,overhead,heap,latency",
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
                "deltaspark_merge_s",
                "silver_vs_deltaspark_merge",
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
    assertThat(new BronzeTable(run.resolve("deltaspark-large")).rows(), is(3006L));
    assertThat(new BronzeTable(run.resolve("silver-small")).rows(), is(1006L));
    assertThat(
        text,
        text.contains("both tables hold the same 3,006 rows")
            && text.contains("3 waves of 100 keys into 3,000 rows")
            && text.contains("3 waves of 100 keys into 1,000 rows"),
        is(true));
  }
}
