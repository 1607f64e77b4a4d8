package org.lakecdc.pipelines.cdc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.Pipeline.PipelineExecutionException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.pipelines.JobFixture;
import org.lakecdc.pipelines.targets.TablePlan;
import org.lakecdc.pipelines.targets.Target;
import org.lakecdc.transforms.bronze.CrashPlan;
import org.lakecdc.transforms.bronze.CrashPoint;
import org.lakecdc.transforms.bronze.TableWrite;
import org.lakecdc.transforms.finalization.Finalization;
import org.lakecdc.transforms.position.StreamPosition;

/**
 * A committer task run again within the same run, as a cluster runner does when the worker of a
 * task dies (Spark retries the task, Flink restarts the job): the retried attempt has the same
 * target and start position as the first, and the tables hold whatever the first attempt committed
 * before it died. Every batch must still end with its bronze rows once and its facts row once.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class RetriedCommitterTest {
  @TempDir Path dir;

  /** The facts rows of {@link JobFixture#history}'s three batches ("batch:rows:end_lsn"). */
  private static final List<String> THREE_BATCHES =
      List.of(
          "0:12:0x0000002A000001000031",
          "1:12:0x0000002A000001000071",
          "2:4:0x0000002A0000010000A1");

  private static List<String> withoutBatch(List<String> bronze) {
    return bronze.stream()
        .map(s -> s.substring(0, s.lastIndexOf('/')))
        .sorted()
        .collect(Collectors.toList());
  }

  /** The launcher's plan of the fixture's table: what every attempt of the committer is given. */
  private static TableWrite plannedWrite(JobFixture f) {
    PrintStream quiet = new PrintStream(OutputStream.nullOutputStream());
    return TablePlan.prepare(Target.of(f.config()), JobFixture.direct(), quiet).write(null);
  }

  /** One attempt of the change pipeline of {@code write}, to its end. */
  static void attempt(TableWrite write) {
    Pipeline pipeline = Pipeline.create(JobFixture.direct());
    CdcToDeltaJob.expand(pipeline, List.of(write), false, false);
    pipeline.run().waitUntilFinish();
  }

  private static TableWrite withCrash(TableWrite write, CrashPoint point, long batch) {
    return new TableWrite(
        write.read(),
        write.target().withCrash(CrashPlan.batch(point, batch)),
        write.changeSchema());
  }

  @Test
  void anAttemptStoppedAfterABronzeCommitIsFollowedByOneThatWritesTheBatchsFactsRow() {
    JobFixture f = JobFixture.history(dir);
    TableWrite write = plannedWrite(f);
    PipelineExecutionException killed =
        assertThrows(
            PipelineExecutionException.class,
            () -> attempt(withCrash(write, CrashPoint.AFTER_BRONZE_COMMIT, 1)));
    assertInstanceOf(CrashPoint.SimulatedCrash.class, killed.getCause());
    assertEquals(
        1,
        StreamPosition.fromJson(f.tables.domainMetadata(f.bronze, StreamPosition.BRONZE_DOMAIN))
            .orElseThrow()
            .batchId(),
        "the first attempt committed batch 1 to bronze");
    assertEquals(
        List.of("0:12:0x0000002A000001000031"),
        f.factBatches(),
        "and stopped before its facts row");

    attempt(write);

    assertEquals(THREE_BATCHES, f.factBatches(), "one facts row per batch");
    assertEquals(f.sourceChanges(), withoutBatch(f.bronzeChanges()), "every change exactly once");
    assertEquals(
        LocalDateTime.of(2026, 9, 28, 15, 0),
        new Finalization(f.tables, f.control, java.time.Clock.systemUTC())
            .verdict(f.bronze)
            .orElseThrow());
    // The run's summary counts what the facts table holds after the start, whichever attempt
    // committed it: batch 0 by the first attempt, batches 1 and 2 by the second.
    RunFacts summary =
        RunFacts.after(
            f.tables, f.facts, write.target().appId(), f.bronze, write.target().start().batchId());
    assertEquals(3, summary.batches());
    assertEquals(
        Map.of("rows", 28L, "insert", 25L, "update", 1L, "delete", 1L), summary.rowsByOperation());
    assertEquals(
        1,
        RunFacts.after(f.tables, f.facts, write.target().appId(), f.bronze, 1).batches(),
        "after batch 1: batch 2 alone");
    assertEquals(
        0,
        RunFacts.after(f.tables, f.facts, write.target().appId(), f.bronze + "-other", -1)
            .batches(),
        "another bronze table's rows are not this target's");
  }

  @Test
  void anAttemptOvertakenByItsRetryWritesNothingTwiceAndLosesNothing() {
    JobFixture f = JobFixture.history(dir);
    TableWrite write = plannedWrite(f);
    // TableWrite is not serializable; its parts are.
    org.lakecdc.io.mssqlcdc.MssqlCdcIO.Read read = write.read();
    org.lakecdc.transforms.bronze.DeltaTarget target = write.target();
    org.apache.beam.sdk.schemas.Schema schema = write.changeSchema();
    // The first attempt, held after its batch 0 while its retry (same target, same start) runs to
    // the end, then going on with batches 1 and 2, which the retry has committed: a zombie task
    // attempt still running next to the attempt that replaced it.
    TableWrite zombie =
        new TableWrite(
            write.read(),
            write
                .target()
                .withAfterCommit(
                    batch -> {
                      if (batch == 0) {
                        attempt(new TableWrite(read, target, schema));
                      }
                    }),
            write.changeSchema());

    attempt(zombie);

    assertEquals(THREE_BATCHES, f.factBatches(), "one facts row per batch");
    assertEquals(f.sourceChanges(), withoutBatch(f.bronzeChanges()), "every change exactly once");
    assertEquals(
        LocalDateTime.of(2026, 9, 28, 15, 0),
        new Finalization(f.tables, f.control, java.time.Clock.systemUTC())
            .verdict(f.bronze)
            .orElseThrow(),
        "the zombie's later batches leave the verdict where the retry put it");
  }
}
