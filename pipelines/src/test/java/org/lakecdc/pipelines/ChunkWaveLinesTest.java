package org.lakecdc.pipelines;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.apache.beam.sdk.options.PipelineOptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.lakecdc.io.mssqlcdc.client.CdcClientFactory;
import org.lakecdc.pipelines.backfill.BackfillWaves;
import org.lakecdc.pipelines.cdc.CdcToDeltaJob;
import org.lakecdc.pipelines.cdc.ContinuousMode;
import org.lakecdc.pipelines.cdc.JobSummary;
import org.lakecdc.pipelines.targets.JobConfig;
import org.lakecdc.pipelines.targets.SnapshotSettings;
import org.lakecdc.transforms.snapshot.ChunkedSnapshotFacts;

/**
 * A chunked snapshot's progress lines are printed by the launcher, on the console it was started
 * from, as the facts table records each wave (docs/tables.md "Chunked snapshots"): on the
 * DirectRunner, Spark {@code local[2]} and Flink with parallelism 2, wave 0's line is printed while
 * wave 1's first chunk's read is held (until that line is on the console, two minutes at most);
 * each wave's line and the completion line once, in order, before the main job's own snapshot line;
 * a rerun and the Backfill job print only the waves they read.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class ChunkWaveLinesTest {
  private static final String APP = "wave-lines";

  /** Chunks [0,2) [2,4) [4,6) [6,end) of orders 0..7, 2 a wave: chunk 2's read is from key 4. */
  private static final String CHUNK_2 = "[4]";

  private static final Pattern WAVE_0 =
      Pattern.compile(
          "Backfill of dbo_orders: wave 0 committed, chunks 2/4, 4 rows, [0-9,]+ rows/s, ETA \\d+ s");
  private static final Pattern WAVE_1 =
      Pattern.compile(
          "Backfill of dbo_orders: wave 1 committed, chunks 4/4, 8 rows, [0-9,]+ rows/s, done");

  @TempDir Path dir;

  @ParameterizedTest
  @ValueSource(strings = {Runners.DIRECT, Runners.SPARK, Runners.FLINK})
  void eachWavesLineIsPrintedOnceWhileTheSnapshotIsReadThenTheCompletion(String runner) {
    assumeTrue(Runners.available(runner), Runners.missing(runner));
    JobFixture f = ChunkedSnapshotJobTest.orders(dir, 8);
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    ChunkCommitsAsReadTest.HeldRead held =
        new ChunkCommitsAsReadTest.HeldRead(
            f.db.clientFactory(),
            CHUNK_2,
            () -> bytes.toString(StandardCharsets.UTF_8).contains("wave 0 committed"),
            2,
            TimeUnit.MINUTES);
    PipelineOptions options =
        runner.equals(Runners.DIRECT) ? JobFixture.direct() : Runners.options(runner);

    String printed = run(config(f, held, 0), options, bytes);

    assertEquals(Boolean.TRUE, held.sawCondition(), "wave 0's line printed during chunk 2's read");
    assertEquals(everyWave(f), snapshotLines(printed));
  }

  /**
   * A continuous run (the DirectRunner following the source) prints the waves' lines and the
   * completion while it runs, before it is stopped; each once.
   */
  @Test
  void aContinuousRunPrintsTheLinesWhileItFollows() throws Exception {
    JobFixture f = ChunkedSnapshotJobTest.orders(dir, 8);
    ContinuousMode.Stop stop = ContinuousMode.Stop.create();
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);
    CompletableFuture<JobSummary> job =
        JobFixture.following(
            config(f, f.db.clientFactory(), 0),
            JobFixture.direct(),
            out,
            Duration.ofMinutes(3),
            stop);
    boolean runningAtCompletion;
    try {
      long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
      while (!bytes.toString(StandardCharsets.UTF_8).contains(" complete: ")
          && !job.isDone()
          && System.nanoTime() < deadline) {
        Thread.sleep(50);
      }
      runningAtCompletion = !job.isDone();
    } finally {
      stop.request();
    }
    job.get(2, TimeUnit.MINUTES);
    stop.forget();

    String printed = bytes.toString(StandardCharsets.UTF_8);
    assertTrue(runningAtCompletion, "the completion line came while the run followed: " + printed);
    assertEquals(everyWave(f), snapshotLines(printed));
  }

  /**
   * A run that reads wave 0 (--maxWaves=1) prints its line and no completion; the rerun prints wave
   * 1's and the completion, not wave 0's again.
   */
  @Test
  void aRerunPrintsOnlyTheWavesItReads() {
    JobFixture f = ChunkedSnapshotJobTest.orders(dir, 8);

    String first = run(config(f, f.db.clientFactory(), 1), JobFixture.direct());
    String second = run(config(f, f.db.clientFactory(), 0), JobFixture.direct());

    String s = s(f);
    assertEquals(
        List.of(
            "W0",
            "Chunked snapshot of dbo_orders at S = "
                + s
                + ": chunks 2/4, 4 rows, open (run Backfill, or CdcToDelta with --backfill, to read"
                + " the rest)"),
        snapshotLines(first));
    assertEquals(everyWave(f).subList(1, 4), snapshotLines(second));
  }

  /**
   * The Backfill job prints each wave's line once (as the facts table records it, at the latest
   * when the wave's pipeline ends), then the completion, after a run that opened and planned the
   * snapshot.
   */
  @Test
  void theBackfillJobPrintsEachWaveOnceThenTheCompletion() {
    JobFixture f = ChunkedSnapshotJobTest.orders(dir, 8);
    run(config(f, f.db.clientFactory(), 0, false), JobFixture.direct());
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    BackfillWaves.Result result;
    try (PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8)) {
      result =
          BackfillWaves.run(
              config(f, f.db.clientFactory(), 0, false),
              JobFixture.direct(),
              0,
              null,
              Clock.systemUTC(),
              out);
    }

    assertEquals(2, result.waves());
    assertEquals(
        List.of(
            "Backfill of dbo_orders: reading wave 0 (chunks 0..1 of 4)",
            "W0",
            "Backfill of dbo_orders: reading wave 1 (chunks 2..3 of 4)",
            "W1",
            completion(f)),
        snapshotLines(bytes.toString(StandardCharsets.UTF_8)));
  }

  /** What a run that read every wave prints about the snapshot, in order. */
  private static List<String> everyWave(JobFixture f) {
    return List.of(
        "W0",
        "W1",
        completion(f),
        "Chunked snapshot of dbo_orders at S = " + s(f) + ": chunks 4/4, 8 rows, complete");
  }

  /** The snapshot's S, from the facts table. */
  private static String s(JobFixture f) {
    return state(f).open().s().toString();
  }

  /** The completion line of {@code f}'s complete snapshot: its S, rows, chunks and last stamp. */
  private static String completion(JobFixture f) {
    ChunkedSnapshotFacts.State state = state(f);
    return "Chunked snapshot "
        + state.open().s()
        + " of "
        + f.bronze
        + " complete: 8 rows in 4 chunks, last stamp "
        + state.maxStamp().orElseThrow();
  }

  private static ChunkedSnapshotFacts.State state(JobFixture f) {
    return ChunkedSnapshotFacts.read(f.tables, f.facts, APP, f.bronze).chunked().orElseThrow();
  }

  /** The job on {@code source}: a chunked bootstrap of 2 rows a chunk, 2 chunks a wave. */
  private static JobConfig config(JobFixture f, CdcClientFactory source, int maxWaves) {
    return config(f, source, maxWaves, true);
  }

  private static JobConfig config(
      JobFixture f, CdcClientFactory source, int maxWaves, boolean backfill) {
    return JobConfig.builder(source, JobFixture.CI, f.bronze, f.facts, f.control)
        .appId(APP)
        .maxCommitsPerBatch(4)
        .snapshot(new SnapshotSettings(SnapshotSettings.Mode.CHUNKED, 2, 2, backfill, maxWaves))
        .build();
  }

  private static String run(JobConfig config, PipelineOptions options) {
    return run(config, options, new ByteArrayOutputStream());
  }

  /** The main job's bounded run; what it printed (also in {@code bytes} as it prints). */
  private static String run(
      JobConfig config, PipelineOptions options, ByteArrayOutputStream bytes) {
    try (PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8)) {
      CdcToDeltaJob.run(config, options, out, () -> {});
    }
    return bytes.toString(StandardCharsets.UTF_8);
  }

  /**
   * The printed lines about the snapshot's progress in their order, a wave's line as {@code W<w>}
   * once it matches its pattern exactly (the rate and the ETA vary).
   */
  private static List<String> snapshotLines(String printed) {
    return printed
        .lines()
        .filter(l -> l.startsWith("Backfill of ") || l.startsWith("Chunked snapshot "))
        .map(l -> WAVE_0.matcher(l).matches() ? "W0" : WAVE_1.matcher(l).matches() ? "W1" : l)
        .toList();
  }
}
