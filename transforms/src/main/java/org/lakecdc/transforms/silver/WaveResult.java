package org.lakecdc.transforms.silver;

import java.util.Objects;
import org.lakecdc.transforms.delta.CommitResult;

/**
 * What one {@link SilverMerge#merge} or {@link SilverMerge#replaceAll} did.
 *
 * @param status {@link CommitResult.Status#COMMITTED} when this call wrote a new table version;
 *     {@link CommitResult.Status#ALREADY_COMMITTED} when nothing was written because the table
 *     already holds what the call asks for: its transaction {@code (appId, txnVersion)} is already
 *     in (a replay), or the wave changes no row and every domain's configuration already equals the
 *     table's
 * @param version for a commit the version it created, else the table's latest version when the call
 *     decided to write nothing
 * @param inserted keys that were absent and got a row (0 when nothing was written)
 * @param updated keys whose row was replaced by a newer upsert image
 * @param deleted keys whose row was removed by a newer delete image ({@link
 *     SilverMerge#replaceAll}: the rows the table held before)
 * @param filesTouched data files whose deletion vector this commit changed or that it removed
 *     (replaceAll), not counting the files it added
 */
public record WaveResult(
    CommitResult.Status status,
    long version,
    long inserted,
    long updated,
    long deleted,
    int filesTouched) {
  /**
   * Checks the status.
   *
   * @param status the outcome
   * @param version the table version
   * @param inserted keys inserted
   * @param updated keys updated
   * @param deleted keys deleted
   * @param filesTouched files whose deletion vector changed or that were removed
   * @throws NullPointerException when the status is null
   */
  public WaveResult {
    Objects.requireNonNull(status, "status");
  }

  /**
   * Whether a new table version was written.
   *
   * @return true for {@link CommitResult.Status#COMMITTED}
   */
  public boolean committed() {
    return status == CommitResult.Status.COMMITTED;
  }
}
