package org.lakecdc.pipelines.options;

import org.apache.beam.sdk.options.Default;
import org.apache.beam.sdk.options.Description;
import org.apache.beam.sdk.options.PipelineOptions;
import org.lakecdc.io.mssqlcdc.client.IsolationLevel;

/**
 * How a command reads the source table itself (not its change tables), shared by {@code CdcToDelta}
 * and {@code Backfill} (snapshots) and {@code Reconcile} (the comparison).
 */
public interface SourceReadOptions extends PipelineOptions {
  @Description(
      "With --connectionUrl: SET LOCK_TIMEOUT for every read of the source table (snapshots,"
          + " Reconcile's comparison), in milliseconds, 0 or more; a read blocked longer fails with"
          + " SQL Server error 1222. Unset: wait for locks without limit. Change-table reads never"
          + " take it.")
  @Accepts("0 or a positive number of milliseconds up to 2147483647")
  Long getLockTimeoutMs();

  void setLockTimeoutMs(Long value);

  @Description(
      "Isolation of the reads of the source table (snapshots, Reconcile's comparison):"
          + " readCommitted or snapshot (never NOLOCK).")
  @Default.Enum("READ_COMMITTED")
  @Accepts("'readCommitted' or 'snapshot' (never NOLOCK)")
  IsolationLevel getIsolationLevel();

  void setIsolationLevel(IsolationLevel value);
}
