package org.lakecdc.transforms.delta;

/**
 * A commit lost to concurrent commits and was not retried (rewrites and metadata changes commit
 * with no retry, since Kernel cannot check removed files or metadata against a concurrent commit),
 * or kept losing after the bounded retries of an append. The table is unchanged by this call; data
 * files it wrote stay uncommitted. The message names the table and the versions involved. Tables
 * are meant to have one committer each (docs/architecture.md "Delta tables"), so this signals a
 * second writer.
 */
public class DeltaConflictException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /**
   * An exception with a message and the Kernel exception that ended the last attempt.
   *
   * @param message what conflicted, naming the table
   * @param cause the Kernel exception
   */
  public DeltaConflictException(String message, Throwable cause) {
    super(message, cause);
  }
}
