package org.lakecdc.transforms.delta;

import io.delta.kernel.utils.CloseableIterator;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.PriorityQueue;
import java.util.function.Function;
import java.util.function.UnaryOperator;
import org.apache.beam.sdk.schemas.Schema;
import org.apache.beam.sdk.values.Row;
import org.checkerframework.checker.nullness.qual.Nullable;

/**
 * The one place that rewrites a table's files into fewer files holding exactly their rows, in one
 * commit of {@code dataChange = false} actions ({@link DeltaTables#rearrangeFiles}): silver's
 * compaction (bin-packing, files with many deleted rows, outputs merged by key) and the job's own
 * facts and control tables ({@link SmallFileCompaction}) both run it.
 *
 * <p>Selection ({@link #bins}): every file whose deletion vector deletes at least the threshold
 * fraction of its rows, and every file smaller than the target size, in the order given, packed
 * into bins of at most {@code targetFileBytes} (estimated live bytes) and {@code maxFilesPerBin}
 * files; a bin of one file is rewritten only when its deleted fraction passes the threshold (else
 * nothing would be gained). With kinds ({@link #bins(List, Limits, Function)}), files of different
 * kinds never share a bin: each kind is packed on its own, and a file of no known kind only alone.
 *
 * <p>Memory: rows stream file by file into the Parquet writer, a batch at a time; with keys, the
 * files of one output are merged by key (each input open at one Parquet batch), never sorted in
 * memory. Thread-safe (no state beyond its {@link DeltaTables}).
 */
public final class FileCompaction {
  private final DeltaTables tables;

  /**
   * Compaction of these tables' files.
   *
   * @param tables the Delta tables
   */
  public FileCompaction(DeltaTables tables) {
    this.tables = Objects.requireNonNull(tables, "tables");
  }

  /**
   * What a compaction selects and how it packs it.
   *
   * @param deletedFractionThreshold a file whose deletion vector deletes at least this fraction of
   *     its rows ({@code cardinality / numRecords}) is rewritten without them; in {@code (0, 1]}
   * @param targetFileBytes the size, in bytes, that files are packed up to: files smaller than it
   *     are bin-packed together into outputs whose inputs add up to at most this (inputs with
   *     deleted rows counted at their live fraction); at least 1
   * @param maxFilesPerBin the most files one output is written from; at least 2
   */
  public record Limits(double deletedFractionThreshold, long targetFileBytes, int maxFilesPerBin) {
    /**
     * Checks the values.
     *
     * @param deletedFractionThreshold the threshold
     * @param targetFileBytes the target size
     * @param maxFilesPerBin the files per output
     * @throws IllegalArgumentException naming the value and what is accepted
     */
    public Limits {
      if (!(deletedFractionThreshold > 0 && deletedFractionThreshold <= 1)) {
        throw new IllegalArgumentException(
            "deletedFractionThreshold must be in (0, 1], was " + deletedFractionThreshold);
      }
      if (targetFileBytes < 1) {
        throw new IllegalArgumentException(
            "targetFileBytes must be at least 1, was " + targetFileBytes);
      }
      if (maxFilesPerBin < 2) {
        throw new IllegalArgumentException(
            "maxFilesPerBin must be at least 2, was " + maxFilesPerBin);
      }
    }
  }

  /**
   * What one {@link #compact} did.
   *
   * @param committed true when it committed; false when no file needed rewriting
   * @param version the version it committed, else the table's version it looked at
   * @param filesRemoved data files it removed
   * @param filesAdded data files it added
   * @param rowsWritten rows written into the added files (equal to the live rows of the removed
   *     ones)
   * @param deletedRowsPurged rows the removed files' deletion vectors deleted, gone from storage
   */
  public record Result(
      boolean committed,
      long version,
      int filesRemoved,
      int filesAdded,
      long rowsWritten,
      long deletedRowsPurged) {}

  /**
   * Compacts the table's latest version in one commit: each bin's live rows, read through Kernel
   * with the deletion vectors applied, are written to new files (cut at the writer's file size),
   * merged by key when keys are given (sorted by key when every input is; key values ascending,
   * NULL first), else in the bin's order; then one commit removes the bins' files and adds the new
   * ones, both {@code dataChange = false}. Transaction identifiers and domain metadata stay in the
   * log untouched.
   *
   * @param path the table path or URI
   * @param label how errors name the table, e.g. {@code Silver table}
   * @param keys the key columns (matched ignoring case); empty for no sorting
   * @param limits what is rewritten
   * @param order the table's data files (in the log's order) in the order their rows are written,
   *     which {@link #bins} packs
   * @param beforeCommit run after the files are written, before the commit (a test hook)
   * @return what was done; not committed when nothing needed rewriting
   * @throws IllegalArgumentException when a key is not a column of the table
   * @throws IllegalStateException when no table exists, or a file's rows read back differ in count
   *     from its statistics less its deletion vector (nothing is committed)
   * @throws DeltaConflictException when another commit landed after the version compaction listed:
   *     nothing is visible; the files it wrote stay orphans that a vacuum deletes
   */
  public Result compact(
      String path,
      String label,
      List<String> keys,
      Limits limits,
      UnaryOperator<List<DataFileDetail>> order,
      Runnable beforeCommit) {
    return compact(path, label, keys, limits, order, ONE_KIND, beforeCommit);
  }

  /**
   * {@link #compact(String, String, List, Limits, UnaryOperator, Runnable)} never packing files of
   * different kinds into one output: each kind's files are binned on their own ({@link #bins(List,
   * Limits, Function)}), so every output holds the rows of one kind.
   *
   * @param path the table path or URI
   * @param label how errors name the table, e.g. {@code History table}
   * @param keys the key columns (matched ignoring case); empty for no sorting
   * @param limits what is rewritten
   * @param order the table's data files (in the log's order) in the order their rows are written
   * @param kinds each file's kind (compared with {@code equals}); null when it is not known, and
   *     then the file is rewritten only alone (past the deleted-row threshold)
   * @param beforeCommit run after the files are written, before the commit (a test hook)
   * @return what was done; not committed when nothing needed rewriting
   * @throws IllegalArgumentException when a key is not a column of the table
   * @throws IllegalStateException when no table exists, or a file's rows read back differ in count
   *     from its statistics less its deletion vector (nothing is committed)
   * @throws DeltaConflictException when another commit landed after the version compaction listed
   */
  public Result compact(
      String path,
      String label,
      List<String> keys,
      Limits limits,
      UnaryOperator<List<DataFileDetail>> order,
      Function<DataFileDetail, @Nullable Object> kinds,
      Runnable beforeCommit) {
    return compact(
        path,
        label,
        keys,
        limits,
        order,
        kinds,
        (removed, added) -> {
          beforeCommit.run();
          return tables.rearrangeFiles(
              path, removed.stream().map(DataFileDetail::scanFile).toList(), added);
        });
  }

  /** Commits a compaction's files: the removed files as listed, the added ones as written. */
  @FunctionalInterface
  interface Commit {
    /**
     * Commits them.
     *
     * @param removed the files rewritten, as listed
     * @param added the files holding their rows
     * @return the commit's outcome
     * @throws DeltaConflictException when it lost to a concurrent commit
     */
    CommitResult commit(List<DataFileDetail> removed, List<DataFileAction> added);
  }

  /**
   * {@link #compact(String, String, List, Limits, UnaryOperator, Runnable)} committed by {@code
   * commit}.
   */
  Result compact(
      String path,
      String label,
      List<String> keys,
      Limits limits,
      UnaryOperator<List<DataFileDetail>> order,
      Commit commit) {
    return compact(path, label, keys, limits, order, ONE_KIND, commit);
  }

  /** Every file of one kind: any two may share an output. */
  private static final Function<DataFileDetail, @Nullable Object> ONE_KIND = file -> Boolean.TRUE;

  private Result compact(
      String path,
      String label,
      List<String> keys,
      Limits limits,
      UnaryOperator<List<DataFileDetail>> order,
      Function<DataFileDetail, @Nullable Object> kinds,
      Commit commit) {
    Objects.requireNonNull(limits, "limits");
    List<DeltaColumn> columns = tables.describe(path).columns();
    Schema schema = DeltaColumn.toBeamSchema(columns);
    List<String> keyColumns = keyColumns(path, label, columns, keys);
    List<DataFileDetail> files = order.apply(tables.dataFileDetails(path));
    long version = files.isEmpty() ? tables.version(path) : files.get(0).scanFile().version();
    List<List<DataFileDetail>> bins = bins(files, limits, kinds);
    if (bins.isEmpty()) {
      return new Result(false, version, 0, 0, 0, 0);
    }
    List<DataFileDetail> removed = new ArrayList<>();
    List<DataFileAction> added = new ArrayList<>();
    long rowsWritten = 0;
    long purged = 0;
    for (List<DataFileDetail> bin : bins) {
      long written = writeBin(path, label, schema, keyColumns, bin, added);
      long expected = 0;
      for (DataFileDetail file : bin) {
        removed.add(file);
        purged += file.deletedRows();
        expected = expected < 0 || file.liveRows() < 0 ? -1 : expected + file.liveRows();
      }
      if (expected >= 0 && written != expected) {
        throw new IllegalStateException(
            label
                + " "
                + path
                + ": compaction read "
                + written
                + " rows from "
                + bin.size()
                + " files whose statistics less their deletion vectors say "
                + expected
                + "; nothing committed");
      }
      rowsWritten += written;
    }
    CommitResult result = commit.commit(removed, added);
    return new Result(true, result.version(), removed.size(), added.size(), rowsWritten, purged);
  }

  /**
   * The files to rewrite, packed into bins (see the class comment).
   *
   * @param files the table's data files, in the order their rows are to be written
   * @param limits the selection and packing limits
   * @return the bins, each of at least two files or of one file past the deleted-row threshold
   */
  public static List<List<DataFileDetail>> bins(List<DataFileDetail> files, Limits limits) {
    return bins(files, limits, ONE_KIND);
  }

  /**
   * The files to rewrite, packed into bins of one kind each: the files of each kind, in the order
   * given, are packed as {@link #bins(List, Limits)} packs a table's (kinds in the order their
   * first file comes); a file whose kind is null shares a bin with no other file, so it is
   * rewritten only when its deleted fraction passes the threshold.
   *
   * @param files the table's data files, in the order their rows are to be written
   * @param limits the selection and packing limits
   * @param kinds each file's kind, compared with {@code equals}; null when not known
   * @return the bins, each of one kind and of at least two files or of one file past the
   *     deleted-row threshold
   */
  public static List<List<DataFileDetail>> bins(
      List<DataFileDetail> files, Limits limits, Function<DataFileDetail, @Nullable Object> kinds) {
    Map<Object, List<DataFileDetail>> byKind = new LinkedHashMap<>();
    List<List<DataFileDetail>> bins = new ArrayList<>();
    for (DataFileDetail file : files) {
      Object kind = kinds.apply(file);
      if (kind == null) {
        bins.addAll(pack(List.of(file), limits));
      } else {
        byKind.computeIfAbsent(kind, k -> new ArrayList<>()).add(file);
      }
    }
    for (List<DataFileDetail> ofKind : byKind.values()) {
      bins.addAll(pack(ofKind, limits));
    }
    return bins;
  }

  /** {@link #bins(List, Limits)} of files any two of which may share a bin. */
  private static List<List<DataFileDetail>> pack(List<DataFileDetail> files, Limits limits) {
    List<List<DataFileDetail>> bins = new ArrayList<>();
    List<DataFileDetail> bin = new ArrayList<>();
    double binBytes = 0;
    for (DataFileDetail file : files) {
      boolean mostlyDeleted = passesThreshold(file, limits);
      if (!mostlyDeleted && file.sizeBytes() >= limits.targetFileBytes()) {
        continue;
      }
      double liveBytes =
          file.numRecords() > 0
              ? file.sizeBytes() * (double) file.liveRows() / file.numRecords()
              : file.sizeBytes();
      if (!bin.isEmpty()
          && (binBytes + liveBytes > limits.targetFileBytes()
              || bin.size() >= limits.maxFilesPerBin())) {
        addBin(bins, bin, limits);
        bin = new ArrayList<>();
        binBytes = 0;
      }
      bin.add(file);
      binBytes += liveBytes;
    }
    if (!bin.isEmpty()) {
      addBin(bins, bin, limits);
    }
    return bins;
  }

  private static void addBin(
      List<List<DataFileDetail>> bins, List<DataFileDetail> bin, Limits limits) {
    if (bin.size() > 1 || passesThreshold(bin.get(0), limits)) {
      bins.add(List.copyOf(bin));
    }
  }

  private static boolean passesThreshold(DataFileDetail file, Limits limits) {
    return file.deletedRows() > 0
        && file.numRecords() > 0
        && file.deletedRows() >= limits.deletedFractionThreshold() * file.numRecords();
  }

  /** Writes one bin's live rows into new files (appended to {@code added}); returns the rows. */
  private long writeBin(
      String path,
      String label,
      Schema schema,
      List<String> keyColumns,
      List<DataFileDetail> bin,
      List<DataFileAction> added) {
    try (DataFileWriter writer = tables.openDataFileWriter(path, schema)) {
      if (keyColumns.isEmpty()) {
        for (DataFileDetail file : bin) {
          try (var rows = tables.readScanFile(file.scanFile())) {
            while (rows.hasNext()) {
              writer.write(toRow(schema, rows.next()));
            }
          }
        }
      } else {
        mergeByKey(schema, keyColumns, bin, writer);
      }
      long written = writer.rowCount();
      added.addAll(writer.finish());
      return written;
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot close a data file of " + label + " " + path, e);
    }
  }

  /** One input of a key merge: its open rows and the row at its head. */
  private static final class Head {
    final CloseableIterator<Map<String, Object>> rows;
    Map<String, Object> row;
    final int order;

    Head(CloseableIterator<Map<String, Object>> rows, int order) {
      this.rows = rows;
      this.order = order;
    }
  }

  /** Writes the bin's rows merged by key: each input is read once, a batch at a time. */
  private void mergeByKey(
      Schema schema, List<String> keyColumns, List<DataFileDetail> bin, DataFileWriter writer)
      throws IOException {
    Comparator<Map<String, Object>> byKey = keyComparator(keyColumns);
    PriorityQueue<Head> heads =
        new PriorityQueue<>(
            Comparator.<Head, Map<String, Object>>comparing(h -> h.row, byKey)
                .thenComparingInt(h -> h.order));
    List<Head> open = new ArrayList<>(bin.size());
    try {
      for (DataFileDetail file : bin) {
        Head head = new Head(tables.readScanFile(file.scanFile()), open.size());
        open.add(head);
        if (head.rows.hasNext()) {
          head.row = head.rows.next();
          heads.add(head);
        }
      }
      while (!heads.isEmpty()) {
        Head head = heads.poll();
        writer.write(toRow(schema, head.row));
        if (head.rows.hasNext()) {
          head.row = head.rows.next();
          heads.add(head);
        }
      }
    } finally {
      IOException failure = null;
      for (Head head : open) {
        try {
          head.rows.close();
        } catch (IOException e) {
          failure = e;
        }
      }
      if (failure != null) {
        throw failure;
      }
    }
  }

  /** Orders rows by the key columns' values, ascending, NULL first. */
  static Comparator<Map<String, Object>> keyComparator(List<String> keyColumns) {
    Comparator<Map<String, Object>> comparator = (a, b) -> 0;
    for (String column : keyColumns) {
      comparator = comparator.thenComparing(row -> row.get(column), FileCompaction::compareValues);
    }
    return comparator;
  }

  @SuppressWarnings({"unchecked", "rawtypes"})
  private static int compareValues(Object a, Object b) {
    if (a == null || b == null) {
      return a == null ? (b == null ? 0 : -1) : 1;
    }
    if (a instanceof byte[] x && b instanceof byte[] y) {
      return Arrays.compareUnsigned(x, y);
    }
    return ((Comparable) a).compareTo(b);
  }

  /** The table's spelling of each key column. */
  private static List<String> keyColumns(
      String path, String label, List<DeltaColumn> columns, List<String> keys) {
    List<String> names = new ArrayList<>(keys.size());
    for (String key : keys) {
      String name =
          columns.stream()
              .map(DeltaColumn::name)
              .filter(n -> n.toLowerCase(Locale.ROOT).equals(key.toLowerCase(Locale.ROOT)))
              .findFirst()
              .orElseThrow(
                  () ->
                      new IllegalArgumentException(
                          "Key column '"
                              + key
                              + "' is not a column of "
                              + label.toLowerCase(Locale.ROOT)
                              + " "
                              + path
                              + "; its columns: "
                              + columns.stream().map(DeltaColumn::name).toList()));
      names.add(name);
    }
    return names;
  }

  /** A row read through Kernel (the table's columns, in order) as a Beam row of the schema. */
  private static Row toRow(Schema schema, Map<String, Object> values) {
    return Row.withSchema(schema).addValues(new ArrayList<>(values.values())).build();
  }
}
