/**
 * History, the slowly changing dimension (type 2) table of a source table built from bronze: one
 * row per version of a key, with the span of commit times it was current (docs/tables.md
 * "History").
 *
 * <p>{@link org.lakecdc.transforms.history.HistoryTable} defines its columns and properties; {@link
 * org.lakecdc.transforms.history.HistoryApplier} applies bronze to it in waves, each one Delta
 * commit that closes the current versions of the wave's keys with deletion vectors and writes the
 * closed and the new versions in one new Parquet file, with the position in the same commit; {@link
 * org.lakecdc.transforms.history.HistoryState} reads the state at an instant.
 */
package org.lakecdc.transforms.history;
