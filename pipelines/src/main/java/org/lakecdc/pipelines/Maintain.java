package org.lakecdc.pipelines;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.PrintStream;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.pipelines.cli.CommandLine;
import org.lakecdc.pipelines.cli.ConsoleLogging;
import org.lakecdc.pipelines.cli.JobExit;
import org.lakecdc.pipelines.cli.ObjectStores;
import org.lakecdc.pipelines.cli.TableReading;
import org.lakecdc.pipelines.options.MaintainOptions;
import org.lakecdc.transforms.delta.DeltaTables;
import org.lakecdc.transforms.delta.FileCompaction;
import org.lakecdc.transforms.delta.SmallFileCompaction;
import org.lakecdc.transforms.delta.TableKind;
import org.lakecdc.transforms.delta.VacuumResult;
import org.lakecdc.transforms.history.HistoryTable;
import org.lakecdc.transforms.silver.SilverMaintenance;

/**
 * The {@code maintain} command: compaction and vacuum of the tables the job writes (bronze, facts,
 * control), with Delta Kernel in one JVM (no Spark). Silver has its own, sorted by key ({@code
 * ApplyChanges --maintenance}). A history table is compacted as {@code ApplyChanges --history
 * --maintenance=compact} does it (files of closed versions and files of current ones never packed
 * together: docs/tables.md "Maintenance of history"), with the same line.
 *
 * <ul>
 *   <li><b>compact</b> rewrites the table's files smaller than 8 MiB into one file, rows in commit
 *       order, in one {@code dataChange = false} commit, then checkpoints that version ({@link
 *       DeltaTables#compactSmallFiles}): what the job does to facts and control by itself once per
 *       checkpoint interval. Prints {@code Compaction of <path>: <n> small files into <m> (<rows>
 *       rows), version <v>; <k> data files now} or {@code Compaction of <path>: nothing to compact
 *       (<k> data files)}.
 *   <li><b>vacuum</b> deletes the data files no version within {@code --retentionHours} references,
 *       uncommitted files older than that included (the orphans a killed run leaves, {@link
 *       DeltaTables#vacuum}); {@code _delta_log} is never touched. Prints {@code Vacuum of <path>:
 *       <n> files deleted (<bytes> bytes), <k> kept; retention <h> h} ({@code to delete} on a dry
 *       run).
 * </ul>
 *
 * Compaction runs before vacuum; tables one after the other, in the order given. Every option is
 * checked, and every table must exist, before anything is written. With {@code --json} each line is
 * one JSON object instead: {@code table}, {@code maintenance} ({@code compact} or {@code vacuum}),
 * then for compact {@code committed}, {@code version}, {@code files_removed}, {@code files_added},
 * {@code rows}, {@code files_after}, for vacuum {@code dry_run}, {@code files_deleted}, {@code
 * bytes}, {@code files_kept}, {@code retention_hours}.
 *
 * <p>Exit codes ({@link JobExit}): 0 done; 2 a bad option (one {@code error:} line: no {@code
 * --table} or {@code --maintenance}, an unknown maintenance word, a retention below 1 hour, a path
 * without a Delta table); 1 a failure (a compaction that kept losing to concurrent commits
 * included: nothing of it is visible).
 */
public final class Maintain {
  private static final ObjectMapper JSON = new ObjectMapper();

  /** The operations {@code --maintenance} accepts, in the order they run. */
  static final List<String> OPERATIONS = List.of("compact", "vacuum");

  private Maintain() {}

  /** Entry point; {@link MaintainOptions} lists the options. Exits the JVM with the code. */
  public static void main(String[] args) {
    JobExit.main(() -> run(args, System.out, System.err, Clock.systemUTC()));
  }

  /**
   * Runs a command line and returns its exit code instead of exiting (what {@link #main} runs).
   *
   * @param args the command line
   * @param out where the result lines go
   * @param err where the {@code error:} line goes
   * @param clock the clock the vacuum measures the retention back from (UTC)
   * @return {@link JobExit#OK}, {@link JobExit#BAD_OPTION} or {@link JobExit#FAILED}
   */
  static int run(String[] args, PrintStream out, PrintStream err, Clock clock) {
    MaintainOptions options;
    DeltaTables tables;
    List<String> paths = new ArrayList<>();
    Set<String> operations;
    Duration retention;
    try {
      options = CommandLine.parse(args, MaintainOptions.class, "docs/status.md");
      org.lakecdc.transforms.delta.HadoopConf.checkOccurrences(
          "hadoopConf", CommandLine.values(args, "hadoopConf"));
      if (options.getTable() == null) {
        throw new IllegalArgumentException(
            "--table is required: the path or URI of the Delta table to maintain (comma-separated"
                + " for several)");
      }
      operations = operations(options.getMaintenance());
      retention = CommandLine.retentionHours("retentionHours", options.getRetentionHours());
      List<String> given = new ArrayList<>();
      for (String table : options.getTable().split(",", -1)) {
        given.add(TableReading.tablePath("table", table.strip()));
      }
      ObjectStores.check(TableReading.conf(options), given);
      tables = TableReading.tables(options);
      for (String table : options.getTable().split(",", -1)) {
        String path = TableReading.existingTable(tables, "table", table.strip());
        if (!paths.contains(path)) {
          paths.add(path);
        }
      }
      out = TableReading.output(options, out);
    } catch (IllegalArgumentException e) {
      err.println("error: " + TableReading.firstLine(e));
      return JobExit.BAD_OPTION;
    }
    try {
      ConsoleLogging.startFile(options);
      for (String path : paths) {
        if (operations.contains("compact")) {
          SmallFileCompaction.Outcome outcome =
              isHistory(tables, path)
                  ? compactHistory(tables, path)
                  : tables.compactSmallFiles(path);
          out.println(options.getJson() ? compactJson(path, outcome) : compactLine(path, outcome));
        }
        if (operations.contains("vacuum")) {
          VacuumResult result =
              tables.vacuum(path, clock.instant().minus(retention), options.getDryRun());
          out.println(
              options.getJson()
                  ? vacuumJson(path, result, retention)
                  : vacuumLine(path, result, retention));
        }
      }
      out.flush();
      if (options.getOutput() != null) {
        out.close();
      }
    } catch (Throwable t) {
      return JobExit.report(t, err, options.getVerbose());
    }
    return JobExit.OK;
  }

  private static boolean isHistory(DeltaTables tables, String path) {
    return tables
        .describe(path)
        .kind()
        .filter(kind -> kind.equalsIgnoreCase(TableKind.HISTORY.propertyValue()))
        .isPresent();
  }

  /**
   * A history table's compaction: its own ({@code ApplyChanges --history --maintenance=compact}),
   * which never packs files of closed versions with files of current ones, so later waves still
   * decode only current versions; the small-file compaction of bronze, facts and control would put
   * both kinds, in commit order, into one file.
   */
  private static SmallFileCompaction.Outcome compactHistory(DeltaTables tables, String path) {
    int before = tables.dataFileDetails(path).size();
    SilverMaintenance.CompactionResult c =
        new SilverMaintenance(tables)
            .compact(
                path,
                List.of(),
                SilverMaintenance.CompactionOptions.DEFAULTS,
                HistoryTable::fileKind);
    return new SmallFileCompaction.Outcome(
        new FileCompaction.Result(
            c.committed(),
            c.version(),
            c.filesRemoved(),
            c.filesAdded(),
            c.rowsWritten(),
            c.deletedRowsPurged()),
        before,
        before - c.filesRemoved() + c.filesAdded(),
        1);
  }

  /** What a compaction did, as its text line. */
  private static String compactLine(String path, SmallFileCompaction.Outcome outcome) {
    FileCompaction.Result result = outcome.compaction();
    if (!result.committed()) {
      return String.format(
          Locale.ROOT,
          "Compaction of %s: nothing to compact (%,d data file%s)",
          path,
          outcome.filesAfter(),
          outcome.filesAfter() == 1 ? "" : "s");
    }
    return String.format(
        Locale.ROOT,
        "Compaction of %s: %,d small files into %,d (%,d rows), version %d; %,d data file%s now",
        path,
        result.filesRemoved(),
        result.filesAdded(),
        result.rowsWritten(),
        result.version(),
        outcome.filesAfter(),
        outcome.filesAfter() == 1 ? "" : "s");
  }

  /** What a compaction did, as one JSON object. */
  private static String compactJson(String path, SmallFileCompaction.Outcome outcome)
      throws IOException {
    FileCompaction.Result result = outcome.compaction();
    ObjectNode node = JSON.createObjectNode();
    node.put("table", path);
    node.put("maintenance", "compact");
    node.put("committed", result.committed());
    node.put("version", result.version());
    node.put("files_removed", result.filesRemoved());
    node.put("files_added", result.filesAdded());
    node.put("rows", result.rowsWritten());
    node.put("files_after", outcome.filesAfter());
    return JSON.writeValueAsString(node);
  }

  /** What a vacuum did, as its text line. */
  private static String vacuumLine(String path, VacuumResult result, Duration retention) {
    return String.format(
        Locale.ROOT,
        "Vacuum of %s%s: %,d files %s (%,d bytes), %,d kept; retention %d h",
        path,
        result.dryRun() ? " (dry run)" : "",
        result.files().size(),
        result.dryRun() ? "to delete" : "deleted",
        result.bytes(),
        result.filesKept(),
        retention.toHours());
  }

  /** What a vacuum did, as one JSON object. */
  private static String vacuumJson(String path, VacuumResult result, Duration retention)
      throws IOException {
    ObjectNode node = JSON.createObjectNode();
    node.put("table", path);
    node.put("maintenance", "vacuum");
    node.put("dry_run", result.dryRun());
    node.put("files_deleted", result.files().size());
    node.put("bytes", result.bytes());
    node.put("files_kept", result.filesKept());
    node.put("retention_hours", retention.toHours());
    return JSON.writeValueAsString(node);
  }

  /**
   * The operations of {@code --maintenance}, in the order they run.
   *
   * @throws IllegalArgumentException naming the option and what it accepts
   */
  static Set<String> operations(@Nullable String value) {
    if (value == null) {
      throw new IllegalArgumentException(
          "--maintenance is required: vacuum, compact or compact,vacuum");
    }
    Set<String> chosen = new LinkedHashSet<>();
    for (String part : value.split(",", -1)) {
      String op = part.strip().toLowerCase(Locale.ROOT);
      if (!OPERATIONS.contains(op) || !chosen.add(op)) {
        throw new IllegalArgumentException(
            "--maintenance must be vacuum, compact or compact,vacuum, not '" + value + "'");
      }
    }
    Set<String> ordered = new LinkedHashSet<>();
    for (String op : OPERATIONS) {
      if (chosen.contains(op)) {
        ordered.add(op);
      }
    }
    return ordered;
  }
}
