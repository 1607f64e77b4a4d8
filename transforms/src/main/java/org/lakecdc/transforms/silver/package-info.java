/**
 * Silver, the current state of a source table built from bronze: public API (docs/tables.md,
 * docs/behaviour.md §10).
 *
 * <p>{@link org.lakecdc.transforms.silver.SilverTable} defines silver's columns (bronze's captured
 * columns, then {@code _start_lsn} and {@code _commit_ts} of the image) and its table properties:
 * Delta deletion vectors on, change data feed and row tracking off. {@link
 * org.lakecdc.transforms.silver.SilverMerge} is the MERGE engine: merge-on-read with deletion
 * vectors. Each wave of latest images per key ({@link org.lakecdc.transforms.silver.SilverImage})
 * is one Delta commit that marks the replaced rows deleted in the deletion vectors of the files
 * holding them and adds one new Parquet file with the new images, sorted by key, so a wave costs in
 * proportion to the keys it changes, not to the table.
 */
package org.lakecdc.transforms.silver;
