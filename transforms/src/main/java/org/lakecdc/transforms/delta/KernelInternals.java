package org.lakecdc.transforms.delta;

import io.delta.kernel.Scan;
import io.delta.kernel.Snapshot;
import io.delta.kernel.data.FilteredColumnarBatch;
import io.delta.kernel.data.Row;
import io.delta.kernel.defaults.engine.fileio.FileIO;
import io.delta.kernel.defaults.internal.json.JsonUtils;
import io.delta.kernel.defaults.internal.parquet.ParquetStatsReader;
import io.delta.kernel.engine.Engine;
import io.delta.kernel.expressions.Column;
import io.delta.kernel.internal.InternalScanFileUtils;
import io.delta.kernel.internal.ScanImpl;
import io.delta.kernel.internal.actions.AddFile;
import io.delta.kernel.internal.actions.DeletionVectorDescriptor;
import io.delta.kernel.internal.actions.Metadata;
import io.delta.kernel.internal.actions.SingleAction;
import io.delta.kernel.internal.data.ScanStateRow;
import io.delta.kernel.internal.types.TypeWideningChecker;
import io.delta.kernel.internal.util.SchemaUtils;
import io.delta.kernel.internal.util.VectorUtils;
import io.delta.kernel.statistics.DataFileStatistics;
import io.delta.kernel.types.DataType;
import io.delta.kernel.types.StructType;
import io.delta.kernel.utils.CloseableIterator;
import io.delta.kernel.utils.FileStatus;
import java.io.IOException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
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
 *       Kernel's writer reads them for its files.
 *   <li>Maintenance (compaction, vacuum): a scan's files with their statistics (Kernel's public
 *       {@code getScanFiles} omits them), a file's row count and deletion vector (cardinality, file
 *       path), a {@code remove} marked {@code dataChange = false}, and the file of a deletion
 *       vector descriptor read from a log's {@code remove} action.
 * </ul>
 */
final class KernelInternals {
  private KernelInternals() {}

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
   * A scan's files with each {@code add}'s {@code stats} (the row count among them), which Kernel's
   * public {@code Scan.getScanFiles} leaves out unless a data skipping filter needs them.
   */
  static CloseableIterator<FilteredColumnarBatch> scanFilesWithStats(Scan scan, Engine engine) {
    return ((ScanImpl) scan).getScanFiles(engine, true /* includeStats */);
  }

  /** The row count ({@code stats.numRecords}) of a scan file's data file, or -1 when unknown. */
  static long numRecords(Row scanFile) {
    Row add = scanFile.getStruct(InternalScanFileUtils.ADD_FILE_ORDINAL);
    if (add.getSchema().indexOf("stats") < 0) {
      return -1;
    }
    return new AddFile(add).getNumRecords().orElse(-1L);
  }

  /** The rows a scan file's deletion vector deletes (its cardinality), 0 without one. */
  static long deletedRows(Row scanFile) {
    DeletionVectorDescriptor dv =
        InternalScanFileUtils.getDeletionVectorDescriptorFromRow(scanFile);
    return dv == null ? 0 : dv.getCardinality();
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
}
