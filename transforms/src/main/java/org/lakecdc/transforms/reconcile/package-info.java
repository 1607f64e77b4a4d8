/**
 * Reconcile (docs/behaviour.md §11, docs/tables.md "Reconcile"): proves a silver table equals its
 * SQL Server source table. Tier 1 compares row counts and key sums per key bucket ({@link
 * KeyBuckets}, counted on the server by {@code CdcClient.keyBuckets}); tier 2 compares the {@link
 * RowHash} of every row of the differing buckets and of a seeded sample of the matching ones
 * ({@link CompareRows}); keys changed after silver's position are in flight ({@link InFlight});
 * chunked the {@link ReconcileReport} table keeps one row per bucket and per differing key of every
 * run.
 */
package org.lakecdc.transforms.reconcile;
