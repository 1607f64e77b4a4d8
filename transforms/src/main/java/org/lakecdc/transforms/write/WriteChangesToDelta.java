package org.lakecdc.transforms.write;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import org.apache.beam.sdk.coders.KvCoder;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.schemas.Schema;
import org.apache.beam.sdk.transforms.GroupByKey;
import org.apache.beam.sdk.transforms.PTransform;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.WithKeys;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PBegin;
import org.apache.beam.sdk.values.PCollection;
import org.lakecdc.io.mssqlcdc.ChangeBatch;
import org.lakecdc.io.mssqlcdc.ChangeBatchCoder;
import org.lakecdc.io.mssqlcdc.MssqlCdcIO;
import org.lakecdc.transforms.bronze.BronzeTable;

/**
 * Reads change batches with {@code MssqlCdcIO.read()} (bounded form) and writes them to bronze,
 * facts and the verdict, exactly once.
 *
 * <pre>
 * read by LSN range ── each batch's rows written to bronze data files in the reading stage
 *   (BronzeBatchSink; rows never leave it) ── (batch, files) ── key by target ── GroupByKey
 *   ── Commit batches in sequence order: bronze, then facts, then the verdict
 * </pre>
 *
 * <p>Only the small batch descriptions cross the shuffle: the files' {@code add} actions, the
 * counts and what the reader measured at the source. Batch numbers continue the target's position:
 * the run's batch {@code sequence} k is batch {@code start.batchId + 1 + k}. Each bronze commit
 * carries the transaction id {@code (appId, batch)} and the new position (Delta domain metadata),
 * atomically with the data; each facts commit carries {@code (appId#facts, batch)} and the position
 * too. A replayed batch is skipped, by the transaction id and by its end LSN when the table's
 * position is already past it. Data files of a batch whose commit is skipped stay unreferenced
 * (VACUUM removes them).
 *
 * <p>Commits when the whole bounded read is done (the GroupByKey sees every batch); continuous runs
 * use {@link WriteChangeStreamToDelta}, or repeat bounded runs.
 */
public final class WriteChangesToDelta extends PTransform<PBegin, PCollection<CommittedBatch>> {
  private final MssqlCdcIO.Read read;
  private final DeltaTarget target;
  private final Schema changeSchema;

  private WriteChangesToDelta(MssqlCdcIO.Read read, DeltaTarget target, Schema changeSchema) {
    this.read = read;
    this.target = target;
    this.changeSchema = changeSchema;
  }

  /**
   * Reads with {@code read} (bounded) and writes to {@code target}; {@code changeSchema} is the
   * read's output schema ({@code read.outputSchema()}). The tables must exist, created with {@link
   * BronzeTable#definition(Schema)} and the facts and control definitions.
   */
  public static WriteChangesToDelta from(
      MssqlCdcIO.Read read, DeltaTarget target, Schema changeSchema) {
    return new WriteChangesToDelta(read, target, changeSchema);
  }

  @Override
  public PCollection<CommittedBatch> expand(PBegin input) {
    PCollection<KV<ChangeBatch, BatchFiles>> written =
        input.apply(
            "Read and write bronze files", read.writeTo(BronzeBatchSink.of(target, changeSchema)));
    return written
        .apply("Key batches by target", WithKeys.of(target.bronzePath()))
        .setCoder(
            KvCoder.of(
                StringUtf8Coder.of(), KvCoder.of(ChangeBatchCoder.of(), BatchFilesCoder.of())))
        .apply("Gather the batches", GroupByKey.create())
        .apply("Commit batches in LSN order", ParDo.of(new CommitBatches(target)))
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
