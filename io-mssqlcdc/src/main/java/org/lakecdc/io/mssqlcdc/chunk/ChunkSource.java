package org.lakecdc.io.mssqlcdc.chunk;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.NoSuchElementException;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.io.BoundedSource;
import org.apache.beam.sdk.options.PipelineOptions;
import org.apache.beam.sdk.options.StreamingOptions;
import org.checkerframework.checker.nullness.qual.Nullable;

/**
 * The chunk descriptors of a chunked snapshot read as a bounded source that splits into one source
 * per chunk, so that every runner hands the chunks to its workers one by one: a split is what Spark
 * makes a partition of (a task each), what Flink hands to the next free subtask, what the
 * DirectRunner makes a bundle of. The chunk's read ({@link ReadChunkFn}) runs right after it, in
 * the same stage, so the chunks of a wave are read by as many workers as the runner has, each
 * taking the next chunk when its last one is done.
 *
 * <p>The splits are listed so that the runner hands the chunks out in the order given, the plan's
 * order, in which they are committed: as given, except for the FlinkRunner's batch mode, which
 * hands the last split left to each subtask that asks ({@link #handedOutLastFirst}), where they are
 * listed last first.
 *
 * <p>A redistribution by key ({@code Reshuffle}) would leave the spread to the hash of random keys:
 * Flink's batch translation groups by key, and four chunks on two subtasks then land on one of them
 * one time in eight. Descriptors only: a chunk's bounds, never rows.
 */
final class ChunkSource extends BoundedSource<Chunk> {
  private static final long serialVersionUID = 1L;

  /** What a chunk's descriptor counts for in a runner's size estimate, in bytes. */
  private static final long DESCRIPTOR_BYTES = 64;

  private final List<Chunk> chunks;

  /** The source of {@code chunks}, in the order given (not empty). */
  ChunkSource(List<Chunk> chunks) {
    if (chunks.isEmpty()) {
      throw new IllegalArgumentException("A chunk source needs at least one chunk");
    }
    this.chunks = List.copyOf(chunks);
  }

  /** The chunks, in the order given. */
  List<Chunk> chunks() {
    return chunks;
  }

  /**
   * One source per chunk, whatever the desired size: each chunk is its own unit of work; listed
   * last first where the runner hands splits out last first ({@link #handedOutLastFirst}), so that
   * the chunks are read in the order given.
   */
  @Override
  public List<? extends BoundedSource<Chunk>> split(
      long desiredBundleSizeBytes, PipelineOptions options) {
    if (chunks.size() == 1) {
      return List.of(this);
    }
    List<ChunkSource> each = new ArrayList<>();
    for (Chunk chunk : chunks) {
      each.add(new ChunkSource(List.of(chunk)));
    }
    Class<?> runner = options.getRunner();
    if (runner != null
        && handedOutLastFirst(
            runner.getSimpleName(), options.as(StreamingOptions.class).isStreaming())) {
      Collections.reverse(each);
    }
    return each;
  }

  /**
   * Whether the runner named {@code runner} (a class's simple name) hands a bounded source's splits
   * out last first: the FlinkRunner in batch mode ({@code streaming} false) does, as its source
   * input format gives the splits in order to Flink's {@code DefaultInputSplitAssigner}, which
   * gives each subtask that asks the last split left (Beam 2.62, Flink 1.19). Flink's streaming
   * mode assigns split i to subtask i mod parallelism, in order; Spark makes split i its partition
   * (task) i; the DirectRunner's pool takes the splits' bundles in an order of its own.
   */
  static boolean handedOutLastFirst(String runner, boolean streaming) {
    return runner.endsWith("FlinkRunner") && !streaming;
  }

  @Override
  public long getEstimatedSizeBytes(PipelineOptions options) {
    return DESCRIPTOR_BYTES * chunks.size();
  }

  @Override
  public BoundedReader<Chunk> createReader(PipelineOptions options) {
    return new Reader(this);
  }

  @Override
  public Coder<Chunk> getOutputCoder() {
    return ChunkCoder.of();
  }

  private static final class Reader extends BoundedReader<Chunk> {
    private final ChunkSource source;
    private int position = -1;

    Reader(ChunkSource source) {
      this.source = source;
    }

    @Override
    public boolean start() {
      return advance();
    }

    @Override
    public boolean advance() {
      if (position < source.chunks.size()) {
        position++;
      }
      return position < source.chunks.size();
    }

    @Override
    public Chunk getCurrent() {
      @Nullable Chunk current =
          position >= 0 && position < source.chunks.size() ? source.chunks.get(position) : null;
      if (current == null) {
        throw new NoSuchElementException("No current chunk");
      }
      return current;
    }

    @Override
    public void close() {}

    @Override
    public BoundedSource<Chunk> getCurrentSource() {
      return source;
    }
  }
}
