package org.lakecdc.io.mssqlcdc.chunk;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigDecimal;
import java.nio.file.Path;
import java.time.Instant;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.coders.ListCoder;
import org.apache.beam.sdk.coders.VarIntCoder;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.testing.PAssert;
import org.apache.beam.sdk.util.CoderUtils;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.Row;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.io.mssqlcdc.MssqlCdcIO;
import org.lakecdc.io.mssqlcdc.SourceConfiguration;
import org.lakecdc.io.mssqlcdc.client.CdcClient;
import org.lakecdc.io.mssqlcdc.fake.ColumnDefinition;
import org.lakecdc.io.mssqlcdc.fake.FakeSqlServer;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.io.mssqlcdc.snapshot.SnapshotLsn;
import org.lakecdc.io.mssqlcdc.source.RowSink;

/**
 * {@link MssqlCdcIO#snapshotChunks()}: each chunk stamped on the worker and read as snapshot rows
 * through the sink with its index as the sequence; its coders; a stamp below S fails.
 */
class SnapshotChunksTest {
  @TempDir Path dir;

  private static final Instant T0 = Instant.parse("2026-09-28T13:00:00Z");

  /** The order ids and {@code _start_lsn}s of a chunk's rows, as "id@lsn", in read order. */
  static final class Ids implements RowSink<List<String>> {
    @Override
    public List<String> write(long sequence, Iterator<Row> rows) {
      List<String> ids = new ArrayList<>();
      rows.forEachRemaining(
          r -> {
            assertEquals(0, r.getInt32("_operation"));
            assertNull(r.getString("_seqval"));
            ids.add(sequence + ":" + r.getInt32("order_id") + "@" + r.getString("_start_lsn"));
          });
      return ids;
    }

    @Override
    public Coder<List<String>> resultCoder() {
      return ListCoder.of(org.apache.beam.sdk.coders.StringUtf8Coder.of());
    }
  }

  private FakeSqlServer orders(int n) {
    FakeSqlServer db = FakeSqlServer.open(dir.resolve("src"));
    db.createTable(
        "dbo.orders",
        List.of(
            ColumnDefinition.of("order_id", "int"), ColumnDefinition.of("status", "varchar(10)")),
        List.of("order_id"));
    db.enableCdc("dbo.orders");
    FakeSqlServer.Transaction tx = db.transaction(T0);
    for (int i = 0; i < n; i++) {
      tx.insert("dbo.orders", Map.of("order_id", i, "status", "s" + i));
    }
    tx.commit();
    return db;
  }

  private static Lsn s(FakeSqlServer db) {
    try (CdcClient client = db.clientFactory().open()) {
      return SnapshotLsn.resolve(client, "dbo_orders");
    }
  }

  /** The read of chunks [null, 3) and [3, null) of dbo.orders at {@code s}. */
  private static MssqlCdcIO.SnapshotChunks twoChunks(FakeSqlServer db, Lsn s) {
    return MssqlCdcIO.snapshotChunks()
        .withSourceConfiguration(
            SourceConfiguration.create("dbo_orders").withClientFactory(db.clientFactory()))
        .withSnapshotLsn(s)
        .withChunks(List.of(new Chunk(0, null, List.of(3)), new Chunk(1, List.of(3), null)));
  }

  private static Pipeline pipeline() {
    return Pipeline.create(PipelineOptionsFactory.create());
  }

  /** What a read says apart from its timing. */
  private static String described(ChunkRead<List<String>> read) {
    return read.chunk()
        + " stamp "
        + read.stamp()
        + " at "
        + read.stampCommitTime()
        + " hi "
        + read.hiRead()
        + " high "
        + read.highLsn()
        + " at "
        + read.highCommitTime()
        + " rows "
        + read.rows()
        + " "
        + read.result();
  }

  @Test
  void c097EachChunkIsReadAsSnapshotRowsStampedWithTheLsnReadBeforeIt() {
    FakeSqlServer db = orders(5);
    Lsn s = s(db);
    Pipeline p = pipeline();
    PCollection<ChunkRead<List<String>>> reads = p.apply(twoChunks(db, s).writeTo(new Ids()));
    PAssert.that(reads)
        .satisfies(
            all -> {
              List<String> got = new ArrayList<>();
              for (ChunkRead<List<String>> read : all) {
                got.add(described(read));
                assertTrue(read.readSeconds() >= 0);
              }
              got.sort(null);
              String at = s + " at " + T0;
              assertEquals(
                  List.of(
                      "0 stamp "
                          + at
                          + " hi [3] high "
                          + at
                          + " rows 3 [0:0@"
                          + s
                          + ", 0:1@"
                          + s
                          + ", 0:2@"
                          + s
                          + "]",
                      "1 stamp "
                          + at
                          + " hi null high "
                          + at
                          + " rows 2 [1:3@"
                          + s
                          + ", 1:4@"
                          + s
                          + "]"),
                  got);
              return null;
            });
    assertEquals(PipelineResult.State.DONE, p.run().waitUntilFinish());
  }

  /** The thread of each chunk's sink write and of its after-read step, by chunk, in this JVM. */
  private static final Map<Integer, List<String>> THREADS = new ConcurrentHashMap<>();

  /** Names each chunk's sink result after its read, recording the thread it ran on. */
  static final class Described implements AfterChunkRead<List<String>, String> {
    @Override
    public String afterRead(ChunkRead<List<String>> read) {
      THREADS
          .get(read.chunk())
          .add(Thread.currentThread().getName() + "#" + Thread.currentThread().getId());
      return "chunk " + read.chunk() + ", " + read.rows() + " rows: " + read.result();
    }

    @Override
    public Coder<String> resultCoder() {
      return org.apache.beam.sdk.coders.StringUtf8Coder.of();
    }
  }

  /** The ids of each chunk, recording the thread that wrote them. */
  static final class ThreadIds implements RowSink<List<String>> {
    @Override
    public List<String> write(long sequence, Iterator<Row> rows) {
      List<String> ids = new Ids().write(sequence, rows);
      THREADS
          .computeIfAbsent((int) sequence, c -> new CopyOnWriteArrayList<>())
          .add(Thread.currentThread().getName() + "#" + Thread.currentThread().getId());
      return ids;
    }

    @Override
    public Coder<List<String>> resultCoder() {
      return new Ids().resultCoder();
    }
  }

  @Test
  void theStepAfterEachReadRunsOnTheReadingThreadAndItsResultIsEmitted() {
    FakeSqlServer db = orders(5);
    Lsn s = s(db);
    THREADS.clear();
    Pipeline p = pipeline();
    PCollection<ChunkRead<String>> reads =
        p.apply(twoChunks(db, s).writeTo(new ThreadIds(), new Described()));
    PAssert.that(reads)
        .satisfies(
            all -> {
              List<String> got = new ArrayList<>();
              for (ChunkRead<String> read : all) {
                got.add(read.chunk() + " " + read.rows() + " " + read.result());
              }
              got.sort(null);
              assertEquals(
                  List.of(
                      "0 3 chunk 0, 3 rows: [0:0@" + s + ", 0:1@" + s + ", 0:2@" + s + "]",
                      "1 2 chunk 1, 2 rows: [1:3@" + s + ", 1:4@" + s + "]"),
                  got);
              return null;
            });
    assertEquals(PipelineResult.State.DONE, p.run().waitUntilFinish());
    for (int chunk = 0; chunk < 2; chunk++) {
      List<String> threads = THREADS.get(chunk);
      assertEquals(2, threads.size(), "the write and the step after it: " + threads);
      assertEquals(threads.get(0), threads.get(1), "one thread for chunk " + chunk);
    }
  }

  @Test
  void c097AStampBelowSFailsTheChunk() {
    FakeSqlServer db = orders(2);
    Lsn s = s(db);
    Lsn above = Lsn.parse("0x7FFFFFFF00000000FFFF");
    assertTrue(above.isAfter(s));
    Pipeline p = pipeline();
    p.apply(
        MssqlCdcIO.snapshotChunks()
            .withSourceConfiguration(
                SourceConfiguration.create("dbo_orders").withClientFactory(db.clientFactory()))
            .withSnapshotLsn(above)
            .withChunks(List.of(new Chunk(0, null, null)))
            .writeTo(new Ids()));
    Throwable failure = assertThrows(Throwable.class, () -> p.run().waitUntilFinish());
    String message = null;
    for (Throwable t = failure; t != null; t = t.getCause()) {
      if (t instanceof IllegalStateException) {
        message = t.getMessage();
      }
    }
    assertEquals(
        "Chunk 0 of capture instance dbo_orders: stamp "
            + s
            + " below the snapshot LSN S "
            + above
            + ": a readable secondary? Read every chunk from the server S was recorded on",
        message);
  }

  @Test
  void theCodersKeepEveryFieldAndTheBoundsJavaTypes() throws Exception {
    List<Object> hi =
        Arrays.asList(7L, "b", new BigDecimal("1.50"), null, LocalDateTime.of(2026, 9, 28, 1, 2));
    ChunkRead<List<Integer>> read =
        new ChunkRead<>(
            4,
            Lsn.parse("0x00000020000000100001"),
            T0,
            hi,
            null,
            null,
            T0.plusMillis(1),
            1.25,
            12,
            List.of(1, 2));
    Coder<ChunkRead<List<Integer>>> coder = ChunkRead.coder(ListCoder.of(VarIntCoder.of()));
    ChunkRead<List<Integer>> back = CoderUtils.clone(coder, read);
    assertEquals(read, back);
    assertEquals(BigDecimal.class, back.hiRead().get(2).getClass());
    assertEquals(new BigDecimal("1.50"), back.hiRead().get(2));
    Chunk chunk = new Chunk(3, List.of(1, "a"), null);
    assertEquals(chunk, CoderUtils.clone(ChunkCoder.of(), chunk));
    Chunk open = new Chunk(0, null, List.of());
    assertEquals(open, CoderUtils.clone(ChunkCoder.of(), open));
  }

  @Test
  void withChunksRefusesNoChunkAndARepeatedIndex() {
    MssqlCdcIO.SnapshotChunks read = MssqlCdcIO.snapshotChunks();
    assertEquals(
        "withChunks() needs at least one chunk",
        assertThrows(IllegalArgumentException.class, () -> read.withChunks(List.of()))
            .getMessage());
    assertEquals(
        "withChunks(): chunk 1 is given twice",
        assertThrows(
                IllegalArgumentException.class,
                () -> read.withChunks(List.of(new Chunk(1, null, null), new Chunk(1, null, null))))
            .getMessage());
  }

  /** Rows inserted above MAX after the open stay the stream's: the end is sought again. */
  @Test
  void c097AnOpenLastChunkReadsUpToTheFirstKeyAfterMaxSoughtRightBeforeItsRead() {
    FakeSqlServer db = orders(6);
    Lsn s = s(db);
    db.transaction(T0.plusSeconds(60))
        .insert("dbo.orders", Map.of("order_id", 7, "status", "s7"))
        .insert("dbo.orders", Map.of("order_id", 8, "status", "s8"))
        .commit();
    Pipeline p = pipeline();
    PCollection<ChunkRead<List<String>>> reads =
        p.apply(
            MssqlCdcIO.snapshotChunks()
                .withSourceConfiguration(
                    SourceConfiguration.create("dbo_orders").withClientFactory(db.clientFactory()))
                .withSnapshotLsn(s)
                .withChunks(List.of(new Chunk(1, List.of(3), null)))
                .withOpenEndAfter(List.of(5))
                .writeTo(new Ids()));
    PAssert.that(reads)
        .satisfies(
            all -> {
              ChunkRead<List<String>> read = all.iterator().next();
              assertEquals(List.of(7), read.hiRead());
              assertEquals(3, read.rows());
              assertEquals(
                  List.of("1:3@" + read.stamp(), "1:4@" + read.stamp(), "1:5@" + read.stamp()),
                  read.result());
              return null;
            });
    assertEquals(PipelineResult.State.DONE, p.run().waitUntilFinish());
  }
}
