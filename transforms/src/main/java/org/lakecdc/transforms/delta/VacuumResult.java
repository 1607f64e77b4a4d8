package org.lakecdc.transforms.delta;

import java.util.List;
import java.util.Objects;

/**
 * What {@link DeltaTables#vacuum} deleted, or would delete on a dry run.
 *
 * @param dryRun true when nothing was deleted and {@code files} lists what would be
 * @param files the absolute URIs of the data files and deletion vector files deleted (or to
 *     delete), sorted
 * @param bytes their total size in bytes
 * @param filesKept the files of the table directory that were kept: referenced by the latest
 *     version or an unexpired tombstone, or younger than the cutoff
 */
public record VacuumResult(boolean dryRun, List<String> files, long bytes, int filesKept) {
  /**
   * Copies the list.
   *
   * @param dryRun whether nothing was deleted
   * @param files the files
   * @param bytes their size
   * @param filesKept the files kept
   * @throws NullPointerException when the list is null
   */
  public VacuumResult {
    files = List.copyOf(Objects.requireNonNull(files, "files"));
  }
}
