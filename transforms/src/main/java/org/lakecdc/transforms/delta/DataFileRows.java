package org.lakecdc.transforms.delta;

/**
 * One data file of a table version with its row counts, from the log only ({@link
 * TableDeletionVectors#dataFileRows}).
 *
 * @param file the {@code add} path as the log holds it
 * @param sizeBytes the file's size
 * @param numRecords the rows the file holds (its statistics' {@code numRecords}), -1 when it has no
 *     statistics
 * @param deletedRows the rows its deletion vector deletes (the vector's cardinality), 0 without
 */
public record DataFileRows(String file, long sizeBytes, long numRecords, long deletedRows) {}
