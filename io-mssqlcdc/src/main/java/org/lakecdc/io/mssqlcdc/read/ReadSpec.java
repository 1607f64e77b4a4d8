package org.lakecdc.io.mssqlcdc.read;

import java.io.Serializable;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import org.apache.beam.sdk.annotations.Internal;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.coders.KvCoder;
import org.apache.beam.sdk.coders.NullableCoder;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.transforms.Create;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PBegin;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.PCollectionTuple;
import org.apache.beam.sdk.values.Row;
import org.apache.beam.sdk.values.TupleTag;
import org.apache.beam.sdk.values.TupleTagList;
import org.joda.time.Duration;
import org.lakecdc.io.mssqlcdc.source.RowSink;
import org.lakecdc.io.mssqlcdc.source.SourceSpec;

/**
 * The resolved configuration of one change read ({@code MssqlCdcIO.read()}), shipped to workers
 * with the DoFn, and the steps it expands into: everything is validated and the output schema is
 * fixed before the pipeline runs.
 *
 * <p>Steps: {@code Create(capture instance)} (many of them for {@code readAll()}) → {@link
 * ReadChangesDoFn}, which emits the rows and batches, or writes each batch's rows through a {@link
 * RowSink} and emits {@code (batch, result)}.
 *
 * <p>Internal: {@code MssqlCdcIO.Read} builds and expands it.
 *
 * @param source the capture instance, client factory and output schema
 * @param startingLsn where a new read starts
 * @param maxCommitsPerBatch commits of {@code cdc.lsn_time_mapping} per batch, or 0 for no limit
 * @param numPartitions parts the initial range is split into for parallel reading, at least 1
 * @param minRowsPerPartition floor of change rows per part
 * @param continuous the continuous form (follows {@code max_lsn}) rather than the bounded one
 * @param pollInterval how long the continuous form waits when caught up
 * @param stopCondition when the continuous form stops
 * @param schemaChangePolicy what DDL in a batch's range does (docs/scenarios.md "Schema change")
 * @param onDataLoss what a batch whose changes were purged does ({@link DataLossPolicy})
 */
@Internal
public record ReadSpec(
    SourceSpec source,
    StartingLsn startingLsn,
    int maxCommitsPerBatch,
    int numPartitions,
    long minRowsPerPartition,
    boolean continuous,
    Duration pollInterval,
    StopCondition stopCondition,
    SchemaChangePolicy schemaChangePolicy,
    DataLossPolicy onDataLoss)
    implements Serializable {
  /** The rows output of {@link #expandRowsAndBatches}. */
  public static final TupleTag<Row> CHANGES = new TupleTag<Row>("changes") {};

  /** The batches output of {@link #expandRowsAndBatches}: one {@link ChangeBatch} per batch. */
  public static final TupleTag<ChangeBatch> BATCHES = new TupleTag<ChangeBatch>("batches") {};

  /** Checks the fields. */
  public ReadSpec {
    Objects.requireNonNull(source, "source");
    Objects.requireNonNull(startingLsn, "startingLsn");
    Objects.requireNonNull(pollInterval, "pollInterval");
    Objects.requireNonNull(stopCondition, "stopCondition");
    Objects.requireNonNull(schemaChangePolicy, "schemaChangePolicy");
    Objects.requireNonNull(onDataLoss, "onDataLoss");
  }

  /**
   * The read's rows under {@link #CHANGES} and its batches under {@link #BATCHES} (each after its
   * rows).
   *
   * @param input the pipeline's start
   * @return both outputs, the rows in the source's schema
   */
  public PCollectionTuple expandRowsAndBatches(PBegin input) {
    ReadChangesDoFn<Row> fn = ReadChangesDoFn.emitting(continuous, this);
    PCollectionTuple outputs =
        captureInstances(input, List.of(this), false)
            .apply(
                "Read changes by LSN range",
                ParDo.of(fn).withOutputTags(CHANGES, TupleTagList.of(BATCHES)));
    outputs.get(CHANGES).setRowSchema(source.schema());
    outputs.get(BATCHES).setCoder(ChangeBatch.coder());
    return outputs;
  }

  /**
   * Each batch's rows written through {@code sink} in the reading stage: one {@code (batch, what
   * the sink wrote)} per batch.
   *
   * @param input the pipeline's start
   * @param sink writes one batch's rows
   * @param <ResultT> what the sink returns per batch
   * @return the written batches
   */
  public <ResultT> PCollection<KV<ChangeBatch, ResultT>> expandWrites(
      PBegin input, RowSink<ResultT> sink) {
    return written(
        captureInstances(input, List.of(this), false),
        List.of(this),
        Map.of(source.captureInstance(), sink),
        sink.resultCoder(),
        false);
  }

  /**
   * {@link #expandWrites} started by elements: the read starts when an element naming its capture
   * instance arrives ({@code MssqlCdcIO.read().writeFrom}); its failures fail the pipeline.
   *
   * @param captureInstances this read's capture instance, at most once
   * @param sink writes one batch's rows
   * @param <ResultT> what the sink returns per batch
   * @return the written batches
   */
  public <ResultT> PCollection<KV<ChangeBatch, ResultT>> expandWritesFrom(
      PCollection<String> captureInstances, RowSink<ResultT> sink) {
    return written(
        captureInstances,
        List.of(this),
        Map.of(source.captureInstance(), sink),
        sink.resultCoder(),
        false);
  }

  /**
   * Many reads in one splittable DoFn ({@code MssqlCdcIO.readAll()}), each batch's rows written
   * through its table's sink; a {@link TableFailure} ends one table's read with a {@link
   * ChangeBatch#failed} batch and a null result.
   *
   * @param input the pipeline's start
   * @param specs the reads, one per capture instance, of one form and one client factory
   * @param sinks the sink of each read, by its configured capture instance
   * @param <ResultT> what the sinks return per batch
   * @return the written batches of every table
   */
  public static <ResultT> PCollection<KV<ChangeBatch, ResultT>> expandAllWrites(
      PBegin input, List<ReadSpec> specs, Map<String, ? extends RowSink<ResultT>> sinks) {
    Coder<ResultT> resultCoder = sinks.values().iterator().next().resultCoder();
    return written(
        captureInstances(input, specs, true), specs, sinks, NullableCoder.of(resultCoder), true);
  }

  /**
   * {@link #expandAllWrites} started by elements: each element of {@code captureInstances} names
   * one of the reads ({@code MssqlCdcIO.readAll().writeFrom}), and that table's read starts when
   * its element arrives; a read whose name never arrives reads nothing.
   *
   * @param captureInstances the names of the reads to start, each at most once
   * @param specs the reads, one per capture instance, of one form and one client factory
   * @param sinks the sink of each read, by its configured capture instance
   * @param <ResultT> what the sinks return per batch
   * @return the written batches of every table started
   */
  public static <ResultT> PCollection<KV<ChangeBatch, ResultT>> expandAllWritesFrom(
      PCollection<String> captureInstances,
      List<ReadSpec> specs,
      Map<String, ? extends RowSink<ResultT>> sinks) {
    Coder<ResultT> resultCoder = sinks.values().iterator().next().resultCoder();
    return written(captureInstances, specs, sinks, NullableCoder.of(resultCoder), true);
  }

  @SuppressWarnings("unchecked")
  private static <ResultT> PCollection<KV<ChangeBatch, ResultT>> written(
      PCollection<String> captureInstances,
      List<ReadSpec> specs,
      Map<String, ? extends RowSink<ResultT>> sinks,
      Coder<ResultT> resultCoder,
      boolean isolateFailures) {
    Map<String, RowSink<Object>> anySinks = new LinkedHashMap<>();
    for (ReadSpec spec : specs) {
      String ci = spec.source().captureInstance();
      anySinks.put(ci, (RowSink<Object>) sinks.get(ci));
    }
    TupleTag<KV<ChangeBatch, Object>> written = new TupleTag<>("written");
    ReadChangesDoFn<KV<ChangeBatch, Object>> fn =
        ReadChangesDoFn.of(
            specs.get(0).continuous(),
            new ReadChangesDoFn.Wiring(specs, written, anySinks, isolateFailures));
    PCollection<KV<ChangeBatch, Object>> out =
        captureInstances
            .apply(
                "Read and write changes by LSN range",
                ParDo.of(fn).withOutputTags(written, TupleTagList.empty()))
            .get(written);
    out.setCoder(KvCoder.of(ChangeBatch.coder(), (Coder<Object>) resultCoder));
    return (PCollection<KV<ChangeBatch, ResultT>>) (PCollection<?>) out;
  }

  /** The elements a read starts from: the capture instance's name, or every name of a readAll(). */
  private static PCollection<String> captureInstances(
      PBegin input, List<ReadSpec> specs, boolean all) {
    if (!all) {
      String ci = specs.get(0).source().captureInstance();
      return input.apply(
          "Capture instance " + ci.toLowerCase(Locale.ROOT),
          Create.of(ci).withCoder(StringUtf8Coder.of()));
    }
    List<String> names = specs.stream().map(spec -> spec.source().captureInstance()).toList();
    return input.apply("Capture instances", Create.of(names).withCoder(StringUtf8Coder.of()));
  }
}
