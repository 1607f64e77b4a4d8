package org.lakecdc.pipelines;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.stream.Stream;
import org.apache.beam.sdk.options.PipelineOptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.lakecdc.io.mssqlcdc.client.CdcClient;
import org.lakecdc.io.mssqlcdc.client.CdcClientFactory;
import org.lakecdc.pipelines.targets.JobConfig;
import org.lakecdc.pipelines.targets.SnapshotSettings;
import org.lakecdc.transforms.delta.CommitSummary;
import org.lakecdc.transforms.snapshot.ChunkedSnapshotFacts;

/**
 * A chunk of a chunked bootstrap is committed by the worker that read it as soon as the chunks
 * before it are committed (docs/runners.md "Continuous mode"), not after the other chunks' reads:
 * the last chunk's read is held inside the source until chunk 0's bronze commit and its {@code
 * snapshot_chunk} facts row are in the logs (or two minutes pass, which fails the test), on the
 * DirectRunner, on Spark {@code local[2]} (where a stateful step after the reads runs only after
 * the whole reading stage) and on Flink with parallelism 2 (likewise in its batch mode).
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class ChunkCommitsAsReadTest {
  private static final String APP = "commit-as-read";

  @TempDir Path dir;

  @ParameterizedTest
  @ValueSource(strings = {Runners.DIRECT, Runners.SPARK, Runners.FLINK})
  void chunkZeroIsCommittedBeforeTheLastChunksReadEnds(String runner) {
    assumeTrue(Runners.available(runner), Runners.missing(runner));
    JobFixture f = ChunkedSnapshotJobTest.orders(dir, 8);
    // Chunks [0,2) [2,4) [4,6) [6,end): the last one's read starts from key 6.
    HeldRead last = untilChunkZeroCommitted(f, "[6]");
    PipelineOptions options =
        runner.equals(Runners.DIRECT) ? JobFixture.direct() : Runners.options(runner);

    f.run(config(f, last, 4), options, () -> {});

    assertEquals(Boolean.TRUE, last.sawCondition(), "chunk 0 committed during the last read");
    assertEquals(
        List.of("0,0,null,2,false", "1,0,2,4,false", "2,0,4,6,false", "3,0,6,8,true"),
        ChunkedSnapshotJobTest.chunkFacts(f));
    assertEquals(List.of(0L, 1L, 2L, 3L), bronzeChunkCommits(f));
    assertEquals(1, ChunkedSnapshotJobTest.facts(f, "bootstrap").size());
  }

  /**
   * One chunk a wave on the DirectRunner: chunk 0 is committed before chunk 2's read starts (its
   * SELECT is held until then, two minutes at most; a new user saw all the chunks read before wave
   * 0's commit). The DirectRunner's pool takes the chunks in an order of its own, so chunk 2 may
   * come first and wait.
   */
  @Test
  void withOneChunkAWaveChunkZeroIsCommittedBeforeChunkTwosReadStarts() {
    JobFixture f = ChunkedSnapshotJobTest.orders(dir, 8);
    HeldRead third = untilChunkZeroCommitted(f, "[4]");

    f.run(config(f, third, 1), JobFixture.direct(), () -> {});

    assertEquals(Boolean.TRUE, third.sawCondition(), "chunk 0 committed when chunk 2's read began");
    assertEquals(
        List.of("0,0,null,2,false", "1,1,2,4,false", "2,2,4,6,false", "3,3,6,8,true"),
        ChunkedSnapshotJobTest.chunkFacts(f));
    assertEquals(List.of(0L, 1L, 2L, 3L), bronzeChunkCommits(f));
  }

  /**
   * A chunk handed over on one worker makes the next chunk's reader on another worker hand over at
   * once: chunk 0's read is held until chunk 1's reader, after waiting its bound, has left its
   * hand-over marker in bronze; chunk 2's reader then runs as in another JVM (this JVM's record of
   * hand-overs forgotten, so only the marker tells it) and hands over because of chunk 1, on the
   * DirectRunner, on Spark {@code local[2]} and on Flink with parallelism 2. Every chunk is
   * committed once in order, and the completion deletes the markers.
   */
  @ParameterizedTest
  @ValueSource(strings = {Runners.DIRECT, Runners.SPARK, Runners.FLINK})
  void aHandOverOnAnotherWorkerIsSeenThroughItsMarkerInBronze(String runner) throws Exception {
    assumeTrue(Runners.available(runner), Runners.missing(runner));
    JobFixture f = ChunkedSnapshotJobTest.orders(dir, 8);
    HandOverHooks.forgetInThisJvm();
    Path markers = Path.of(f.bronze, "_chunk_handovers");
    HeldRead chunkZero =
        new HeldRead(
            f.db.clientFactory(),
            "null",
            () -> HandOverHooks.markerOf(markers, 1),
            2,
            TimeUnit.MINUTES);
    HeldRead chunkTwo =
        new HeldRead(
            chunkZero,
            "[4]",
            () -> HandOverHooks.markerOf(markers, 1) && HandOverHooks.forgetInThisJvm(),
            2,
            TimeUnit.MINUTES);
    PipelineOptions options =
        runner.equals(Runners.DIRECT) ? JobFixture.direct() : Runners.options(runner);

    f.run(config(f, chunkTwo, 4), options, () -> {});

    assertEquals(Boolean.TRUE, chunkTwo.sawCondition(), "chunk 1's marker before chunk 2's read");
    assertEquals(
        "chunk 1 was handed to the ordered committer by another worker", HandOverHooks.reason(2));
    assertEquals(
        List.of("0,0,null,2,false", "1,0,2,4,false", "2,0,4,6,false", "3,0,6,8,true"),
        ChunkedSnapshotJobTest.chunkFacts(f));
    assertEquals(List.of(0L, 1L, 2L, 3L), bronzeChunkCommits(f));
    assertEquals(1, ChunkedSnapshotJobTest.facts(f, "bootstrap").size());
    assertFalse(Files.exists(markers), "the completion deletes the markers");
  }

  /**
   * The chunk readers' hand-over record of this JVM ({@code WriteChunksToDelta.CommitAfterRead},
   * package-private in transforms, reached by reflection) and the markers they leave in bronze.
   */
  static final class HandOverHooks {
    private static final String READER =
        "org.lakecdc.transforms.snapshot.WriteChunksToDelta$CommitAfterRead";

    private HandOverHooks() {}

    private static Object call(String method) {
      try {
        java.lang.reflect.Method m = Class.forName(READER).getDeclaredMethod(method);
        m.setAccessible(true);
        return m.invoke(null);
      } catch (ReflectiveOperationException e) {
        throw new IllegalStateException("No test hook " + READER + "." + method, e);
      }
    }

    /** Forgets this JVM's record of hand-overs, as a worker JVM started after them; true. */
    static boolean forgetInThisJvm() {
      call("forgetHandOversInThisJvm");
      return true;
    }

    /** Why chunk {@code chunk} was handed over, in the one run this JVM's record holds it for. */
    static String reason(int chunk) {
      @SuppressWarnings("unchecked")
      Map<String, Map<Integer, String>> runs =
          (Map<String, Map<Integer, String>>) call("handOvers");
      List<String> reasons =
          runs.values().stream().filter(r -> r.containsKey(chunk)).map(r -> r.get(chunk)).toList();
      assertEquals(1, reasons.size(), "one run handed chunk " + chunk + " over: " + runs);
      return reasons.get(0);
    }

    /** Whether a hand-over marker of chunk {@code chunk} is under {@code markers}. */
    static boolean markerOf(Path markers, int chunk) {
      try (Stream<Path> files = Files.walk(markers)) {
        return files.anyMatch(p -> p.getFileName().toString().equals(Integer.toString(chunk)));
      } catch (NoSuchFileException e) {
        return false;
      } catch (UncheckedIOException e) {
        // A folder deleted while it was walked: the completion's delete.
        if (e.getCause() instanceof NoSuchFileException) {
          return false;
        }
        throw e;
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
  }

  /** The job on {@code source}: a chunked bootstrap of 2 rows a chunk, to the end. */
  private static JobConfig config(JobFixture f, CdcClientFactory source, int chunksPerWave) {
    return JobConfig.builder(source, JobFixture.CI, f.bronze, f.facts, f.control)
        .appId(APP)
        .maxCommitsPerBatch(4)
        .snapshot(new SnapshotSettings(SnapshotSettings.Mode.CHUNKED, 2, chunksPerWave, true, 0))
        .build();
  }

  /** The read from {@code lower} held until chunk 0 is committed, two minutes at most. */
  private static HeldRead untilChunkZeroCommitted(JobFixture f, String lower) {
    return new HeldRead(
        f.db.clientFactory(), lower, () -> chunkZeroCommitted(f), 2, TimeUnit.MINUTES);
  }

  /** Whether chunk 0's bronze commit and its facts row are in the tables' logs now. */
  private static boolean chunkZeroCommitted(JobFixture f) {
    return ChunkedSnapshotFacts.read(f.tables, f.facts, APP, f.bronze)
        .chunked()
        .filter(state -> state.chunks().containsKey(0))
        .map(
            state ->
                f.tables
                        .latestTransactionVersion(
                            f.bronze, ChunkedSnapshotFacts.bronzeAppId(APP, state.open().s()))
                        .orElse(-1)
                    >= 0)
        .orElse(false);
  }

  /** The chunks' bronze transaction versions in commit order. */
  private static List<Long> bronzeChunkCommits(JobFixture f) {
    return f.tables.history(f.bronze).stream()
        .filter(c -> c.txnAppId() != null && c.txnAppId().startsWith(APP + "#snap."))
        .sorted(Comparator.comparingLong(CommitSummary::version))
        .map(c -> c.txnVersion().getAsLong())
        .toList();
  }

  /**
   * A client factory of the simulator that holds the table read whose lower bound is {@code lower}
   * (one chunk's SELECT) until {@code condition} holds, checking it every 50 ms for at most the
   * given time, and records whether it held. The condition lives in this JVM by name, so the
   * factory stays serializable for the DirectRunner, Spark's {@code local[2]} and Flink's
   * mini-cluster.
   */
  static final class HeldRead implements CdcClientFactory {
    private static final long serialVersionUID = 1L;
    private static final Map<String, BooleanSupplier> CONDITIONS = new ConcurrentHashMap<>();
    private static final Map<String, Boolean> SEEN = new ConcurrentHashMap<>();

    private final CdcClientFactory delegate;
    private final String lower;
    private final long waitMillis;
    private final String name = UUID.randomUUID().toString();

    HeldRead(
        CdcClientFactory delegate,
        String lower,
        BooleanSupplier condition,
        long wait,
        TimeUnit unit) {
      this.delegate = delegate;
      this.lower = lower;
      this.waitMillis = unit.toMillis(wait);
      CONDITIONS.put(name, condition);
    }

    /** Whether the condition held when the read went on; null when no read had that bound. */
    Boolean sawCondition() {
      return SEEN.get(name);
    }

    @Override
    public CdcClient open() {
      return ReadTableHook.intercept(
          delegate.open(),
          (query, read) -> {
            String bound = query.lowerInclusive().map(Object::toString).orElse("null");
            if (bound.equals(lower)) {
              BooleanSupplier condition = CONDITIONS.get(name);
              long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(waitMillis);
              boolean held = condition.getAsBoolean();
              while (!held && System.nanoTime() < deadline) {
                Thread.sleep(50);
                held = condition.getAsBoolean();
              }
              SEEN.put(name, held);
            }
            return read.call();
          });
    }
  }
}
