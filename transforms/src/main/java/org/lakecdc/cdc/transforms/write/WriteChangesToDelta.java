package org.lakecdc.cdc.transforms.write;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import org.apache.beam.sdk.coders.KvCoder;
import org.apache.beam.sdk.coders.SerializableCoder;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.coders.VarLongCoder;
import org.apache.beam.sdk.schemas.Schema;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.GroupByKey;
import org.apache.beam.sdk.transforms.PTransform;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.View;
import org.apache.beam.sdk.transforms.WithKeys;
import org.apache.beam.sdk.transforms.join.CoGroupByKey;
import org.apache.beam.sdk.transforms.join.KeyedPCollectionTuple;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.PCollectionTuple;
import org.apache.beam.sdk.values.PCollectionView;
import org.apache.beam.sdk.values.Row;
import org.apache.beam.sdk.values.TupleTag;
import org.lakecdc.cdc.transforms.bronze.BronzeTable;
import org.lakecdc.cdc.transforms.delta.DataFileAction;
import org.lakecdc.cdc.transforms.delta.DeltaTables;
import org.lakecdc.mssqlcdc.io.ChangeBatch;
import org.lakecdc.mssqlcdc.io.MssqlCdcIO;
import org.lakecdc.mssqlcdc.lsn.Lsn;
import org.lakecdc.mssqlcdc.schema.MetadataColumns;

/**
 * Writes the output of {@code MssqlCdcIO.read().withBatches()} (bounded form) to bronze, facts and
 * the verdict, exactly once.
 *
 * <pre>
 * batches ─ View.asList ───────────────┐ (side input: every batch, numbered in LSN order)
 * changes ─ Number rows by batch ──────┴─ GroupByKey(batch) ─ Write bronze data files (parallel)
 *                                                                  │
 * batches ─ key by target ─────────────────────── CoGroupByKey(target) ─ Commit batches in LSN
 *                                                   order: bronze, then facts, then the verdict
 * </pre>
 *
 * <p>Batch numbers continue the target's position: the run's first batch is {@code start.batchId +
 * 1}. Each bronze commit carries the transaction id {@code (appId, batch)} and the new position
 * (Delta domain metadata), atomically with the data; each facts commit carries {@code (appId#facts,
 * batch)} and the position too. A replayed or re-planned batch is skipped: by the transaction id,
 * and by its end LSN when the table's position is already past it. Data files of a batch whose
 * commit is skipped stay unreferenced (VACUUM removes them).
 *
 * <p>Needs every batch before committing (the side input and the join see the whole bounded input),
 * so it is for the bounded form; continuous runs repeat bounded runs.
 */
public final class WriteChangesToDelta
    extends PTransform<PCollectionTuple, PCollection<CommittedBatch>> {
  private final DeltaTarget target;
  private final Schema changeSchema;

  private WriteChangesToDelta(DeltaTarget target, Schema changeSchema) {
    this.target = target;
    this.changeSchema = changeSchema;
  }

  /**
   * Writes to {@code target}; {@code changeSchema} is the schema of the change rows (the tables
   * must exist, created with {@link BronzeTable#definition(Schema)} and the facts and control
   * definitions).
   */
  public static WriteChangesToDelta to(DeltaTarget target, Schema changeSchema) {
    return new WriteChangesToDelta(target, changeSchema);
  }

  @Override
  public PCollection<CommittedBatch> expand(PCollectionTuple input) {
    PCollection<ChangeBatch> batches = input.get(MssqlCdcIO.BATCHES);
    PCollection<Row> changes = input.get(MssqlCdcIO.CHANGES);
    PCollectionView<List<ChangeBatch>> allBatches = batches.apply("All batches", View.asList());
    long firstBatch = target.start().batchId() + 1;

    PCollection<KV<Long, Iterable<Row>>> byBatch =
        changes
            .apply(
                "Number rows by batch",
                ParDo.of(new NumberRowsByBatch(allBatches, firstBatch)).withSideInputs(allBatches))
            .setCoder(KvCoder.of(VarLongCoder.of(), changes.getCoder()))
            .apply("Group rows by batch", GroupByKey.create());
    PCollection<KV<String, BatchFiles>> files =
        byBatch
            .apply(
                "Write bronze data files",
                ParDo.of(new WriteBronzeFiles(target.bronzePath(), changeSchema, target)))
            .setCoder(KvCoder.of(StringUtf8Coder.of(), SerializableCoder.of(BatchFiles.class)));

    TupleTag<ChangeBatch> batchTag = new TupleTag<>("batches");
    TupleTag<BatchFiles> filesTag = new TupleTag<>("files");
    PCollection<KV<String, ChangeBatch>> keyedBatches =
        batches
            .apply("Key batches by target", WithKeys.of(target.bronzePath()))
            .setCoder(KvCoder.of(StringUtf8Coder.of(), SerializableCoder.of(ChangeBatch.class)));
    return KeyedPCollectionTuple.of(batchTag, keyedBatches)
        .and(filesTag, files)
        .apply("Join batches and files", CoGroupByKey.create())
        .apply(
            "Commit batches in LSN order",
            ParDo.of(
                new CommitBatches(
                    target, batchTag, filesTag, BatchFacts.readColumns(changeSchema))))
        .setCoder(SerializableCoder.of(CommittedBatch.class));
  }

  /** Batches in LSN order (ranges never overlap). */
  static List<ChangeBatch> inLsnOrder(Iterable<ChangeBatch> batches) {
    List<ChangeBatch> sorted = new ArrayList<>();
    batches.forEach(sorted::add);
    sorted.sort(Comparator.comparing(ChangeBatch::fromLsn));
    return sorted;
  }

  /** Keys each change row by the number of the batch whose LSN interval holds it. */
  static final class NumberRowsByBatch extends DoFn<Row, KV<Long, Row>> {
    private final PCollectionView<List<ChangeBatch>> allBatches;
    private final long firstBatch;
    private transient List<ChangeBatch> sorted;

    NumberRowsByBatch(PCollectionView<List<ChangeBatch>> allBatches, long firstBatch) {
      this.allBatches = allBatches;
      this.firstBatch = firstBatch;
    }

    @ProcessElement
    public void process(ProcessContext context) {
      if (sorted == null) {
        sorted = inLsnOrder(context.sideInput(allBatches));
      }
      Row row = context.element();
      Lsn lsn = Lsn.parse(row.getString(MetadataColumns.START_LSN));
      int low = 0;
      int high = sorted.size() - 1;
      while (low <= high) {
        int mid = (low + high) >>> 1;
        ChangeBatch batch = sorted.get(mid);
        if (lsn.isBefore(batch.fromLsn())) {
          high = mid - 1;
        } else if (lsn.isAfter(batch.toLsn())) {
          low = mid + 1;
        } else {
          context.output(KV.of(firstBatch + mid, row));
          return;
        }
      }
      throw new IllegalStateException(
          "Change row at " + lsn + " is in no batch read by this run: the reader is inconsistent");
    }
  }

  /** Writes one batch's bronze rows as Parquet data files (on a worker); does not commit. */
  static final class WriteBronzeFiles
      extends DoFn<KV<Long, Iterable<Row>>, KV<String, BatchFiles>> {
    private final String bronzePath;
    private final Schema changeSchema;
    private final DeltaTarget target;
    private transient DeltaTables tables;
    private transient Schema bronzeSchema;

    WriteBronzeFiles(String bronzePath, Schema changeSchema, DeltaTarget target) {
      this.bronzePath = bronzePath;
      this.changeSchema = changeSchema;
      this.target = target;
    }

    @Setup
    public void setup() {
      tables = target.tables();
      bronzeSchema = BronzeTable.schema(changeSchema);
    }

    @ProcessElement
    public void process(
        @Element KV<Long, Iterable<Row>> batch, OutputReceiver<KV<String, BatchFiles>> out) {
      long batchId = batch.getKey();
      Integer bronzeBatchId = Math.toIntExact(batchId);
      // The grouped rows are read once (a runner may not allow a second pass): counted as written.
      BatchStats.Counter counter = new BatchStats.Counter(batchId);
      Iterable<Row> bronzeRows =
          () ->
              new java.util.Iterator<Row>() {
                private final java.util.Iterator<Row> changes = batch.getValue().iterator();

                @Override
                public boolean hasNext() {
                  return changes.hasNext();
                }

                @Override
                public Row next() {
                  Row change = changes.next();
                  counter.add(change);
                  return BronzeTable.toBronzeRow(bronzeSchema, change, bronzeBatchId, null, null);
                }
              };
      List<DataFileAction> files = tables.writeDataFiles(bronzePath, bronzeSchema, bronzeRows);
      BatchStats stats = counter.stats();
      out.output(KV.of(target.bronzePath(), new BatchFiles(batchId, files, stats)));
    }
  }
}
