package org.lakecdc.transforms.silver;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.Serializable;
import org.apache.beam.sdk.coders.AtomicCoder;
import org.apache.beam.sdk.coders.BooleanCoder;
import org.apache.beam.sdk.coders.NullableCoder;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.coders.VarIntCoder;
import org.apache.beam.sdk.coders.VarLongCoder;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.transforms.bronze.CommittedBatch;
import org.lakecdc.transforms.bronze.CommittedBatchCoder;
import org.lakecdc.transforms.snapshot.CommittedChunk;

/**
 * What starts one silver apply in {@link ApplyChangesToSilver}: a committed bronze batch, a
 * committed chunk of a chunked snapshot (at most one of them is set), or neither: the tick that
 * starts a continuous pipeline's applies of a silver table (its first apply, then one every
 * interval).
 *
 * @param batch the committed batch, or null
 * @param chunk the committed chunk, or null
 */
record ApplyTrigger(@Nullable CommittedBatch batch, @Nullable CommittedChunk chunk)
    implements Serializable {
  private static final long serialVersionUID = 1L;

  static ApplyTrigger of(CommittedBatch batch) {
    return new ApplyTrigger(batch, null);
  }

  static ApplyTrigger of(CommittedChunk chunk) {
    return new ApplyTrigger(null, chunk);
  }

  /** The tick that starts the interval applies of a continuous pipeline. */
  static ApplyTrigger tick() {
    return new ApplyTrigger(null, null);
  }

  /** Whether this is the tick (neither a batch nor a chunk). */
  boolean isTick() {
    return batch == null && chunk == null;
  }

  /**
   * The coder of {@link ApplyTrigger}: a kind (0 batch, 1 chunk, 2 tick), then the batch's or the
   * chunk's fields.
   */
  static final class Coder extends AtomicCoder<ApplyTrigger> {
    private static final Coder INSTANCE = new Coder();
    private static final NullableCoder<CommittedBatch> BATCH =
        NullableCoder.of(CommittedBatchCoder.of());
    private static final int BATCH_KIND = 0;
    private static final int CHUNK = 1;
    private static final int TICK = 2;

    static Coder of() {
      return INSTANCE;
    }

    @Override
    public void encode(ApplyTrigger value, OutputStream out) throws IOException {
      CommittedChunk chunk = value.chunk();
      if (value.isTick()) {
        VarIntCoder.of().encode(TICK, out);
        return;
      }
      VarIntCoder.of().encode(chunk != null ? CHUNK : BATCH_KIND, out);
      if (chunk == null) {
        BATCH.encode(value.batch(), out);
        return;
      }
      StringUtf8Coder.of().encode(chunk.appId(), out);
      StringUtf8Coder.of().encode(chunk.snapshot(), out);
      VarIntCoder.of().encode(chunk.chunk(), out);
      VarIntCoder.of().encode(chunk.wave(), out);
      VarLongCoder.of().encode(chunk.rows(), out);
      StringUtf8Coder.of().encode(chunk.stamp(), out);
      VarLongCoder.of().encode(chunk.bronzeVersion(), out);
      BooleanCoder.of().encode(chunk.skipped(), out);
      BooleanCoder.of().encode(chunk.completed(), out);
    }

    @Override
    public ApplyTrigger decode(InputStream in) throws IOException {
      int kind = VarIntCoder.of().decode(in);
      if (kind == TICK) {
        return tick();
      }
      if (kind == BATCH_KIND) {
        return new ApplyTrigger(BATCH.decode(in), null);
      }
      return ApplyTrigger.of(
          new CommittedChunk(
              StringUtf8Coder.of().decode(in),
              StringUtf8Coder.of().decode(in),
              VarIntCoder.of().decode(in),
              VarIntCoder.of().decode(in),
              VarLongCoder.of().decode(in),
              StringUtf8Coder.of().decode(in),
              VarLongCoder.of().decode(in),
              BooleanCoder.of().decode(in),
              BooleanCoder.of().decode(in)));
    }

    @Override
    public void verifyDeterministic() {}
  }
}
