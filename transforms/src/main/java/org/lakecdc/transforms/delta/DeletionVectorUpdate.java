package org.lakecdc.transforms.delta;

/**
 * A data file's new deletion vector, stored in the vector file that the tables' {@code
 * commitDeletionVectors} writes.
 *
 * @param file the data file's {@code add} path as the log holds it
 * @param offset where the vector's size field starts in the vector file
 * @param sizeInBytes the serialized vector's length
 * @param cardinality the rows the vector deletes (the old vector's rows included)
 */
public record DeletionVectorUpdate(String file, int offset, int sizeInBytes, long cardinality) {}
