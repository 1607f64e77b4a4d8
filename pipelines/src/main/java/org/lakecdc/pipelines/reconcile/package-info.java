/**
 * The {@code Reconcile} job's HTML report ({@link org.lakecdc.pipelines.reconcile.ReconcilePage},
 * open it first). docs/behaviour.md §11 and docs/options.md "Reconcile" describe the job.
 */
package org.lakecdc.pipelines.reconcile;
