package org.lakecdc.io.mssqlcdc.client;

import org.lakecdc.io.mssqlcdc.lsn.Lsn;

/**
 * Changes the stream still needs are gone from the change table: CDC cleanup moved the capture
 * instance's minimum LSN ({@code sys.fn_cdc_get_min_lsn}) past the first LSN not yet read, or moved
 * it during a read (SQL Server moves the low watermark first, then deletes the rows below it; a
 * purged range of {@code cdc.<ci>_CT} reads as empty, without an error). The named class of the
 * reference system (docs/options.md); it is never retried. The message names the capture instance,
 * the range, the new minimum and what to do (a re-snapshot).
 */
public class DataLossError extends CdcException {
  private static final long serialVersionUID = 1L;

  private final String captureInstance;
  private final Lsn firstMissing;
  private final Lsn minLsn;

  public DataLossError(String captureInstance, Lsn firstMissing, Lsn minLsn, String message) {
    super(message);
    this.captureInstance = captureInstance;
    this.firstMissing = firstMissing;
    this.minLsn = minLsn;
  }

  /** The capture instance whose change data is gone. */
  public String captureInstance() {
    return captureInstance;
  }

  /** The first LSN the stream needed that is no longer held. */
  public Lsn firstMissing() {
    return firstMissing;
  }

  /** The instance's minimum LSN when the loss was found. */
  public Lsn minLsn() {
    return minLsn;
  }
}
