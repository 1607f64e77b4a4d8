package org.lakecdc.transforms.snapshot;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;
import org.apache.beam.sdk.coders.AtomicCoder;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.coders.ListCoder;
import org.apache.beam.sdk.coders.VarLongCoder;
import org.lakecdc.transforms.delta.DataFileAction;
import org.lakecdc.transforms.delta.DataFileActionCoder;

/**
 * Bronze data files of (part of) a snapshot, written on a worker and not yet committed: what a key
 * range's write or a bundle's write returns, and, merged, what the one snapshot commit commits.
 *
 * <p>Serializable only because Beam's global {@code Combine} keeps its empty default value in a
 * serialized {@code DoFn}; elements are encoded with {@link #coder()}.
 *
 * @param rows the rows the files hold, at least 0
 * @param files the data files and their serialized add actions, in write order
 */
public record SnapshotFiles(long rows, List<DataFileAction> files) implements Serializable {
  private static final long serialVersionUID = 1L;

  /** No row, no file. */
  public static final SnapshotFiles NONE = new SnapshotFiles(0, List.of());

  /**
   * Checks the components.
   *
   * @throws IllegalArgumentException when {@code rows} is negative
   */
  public SnapshotFiles {
    if (rows < 0) {
      throw new IllegalArgumentException("rows must be at least 0, not " + rows);
    }
    files = List.copyOf(files);
  }

  /** All the parts' files (in the parts' order) and the sum of their rows. */
  public static SnapshotFiles concat(Iterable<SnapshotFiles> parts) {
    long rows = 0;
    List<DataFileAction> files = new ArrayList<>();
    for (SnapshotFiles part : parts) {
      rows += part.rows();
      files.addAll(part.files());
    }
    return new SnapshotFiles(rows, files);
  }

  /** The coder: rows as a variable-length long, then the files ({@link DataFileActionCoder}). */
  public static Coder<SnapshotFiles> coder() {
    return SnapshotFilesCoder.INSTANCE;
  }

  private static final class SnapshotFilesCoder extends AtomicCoder<SnapshotFiles> {
    static final SnapshotFilesCoder INSTANCE = new SnapshotFilesCoder();
    private static final ListCoder<DataFileAction> FILES = ListCoder.of(DataFileActionCoder.of());

    @Override
    public void encode(SnapshotFiles value, OutputStream out) throws IOException {
      VarLongCoder.of().encode(value.rows(), out);
      FILES.encode(value.files(), out);
    }

    @Override
    public SnapshotFiles decode(InputStream in) throws IOException {
      long rows = VarLongCoder.of().decode(in);
      return new SnapshotFiles(rows, FILES.decode(in));
    }

    @Override
    public void verifyDeterministic() {}

    @Override
    public boolean consistentWithEquals() {
      return true;
    }
  }
}
