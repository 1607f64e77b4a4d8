package org.lakecdc.transforms.delta;

/**
 * When a commit writes the checkpoint Kernel offers after it (every {@code
 * delta.checkpointInterval} versions, 10 by default): before the commit call returns, or on the
 * tables' background thread after it (docs/tables.md "Committer rounds").
 */
public enum CheckpointTiming {
  /** Written by the committing thread before the commit call returns. */
  IN_COMMIT,

  /**
   * Handed to one background thread of the tables and written after the commit call returned, at
   * most one per table at once; until it is written, readers replay the log from the checkpoint
   * before ({@link DeltaTables#awaitCheckpoints} waits for it).
   */
  IN_BACKGROUND
}
