package org.lakecdc.transforms.bronze;

import java.util.ArrayList;
import java.util.List;
import org.apache.beam.sdk.coders.Coder;
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
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollection;
import org.lakecdc.io.mssqlcdc.read.ChangeBatch;

/**
 * Every table's batch descriptions of a bounded run in one element for the committer: keyed {@link
 * CommitBatches#ROUND_KEY}, holding all the batches of all the tables. Gathered in two steps: each
 * table's batches under its own key first, then the tables' lists under the one key. One {@code
 * GroupByKey} of every batch under one key costs the DirectRunner the square of the batches (its
 * bag state of a key is copied, every element through the coder, each time a bundle for the key
 * arrives: 500 batches of 50 tables, most of a worker's time in copies); gathered per table first,
 * the key's bag holds one element per table.
 */
final class GatherTables
    extends PTransform<
        PCollection<KV<String, KV<ChangeBatch, BatchFiles>>>,
        PCollection<KV<String, Iterable<KV<ChangeBatch, BatchFiles>>>>> {

  /** The coder of one batch description: the batch and its files (null when it has no row). */
  static Coder<KV<ChangeBatch, BatchFiles>> batchCoder() {
    return KvCoder.of(ChangeBatch.coder(), NullableCoder.of(BatchFilesCoder.of()));
  }

  @Override
  public PCollection<KV<String, Iterable<KV<ChangeBatch, BatchFiles>>>> expand(
      PCollection<KV<String, KV<ChangeBatch, BatchFiles>>> byTable) {
    return byTable
        .apply("Gather each table's batches", GroupByKey.create())
        .apply("Drop the table keys", Values.create())
        .apply("Key every table to one committer", WithKeys.of(CommitBatches.ROUND_KEY))
        .setCoder(KvCoder.of(StringUtf8Coder.of(), IterableCoder.of(batchCoder())))
        .apply("Gather the tables", GroupByKey.create())
        .apply("Every table's batches", ParDo.of(new Concatenate()))
        .setCoder(KvCoder.of(StringUtf8Coder.of(), IterableCoder.of(batchCoder())));
  }

  /** The tables' lists of batches as one list, table after table. */
  private static final class Concatenate
      extends DoFn<
          KV<String, Iterable<Iterable<KV<ChangeBatch, BatchFiles>>>>,
          KV<String, Iterable<KV<ChangeBatch, BatchFiles>>>> {
    @ProcessElement
    public void process(
        @Element KV<String, Iterable<Iterable<KV<ChangeBatch, BatchFiles>>>> tables,
        OutputReceiver<KV<String, Iterable<KV<ChangeBatch, BatchFiles>>>> out) {
      List<KV<ChangeBatch, BatchFiles>> all = new ArrayList<>();
      for (Iterable<KV<ChangeBatch, BatchFiles>> table : tables.getValue()) {
        table.forEach(all::add);
      }
      out.output(KV.of(tables.getKey(), all));
    }
  }
}
