package org.lakecdc.transforms.silver;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.transforms.delta.CommitResult;
import org.lakecdc.transforms.delta.DataFileAction;
import org.lakecdc.transforms.delta.DeltaTables;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where the live keys of tables kept in waves with deletion vectors are (silver's current images, a
 * history's current versions), and the commit of a wave: one {@link KeyIndex} per table path (key
 * to data file, row position and LSN), stamped with the table version it describes. It is a cache:
 * used when the table is at that version, followed after this instance's own commits ({@link
 * #follow}), and rebuilt by one scan of the key columns and the LSN when the table is at any other
 * version. Above {@code maxIndexKeys} keys no index is kept and every wave scans, holding only the
 * wave's keys, so memory stays bounded by the cap whatever the table's size.
 *
 * <p>Thread-safe per path as its callers use it: one wave at a time per path.
 */
public final class KeyLocator {
  private static final Logger LOG = LoggerFactory.getLogger(KeyLocator.class);
  private static final ObjectMapper JSON = new ObjectMapper();

  private final DeltaTables tables;
  private final int maxIndexKeys;
  private final String what;
  private final Map<String, KeyIndex> indexes = new ConcurrentHashMap<>();
  private final AtomicLong scans = new AtomicLong();

  /**
   * @param tables the Delta access
   * @param maxIndexKeys the most keys an index per path holds (0: never index)
   * @param what the tables' kind for logs and messages ({@code Silver}, {@code History})
   * @throws IllegalArgumentException when the cap is negative
   */
  public KeyLocator(DeltaTables tables, int maxIndexKeys, String what) {
    this.tables = Objects.requireNonNull(tables, "tables");
    if (maxIndexKeys < 0) {
      throw new IllegalArgumentException(
          "maxIndexKeys must be at least 0 (0 = no key index), was " + maxIndexKeys);
    }
    this.maxIndexKeys = maxIndexKeys;
    this.what = what;
  }

  /** Forgets the index of a path (after a commit it cannot follow, or a failure). */
  public void forget(String path) {
    indexes.remove(path);
  }

  /** The index kept for a path, or null. */
  public @Nullable KeyIndex kept(String path) {
    return indexes.get(path);
  }

  /** How many scans found a wave's keys (the index was stale, absent or above the cap). */
  public long scans() {
    return scans.get();
  }

  /**
   * Finds the live rows of the wave's keys at {@code version}: from the kept index when it
   * describes that version of this table, else by one scan of {@code scanColumns} that also
   * rebuilds the index (when the table is within the cap).
   *
   * @param scanColumns the key columns, then the LSN column, then any columns {@code live} reads
   * @param keyCount how many of {@code scanColumns} are key columns
   * @param live which scanned rows are indexed (e.g. only current versions), given the scanned
   *     values
   * @param waveKeys the encoded keys ({@link KeyIndex#key}) sought
   * @param found receives each wave key's location
   * @return the index whose file numbers the locations use: the kept index, or one holding only the
   *     wave's keys when the table is above the cap
   */
  public KeyIndex locate(
      String path,
      long version,
      List<String> scanColumns,
      int keyCount,
      Predicate<Object[]> live,
      Set<Object> waveKeys,
      Map<Object, KeyIndex.Location> found) {
    String tableId = tables.tableId(path);
    KeyIndex kept = indexes.get(path);
    if (kept == null || kept.version() != version || !kept.tableId().equals(tableId)) {
      indexes.remove(path);
      kept = scan(path, version, tableId, scanColumns, keyCount, live, waveKeys);
    }
    for (Object key : waveKeys) {
      KeyIndex.Location location = kept.get(key);
      if (location != null) {
        found.put(key, location);
      }
    }
    return kept;
  }

  private KeyIndex scan(
      String path,
      long version,
      String tableId,
      List<String> scanColumns,
      int keyCount,
      Predicate<Object[]> live,
      Set<Object> waveKeys) {
    scans.incrementAndGet();
    KeyIndex[] building = {maxIndexKeys > 0 ? new KeyIndex(tableId, version) : null};
    KeyIndex waveOnly = new KeyIndex(tableId, version);
    long rows =
        tables
            .deletionVectors()
            .scanLiveRows(
                path,
                version,
                scanColumns,
                (file, position, values) -> {
                  if (!live.test(values)) {
                    return;
                  }
                  Object key = KeyIndex.key(values, keyCount);
                  String lsn = (String) values[keyCount];
                  KeyIndex index = building[0];
                  if (index != null) {
                    index.put(key, file, position, lsn);
                    if (index.size() > maxIndexKeys) {
                      for (Object waveKey : waveKeys) {
                        KeyIndex.Location location = index.get(waveKey);
                        if (location != null) {
                          waveOnly.put(
                              waveKey,
                              index.file(location.file()),
                              location.position(),
                              location.startLsn());
                        }
                      }
                      building[0] = null;
                    }
                  } else if (waveKeys.contains(key)) {
                    waveOnly.put(key, file, position, lsn);
                  }
                });
    if (building[0] != null) {
      indexes.put(path, building[0]);
    }
    LOG.debug(
        "{} {}: scanned {} live rows at version {}; key index {}",
        what,
        path,
        rows,
        version,
        building[0] != null ? "rebuilt" : "not kept (above " + maxIndexKeys + " keys)");
    return building[0] != null ? building[0] : waveOnly;
  }

  /**
   * A row a wave wrote: its encoded key and LSN, or a null LSN when it is not live (not indexed).
   */
  public record Written(Object key, @Nullable String lsn) {}

  /**
   * Brings the kept index to the version this instance's commit created: the removed keys leave,
   * the written live rows point into the new files (written in this order); the index is dropped
   * instead when anything is unknown (a file without a row count) or it passes the cap. Nothing
   * happens when {@code used} is not the kept index (a wave-only index).
   *
   * @param result the wave's commit; an index not committed on is dropped
   * @param readVersion the version the wave read
   */
  public void follow(
      String path,
      KeyIndex used,
      long readVersion,
      CommitResult result,
      Collection<Object> removedKeys,
      List<Written> written,
      List<DataFileAction> added) {
    if (indexes.get(path) != used) {
      return;
    }
    if (!result.committed() || used.version() != readVersion) {
      indexes.remove(path);
      return;
    }
    for (Object key : removedKeys) {
      used.remove(key);
    }
    int next = 0;
    for (DataFileAction action : added) {
      if (action.rowCount() < 0 || next + action.rowCount() > written.size()) {
        indexes.remove(path);
        return;
      }
      String file = addPath(action);
      for (long position = 0; position < action.rowCount(); position++) {
        Written row = written.get(next++);
        if (row.lsn() != null) {
          used.put(row.key(), file, position, row.lsn());
        }
      }
    }
    if (next != written.size() || used.size() > maxIndexKeys) {
      indexes.remove(path);
      return;
    }
    used.setVersion(result.version());
  }

  /**
   * A wave's commit and how many data files its deletion vectors touched.
   *
   * @param result the commit's outcome
   * @param filesTouched the data files that got a new deletion vector
   */
  public record Committed(CommitResult result, int filesTouched) {}

  /**
   * One commit on exactly {@code version}: the rows at these positions deleted (their files'
   * deletion vectors merged with the ones they have, all in one new vector file), these files
   * added, the transaction {@code (appId, txnVersion)} and the domain metadata, with {@code
   * beforeCommit} run just before the commit (tests). The path's index is forgotten when the commit
   * throws.
   *
   * @param deletions data file (as the log names it) to the row positions to delete
   * @throws org.lakecdc.transforms.delta.DeltaConflictException when another commit landed after
   *     {@code version}: nothing of the wave is visible
   */
  public Committed commit(
      String path,
      long version,
      Map<String, List<Long>> deletions,
      List<DataFileAction> added,
      String appId,
      long txnVersion,
      Map<String, String> domainMetadata,
      Runnable beforeCommit) {
    DeletionVectors.Vectors vectors =
        DeletionVectors.merged(
            deletions.isEmpty()
                ? Map.of()
                : tables.deletionVectors().deletedRowPositions(path, version, deletions.keySet()),
            deletions);
    try {
      CommitResult result =
          tables
              .deletionVectors()
              .commitDeletionVectors(
                  path,
                  version,
                  vectors.file(),
                  vectors.updates(),
                  added,
                  appId,
                  txnVersion,
                  domainMetadata,
                  beforeCommit);
      return new Committed(result, vectors.updates().size());
    } catch (RuntimeException e) {
      indexes.remove(path);
      throw e;
    }
  }

  /** The {@code add.path} of a written file's action, as the log will hold it. */
  static String addPath(DataFileAction action) {
    try {
      JsonNode add = JSON.readTree(action.actionJson()).get("add");
      return add.get("path").asText();
    } catch (IOException e) {
      throw new UncheckedIOException("Not a Delta add action: " + action.actionJson(), e);
    }
  }
}
