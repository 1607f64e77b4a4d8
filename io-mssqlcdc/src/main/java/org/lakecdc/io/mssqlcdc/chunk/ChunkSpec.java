package org.lakecdc.io.mssqlcdc.chunk;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import org.apache.beam.sdk.annotations.Internal;
import org.apache.beam.sdk.io.Read;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.values.PBegin;
import org.apache.beam.sdk.values.PCollection;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.io.mssqlcdc.client.CaptureInstance;
import org.lakecdc.io.mssqlcdc.client.CdcClient;
import org.lakecdc.io.mssqlcdc.client.IsolationLevel;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.io.mssqlcdc.source.RowSink;
import org.lakecdc.io.mssqlcdc.source.SourceSpec;

/**
 * The resolved configuration of a chunked snapshot read ({@code MssqlCdcIO.snapshotChunks()}),
 * shipped to workers with its DoFn, and the steps it expands into: the source table and key, the
 * output schema and S are fixed when the pipeline is built.
 *
 * <p>Steps: {@code Read} of a {@link ChunkSource} (the chunk descriptors, never rows; one split per
 * chunk, so the runner hands each chunk to the next free worker) → {@link ReadChunkFn} in the same
 * stage, which writes each chunk's rows through a {@link RowSink} and emits one {@link ChunkRead}.
 *
 * <p>Internal: {@code MssqlCdcIO.SnapshotChunks} builds and expands it.
 *
 * @param source the capture instance, client factory and output schema
 * @param snapshotLsn S: no chunk's stamp may be below it
 * @param sourceSchema the tracked table's schema
 * @param sourceTable the tracked table
 * @param keyColumns the key columns the chunks' bounds are over
 * @param isolationLevel the isolation level of every chunk's reads
 * @param chunks the chunks to read, in the order given
 * @param openEndAfter the keyset MAX an open last chunk's end is sought after, or null
 */
@Internal
public record ChunkSpec(
    SourceSpec source,
    Lsn snapshotLsn,
    String sourceSchema,
    String sourceTable,
    List<String> keyColumns,
    IsolationLevel isolationLevel,
    List<Chunk> chunks,
    @Nullable List<Object> openEndAfter)
    implements Serializable {
  /** Checks the fields and copies the lists. */
  public ChunkSpec {
    Objects.requireNonNull(source, "source");
    Objects.requireNonNull(snapshotLsn, "snapshotLsn");
    Objects.requireNonNull(sourceSchema, "sourceSchema");
    Objects.requireNonNull(sourceTable, "sourceTable");
    keyColumns = List.copyOf(keyColumns);
    Objects.requireNonNull(isolationLevel, "isolationLevel");
    chunks = List.copyOf(chunks);
    openEndAfter =
        openEndAfter == null ? null : Collections.unmodifiableList(new ArrayList<>(openEndAfter));
  }

  /**
   * The spec of reading {@code chunks} of {@code source}'s table, the table and key of its oldest
   * capture instance read through one client (closed before it returns).
   *
   * @param source the resolved source
   * @param snapshotLsn S
   * @param isolationLevel the isolation level of every chunk's reads
   * @param chunks the chunks to read
   * @param openEndAfter the keyset MAX an open last chunk's end is sought after, or null
   * @return the spec
   */
  public static ChunkSpec of(
      SourceSpec source,
      Lsn snapshotLsn,
      IsolationLevel isolationLevel,
      List<Chunk> chunks,
      @Nullable List<Object> openEndAfter) {
    CaptureInstance instance;
    try (CdcClient client = source.clientFactory().open()) {
      instance = client.captureInstances(source.captureInstance()).get(0);
    }
    return new ChunkSpec(
        source,
        snapshotLsn,
        instance.sourceSchema(),
        instance.sourceTable(),
        instance.keyColumns(),
        isolationLevel,
        chunks,
        openEndAfter);
  }

  /**
   * Each chunk read, its rows written through {@code sink} and then {@code after} run on it, in the
   * reading stage: one {@link ChunkRead} per chunk, in no particular order, carrying {@code
   * after}'s result, coded with {@link ChunkRead#coder} over {@link AfterChunkRead#resultCoder()}.
   *
   * @param input the pipeline's start
   * @param sink writes one chunk's rows
   * @param after runs on each chunk after its write ({@link AfterChunkRead#none}: nothing)
   * @param <R> what the sink returns per chunk
   * @param <O> what {@code after} returns per chunk
   * @return the chunk reads
   */
  public <R, O> PCollection<ChunkRead<O>> expandWrites(
      PBegin input, RowSink<R> sink, AfterChunkRead<R, O> after) {
    return input
        .apply(
            "Chunks of " + source.captureInstance().toLowerCase(Locale.ROOT),
            Read.from(new ChunkSource(chunks)))
        .apply("Read and write chunks", ParDo.of(new ReadChunkFn<>(this, sink, after)))
        .setCoder(ChunkRead.coder(after.resultCoder()));
  }
}
