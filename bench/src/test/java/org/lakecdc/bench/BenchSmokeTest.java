package org.lakecdc.bench;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The harness end to end on a few rows: the job (in its own JVMs, through CdcToDelta) ingests 2,000
 * rows, parquet-java and Beam's ParquetIO write them, the continuous-mode latency is measured, and
 * two tables run the many-tables measurements, and the history's waves run on a history of 1,000
 * keys. delta-spark, the per-batch cost, the heap runs, silver and delta-spark's MERGEs are left
 * out to keep the test short: their code paths are {@link DeltaSparkAnchorTest}, {@link BenchTest}
 * (the per-batch arithmetic), {@link JobProbeTest}, the same job runs as the bronze one and {@link
 * SilverBenchTest}; every real bench run checks delta-spark's answers (the same row count and row
 * digest as silver's and the history's) before printing a figure. Only the figures' presence and
 * form are checked, never a time.
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class BenchSmokeTest {
  @TempDir Path work;

  @Test
  void printsEveryFigureOnceLast() throws Exception {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int code =
        Bench.run(
            new String[] {
              "--rows=2000",
              "--latencyTransactions=2",
              "--tables=2",
              "--skip=deltaspark,heap,overhead,silver,deltasparkmerge,reconcile,s3",
              "--historyKeys=1000",
              "--historyWaves=1",
              "--jobHeap=1g",
              "--workDir=" + work
            },
            new PrintStream(out, true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8));
    String text = out.toString(StandardCharsets.UTF_8);
    assertThat(err.toString(StandardCharsets.UTF_8) + text, code, is(0));

    List<String> lines = text.lines().toList();
    List<String> names = new ArrayList<>();
    for (String line : lines.subList(lines.size() - 26, lines.size())) {
      String[] f = line.split(" ");
      assertThat(line, f.length, is(3));
      assertThat(line, f[0], is("FIGURE"));
      names.add(f[1]);
      double value = Double.parseDouble(f[2]);
      assertThat(line, value > 0 && Double.isFinite(value), is(true));
    }
    assertThat(
        names,
        is(
            List.of(
                "bronze_rows_per_s",
                "bronze_stream_rows_per_s",
                "parquet_rows_per_s",
                "bronze_vs_parquet",
                "bronze_stream_vs_parquet",
                "parquet_cold_rows_per_s",
                "bronze_vs_parquet_cold",
                "bronze_write_rows_per_s",
                "bronze_write_vs_parquet",
                "parquetio_rows_per_s",
                "bronze_vs_parquetio",
                "latency_p50_ms",
                "latency_p95_ms",
                "manytables_batches_per_s_2",
                "latency_p50_ms_2_tables",
                "latency_p95_ms_2_tables",
                "snapshot_rows_per_s",
                "chunked_snapshot_rows_per_s",
                "snapshot_vs_parquet",
                "chunked_snapshot_vs_parquet",
                "chunked_vs_whole",
                "chunked_vs_whole_cpu",
                "snapshot_cores",
                "chunked_snapshot_cores",
                "history_wave_s",
                "history_cold_wave_s")));
    assertThat(text.lines().filter(l -> l.startsWith("FIGURE ")).count(), is(26L));
    // Beam's ParquetIO wrote the 2,000 rows; each of the two tables' bronze holds its 40.
    assertThat(ParquetIoAnchor.rows(work.resolve("runs/02-parquetio/files")), is(2_000L));
    assertThat(
        new BronzeTable(work.resolve("runs/04-manytables-2/bronze/dbo_t001")).rows(), is(40L));
    // 1,000 keys x 5 versions, then three waves (cold, warm-up, one measured) of 10 new versions.
    assertThat(text, text.contains("3 waves of 10 keys into 1,000 keys x 5 versions"), is(true));
  }
}
