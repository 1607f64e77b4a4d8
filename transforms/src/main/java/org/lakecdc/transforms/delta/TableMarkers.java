package org.lakecdc.transforms.delta;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.Optional;
import java.util.Set;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;

/**
 * Small marker files in a hidden folder of a table's directory ({@link DeltaTables#markers}): a
 * record every worker of a job reaches through the file system the table's data files are written
 * with (local, {@code s3a://}, HDFS, any Hadoop file system), e.g. a chunked snapshot's hand-overs.
 * They are no Delta files: the folder's name starts with {@code _} or {@code .}, which Delta's
 * readers and {@code VACUUM} (delta-spark's and {@link DeltaTables#vacuum}) skip, and nothing in
 * the log refers to them.
 *
 * <p>One object a marker (a {@code PUT} on an object store), one listing per {@link #names} (a
 * {@code LIST}). Writes are last-writer-wins; a marker is there once {@link #put} returns (S3 and
 * HDFS are read-after-write consistent). Thread-safe.
 */
public final class TableMarkers {
  private final Path folder;
  private final FileSystem fs;

  TableMarkers(Configuration conf, String tablePath, String folder) {
    if (folder.isEmpty() || !(folder.startsWith("_") || folder.startsWith("."))) {
      throw new IllegalArgumentException(
          "A marker folder must be hidden from Delta (start with _ or .), not '" + folder + "'");
    }
    this.folder = new Path(new Path(tablePath), folder);
    try {
      this.fs = this.folder.getFileSystem(conf);
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot open the file system of " + this.folder, e);
    }
  }

  /** The folder, as a Hadoop path string (the table path joined with the folder). */
  public String folder() {
    return folder.toString();
  }

  /**
   * Writes the marker {@code name} with {@code content} (UTF-8), replacing one of that name.
   *
   * @param name the file name: no {@code /}, not starting with {@code .}
   * @throws IllegalArgumentException when the name is not a plain file name
   * @throws IOException when the file system refuses the write
   */
  public void put(String name, String content) throws IOException {
    try (FSDataOutputStream out = fs.create(marker(name), true)) {
      out.write(content.getBytes(StandardCharsets.UTF_8));
    }
  }

  /**
   * The names of the folder's markers (its files, not its subfolders): none when the folder does
   * not exist.
   *
   * @throws IOException when the folder cannot be listed
   */
  public Set<String> names() throws IOException {
    Set<String> names = new HashSet<>();
    try {
      for (FileStatus status : fs.listStatus(folder)) {
        String name = status.getPath().getName();
        if (status.isFile() && !name.startsWith(".")) {
          names.add(name);
        }
      }
    } catch (FileNotFoundException e) {
      return names;
    }
    return names;
  }

  /**
   * The content of the marker {@code name} (UTF-8), or empty when there is none.
   *
   * @throws IOException when it cannot be read
   */
  public Optional<String> read(String name) throws IOException {
    try (FSDataInputStream in = fs.open(marker(name))) {
      return Optional.of(new String(in.readAllBytes(), StandardCharsets.UTF_8));
    } catch (FileNotFoundException e) {
      return Optional.empty();
    }
  }

  /**
   * Deletes the folder with every marker and subfolder in it; nothing when it does not exist.
   *
   * @throws IOException when the file system refuses the delete
   */
  public void deleteAll() throws IOException {
    if (!fs.delete(folder, true) && fs.exists(folder)) {
      throw new IOException("Cannot delete " + folder);
    }
  }

  private Path marker(String name) {
    if (name.isEmpty() || name.contains("/") || name.startsWith(".")) {
      throw new IllegalArgumentException(
          "A marker name must be a plain file name (no /, not starting with .), not '"
              + name
              + "'");
    }
    return new Path(folder, name);
  }
}
