package org.lakecdc.transforms.silver;

import java.util.Collection;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.apache.beam.sdk.values.Row;
import org.lakecdc.transforms.delta.DeltaTables;

/**
 * The MERGE engine of silver: merge-on-read with Delta deletion vectors (DESIGN.md §6b).
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
 * maxIndexKeys} keys no index is kept and every wave scans.
 *
 * <p>Thread-safe: calls on the same silver path are serialized by this instance; silver has one
 * committer at a time (another committer's commit makes this one fail with {@link
 * org.lakecdc.transforms.delta.DeltaConflictException}, never a wrong table).
 */
public final class SilverMerge {
  /** The default cap of the key index: keys above it are not indexed (every wave scans). */
  public static final int DEFAULT_MAX_INDEX_KEYS = 20_000_000;

  private final DeltaTables tables;
  private final int maxIndexKeys;

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
    if (maxIndexKeys < 0) {
      throw new IllegalArgumentException(
          "maxIndexKeys must be at least 0 (0 = no key index), was " + maxIndexKeys);
    }
    this.maxIndexKeys = maxIndexKeys;
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
    throw new UnsupportedOperationException("SilverMerge.merge: being implemented (H1)");
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
    throw new UnsupportedOperationException("SilverMerge.replaceAll: being implemented (H1)");
  }
}
