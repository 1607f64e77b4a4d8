package org.lakecdc.io.mssqlcdc.fake;

import java.io.IOException;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/**
 * The last step of every file the fake writes: replace {@code target} with the finished temporary
 * file {@code source} of the same directory, atomically, so a concurrent reader sees the old file
 * or the new one, never a part. The seam for scenario C272: a test injects a replacement that
 * refuses (as Windows does while a reader holds the file open) to see the writer's bounded retry.
 */
@FunctionalInterface
public interface FileReplacer {
  /**
   * Replaces {@code target} with {@code source}.
   *
   * @param source the finished temporary file, in the target's directory
   * @param target the file to replace (it may not exist yet)
   * @throws java.nio.file.AccessDeniedException when the replace is refused for now (another
   *     process holds the target open); the writer retries a bounded number of times
   * @throws IOException any other failure; not retried
   */
  void replace(Path source, Path target) throws IOException;

  /**
   * {@code Files.move(source, target, ATOMIC_MOVE, REPLACE_EXISTING)}; on a file system without
   * atomic moves, a plain replacing move.
   *
   * @return the default replacer
   */
  static FileReplacer atomicMove() {
    return (source, target) -> {
      try {
        Files.move(
            source, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
      } catch (AtomicMoveNotSupportedException e) {
        Files.move(source, target, StandardCopyOption.REPLACE_EXISTING);
      }
    };
  }
}
