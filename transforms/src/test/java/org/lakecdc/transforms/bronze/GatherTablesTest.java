package org.lakecdc.transforms.bronze;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.coders.KvCoder;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.testing.PAssert;
import org.apache.beam.sdk.transforms.Create;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollection;
import org.junit.jupiter.api.Test;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.io.mssqlcdc.read.BatchSource;
import org.lakecdc.io.mssqlcdc.read.ChangeBatch;

/** The bounded committer's input: every table's batches in one element under the round key. */
class GatherTablesTest {
  /** Batch {@code sequence} of table {@code t}: LSN ...{t}{sequence}, one row, no files. */
  private static KV<String, KV<ChangeBatch, BatchFiles>> batch(int t, int sequence) {
    String table = "dbo_t" + t;
    Lsn lsn = Lsn.parse(String.format("0x0000002A0000010000%d%d", t, sequence));
    ChangeBatch batch =
        new ChangeBatch(
            table,
            lsn,
            lsn,
            Instant.parse("2026-09-28T13:50:00Z").plusSeconds(sequence),
            1,
            List.of(table),
            sequence,
            BatchSource.NONE);
    return KV.of(
        table,
        KV.of(batch, new BatchFiles(sequence + 1, List.of(), BatchStats.empty(sequence + 1))));
  }

  @Test
  void threeTablesOfThreeBatchesReachTheCommitterAsOneElementOfNineBatches() {
    List<KV<String, KV<ChangeBatch, BatchFiles>>> batches = new ArrayList<>();
    for (int sequence = 0; sequence < 3; sequence++) {
      for (int t = 1; t <= 3; t++) {
        batches.add(batch(t, sequence));
      }
    }
    Pipeline p = Pipeline.create(PipelineOptionsFactory.create());
    PCollection<KV<String, Iterable<KV<ChangeBatch, BatchFiles>>>> gathered =
        p.apply(
                Create.of(batches)
                    .withCoder(KvCoder.of(StringUtf8Coder.of(), GatherTables.batchCoder())))
            .apply(new GatherTables());
    PAssert.that(gathered)
        .satisfies(
            all -> {
              List<String> keys = new ArrayList<>();
              List<String> seen = new ArrayList<>();
              for (KV<String, Iterable<KV<ChangeBatch, BatchFiles>>> element : all) {
                keys.add(element.getKey());
                // Table after table, each table's batches in sequence order once sorted.
                for (KV<ChangeBatch, BatchFiles> b :
                    WriteChangesToDelta.inSequence(element.getValue())) {
                  seen.add(
                      b.getKey().captureInstance()
                          + ":"
                          + b.getKey().sequence()
                          + ":"
                          + b.getValue().batchId());
                }
              }
              assertEquals(List.of(CommitBatches.ROUND_KEY), keys);
              seen.sort(null);
              assertEquals(
                  List.of(
                      "dbo_t1:0:1",
                      "dbo_t1:1:2",
                      "dbo_t1:2:3",
                      "dbo_t2:0:1",
                      "dbo_t2:1:2",
                      "dbo_t2:2:3",
                      "dbo_t3:0:1",
                      "dbo_t3:1:2",
                      "dbo_t3:2:3"),
                  seen);
              return null;
            });
    p.run().waitUntilFinish();
  }
}
