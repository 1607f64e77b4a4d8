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
 * @param current images whose key silver already held with the same or a newer {@code _start_lsn}
 *     (a stale image, e.g. a change older than a chunk row read after it, or a replay), so nothing
 *     was changed for them (0 when nothing was written)
 * @param absent delete images of keys silver did not hold (0 when nothing was written)
 */
public record WaveResult(
    CommitResult.Status status,
    long version,
    long inserted,
    long updated,
    long deleted,
    int filesTouched,
    long current,
    long absent) {
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
   * A result without {@code current} or {@code absent} images (both 0).
   *
   * @param status the outcome
   * @param version the table version
   * @param inserted keys inserted
   * @param updated keys updated
   * @param deleted keys deleted
   * @param filesTouched files whose deletion vector changed or that were removed
   * @throws NullPointerException when the status is null
   */
  public WaveResult(
      CommitResult.Status status,
      long version,
      long inserted,
      long updated,
      long deleted,
      int filesTouched) {
    this(status, version, inserted, updated, deleted, filesTouched, 0, 0);
  }

  /**
   * What happened to a wave's {@code images} images, for people: {@code 3 inserted, 1 updated, 0
   * deleted}, then the images that changed nothing when there are any ({@code , 189 already
   * current}, {@code , 20 already absent}), so that the parts add up to {@code images}; for a wave
   * an earlier attempt had committed, {@code already committed}.
   *
   * @param images the images the wave merged
   * @return the parts, without parentheses
   */
  public String parts(long images) {
    if (!committed()) {
      return "already committed";
    }
    StringBuilder text =
        new StringBuilder(
            String.format(
                java.util.Locale.ROOT,
                "%,d inserted, %,d updated, %,d deleted",
                inserted,
                updated,
                deleted));
    if (current > 0) {
      text.append(String.format(java.util.Locale.ROOT, ", %,d already current", current));
    }
    if (absent > 0) {
      text.append(String.format(java.util.Locale.ROOT, ", %,d already absent", absent));
    }
    long other = images - inserted - updated - deleted - current - absent;
    if (other != 0) {
      // Every image is counted in one part; should the counts ever disagree, say so.
      text.append(String.format(java.util.Locale.ROOT, ", %,d not counted", other));
    }
    return text.toString();
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
