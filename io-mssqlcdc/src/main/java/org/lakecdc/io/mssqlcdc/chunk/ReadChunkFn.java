package org.lakecdc.io.mssqlcdc.chunk;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import org.apache.beam.sdk.metrics.Counter;
import org.apache.beam.sdk.metrics.Distribution;
import org.apache.beam.sdk.metrics.Metrics;
import org.apache.beam.sdk.transforms.DoFn;
import org.lakecdc.io.mssqlcdc.client.CdcClient;
import org.lakecdc.io.mssqlcdc.client.CloseableIterator;
import org.lakecdc.io.mssqlcdc.client.Commit;
import org.lakecdc.io.mssqlcdc.client.TableQuery;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.io.mssqlcdc.snapshot.SnapshotLsn;
import org.lakecdc.io.mssqlcdc.source.RowSink;
import org.lakecdc.io.mssqlcdc.source.SourceSpec;
import org.lakecdc.io.mssqlcdc.source.WorkerClient;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads one {@link Chunk} of a chunked snapshot on a worker (docs/behaviour.md §6.7, §6.9) and
 * writes its rows through a {@link RowSink} in this stage:
 *
 * <ol>
 *   <li>stamp L = the snapshot-LSN rule now ({@link SnapshotLsn}); {@code L < S} fails the chunk
 *       (the reads reach another server than S came from, e.g. a readable secondary);
 *   <li>the commit time of L ({@code _commit_ts});
 *   <li>for an open last chunk with a keyset MAX: its end re-sought as the first key after MAX now
 *       ({@link CdcClient#keyBound} at offset 1 from MAX), so that rows inserted above MAX stay the
 *       stream's;
 *   <li>{@code SELECT} of {@code lo <= key < hi} under the isolation level ({@link
 *       CdcClient#readTable}), each row a snapshot row stamped L, written with the chunk's index as
 *       the sequence;
 *   <li>{@code max_lsn} read after the read ({@code high_lsn}).
 * </ol>
 *
 * <p>Then {@link AfterChunkRead#afterRead} runs on the chunk, on the same thread, and the stage
 * emits one {@link ChunkRead} per chunk carrying its result, timestamped with the commit time of L.
 * Counters {@code mssqlcdc/snapshot_rows} (rows read) and {@code mssqlcdc/snapshot_chunks_read};
 * distribution {@code mssqlcdc/snapshot_chunk_read_ms}. One client per DoFn instance ({@link
 * WorkerClient}).
 *
 * <p>Each chunk read logs one INFO line naming the thread that read it, when it started and ended
 * (UTC) and the CPU time that thread spent on it (reading, and the sink's writing, which runs on
 * the same thread): {@code Chunk 2 of dbo_orders read on thread Executor task launch worker for
 * task 2.0 in stage 0.0 (TID 2) #61: 250,000 rows from 2026-12-07T03:01:02.345Z to
 * 2026-12-07T03:01:09.012Z, 6.667 s wall, 6.120 s CPU}. Which workers read which chunks, and
 * whether a wave's reads overlapped, can be read off these lines whatever the runner.
 *
 * @param <R> the sink's result
 * @param <O> what the stage emits per chunk ({@link AfterChunkRead}'s result)
 */
final class ReadChunkFn<R, O> extends DoFn<Chunk, ChunkRead<O>> {
  private static final Logger LOG = LoggerFactory.getLogger(ReadChunkFn.class);
  private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

  private final ChunkSpec spec;
  private final RowSink<R> sink;
  private final AfterChunkRead<R, O> after;
  private final WorkerClient client;
  private final Counter rowsRead = Metrics.counter(SourceSpec.METRICS_NAMESPACE, "snapshot_rows");
  private final Counter chunksRead =
      Metrics.counter(SourceSpec.METRICS_NAMESPACE, "snapshot_chunks_read");
  private final Distribution readMillis =
      Metrics.distribution(SourceSpec.METRICS_NAMESPACE, "snapshot_chunk_read_ms");

  ReadChunkFn(ChunkSpec spec, RowSink<R> sink, AfterChunkRead<R, O> after) {
    this.spec = spec;
    this.sink = sink;
    this.after = after;
    this.client = new WorkerClient(spec.source().clientFactory());
  }

  @Setup
  public void setup() {
    sink.setup();
    after.setup();
  }

  @Teardown
  public void teardown() {
    try {
      client.close();
    } finally {
      try {
        sink.teardown();
      } finally {
        after.teardown();
      }
    }
  }

  @ProcessElement
  public void processElement(@Element Chunk chunk, OutputReceiver<ChunkRead<O>> out) {
    ChunkRead<R> read;
    try {
      read = read(client.get(), chunk);
    } catch (RuntimeException e) {
      client.discardAfter(e);
      throw e;
    }
    out.outputWithTimestamp(
        read.withResult(after.afterRead(read)),
        new org.joda.time.Instant(read.stampCommitTime().toEpochMilli()));
  }

  /** The current thread's CPU time in nanoseconds, or -1 when the JVM does not measure it. */
  private static long threadCpuNanos() {
    return THREADS.isCurrentThreadCpuTimeSupported() ? THREADS.getCurrentThreadCpuTime() : -1;
  }

  private ChunkRead<R> read(CdcClient cdc, Chunk chunk) {
    Instant startedAt = Instant.now();
    long start = System.nanoTime();
    long cpuStart = threadCpuNanos();
    Lsn stamp = SnapshotLsn.latestCommitted(cdc, spec.source().captureInstance());
    if (stamp.isBefore(spec.snapshotLsn())) {
      throw new IllegalStateException(
          "Chunk "
              + chunk.index()
              + " of capture instance "
              + spec.source().captureInstance()
              + ": stamp "
              + stamp
              + " below the snapshot LSN S "
              + spec.snapshotLsn()
              + ": a readable secondary? Read every chunk from the server S was recorded on");
    }
    Instant stampTime = SnapshotLsn.commitTime(cdc, spec.source().captureInstance(), stamp);
    List<Object> hi = chunk.hi();
    if (hi == null && spec.openEndAfter() != null) {
      hi =
          cdc.keyBound(
                  spec.sourceSchema(),
                  spec.sourceTable(),
                  spec.keyColumns(),
                  Optional.of(spec.openEndAfter()),
                  Optional.empty(),
                  1,
                  spec.isolationLevel())
              .orElse(null);
    }
    TableQuery query =
        new TableQuery(
            spec.sourceSchema(),
            spec.sourceTable(),
            spec.source().columnNames(),
            spec.keyColumns(),
            Optional.ofNullable(chunk.lo()),
            Optional.ofNullable(hi),
            spec.isolationLevel());
    R result;
    long rows;
    try (CloseableIterator<List<Object>> values = cdc.readTable(query)) {
      SourceSpec.SnapshotRows chunkRows =
          spec.source().snapshotRows(values, stamp, stampTime, rowsRead, "chunk");
      result = sink.write(chunk.index(), chunkRows);
      if (chunkRows.hasNext()) {
        throw new IllegalStateException(
            "The sink returned before reading every row of chunk "
                + chunk.index()
                + " of "
                + spec.source().captureInstance());
      }
      rows = chunkRows.count();
    }
    double seconds = (System.nanoTime() - start) / 1e9;
    long cpuEnd = threadCpuNanos();
    LOG.info(
        "Chunk {} of {} read on thread {}: {} rows from {} to {}, {} s wall, {} s CPU",
        chunk.index(),
        spec.source().captureInstance(),
        Thread.currentThread().getName() + " #" + Thread.currentThread().getId(),
        String.format(Locale.ROOT, "%,d", rows),
        startedAt,
        Instant.now(),
        String.format(Locale.ROOT, "%.3f", seconds),
        cpuStart < 0 || cpuEnd < 0
            ? "?"
            : String.format(Locale.ROOT, "%.3f", (cpuEnd - cpuStart) / 1e9));
    Lsn high = cdc.maxLsn().orElse(null);
    Instant highTime = high == null ? null : cdc.commit(high).map(Commit::commitTime).orElse(null);
    chunksRead.inc();
    readMillis.update(Math.round(seconds * 1000));
    return new ChunkRead<>(
        chunk.index(), stamp, stampTime, hi, high, highTime, startedAt, seconds, rows, result);
  }
}
