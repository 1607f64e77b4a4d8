package org.lakecdc.transforms.history;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.beam.sdk.schemas.Schema;
import org.apache.beam.sdk.values.Row;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.transforms.delta.CommitResult;
import org.lakecdc.transforms.delta.DataFileAction;
import org.lakecdc.transforms.delta.DeltaTables;
import org.lakecdc.transforms.silver.KeyIndex;
import org.lakecdc.transforms.silver.KeyLocator;
import org.lakecdc.transforms.silver.SilverMerge;

/**
 * Where the current versions of a history table are, and the commit of a wave: silver's key locator
 * ({@link KeyLocator}: key to data file, row position and {@code _valid_from_lsn} of the key's
 * current version, stamped with the table version it describes, rebuilt by one scan of the key
 * columns and {@code _valid_from_lsn}/{@code _valid_to_lsn} when stale, not kept above silver's cap
 * of {@value SilverMerge#DEFAULT_MAX_INDEX_KEYS} current versions), the full rows of some current
 * versions read from their files only (only the located rows are converted), and one commit of
 * deletion vectors, new files, transaction id and position. Memory: the index (about 35 to 50 bytes
 * per integer key, 100 plus the key otherwise; at most the cap) and one wave.
 */
final class HistoryStore {
  private final DeltaTables tables;
  private final KeyLocator locator;
  private volatile Runnable beforeCommit = () -> {};

  HistoryStore(DeltaTables tables) {
    this(tables, SilverMerge.DEFAULT_MAX_INDEX_KEYS);
  }

  /** With a cap of {@code maxIndexKeys} indexed current versions per path (0: never index). */
  HistoryStore(DeltaTables tables, int maxIndexKeys) {
    this.tables = tables;
    this.locator = new KeyLocator(tables, maxIndexKeys, "History");
  }

  void beforeCommit(Runnable hook) {
    this.beforeCommit = hook;
  }

  /** Forgets the index of a path (after a commit it cannot follow). */
  void forget(String path) {
    locator.forget(path);
  }

  /** How many scans found a wave's keys (tests). */
  long keyScans() {
    return locator.scans();
  }

  /**
   * The current versions of these keys at {@code version}: from the kept index, else by one scan.
   *
   * @return per key found, its location; {@code index} receives the index the file numbers use
   */
  Map<Object, KeyIndex.Location> locate(
      String path, long version, List<String> keys, Set<Object> waveKeys, KeyIndex[] index) {
    List<String> columns = new ArrayList<>(keys);
    columns.add(HistoryTable.VALID_FROM_LSN);
    columns.add(HistoryTable.VALID_TO_LSN);
    int n = keys.size();
    Map<Object, KeyIndex.Location> found = new HashMap<>();
    index[0] =
        locator.locate(path, version, columns, n, values -> values[n + 1] == null, waveKeys, found);
    return found;
  }

  /**
   * The full rows (every column, by the schema's names) of these current versions, reading only
   * their data files.
   */
  Map<Object, Map<String, Object>> read(
      String path,
      long version,
      Schema schema,
      KeyIndex index,
      Map<Object, KeyIndex.Location> locations) {
    Map<String, Map<Long, Object>> wanted = new HashMap<>();
    for (Map.Entry<Object, KeyIndex.Location> entry : locations.entrySet()) {
      wanted
          .computeIfAbsent(index.file(entry.getValue().file()), f -> new HashMap<>())
          .put(entry.getValue().position(), entry.getKey());
    }
    Map<Object, Map<String, Object>> rows = new HashMap<>();
    if (wanted.isEmpty()) {
      return rows;
    }
    Map<String, long[]> positions = new HashMap<>();
    for (Map.Entry<String, Map<Long, Object>> file : wanted.entrySet()) {
      long[] sorted = file.getValue().keySet().stream().mapToLong(Long::longValue).toArray();
      Arrays.sort(sorted);
      positions.put(file.getKey(), sorted);
    }
    List<String> names = schema.getFieldNames();
    tables
        .deletionVectors()
        .readLiveRowsAt(
            path,
            version,
            names,
            positions,
            (file, position, values) -> {
              Object key = wanted.get(file).get(position);
              if (key != null) {
                Map<String, Object> row = new LinkedHashMap<>();
                for (int i = 0; i < names.size(); i++) {
                  row.put(names.get(i), values[i]);
                }
                rows.put(key, row);
              }
            });
    if (rows.size() != locations.size()) {
      locator.forget(path);
      throw new IllegalStateException(
          "History "
              + path
              + ": "
              + (locations.size() - rows.size())
              + " current versions the key index located are not in version "
              + version
              + "; run again");
    }
    return rows;
  }

  /**
   * One commit on exactly {@code version}: the rows at these positions deleted, these rows written
   * into new files (the closed versions into some, the current ones into others, each in this
   * order), the transaction {@code (appId, txnVersion)} and the domain metadata. Updates the kept
   * index when it described {@code version}.
   *
   * @param deletions data file to positions to delete
   * @param rows the rows to write, each with its encoded key and whether it is current
   */
  CommitResult commit(
      String path,
      long version,
      Schema schema,
      Map<String, List<Long>> deletions,
      List<Written> rows,
      List<DataFileAction> alreadyWritten,
      String appId,
      long txnVersion,
      Map<String, String> domainMetadata) {
    List<DataFileAction> added = new ArrayList<>(alreadyWritten);
    // Closed versions and current ones go to files apart: the next waves read only the latter.
    List<Written> ordered = new ArrayList<>(rows.size());
    List<DataFileAction> fresh = new ArrayList<>();
    for (boolean current : new boolean[] {false, true}) {
      List<Written> part = rows.stream().filter(row -> row.current() == current).toList();
      if (!part.isEmpty()) {
        fresh.addAll(
            tables.writeDataFiles(path, schema, () -> part.stream().map(Written::row).iterator()));
        ordered.addAll(part);
      }
    }
    added.addAll(fresh);
    KeyIndex used = locator.kept(path);
    CommitResult result =
        locator
            .commit(
                path, version, deletions, added, appId, txnVersion, domainMetadata, beforeCommit)
            .result();
    if (used == null) {
      return result;
    }
    if (!alreadyWritten.isEmpty()) {
      locator.forget(path);
      return result;
    }
    // The index follows: replaced versions leave, the written current ones point into the files.
    List<Object> removed = new ArrayList<>();
    List<KeyLocator.Written> written = new ArrayList<>();
    for (Written row : ordered) {
      removed.add(row.key());
      written.add(new KeyLocator.Written(row.key(), row.current() ? row.validFromLsn() : null));
    }
    locator.follow(path, used, version, result, removed, written, fresh);
    return result;
  }

  /** A row to write: its encoded key, whether it is a current version, and its LSN. */
  record Written(Object key, Row row, boolean current, @Nullable String validFromLsn) {}
}
