package org.lakecdc.cdc.transforms.write;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.coders.KvCoder;
import org.apache.beam.sdk.coders.SerializableCoder;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.schemas.Schema;
import org.apache.beam.sdk.state.BagState;
import org.apache.beam.sdk.state.StateSpec;
import org.apache.beam.sdk.state.StateSpecs;
import org.apache.beam.sdk.state.ValueState;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.Flatten;
import org.apache.beam.sdk.transforms.MapElements;
import org.apache.beam.sdk.transforms.PTransform;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.join.RawUnionValue;
import org.apache.beam.sdk.transforms.join.UnionCoder;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.PCollectionList;
import org.apache.beam.sdk.values.PCollectionTuple;
import org.apache.beam.sdk.values.Row;
import org.apache.beam.sdk.values.TypeDescriptor;
import org.apache.beam.sdk.values.TypeDescriptors;
import org.lakecdc.cdc.transforms.bronze.BronzeTable;
import org.lakecdc.cdc.transforms.delta.DataFileAction;
import org.lakecdc.cdc.transforms.delta.DeltaTables;
import org.lakecdc.cdc.transforms.position.StreamPosition;
import org.lakecdc.mssqlcdc.client.CdcClient;
import org.lakecdc.mssqlcdc.client.Commit;
import org.lakecdc.mssqlcdc.io.ChangeBatch;
import org.lakecdc.mssqlcdc.io.MssqlCdcIO;
import org.lakecdc.mssqlcdc.lsn.Lsn;
import org.lakecdc.mssqlcdc.schema.MetadataColumns;

/**
 * Writes the output of the continuous form of {@code MssqlCdcIO.read().withBatches()} to bronze,
 * facts and the verdict, exactly once, batch by batch as the batches arrive: the continuous
 * counterpart of {@link WriteChangesToDelta}, which needs the whole bounded input.
 *
 * <pre>
 * changes ─┐
 *          ├─ key by target ─ Commit each batch when whole and next in LSN order (stateful, one key)
 * batches ─┘
 * </pre>
 *
 * <p>No window, trigger or watermark decides when a batch is written: the data does. The one
 * committer of the target keeps the rows and batches that arrived in its state and commits the
 * lowest pending batch once (1) every one of its rows is there (the {@link ChangeBatch} carries its
 * row count) and (2) no commit of {@code cdc.lsn_time_mapping} lies between the target's position
 * and the batch's first LSN (so no earlier batch, from another part of the read, is still coming).
 * It then writes the batch's bronze data files and commits it as {@link WriteChangesToDelta} does
 * (same batch numbering, transaction ids, positions, facts and verdict; a replayed batch whose end
 * is already in the tables is skipped), and forgets it. The state holds the batches in flight only:
 * at most a few batches of {@code maxCommitsPerBatch} commits.
 *
 * <p>Runs on runners with stateful processing in the global window in streaming (Direct, Flink);
 * the Spark runner runs the job's bounded form instead.
 */
public final class WriteChangeStreamToDelta
    extends PTransform<PCollectionTuple, PCollection<CommittedBatch>> {
  private final DeltaTarget target;
  private final Schema changeSchema;

  private WriteChangeStreamToDelta(DeltaTarget target, Schema changeSchema) {
    this.target = target;
    this.changeSchema = changeSchema;
  }

  /**
   * Writes to {@code target}; {@code changeSchema} is the schema of the change rows (the tables
   * must exist, as for {@link WriteChangesToDelta#to}).
   */
  public static WriteChangeStreamToDelta to(DeltaTarget target, Schema changeSchema) {
    return new WriteChangeStreamToDelta(target, changeSchema);
  }

  @Override
  public PCollection<CommittedBatch> expand(PCollectionTuple input) {
    PCollection<Row> changes = input.get(MssqlCdcIO.CHANGES);
    Coder<Row> rowCoder = changes.getCoder();
    Coder<ChangeBatch> batchCoder = SerializableCoder.of(ChangeBatch.class);
    KvCoder<String, RawUnionValue> coder =
        KvCoder.of(StringUtf8Coder.of(), UnionCoder.of(List.of(rowCoder, batchCoder)));
    String key = target.bronzePath();
    PCollection<KV<String, RawUnionValue>> rows =
        changes
            .apply(
                "Key rows by target",
                MapElements.into(
                        TypeDescriptors.kvs(
                            TypeDescriptors.strings(), TypeDescriptor.of(RawUnionValue.class)))
                    .via((Row r) -> KV.of(key, new RawUnionValue(0, r))))
            .setCoder(coder);
    PCollection<KV<String, RawUnionValue>> batches =
        input
            .get(MssqlCdcIO.BATCHES)
            .apply(
                "Key batches by target",
                MapElements.into(
                        TypeDescriptors.kvs(
                            TypeDescriptors.strings(), TypeDescriptor.of(RawUnionValue.class)))
                    .via((ChangeBatch b) -> KV.of(key, new RawUnionValue(1, b))))
            .setCoder(coder);
    return PCollectionList.of(rows)
        .and(batches)
        .apply("Rows and batches", Flatten.pCollections())
        .setCoder(coder)
        .apply(
            "Commit whole batches in LSN order",
            ParDo.of(new CommitWholeBatches(target, changeSchema, rowCoder, batchCoder)))
        .setCoder(SerializableCoder.of(CommittedBatch.class));
  }

  /** The one committer of the target (one key): see {@link WriteChangeStreamToDelta}. */
  static final class CommitWholeBatches extends DoFn<KV<String, RawUnionValue>, CommittedBatch> {
    private final DeltaTarget target;
    private final Schema changeSchema;

    @StateId("rows")
    private final StateSpec<BagState<Row>> rowsSpec;

    @StateId("batches")
    private final StateSpec<BagState<ChangeBatch>> batchesSpec;

    @StateId("rowCount")
    private final StateSpec<ValueState<Long>> rowCountSpec = StateSpecs.value();

    @StateId("position")
    private final StateSpec<ValueState<StreamPosition>> positionSpec =
        StateSpecs.value(SerializableCoder.of(StreamPosition.class));

    private transient DeltaTables tables;
    private transient Schema bronzeSchema;

    CommitWholeBatches(
        DeltaTarget target, Schema changeSchema, Coder<Row> rowCoder, Coder<ChangeBatch> coder) {
      this.target = target;
      this.changeSchema = changeSchema;
      this.rowsSpec = StateSpecs.bag(rowCoder);
      this.batchesSpec = StateSpecs.bag(coder);
    }

    @Setup
    public void setup() {
      tables = target.tables();
      bronzeSchema = BronzeTable.schema(changeSchema);
    }

    @ProcessElement
    public void process(
        @Element KV<String, RawUnionValue> element,
        @StateId("rows") BagState<Row> rows,
        @StateId("batches") BagState<ChangeBatch> batches,
        @StateId("rowCount") ValueState<Long> rowCount,
        @StateId("position") ValueState<StreamPosition> positionState,
        OutputReceiver<CommittedBatch> out) {
      RawUnionValue value = element.getValue();
      long buffered = Optional.ofNullable(rowCount.read()).orElse(0L);
      if (value.getUnionTag() == 0) {
        rows.add((Row) value.getValue());
        rowCount.write(++buffered);
      } else {
        batches.add((ChangeBatch) value.getValue());
      }
      List<ChangeBatch> pending = WriteChangesToDelta.inLsnOrder(batches.read());
      if (pending.isEmpty() || buffered < pending.get(0).rows()) {
        return;
      }
      StreamPosition position = Optional.ofNullable(positionState.read()).orElse(target.start());
      BatchCommitter committer =
          new BatchCommitter(target, tables, BatchFacts.readColumns(changeSchema));
      List<Row> held = new ArrayList<>();
      rows.read().forEach(held::add);
      boolean committed = false;
      try (CdcClient client = target.clientFactory().open()) {
        while (!pending.isEmpty()) {
          ChangeBatch batch = pending.get(0);
          List<Row> batchRows = new ArrayList<>();
          List<Row> rest = new ArrayList<>();
          for (Row row : held) {
            Lsn lsn = Lsn.parse(row.getString(MetadataColumns.START_LSN));
            (lsn.isBefore(batch.fromLsn()) || lsn.isAfter(batch.toLsn()) ? rest : batchRows)
                .add(row);
          }
          if (batchRows.size() < batch.rows() || !isNext(client, position, batch)) {
            break;
          }
          long batchId = position.batchId() + 1;
          BatchFiles files = null;
          if (!batchRows.isEmpty()) {
            BatchStats.Counter counter = new BatchStats.Counter(batchId);
            List<Row> bronzeRows = new ArrayList<>(batchRows.size());
            for (Row change : batchRows) {
              counter.add(change);
              bronzeRows.add(
                  BronzeTable.toBronzeRow(
                      bronzeSchema, change, Math.toIntExact(batchId), null, null));
            }
            List<DataFileAction> written =
                tables.writeDataFiles(target.bronzePath(), bronzeSchema, bronzeRows);
            files = new BatchFiles(batchId, written, counter.stats());
          }
          out.output(
              committer.commit(client, position, batch, batchId, files, committer.committedUpTo()));
          position = BatchCommitter.next(position, batchId, batch);
          pending.remove(0);
          held = rest;
          committed = true;
        }
      }
      if (committed) {
        positionState.write(position);
        rows.clear();
        held.forEach(rows::add);
        rowCount.write((long) held.size());
        batches.clear();
        pending.forEach(batches::add);
      }
    }

    /**
     * Whether {@code batch} is the next one after {@code position}: it starts after the position
     * and no commit lies between them (a batch of another part of the read would hold it).
     */
    private static boolean isNext(CdcClient client, StreamPosition position, ChangeBatch batch) {
      if (!batch.fromLsn().isAfter(position.endLsn())) {
        return true;
      }
      Optional<Commit> first = client.nthCommitAfter(position.endLsn(), 1);
      return first.isEmpty() || !first.get().lsn().isBefore(batch.fromLsn());
    }
  }
}
