package org.lakecdc.transforms.history;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.beam.sdk.schemas.Schema;
import org.apache.beam.sdk.values.Row;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.transforms.delta.CommitResult;
import org.lakecdc.transforms.delta.DataFileAction;
import org.lakecdc.transforms.delta.DeletionVectorUpdate;
import org.lakecdc.transforms.delta.DeltaTables;
import org.lakecdc.transforms.silver.DeletionVectors;
import org.lakecdc.transforms.silver.KeyIndex;

/**
 * Where the current versions of a history table are, and the commit of a wave: the key index of
 * silver (key to data file, row position and {@code _valid_from_lsn} of the key's current version,
 * stamped with the table version it describes, rebuilt by one scan of the key columns and {@code
 * _valid_from_lsn}/{@code _valid_to_lsn} when stale), the full rows of some current versions read
 * from their files only, and one commit of deletion vectors, new files, transaction id and
 * position. Memory: the index (about 35 to 50 bytes per integer key, 100 plus the key otherwise)
 * and one wave.
 */
final class HistoryStore {
  private static final ObjectMapper JSON = new ObjectMapper();

  private final DeltaTables tables;
  private final Map<String, KeyIndex> indexes = new ConcurrentHashMap<>();
  private volatile Runnable beforeCommit = () -> {};

  HistoryStore(DeltaTables tables) {
    this.tables = tables;
  }

  void beforeCommit(Runnable hook) {
    this.beforeCommit = hook;
  }

  /** Forgets the index of a path (after a commit it cannot follow). */
  void forget(String path) {
    indexes.remove(path);
  }

  /**
   * The current versions of these keys at {@code version}: from the kept index, else by one scan.
   *
   * @return per key found, its location; {@code index} receives the index the file numbers use
   */
  Map<Object, KeyIndex.Location> locate(
      String path, long version, List<String> keys, Set<Object> waveKeys, KeyIndex[] index) {
    String tableId = tables.tableId(path);
    KeyIndex kept = indexes.get(path);
    if (kept == null || kept.version() != version || !kept.tableId().equals(tableId)) {
      kept = new KeyIndex(tableId, version);
      KeyIndex building = kept;
      List<String> columns = new ArrayList<>(keys);
      columns.add(HistoryTable.VALID_FROM_LSN);
      columns.add(HistoryTable.VALID_TO_LSN);
      int n = keys.size();
      tables
          .deletionVectors()
          .scanLiveRows(
              path,
              version,
              columns,
              (file, position, values) -> {
                if (values[n + 1] == null) {
                  building.put(KeyIndex.key(values, n), file, position, (String) values[n]);
                }
              });
      indexes.put(path, kept);
    }
    index[0] = kept;
    Map<Object, KeyIndex.Location> found = new HashMap<>();
    for (Object key : waveKeys) {
      KeyIndex.Location location = kept.get(key);
      if (location != null) {
        found.put(key, location);
      }
    }
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
    List<String> names = schema.getFieldNames();
    tables
        .deletionVectors()
        .scanLiveRows(
            path,
            version,
            names,
            wanted.keySet(),
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
      indexes.remove(path);
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
   * (in this order, into new files), the transaction {@code (appId, txnVersion)} and the domain
   * metadata. Updates the kept index when it described {@code version}.
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
    List<DataFileAction> fresh =
        rows.isEmpty()
            ? List.of()
            : tables.writeDataFiles(path, schema, () -> rows.stream().map(Written::row).iterator());
    added.addAll(fresh);
    DeletionVectors.Vectors vectors =
        DeletionVectors.merged(
            deletions.isEmpty()
                ? Map.of()
                : tables.deletionVectors().deletedRowPositions(path, version, deletions.keySet()),
            deletions);
    byte[] vectorFile = vectors.file();
    List<DeletionVectorUpdate> updates = vectors.updates();
    KeyIndex used = indexes.get(path);
    CommitResult result;
    try {
      result =
          tables
              .deletionVectors()
              .commitDeletionVectors(
                  path,
                  version,
                  vectorFile,
                  updates,
                  added,
                  appId,
                  txnVersion,
                  domainMetadata,
                  beforeCommit);
    } catch (RuntimeException e) {
      indexes.remove(path);
      throw e;
    }
    if (!result.committed()
        || used == null
        || used.version() != version
        || !alreadyWritten.isEmpty()) {
      indexes.remove(path);
      return result;
    }
    // The index follows: replaced versions leave, the written current ones point into the files.
    for (Written row : rows) {
      used.remove(row.key());
    }
    int next = 0;
    for (DataFileAction action : fresh) {
      if (action.rowCount() < 0 || next + action.rowCount() > rows.size()) {
        indexes.remove(path);
        return result;
      }
      String file = addPath(action);
      for (long position = 0; position < action.rowCount(); position++) {
        Written row = rows.get(next++);
        if (row.current()) {
          used.put(row.key(), file, position, row.validFromLsn());
        }
      }
    }
    if (next != rows.size()) {
      indexes.remove(path);
      return result;
    }
    used.setVersion(result.version());
    return result;
  }

  /** A row to write: its encoded key, whether it is a current version, and its LSN. */
  record Written(Object key, Row row, boolean current, @Nullable String validFromLsn) {}

  private static String addPath(DataFileAction action) {
    try {
      JsonNode add = JSON.readTree(action.actionJson()).get("add");
      return add.get("path").asText();
    } catch (IOException e) {
      throw new UncheckedIOException("Not a Delta add action: " + action.actionJson(), e);
    }
  }
}
