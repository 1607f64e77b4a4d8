package org.lakecdc.io.mssqlcdc.chunk;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import org.apache.beam.sdk.coders.AtomicCoder;
import org.apache.beam.sdk.coders.VarIntCoder;
import org.lakecdc.io.mssqlcdc.source.KeyBoundCoder;

/**
 * The Beam coder of a {@link Chunk}: its index (a variable-length int), then its two bounds as
 * {@link KeyBoundCoder}. Not Java serialization.
 */
final class ChunkCoder extends AtomicCoder<Chunk> {
  private static final ChunkCoder INSTANCE = new ChunkCoder();

  private ChunkCoder() {}

  /** The coder. */
  static ChunkCoder of() {
    return INSTANCE;
  }

  @Override
  public void encode(Chunk value, OutputStream out) throws IOException {
    VarIntCoder.of().encode(value.index(), out);
    KeyBoundCoder.of().encode(value.lo(), out);
    KeyBoundCoder.of().encode(value.hi(), out);
  }

  @Override
  public Chunk decode(InputStream in) throws IOException {
    int index = VarIntCoder.of().decode(in);
    return new Chunk(index, KeyBoundCoder.of().decode(in), KeyBoundCoder.of().decode(in));
  }

  @Override
  public void verifyDeterministic() throws NonDeterministicException {
    throw new NonDeterministicException(
        this, "A key bound may hold floating point values, whose encoding is not deterministic");
  }
}
