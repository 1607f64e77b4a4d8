/**
 * The {@code Backfill} job's parts: its waves ({@link
 * org.lakecdc.pipelines.backfill.BackfillWaves}, what the entry point delegates to), where a
 * chunked snapshot's backfill stands ({@link org.lakecdc.pipelines.backfill.BackfillState}) and the
 * throttle that holds a wave back while CDC retention leaves too little headroom ({@link
 * org.lakecdc.pipelines.backfill.BackfillThrottle}, open it first). docs/options.md "Backfill" and
 * docs/behaviour.md §6.9 describe the job.
 */
package org.lakecdc.pipelines.backfill;
