/**
 * The bronze table, the append-only change log of one source table: public API.
 *
 * <p>{@link org.lakecdc.transforms.bronze.BronzeTable} defines its columns (the change rows'
 * metadata columns, the captured columns, then {@code _batch_id}, {@code _snapshot} and {@code
 * _chunk}) with their comments, and evolves the table's schema when a later run captures more
 * columns or wider types. docs/tables.md, "Bronze", describes the table and its schema evolution.
 */
package org.lakecdc.transforms.bronze;
