package org.lakecdc.io.mssqlcdc.client;

import java.io.Serializable;

/**
 * Opens a {@link CdcClient}. Serializable, so a pipeline ships the factory (never a live
 * connection) to workers, and each range read opens and closes its own client. The test seam of
 * {@code MssqlCdcIO}: tests pass a factory of the file-backed simulator. Implementations must not
 * expose passwords in {@code toString()}.
 */
@FunctionalInterface
public interface CdcClientFactory extends Serializable {
  /** Opens a new client; the caller closes it. */
  CdcClient open();
}
