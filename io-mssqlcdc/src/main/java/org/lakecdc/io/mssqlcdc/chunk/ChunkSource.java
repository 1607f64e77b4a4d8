package org.lakecdc.io.mssqlcdc.chunk;

import java.util.ArrayList;
import java.util.List;
import java.util.NoSuchElementException;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.io.BoundedSource;
import org.apache.beam.sdk.options.PipelineOptions;
import org.checkerframework.checker.nullness.qual.Nullable;

/**
 * The chunk descriptors of a chunked snapshot read as a bounded source that splits into one source
 * per chunk, so that every runner hands the chunks to its workers one by one: a split is what Spark
 * makes a partition of (a task each), what Flink hands to the next free subtask, what the
 * DirectRunner makes a bundle of. The chunk's read ({@link ReadChunkFn}) runs right after it, in
 * the same stage, so the chunks of a wave are read by as many workers as the runner has, each
 * taking the next chunk when its last one is done.
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

  /** One source per chunk, whatever the desired size: each chunk is its own unit of work. */
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
    return each;
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
