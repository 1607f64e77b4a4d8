package org.lakecdc.transforms.delta;

import java.io.Serializable;
import java.util.Objects;

/**
 * What a commit ({@link DeltaTables#commit}, {@link DeltaTables#rewrite}) did.
 *
 * @param status whether this call committed or found its transaction already committed
 * @param version for {@link Status#COMMITTED} the table version this commit created; for {@link
 *     Status#ALREADY_COMMITTED} the latest table version when the skip was decided
 * @param filesAdded data files added by this commit; 0 when skipped
 * @param filesRemoved data files removed by this commit (rewrites only); 0 when skipped
 */
public record CommitResult(Status status, long version, int filesAdded, int filesRemoved)
    implements Serializable {

  /** The outcome of a commit. */
  public enum Status {
    /** A new table version was written. */
    COMMITTED,
    /**
     * Nothing was written: the table already has a transaction of this app id with this or a higher
     * version (Delta's {@code txn} rule), so this one was committed before (a replay).
     */
    ALREADY_COMMITTED
  }

  /**
   * Checks the status.
   *
   * @param status the outcome
   * @param version the table version
   * @param filesAdded files added
   * @param filesRemoved files removed
   * @throws NullPointerException when the status is null
   */
  public CommitResult {
    Objects.requireNonNull(status, "status");
  }

  /**
   * Whether a new table version was written.
   *
   * @return true for {@link Status#COMMITTED}
   */
  public boolean committed() {
    return status == Status.COMMITTED;
  }
}
