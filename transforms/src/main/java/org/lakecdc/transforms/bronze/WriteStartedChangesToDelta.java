package org.lakecdc.transforms.bronze;

import java.util.List;
import org.apache.beam.sdk.transforms.GroupByKey;
import org.apache.beam.sdk.transforms.PTransform;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.values.PCollection;

/**
 * {@link WriteChangesToDelta#fromAll} (bounded reads; or {@link WriteChangesToDelta#from}, one
 * table {@link #alone}) where each table's read starts only when an element of the input names its
 * capture instance: e.g. a new table's change read, emitted by the step that saw its bootstrap
 * snapshot committed. A table never named reads and commits nothing.
 *
 * <p>One instance gathers the batches of its tables in one {@code GroupByKey}, which fires when all
 * of its reads are done: give each table that must not wait for the others an instance of its own.
 */
public final class WriteStartedChangesToDelta
    extends PTransform<PCollection<String>, PCollection<CommittedBatch>> {
  private final List<TableWrite> tables;
  private final boolean isolate;

  private WriteStartedChangesToDelta(List<TableWrite> tables, boolean isolate) {
    this.tables = List.copyOf(tables);
    this.isolate = isolate;
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
    return new WriteStartedChangesToDelta(tables, true);
  }

  /**
   * Writes the changes of {@code table} alone (a bounded read positioned where its stream starts)
   * once its capture instance arrives, as {@link WriteChangesToDelta#from} does: any failure fails
   * the pipeline, and its batch lines do not name the table.
   */
  public static WriteStartedChangesToDelta alone(TableWrite table) {
    return new WriteStartedChangesToDelta(List.of(table), false);
  }

  @Override
  public PCollection<CommittedBatch> expand(PCollection<String> started) {
    return TableWrite.readAndWriteFiles(started, tables, isolate)
        .apply("Gather the batches", GroupByKey.create())
        .apply(
            "Commit batches in LSN order",
            // In a run of many tables a branch's batch lines name its table.
            ParDo.of(new CommitBatches(TableWrite.targets(tables), isolate)))
        .setCoder(CommittedBatchCoder.of());
  }
}
