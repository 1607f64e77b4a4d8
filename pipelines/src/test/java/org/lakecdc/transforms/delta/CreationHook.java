package org.lakecdc.transforms.delta;

/**
 * The pipelines' tests' access to the test hook of a table's creation ({@link TableLifecycle}),
 * which is package-private in the transforms module.
 */
public final class CreationHook {
  private CreationHook() {}

  /**
   * {@link DeltaTables#createIfAbsent}, running {@code beforeCreateCommit} after the table was
   * found absent and before the creation's commit (where a concurrent creator wins the race).
   */
  public static OpenResult createIfAbsent(
      DeltaTables tables, String path, TableDefinition definition, Runnable beforeCreateCommit) {
    return tables.lifecycle().createIfAbsent(path, definition, beforeCreateCommit);
  }
}
