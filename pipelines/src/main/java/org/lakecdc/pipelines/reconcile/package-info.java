/**
 * The {@code Reconcile} job's run, {@link org.lakecdc.pipelines.reconcile.ReconcileLauncher} (the
 * checks that resolve the spec, the plan, the pipeline that compares and writes the report), which
 * its entry point {@code org.lakecdc.pipelines.Reconcile} delegates to; its outcome ({@link
 * org.lakecdc.pipelines.reconcile.ReconcileResult}: the text and JSON reports) and its HTML report
 * ({@link org.lakecdc.pipelines.reconcile.ReconcilePage}, open it first). docs/behaviour.md §11 and
 * docs/options.md "Reconcile" describe the job. Depends on {@code targets}, {@code cli} and {@code
 * options}.
 */
package org.lakecdc.pipelines.reconcile;
