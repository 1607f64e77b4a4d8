package org.lakecdc.transforms.delta;

import io.delta.kernel.DataWriteContext;
import io.delta.kernel.Transaction;
import io.delta.kernel.data.FilteredColumnarBatch;
import io.delta.kernel.engine.Engine;
import io.delta.kernel.utils.CloseableIterator;
import io.delta.kernel.utils.DataFileStatus;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.beam.sdk.values.Row;
import org.apache.hadoop.fs.FSError;
import org.checkerframework.checker.nullness.qual.Nullable;

/**
 * Writes rows pushed one at a time as Parquet data files of one Delta table, without committing
 * them: the tables' {@code openDataFileWriter}, then {@link #write} per row, then {@link #finish}
 * for the {@code add} actions, which one committer commits (the tables' {@code commit}). This is
 * the tables' {@code writeDataFiles} for callers that receive rows one by one (a Beam bundle) and
 * cannot hand over an iterator.
 *
 * <p>Memory: each row of a table without partition columns (every table of this project) goes
 * straight into the open file as one Parquet record ({@link RowRecords}: a value writer per column,
 * chosen once, no Kernel batch in between), whose current row group parquet-hadoop holds. Rows of a
 * partitioned table are buffered until {@link RowBatches#BATCH_ROWS} (4096) are held, then
 * converted to one Kernel batch ({@code Transaction.transformLogicalData}, which takes the
 * partition columns out) and written. A new file starts once the open one reaches Kernel's target
 * file size ({@code delta.kernel.default.parquet.writer.targetMaxFileSize}, 128 MiB by default). So
 * memory is bounded by one row group (and one batch), never by the number of rows written. The
 * files are the same either way, value for value.
 *
 * <p>Not thread-safe. {@link #close} without {@link #finish} abandons the write: the open file is
 * closed and the files written stay orphans that no commit adds ({@code VACUUM} removes them).
 * Values and errors are those of the tables' {@code writeDataFiles}.
 */
public final class DataFileWriter implements AutoCloseable {
  private final String path;
  private final Engine engine;
  private final io.delta.kernel.data.Row state;
  private final RowBatches batches;
  private final DataWriteContext context;
  private final ParquetDataFiles.Files files;
  private final List<Row> buffer = new ArrayList<>(RowBatches.BATCH_ROWS);
  private final org.apache.beam.sdk.schemas.Schema rowSchema;

  /**
   * What a write needs from the table and the rows' schema, none of it from the rows: Kernel's
   * transaction state and write context (the table schema's JSON parsed, the statistics columns),
   * the match of the rows' fields to the columns, and whether rows go straight into records. It
   * depends only on the table's metadata and protocol and the rows' schema, so a writer of the same
   * table takes the plan of an earlier one while those stay the same ({@code TableCommits} keeps
   * one per table). Immutable; shared by writers on any thread.
   */
  static final class Plan {
    private final io.delta.kernel.data.Row state;
    private final RowBatches batches;
    private final DataWriteContext context;
    private final boolean records;

    private Plan(
        io.delta.kernel.data.Row state,
        RowBatches batches,
        DataWriteContext context,
        boolean records) {
      this.state = state;
      this.batches = batches;
      this.context = context;
      this.records = records;
    }

    /**
     * The plan of writes of {@code rowSchema} rows through {@code txn} (a write transaction on the
     * table's snapshot; it is not committed).
     *
     * @throws IncompatibleTableException when a field has no column or a different type, or a NOT
     *     NULL column has no field
     * @throws io.delta.kernel.exceptions.KernelException when Kernel refuses to write the table
     *     (column mapping, variant columns, column defaults)
     */
    static Plan of(
        String path, Engine engine, Transaction txn, org.apache.beam.sdk.schemas.Schema rowSchema) {
      io.delta.kernel.data.Row state = txn.getTransactionState(engine);
      RowBatches batches = RowBatches.plan(path, txn.getSchema(engine), rowSchema);
      DataWriteContext context = Transaction.getWriteContext(engine, state, Map.of());
      boolean records = txn.getPartitionColumns(engine).isEmpty();
      if (records) {
        // Kernel's own refusals of a table it cannot write (column mapping, variant columns,
        // column defaults), which transformLogicalData makes before any batch; without partition
        // columns it passes each batch on unchanged, so the records skip it.
        try (CloseableIterator<FilteredColumnarBatch> checked =
            Transaction.transformLogicalData(
                engine, state, KernelIterators.of(Collections.emptyIterator()), Map.of())) {
          checked.hasNext();
        } catch (IOException e) {
          throw new UncheckedIOException("Cannot check Delta table " + path, e);
        }
      }
      return new Plan(state, batches, context, records);
    }
  }

  /** The records of a table without partition columns; null: rows go through Kernel batches. */
  private final @Nullable RowRecords records;

  private long rows;
  private @Nullable List<DataFileAction> finished;
  private boolean failed;

  DataFileWriter(
      String path,
      Engine engine,
      Plan plan,
      org.apache.beam.sdk.schemas.Schema rowSchema,
      ParquetDataFiles parquet) {
    this.path = path;
    this.engine = engine;
    this.state = plan.state;
    this.rowSchema = rowSchema;
    this.batches = plan.batches;
    this.context = plan.context;
    if (plan.records) {
      this.records = new RowRecords(batches);
      this.files =
          parquet.openRecords(
              context.getTargetDirectory(),
              context.getStatisticsColumns(),
              batches.tableSchema(),
              records);
    } else {
      this.records = null;
      this.files = parquet.open(context.getTargetDirectory(), context.getStatisticsColumns());
    }
  }

  /**
   * Adds one row; every {@link RowBatches#BATCH_ROWS} rows are written to the open file.
   *
   * @param row a row of the schema the writer was opened with
   * @throws IllegalStateException after {@link #finish}, {@link #close} or a failure
   * @throws IllegalArgumentException when a value does not fit its column
   * @throws UncheckedIOException when writing a file fails ({@code Cannot write data files of Delta
   *     table <path>: <the I/O error>})
   */
  public void write(Row row) {
    checkOpen();
    if (records != null) {
      writeRecord(row, row.getFieldCount(), List.of());
      return;
    }
    buffer.add(row);
    if (buffer.size() >= RowBatches.BATCH_ROWS) {
      flush();
    }
  }

  /**
   * Adds one row given as a row of the schema's first fields and the values of the fields after
   * them, without copying the row (a bronze sink's change row and its bronze columns); otherwise as
   * {@link #write(Row)}.
   *
   * @param row a row whose fields are the first {@code row.getFieldCount()} fields of the schema
   *     the writer was opened with, of the same types
   * @param trailing the values of the schema's remaining fields, in order
   * @throws IllegalArgumentException when the row and the values do not make up the schema's field
   *     count, or a value does not fit its column
   * @throws IllegalStateException after {@link #finish}, {@link #close} or a failure
   * @throws UncheckedIOException when writing a file fails
   */
  public void write(Row row, List<@Nullable Object> trailing) {
    checkOpen();
    int from = row.getFieldCount();
    if (from + trailing.size() != rowSchema.getFieldCount()) {
      throw new IllegalArgumentException(
          "A row of "
              + from
              + " fields and "
              + trailing.size()
              + " values do not make a row of the writer's "
              + rowSchema.getFieldCount()
              + " fields");
    }
    if (records != null) {
      writeRecord(row, from, trailing);
      return;
    }
    List<Object> values = new ArrayList<>(rowSchema.getFieldCount());
    values.addAll(row.getValues());
    values.addAll(trailing);
    write(Row.withSchema(rowSchema).attachValues(values));
  }

  private void writeRecord(Row row, int from, List<@Nullable Object> trailing) {
    records.next(rows, from, trailing);
    try {
      files.writeRecord(row);
    } catch (IOException | RuntimeException | FSError e) {
      throw failure(e);
    }
    rows++;
  }

  /** The rows added so far. */
  public long rowCount() {
    return rows + buffer.size();
  }

  /**
   * Writes the buffered rows and closes the open file.
   *
   * @return one action per file written, in write order; empty when no row was added. Calling it
   *     again returns the same list
   * @throws IllegalStateException after {@link #close} or a failure
   * @throws UncheckedIOException when writing a file fails
   */
  public List<DataFileAction> finish() {
    if (finished != null) {
      return finished;
    }
    checkOpen();
    flush();
    List<DataFileStatus> written;
    try {
      written = files.finish();
    } catch (IOException | RuntimeException | FSError e) {
      throw failure(e);
    }
    List<DataFileAction> actions = new ArrayList<>(written.size());
    try (CloseableIterator<io.delta.kernel.data.Row> adds =
        Transaction.generateAppendActions(
            engine, state, KernelIterators.of(written.iterator()), context)) {
      for (DataFileStatus file : written) {
        long rowCount = file.getStatistics().map(s -> s.getNumRecords()).orElse(-1L);
        actions.add(
            new DataFileAction(
                file.getPath(),
                file.getSize(),
                rowCount,
                KernelInternals.actionToJson(adds.next())));
      }
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot close the actions of Delta table " + path, e);
    }
    finished = List.copyOf(actions);
    return finished;
  }

  /** Abandons the write unless {@link #finish} returned: closes the open file, drops the rest. */
  @Override
  public void close() {
    if (finished == null && !failed) {
      failed = true;
      buffer.clear();
      files.abandon(new IOException("abandoned write of Delta table " + path));
    }
  }

  private void checkOpen() {
    if (failed || finished != null) {
      throw new IllegalStateException(
          "The data file writer of Delta table " + path + " is finished, closed or failed");
    }
  }

  private void flush() {
    if (buffer.isEmpty()) {
      return;
    }
    try (CloseableIterator<FilteredColumnarBatch> physical =
        Transaction.transformLogicalData(
            engine, state, KernelIterators.single(batches.batch(buffer, rows)), Map.of())) {
      while (physical.hasNext()) {
        files.write(physical.next());
      }
    } catch (IOException | RuntimeException | FSError e) {
      throw failure(e);
    }
    rows += buffer.size();
    buffer.clear();
  }

  /**
   * Abandons the write after {@code e} and says why: I/O failures name the table and the file
   * system's own message (the writer's own IOException, Parquet's wrapper of a failed close "Unable
   * to close resource", Hadoop's local file system's FSError); others are rethrown.
   */
  private RuntimeException failure(Throwable e) {
    failed = true;
    buffer.clear();
    files.abandon(e);
    IOException io = ioCause(e);
    if (io == null && e instanceof RuntimeException r) {
      return r;
    } else if (io == null) {
      throw (Error) e;
    }
    return new UncheckedIOException(
        "Cannot write data files of Delta table " + path + ": " + io.getMessage(),
        new IOException(io.getMessage(), e));
  }

  /**
   * The deepest {@link IOException} in the cause chain of {@code failure} (the file system's own,
   * such as {@code No space left on device}, under the wrappers), or null.
   */
  static @Nullable IOException ioCause(Throwable failure) {
    Set<Throwable> seen = Collections.newSetFromMap(new IdentityHashMap<>());
    IOException deepest = null;
    for (Throwable t = failure; t != null && seen.add(t); t = t.getCause()) {
      if (t instanceof IOException io) {
        deepest = io;
      }
    }
    return deepest;
  }
}
