package org.lakecdc.pipelines;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.apache.beam.sdk.options.PipelineOptions;
import org.apache.beam.sdk.values.Row;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.lakecdc.io.mssqlcdc.schema.MetadataColumns;
import org.lakecdc.pipelines.cli.CommandLine;
import org.lakecdc.pipelines.targets.JobConfig;
import org.lakecdc.pipelines.targets.SnapshotSettings;
import org.lakecdc.transforms.delta.CommitSummary;
import org.lakecdc.transforms.facts.FactsTable;

/**
 * The chunks of one wave of a chunked bootstrap are read at the same time by two of the runner's
 * workers (docs/tables.md "Chunked snapshots"), on the DirectRunner with the pool the job's command
 * line gives it, on the SparkRunner ({@code local[2]}) and on the FlinkRunner (parallelism 2): two
 * table reads meet inside the source ({@link ChunkReadRendezvous}: each waits until the other has
 * started), on two threads, with overlapping intervals, chunks 0 and 1 first on Spark and Flink
 * (the plan's order); then every chunk commits once, in order. The runners' own names of those
 * threads say who read what: on Spark each chunk is a task of one stage (chunk c the stage's task
 * c), on Flink both subtasks of the chunk source read chunks.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class ParallelChunksTest {
  private static final Pattern SPARK_TASK =
      Pattern.compile(
          "Executor task launch worker for task (\\d+)\\.\\d+ in stage (\\d+)\\.\\d+ \\(TID"
              + " \\d+\\)#\\d+");
  private static final Pattern FLINK_SUBTASK = Pattern.compile(".* \\((\\d+)/2\\)#\\d+#\\d+");

  @TempDir Path dir;

  @ParameterizedTest
  @ValueSource(strings = {Runners.DIRECT, Runners.SPARK, Runners.FLINK})
  void twoChunksOfOneWaveAreReadAtOnceOnTwoThreadsAndCommitInOrder(String runner) {
    assumeTrue(Runners.available(runner), Runners.missing(runner));
    JobFixture f = ChunkedSnapshotJobTest.orders(dir, 8);
    ChunkReadRendezvous reads = new ChunkReadRendezvous(f.db.clientFactory(), 2);
    JobConfig config =
        JobConfig.builder(reads, JobFixture.CI, f.bronze, f.facts, f.control)
            .appId("parallel-chunks")
            .maxCommitsPerBatch(4)
            .snapshot(new SnapshotSettings(SnapshotSettings.Mode.CHUNKED, 2, 4, true, 0))
            .build();
    PipelineOptions options =
        runner.equals(Runners.DIRECT)
            // The job's own command line: its DirectRunner pool (one thread on two processors).
            ? CommandLine.parseOnly(new String[] {"--runner=DirectRunner"}, PipelineOptions.class)
            : Runners.options(runner);

    f.run(config, options, () -> {});

    List<ChunkReadRendezvous.Read> done = reads.reads();
    assertEquals(4, done.size(), "one read per chunk: " + done);
    assertTrue(
        done.stream().allMatch(ChunkReadRendezvous.Read::met),
        "no read waited in vain for a second one: " + done);
    List<ChunkReadRendezvous.Read> byStart =
        done.stream()
            .sorted(Comparator.comparingLong(ChunkReadRendezvous.Read::startNanos))
            .toList();
    ChunkReadRendezvous.Read a = byStart.get(0);
    ChunkReadRendezvous.Read b = byStart.get(1);
    assertNotEquals(a.thread(), b.thread(), "two threads: " + done);
    assertTrue(a.overlaps(b), "overlapping reads: " + done);
    if (!runner.equals(Runners.DIRECT)) {
      // In the plan's order, the order of the commits (Flink's batch mode hands a source's splits
      // out last first: the chunk source lists them so): chunks 0 and 1 first, then 2 and 3. The
      // DirectRunner's pool takes the chunks' bundles in an order of its own.
      assertEquals(Set.of("null", "[2]"), Set.of(a.lower(), b.lower()), "the first reads: " + done);
    }
    if (runner.equals(Runners.SPARK)) {
      // Spark names a task's thread after its task: "Executor task launch worker for task
      // <partition>.<attempt> in stage <stage>.<attempt> (TID <n>)". Each chunk is a split of its
      // own, so a partition, a task, of one stage: chunk c (lower bound) is task c.
      Map<String, String> taskOfChunk = new TreeMap<>();
      Set<String> stages = new TreeSet<>();
      for (ChunkReadRendezvous.Read read : done) {
        Matcher m = SPARK_TASK.matcher(read.thread());
        assertTrue(m.matches(), "a Spark task's thread: " + read.thread());
        taskOfChunk.put(read.lower(), m.group(1));
        stages.add(m.group(2));
      }
      assertEquals(Map.of("null", "0", "[2]", "1", "[4]", "2", "[6]", "3"), taskOfChunk);
      assertEquals(1, stages.size(), "one stage reads every chunk: " + done);
    }
    if (runner.equals(Runners.FLINK)) {
      // Flink names a subtask's thread "<operators> (<subtask>/<parallelism>)#<attempt>": both
      // subtasks of the chunk source read chunks.
      Set<String> subtasks = new TreeSet<>();
      for (ChunkReadRendezvous.Read read : done) {
        Matcher m = FLINK_SUBTASK.matcher(read.thread());
        assertTrue(m.matches(), "a Flink subtask's thread: " + read.thread());
        subtasks.add(m.group(1));
      }
      assertEquals(Set.of("1", "2"), subtasks, "the chunks' subtasks: " + done);
    }

    List<Row> bronze = ChunkedSnapshotJobTest.bronze(f);
    assertEquals(8, bronze.size());
    assertEquals(
        Map.of(0, 2L, 1, 2L, 2, 2L, 3, 2L),
        bronze.stream()
            .collect(
                Collectors.groupingBy(
                    r -> r.getInt32(MetadataColumns.CHUNK), TreeMap::new, Collectors.counting())));
    assertEquals(
        List.of("0,0,null,2,false", "1,0,2,4,false", "2,0,4,6,false", "3,0,6,8,true"),
        ChunkedSnapshotJobTest.chunkFacts(f));
    assertEquals(
        List.of(2L, 2L, 2L, 2L),
        ChunkedSnapshotJobTest.facts(f, "snapshot_chunk").stream()
            .map(r -> r.getInt64(FactsTable.ROWS))
            .toList());
    List<Row> completion = ChunkedSnapshotJobTest.facts(f, "bootstrap");
    assertEquals(1, completion.size());
    assertEquals(8L, completion.get(0).getInt64(FactsTable.ROWS));
    assertEquals(
        List.of(0L, 1L, 2L, 3L),
        f.tables.history(f.bronze).stream()
            .filter(c -> c.txnAppId() != null && c.txnAppId().startsWith("parallel-chunks#"))
            .sorted(Comparator.comparingLong(CommitSummary::version))
            .map(c -> c.txnVersion().getAsLong())
            .toList(),
        "one bronze commit per chunk, in chunk order");
  }
}
