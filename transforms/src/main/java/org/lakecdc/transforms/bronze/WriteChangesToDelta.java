package org.lakecdc.transforms.bronze;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import org.apache.beam.sdk.schemas.Schema;
import org.apache.beam.sdk.transforms.PTransform;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PBegin;
import org.apache.beam.sdk.values.PCollection;
import org.lakecdc.io.mssqlcdc.MssqlCdcIO;
import org.lakecdc.io.mssqlcdc.read.ChangeBatch;

/**
 * Reads change batches with {@code MssqlCdcIO.read()} (bounded form) and writes them to bronze,
 * facts and the verdict, exactly once.
 *
 * <pre>
 * read by LSN range (one table: read(); many: readAll(), one element per table) ── each
 *   batch's rows written to its bronze data files in the reading stage (BronzeBatchSink; rows
 *   never leave it) ── (batch, files) ── gathered per table, then the tables under one key ──
 *   Commit in rounds, each
 *   the next batch of every table: its bronze commits, one facts commit, the verdicts
 * </pre>
 *
 * <p>Only the small batch descriptions cross the shuffle: the files' {@code add} actions, the
 * counts and what the reader measured at the source. Batch numbers continue the target's position:
 * the run's batch {@code sequence} k is batch {@code start.batchId + 1 + k} ({@link
 * DeltaTarget#batchId}). Each bronze commit carries the transaction id {@code (appId, batch)} and
 * the new position (Delta domain metadata), atomically with the data; each facts commit carries
 * {@code (appId#facts, batch)} and the position too. A replayed batch is skipped, by the
 * transaction id and by its end LSN when the table's position is already past it. Data files of a
 * batch whose commit is skipped stay unreferenced (VACUUM removes them).
 *
 * <p>Commits when the whole bounded read is done (the GroupByKey sees every batch); continuous runs
 * use {@link WriteChangeStreamToDelta}, or repeat bounded runs.
 */
public final class WriteChangesToDelta extends PTransform<PBegin, PCollection<CommittedBatch>> {
  private final List<TableWrite> tables;
  private final boolean isolate;
  private final int commitThreads;

  private WriteChangesToDelta(List<TableWrite> tables, boolean isolate, int commitThreads) {
    this.tables = List.copyOf(tables);
    this.isolate = isolate;
    this.commitThreads = commitThreads;
  }

  /**
   * The same write, making a committer round's bronze commits (one per table, each its own Delta
   * log) on up to {@code threads} threads at once; the round's facts commit and control rewrite
   * follow once all have ended. Default: the worker's processors, at least 2.
   *
   * @throws IllegalArgumentException when {@code threads} is below 1
   */
  public WriteChangesToDelta withCommitThreads(int threads) {
    return new WriteChangesToDelta(tables, isolate, CommitterRound.checkThreads(threads));
  }

  /**
   * Reads with {@code read} (bounded) and writes to {@code target}; {@code changeSchema} is the
   * read's output schema ({@code read.outputSchema()}). The tables must exist, created with {@link
   * BronzeTable#definition(Schema)} and the facts and control definitions. A failed read fails the
   * pipeline.
   */
  public static WriteChangesToDelta from(
      MssqlCdcIO.Read read, DeltaTarget target, Schema changeSchema) {
    return new WriteChangesToDelta(
        List.of(new TableWrite(read, target, changeSchema)),
        false,
        CommitBatches.defaultCommitThreads());
  }

  /**
   * Reads every table (bounded; two or more in one {@code MssqlCdcIO.readAll()}) and writes each to
   * its own target, in committer rounds (each the next batch of every table, one facts commit per
   * round). A table whose read fails with a {@link org.lakecdc.io.mssqlcdc.read.TableFailure}
   * commits its batches before the failure, records a {@code table_failed} facts row ({@link
   * RecordedFailure}) and stops; the others go on to their end.
   *
   * @throws IllegalArgumentException when two tables share a capture instance or a target
   */
  public static WriteChangesToDelta fromAll(List<TableWrite> tables) {
    checkDistinct(tables);
    return new WriteChangesToDelta(tables, true, CommitBatches.defaultCommitThreads());
  }

  /** Refuses two tables with one capture instance, bronze table or app id. */
  static void checkDistinct(List<TableWrite> tables) {
    if (tables.isEmpty()) {
      throw new IllegalArgumentException("A change write needs at least one table");
    }
    java.util.Set<String> names = new java.util.HashSet<>();
    java.util.Set<String> targets = new java.util.HashSet<>();
    java.util.Set<String> apps = new java.util.HashSet<>();
    for (TableWrite table : tables) {
      if (!names.add(table.captureInstance().toLowerCase(java.util.Locale.ROOT))) {
        throw new IllegalArgumentException(
            "Capture instance " + table.captureInstance() + " is written twice");
      }
      if (!targets.add(table.target().bronzePath())) {
        throw new IllegalArgumentException(
            "Two tables write the bronze table " + table.target().bronzePath());
      }
      if (!apps.add(table.target().appId())) {
        throw new IllegalArgumentException(
            "Two tables write under the app id " + table.target().appId());
      }
    }
  }

  @Override
  public PCollection<CommittedBatch> expand(PBegin input) {
    return TableWrite.readAndWriteFiles(input, tables, isolate)
        .apply("Gather the batches", new GatherTables())
        .apply(
            "Commit batches in LSN order",
            ParDo.of(
                new CommitBatches(TableWrite.targets(tables), tables.size() > 1, commitThreads)))
        .setCoder(CommittedBatchCoder.of());
  }

  /** The batches in sequence (= LSN) order. */
  static List<KV<ChangeBatch, BatchFiles>> inSequence(Iterable<KV<ChangeBatch, BatchFiles>> all) {
    List<KV<ChangeBatch, BatchFiles>> sorted = new ArrayList<>();
    all.forEach(sorted::add);
    sorted.sort(Comparator.comparingLong(kv -> kv.getKey().sequence()));
    return sorted;
  }
}
