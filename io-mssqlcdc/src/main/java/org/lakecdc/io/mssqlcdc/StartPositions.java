package org.lakecdc.io.mssqlcdc;

import java.util.List;
import java.util.Optional;
import org.lakecdc.io.mssqlcdc.client.CaptureInstance;
import org.lakecdc.io.mssqlcdc.client.CdcClient;
import org.lakecdc.io.mssqlcdc.client.DataLossError;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;

/** Resolves a {@link StartingLsn} to the last processed LSN (docs/options.md). */
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

  /**
   * Checks an explicit starting LSN of a new read against what CDC holds: one after {@code max_lsn}
   * has nothing to read (a typo, or a position from another database); one whose next change is
   * below the oldest capture instance's minimum LSN starts in a gap: those changes were purged by
   * cleanup, were held only by the configured capture instance if it is disabled (the message then
   * names it), or predate CDC on the table.
   *
   * @throws IllegalArgumentException naming the option, the LSN and {@code max_lsn}
   * @throws org.lakecdc.io.mssqlcdc.client.DataLossError naming the LSN, the instance and its
   *     minimum
   */
  public static void checkExplicit(CdcClient client, String captureInstance, Lsn lastProcessed) {
    Optional<Lsn> max = client.maxLsn();
    if (max.isPresent() && lastProcessed.isAfter(max.get())) {
      throw new IllegalArgumentException(
          "startingLsn "
              + lastProcessed
              + " is after max_lsn "
              + max.get()
              + ": nothing has been captured there yet; use 'latest' to skip the history");
    }
    List<CaptureInstance> listed = client.captureInstances(captureInstance);
    CaptureInstance oldest = listed.get(0);
    Lsn min = client.minLsn(oldest.name());
    Lsn first = lastProcessed.increment();
    if (first.isBefore(min)) {
      List<String> disabled = RangePlanner.disabledInstances(captureInstance, List.of(), listed);
      String heldOnly =
          disabled.isEmpty()
              ? ""
              : ", or held only by capture instance '"
                  + String.join("', '", disabled)
                  + "', disabled before the stream read them,";
      throw new DataLossError(
          oldest.name(),
          first,
          min,
          "startingLsn "
              + lastProcessed
              + " is before the oldest change CDC holds for "
              + oldest.name()
              + " (min_lsn "
              + min
              + "): the changes in between were purged by cleanup"
              + heldOnly
              + " or predate CDC on the table; start with a snapshot (bootstrap) or 'earliest'");
    }
  }
}
