package org.lakecdc.transforms.delta;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import org.apache.beam.sdk.coders.AtomicCoder;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.coders.VarLongCoder;

/**
 * The Beam coder of a {@link ScanFile}, from its fields in order: the table path as a UTF-8 string,
 * the table version as a variable-length long, the Kernel scan file row's JSON as a UTF-8 string.
 * Not Java serialization, so the elements of a seed copy's read (one per data file) do not depend
 * on the record's serialized form. Deterministic.
 */
public final class ScanFileCoder extends AtomicCoder<ScanFile> {
  private static final ScanFileCoder INSTANCE = new ScanFileCoder();
  private static final StringUtf8Coder STRING = StringUtf8Coder.of();
  private static final VarLongCoder LONG = VarLongCoder.of();

  private ScanFileCoder() {}

  /** The coder. */
  public static ScanFileCoder of() {
    return INSTANCE;
  }

  @Override
  public void encode(ScanFile value, OutputStream out) throws IOException {
    STRING.encode(value.tablePath(), out);
    LONG.encode(value.version(), out);
    STRING.encode(value.json(), out);
  }

  @Override
  public ScanFile decode(InputStream in) throws IOException {
    String tablePath = STRING.decode(in);
    long version = LONG.decode(in);
    return new ScanFile(tablePath, version, STRING.decode(in));
  }

  @Override
  public void verifyDeterministic() {}

  @Override
  public boolean consistentWithEquals() {
    return true;
  }
}
