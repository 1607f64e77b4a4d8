package org.lakecdc.transforms.delta;

import io.delta.kernel.defaults.engine.fileio.FileIO;
import io.delta.kernel.utils.FileStatus;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.attribute.BasicFileAttributes;
import org.checkerframework.checker.nullness.qual.Nullable;

/**
 * Files of Hadoop's own local file system reached through {@code java.nio} instead of Hadoop: a
 * Hadoop call on a local path looks the file system up in Hadoop's cache first (the current user
 * included), which costs more than the file system call itself, and the data and commit files of
 * one small batch take several such calls. The answers are Hadoop's: the same bytes, sizes and
 * modification times (milliseconds).
 */
final class LocalFiles {
  private LocalFiles() {}

  /**
   * The {@code java.nio} path of {@code path} when it is a {@code file:} path (a qualified one, as
   * Kernel and {@code HadoopFileIO.resolvePath} give) and {@code hadoopLocal} says Hadoop's own
   * local file system serves {@code file:} ({@link LocalFileLogStore#isHadoopLocal}); else null.
   */
  static java.nio.file.@Nullable Path of(String path, boolean hadoopLocal) {
    if (!hadoopLocal) {
      return null;
    }
    URI uri = new org.apache.hadoop.fs.Path(path).toUri();
    if (!"file".equalsIgnoreCase(uri.getScheme())) {
      return null;
    }
    return java.nio.file.Path.of(URI.create("file://" + uri.getRawPath()));
  }

  /**
   * The size and modification time (ms since 1970-01-01 UTC) of a file, as {@code
   * fileIO.getFileStatus} gives them: through {@code java.nio} for a local {@code file:} path
   * ({@link #of}), else through Hadoop.
   *
   * @throws FileNotFoundException when the file does not exist
   * @throws IOException when its status cannot be read
   */
  static FileStatus status(FileIO fileIO, boolean hadoopLocal, String path) throws IOException {
    java.nio.file.Path local = of(path, hadoopLocal);
    if (local == null) {
      return fileIO.getFileStatus(path);
    }
    try {
      BasicFileAttributes attributes = Files.readAttributes(local, BasicFileAttributes.class);
      return FileStatus.of(path, attributes.size(), attributes.lastModifiedTime().toMillis());
    } catch (NoSuchFileException e) {
      throw new FileNotFoundException(path);
    }
  }
}
