package org.lakecdc.transforms.delta;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import org.apache.beam.sdk.coders.AtomicCoder;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.coders.VarLongCoder;

/**
 * The Beam coder of a {@link DataFileAction}, from its fields in order: path and action JSON as
 * UTF-8 strings, size and row count as variable-length longs (a row count of -1 takes 10 bytes).
 * Not Java serialization, so file descriptions can live in runner state (a Flink savepoint) across
 * releases. Deterministic.
 */
public final class DataFileActionCoder extends AtomicCoder<DataFileAction> {
  private static final DataFileActionCoder INSTANCE = new DataFileActionCoder();
  private static final StringUtf8Coder STRING = StringUtf8Coder.of();
  private static final VarLongCoder LONG = VarLongCoder.of();

  private DataFileActionCoder() {}

  /** The coder. */
  public static DataFileActionCoder of() {
    return INSTANCE;
  }

  @Override
  public void encode(DataFileAction value, OutputStream out) throws IOException {
    STRING.encode(value.path(), out);
    LONG.encode(value.sizeBytes(), out);
    LONG.encode(value.rowCount(), out);
    STRING.encode(value.actionJson(), out);
  }

  @Override
  public DataFileAction decode(InputStream in) throws IOException {
    String path = STRING.decode(in);
    long size = LONG.decode(in);
    long rows = LONG.decode(in);
    return new DataFileAction(path, size, rows, STRING.decode(in));
  }

  @Override
  public void verifyDeterministic() {}

  @Override
  public boolean consistentWithEquals() {
    return true;
  }
}
