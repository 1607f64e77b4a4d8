package org.lakecdc.transforms.delta;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The file half of the tables' {@code vacuum}: which files of a table directory no version a reader
 * may still read references, by the Delta protocol's rule (PROTOCOL.md "Add File and Remove File":
 * a {@code remove} stays a tombstone until the cleanup's current time passes its {@code
 * deletionTimestamp} plus the retention), and deleting them.
 *
 * <p>Kept: every file of the latest version's {@code add} actions and their deletion vector files
 * (given by the caller), every file of a {@code remove} whose {@code deletionTimestamp} is at or
 * after the cutoff and its deletion vector file, and every file modified at or after the cutoff (a
 * write not committed yet). Deleted: the other {@code *.parquet} data files and {@code
 * deletion_vector_*.bin} files under the table directory, outside hidden directories (names
 * starting with {@code _} or {@code .}: {@code _delta_log} is never touched). Other files are left
 * alone.
 *
 * <p>Tombstones are read from the commit files ({@code _delta_log/<version>.json}) modified at or
 * after the cutoff less {@link #CLOCK_SLACK_MILLIS}: a {@code remove} is written with its commit,
 * so an unexpired one is in a commit written after its {@code deletionTimestamp}; the slack covers
 * a writer's clock running behind the storage's.
 */
final class TableVacuum {
  private static final Logger LOG = LoggerFactory.getLogger(TableVacuum.class);
  private static final ObjectMapper MAPPER = new ObjectMapper();
  private static final Pattern COMMIT_FILE = Pattern.compile("\\d{20}\\.json");
  private static final Pattern DELETION_VECTOR_FILE =
      Pattern.compile("deletion_vector_[0-9a-fA-F-]{36}\\.bin");

  /** How far behind the cutoff commit files are still read for tombstones: one hour. */
  static final long CLOCK_SLACK_MILLIS = 3_600_000L;

  private TableVacuum() {}

  /**
   * Deletes (or lists, on a dry run) the files of the table that none of {@code files} (the latest
   * version's data files) references, as a data file or as its deletion vector file.
   *
   * @param conf the Hadoop configuration
   * @param tablePath the table path or URI
   * @param files the latest version's data files
   * @param cutoffMillis tombstones deleted before this time have expired; files modified before it
   *     may go
   * @param dryRun list only
   */
  static VacuumResult run(
      Configuration conf,
      String tablePath,
      List<DataFileDetail> files,
      long cutoffMillis,
      boolean dryRun) {
    Set<String> referenced = new HashSet<>();
    for (DataFileDetail file : files) {
      referenced.add(file.path());
      if (file.deletionVectorPath() != null) {
        referenced.add(file.deletionVectorPath());
      }
    }
    return run(conf, tablePath, referenced, cutoffMillis, dryRun);
  }

  /**
   * Deletes (or lists, on a dry run) the unreferenced files of the table.
   *
   * @param conf the Hadoop configuration
   * @param tablePath the table path or URI
   * @param referenced the latest version's data files and deletion vector files, as Hadoop path
   *     strings (Kernel's absolute paths)
   * @param cutoffMillis tombstones deleted before this time have expired; files modified before it
   *     may go
   * @param dryRun list only
   */
  static VacuumResult run(
      Configuration conf,
      String tablePath,
      Set<String> referenced,
      long cutoffMillis,
      boolean dryRun) {
    try {
      Path root = new Path(tablePath);
      FileSystem fs = root.getFileSystem(conf);
      root = fs.makeQualified(root);
      Set<String> keep = new HashSet<>();
      for (String file : referenced) {
        keep.add(qualify(fs, new Path(file)));
      }
      keepUnexpiredTombstones(fs, root, cutoffMillis, keep);
      List<FileStatus> candidates = new ArrayList<>();
      int kept = 0;
      Deque<Path> directories = new ArrayDeque<>(List.of(root));
      while (!directories.isEmpty()) {
        for (FileStatus status : fs.listStatus(directories.pop())) {
          String name = status.getPath().getName();
          if (name.startsWith("_") || name.startsWith(".")) {
            continue;
          }
          if (status.isDirectory()) {
            directories.push(status.getPath());
          } else if (name.endsWith(".parquet") || DELETION_VECTOR_FILE.matcher(name).matches()) {
            if (keep.contains(qualify(fs, status.getPath()))
                || status.getModificationTime() >= cutoffMillis) {
              kept++;
            } else {
              candidates.add(status);
            }
          }
        }
      }
      List<String> files = new ArrayList<>(candidates.size());
      long bytes = 0;
      for (FileStatus file : candidates) {
        files.add(qualify(fs, file.getPath()));
        bytes += file.getLen();
      }
      files.sort(null);
      if (!dryRun) {
        for (FileStatus file : candidates) {
          if (!fs.delete(file.getPath(), false) && fs.exists(file.getPath())) {
            throw new IOException("Cannot delete " + file.getPath());
          }
        }
        LOG.debug(
            "Delta table {}: vacuum deleted {} files ({} bytes), kept {}",
            tablePath,
            files.size(),
            bytes,
            kept);
      }
      return new VacuumResult(dryRun, files, bytes, kept);
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot vacuum Delta table " + tablePath, e);
    }
  }

  /** Adds the files of the removes deleted at or after the cutoff (and their vectors) to keep. */
  private static void keepUnexpiredTombstones(
      FileSystem fs, Path root, long cutoffMillis, Set<String> keep) throws IOException {
    Path log = new Path(root, "_delta_log");
    FileStatus[] commits;
    try {
      commits = fs.listStatus(log, p -> COMMIT_FILE.matcher(p.getName()).matches());
    } catch (FileNotFoundException e) {
      return;
    }
    for (FileStatus commit : commits) {
      if (commit.getModificationTime() < cutoffMillis - CLOCK_SLACK_MILLIS) {
        continue;
      }
      try (FSDataInputStream in = fs.open(commit.getPath());
          BufferedReader reader =
              new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
        String line;
        while ((line = reader.readLine()) != null) {
          if (line.isBlank()) {
            continue;
          }
          JsonNode remove = MAPPER.readTree(line).get("remove");
          if (remove == null
              || remove.path("deletionTimestamp").asLong(Long.MIN_VALUE) < cutoffMillis) {
            continue;
          }
          keep.add(qualify(fs, new Path(root, new Path(URI.create(remove.get("path").asText())))));
          JsonNode dv = remove.get("deletionVector");
          if (dv != null && !dv.isNull()) {
            String file =
                KernelInternals.deletionVectorFile(
                    root.toString(),
                    dv.path("storageType").asText(),
                    dv.path("pathOrInlineDv").asText(),
                    dv.path("sizeInBytes").asInt());
            if (file != null) {
              keep.add(qualify(fs, new Path(file)));
            }
          }
        }
      }
    }
  }

  private static String qualify(FileSystem fs, Path path) {
    return fs.makeQualified(path).toString();
  }
}
