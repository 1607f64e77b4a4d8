package org.lakecdc.io.mssqlcdc.snapshot;

import java.util.Iterator;
import java.util.List;
import org.apache.beam.sdk.metrics.Counter;
import org.apache.beam.sdk.metrics.Metrics;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.values.Row;
import org.joda.time.Instant;
import org.lakecdc.io.mssqlcdc.client.CdcClient;
import org.lakecdc.io.mssqlcdc.client.CloseableIterator;
import org.lakecdc.io.mssqlcdc.source.RowSink;
import org.lakecdc.io.mssqlcdc.source.SourceSpec;
import org.lakecdc.io.mssqlcdc.source.WorkerClient;

/**
 * Reads one {@link SnapshotRange} of the source table ({@link CdcClient#readTable}, streamed under
 * the configured isolation level, never NOLOCK) as snapshot rows of the change schema ({@link
 * SourceSpec#snapshotRow}), and either emits each row ({@link #emittingRows}) or writes them all
 * through a {@link RowSink} in this stage and emits only what the sink returns ({@link
 * #writingTo}), with the range's {@link SnapshotRange#number()} as the sequence. Outputs are
 * timestamped with the UTC commit time of S. Counts rows in the {@code mssqlcdc/snapshot_rows}
 * counter.
 *
 * <p>One client per DoFn instance, opened on first use and closed at teardown (as KafkaIO caches
 * its consumers); a failed read closes it, so that the retried bundle opens a new one.
 *
 * @param <OutputT> a row, or the sink's result
 */
abstract class ReadSnapshotRangeFn<OutputT> extends DoFn<SnapshotRange, OutputT> {
  final SnapshotSpec spec;
  private final Counter rowsRead = Metrics.counter(SourceSpec.METRICS_NAMESPACE, "snapshot_rows");
  private final WorkerClient client;

  ReadSnapshotRangeFn(SnapshotSpec spec) {
    this.spec = spec;
    this.client = new WorkerClient(spec.source().clientFactory());
  }

  /** A reader emitting the rows. */
  static ReadSnapshotRangeFn<Row> emittingRows(SnapshotSpec spec) {
    return new EmitRows(spec);
  }

  /** A reader writing each range's rows through {@code sink} and emitting the sink's result. */
  static <ResultT> ReadSnapshotRangeFn<ResultT> writingTo(
      SnapshotSpec spec, RowSink<ResultT> sink) {
    return new WriteRows<>(spec, sink);
  }

  /** Hands the range's rows on: emits them, or writes them and emits the result. */
  abstract void handle(
      SnapshotRange range, Iterator<Row> rows, Instant timestamp, OutputReceiver<OutputT> out);

  /** Prepares what {@link #handle} needs on this worker; called once per DoFn instance. */
  void open() {}

  /** Releases what {@link #open} prepared; called once per DoFn instance. */
  void close() {}

  @Setup
  public final void setup() {
    open();
  }

  @Teardown
  public final void teardown() {
    try {
      client.close();
    } finally {
      close();
    }
  }

  @ProcessElement
  public void processElement(@Element SnapshotRange range, OutputReceiver<OutputT> out) {
    Instant timestamp = new Instant(range.commitTime().toEpochMilli());
    try (CloseableIterator<List<Object>> values =
        client.get().readTable(range.query(spec.source().columnNames(), spec.isolationLevel()))) {
      handle(
          range,
          spec.source()
              .snapshotRows(
                  values, spec.snapshotLsn(), range.commitTime(), rowsRead, "snapshot range"),
          timestamp,
          out);
    } catch (RuntimeException e) {
      client.discardAfter(e);
      throw e;
    }
  }

  private static final class EmitRows extends ReadSnapshotRangeFn<Row> {
    EmitRows(SnapshotSpec spec) {
      super(spec);
    }

    @Override
    void handle(
        SnapshotRange range, Iterator<Row> rows, Instant timestamp, OutputReceiver<Row> out) {
      while (rows.hasNext()) {
        out.outputWithTimestamp(rows.next(), timestamp);
      }
    }
  }

  private static final class WriteRows<ResultT> extends ReadSnapshotRangeFn<ResultT> {
    private final RowSink<ResultT> sink;

    WriteRows(SnapshotSpec spec, RowSink<ResultT> sink) {
      super(spec);
      this.sink = sink;
    }

    @Override
    void open() {
      sink.setup();
    }

    @Override
    void close() {
      sink.teardown();
    }

    @Override
    void handle(
        SnapshotRange range, Iterator<Row> rows, Instant timestamp, OutputReceiver<ResultT> out) {
      ResultT result = sink.write(range.number(), rows);
      if (rows.hasNext()) {
        throw new IllegalStateException(
            "The sink returned before reading every row of snapshot range "
                + range.number()
                + " of "
                + spec.source().captureInstance());
      }
      out.outputWithTimestamp(result, timestamp);
    }
  }
}
