package org.lakecdc.transforms.silver;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.beam.sdk.schemas.Schema;
import org.apache.beam.sdk.values.Row;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.transforms.delta.CommitResult;
import org.lakecdc.transforms.delta.DataFileAction;
import org.lakecdc.transforms.delta.DataFileRows;
import org.lakecdc.transforms.delta.DeltaColumn;
import org.lakecdc.transforms.delta.DeltaTables;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The MERGE engine of silver: merge-on-read with Delta deletion vectors (docs/behaviour.md §10.5).
 *
 * <p>A wave ({@link #merge}) is one Delta commit: for each image whose key silver holds with an
 * older {@code _start_lsn}, the old row's position is ORed into its file's deletion vector (all the
 * wave's vectors in one new {@code deletion_vector_<uuid>.bin}); each touched file's {@code add} is
 * replaced by a {@code remove} of it and an {@code add} of the same path with the new vector; the
 * new images go to one new Parquet file sorted by key. The cost grows with the changed keys, not
 * the table.
 *
 * <p>Where each key is: a key index (key to file, row position, {@code _start_lsn}) kept per silver
 * path, stamped with the table version it describes. It is only a cache: used when the table is at
 * that version, updated incrementally after this instance's own commit, and rebuilt by one scan of
 * the key columns and {@code _start_lsn} of every file (honouring existing deletion vectors,
 * including ones delta-spark wrote) when the table is at any other version. Above {@code
 * maxIndexKeys} keys no index is kept and every wave scans (holding only the wave's keys), so
 * memory stays bounded by the cap: a single integer key with canonical LSNs costs about 35 to 50
 * bytes per key, other keys about 100 bytes plus the key objects.
 *
 * <p>Thread-safe: calls on the same silver path are serialized by this instance; silver has one
 * committer at a time (another committer's commit makes this one fail with {@link
 * org.lakecdc.transforms.delta.DeltaConflictException}, never a wrong table).
 */
public final class SilverMerge {
  /**
   * The default cap of the key index per silver table: a table with more keys is not indexed (every
   * wave scans). At the cap an index of integer keys takes about 350 to 500 MB, one of string or
   * composite keys about 1 GB plus the keys themselves (see {@code KeyIndex}).
   */
  public static final int DEFAULT_MAX_INDEX_KEYS = 10_000_000;

  private static final Logger LOG = LoggerFactory.getLogger(SilverMerge.class);

  private final DeltaTables tables;

  /** The key index per silver path (absent: none, or the table is above the cap). */
  private final KeyLocator locator;

  /** The lock of each silver path: one merge at a time per path and instance. */
  private final Map<String, Object> locks = new ConcurrentHashMap<>();

  /**
   * Runs after a wave read the table and wrote its files (new Parquet files and the deletion vector
   * file), just before its commit (tests).
   */
  private volatile Runnable beforeCommit = () -> {};

  /**
   * An engine with the default key index cap ({@value #DEFAULT_MAX_INDEX_KEYS} keys per path).
   *
   * @param tables the Delta tables
   */
  public SilverMerge(DeltaTables tables) {
    this(tables, DEFAULT_MAX_INDEX_KEYS);
  }

  /**
   * An engine whose key index holds at most {@code maxIndexKeys} keys per silver path; a larger
   * table is not indexed and every wave scans its key columns (0: never index).
   *
   * @param tables the Delta tables
   * @param maxIndexKeys the cap, at least 0
   * @throws IllegalArgumentException when the cap is negative
   */
  public SilverMerge(DeltaTables tables, int maxIndexKeys) {
    this.tables = Objects.requireNonNull(tables, "tables");
    this.locator = new KeyLocator(tables, maxIndexKeys, "Silver");
  }

  /**
   * Merges one wave of latest images into silver, in one commit tagged {@code (appId, txnVersion)}
   * with {@code withMaxRetries(0)} and these domain metadata.
   *
   * <p>At most one image per key; keys compare null-safe (a NULL key value is one key, equal to
   * itself). For each image: when silver holds the key with a strictly older {@code _start_lsn},
   * the old row is deleted (deletion vector) and, for an upsert, the image inserted; when silver
   * holds it with an equal or newer {@code _start_lsn}, nothing happens (a replay, or a stale
   * image); when silver lacks the key, an upsert is inserted and a delete ignored. The inserted
   * images go to one new Parquet file (more when it passes the writer's file size) sorted by key.
   *
   * <p>When the wave changes nothing and every domain's configuration already equals the table's,
   * nothing is committed ({@link
   * org.lakecdc.transforms.delta.CommitResult.Status#ALREADY_COMMITTED} with the latest version);
   * otherwise a wave that changes nothing commits only its transaction and domain metadata.
   *
   * @param silverPath silver's path or URI; the table must exist ({@link SilverTable#definition})
   * @param keys the key columns (silver column names, matched ignoring case), at least one
   * @param wave the images; may be empty
   * @param appId the transaction app id (silver's is {@code lakecdc-silver})
   * @param txnVersion the transaction version (the wave sequence number), increasing per app id
   * @param domainMetadata domain name to configuration, committed atomically with the wave
   * @return what the wave did
   * @throws IllegalArgumentException when two images have the same key, a key is not a column of
   *     silver or an image lacks a key field or {@code _start_lsn}
   * @throws IllegalStateException when no table exists at the path
   * @throws org.lakecdc.transforms.delta.DeltaConflictException when another commit landed after
   *     the version this wave read: nothing of the wave is visible; re-read and retry
   */
  public WaveResult merge(
      String silverPath,
      List<String> keys,
      Collection<SilverImage> wave,
      String appId,
      long txnVersion,
      Map<String, String> domainMetadata) {
    Objects.requireNonNull(silverPath, "silverPath");
    Objects.requireNonNull(wave, "wave");
    Objects.requireNonNull(domainMetadata, "domainMetadata");
    synchronized (lock(silverPath)) {
      return mergeLocked(silverPath, keys, wave, appId, txnVersion, domainMetadata);
    }
  }

  /**
   * Rebuilds silver: removes every data file and writes these rows, in one commit tagged {@code
   * (appId, txnVersion)} with {@code withMaxRetries(0)} and these domain metadata. Rows are
   * streamed into files as they come (never held in memory; files cut at the writer's file size),
   * so they are not sorted across files.
   *
   * @param silverPath silver's path or URI; the table must exist
   * @param keys the key columns; the rows must hold one row per key (not checked: checking would
   *     hold every key in memory)
   * @param rows the new content, full silver rows (upserts)
   * @param appId the transaction app id
   * @param txnVersion the transaction version
   * @param domainMetadata domain name to configuration
   * @return {@code inserted} = rows written, {@code deleted} = rows the table held before, {@code
   *     filesTouched} = files removed
   * @throws IllegalStateException when no table exists at the path
   * @throws org.lakecdc.transforms.delta.DeltaConflictException when another commit landed first
   */
  public WaveResult replaceAll(
      String silverPath,
      List<String> keys,
      Iterator<Row> rows,
      String appId,
      long txnVersion,
      Map<String, String> domainMetadata) {
    Objects.requireNonNull(silverPath, "silverPath");
    Objects.requireNonNull(rows, "rows");
    Objects.requireNonNull(domainMetadata, "domainMetadata");
    synchronized (lock(silverPath)) {
      long version = tables.version(silverPath);
      Optional<WaveResult> replay = alreadyCommitted(silverPath, appId, txnVersion, version);
      if (replay.isPresent()) {
        return replay.get();
      }
      Columns columns = columns(silverPath, keys);
      List<DataFileRows> files = tables.deletionVectors().dataFileRows(silverPath, version);
      long before = 0;
      for (DataFileRows file : files) {
        if (file.numRecords() < 0) {
          // A file without statistics (not written here): count the live rows instead.
          before =
              tables
                  .deletionVectors()
                  .scanLiveRows(silverPath, version, List.of(columns.startLsn), (f, p, v) -> {});
          break;
        }
        before += file.numRecords() - file.deletedRows();
      }
      int filesBefore = files.size();
      PeekingRows peeking = new PeekingRows(rows);
      Schema rowSchema = peeking.schema().orElse(columns.tableSchema);
      locator.forget(silverPath);
      CommitResult result =
          tables.rewrite(
              silverPath, version, rowSchema, peeking, appId, txnVersion, domainMetadata);
      if (!result.committed()) {
        return new WaveResult(result.status(), result.version(), 0, 0, 0, 0);
      }
      LOG.debug(
          "Silver {}: replaced {} rows in {} files by {} rows (version {})",
          silverPath,
          before,
          filesBefore,
          peeking.count,
          result.version());
      return new WaveResult(
          CommitResult.Status.COMMITTED,
          result.version(),
          peeking.count,
          0,
          before,
          result.filesRemoved());
    }
  }

  // ------------------------------------------------------------------------------------------
  // The wave
  // ------------------------------------------------------------------------------------------

  private WaveResult mergeLocked(
      String silverPath,
      List<String> keys,
      Collection<SilverImage> wave,
      String appId,
      long txnVersion,
      Map<String, String> domainMetadata) {
    long tStart = System.nanoTime();
    long version = tables.version(silverPath);
    Optional<WaveResult> replay = alreadyCommitted(silverPath, appId, txnVersion, version);
    if (replay.isPresent()) {
      return replay.get();
    }
    Columns columns = columns(silverPath, keys);

    // The wave's images by key; at most one per key.
    Map<Object, SilverImage> images = new LinkedHashMap<>();
    Schema imageSchema = null;
    for (SilverImage image : wave) {
      Row row = image.row();
      if (imageSchema == null) {
        imageSchema = row.getSchema();
      } else if (!imageSchema.equals(row.getSchema())) {
        throw new IllegalArgumentException(
            "Silver "
                + silverPath
                + ": the images of a wave must share one schema; "
                + imageSchema
                + " vs "
                + row.getSchema());
      }
      Object key = columns.key(row);
      if (columns.startLsn(row) == null) {
        throw new IllegalArgumentException(
            "Silver " + silverPath + ": an image has no " + SilverTable.START_LSN + ": " + row);
      }
      if (images.put(key, image) != null) {
        throw new IllegalArgumentException(
            "Silver "
                + silverPath
                + ": two images of one wave have the same key "
                + columns.keyText(row)
                + " (one image per key)");
      }
    }

    Map<Object, KeyIndex.Location> found = new HashMap<>();
    long tImages = System.nanoTime();
    KeyIndex index =
        locator.locate(
            silverPath,
            version,
            columns.scanColumns(),
            columns.keys.size(),
            values -> true,
            images.keySet(),
            found);

    // Decide per image.
    Map<String, List<Long>> deletions = new TreeMap<>();
    List<Map.Entry<Object, Row>> inserts = new ArrayList<>();
    Set<Object> removedKeys = new HashSet<>();
    long inserted = 0;
    long updated = 0;
    long deleted = 0;
    long current = 0;
    long absent = 0;
    for (Map.Entry<Object, SilverImage> entry : images.entrySet()) {
      SilverImage image = entry.getValue();
      String imageLsn = columns.startLsn(image.row());
      KeyIndex.Location location = found.get(entry.getKey());
      if (location != null) {
        if (location.startLsn().compareTo(imageLsn) >= 0) {
          current++;
          continue; // a replay or a stale image: silver already holds this image or a newer one
        }
        String file = index.file(location.file());
        deletions.computeIfAbsent(file, f -> new ArrayList<>()).add(location.position());
        removedKeys.add(entry.getKey());
        if (image.delete()) {
          deleted++;
        } else {
          updated++;
          inserts.add(Map.entry(entry.getKey(), image.row()));
        }
      } else if (!image.delete()) {
        inserted++;
        inserts.add(Map.entry(entry.getKey(), image.row()));
      } else {
        absent++;
      }
    }

    if (deletions.isEmpty() && inserts.isEmpty() && domainsEqual(silverPath, domainMetadata)) {
      return new WaveResult(CommitResult.Status.ALREADY_COMMITTED, version, 0, 0, 0, 0);
    }

    // The new images, sorted by key, into new data files.
    inserts.sort(Map.Entry.comparingByKey(KeyIndex.ORDER));
    long tLocate = System.nanoTime();
    List<DataFileAction> added =
        inserts.isEmpty()
            ? List.of()
            : tables.writeDataFiles(
                silverPath,
                imageSchema,
                () -> inserts.stream().map(Map.Entry::getValue).iterator());

    // The touched files' new vectors, in one vector file, and the commit.
    long tWrite = System.nanoTime();
    KeyLocator.Committed committed =
        locator.commit(
            silverPath, version, deletions, added, appId, txnVersion, domainMetadata, beforeCommit);
    CommitResult result = committed.result();
    if (!result.committed()) {
      return new WaveResult(result.status(), result.version(), 0, 0, 0, 0);
    }
    long tCommit = System.nanoTime();
    List<KeyLocator.Written> written = new ArrayList<>();
    for (Map.Entry<Object, Row> insert : inserts) {
      written.add(new KeyLocator.Written(insert.getKey(), columns.startLsn(insert.getValue())));
    }
    locator.follow(silverPath, index, version, result, removedKeys, written, added);
    LOG.debug(
        "Silver {}: wave {} inserted {}, updated {}, deleted {} keys; {} files touched (version {});"
            + " ms: prepare {}, locate {}, write {}, commit {}",
        silverPath,
        txnVersion,
        inserted,
        updated,
        deleted,
        committed.filesTouched(),
        result.version(),
        (tImages - tStart) / 1_000_000,
        (tLocate - tImages) / 1_000_000,
        (tWrite - tLocate) / 1_000_000,
        (tCommit - tWrite) / 1_000_000);
    return new WaveResult(
        CommitResult.Status.COMMITTED,
        result.version(),
        inserted,
        updated,
        deleted,
        committed.filesTouched(),
        current,
        absent);
  }

  // ------------------------------------------------------------------------------------------
  // Helpers
  // ------------------------------------------------------------------------------------------

  /**
   * How many times this instance scanned a silver table's key columns to find a wave's keys (the
   * key index was stale, absent or above the cap): for tests and benchmarks.
   *
   * @return the count since the instance was created
   */
  public long keyScans() {
    return locator.scans();
  }

  /**
   * The number of keys the key index holds for a silver path, or -1 when it has none.
   *
   * @param silverPath silver's path as given to {@link #merge}
   * @return the key count or -1
   */
  public long indexedKeys(String silverPath) {
    KeyIndex index = locator.kept(silverPath);
    return index == null ? -1 : index.size();
  }

  /**
   * Sets the hook run just before a wave's commit, after its files are written (tests: a concurrent
   * commit lands there, or a crash).
   */
  void beforeCommit(Runnable hook) {
    this.beforeCommit = Objects.requireNonNull(hook, "hook");
  }

  private Object lock(String silverPath) {
    return locks.computeIfAbsent(silverPath, p -> new Object());
  }

  /** A replay's result when {@code (appId, txnVersion)} is already in the table. */
  private Optional<WaveResult> alreadyCommitted(
      String silverPath, @Nullable String appId, long txnVersion, long version) {
    if (appId == null) {
      return Optional.empty();
    }
    java.util.OptionalLong committed = tables.latestTransactionVersion(silverPath, appId);
    if (committed.isPresent() && committed.getAsLong() >= txnVersion) {
      LOG.info(
          "Silver {}: transaction (appId {}, version {}) is already committed; skipped",
          silverPath,
          appId,
          txnVersion);
      return Optional.of(
          new WaveResult(CommitResult.Status.ALREADY_COMMITTED, version, 0, 0, 0, 0));
    }
    return Optional.empty();
  }

  private boolean domainsEqual(String silverPath, Map<String, String> domainMetadata) {
    for (Map.Entry<String, String> domain : domainMetadata.entrySet()) {
      if (!tables
          .domainMetadata(silverPath, domain.getKey())
          .equals(Optional.of(domain.getValue()))) {
        return false;
      }
    }
    return true;
  }

  private Columns columns(String silverPath, List<String> keys) {
    return new Columns(
        silverPath, DeltaColumn.toBeamSchema(tables.describe(silverPath).columns()), keys);
  }

  /** Silver's columns, its key columns (table spelling) and how to read them from rows. */
  private static final class Columns {
    private final String silverPath;
    final Schema tableSchema;
    final List<String> keys;
    final String startLsn;
    private final Map<Schema, int[]> ordinals = new HashMap<>();

    Columns(String silverPath, Schema tableSchema, List<String> keys) {
      this.silverPath = silverPath;
      this.tableSchema = tableSchema;
      if (keys == null || keys.isEmpty()) {
        throw new IllegalArgumentException(
            "Silver " + silverPath + ": keys must name at least one column");
      }
      List<String> resolved = new ArrayList<>();
      Set<String> seen = new HashSet<>();
      for (String key : keys) {
        String name = tableName(key);
        if (name == null) {
          throw new IllegalArgumentException(
              "Silver "
                  + silverPath
                  + " has no key column '"
                  + key
                  + "'; its columns are "
                  + tableSchema.getFieldNames());
        }
        if (!seen.add(name.toLowerCase(Locale.ROOT))) {
          throw new IllegalArgumentException(
              "Silver " + silverPath + ": key column '" + key + "' is given twice");
        }
        resolved.add(name);
      }
      this.keys = List.copyOf(resolved);
      String lsn = tableName(SilverTable.START_LSN);
      if (lsn == null) {
        throw new IllegalArgumentException(
            "Silver " + silverPath + " has no column " + SilverTable.START_LSN);
      }
      this.startLsn = lsn;
    }

    private @Nullable String tableName(String name) {
      for (String field : tableSchema.getFieldNames()) {
        if (field.equalsIgnoreCase(name)) {
          return field;
        }
      }
      return null;
    }

    /** The key columns, then {@code _start_lsn}. */
    List<String> scanColumns() {
      List<String> columns = new ArrayList<>(keys);
      columns.add(startLsn);
      return columns;
    }

    /** Ordinals in a row schema of the key fields, then {@code _start_lsn}. */
    private int[] ordinals(Schema schema) {
      return ordinals.computeIfAbsent(
          schema,
          s -> {
            List<String> names = scanColumns();
            int[] result = new int[names.size()];
            for (int i = 0; i < names.size(); i++) {
              result[i] = -1;
              for (int f = 0; f < s.getFieldCount(); f++) {
                if (s.getField(f).getName().equalsIgnoreCase(names.get(i))) {
                  result[i] = f;
                }
              }
              if (result[i] < 0) {
                throw new IllegalArgumentException(
                    "Silver "
                        + silverPath
                        + ": an image lacks the field '"
                        + names.get(i)
                        + "'; image fields are "
                        + s.getFieldNames());
              }
            }
            return result;
          });
    }

    Object key(Row row) {
      int[] ordinals = ordinals(row.getSchema());
      Object[] values = new Object[keys.size()];
      for (int i = 0; i < values.length; i++) {
        values[i] = row.getValue(ordinals[i]);
      }
      return KeyIndex.key(values, values.length);
    }

    String keyText(Row row) {
      int[] ordinals = ordinals(row.getSchema());
      Map<String, Object> values = new LinkedHashMap<>();
      for (int i = 0; i < keys.size(); i++) {
        values.put(keys.get(i), row.getValue(ordinals[i]));
      }
      return values.toString();
    }

    @Nullable String startLsn(Row row) {
      return row.getValue(ordinals(row.getSchema())[keys.size()]);
    }
  }

  /** The rows of a rebuild, read once, counted; the first one is peeked for its schema. */
  private static final class PeekingRows implements Iterable<Row> {
    private final Iterator<Row> rows;
    private @Nullable Row first;
    private boolean used;
    long count;

    PeekingRows(Iterator<Row> rows) {
      this.rows = rows;
      this.first = rows.hasNext() ? rows.next() : null;
    }

    Optional<Schema> schema() {
      return first == null ? Optional.empty() : Optional.of(first.getSchema());
    }

    @Override
    public Iterator<Row> iterator() {
      if (used) {
        throw new IllegalStateException("The rows of a silver rebuild can be read once");
      }
      used = true;
      return new Iterator<>() {
        @Override
        public boolean hasNext() {
          return first != null || rows.hasNext();
        }

        @Override
        public Row next() {
          Row row;
          if (first != null) {
            row = first;
            first = null;
          } else {
            row = rows.next();
          }
          count++;
          return row;
        }
      };
    }
  }
}
