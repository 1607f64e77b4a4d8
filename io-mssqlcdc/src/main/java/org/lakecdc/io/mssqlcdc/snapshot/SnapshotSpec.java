package org.lakecdc.io.mssqlcdc.snapshot;

import java.io.Serializable;
import java.util.Locale;
import java.util.Objects;
import org.apache.beam.sdk.annotations.Internal;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.transforms.Create;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.Reshuffle;
import org.apache.beam.sdk.values.PBegin;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.Row;
import org.lakecdc.io.mssqlcdc.client.IsolationLevel;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.io.mssqlcdc.source.RowSink;
import org.lakecdc.io.mssqlcdc.source.SourceSpec;

/**
 * The resolved configuration of one whole snapshot ({@code MssqlCdcIO.snapshot()}), shipped to
 * workers with its DoFns, and the steps it expands into: the snapshot LSN is recorded and the
 * output schema fixed before the pipeline runs.
 *
 * <p>Steps: {@code Create(capture instance)} → plan the key ranges ({@link SnapshotPlanner}) →
 * {@code Reshuffle} (ranges, never rows) → read each range ({@link ReadSnapshotRangeFn}), emitting
 * its rows or writing them through a {@link RowSink}.
 *
 * <p>Internal: {@code MssqlCdcIO.Snapshot} builds and expands it.
 *
 * @param source the capture instance, client factory and output schema
 * @param snapshotLsn S, stamped as {@code _start_lsn} on every row
 * @param numPartitions key ranges wanted, at least 1
 * @param isolationLevel isolation level of the planning query and of every range read
 */
@Internal
public record SnapshotSpec(
    SourceSpec source, Lsn snapshotLsn, int numPartitions, IsolationLevel isolationLevel)
    implements Serializable {
  /** Checks the fields. */
  public SnapshotSpec {
    Objects.requireNonNull(source, "source");
    Objects.requireNonNull(snapshotLsn, "snapshotLsn");
    Objects.requireNonNull(isolationLevel, "isolationLevel");
  }

  /**
   * The snapshot's rows, each timestamped with the commit time of S.
   *
   * @param input the pipeline's start
   * @return the rows, in the source's schema
   */
  public PCollection<Row> expandRows(PBegin input) {
    return ranges(input)
        .apply("Read key ranges", ParDo.of(ReadSnapshotRangeFn.emittingRows(this)))
        .setRowSchema(source.schema());
  }

  /**
   * Each key range's rows written through {@code sink} in the reading stage: one result per range,
   * coded with the sink's {@link RowSink#resultCoder()}.
   *
   * @param input the pipeline's start
   * @param sink writes one range's rows
   * @param <ResultT> what the sink returns per range
   * @return the sink's results
   */
  public <ResultT> PCollection<ResultT> expandWrites(PBegin input, RowSink<ResultT> sink) {
    return ranges(input)
        .apply("Read and write key ranges", ParDo.of(ReadSnapshotRangeFn.writingTo(this, sink)))
        .setCoder(sink.resultCoder());
  }

  /** The planned key ranges, spread over workers. */
  PCollection<SnapshotRange> ranges(PBegin input) {
    String ci = source.captureInstance();
    return input
        .apply(
            "Capture instance " + ci.toLowerCase(Locale.ROOT),
            Create.of(ci).withCoder(StringUtf8Coder.of()))
        .apply("Plan key ranges", ParDo.of(new PlanSnapshotRangesFn(this)))
        .setCoder(SnapshotRangeCoder.of())
        .apply("Spread key ranges", Reshuffle.viaRandomKey());
  }
}
