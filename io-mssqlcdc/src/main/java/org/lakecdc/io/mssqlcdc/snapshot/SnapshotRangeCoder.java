package org.lakecdc.io.mssqlcdc.snapshot;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.apache.beam.sdk.coders.AtomicCoder;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.coders.VarIntCoder;
import org.lakecdc.io.mssqlcdc.source.KeyBoundCoder;

/**
 * The Beam coder of a {@link SnapshotRange}, from its fields in order: source schema and table
 * (UTF-8), the key column names (a count, then each name), the two bounds ({@link KeyBoundCoder}),
 * the commit time (its ISO-8601 UTC text) and the range's number (a variable-length int). Not Java
 * serialization, so the planned ranges of a snapshot can live in runner state (a Flink savepoint)
 * across releases.
 *
 * <p>Not deterministic (floating point keys), which only a grouping key would need.
 */
final class SnapshotRangeCoder extends AtomicCoder<SnapshotRange> {
  private static final SnapshotRangeCoder INSTANCE = new SnapshotRangeCoder();
  private static final StringUtf8Coder STRING = StringUtf8Coder.of();
  private static final VarIntCoder INT = VarIntCoder.of();

  private SnapshotRangeCoder() {}

  /** The coder. */
  static SnapshotRangeCoder of() {
    return INSTANCE;
  }

  @Override
  public void encode(SnapshotRange value, OutputStream out) throws IOException {
    STRING.encode(value.sourceSchema(), out);
    STRING.encode(value.sourceTable(), out);
    INT.encode(value.keyColumns().size(), out);
    for (String column : value.keyColumns()) {
      STRING.encode(column, out);
    }
    KeyBoundCoder.of().encode(value.lowerInclusive(), out);
    KeyBoundCoder.of().encode(value.upperExclusive(), out);
    STRING.encode(value.commitTime().toString(), out);
    INT.encode(value.number(), out);
  }

  @Override
  public SnapshotRange decode(InputStream in) throws IOException {
    String schema = STRING.decode(in);
    String table = STRING.decode(in);
    int columns = INT.decode(in);
    List<String> keyColumns = new ArrayList<>(columns);
    for (int i = 0; i < columns; i++) {
      keyColumns.add(STRING.decode(in));
    }
    List<Object> lower = KeyBoundCoder.of().decode(in);
    List<Object> upper = KeyBoundCoder.of().decode(in);
    Instant commitTime = Instant.parse(STRING.decode(in));
    return new SnapshotRange(schema, table, keyColumns, lower, upper, commitTime, INT.decode(in));
  }

  @Override
  public void verifyDeterministic() throws NonDeterministicException {
    throw new NonDeterministicException(
        this, "A key bound may hold floating point values, whose encoding is not deterministic");
  }
}
