package org.lakecdc.io.mssqlcdc.source;

import java.io.Serializable;
import java.util.Iterator;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.values.Row;

/**
 * Where a reading stage writes the rows it reads, in the same stage, so that rows never become
 * elements of a {@code PCollection} and never cross a shuffle: only the small result of each write
 * travels on (the shape of Beam IcebergIO's {@code WriteUngroupedRowsToFiles}, or of {@code
 * FileIO.Sink}). {@link org.lakecdc.io.mssqlcdc.MssqlCdcIO.Read#writeTo} calls it once per batch,
 * {@link org.lakecdc.io.mssqlcdc.MssqlCdcIO.Snapshot#writeTo} once per key range. The reader knows
 * nothing of the storage: a sink writes files, a table, or anything else, and describes what it
 * wrote in its result.
 *
 * <p>One sink object per DoFn instance: {@link #setup} and {@link #teardown} follow the DoFn's
 * {@code @Setup} and {@code @Teardown}; {@link #write} is called by one thread at a time. A write
 * may be repeated (a retried bundle): a sink must not make a write visible by itself, only describe
 * it, so that the one committer downstream decides what becomes visible, once.
 *
 * @param <ResultT> the description of one write, e.g. the data files written and their counts
 */
public interface RowSink<ResultT> extends Serializable {
  /** Prepares the sink on a worker (opens clients, file systems); called once per DoFn instance. */
  default void setup() {}

  /**
   * Writes the rows of one unit and describes what was written.
   *
   * @param sequence the unit's number: the batch's {@code ChangeBatch.sequence()} for a change
   *     read, the key range's number for a snapshot
   * @param rows the unit's rows in read order, pulled lazily from the source (reading and writing
   *     interleave; memory stays bounded by what the sink buffers); must be read to the end. An
   *     exception thrown by {@code hasNext} or {@code next} (a failed read, a retention check) must
   *     reach the caller: the sink abandons what it wrote and rethrows
   * @return the description, encoded with {@link #resultCoder()}
   */
  ResultT write(long sequence, Iterator<Row> rows);

  /** The coder of the results (not Java serialization: results may live in runner state). */
  Coder<ResultT> resultCoder();

  /** Releases what {@link #setup} opened; called once per DoFn instance. */
  default void teardown() {}
}
