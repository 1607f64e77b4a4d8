package org.lakecdc.transforms.bronze;

import java.util.List;
import org.apache.beam.sdk.transforms.PTransform;
import org.apache.beam.sdk.values.PCollection;

/**
 * {@link WriteChangeStreamToDelta#fromAll} (continuous reads; or {@link
 * WriteChangeStreamToDelta#from}, one table {@link #alone}) where each table's read starts only
 * when an element of the input names its capture instance: e.g. a new table's change stream,
 * started by the step that saw its bootstrap snapshot committed in the same pipeline. A table never
 * named reads and commits nothing; a table named follows the source until its read's stop condition
 * holds, its batches committed in committer rounds as they arrive, their lines naming the table
 * (not those of a table {@link #alone}).
 *
 * <p>One instance has one committer for its tables: give each table that must not wait for the
 * others' rounds an instance of its own.
 */
public final class WriteStartedChangeStreamToDelta
    extends PTransform<PCollection<String>, PCollection<CommittedBatch>> {
  private final List<TableWrite> tables;
  private final boolean isolate;

  private WriteStartedChangeStreamToDelta(List<TableWrite> tables, boolean isolate) {
    this.tables = List.copyOf(tables);
    this.isolate = isolate;
  }

  /**
   * Follows {@code tables} (continuous reads, each positioned where its stream starts) once their
   * capture instances arrive, committing to their own targets; a table's failure ({@link
   * org.lakecdc.io.mssqlcdc.read.TableFailure}) is recorded for it alone, as in {@link
   * WriteChangeStreamToDelta#fromAll}.
   *
   * @throws IllegalArgumentException when there is no table, or two share a capture instance, a
   *     target or an app id
   */
  public static WriteStartedChangeStreamToDelta of(List<TableWrite> tables) {
    WriteChangesToDelta.checkDistinct(tables);
    return new WriteStartedChangeStreamToDelta(tables, true);
  }

  /**
   * Follows {@code table} alone (a continuous read positioned where its stream starts) once its
   * capture instance arrives, as {@link WriteChangeStreamToDelta#from} does: any failure fails the
   * pipeline, and its batch lines do not name the table.
   */
  public static WriteStartedChangeStreamToDelta alone(TableWrite table) {
    return new WriteStartedChangeStreamToDelta(List.of(table), false);
  }

  @Override
  public PCollection<CommittedBatch> expand(PCollection<String> started) {
    return WriteChangeStreamToDelta.commitInRounds(
        TableWrite.readAndWriteFiles(started, tables, isolate),
        tables,
        isolate,
        CommitterRound.defaultThreads(),
        WriteChangeStreamToDelta.DEFAULT_ROUND_WAIT);
  }
}
