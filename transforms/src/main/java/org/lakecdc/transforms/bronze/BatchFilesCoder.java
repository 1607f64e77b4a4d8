package org.lakecdc.transforms.bronze;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.ArrayList;
import java.util.List;
import org.apache.beam.sdk.coders.AtomicCoder;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.coders.VarIntCoder;
import org.apache.beam.sdk.coders.VarLongCoder;
import org.lakecdc.transforms.delta.DataFileAction;

/**
 * The coder of {@link BatchFiles}: the batch number, each file's path, size, row count and {@code
 * add} action JSON, and the stats as their JSON ({@link BatchStats#toJson()}). Plain fields rather
 * than Java serialization, so the continuous committer's state (a Flink savepoint) does not depend
 * on the classes' serialized form.
 */
public final class BatchFilesCoder extends AtomicCoder<BatchFiles> {
  private static final BatchFilesCoder INSTANCE = new BatchFilesCoder();

  private BatchFilesCoder() {}

  /** The coder. */
  public static BatchFilesCoder of() {
    return INSTANCE;
  }

  @Override
  public void encode(BatchFiles value, OutputStream out) throws IOException {
    VarLongCoder.of().encode(value.batchId(), out);
    VarIntCoder.of().encode(value.files().size(), out);
    for (DataFileAction file : value.files()) {
      StringUtf8Coder.of().encode(file.path(), out);
      VarLongCoder.of().encode(file.sizeBytes(), out);
      VarLongCoder.of().encode(file.rowCount(), out);
      StringUtf8Coder.of().encode(file.actionJson(), out);
    }
    StringUtf8Coder.of().encode(value.stats().toJson(), out);
  }

  @Override
  public BatchFiles decode(InputStream in) throws IOException {
    long batchId = VarLongCoder.of().decode(in);
    int count = VarIntCoder.of().decode(in);
    List<DataFileAction> files = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      String path = StringUtf8Coder.of().decode(in);
      long size = VarLongCoder.of().decode(in);
      long rows = VarLongCoder.of().decode(in);
      files.add(new DataFileAction(path, size, rows, StringUtf8Coder.of().decode(in)));
    }
    return new BatchFiles(batchId, files, BatchStats.fromJson(StringUtf8Coder.of().decode(in)));
  }

  @Override
  public void verifyDeterministic() {}
}
