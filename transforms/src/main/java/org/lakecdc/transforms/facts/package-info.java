/**
 * The facts table, shared by every stream of a job: public API.
 *
 * <p>{@link org.lakecdc.transforms.facts.FactsTable} defines its columns and reads and writes its
 * rows: one row per batch (batches without rows included) plus event rows such as {@code bootstrap}
 * and {@code schema_change}, and the stream position of each app id in its domain metadata.
 * docs/tables.md, "Facts", describes the table.
 */
package org.lakecdc.transforms.facts;
