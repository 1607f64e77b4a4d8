package org.lakecdc.transforms.delta;

import io.delta.kernel.Scan;
import io.delta.kernel.ScanBuilder;
import io.delta.kernel.Snapshot;
import io.delta.kernel.Table;
import io.delta.kernel.data.ColumnarBatch;
import io.delta.kernel.data.FilteredColumnarBatch;
import io.delta.kernel.engine.Engine;
import io.delta.kernel.engine.FileReadResult;
import io.delta.kernel.exceptions.TableNotFoundException;
import io.delta.kernel.expressions.Predicate;
import io.delta.kernel.types.StructType;
import io.delta.kernel.utils.CloseableIterator;
import io.delta.kernel.utils.FileStatus;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.beam.sdk.schemas.Schema;
import org.apache.beam.sdk.values.Row;
import org.checkerframework.checker.nullness.qual.Nullable;

/**
 * Reading Delta tables: their metadata, the data files of a version as the log lists them, and
 * their rows, whole (small tables) or streamed a Parquet batch at a time. The public contract of
 * each method is the tables' method of the same name. Thread-safe.
 */
final class TableScans {
  private final TableSnapshots snapshots;
  private final Engine engine;

  TableScans(TableSnapshots snapshots) {
    this.snapshots = snapshots;
    this.engine = snapshots.engine();
  }

  /** The table's {@code metaData.id}. */
  public String tableId(String path) {
    return KernelInternals.tableId(snapshots.require(path));
  }

  /** Whether the latest version has a data file, from the log only, stopping at the first. */
  public boolean hasDataFiles(String path) {
    Scan scan = snapshots.require(path).getScanBuilder().build();
    try (CloseableIterator<FilteredColumnarBatch> batches = scan.getScanFiles(engine)) {
      while (batches.hasNext()) {
        try (CloseableIterator<io.delta.kernel.data.Row> files = batches.next().getRows()) {
          if (files.hasNext()) {
            return true;
          }
        }
      }
      return false;
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot list the data files of Delta table " + path, e);
    }
  }

  /** The table's metadata at its latest version. */
  public TableInfo describe(String path) {
    Snapshot snapshot = snapshots.require(path);
    return new TableInfo(
        path,
        snapshot.getVersion(),
        KernelInternals.description(snapshot).orElse(null),
        snapshot.getTableProperties(),
        DeltaTypes.toColumns(path, snapshot.getSchema()));
  }

  /** All rows of the latest version as maps of plain Java values (small tables). */
  public List<Map<String, Object>> scan(String path) {
    Snapshot snapshot = snapshots.require(path);
    Scan scan = snapshot.getScanBuilder().build();
    List<Map<String, Object>> result = new ArrayList<>();
    snapshots.forEachScanFile(
        scan,
        (scanState, scanFile) -> {
          try (CloseableIterator<Map<String, Object>> rows =
              readScanFile(path, scanState, scanFile)) {
            rows.forEachRemaining(result::add);
          } catch (IOException e) {
            throw new UncheckedIOException("Cannot close a data file of Delta table " + path, e);
          }
        });
    return result;
  }

  /** The data files of the latest version, from the log only. */
  public List<ScanFile> scanFiles(String path) {
    Snapshot snapshot = snapshots.require(path);
    long version = snapshot.getVersion();
    List<ScanFile> files = new ArrayList<>();
    snapshots.forEachScanFile(
        snapshot.getScanBuilder().build(),
        (scanState, scanFile) ->
            files.add(new ScanFile(path, version, KernelInternals.scanFileToJson(scanFile))));
    return files;
  }

  /** The data files of the latest version with sizes, row counts and deletion vectors. */
  public List<DataFileDetail> dataFileDetails(String path) {
    Snapshot snapshot = snapshots.require(path);
    long version = snapshot.getVersion();
    List<DataFileDetail> files = new ArrayList<>();
    snapshots.forEachScanFile(
        snapshot.getScanBuilder().build(),
        true,
        (scanState, scanFile) -> {
          FileStatus status = KernelInternals.dataFileStatus(scanFile);
          files.add(
              new DataFileDetail(
                  new ScanFile(path, version, KernelInternals.scanFileToJson(scanFile)),
                  status.getPath(),
                  status.getSize(),
                  status.getModificationTime(),
                  KernelInternals.numRecords(scanFile).orElse(-1L),
                  KernelInternals.deletionVectorCardinality(scanFile),
                  KernelInternals.deletionVectorFile(scanFile, snapshot.getPath()),
                  KernelInternals.nullCounts(scanFile)));
        });
    return files;
  }

  /** The rows of one listed data file, a Parquet batch at a time, at the file's version. */
  public CloseableIterator<Map<String, Object>> readScanFile(ScanFile file) {
    return readScanFile(
        file.tablePath(), scanState(file), KernelInternals.scanFileFromJson(file.json()));
  }

  /** A version's scan state, and the table and version it is of. */
  private record KnownScanState(String path, long version, io.delta.kernel.data.Row scanState) {}

  /**
   * The last scan state built: a compaction reads many files listed at one version, and a version's
   * scan state never changes, so the snapshot is loaded once for them, not once per file.
   */
  private final AtomicReference<KnownScanState> lastScanState = new AtomicReference<>();

  private io.delta.kernel.data.Row scanState(ScanFile file) {
    KnownScanState known = lastScanState.get();
    if (known != null
        && known.version() == file.version()
        && known.path().equals(file.tablePath())) {
      return known.scanState();
    }
    Snapshot snapshot;
    try {
      snapshot =
          snapshots
              .keptAt(file.tablePath(), file.version())
              .orElseGet(
                  () ->
                      Table.forPath(engine, file.tablePath())
                          .getSnapshotAsOfVersion(engine, file.version()));
    } catch (TableNotFoundException e) {
      throw new IllegalStateException("No Delta table at " + file.tablePath(), e);
    }
    io.delta.kernel.data.Row scanState = snapshot.getScanBuilder().build().getScanState(engine);
    lastScanState.set(new KnownScanState(file.tablePath(), file.version(), scanState));
    return scanState;
  }

  /** The rows of one version, streamed, from the files {@code fileFilter} may match. */
  public CloseableIterator<Map<String, Object>> scanAtVersion(
      String path, long version, @Nullable Predicate fileFilter) {
    Snapshot snapshot;
    try {
      // The version just committed or read is usually the kept latest one: not read again.
      snapshot =
          snapshots
              .keptAt(path, version)
              .orElseGet(() -> Table.forPath(engine, path).getSnapshotAsOfVersion(engine, version));
    } catch (TableNotFoundException e) {
      throw new IllegalStateException("No Delta table at " + path, e);
    } catch (RuntimeException e) {
      throw new IllegalStateException(
          "Delta table " + path + " has no version " + version + ": " + e.getMessage(), e);
    }
    ScanBuilder builder = snapshot.getScanBuilder();
    if (fileFilter != null) {
      builder = builder.withFilter(fileFilter);
    }
    Scan scan = builder.build();
    io.delta.kernel.data.Row scanState = scan.getScanState(engine);
    List<String> files = new ArrayList<>();
    snapshots.forEachScanFile(
        scan, (state, file) -> files.add(KernelInternals.scanFileToJson(file)));
    Iterator<String> remaining = files.iterator();
    return new CloseableIterator<>() {
      private CloseableIterator<Map<String, Object>> current;

      @Override
      public boolean hasNext() {
        while (current == null || !current.hasNext()) {
          closeCurrent();
          if (!remaining.hasNext()) {
            return false;
          }
          current =
              readScanFile(path, scanState, KernelInternals.scanFileFromJson(remaining.next()));
        }
        return true;
      }

      @Override
      public Map<String, Object> next() {
        if (!hasNext()) {
          throw new NoSuchElementException();
        }
        return current.next();
      }

      private void closeCurrent() {
        if (current != null) {
          try {
            current.close();
          } catch (IOException e) {
            throw new UncheckedIOException("Cannot close a data file of Delta table " + path, e);
          } finally {
            current = null;
          }
        }
      }

      @Override
      public void close() {
        closeCurrent();
      }
    };
  }

  /** The rows of one scan file as maps of plain Java values, a Parquet batch at a time. */
  private CloseableIterator<Map<String, Object>> readScanFile(
      String path, io.delta.kernel.data.Row scanState, io.delta.kernel.data.Row scanFile) {
    FileStatus file = KernelInternals.dataFileStatus(scanFile);
    StructType physicalSchema = KernelInternals.physicalReadSchema(scanState);
    CloseableIterator<FilteredColumnarBatch> logical;
    try {
      CloseableIterator<ColumnarBatch> physical =
          engine
              .getParquetHandler()
              .readParquetFiles(KernelIterators.single(file), physicalSchema, Optional.empty())
              .map(FileReadResult::getData);
      logical = Scan.transformPhysicalData(engine, scanState, scanFile, physical);
    } catch (IOException e) {
      throw new UncheckedIOException(
          "Cannot read " + file.getPath() + " of Delta table " + path, e);
    }
    return new CloseableIterator<>() {
      private CloseableIterator<io.delta.kernel.data.Row> rows;

      @Override
      public boolean hasNext() {
        try {
          while (rows == null || !rows.hasNext()) {
            if (rows != null) {
              rows.close();
              rows = null;
            }
            if (!logical.hasNext()) {
              return false;
            }
            rows = logical.next().getRows();
          }
          return true;
        } catch (IOException e) {
          throw new UncheckedIOException(
              "Cannot read " + file.getPath() + " of Delta table " + path, e);
        }
      }

      @Override
      public Map<String, Object> next() {
        if (!hasNext()) {
          throw new NoSuchElementException();
        }
        io.delta.kernel.data.Row row = rows.next();
        Map<String, Object> values = new LinkedHashMap<>();
        for (int i = 0; i < row.getSchema().length(); i++) {
          values.put(row.getSchema().at(i).getName(), RowBatches.javaValue(path, row, i));
        }
        return values;
      }

      @Override
      public void close() throws IOException {
        try {
          if (rows != null) {
            rows.close();
          }
        } finally {
          logical.close();
        }
      }
    };
  }

  /** All rows of the latest version as Beam rows of {@code schema}. */
  public List<Row> scan(String path, Schema schema) {
    List<Row> rows = new ArrayList<>();
    for (Map<String, Object> values : scan(path)) {
      Map<String, Object> byLowerName = new HashMap<>();
      values.forEach((k, v) -> byLowerName.put(k.toLowerCase(Locale.ROOT), v));
      Row.Builder builder = Row.withSchema(schema);
      for (Schema.Field field : schema.getFields()) {
        builder.addValue(byLowerName.get(field.getName().toLowerCase(Locale.ROOT)));
      }
      rows.add(builder.build());
    }
    return rows;
  }
}
