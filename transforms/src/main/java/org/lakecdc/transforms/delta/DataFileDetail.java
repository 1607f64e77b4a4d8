package org.lakecdc.transforms.delta;

import java.util.Map;
import java.util.Objects;
import org.checkerframework.checker.nullness.qual.Nullable;

/**
 * One data file of a table version with what maintenance decides on (the tables' {@code
 * dataFileDetails}): its size, row count, deletion vector and null counts.
 *
 * @param scanFile the file as the tables' {@code scanFiles} lists it (to read it with their {@code
 *     readScanFile}, or remove it with their {@code rearrangeFiles})
 * @param path the data file's absolute URI, e.g. {@code file:/data/silver/orders/<uuid>.parquet}
 * @param sizeBytes the data file's size in bytes
 * @param modificationTimeMillis the data file's {@code add.modificationTime}, milliseconds since
 *     the epoch (UTC)
 * @param numRecords the rows the data file holds ({@code stats.numRecords}, deleted rows included),
 *     or -1 when its {@code add} has no statistics
 * @param deletedRows the rows its deletion vector deletes (the vector's cardinality); 0 without one
 * @param deletionVectorPath the absolute URI of the file holding its deletion vector ({@code
 *     deletion_vector_<uuid>.bin}), or null without a vector or for an inline one
 * @param nullCounts per top-level column its statistics cover, the nulls among all the rows the
 *     data file holds ({@code stats.nullCount}, deleted rows included); empty without statistics
 */
public record DataFileDetail(
    ScanFile scanFile,
    String path,
    long sizeBytes,
    long modificationTimeMillis,
    long numRecords,
    long deletedRows,
    @Nullable String deletionVectorPath,
    Map<String, Long> nullCounts) {
  /**
   * Checks the components.
   *
   * @param scanFile the scan file
   * @param path the data file URI
   * @param sizeBytes the size
   * @param modificationTimeMillis the modification time
   * @param numRecords the row count or -1
   * @param deletedRows the deleted rows
   * @param deletionVectorPath the vector's file or null
   * @param nullCounts the null counts by column
   * @throws NullPointerException when the scan file, path or null counts are null
   */
  public DataFileDetail {
    Objects.requireNonNull(scanFile, "scanFile");
    Objects.requireNonNull(path, "path");
    nullCounts = Map.copyOf(nullCounts);
  }

  /**
   * The nulls of a column among all the rows the data file holds (deleted rows included), from its
   * statistics.
   *
   * @param column the column's name, exactly as the table spells it
   * @return the null count, or -1 when the statistics do not cover the column
   */
  public long nullCount(String column) {
    Long count = nullCounts.get(column);
    return count == null ? -1 : count;
  }

  /**
   * The rows a reader sees in the file: {@code numRecords - deletedRows}, or -1 when the row count
   * is unknown.
   *
   * @return the live rows
   */
  public long liveRows() {
    return numRecords < 0 ? -1 : numRecords - deletedRows;
  }
}
