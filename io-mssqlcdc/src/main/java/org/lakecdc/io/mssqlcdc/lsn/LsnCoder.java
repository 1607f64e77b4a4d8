package org.lakecdc.io.mssqlcdc.lsn;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import org.apache.beam.sdk.coders.AtomicCoder;
import org.apache.beam.sdk.coders.CoderException;

/**
 * Beam coder of an {@link Lsn}: its 10 raw bytes, big-endian, with no length prefix. Deterministic,
 * so LSNs can be keys; the encoded bytes sort in LSN order.
 */
final class LsnCoder extends AtomicCoder<Lsn> {
  private static final LsnCoder INSTANCE = new LsnCoder();

  private LsnCoder() {}

  /** The coder. */
  static LsnCoder of() {
    return INSTANCE;
  }

  @Override
  public void encode(Lsn value, OutputStream out) throws IOException {
    if (value == null) {
      throw new CoderException("Cannot encode a null LSN");
    }
    out.write(value.toBytes());
  }

  @Override
  public Lsn decode(InputStream in) throws IOException {
    byte[] raw = new byte[Lsn.BYTES];
    int read = 0;
    while (read < raw.length) {
      int n = in.read(raw, read, raw.length - read);
      if (n < 0) {
        throw new CoderException("Truncated LSN: " + read + " of " + Lsn.BYTES + " bytes");
      }
      read += n;
    }
    return Lsn.ofBytes(raw);
  }

  @Override
  public void verifyDeterministic() {}

  @Override
  public boolean consistentWithEquals() {
    return true;
  }

  @Override
  protected long getEncodedElementByteSize(Lsn value) {
    return Lsn.BYTES;
  }

  @Override
  public boolean isRegisterByteSizeObserverCheap(Lsn value) {
    return true;
  }
}
