package org.lakecdc.transforms.bronze;

import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.schemas.Schema;
import org.apache.beam.sdk.values.Row;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.io.mssqlcdc.source.RowSink;
import org.lakecdc.transforms.delta.DataFileAction;
import org.lakecdc.transforms.delta.DataFileWriter;
import org.lakecdc.transforms.delta.DeltaTables;

/**
 * Writes each batch's change rows as bronze Parquet data files, in the stage that reads them
 * ({@code MssqlCdcIO.read().writeTo(sink)}): rows are converted to bronze rows ({@code _batch_id} =
 * the batch's number) and streamed into files that roll at the target file size (128 MiB by
 * default, {@code delta.kernel.default.parquet.writer.targetMaxFileSize}), so memory is bounded by
 * a file's buffered row group, never by the batch. Reading and writing overlap: the rows are read
 * on the calling thread and encoded on a writer thread of the batch's own, handed over in chunks
 * through a bounded queue ({@link RowHandOff}: a few thousand rows at most; either side's failure
 * fails the batch, and the thread ends with the batch). Nothing is committed: the result, the
 * files' {@code add} actions and the batch's counts, goes to the target's one committer.
 *
 * <p>The batch number is the target's position's batch plus 1 plus the batch's {@code sequence}
 * within the read: the same numbering the committer checks, so a batch is written and committed
 * under one number whichever worker reads it.
 */
public final class BronzeBatchSink implements RowSink<BatchFiles> {
  private final String bronzePath;
  private final Schema changeSchema;
  private final DeltaTarget target;
  private transient DeltaTables tables;
  private transient Schema bronzeSchema;

  private BronzeBatchSink(DeltaTarget target, Schema changeSchema) {
    this.bronzePath = target.bronzePath();
    this.changeSchema = changeSchema;
    this.target = target;
  }

  /** A sink writing {@code target}'s bronze files for change rows of {@code changeSchema}. */
  public static BronzeBatchSink of(DeltaTarget target, Schema changeSchema) {
    return new BronzeBatchSink(target, changeSchema);
  }

  @Override
  public void setup() {
    tables = target.tables();
    bronzeSchema = BronzeTable.schema(changeSchema);
  }

  @Override
  public BatchFiles write(long sequence, Iterator<Row> rows) {
    long batchId = target.batchId(sequence);
    if (!rows.hasNext()) {
      return new BatchFiles(batchId, List.of(), BatchStats.empty(batchId));
    }
    // The bronze columns of every row of the batch: _batch_id, _snapshot, _chunk. The writer
    // takes each change row as it is and these after it, so a row is not copied into a bronze row.
    List<@Nullable Object> bronzeColumns = Arrays.asList(Math.toIntExact(batchId), null, null);
    BatchStats.Counter counter = new BatchStats.Counter(batchId);
    List<DataFileAction> files;
    try (DataFileWriter writer = tables.openDataFileWriter(bronzePath, bronzeSchema)) {
      // The read (this thread) and the Parquet encoding (the writer's) overlap.
      RowHandOff.run(
          rows,
          counter::add,
          change -> writer.write(change, bronzeColumns),
          "bronze writer of batch " + batchId + " of " + bronzePath);
      files = writer.finish();
    }
    return new BatchFiles(batchId, files, counter.stats());
  }

  @Override
  public Coder<BatchFiles> resultCoder() {
    return BatchFilesCoder.of();
  }
}
