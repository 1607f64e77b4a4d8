package org.lakecdc.transforms.bronze;

import java.util.ArrayList;
import java.util.List;
import org.apache.beam.sdk.coders.ByteArrayCoder;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.coders.CoderException;
import org.apache.beam.sdk.coders.IterableCoder;
import org.apache.beam.sdk.coders.KvCoder;
import org.apache.beam.sdk.coders.NullableCoder;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.GroupByKey;
import org.apache.beam.sdk.transforms.PTransform;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.Values;
import org.apache.beam.sdk.transforms.WithKeys;
import org.apache.beam.sdk.util.CoderUtils;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollection;
import org.lakecdc.io.mssqlcdc.read.ChangeBatch;

/**
 * Every table's batch descriptions of a bounded run in one element for the committer: keyed {@link
 * CommitBatches#ROUND_KEY}, holding all the batches of all the tables, table after table. Gathered
 * in two steps: each table's batches under its own key, encoded as one byte array; then the tables'
 * arrays under the one key, decoded once by the committer's input.
 *
 * <p>Why not one {@code GroupByKey} of every batch under the one key: the DirectRunner copies the
 * bag state of a key, every element through its coder, each time a bundle for the key arrives (a
 * read's output of one table is a bundle), so 500 batches of 50 tables went through the batch
 * coders' JSON about 12,000 times (9% of the job's CPU). Here the one key's bag holds one byte
 * array per table, which such a copy only copies; a table's own key holds its few batches.
 */
final class GatherTables
    extends PTransform<
        PCollection<KV<String, KV<ChangeBatch, BatchFiles>>>,
        PCollection<KV<String, Iterable<KV<ChangeBatch, BatchFiles>>>>> {

  /** The coder of one batch description: the batch and its files (null when it has no row). */
  static Coder<KV<ChangeBatch, BatchFiles>> batchCoder() {
    return KvCoder.of(ChangeBatch.coder(), NullableCoder.of(BatchFilesCoder.of()));
  }

  /** The coder of one table's batches, as the byte array that crosses the one key. */
  private static Coder<Iterable<KV<ChangeBatch, BatchFiles>>> tableCoder() {
    return IterableCoder.of(batchCoder());
  }

  @Override
  public PCollection<KV<String, Iterable<KV<ChangeBatch, BatchFiles>>>> expand(
      PCollection<KV<String, KV<ChangeBatch, BatchFiles>>> byTable) {
    return byTable
        .apply("Gather each table's batches", GroupByKey.create())
        .apply("Drop the table keys", Values.create())
        .apply("Encode each table's batches", ParDo.of(new Encode()))
        .setCoder(ByteArrayCoder.of())
        .apply("Key every table to one committer", WithKeys.of(CommitBatches.ROUND_KEY))
        .setCoder(KvCoder.of(StringUtf8Coder.of(), ByteArrayCoder.of()))
        .apply("Gather the tables", GroupByKey.create())
        .apply("Every table's batches", ParDo.of(new Concatenate()))
        .setCoder(KvCoder.of(StringUtf8Coder.of(), IterableCoder.of(batchCoder())));
  }

  /** One table's batches as one byte array. */
  private static final class Encode extends DoFn<Iterable<KV<ChangeBatch, BatchFiles>>, byte[]> {
    @ProcessElement
    public void process(
        @Element Iterable<KV<ChangeBatch, BatchFiles>> table, OutputReceiver<byte[]> out)
        throws CoderException {
      out.output(CoderUtils.encodeToByteArray(tableCoder(), table));
    }
  }

  /** The tables' batches as one list, table after table. */
  private static final class Concatenate
      extends DoFn<
          KV<String, Iterable<byte[]>>, KV<String, Iterable<KV<ChangeBatch, BatchFiles>>>> {
    @ProcessElement
    public void process(
        @Element KV<String, Iterable<byte[]>> tables,
        OutputReceiver<KV<String, Iterable<KV<ChangeBatch, BatchFiles>>>> out)
        throws CoderException {
      List<KV<ChangeBatch, BatchFiles>> all = new ArrayList<>();
      for (byte[] table : tables.getValue()) {
        CoderUtils.decodeFromByteArray(tableCoder(), table).forEach(all::add);
      }
      out.output(KV.of(tables.getKey(), all));
    }
  }
}
