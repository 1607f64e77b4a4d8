package org.lakecdc.transforms.silver;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.lakecdc.transforms.silver.BronzeLog.del;
import static org.lakecdc.transforms.silver.BronzeLog.ins;
import static org.lakecdc.transforms.silver.BronzeLog.lsn;
import static org.lakecdc.transforms.silver.BronzeLog.ts;
import static org.lakecdc.transforms.silver.BronzeLog.upd;

import java.nio.file.Path;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.coders.VarIntCoder;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.schemas.Schema.FieldType;
import org.apache.beam.sdk.testing.TestStream;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.PCollectionTuple;
import org.apache.beam.sdk.values.TupleTag;
import org.apache.beam.sdk.values.TupleTagList;
import org.joda.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.transforms.bronze.BatchStats;
import org.lakecdc.transforms.bronze.CommittedBatch;
import org.lakecdc.transforms.bronze.CommittedBatchCoder;
import org.lakecdc.transforms.delta.DeltaTables;
import org.lakecdc.transforms.delta.HadoopConf;
import org.lakecdc.transforms.facts.FactsTable;
import org.lakecdc.transforms.finalization.Granularity;
import org.lakecdc.transforms.snapshot.ChunkedSnapshotFacts;
import org.lakecdc.transforms.snapshot.ChunkedSnapshotFacts.ChunkFact;
import org.lakecdc.transforms.snapshot.ChunkedSnapshotFacts.Open;
import org.lakecdc.transforms.snapshot.ChunkedSnapshotFacts.Plan;
import org.lakecdc.transforms.snapshot.CommittedChunk;

/** ApplyChangesToSilver.withChunks: silver applies after each committed chunk too. */
class ApplyChangesToSilverChunksTest {
  private static final String APP = "chunk-v1";
  private static final TupleTag<CommittedBatch> BATCHES = new TupleTag<>() {};
  private static final TupleTag<CommittedChunk> CHUNKS = new TupleTag<>() {};

  @TempDir Path dir;

  private final DeltaTables tables = DeltaTables.create();

  private String path(String name) {
    return dir.resolve(name).toString();
  }

  private static Instant instant(long n) {
    return ts(n).toInstant(ZoneOffset.UTC);
  }

  private static void fact(DeltaTables tables, String facts, org.apache.beam.sdk.values.Row row) {
    tables.append(facts, FactsTable.SCHEMA, List.of(row), null, 0, Map.of());
  }

  /** Chunk {@code index} of S = lsn(5) stamped lsn(11): its bronze rows and its facts row. */
  static void writeChunk(
      DeltaTables tables,
      String bronze,
      String facts,
      int index,
      String lo,
      String hi,
      Object... keyStatus) {
    new BronzeLog(tables, bronze, facts, "unused", true).chunk(5, 11, index, keyStatus);
    fact(
        tables,
        facts,
        new ChunkFact(
                APP,
                bronze,
                Lsn.parse(lsn(5)),
                index,
                0,
                lo,
                hi,
                false,
                keyStatus.length / 2,
                Lsn.parse(lsn(11)),
                instant(11),
                null,
                null,
                null,
                null,
                null)
            .toRow(instant(11)));
  }

  /**
   * Step 0 emits bronze's batch ending at lsn(11); step 1 commits chunk 1 (completing wave 0) and
   * emits it. The chunk's apply is not dropped although bronze's end did not move.
   */
  static final class Committer extends DoFn<Integer, CommittedBatch> {
    private final String bronze;
    private final String facts;

    Committer(String bronze, String facts) {
      this.bronze = bronze;
      this.facts = facts;
    }

    @ProcessElement
    public void process(@Element Integer step, MultiOutputReceiver out) {
      if (step == 0) {
        out.get(BATCHES)
            .output(
                new CommittedBatch(
                    1, BatchStats.empty(1), lsn(11), instant(11), -1, false, null, 0, APP, null));
      } else {
        writeChunk(DeltaTables.create(), bronze, facts, 1, "2", "4", 2, "new");
        out.get(CHUNKS).output(new CommittedChunk(APP, lsn(5), 1, 0, 1, lsn(11), 3, false, false));
      }
    }
  }

  @Test
  void c175ACommittedChunkAppliesItsWaveAfterABatchThatReachedTheSameLsn() {
    BronzeLog log =
        new BronzeLog(
            tables, path("bronze"), path("facts"), path("control"), true, FieldType.INT32);
    fact(
        tables,
        log.facts,
        new Open(
                APP,
                log.bronze,
                Lsn.parse(lsn(5)),
                instant(5),
                ChunkedSnapshotFacts.MODE_CHUNKED,
                ChunkedSnapshotFacts.KIND_BOOTSTRAP,
                0,
                List.of("order_id"),
                null,
                null,
                null,
                instant(5))
            .toRow(instant(5)));
    fact(
        tables,
        log.facts,
        new Plan(
                APP,
                log.bronze,
                Lsn.parse(lsn(5)),
                "int",
                List.of("order_id"),
                2,
                2,
                "[[0,null,2],[1,2,4]]",
                instant(5),
                1)
            .toRow(instant(5)));
    log.change(10, upd(1, "new", "paid"));
    log.change(11, del(3), ins(9, "new"));
    writeChunk(tables, log.bronze, log.facts, 0, "null", "2", 0, "new", 1, "paid");

    SilverTarget target =
        new SilverTarget(
            APP,
            log.bronze,
            path("silver"),
            log.control,
            log.facts,
            List.of("dbo_orders"),
            List.of("order_id"),
            Granularity.HOUR,
            1000,
            instant(0),
            HadoopConf.empty(),
            SilverTarget.DEFAULT_APPLY_INTERVAL,
            null);
    Pipeline pipeline = Pipeline.create(PipelineOptionsFactory.create());
    TestStream<Integer> steps =
        TestStream.create(VarIntCoder.of())
            .addElements(0)
            .advanceProcessingTime(Duration.standardSeconds(1))
            .addElements(1)
            .advanceWatermarkToInfinity();
    PCollectionTuple committed =
        pipeline
            .apply("Steps", steps)
            .apply(
                "Commit",
                ParDo.of(new Committer(log.bronze, log.facts))
                    .withOutputTags(BATCHES, TupleTagList.of(CHUNKS)));
    PCollection<CommittedBatch> batches = committed.get(BATCHES).setCoder(CommittedBatchCoder.of());
    PCollection<CommittedChunk> chunks =
        committed
            .get(CHUNKS)
            .setCoder(org.apache.beam.sdk.coders.SerializableCoder.of(CommittedChunk.class));
    batches.apply(ApplyChangesToSilver.of(List.of(target), false).withChunks(chunks));
    assertEquals(PipelineResult.State.DONE, pipeline.run().waitUntilFinish());

    assertEquals(
        List.of("0:new", "1:paid", "2:new", "9:new"), BronzeLog.rows(tables, path("silver")));
    SilverPosition position = SilverPosition.read(tables, path("silver")).orElseThrow();
    assertEquals(lsn(5), position.openSnapshotLsn());
    assertEquals(0, position.snapshotWave());
  }
}
