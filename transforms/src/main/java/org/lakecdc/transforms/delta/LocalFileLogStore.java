package org.lakecdc.transforms.delta;

import io.delta.storage.HadoopFileSystemLogStore;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.Iterator;
import java.util.UUID;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.LocalFileSystem;
import org.apache.hadoop.fs.RawLocalFileSystem;

/**
 * The Delta log store of this project's tables on local file systems ({@code file:} paths): it
 * writes each commit file, checksum and {@code _last_checkpoint} with {@code java.nio} to a
 * temporary file in {@code _delta_log} and then links it into place, so a commit is visible whole
 * or not at all and {@link FileAlreadyExistsException} (the Delta log store contract for "this
 * version is taken") is decided by the file system itself, across processes.
 *
 * <p>Why not Delta's default for {@code file:} ({@code io.delta.storage.HDFSLogStore}): without
 * Hadoop's native library (absent from Maven artifacts) Hadoop's local file system forks a {@code
 * readlink} process for each existence check of a rename and a {@code chmod} process for each file
 * it creates: about ten processes per commit file, measured as most of a batch's fixed cost here
 * (docs/performance.md). Its rename-if-absent is also a check followed by a rename, which two
 * processes can both pass; a hard link ({@code link(2)}) cannot. Reading and listing are Delta's
 * own ({@link HadoopFileSystemLogStore}).
 *
 * <p>{@link DeltaTables} selects it for {@code file:} unless the Hadoop configuration names another
 * log store for that scheme ({@value #CONF_KEY}). A file system without hard links (some network or
 * FUSE mounts) falls back to a move that refuses an existing target: the guarantee of Delta's
 * default store.
 */
public final class LocalFileLogStore extends HadoopFileSystemLogStore {
  /** The Hadoop configuration key through which Delta Kernel picks the {@code file:} log store. */
  public static final String CONF_KEY = "io.delta.kernel.logStore.file.impl";

  /**
   * Delta Kernel's constructor form (it instantiates log stores by reflection).
   *
   * @param initHadoopConf the Hadoop configuration of the engine
   */
  public LocalFileLogStore(Configuration initHadoopConf) {
    super(initHadoopConf);
  }

  /**
   * Writes {@code actions}, one a line, each followed by a newline, to {@code path}.
   *
   * @param path the log file, e.g. {@code file:/t/_delta_log/00000000000000000003.json}
   * @param actions the lines (JSON actions)
   * @param overwrite whether an existing file is replaced (checkpoint pointers, checksums);
   *     otherwise an existing file fails the write
   * @param hadoopConf the configuration (unused: local paths need none)
   * @throws FileAlreadyExistsException when {@code overwrite} is false and the file exists
   * @throws IOException when writing fails; the target is then unchanged
   */
  @Override
  public void write(
      org.apache.hadoop.fs.Path path,
      Iterator<String> actions,
      Boolean overwrite,
      Configuration hadoopConf)
      throws IOException {
    Path target = localPath(path);
    Path directory = target.getParent();
    Files.createDirectories(directory);
    Path temp = directory.resolve("." + target.getFileName() + "." + UUID.randomUUID() + ".tmp");
    try {
      try (Writer out =
          new BufferedWriter(
              new OutputStreamWriter(
                  Files.newOutputStream(temp, StandardOpenOption.CREATE_NEW),
                  StandardCharsets.UTF_8))) {
        while (actions.hasNext()) {
          out.write(actions.next());
          out.write('\n');
        }
      }
      // A checksum sidecar Hadoop's local file system left for an earlier version of this file
      // would no longer match it: readers through Hadoop would fail the new content.
      Files.deleteIfExists(directory.resolve("." + target.getFileName() + ".crc"));
      if (Boolean.TRUE.equals(overwrite)) {
        replace(temp, target);
      } else {
        createIfAbsent(temp, target);
      }
    } finally {
      Files.deleteIfExists(temp);
    }
  }

  /**
   * Whether a reader can see a partly written file at {@code path} when it is written directly:
   * yes, on a local file system. This store's own writes ({@link #write}) are whole whatever the
   * answer, but Delta Kernel asks it before writing a checkpoint's Parquet file, and writes to a
   * temporary file and renames it only when the answer is true: with false, a reader on another
   * thread or process (another table's committer appending to the shared facts table) could open
   * the checkpoint half written and fail ("is not a Parquet file").
   *
   * @param path the file
   * @param hadoopConf the configuration
   * @return true
   */
  @Override
  public Boolean isPartialWriteVisible(org.apache.hadoop.fs.Path path, Configuration hadoopConf) {
    return true;
  }

  /**
   * Whether {@code conf} resolves {@code file:} paths to Hadoop's own local file system (not to
   * another implementation a user configured for the scheme), so that writing them with {@code
   * java.nio} writes the same files.
   *
   * @param conf the Hadoop configuration
   * @return whether {@code file:} is Hadoop's local file system
   */
  static boolean isHadoopLocal(Configuration conf) {
    Class<?> impl = conf.getClass("fs.file.impl", LocalFileSystem.class);
    return impl == LocalFileSystem.class || impl == RawLocalFileSystem.class;
  }

  private static void createIfAbsent(Path temp, Path target) throws IOException {
    try {
      Files.createLink(target, temp);
    } catch (FileAlreadyExistsException e) {
      throw new FileAlreadyExistsException(target.toString());
    } catch (UnsupportedOperationException | IOException e) {
      if (Files.exists(target)) {
        throw new FileAlreadyExistsException(target.toString());
      }
      // No hard links here: a move that refuses an existing target.
      Files.move(temp, target);
    }
  }

  private static void replace(Path temp, Path target) throws IOException {
    try {
      Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    } catch (AtomicMoveNotSupportedException e) {
      Files.move(temp, target, StandardCopyOption.REPLACE_EXISTING);
    }
  }

  private static Path localPath(org.apache.hadoop.fs.Path path) {
    URI uri = path.toUri();
    if (uri.getScheme() == null) {
      return Path.of(uri.getPath());
    }
    if (!"file".equalsIgnoreCase(uri.getScheme())) {
      throw new IllegalArgumentException("LocalFileLogStore writes file: paths only, not " + path);
    }
    return Path.of(URI.create("file://" + uri.getRawPath()));
  }
}
