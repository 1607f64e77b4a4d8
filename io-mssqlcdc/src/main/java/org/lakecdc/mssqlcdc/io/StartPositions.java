package org.lakecdc.mssqlcdc.io;

import org.lakecdc.mssqlcdc.client.CaptureInstance;
import org.lakecdc.mssqlcdc.client.CdcClient;
import org.lakecdc.mssqlcdc.lsn.Lsn;

/** Resolves a {@link StartingLsn} to the last processed LSN (BEHAVIOUR.md 2.3). */
public final class StartPositions {
  private StartPositions() {}

  /**
   * The LSN a new read treats as already processed.
   *
   * @param client an open client
   * @param captureInstance the configured capture instance
   * @param start the starting position
   * @return the last processed LSN; reading starts right after it
   * @throws IllegalStateException for {@code latest} when capture has never written and the
   *     instance has no start LSN (retry once the capture job has run)
   */
  public static Lsn lastProcessed(CdcClient client, String captureInstance, StartingLsn start) {
    switch (start.kind()) {
      case EXPLICIT:
        return start.lsn().orElseThrow();
      case EARLIEST:
        {
          CaptureInstance oldest = client.captureInstances(captureInstance).get(0);
          return client.decrementLsn(client.minLsn(oldest.name()));
        }
      case LATEST:
        {
          Lsn last = SnapshotLsn.latestCommitted(client, captureInstance);
          if (last.isZero()) {
            throw new IllegalStateException(
                "startingLsn=latest: capture instance "
                    + captureInstance
                    + " has no start LSN and CDC has no max_lsn yet; retry once the capture job"
                    + " has run");
          }
          return last;
        }
      default:
        throw new IllegalArgumentException("Unknown startingLsn kind " + start.kind());
    }
  }
}
