package org.lakecdc.transforms.snapshot;

import java.util.Iterator;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Objects;
import java.util.TreeMap;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.schemas.Schema;
import org.apache.beam.sdk.values.Row;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.io.mssqlcdc.source.RowSink;
import org.lakecdc.transforms.bronze.BronzeTable;
import org.lakecdc.transforms.delta.DeltaTables;

/**
 * The bronze sink of a snapshot ({@code MssqlCdcIO.Snapshot#writeTo}): writes a key range's
 * snapshot rows as bronze rows ({@code _snapshot} = S, {@code _batch_id} and {@code _chunk} NULL)
 * into Parquet data files of the bronze table with {@link DeltaTables#writeDataFiles}, in the
 * reading stage, and returns the files and their row count without committing them ({@link
 * WriteSnapshotToDelta} commits every range's files in one commit). Rows are pulled from the reader
 * as the files are written: memory holds one batch of 4096 rows and the open file's row group;
 * files roll at Kernel's target size ({@code delta.kernel.default.parquet.writer.targetMaxFileSize}
 * in the Hadoop configuration, 128 MiB by default).
 *
 * <p>Made with {@link #forChunks} for a chunked snapshot ({@code
 * MssqlCdcIO.SnapshotChunks#writeTo}), each row's {@code _chunk} is the write's sequence, the
 * chunk's index.
 *
 * <p>A repeated write (a retried bundle) writes new files under new random names; the ones of the
 * failed attempt are never committed ({@code VACUUM} removes them). The bronze table must exist.
 */
public final class SnapshotFileSink implements RowSink<SnapshotFiles> {
  private static final long serialVersionUID = 1L;

  /** Told of each row written, e.g. to report progress; called by the writing thread. */
  public interface RowListener extends java.io.Serializable {
    /** One more row was handed to the data files. */
    void rowWritten();
  }

  private final String bronzePath;
  private final String snapshot;
  private final TreeMap<String, String> hadoopConf;
  private final @Nullable RowListener listener;
  private final boolean chunked;
  private transient @Nullable DeltaTables tables;
  private transient @Nullable Schema changeSchema;
  private transient @Nullable Schema bronzeSchema;

  /**
   * A sink writing into {@code bronzePath}.
   *
   * @param bronzePath the bronze table's path or URI
   * @param snapshot S as {@code 0x} and 20 hex digits, the {@code _snapshot} of every row
   * @param hadoopConf Hadoop properties over the default configuration (file system settings, the
   *     target file size)
   * @param listener told of each row written, or null
   */
  public SnapshotFileSink(
      String bronzePath,
      String snapshot,
      Map<String, String> hadoopConf,
      @Nullable RowListener listener) {
    this(bronzePath, snapshot, hadoopConf, listener, false);
  }

  private SnapshotFileSink(
      String bronzePath,
      String snapshot,
      Map<String, String> hadoopConf,
      @Nullable RowListener listener,
      boolean chunked) {
    this.bronzePath = Objects.requireNonNull(bronzePath, "bronzePath");
    this.snapshot = Objects.requireNonNull(snapshot, "snapshot");
    this.hadoopConf = new TreeMap<>(hadoopConf);
    this.listener = listener;
    this.chunked = chunked;
  }

  /**
   * A sink of a chunked snapshot's chunks: as {@link #SnapshotFileSink(String, String, Map,
   * RowListener)}, and each row's {@code _chunk} is the sequence {@link #write} is given (the
   * chunk's index, 0 to {@link Integer#MAX_VALUE}).
   *
   * @param snapshot S as {@code 0x} and 20 hex digits, the {@code _snapshot} of every row
   */
  public static SnapshotFileSink forChunks(
      String bronzePath,
      String snapshot,
      Map<String, String> hadoopConf,
      @Nullable RowListener listener) {
    return new SnapshotFileSink(bronzePath, snapshot, hadoopConf, listener, true);
  }

  @Override
  public void setup() {
    tables = DeltaTables.create(hadoopConf);
  }

  /**
   * Writes the range's rows.
   *
   * @return the files written (none for no rows) and the rows they hold
   */
  @Override
  public SnapshotFiles write(long sequence, Iterator<Row> rows) {
    if (!rows.hasNext()) {
      return SnapshotFiles.NONE;
    }
    DeltaTables open = tables;
    if (open == null) {
      open = DeltaTables.create(hadoopConf);
      tables = open;
    }
    Integer chunk = null;
    if (chunked) {
      if (sequence < 0 || sequence > Integer.MAX_VALUE) {
        throw new IllegalArgumentException(
            "A chunk index must be from 0 to " + Integer.MAX_VALUE + ", not " + sequence);
      }
      chunk = (int) sequence;
    }
    Row first = rows.next();
    Schema bronze = bronzeSchema(first.getSchema());
    BronzeRows bronzeRows = new BronzeRows(bronze, first, rows, chunk);
    // A one-pass Iterable: writeDataFiles asks for its iterator once.
    java.util.List<org.lakecdc.transforms.delta.DataFileAction> files =
        open.writeDataFiles(bronzePath, bronze, () -> bronzeRows);
    return new SnapshotFiles(bronzeRows.count, files);
  }

  @Override
  public Coder<SnapshotFiles> resultCoder() {
    return SnapshotFiles.coder();
  }

  @Override
  public void teardown() {
    tables = null;
  }

  private Schema bronzeSchema(Schema rowSchema) {
    Schema known = bronzeSchema;
    if (known == null || !rowSchema.equals(changeSchema)) {
      known = BronzeTable.schema(rowSchema);
      changeSchema = rowSchema;
      bronzeSchema = known;
    }
    return known;
  }

  /** The range's rows as bronze rows, the first already pulled; counts them. One pass only. */
  private final class BronzeRows implements Iterator<Row> {
    private final Schema bronze;
    private final Iterator<Row> rest;
    private final @Nullable Integer chunk;
    private @Nullable Row first;
    private long count;

    BronzeRows(Schema bronze, Row first, Iterator<Row> rest, @Nullable Integer chunk) {
      this.bronze = bronze;
      this.first = first;
      this.rest = rest;
      this.chunk = chunk;
    }

    @Override
    public boolean hasNext() {
      return first != null || rest.hasNext();
    }

    @Override
    public Row next() {
      Row change = first;
      if (change != null) {
        first = null;
      } else if (rest.hasNext()) {
        change = rest.next();
      } else {
        throw new NoSuchElementException("no snapshot row left");
      }
      count++;
      if (listener != null) {
        listener.rowWritten();
      }
      return BronzeTable.toBronzeRow(bronze, change, null, snapshot, chunk);
    }
  }
}
