package org.lakecdc.transforms.delta;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.OptionalLong;
import java.util.regex.Pattern;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;

/**
 * Reads a table's commit files ({@code _delta_log/<20-digit version>.json}, one action per line) as
 * written, independently of Kernel's log replay. Commits whose files were removed by log cleanup
 * ({@code delta.logRetentionDuration}, 30 days by default) are not listed.
 */
final class DeltaLogHistory {
  private static final ObjectMapper MAPPER = new ObjectMapper();
  private static final Pattern COMMIT_FILE = Pattern.compile("\\d{20}\\.json");

  private DeltaLogHistory() {}

  static List<CommitSummary> read(Configuration conf, String tablePath) {
    Path log = new Path(new Path(tablePath), "_delta_log");
    try {
      FileSystem fs = log.getFileSystem(conf);
      FileStatus[] files = fs.listStatus(log, p -> COMMIT_FILE.matcher(p.getName()).matches());
      Arrays.sort(files, Comparator.comparing(f -> f.getPath().getName()));
      List<CommitSummary> commits = new ArrayList<>(files.length);
      for (FileStatus file : files) {
        String name = file.getPath().getName();
        long version = Long.parseLong(name.substring(0, 20));
        commits.add(summarize(fs, file.getPath(), version));
      }
      return commits;
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot read the Delta log of " + tablePath, e);
    }
  }

  private static CommitSummary summarize(FileSystem fs, Path file, long version)
      throws IOException {
    long timestamp = 0;
    String operation = null;
    String appId = null;
    OptionalLong txnVersion = OptionalLong.empty();
    int added = 0;
    int removed = 0;
    boolean metadata = false;
    List<String> domains = new ArrayList<>();
    try (FSDataInputStream in = fs.open(file);
        BufferedReader reader =
            new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
      String line;
      while ((line = reader.readLine()) != null) {
        if (line.isBlank()) {
          continue;
        }
        JsonNode action = MAPPER.readTree(line);
        if (action.has("commitInfo")) {
          JsonNode info = action.get("commitInfo");
          timestamp = info.path("timestamp").asLong(0);
          operation = info.hasNonNull("operation") ? info.get("operation").asText() : null;
        } else if (action.has("txn")) {
          appId = action.get("txn").path("appId").asText();
          txnVersion = OptionalLong.of(action.get("txn").path("version").asLong());
        } else if (action.has("add")) {
          added++;
        } else if (action.has("remove")) {
          removed++;
        } else if (action.has("metaData")) {
          metadata = true;
        } else if (action.has("domainMetadata")) {
          domains.add(action.get("domainMetadata").path("domain").asText());
        }
      }
    }
    return new CommitSummary(
        version, timestamp, operation, appId, txnVersion, added, removed, metadata, domains);
  }
}
