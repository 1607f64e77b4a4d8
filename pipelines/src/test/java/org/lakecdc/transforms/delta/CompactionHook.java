package org.lakecdc.transforms.delta;

/**
 * The pipelines' tests' access to the test hook of a {@link DeltaTables}' background compaction
 * ({@link SmallFileCompaction}), which is package-private in the transforms module.
 */
public final class CompactionHook {
  private CompactionHook() {}

  /**
   * Runs {@code hook} on the compaction's background thread before each of its commits of {@code
   * tables}' facts and control tables; {@code () -> {}} removes it.
   */
  public static void beforeBackgroundCommit(DeltaTables tables, Runnable hook) {
    tables.smallFiles().beforeBackgroundCommit(hook);
  }
}
