package org.lakecdc.pipelines;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Files;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RawLocalFileSystem;

/**
 * The local file system under the URI scheme {@value #SCHEME} ({@code lakecdctest:///tmp/x} is the
 * local {@code /tmp/x}): a stand-in for an object store whose Hadoop FileSystem is named only in
 * the job's Hadoop configuration ({@code fs.lakecdctest.impl}), never registered on the class path.
 * It counts the opens of a table's data files ({@link #watch}), in every thread: a test sees
 * whether a table's rows were read back.
 */
public class SchemeFileSystem extends RawLocalFileSystem {
  /** The URI scheme. */
  public static final String SCHEME = "lakecdctest";

  private static final URI NAME = URI.create(SCHEME + ":///");

  /** The data files (local paths) whose opens are counted. */
  private static volatile Set<String> watched = Set.of();

  /** Opens of {@link #watch}ed data files since the watch began. */
  static final AtomicLong DATA_FILE_OPENS = new AtomicLong();

  /**
   * Counts, from now on, the opens of the data files (Parquet files outside {@code _delta_log})
   * that the table at the local {@code directory} holds now: what reading its rows back would open
   * (a file written later, whose footer the writer reads for its statistics, is not counted).
   */
  static void watch(String directory) {
    try (Stream<java.nio.file.Path> files = Files.walk(java.nio.file.Path.of(directory))) {
      watched =
          files
              .map(java.nio.file.Path::toString)
              .filter(p -> p.endsWith(".parquet") && !p.contains("/_delta_log/"))
              .collect(Collectors.toUnmodifiableSet());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    DATA_FILE_OPENS.set(0);
  }

  /** Stops counting. */
  static void unwatch() {
    watched = Set.of();
  }

  /** How many data files the last {@link #watch} found. */
  static int watchedFiles() {
    return watched.size();
  }

  @Override
  public FSDataInputStream open(Path f, int bufferSize) throws IOException {
    if (watched.contains(f.toUri().getPath())) {
      DATA_FILE_OPENS.incrementAndGet();
    }
    return super.open(f, bufferSize);
  }

  @Override
  public URI getUri() {
    return NAME;
  }

  @Override
  public String getScheme() {
    return SCHEME;
  }
}
