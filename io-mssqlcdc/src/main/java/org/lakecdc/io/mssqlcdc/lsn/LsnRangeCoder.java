package org.lakecdc.io.mssqlcdc.lsn;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import org.apache.beam.sdk.coders.AtomicCoder;
import org.apache.beam.sdk.coders.VarLongCoder;

/**
 * Beam coder of an {@link LsnRange}: the 10 bytes of {@code from}, then the 10 bytes of {@code to}.
 */
final class LsnRangeCoder extends AtomicCoder<LsnRange> {
  private static final LsnRangeCoder INSTANCE = new LsnRangeCoder();

  private LsnRangeCoder() {}

  /** The coder. */
  static LsnRangeCoder of() {
    return INSTANCE;
  }

  @Override
  public void encode(LsnRange value, OutputStream out) throws IOException {
    LsnCoder.of().encode(value.from(), out);
    LsnCoder.of().encode(value.to(), out);
    VarLongCoder.of().encode(value.firstBatch(), out);
  }

  @Override
  public LsnRange decode(InputStream in) throws IOException {
    Lsn from = LsnCoder.of().decode(in);
    Lsn to = LsnCoder.of().decode(in);
    return new LsnRange(from, to, VarLongCoder.of().decode(in));
  }

  @Override
  public void verifyDeterministic() {}

  @Override
  public boolean consistentWithEquals() {
    return true;
  }
}
