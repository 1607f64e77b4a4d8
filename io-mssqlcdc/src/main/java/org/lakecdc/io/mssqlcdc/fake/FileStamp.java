package org.lakecdc.io.mssqlcdc.fake;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;
import java.util.Objects;

/**
 * What the reader's caches compare to tell whether a file changed: its identity ({@link
 * BasicFileAttributes#fileKey()}, the device and inode on Linux; null where the platform has none),
 * size in bytes and modification time. The writer replaces every file it changes with a new one
 * ({@link AtomicFiles}), so any write gives a new identity; a file edited in place gives a new size
 * or modification time.
 *
 * @param fileKey the platform's file identity, or null
 * @param size the size in bytes; -1 for an absent file
 * @param modified the modification time; null for an absent file
 */
record FileStamp(Object fileKey, long size, FileTime modified) {
  /** The stamp of a file that does not exist. */
  static final FileStamp ABSENT = new FileStamp(null, -1, null);

  /**
   * The file's current stamp.
   *
   * @throws UncheckedIOException when the attributes cannot be read for another reason than absence
   */
  static FileStamp of(Path file) {
    try {
      BasicFileAttributes a = Files.readAttributes(file, BasicFileAttributes.class);
      return new FileStamp(a.fileKey(), a.size(), a.lastModifiedTime());
    } catch (NoSuchFileException e) {
      return ABSENT;
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot read the attributes of " + file, e);
    }
  }

  /** True for the stamp of an absent file. */
  boolean absent() {
    return size < 0;
  }

  /** True when {@code other} has the same identity (or neither has one). */
  boolean sameFile(FileStamp other) {
    return Objects.equals(fileKey, other.fileKey);
  }
}
