package org.lakecdc.transforms.bronze;

import java.io.Serializable;

/**
 * Tests only: what the committer of a target runs after a batch is fully committed (its bronze
 * commit, facts row and verdict), on the worker, before it takes the next batch ({@link
 * DeltaTarget#withAfterCommit}). A test holds the committer there to look at the tables while
 * bronze stands at that batch.
 */
@FunctionalInterface
public interface CommitHook extends Serializable {
  /**
   * Runs after batch {@code batchId} of the target is committed.
   *
   * @param batchId the batch's number
   */
  void committed(long batchId);
}
