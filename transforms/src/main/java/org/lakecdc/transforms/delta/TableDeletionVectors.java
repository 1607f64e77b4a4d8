package org.lakecdc.transforms.delta;

import io.delta.kernel.Snapshot;
import io.delta.kernel.Transaction;
import io.delta.kernel.data.Row;
import io.delta.kernel.engine.Engine;
import io.delta.kernel.engine.FileReadResult;
import io.delta.kernel.types.StructField;
import io.delta.kernel.types.StructType;
import io.delta.kernel.utils.CloseableIterator;
import io.delta.kernel.utils.FileStatus;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.io.mssqlcdc.schema.OutputType;

/**
 * The deletion-vector side of Delta tables, which silver's MERGE and maintenance use
 * (docs/behaviour.md §10.5): the live rows of a version with their files and positions, the
 * positions the vectors delete, and the commit of new vectors on exactly the version read. Kernel
 * 4.4 reads deletion vectors but has no writer: the vector file's bytes come from the caller
 * (silver's {@code DeletionVectors}); the {@code add} and {@code remove} actions that point to them
 * are built by {@link KernelInternals}. Obtained from the tables ({@code deletionVectors()});
 * thread-safe, not serializable.
 */
public final class TableDeletionVectors {
  private final TableSnapshots snapshots;
  private final TableCommits commits;
  private final Engine engine;
  private final Clock clock;

  TableDeletionVectors(TableSnapshots snapshots, TableCommits commits, Clock clock) {
    this.snapshots = snapshots;
    this.commits = commits;
    this.engine = snapshots.engine();
    this.clock = clock;
  }

  /**
   * Reads some columns of every live row of a table version with the row's file and position: one
   * pass over the data files reading only these columns, skipping the rows the files' deletion
   * vectors delete (whoever wrote them: this project or delta-spark). Memory holds one Parquet
   * batch and one file's deleted positions.
   *
   * @param path the table path or URI
   * @param version the table version to read
   * @param columns column names (matched ignoring case), at least one
   * @param visitor receives each live row
   * @return the number of live rows visited
   * @throws IllegalStateException when no table exists or the version is no longer readable
   * @throws IllegalArgumentException when a column is not in the table
   * @throws UncheckedIOException when a data file or a deletion vector cannot be read
   */
  public long scanLiveRows(
      String path, long version, List<String> columns, LiveRowVisitor visitor) {
    return scanLiveRows(path, version, columns, null, visitor);
  }

  /**
   * {@link #scanLiveRows(String, long, List, LiveRowVisitor)} over some data files only: the other
   * files are neither opened nor read, so the cost grows with these files, not the table.
   *
   * @param path the table path or URI
   * @param version the table version to read
   * @param columns column names (matched ignoring case), at least one
   * @param files the data files to read by their {@code add} path ({@link LiveRowVisitor#visit}'s
   *     {@code file}), or null for every file
   * @param visitor receives each live row of those files
   * @return the number of live rows visited
   * @throws IllegalStateException when no table exists or the version is no longer readable
   * @throws IllegalArgumentException when a column is not in the table
   * @throws UncheckedIOException when a data file or a deletion vector cannot be read
   */
  public long scanLiveRows(
      String path,
      long version,
      List<String> columns,
      @Nullable Set<String> files,
      LiveRowVisitor visitor) {
    return scan(path, version, columns, files, null, visitor);
  }

  /**
   * Some columns of the rows at these positions of these data files of a table version (the live
   * ones among them: a position a deletion vector deletes is not visited). Only these files are
   * opened; the values of the rows at other positions are stepped over, not decoded, and row groups
   * holding no wanted row are not read, so the cost is reading these files' pages plus decoding the
   * wanted rows only (for files of another writer's layout: Kernel's reader decodes the file's rows
   * up to the last wanted one and only the wanted ones are converted).
   *
   * @param path the table path or URI
   * @param version the table version to read
   * @param columns column names (matched ignoring case), at least one
   * @param positions data file by its {@code add} path ({@link LiveRowVisitor#visit}'s {@code
   *     file}) to the row positions wanted in it, ascending, from 0
   * @param visitor receives each live wanted row, in file order, positions ascending per file
   * @return the number of rows visited
   * @throws IllegalStateException when no table exists or the version is no longer readable
   * @throws IllegalArgumentException when a column is not in the table
   * @throws UncheckedIOException when a data file or a deletion vector cannot be read
   */
  public long readLiveRowsAt(
      String path,
      long version,
      List<String> columns,
      Map<String, long[]> positions,
      LiveRowVisitor visitor) {
    return scan(path, version, columns, positions.keySet(), positions, visitor);
  }

  private long scan(
      String path,
      long version,
      List<String> columns,
      @Nullable Set<String> files,
      @Nullable Map<String, long[]> positions,
      LiveRowVisitor visitor) {
    Snapshot snapshot = snapshots.at(path, version);
    StructType tableSchema = snapshot.getSchema();
    List<StructField> fields = new ArrayList<>();
    for (String column : columns) {
      StructField found = null;
      for (StructField field : tableSchema.fields()) {
        if (field.getName().equalsIgnoreCase(column)) {
          found = field;
        }
      }
      if (found == null) {
        throw new IllegalArgumentException(
            "Delta table " + path + " has no column '" + column + "'; it has " + tableSchema);
      }
      fields.add(found);
    }
    if (fields.isEmpty()) {
      throw new IllegalArgumentException("scanLiveRows needs at least one column");
    }
    OutputType[] types = new OutputType[fields.size()];
    for (int i = 0; i < types.length; i++) {
      types[i] = DeltaTypes.outputType(path, fields.get(i));
    }
    List<StructField> columnFields = List.copyOf(fields);
    fields.add(StructField.DEFAULT_ROW_INDEX_COLUMN);
    StructType readSchema = new StructType(fields);
    int positionOrdinal = fields.size() - 1;
    String tableRoot = snapshot.getPath();
    Object[] values = new Object[columns.size()];
    long[] visited = {0};
    snapshots.forEachScanFile(
        snapshot.getScanBuilder().build(),
        (scanState, scanFile) -> {
          String file = KernelInternals.addPath(scanFile);
          if (files != null && !files.contains(file)) {
            return;
          }
          FileStatus status = KernelInternals.dataFileStatus(scanFile);
          long[] wanted = positions == null ? null : positions.get(file);
          try {
            long[] deleted = KernelInternals.deletedRowPositions(engine, tableRoot, scanFile);
            if (wanted != null
                && ParquetRowsAt.read(
                    snapshots.hadoopConf(),
                    status.getPath(),
                    columnFields,
                    types,
                    live(wanted, deleted),
                    (position, row) -> {
                      visitor.visit(file, position, row);
                      visited[0]++;
                    })) {
              return;
            }
            int next = 0;
            int nextWanted = 0;
            try (CloseableIterator<FileReadResult> batches =
                engine
                    .getParquetHandler()
                    .readParquetFiles(
                        KernelIterators.single(status), readSchema, Optional.empty())) {
              reading:
              while (batches.hasNext()) {
                try (CloseableIterator<Row> rows = batches.next().getData().getRows()) {
                  while (rows.hasNext()) {
                    Row row = rows.next();
                    long position = row.getLong(positionOrdinal);
                    if (wanted != null) {
                      while (nextWanted < wanted.length && wanted[nextWanted] < position) {
                        nextWanted++;
                      }
                      if (nextWanted == wanted.length) {
                        break reading; // the rest of the file holds no wanted row
                      }
                      if (wanted[nextWanted] != position) {
                        continue;
                      }
                    }
                    while (next < deleted.length && deleted[next] < position) {
                      next++;
                    }
                    if (next < deleted.length && deleted[next] == position) {
                      continue;
                    }
                    for (int i = 0; i < values.length; i++) {
                      values[i] = RowBatches.javaValue(types[i], row, i);
                    }
                    visitor.visit(file, position, values);
                    visited[0]++;
                  }
                }
              }
            }
          } catch (IOException e) {
            throw new UncheckedIOException(
                "Cannot read " + status.getPath() + " of Delta table " + path, e);
          }
        });
    return visited[0];
  }

  /** The positions of {@code wanted} (ascending) that {@code deleted} (ascending) leaves. */
  private static long[] live(long[] wanted, long[] deleted) {
    long[] live = new long[wanted.length];
    int count = 0;
    int next = 0;
    for (long position : wanted) {
      while (next < deleted.length && deleted[next] < position) {
        next++;
      }
      if (next == deleted.length || deleted[next] != position) {
        live[count++] = position;
      }
    }
    return Arrays.copyOf(live, count);
  }

  /**
   * The row positions the deletion vectors of some data files of a table version delete.
   *
   * @param path the table path or URI
   * @param version the table version
   * @param files data files by their {@code add} path ({@link LiveRowVisitor#visit}'s {@code file})
   * @return per file asked for, its deleted positions ascending (empty without a vector)
   * @throws IllegalStateException when no table exists or a file is not in the version
   * @throws UncheckedIOException when a vector cannot be read
   */
  public Map<String, long[]> deletedRowPositions(
      String path, long version, Collection<String> files) {
    Snapshot snapshot = snapshots.at(path, version);
    Set<String> wanted = new HashSet<>(files);
    Map<String, long[]> result = new HashMap<>();
    snapshots.forEachScanFile(
        snapshot.getScanBuilder().build(),
        (scanState, scanFile) -> {
          String file = KernelInternals.addPath(scanFile);
          if (wanted.contains(file)) {
            try {
              result.put(
                  file, KernelInternals.deletedRowPositions(engine, snapshot.getPath(), scanFile));
            } catch (IOException e) {
              throw new UncheckedIOException(
                  "Cannot read a deletion vector of Delta table " + path, e);
            }
          }
        });
    for (String file : wanted) {
      if (!result.containsKey(file)) {
        throw new IllegalStateException(
            "Delta table " + path + " has no data file " + file + " at version " + version);
      }
    }
    return result;
  }

  /**
   * The data files of a table version with their row and deleted-row counts, from the log only (no
   * data file or vector is read).
   *
   * @param path the table path or URI
   * @param version the table version
   * @return the files, in the log's order
   * @throws IllegalStateException when no table exists or the version is no longer readable
   */
  public List<DataFileRows> dataFileRows(String path, long version) {
    Snapshot snapshot = snapshots.at(path, version);
    List<DataFileRows> files = new ArrayList<>();
    snapshots.forEachScanFile(
        snapshot.getScanBuilder().build(),
        true,
        (scanState, scanFile) ->
            files.add(
                new DataFileRows(
                    KernelInternals.addPath(scanFile),
                    KernelInternals.dataFileStatus(scanFile).getSize(),
                    KernelInternals.numRecords(scanFile).orElse(-1L),
                    KernelInternals.deletionVectorCardinality(scanFile))));
    return files;
  }

  /**
   * Commits new deletion vectors for some data files and new data files, in one commit on exactly
   * the version read: writes {@code vectorFile} as {@code deletion_vector_<uuid>.bin} in the table
   * directory (when there is an update), then commits per update a {@code remove} of the file's
   * {@code add} (with its old vector) and an {@code add} of the same file with the new vector
   * (statistics marked {@code tightBounds = false}), the {@code added} files, the transaction
   * identifier and the domain metadata, with {@code withMaxRetries(0)}: any commit after {@code
   * readVersion} makes it fail, since the vectors were computed from that version.
   *
   * @param path the table path or URI; the table must have table feature {@code deletionVectors}
   * @param readVersion the version the updates were computed from
   * @param vectorFile the vector file's content (the vectors the updates point into), or null when
   *     there is no update
   * @param updates new vectors, at most one per file, each replacing the file's old vector
   * @param added data files written by the tables' {@code writeDataFiles}
   * @param appId the transaction app id, or null
   * @param txnVersion the transaction version, ignored when {@code appId} is null
   * @param domainMetadata domain name to configuration
   * @return the outcome; {@link CommitResult#filesRemoved()} counts the files whose vector changed;
   *     {@link CommitResult.Status#ALREADY_COMMITTED} when {@code (appId, txnVersion)} is already
   *     in
   * @throws DeltaConflictException when the table is past {@code readVersion} or another commit
   *     landed first; nothing is visible
   * @throws IllegalArgumentException when an update's file is not in the version, or two updates
   *     name the same file, or updates come without a vector file
   * @throws UncheckedIOException when the vector file cannot be written
   */
  public CommitResult commitDeletionVectors(
      String path,
      long readVersion,
      byte @Nullable [] vectorFile,
      List<DeletionVectorUpdate> updates,
      List<DataFileAction> added,
      @Nullable String appId,
      long txnVersion,
      Map<String, String> domainMetadata) {
    return commitDeletionVectors(
        path, readVersion, vectorFile, updates, added, appId, txnVersion, domainMetadata, () -> {});
  }

  /**
   * {@link #commitDeletionVectors} running {@code beforeCommit} after the vector file is written,
   * just before the commit: for tests only (a concurrent commit landing there, or a simulated crash
   * that leaves the written files unreferenced).
   */
  public CommitResult commitDeletionVectors(
      String path,
      long readVersion,
      byte @Nullable [] vectorFile,
      List<DeletionVectorUpdate> updates,
      List<DataFileAction> added,
      @Nullable String appId,
      long txnVersion,
      Map<String, String> domainMetadata,
      Runnable beforeCommit) {
    if (!updates.isEmpty() && vectorFile == null) {
      throw new IllegalArgumentException("Deletion vector updates need their vector file");
    }
    Snapshot latest = snapshots.require(path);
    Optional<CommitResult> moved =
        commits.onReadVersion(path, latest, readVersion, appId, txnVersion);
    if (moved.isPresent()) {
      return moved.get();
    }
    Optional<Transaction> built = commits.commitOnceTransaction(latest, appId, txnVersion);
    if (built.isEmpty()) {
      return commits.alreadyCommitted(path, appId, txnVersion, latest.getVersion());
    }
    Transaction txn = built.get();
    Map<String, DeletionVectorUpdate> byFile = new HashMap<>();
    for (DeletionVectorUpdate update : updates) {
      if (byFile.put(update.file(), update) != null) {
        throw new IllegalArgumentException(
            "Two deletion vector updates for data file " + update.file() + " of " + path);
      }
    }
    List<Row> actions = new ArrayList<>();
    UUID vectorId = UUID.randomUUID();
    long now = clock.millis();
    if (!byFile.isEmpty()) {
      Set<String> found = new HashSet<>();
      snapshots.forEachScanFile(
          latest.getScanBuilder().build(),
          true,
          (scanState, scanFile) -> {
            DeletionVectorUpdate update = byFile.get(KernelInternals.addPath(scanFile));
            if (update != null) {
              found.add(update.file());
              actions.add(KernelInternals.removeAction(scanFile, now));
              actions.add(
                  KernelInternals.addWithDeletionVector(
                      scanFile,
                      vectorId,
                      update.offset(),
                      update.sizeInBytes(),
                      update.cardinality()));
            }
          });
      if (found.size() != byFile.size()) {
        Set<String> missing = new TreeSet<>(byFile.keySet());
        missing.removeAll(found);
        throw new IllegalArgumentException(
            "Delta table " + path + " has no data file " + missing + " at version " + readVersion);
      }
      writeFile(KernelInternals.deletionVectorFilePath(latest.getPath(), vectorId), vectorFile);
    }
    for (DataFileAction file : added) {
      actions.add(KernelInternals.addActionFromJson(file.actionJson()));
    }
    domainMetadata.forEach(txn::addDomainMetadata);
    beforeCommit.run();
    return commits.commitOnce(
        path,
        txn,
        actions,
        appId,
        txnVersion,
        added.size(),
        byFile.size(),
        TableCommits.conflictMessage(readVersion, -1));
  }

  /** Writes a new file (never overwriting one) with this content. */
  private void writeFile(String file, byte[] content) {
    Path target = new Path(file);
    try {
      FileSystem fs = target.getFileSystem(snapshots.hadoopConf());
      try (FSDataOutputStream out = fs.create(target, false)) {
        out.write(content);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot write " + file, e);
    }
  }
}
