package org.lakecdc.bench;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.transforms.facts.FactsTable;

/** The harness's options, figures and statistics (nothing is measured here). */
class BenchTest {
  private static String refused(String... args) {
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    int code =
        Bench.run(
            args,
            new PrintStream(out, true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8));
    assertThat(code, is(2));
    assertThat(out.toString(StandardCharsets.UTF_8), is(""));
    return err.toString(StandardCharsets.UTF_8).strip();
  }

  @Test
  void badOptionsAreRefusedInOneLine() {
    assertThat(refused("--rows=0"), is("error: --rows must be a positive integer, not '0'"));
    assertThat(
        refused("--runners=spark"), is("error: --runners must be 'direct' or 'all', not 'spark'"));
    assertThat(
        refused("--skip=parquet,gold"),
        is(
            "error: --skip takes a comma-separated list of bronze, deltaspark, deltasparkmerge,"
                + " heap, history, latency, manytables, overhead, parquet, parquetio, reconcile, s3,"
                + " silver, snapshot, not 'gold'"));
    assertThat(refused("--tables=0"), is("error: --tables must be a positive integer, not '0'"));
    assertThat(
        refused("--historyKeys=99"),
        is("error: --historyKeys must be an integer from 100 to 429496729, not '99'"));
    assertThat(
        refused("--historyWaves=0"),
        is("error: --historyWaves must be a positive integer, not '0'"));
    assertThat(
        refused("--reconcileRows=19"),
        is("error: --reconcileRows must be an integer from 20 to 1073741823, not '19'"));
    assertThat(
        refused("--overheadCommits=1"),
        is("error: --overheadCommits must be an integer of at least 2, not '1'"));
    assertThat(
        refused("--rowsPerTransaction=-1"),
        is(
            "error: --rowsPerTransaction must be 0 (one transaction) or a positive integer, not"
                + " '-1'"));
    assertThat(
        refused("--jobHeap=lots"),
        is(
            "error: --jobHeap must be a heap size as -Xmx takes it (e.g. 8g, 512m), not"
                + " 'lots'"));
    assertThat(
        refused("--jobJvmOptions=-XX:TieredStopAtLevel=1,TieredStopAtLevel=1"),
        is(
            "error: --jobJvmOptions must be JVM options, each starting with '-' (e.g."
                + " -XX:TieredStopAtLevel=1,-XX:+UseSerialGC), not 'TieredStopAtLevel=1'"));
    assertThat(refused("--repeats=0"), is("error: --repeats must be a positive integer, not '0'"));
    assertThat(
        refused("--latencyTransactions=0"),
        is("error: --latencyTransactions must be a positive integer, not '0'"));
    assertThat(
        refused("--silverRows=0"),
        is("error: --silverRows must be an integer from 1 to 1073741823, not '0'"));
    assertThat(
        refused("--silverSmallRows=2000000000"),
        is("error: --silverSmallRows must be an integer from 1 to 1073741823, not '2000000000'"));
    assertThat(
        refused("--silverSmallRows=1000", "--silverWaveKeys=1200"),
        is(
            "error: --silverWaveKeys must be a positive integer whose 89% (its updates and"
                + " deletes) is at most --silverRows and --silverSmallRows, not '1200'"));
    assertThat(
        refused("--silverWaves=0"), is("error: --silverWaves must be a positive integer, not '0'"));
    assertThat(refused("--rows=abc"), is("error: --rows must be an integer, not 'abc'"));
    assertThat(
        refused("--rowz=5"),
        is(
            "error: Unknown option --rowz; did you mean --rows? (docs/performance.md lists the options)"));
  }

  @Test
  void theDefaultSizesFitAndLargeGivesTheLargeOnesUnlessAnOptionIsGiven() {
    BenchOptions fit = PipelineOptionsFactory.fromArgs().as(BenchOptions.class);
    assertThat(
        List.of(
            Bench.silverRows(fit),
            Bench.silverSmallRows(fit),
            (long) Bench.silverWaveKeys(fit),
            Bench.reconcileRows(fit),
            (long) Bench.tables(fit)),
        is(List.of(1_000_000L, 200_000L, 10_000L, 200_000L, 50L)));
    BenchOptions large =
        PipelineOptionsFactory.fromArgs("--large", "--tables=7").as(BenchOptions.class);
    assertThat(
        List.of(
            Bench.silverRows(large),
            Bench.silverSmallRows(large),
            (long) Bench.silverWaveKeys(large),
            Bench.reconcileRows(large),
            (long) Bench.tables(large)),
        is(List.of(5_000_000L, 1_000_000L, 50_000L, 5_000_000L, 7L)));
  }

  @Test
  void manyTablesNamesItsTablesAndCountsTenBatchesEach() {
    assertThat(ManyTables.table(7), is("dbo.t007"));
    assertThat(ManyTables.captureInstance(42), is("dbo_t042"));
    assertThat(ManyTables.tablesOption(3), is("--tables=dbo_t000,dbo_t001,dbo_t002"));
    assertThat(ManyTables.batches(50), is(500L));
    assertThat(ManyTables.batches(500), is(5_000L));
    assertThat(ManyTables.bronze(Path.of("/runs/r"), 3), is(Path.of("/runs/r/bronze/dbo_t003")));
  }

  @Test
  void figureLinesHaveFourSignificantDigitsInPlainNotation() {
    assertThat(
        Bench.figureLine("bronze_rows_per_s", 2345.123), is("FIGURE bronze_rows_per_s 2345"));
    assertThat(
        Bench.figureLine("parquet_rows_per_s", 139741.7), is("FIGURE parquet_rows_per_s 139700"));
    assertThat(
        Bench.figureLine("bronze_vs_parquet", 2345.0 / 139741),
        is("FIGURE bronze_vs_parquet 0.01678"));
    assertThat(Bench.figureLine("latency_p50_ms", 1500.0), is("FIGURE latency_p50_ms 1500"));
  }

  @Test
  void streamRateIsTheSummarysChangeRowsPerSecondOfStreaming(@TempDir Path dir) throws Exception {
    Path output = dir.resolve("job-output.log");
    Files.writeString(
        output,
        "batch 0: 1,000,000 rows (1,000,000 inserts, 0 updates, 0 deletes) up to ...\n\n"
            + "Done in 6.3 s: 1 batch, 1,000,000 change rows (1,000,000 inserts, 0 updates, 0"
            + " deletes) in 5.5 s of streaming, 180,692 change rows/s\n"
            + "Position: batch 0, end LSN 0x0000002A000001003E71\n");
    assertThat(BenchRun.streamRate(output), is(180692.0));
    Files.writeString(output, "error: --rows must be a positive integer\n");
    assertThat(Double.isNaN(BenchRun.streamRate(output)), is(true));
  }

  @Test
  void batchOverheadIsTheDifferencePerExtraBatch() {
    // 301 batches in 160.5 s against one batch in 10.5 s: 150 s over 300 extra batches.
    assertThat(IngestMeasures.batchOverheadMs(160.5, 10.5, 301), is(500.0));
  }

  @Test
  void latestCommitIgnoresTemporaryAndCheckpointFiles(@TempDir Path dir) throws Exception {
    Path log = dir.resolve("_delta_log");
    assertThat(LatencyMeasures.latestCommit(log), is(-1L));
    Files.createDirectories(log);
    Files.writeString(log.resolve("00000000000000000000.json"), "");
    Files.writeString(log.resolve("00000000000000000001.json"), "");
    Files.writeString(log.resolve(".00000000000000000002.json.a1b2.tmp"), "");
    Files.writeString(log.resolve("00000000000000000001.checkpoint.parquet"), "");
    assertThat(LatencyMeasures.latestCommit(log), is(1L));
  }

  @Test
  void theMedianIsTheMiddleValueOrTheMeanOfTheTwoMiddleOnes() {
    assertThat(Bench.median(List.of(3.0, 1.0, 2.0)), is(2.0));
    assertThat(Bench.median(List.of(4.0, 1.0, 3.0, 2.0)), is(2.5));
    assertThat(Bench.median(List.of(7.0)), is(7.0));
  }

  @Test
  void aPercentileIsTheValueAtItsNearestRank() {
    double[] twenty = new double[20];
    for (int i = 0; i < 20; i++) {
      twenty[i] = i + 1;
    }
    assertThat(Bench.nearestRank(twenty, 50), is(10.0));
    assertThat(Bench.nearestRank(twenty, 95), is(19.0));
    assertThat(Bench.nearestRank(new double[] {5.0, 9.0}, 95), is(9.0));
    assertThat(Bench.nearestRank(new double[] {5.0, 9.0}, 50), is(5.0));
  }

  private static Map<String, Object> factsRow(String event, LocalDateTime started, Long ms) {
    Map<String, Object> row = new HashMap<>();
    row.put(FactsTable.EVENT, event);
    row.put(FactsTable.STARTED_AT, started);
    row.put(FactsTable.DURATION_MS, ms);
    return row;
  }

  @Test
  void theSnapshotsReadTimeRunsFromTheFirstChunksReadToTheLastChunksCommit() {
    LocalDateTime t0 = LocalDateTime.of(2026, 12, 7, 12, 0, 0);
    List<Map<String, Object>> facts =
        List.of(
            // The plan's row and the completion row have times of their own: not counted.
            factsRow("snapshot_plan", t0.minusSeconds(30), 9_000L),
            factsRow("snapshot_chunk", t0.plusSeconds(1), 20_500L),
            factsRow("snapshot_chunk", t0, 15_000L),
            factsRow("snapshot_chunk", t0.plusSeconds(16), 4_250L),
            factsRow("bootstrap", t0.minusSeconds(40), 90_000L));
    // From 12:00:00 (chunk read second) to 12:00:21.5 (the first chunk's commit, after the last's).
    assertThat(SnapshotMeasures.chunkSpanSeconds(facts), is(21.5));
    IllegalStateException none =
        org.junit.jupiter.api.Assertions.assertThrows(
            IllegalStateException.class,
            () -> SnapshotMeasures.chunkSpanSeconds(List.of(factsRow("snapshot_chunk", t0, null))));
    assertThat(
        none.getMessage(), is("no snapshot_chunk facts row has a started_at and a duration_ms"));
  }
}
