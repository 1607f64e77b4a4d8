package org.lakecdc.io.mssqlcdc.chunk;

import java.io.Serializable;
import org.apache.beam.sdk.coders.Coder;

/**
 * What the reading stage of {@code MssqlCdcIO.snapshotChunks().writeTo(sink, after)} does with a
 * chunk right after its rows are written through the sink, on the thread that read it, before the
 * chunk leaves the stage: e.g. make the chunk visible when every chunk before it is, so that a
 * chunk is never held until the other chunks of its stage are read (Spark's and Flink's batch modes
 * run the steps after a shuffle only when the whole stage is done). Its result replaces the sink's
 * in the {@link ChunkRead} the stage emits.
 *
 * <p>One object per DoFn instance: {@link #setup} and {@link #teardown} follow the DoFn's
 * {@code @Setup} and {@code @Teardown}; {@link #afterRead} is called by one thread at a time, and
 * again for a chunk whose bundle is retried. It knows nothing of the storage the sink wrote to
 * beyond the sink's result.
 *
 * @param <R> the sink's result
 * @param <O> what the stage emits per chunk instead
 */
public interface AfterChunkRead<R, O> extends Serializable {
  /** Prepares it on a worker; called once per DoFn instance. */
  default void setup() {}

  /**
   * Called once per chunk read, after its last row is written through the sink and its {@code
   * high_lsn} read.
   *
   * @param read the chunk's read, the sink's result inside
   * @return the result the stage emits for the chunk, encoded with {@link #resultCoder()}
   */
  O afterRead(ChunkRead<R> read);

  /** The coder of the results (not Java serialization: results may live in runner state). */
  Coder<O> resultCoder();

  /** Releases what {@link #setup} opened; called once per DoFn instance. */
  default void teardown() {}

  /**
   * Nothing after the read: the sink's result as it is.
   *
   * @param resultCoder the sink's result coder
   */
  static <R> AfterChunkRead<R, R> none(Coder<R> resultCoder) {
    return new None<>(resultCoder);
  }

  /** See {@link #none}. */
  final class None<R> implements AfterChunkRead<R, R> {
    private static final long serialVersionUID = 1L;
    private final Coder<R> coder;

    private None(Coder<R> coder) {
      this.coder = coder;
    }

    @Override
    public R afterRead(ChunkRead<R> read) {
      return read.result();
    }

    @Override
    public Coder<R> resultCoder() {
      return coder;
    }
  }
}
