package org.lakecdc.transforms.bronze;

import java.util.List;
import org.apache.beam.sdk.transforms.GroupByKey;
import org.apache.beam.sdk.transforms.PTransform;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.values.PCollection;

/**
 * {@link WriteChangesToDelta#fromAll} (bounded reads) where each table's read starts only when an
 * element of the input names its capture instance: e.g. a new table's change read, emitted by the
 * step that saw its bootstrap snapshot committed. A table never named reads and commits nothing.
 *
 * <p>One instance gathers the batches of its tables in one {@code GroupByKey}, which fires when all
 * of its reads are done: give each table that must not wait for the others an instance of its own.
 */
public final class WriteStartedChangesToDelta
    extends PTransform<PCollection<String>, PCollection<CommittedBatch>> {
  private final List<TableWrite> tables;

  private WriteStartedChangesToDelta(List<TableWrite> tables) {
    this.tables = List.copyOf(tables);
  }

  /**
   * Writes the changes of {@code tables} (bounded reads, each positioned where its stream starts)
   * to their own targets once their capture instances arrive; a table's failure ({@link
   * org.lakecdc.io.mssqlcdc.read.TableFailure}) is recorded for it alone, as in {@link
   * WriteChangesToDelta#fromAll}.
   *
   * @throws IllegalArgumentException when there is no table, or two share a capture instance, a
   *     target or an app id
   */
  public static WriteStartedChangesToDelta of(List<TableWrite> tables) {
    WriteChangesToDelta.checkDistinct(tables);
    return new WriteStartedChangesToDelta(tables);
  }

  @Override
  public PCollection<CommittedBatch> expand(PCollection<String> started) {
    return TableWrite.readAndWriteFiles(started, tables)
        .apply("Gather the batches", GroupByKey.create())
        .apply(
            "Commit batches in LSN order",
            // A branch of one table in a run of many: its batch lines name the table.
            ParDo.of(new CommitBatches(TableWrite.targets(tables), true)))
        .setCoder(CommittedBatchCoder.of());
  }
}
