package org.lakecdc.transforms.delta;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.delta.kernel.Snapshot;
import io.delta.kernel.data.Row;
import io.delta.kernel.defaults.engine.fileio.FileIO;
import io.delta.kernel.defaults.internal.json.JsonUtils;
import io.delta.kernel.defaults.internal.parquet.ParquetStatsReader;
import io.delta.kernel.engine.Engine;
import io.delta.kernel.expressions.Column;
import io.delta.kernel.internal.InternalScanFileUtils;
import io.delta.kernel.internal.actions.AddFile;
import io.delta.kernel.internal.actions.DeletionVectorDescriptor;
import io.delta.kernel.internal.actions.Metadata;
import io.delta.kernel.internal.actions.SetTransaction;
import io.delta.kernel.internal.actions.SingleAction;
import io.delta.kernel.internal.data.ScanStateRow;
import io.delta.kernel.internal.deletionvectors.Base85Codec;
import io.delta.kernel.internal.deletionvectors.DeletionVectorStoredBitmap;
import io.delta.kernel.internal.deletionvectors.DeletionVectorUtils;
import io.delta.kernel.internal.deletionvectors.RoaringBitmapArray;
import io.delta.kernel.internal.types.TypeWideningChecker;
import io.delta.kernel.internal.util.SchemaUtils;
import io.delta.kernel.internal.util.VectorUtils;
import io.delta.kernel.statistics.DataFileStatistics;
import io.delta.kernel.types.DataType;
import io.delta.kernel.types.StructType;
import io.delta.kernel.utils.FileStatus;
import java.io.IOException;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.apache.hadoop.shaded.com.google.common.collect.ImmutableMultimap;
import org.apache.hadoop.shaded.com.google.common.collect.Multimap;
import org.apache.parquet.column.ParquetProperties;
import org.apache.parquet.format.converter.ParquetMetadataConverter;
import org.apache.parquet.hadoop.ParquetFileWriter;
import org.apache.parquet.hadoop.metadata.BlockMetaData;
import org.apache.parquet.hadoop.metadata.ColumnChunkMetaData;
import org.apache.parquet.hadoop.metadata.ParquetMetadata;
import org.checkerframework.checker.nullness.qual.Nullable;

/**
 * The only class that uses Delta Kernel's internal packages ({@code io.delta.kernel.internal.*},
 * {@code io.delta.kernel.defaults.internal.*}). Kernel 4.4.0 has no public API for what is here;
 * each method says what it stands in for. Internal classes change between Kernel releases without
 * notice, which is why the Kernel version is pinned exactly in the parent pom: re-run this module's
 * tests (they exercise every method) on any Kernel upgrade.
 *
 * <ul>
 *   <li>Action rows to and from JSON: Kernel's rows are not {@code Serializable}, and data files
 *       are written on workers but committed by one committer (docs/architecture.md "Delta
 *       tables"). Kernel's own {@code JsonUtils} writes the same JSON the Delta log holds.
 *   <li>Remove actions: Kernel has no public API for removing files (delta-io/delta#5421); its
 *       {@code AddFile.toRemoveFileRow} builds the log's {@code remove} action for a scanned file.
 *   <li>Metadata actions: Kernel's public schema evolution ({@code withUpdatedSchema}) requires
 *       column mapping, which Kernel cannot write data to, and no public API sets the table comment
 *       ({@code metaData.description}). A {@code metaData} action built from the current one, with
 *       a new schema, merged configuration and description, is committed as a user action instead:
 *       valid Delta (a later {@code metaData} action replaces the earlier one) and what delta-spark
 *       writes for {@code ALTER TABLE ADD COLUMNS} and {@code COMMENT ON TABLE}.
 *   <li>Schema validation: the checks Kernel runs on a schema at creation (names Delta refuses
 *       without column mapping, duplicates), run on a schema this project changes by hand.
 *   <li>Type widening: which type changes Kernel's type widening covers (its {@code
 *       TypeWideningChecker}, what Kernel checks when it evolves a column-mapped schema itself).
 *   <li>Table id: the {@code metaData.id} that tells one incarnation of a path from another.
 *   <li>Scan files: the file status and physical read schema of a scan file, as Kernel's own
 *       examples read them.
 *   <li>Data file statistics: the {@code stats} of a Parquet data file that {@link
 *       ParquetDataFiles} wrote (Kernel's writer takes no footer metadata, so this project writes
 *       the files itself), read from its footer by Kernel's own {@code ParquetStatsReader}, as
 *       Kernel's writer reads them for its files; its private {@code constructFileStats} builds
 *       them from the footer the writer returned, without reading the file back.
 *   <li>Maintenance (compaction, vacuum): the file of a scan file's deletion vector, a {@code
 *       remove} marked {@code dataChange = false}, and the file of a deletion vector descriptor
 *       read from a log's {@code remove} action.
 *   <li>Deletion vectors: Kernel 4.4 reads them ({@code DeletionVectorUtils}, {@code
 *       DeletionVectorStoredBitmap}) but has no writer and no public API to commit an {@code add}
 *       that carries one. The bitmaps and files are written by {@code
 *       org.lakecdc.transforms.silver.DeletionVectors} from the Delta protocol; here are the
 *       descriptor ({@code DeletionVectorDescriptor}, its Base85 UUID path), loading a scan file's
 *       existing vector (also one delta-spark wrote), and the {@code add} of the same file with a
 *       new vector (silver's MERGE, docs/behaviour.md §10.5).
 *   <li>Clustering columns of a post-commit snapshot: every commit's report reads the clustering
 *       columns of the snapshot it was built on, and a snapshot Kernel builds after a commit knows
 *       none yet: it reads them from all the domain metadata of the log since its checkpoint (the
 *       tables have no version checksums). A commit of ours never changes them, so the post-commit
 *       snapshot takes the ones its read snapshot already knows ({@link #carryClusteringColumns}).
 * </ul>
 */
final class KernelInternals {
  private KernelInternals() {}

  /**
   * {@code SnapshotImpl.lazyClusteringColumns} (Kernel 4.4: a {@code Lazy<Optional<List<Column>>>}
   * set in the constructor and read by {@code getPhysicalClusteringColumns}), or null when this
   * Kernel has no such field: then nothing is carried.
   */
  private static final java.lang.reflect.@Nullable Field CLUSTERING_COLUMNS = clusteringField();

  private static java.lang.reflect.@Nullable Field clusteringField() {
    try {
      java.lang.reflect.Field field =
          io.delta.kernel.internal.SnapshotImpl.class.getDeclaredField("lazyClusteringColumns");
      if (field.getType() != io.delta.kernel.internal.lang.Lazy.class) {
        return null;
      }
      field.setAccessible(true);
      return field;
    } catch (NoSuchFieldException | RuntimeException e) {
      return null;
    }
  }

  /**
   * Gives {@code committed}, the snapshot Kernel built after a commit made on {@code read} (its
   * version + 1), the clustering columns {@code read} already resolved, so that the next commit
   * made on {@code committed} does not replay the log's domain metadata to find them for its commit
   * report ({@code TransactionImpl.getEffectiveClusteringColumns}). Only for commits that set no
   * clustering columns and no {@code delta.clustering} domain (none of this project's does). Does
   * nothing when {@code read} has not resolved them, when the versions do not follow, or when this
   * Kernel's snapshots are not built as in 4.4.
   *
   * @return whether the columns were carried
   */
  static boolean carryClusteringColumns(Snapshot read, Snapshot committed) {
    if (CLUSTERING_COLUMNS == null
        || !(read instanceof io.delta.kernel.internal.SnapshotImpl from)
        || !(committed instanceof io.delta.kernel.internal.SnapshotImpl to)
        || to.getVersion() != from.getVersion() + 1) {
      return false;
    }
    try {
      io.delta.kernel.internal.lang.Lazy<?> known =
          (io.delta.kernel.internal.lang.Lazy<?>) CLUSTERING_COLUMNS.get(from);
      if (known == null || !known.isPresent()) {
        return false;
      }
      Optional<List<Column>> columns = from.getPhysicalClusteringColumns();
      CLUSTERING_COLUMNS.set(to, new io.delta.kernel.internal.lang.Lazy<>(() -> columns));
      return true;
    } catch (IllegalAccessException e) {
      return false;
    }
  }

  /**
   * The latest transaction version of each of {@code appIds} in {@code snapshot}, found in one
   * reverse replay of its log (the commit files newest first, then the checkpoint), as Kernel's
   * {@code Snapshot.getLatestTransactionVersion} finds one app id's: the first {@code txn} action
   * of the app id met going back is its latest. Reading stops once every app id is found; an app id
   * never committed costs the whole log once for all of them, not once each. A snapshot not built
   * as in Kernel 4.4 is asked once per app id through the public API.
   *
   * @return the version of each app id that has one; app ids that never committed are absent
   * @throws java.io.UncheckedIOException when the log cannot be read
   */
  static Map<String, Long> latestTransactionVersions(
      Engine engine, Snapshot snapshot, java.util.Set<String> appIds) {
    Map<String, Long> found = new HashMap<>();
    if (!(snapshot instanceof io.delta.kernel.internal.SnapshotImpl impl)) {
      for (String appId : appIds) {
        snapshot.getLatestTransactionVersion(engine, appId).ifPresent(v -> found.put(appId, v));
      }
      return found;
    }
    try (io.delta.kernel.utils.CloseableIterator<io.delta.kernel.internal.replay.ActionWrapper>
        reverse =
            new io.delta.kernel.internal.replay.ActionsIterator(
                engine,
                impl.getLogSegment().allFilesWithCompactionsReversed(),
                io.delta.kernel.internal.replay.LogReplay.SET_TRANSACTION_READ_SCHEMA,
                Optional.empty())) {
      while (found.size() < appIds.size() && reverse.hasNext()) {
        io.delta.kernel.data.ColumnarBatch batch = reverse.next().getColumnarBatch();
        io.delta.kernel.data.ColumnVector txns = batch.getColumnVector(0);
        for (int i = 0; i < txns.getSize(); i++) {
          if (txns.isNullAt(i)) {
            continue;
          }
          SetTransaction txn = SetTransaction.fromColumnVector(txns, i);
          if (txn != null && appIds.contains(txn.getAppId())) {
            found.putIfAbsent(txn.getAppId(), txn.getVersion());
          }
        }
      }
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(
          "Cannot read the transaction identifiers of " + snapshot.getPath(), e);
    }
    return found;
  }

  /** One action row (schema {@code SingleAction.FULL_SCHEMA}) as one line of Delta log JSON. */
  static String actionToJson(Row action) {
    return JsonUtils.rowToJson(action);
  }

  /**
   * An {@code add} action row read back from {@link #actionToJson}'s JSON.
   *
   * @throws IllegalArgumentException when the JSON is not a single {@code add} action
   */
  static Row addActionFromJson(String json) {
    Row action;
    try {
      action = JsonUtils.rowFromJson(json, SingleAction.FULL_SCHEMA);
    } catch (RuntimeException e) {
      throw new IllegalArgumentException("Not a Delta add action: " + json, e);
    }
    if (action.isNullAt(SingleAction.ADD_FILE_ORDINAL)) {
      throw new IllegalArgumentException("Not a Delta add action: " + json);
    }
    return action;
  }

  /**
   * A {@code txn} action (a transaction identifier) for a commit that carries more identifiers than
   * the one Kernel's {@code withTransactionId} sets: Delta allows one per app id in a commit.
   *
   * @param appId the app id
   * @param version its version
   * @param lastUpdatedMillis the action's {@code lastUpdated}, epoch milliseconds
   */
  static Row txnAction(String appId, long version, long lastUpdatedMillis) {
    return SingleAction.createTxnSingleAction(
        new SetTransaction(appId, version, Optional.of(lastUpdatedMillis)).toRow());
  }

  /** A scan file row (schema {@code InternalScanFileUtils.SCAN_FILE_SCHEMA}) as JSON. */
  static String scanFileToJson(Row scanFile) {
    return JsonUtils.rowToJson(scanFile);
  }

  /** A scan file row read back from {@link #scanFileToJson}'s JSON. */
  static Row scanFileFromJson(String json) {
    return JsonUtils.rowFromJson(json, InternalScanFileUtils.SCAN_FILE_SCHEMA);
  }

  /** The path, size and modification time of the data file of a scan file row. */
  static FileStatus dataFileStatus(Row scanFile) {
    return InternalScanFileUtils.getAddFileStatus(scanFile);
  }

  /** The schema to read a scan's Parquet files with (physical names; none differ here). */
  static StructType physicalReadSchema(Row scanState) {
    return ScanStateRow.getPhysicalDataReadSchema(scanState);
  }

  /**
   * The {@code remove} action of a scan file's data file, marked {@code dataChange = true} (the
   * rows leave the table) with this deletion time.
   */
  static Row removeAction(Row scanFile, long deletionTimestampMillis) {
    AddFile add = new AddFile(scanFile.getStruct(InternalScanFileUtils.ADD_FILE_ORDINAL));
    return SingleAction.createRemoveFileSingleAction(
        add.toRemoveFileRow(true, Optional.of(deletionTimestampMillis)));
  }

  /**
   * The {@code remove} action of a scan file's data file (with its deletion vector, if any) with
   * this deletion time; {@code dataChange = false} for a rewrite that keeps every row (compaction:
   * the rows are in the files the same commit adds).
   */
  static Row removeAction(Row scanFile, long deletionTimestampMillis, boolean dataChange) {
    AddFile add = new AddFile(scanFile.getStruct(InternalScanFileUtils.ADD_FILE_ORDINAL));
    return SingleAction.createRemoveFileSingleAction(
        add.toRemoveFileRow(dataChange, Optional.of(deletionTimestampMillis)));
  }

  /**
   * The absolute path of the file holding a scan file's deletion vector, or null when it has none
   * or holds it inline.
   */
  static @Nullable String deletionVectorFile(Row scanFile, String tableRoot) {
    DeletionVectorDescriptor dv =
        InternalScanFileUtils.getDeletionVectorDescriptorFromRow(scanFile);
    return dv == null || !dv.isOnDisk() ? null : dv.getAbsolutePath(tableRoot);
  }

  /**
   * The absolute path of the file of a deletion vector given by its descriptor's fields (as a log's
   * {@code remove.deletionVector} has them: {@code storageType} {@code u} = a UUID-named file in
   * the table root or a prefix directory, {@code p} = an absolute path, {@code i} = inline), or
   * null for an inline vector.
   */
  static @Nullable String deletionVectorFile(
      String tableRoot, String storageType, String pathOrInlineDv, int sizeInBytes) {
    DeletionVectorDescriptor dv =
        new DeletionVectorDescriptor(
            storageType, pathOrInlineDv, Optional.empty(), sizeInBytes, 0L);
    return dv.isOnDisk() ? dv.getAbsolutePath(tableRoot) : null;
  }

  /** The table comment ({@code metaData.description}) of a snapshot, if set. */
  /**
   * The table's id ({@code metaData.id}, a UUID Delta assigns at creation and keeps for the table's
   * life; delta-spark's {@code DESCRIBE DETAIL} shows it as {@code id}). A table deleted and
   * created again at the same path gets a new id. Kernel 4.4 has no public accessor.
   */
  static String tableId(Snapshot snapshot) {
    return snapshot.getMetadata().getId();
  }

  static Optional<String> description(Snapshot snapshot) {
    return snapshot.getMetadata().getDescription();
  }

  /**
   * A {@code metaData} action equal to the snapshot's but with this schema, these properties merged
   * over its configuration, and this description. The table id, format, partition columns and
   * creation time are kept.
   */
  static Row metadataAction(
      Snapshot snapshot,
      StructType schema,
      Map<String, String> propertiesToMerge,
      Optional<String> description) {
    Metadata current = snapshot.getMetadata();
    Map<String, String> configuration = new HashMap<>(current.getConfiguration());
    configuration.putAll(propertiesToMerge);
    Metadata updated =
        new Metadata(
            current.getId(),
            current.getName(),
            description,
            current.getFormat(),
            schema.toJson(),
            schema,
            current.getPartitionColumns(),
            current.getCreatedTime(),
            VectorUtils.stringStringMapValue(configuration));
    return SingleAction.createMetadataSingleAction(updated.toRow());
  }

  /**
   * Whether Kernel's type widening (table feature {@code typeWidening}) covers changing a column
   * from {@code from} to {@code to}: integer widening, float to double, byte/short/int to double,
   * date to timestamp_ntz, decimal widening, and integers to decimals with at least 10 (byte,
   * short, int) or 20 (long) integer digits. Equal types count as covered.
   */
  static boolean isTypeWideningSupported(DataType from, DataType to) {
    return TypeWideningChecker.isWideningSupported(from, to);
  }

  /**
   * Kernel's creation-time schema checks for a table without column mapping.
   *
   * @throws IllegalArgumentException or a Kernel exception naming the offending column
   */
  static void validateSchema(StructType schema) {
    SchemaUtils.validateSchema(
        schema,
        false /* isColumnMappingEnabled */,
        false /* isColumnDefaultEnabled */,
        false /* isIcebergCompatV3Enabled */);
  }

  /**
   * The statistics Kernel's own Parquet writer records for a data file: row count, and minimum,
   * maximum and null count of each of {@code columns}, read from the file's footer.
   *
   * @param fileIO the file system access
   * @param path the file's resolved path
   * @param size the file's size in bytes
   * @param schema the physical schema the file was written with
   * @param columns the statistics columns (Kernel's {@code DataWriteContext.getStatisticsColumns})
   * @throws IOException when the footer cannot be read
   */
  static DataFileStatistics dataFileStatistics(
      FileIO fileIO, String path, long size, StructType schema, List<Column> columns)
      throws IOException {
    return ParquetStatsReader.readDataFileStatistics(
        fileIO.newInputFile(path, size), schema, columns);
  }

  /**
   * {@code ParquetStatsReader.constructFileStats} (Kernel 4.4: private, static, taking the footer's
   * column chunks by column, the schema, the statistics columns and the row count), or null when
   * this Kernel has no such method: then statistics are read back from the file.
   */
  private static final java.lang.reflect.@Nullable Method CONSTRUCT_FILE_STATS = fileStatsMethod();

  private static java.lang.reflect.@Nullable Method fileStatsMethod() {
    try {
      java.lang.reflect.Method method =
          ParquetStatsReader.class.getDeclaredMethod(
              "constructFileStats", Multimap.class, StructType.class, List.class, long.class);
      if (method.getReturnType() != DataFileStatistics.class) {
        return null;
      }
      method.setAccessible(true);
      return method;
    } catch (NoSuchMethodException | RuntimeException e) {
      return null;
    }
  }

  /**
   * {@link #dataFileStatistics(FileIO, String, long, StructType, List)} from the footer the writer
   * of the file returned after closing it ({@code ParquetWriter.getFooter}), without reading the
   * file back: the footer goes through parquet-java's own conversion to the Thrift footer stored in
   * the file and back ({@code ParquetMetadataConverter}, the statistics truncated and dropped as
   * when written, then read as a reader reads them: the rules for NaN and signed zeros, the size
   * limit of min/max), and Kernel's {@code ParquetStatsReader} builds the statistics from it as it
   * does from a footer it reads. So the {@code stats} are those reading the file back gives.
   *
   * @param written the writer's footer of a file written with parquet-java's default statistics
   *     truncation (none)
   * @param schema the physical schema the file was written with
   * @param columns the statistics columns (Kernel's {@code DataWriteContext.getStatisticsColumns})
   * @return the statistics, or empty when this Kernel does not build them as 4.4 does (the caller
   *     then reads the file back)
   * @throws IOException when the footer cannot be converted
   */
  static Optional<DataFileStatistics> dataFileStatistics(
      ParquetMetadata written, StructType schema, List<Column> columns) throws IOException {
    if (CONSTRUCT_FILE_STATS == null) {
      return Optional.empty();
    }
    ParquetMetadataConverter converter =
        new ParquetMetadataConverter(ParquetProperties.DEFAULT_STATISTICS_TRUNCATE_LENGTH);
    ParquetMetadata footer =
        converter.fromParquetMetadata(
            converter.toParquetMetadata(ParquetFileWriter.CURRENT_VERSION, written));
    ImmutableMultimap.Builder<Column, ColumnChunkMetaData> chunks = ImmutableMultimap.builder();
    long rows = 0;
    for (BlockMetaData block : footer.getBlocks()) {
      rows += block.getRowCount();
      for (ColumnChunkMetaData chunk : block.getColumns()) {
        chunks.put(new Column(chunk.getPath().toArray()), chunk);
      }
    }
    try {
      return Optional.of(
          (DataFileStatistics)
              CONSTRUCT_FILE_STATS.invoke(null, chunks.build(), schema, columns, rows));
    } catch (IllegalAccessException e) {
      return Optional.empty();
    } catch (java.lang.reflect.InvocationTargetException e) {
      if (e.getCause() instanceof RuntimeException r) {
        throw r;
      }
      throw new IOException("Cannot build the statistics of a data file", e.getCause());
    }
  }

  /**
   * What a data file writer's plan depends on in a snapshot ({@code DataFileWriter.Plan}: Kernel's
   * transaction state is made of the table's {@code metaData} and {@code protocol} actions, its
   * path and a retry count): two snapshots of one table whose shapes are equal give the same plan.
   */
  static Object writeShape(Snapshot snapshot) {
    return List.of(snapshot.getMetadata(), snapshot.getProtocol());
  }

  private static final ObjectMapper JSON = new ObjectMapper();

  /** The storage type of a deletion vector in a file named by a UUID ({@code "u"}). */
  static final String UUID_DV_STORAGE = DeletionVectorDescriptor.UUID_DV_MARKER;

  /**
   * The {@code path} of a scan file's {@code add} action, as the log holds it (relative to the
   * table root and URI-encoded for files in the table directory): what a {@code remove} and an
   * {@code add} of the same file refer to it by.
   */
  static String addPath(Row scanFile) {
    return new AddFile(scanFile.getStruct(InternalScanFileUtils.ADD_FILE_ORDINAL)).getPath();
  }

  /**
   * The {@code numRecords} of a scan file's statistics (listed with statistics: {@code
   * getScanFiles(engine, true)}), or empty when the file has none.
   */
  static Optional<Long> numRecords(Row scanFile) {
    return new AddFile(scanFile.getStruct(InternalScanFileUtils.ADD_FILE_ORDINAL)).getNumRecords();
  }

  /**
   * The {@code nullCount} of each top-level column in a scan file's statistics (listed with
   * statistics: {@code getScanFiles(engine, true)}), by column name: nulls among all the rows the
   * data file holds, deleted rows included. Empty when the file has no statistics; a column the
   * statistics do not cover (Kernel collects them for the first {@code
   * delta.dataSkippingNumIndexedCols} leaf columns, 32 by default) is absent.
   */
  static Map<String, Long> nullCounts(Row scanFile) {
    Optional<String> stats =
        new AddFile(scanFile.getStruct(InternalScanFileUtils.ADD_FILE_ORDINAL)).getStatsJson();
    if (stats.isEmpty()) {
      return Map.of();
    }
    JsonNode counts;
    try {
      counts = JSON.readTree(stats.get()).get("nullCount");
    } catch (JsonProcessingException e) {
      // Unreadable statistics tell nothing; the caller treats the counts as unknown.
      return Map.of();
    }
    if (counts == null || !counts.isObject()) {
      return Map.of();
    }
    Map<String, Long> result = new HashMap<>();
    counts
        .fields()
        .forEachRemaining(
            field -> {
              if (field.getValue().isIntegralNumber()) {
                result.put(field.getKey(), field.getValue().asLong());
              }
            });
    return Map.copyOf(result);
  }

  /** The cardinality of a scan file's deletion vector: rows it deletes; 0 without a vector. */
  static long deletionVectorCardinality(Row scanFile) {
    DeletionVectorDescriptor dv =
        InternalScanFileUtils.getDeletionVectorDescriptorFromRow(scanFile);
    return dv == null ? 0 : dv.getCardinality();
  }

  /**
   * The row positions a scan file's deletion vector deletes, ascending; empty when it has none.
   * Inline ({@code "i"}), UUID-named ({@code "u"}) and absolute-path ({@code "p"}) vectors are read
   * by Kernel's own reader (size and CRC checked), whoever wrote them (delta-spark included).
   *
   * @param tableRoot the table's root path as Kernel resolved it ({@code Snapshot.getPath()})
   * @throws IOException when the vector's file cannot be read
   */
  static long[] deletedRowPositions(Engine engine, String tableRoot, Row scanFile)
      throws IOException {
    DeletionVectorDescriptor dv =
        InternalScanFileUtils.getDeletionVectorDescriptorFromRow(scanFile);
    if (dv == null) {
      return new long[0];
    }
    RoaringBitmapArray bitmap;
    try {
      bitmap = DeletionVectorUtils.loadNewDvAndBitmap(engine, tableRoot, dv)._2;
    } catch (RuntimeException e) {
      throw new IOException(
          "Cannot read the deletion vector " + dv + " of " + addPath(scanFile) + ": " + e, e);
    }
    long[] positions = bitmap.toArray();
    Arrays.sort(positions);
    return positions;
  }

  /**
   * The row positions of a deletion vector given by its descriptor fields, read by Kernel's {@code
   * DeletionVectorStoredBitmap} (for tests of the writer: the reader Kernel's scans use).
   *
   * @param storageType {@code "u"}, {@code "i"} or {@code "p"}
   * @param pathOrInlineDv the Base85 UUID (optionally prefixed), inline data or absolute path
   * @param offset the offset of the vector in its file, or null for inline vectors
   */
  static long[] readDeletionVector(
      Engine engine,
      String tableRoot,
      String storageType,
      String pathOrInlineDv,
      @org.checkerframework.checker.nullness.qual.Nullable Integer offset,
      int sizeInBytes,
      long cardinality)
      throws IOException {
    DeletionVectorDescriptor dv =
        new DeletionVectorDescriptor(
            storageType, pathOrInlineDv, Optional.ofNullable(offset), sizeInBytes, cardinality);
    long[] positions =
        new DeletionVectorStoredBitmap(dv, Optional.of(tableRoot))
            .load(engine.getFileSystemClient())
            .toArray();
    Arrays.sort(positions);
    return positions;
  }

  /** A UUID in Delta's Base85 encoding (20 characters): a {@code "u"} vector's {@code path}. */
  static String encodeUuid(UUID id) {
    return Base85Codec.encodeUUID(id);
  }

  /** Bytes in Delta's Base85 encoding: an inline ({@code "i"}) vector's data. */
  static String encodeBase85(byte[] bytes) {
    return Base85Codec.encodeBytes(bytes);
  }

  /**
   * The absolute path of the file of a {@code "u"} deletion vector named by this UUID: {@code
   * <tableRoot>/deletion_vector_<uuid>.bin}, as Kernel resolves it when reading.
   */
  static String deletionVectorFilePath(String tableRoot, UUID id) {
    return new DeletionVectorDescriptor(UUID_DV_STORAGE, encodeUuid(id), Optional.of(1), 0, 1)
        .getAbsolutePath(tableRoot);
  }

  /**
   * The {@code add} action of a scan file's data file with a new deletion vector in place of its
   * old one ({@code "u"} storage: the vector at {@code offset} in the file named by {@code
   * vectorFile}), {@code dataChange = true}, and its statistics kept but marked {@code tightBounds
   * = false} (Delta requires it for a file with a vector: the bounds may be those of deleted rows).
   * Every other field (path, size, modification time, partition values, tags) is the scan file's.
   * The scan file must be listed with statistics ({@code getScanFiles(engine, true)}); a file
   * without statistics gets none.
   */
  static Row addWithDeletionVector(
      Row scanFile, UUID vectorFile, int offset, int sizeInBytes, long cardinality) {
    try {
      ObjectNode scan = (ObjectNode) JSON.readTree(JsonUtils.rowToJson(scanFile));
      ObjectNode add = (ObjectNode) scan.get("add").deepCopy();
      ObjectNode dv = JSON.createObjectNode();
      dv.put("storageType", UUID_DV_STORAGE);
      dv.put("pathOrInlineDv", encodeUuid(vectorFile));
      dv.put("offset", offset);
      dv.put("sizeInBytes", sizeInBytes);
      dv.put("cardinality", cardinality);
      add.set("deletionVector", dv);
      add.put("dataChange", true);
      if (add.hasNonNull("stats")) {
        ObjectNode stats = (ObjectNode) JSON.readTree(add.get("stats").asText());
        stats.put("tightBounds", false);
        add.put("stats", JSON.writeValueAsString(stats));
      }
      ObjectNode action = JSON.createObjectNode();
      action.set("add", add);
      return addActionFromJson(JSON.writeValueAsString(action));
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("Cannot rebuild the add action of " + addPath(scanFile), e);
    }
  }
}
