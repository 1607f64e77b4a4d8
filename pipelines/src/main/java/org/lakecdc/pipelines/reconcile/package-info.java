/**
 * The {@code Reconcile} job's outcome ({@link org.lakecdc.pipelines.reconcile.ReconcileResult}: the
 * text and JSON reports) and its HTML report ({@link
 * org.lakecdc.pipelines.reconcile.ReconcilePage}, open it first). docs/behaviour.md §11 and
 * docs/options.md "Reconcile" describe the job.
 */
package org.lakecdc.pipelines.reconcile;
