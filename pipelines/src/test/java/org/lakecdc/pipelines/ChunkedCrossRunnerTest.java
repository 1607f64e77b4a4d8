package org.lakecdc.pipelines;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;
import static org.lakecdc.pipelines.JobFixture.ORDERS;
import static org.lakecdc.pipelines.JobFixture.at;
import static org.lakecdc.pipelines.JobFixture.order;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.beam.sdk.options.PipelineOptions;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.pipelines.targets.JobConfig;

/**
 * The main job with a chunked bootstrap and the backfill beside the stream on the SparkRunner
 * ({@code local[2]}) and the FlinkRunner (mini-cluster): the same bronze rows and chunk facts as on
 * the DirectRunner.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class ChunkedCrossRunnerTest {
  @TempDir Path dir;

  /** What one run left: bronze rows by the ordering key, chunk facts, the rebuild from S. */
  record Outcome(List<String> bronze, List<String> chunks, Map<Integer, String> rebuild) {}

  private static Outcome directOutcome;

  private static Outcome scenario(Path dir, PipelineOptions options) {
    JobFixture f = ChunkedSnapshotJobTest.orders(dir, 8);
    Lsn s = f.db.openClient().maxLsn().orElseThrow();
    JobConfig config =
        ChunkedSnapshotJobTest.chunked(f, true, 0).toBuilder().numPartitions(2).build();
    f.run(
        config,
        options,
        () -> {
          f.db.transaction(at(10)).update(ORDERS, List.of(1), Map.of("status", "paid")).commit();
          f.db
              .transaction(at(11))
              .delete(ORDERS, List.of(3))
              .insert(ORDERS, order(9, "new", "9.00"))
              .commit();
        });
    return new Outcome(
        CrossRunnerJobTest.bronzeRows(f),
        ChunkedSnapshotJobTest.chunkFacts(f),
        ChunkedSnapshotJobTest.rebuild(ChunkedSnapshotJobTest.bronze(f), s));
  }

  private static synchronized Outcome direct() throws Exception {
    if (directOutcome == null) {
      directOutcome =
          scenario(Files.createTempDirectory("lakecdc-chunked"), Runners.options(Runners.DIRECT));
    }
    return directOutcome;
  }

  @ParameterizedTest
  @ValueSource(strings = {Runners.SPARK, Runners.FLINK})
  void c110TheStreamAndTheBackfillWriteTheSameTablesAsOnTheDirectRunner(String runner)
      throws Exception {
    assumeTrue(Runners.available(runner), Runners.missing(runner));
    Outcome expected = direct();
    assertEquals(
        List.of("0,0,null,2,false", "1,0,2,4,false", "2,1,4,6,false", "3,1,6,8,true"),
        expected.chunks());
    assertEquals(
        Map.of(0, "new", 1, "paid", 2, "new", 4, "new", 5, "new", 6, "new", 7, "new", 9, "new"),
        expected.rebuild());
    assertEquals(
        7 + 4,
        expected.bronze().size(),
        "7 snapshot rows; an update's before and after images, a delete and an insert");

    Outcome actual = scenario(dir, Runners.options(runner));
    assertEquals(expected, actual);
  }
}
