package org.lakecdc.pipelines;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.coders.SerializableCoder;
import org.apache.beam.sdk.transforms.Create;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.pipelines.cdc.JobSummary;
import org.lakecdc.pipelines.targets.JobConfig;
import org.lakecdc.pipelines.targets.RunCounters;
import org.lakecdc.transforms.bronze.BatchStats;
import org.lakecdc.transforms.bronze.CommittedBatch;
import org.lakecdc.transforms.delta.HadoopConf;

/**
 * The run summary comes from the pipeline's counters and the tables' metadata: the launcher reads
 * no row of the facts table back.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class RunSummaryTest {
  @TempDir Path dir;

  private static CommittedBatch batch(
      long id, long inserts, long updates, long deletes, boolean skipped) {
    BatchStats stats =
        new BatchStats(
            id, inserts + updates * 2 + deletes, null, null, null, null, deletes, inserts, updates);
    return new CommittedBatch(id, stats, "0x00", Instant.EPOCH, -1, skipped, null, 0, "app", null);
  }

  @Test
  void theCountersSumTheCommittedBatchesButNotTheReplayedOnes() {
    Pipeline pipeline = Pipeline.create(JobFixture.direct());
    pipeline
        .apply(
            Create.of(batch(1, 3, 1, 0, false), batch(2, 0, 2, 4, false), batch(3, 9, 9, 9, true))
                .withCoder(SerializableCoder.of(CommittedBatch.class)))
        .apply(RunCounters.count());
    PipelineResult result = pipeline.run();
    result.waitUntilFinish();
    assertEquals(2, RunCounters.batches(result));
    assertEquals(
        Map.of("rows", 13L, "insert", 3L, "update", 3L, "delete", 4L),
        RunCounters.rowsByOperation(result));
  }

  @Test
  void noBatchIsNoCount() {
    Pipeline pipeline = Pipeline.create(JobFixture.direct());
    pipeline
        .apply(Create.empty(SerializableCoder.of(CommittedBatch.class)))
        .apply(RunCounters.count());
    PipelineResult result = pipeline.run();
    result.waitUntilFinish();
    assertEquals(0, RunCounters.batches(result));
    assertEquals(Map.of(), RunCounters.rowsByOperation(result));
  }

  @Test
  void theSummaryOfARunReadsNoDataFileOfTheFactsTable() {
    JobFixture f = JobFixture.history(dir);
    String scheme = SchemeFileSystem.SCHEME + "://";
    JobConfig config =
        JobConfig.builder(
                f.db.clientFactory(),
                JobFixture.CI,
                scheme + f.bronze,
                scheme + f.facts,
                scheme + f.control)
            .bootstrap(false)
            .maxCommitsPerBatch(4)
            .hadoopConf(
                HadoopConf.of(
                    Map.of(
                        "fs." + SchemeFileSystem.SCHEME + ".impl",
                        SchemeFileSystem.class.getName(),
                        "io.delta.kernel.logStore." + SchemeFileSystem.SCHEME + ".impl",
                        "io.delta.storage.LocalLogStore")))
            .build();
    f.run(config);
    SchemeFileSystem.watch(f.facts);
    assertEquals(3, SchemeFileSystem.watchedFiles(), "the first run's three facts rows");
    try {
      f.db
          .transaction(JobFixture.at(130))
          .insert(JobFixture.ORDERS, JobFixture.order(1000, "new", "1.00"))
          .commit();
      f.db
          .transaction(JobFixture.at(131))
          .delete(JobFixture.ORDERS, java.util.List.of(1000))
          .commit();
      JobSummary second = f.run(config);
      assertEquals(1, second.batches());
      assertEquals(
          Map.of("rows", 2L, "insert", 1L, "update", 0L, "delete", 1L), second.rowsByOperation());
      assertEquals(0, SchemeFileSystem.DATA_FILE_OPENS.get(), "facts rows read back");
    } finally {
      SchemeFileSystem.unwatch();
    }
  }
}
