package org.lakecdc.io.mssqlcdc;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.CI;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.ORDERS;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.T0;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.minutes;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.order;

import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import java.util.stream.IntStream;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.coders.ListCoder;
import org.apache.beam.sdk.coders.VarIntCoder;
import org.apache.beam.sdk.testing.PAssert;
import org.apache.beam.sdk.testing.TestPipeline;
import org.apache.beam.sdk.util.CoderUtils;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.Row;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.junit.rules.Timeout;
import org.lakecdc.io.mssqlcdc.fake.FakeScenarios;
import org.lakecdc.io.mssqlcdc.fake.FakeSqlServer;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.io.mssqlcdc.read.BatchSource;
import org.lakecdc.io.mssqlcdc.read.ChangeBatch;
import org.lakecdc.io.mssqlcdc.source.RowSink;

/**
 * {@code MssqlCdcIO.read().writeTo(sink)}: the reading stage hands each batch's rows to the sink
 * and emits only {@code (batch, result)}, the batches numbered 0, 1, 2, ... in LSN order with no
 * gap however the read is split, each carrying what the reader saw of the source.
 */
public class WriteToSinkTest {
  @Rule public final transient TestPipeline pipeline = TestPipeline.create();
  @Rule public final transient TemporaryFolder folder = new TemporaryFolder();

  /**
   * The JUnit 4 tests run on the vintage engine, which junit-platform.properties' Jupiter timeout
   * does not reach: each pipeline test fails after 5 minutes (its slowest takes 20 s).
   */
  @Rule public final transient Timeout timeout = Timeout.seconds(300);

  /** Returns the order ids of a batch's rows, in read order. */
  static final class OrderIds implements RowSink<List<Integer>> {
    @Override
    public List<Integer> write(long sequence, Iterator<Row> rows) {
      List<Integer> ids = new ArrayList<>();
      rows.forEachRemaining(r -> ids.add(r.getInt32("order_id")));
      return ids;
    }

    @Override
    public Coder<List<Integer>> resultCoder() {
      return ListCoder.of(VarIntCoder.of());
    }
  }

  private FakeSqlServer orders() throws IOException {
    return FakeScenarios.orders(folder.newFolder("src").toPath());
  }

  private static MssqlCdcIO.Read read(FakeSqlServer db) {
    return MssqlCdcIO.read()
        .withSourceConfiguration(
            SourceConfiguration.create(CI).withClientFactory(db.clientFactory()));
  }

  /**
   * Checks {@code written} holds batches 0..n-1 that tile the LSN line without gap, whose rows are
   * {@code expectedIds} in order, and returns them sorted.
   */
  private static void assertGapless(
      PCollection<KV<ChangeBatch, List<Integer>>> written, int batches, List<Integer> expectedIds) {
    PAssert.that(written)
        .satisfies(
            all -> {
              List<KV<ChangeBatch, List<Integer>>> sorted = new ArrayList<>();
              all.forEach(sorted::add);
              sorted.sort(Comparator.comparingLong(kv -> kv.getKey().sequence()));
              assertEquals(batches, sorted.size());
              List<Integer> ids = new ArrayList<>();
              for (int i = 0; i < sorted.size(); i++) {
                ChangeBatch batch = sorted.get(i).getKey();
                assertEquals(i, batch.sequence());
                assertEquals(batch.rows(), sorted.get(i).getValue().size());
                if (i > 0) {
                  assertEquals(
                      "batch " + i + " starts right after batch " + (i - 1),
                      sorted.get(i - 1).getKey().toLsn().increment(),
                      batch.fromLsn());
                }
                ids.addAll(sorted.get(i).getValue());
              }
              assertEquals(expectedIds, ids);
              return null;
            });
  }

  @Test
  public void batchesOfOneReadAreNumberedFromZeroWithoutGap() throws Exception {
    FakeSqlServer db = orders();
    try (FakeSqlServer.Bulk bulk = db.bulk()) {
      for (int t = 0; t < 200; t++) {
        FakeSqlServer.Transaction tx = db.transaction(T0.plusSeconds(t));
        for (int i = 0; i < 10; i++) {
          tx.insert(ORDERS, order(t * 10 + i, "new", "1.00"));
        }
        tx.commit();
      }
    }
    PCollection<KV<ChangeBatch, List<Integer>>> written =
        pipeline.apply(read(db).withMaxCommitsPerBatch(7).writeTo(new OrderIds()));
    // 200 commits, 7 a batch: 29 batches.
    assertGapless(written, 29, IntStream.range(0, 2000).boxed().toList());
    pipeline.run().waitUntilFinish();
  }

  /**
   * With parallel parts, each part numbers its batches after the batches of the parts before it
   * (counted in cdc.lsn_time_mapping), so the sequence has no gap and no repeat.
   */
  @Test
  public void partsReadInParallelContinueEachOthersNumbers() throws Exception {
    FakeSqlServer db = orders();
    for (int t = 0; t < 9; t++) {
      db.transaction(minutes(t))
          .insert(ORDERS, order(2 * t, "new", "1.00"))
          .insert(ORDERS, order(2 * t + 1, "new", "1.00"))
          .commit();
    }
    PCollection<KV<ChangeBatch, List<Integer>>> written =
        pipeline.apply(
            read(db)
                .withNumPartitions(3)
                .withMinRowsPerPartition(1)
                .withMaxCommitsPerBatch(2)
                .writeTo(new OrderIds()));
    // Three parts of three commits, two batches each (2 + 1 commits).
    assertGapless(written, 6, IntStream.range(0, 18).boxed().toList());
    pipeline.run().waitUntilFinish();
  }

  /** What the reader saw of the source travels with the batch (C252's values at the source). */
  @Test
  public void eachBatchCarriesTheRetentionWatermarkTheSourceMaximumAndWhatWasRead()
      throws Exception {
    FakeSqlServer db = orders();
    Instant watermark = T0.minus(Duration.ofHours(70));
    Lsn idle = db.idle(watermark);
    db.cleanup(CI, idle);
    for (int t = 0; t < 4; t++) {
      db.transaction(minutes(t)).insert(ORDERS, order(t, "new", t + ".00")).commit();
    }
    Lsn ddl = db.ddl(ORDERS, "ALTER TABLE dbo.orders ADD note varchar(10)", minutes(5));
    db.transaction(minutes(6)).insert(ORDERS, order(9, "new", "9.00")).commit();
    PCollection<KV<ChangeBatch, List<Integer>>> written =
        pipeline.apply(read(db).withMaxCommitsPerBatch(5).writeTo(new OrderIds()));
    PAssert.that(written)
        .satisfies(
            all -> {
              List<ChangeBatch> batches = new ArrayList<>();
              all.forEach(kv -> batches.add(kv.getKey()));
              batches.sort(Comparator.comparingLong(ChangeBatch::sequence));
              assertEquals(2, batches.size());
              for (ChangeBatch batch : batches) {
                BatchSource source = batch.source();
                assertEquals(watermark, source.retentionWatermark());
                assertEquals(minutes(6), source.sourceMaxCommitTime());
                assertEquals(List.of(CI), batch.readInstances());
                assertEquals(1, source.instances().size());
                assertEquals(List.of(), source.instances().get(0).notCaptured());
                assertTrue(source.readNanos() > 0);
              }
              assertEquals(4, batches.get(0).rows());
              assertTrue(batches.get(0).source().readBytes() > 4 * 36);
              assertEquals(List.of(), batches.get(0).source().ddl());
              List<BatchSource.Ddl> seen = batches.get(1).source().ddl();
              assertEquals(1, seen.size());
              assertEquals(ddl, seen.get(0).lsn());
              assertEquals(
                  "the client's commit time of the DDL: the last commit at or before its LSN",
                  minutes(3),
                  seen.get(0).commitTime());
              assertEquals("ALTER TABLE dbo.orders ADD note varchar(10)", seen.get(0).command());
              return null;
            });
    pipeline.run().waitUntilFinish();
  }

  /** The batch coder keeps every field, absent times as absent. */
  @Test
  public void theBatchCoderKeepsEveryField() throws Exception {
    ChangeBatch batch =
        new ChangeBatch(
            CI,
            Lsn.parse("0x0000002A000001000001"),
            Lsn.parse("0x0000002A000001000031"),
            minutes(3),
            12,
            List.of(CI, "dbo_orders_v2"),
            41,
            new BatchSource(
                minutes(-60),
                minutes(9),
                null,
                123_456,
                7_890,
                List.of(
                    new BatchSource.Ddl(
                        Lsn.parse("0x0000002A000001000011"), null, "ALTER TABLE x ADD y int")),
                List.of(
                    new BatchSource.InstanceRead(
                        CI, Lsn.parse("0x0000002A000000000001"), null, List.of()),
                    new BatchSource.InstanceRead(
                        "dbo_orders_v2",
                        Lsn.parse("0x0000002A000001000021"),
                        minutes(2),
                        List.of("updated_at")))));
    ChangeBatch decoded =
        CoderUtils.decodeFromByteArray(
            ChangeBatch.coder(), CoderUtils.encodeToByteArray(ChangeBatch.coder(), batch));
    assertEquals(batch, decoded);
    assertNull(decoded.source().sourceTime());
  }
}
