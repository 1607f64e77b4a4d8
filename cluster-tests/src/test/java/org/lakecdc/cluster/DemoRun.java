package org.lakecdc.cluster;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * One run of the main job on the demo's five tables in one pipeline ({@link #TABLES_FILE}): its
 * options file, with the simulator's database and the Delta tables at paths every process of the
 * cluster reaches, and its tables read back with delta-spark.
 *
 * <p>The tables' root is {@code <run dir>/lake}, or another URI with the local directory its files
 * are in (an {@code s3a://bucket/prefix} on the local S3 server, whose objects are files under the
 * bucket's directory), the store's settings then among the run's options.
 */
final class DemoRun {
  /** The demo's five capture instances, in the tables file's order. */
  static final List<String> TABLES =
      List.of("dbo_orders", "dbo_lineitem", "dbo_customer", "dbo_part", "dbo_supplier");

  /**
   * S of the demo database's bootstrap snapshots: {@code max_lsn} after the first half of its
   * transactions, the same in every newly built demo of {@link DemoRun}'s options.
   */
  static final String DEMO_S = "0x0000002A0000010002F1";

  /**
   * The run's tables file: {@code templates/many-tables.options}' five tables, of which only
   * dbo_supplier (10 rows) takes a bootstrap snapshot; the other four start without one after the
   * LSN their snapshot would have been stamped with ({@code --bootstrap=false --startingLsn=}{@link
   * #DEMO_S}), so they stream the same 45 batches. Five bootstrap snapshots made most of a run's
   * time without adding to what a worker's death tests: the stream's batches, facts, verdicts and
   * silver applies; dbo_supplier's is read by the run's own pipeline, in a branch of its own.
   */
  static final List<String> TABLES_FILE =
      List.of(
          "dbo_orders --bootstrap=false --startingLsn=" + DEMO_S,
          "dbo_lineitem --maxCommitsPerBatch=20 --bootstrap=false --startingLsn=" + DEMO_S,
          "dbo_customer --bootstrap=false --startingLsn=" + DEMO_S,
          "dbo_part --bootstrap=false --startingLsn=" + DEMO_S,
          "dbo_supplier");

  /**
   * Columns whose values are the run's own timing (when, how long, the simulator's clock at commit,
   * the seconds its client measured reading a batch): left out when two runs' tables are compared.
   */
  static final Set<String> TIMING_COLUMNS =
      Set.of(
          "started_at",
          "duration_ms",
          "written_at",
          "capture_lag_seconds",
          "updated_at",
          "read_seconds");

  /**
   * The control table's columns that name the batch which last moved a verdict ({@code end_lsn},
   * {@code end_commit_ts}): left out when two runs' control tables are compared. A verdict step is
   * written after its batch's bronze and facts commits; a run that dies between the two leaves the
   * step to the next batch whose end moves the verdict (after a restart, the first batch the
   * restarted job commits), so a restarted run can record a later batch's end beside the same
   * {@code finalized_until}. What exactly once promises, the verdict itself, silver's positions and
   * the lost periods, is compared.
   */
  static final Set<String> BATCH_END_COLUMNS = Set.of("end_lsn", "end_commit_ts");

  /** A bronze table's id in a facts row's detail: each run's bronze tables have their own. */
  private static final java.util.regex.Pattern TARGET_ID =
      java.util.regex.Pattern.compile("\"target_id\":\"[0-9a-f-]{36}\"");

  final String name;
  final Path dir;
  final String tableRoot;

  /** The local directory the files under {@link #tableRoot} are in. */
  private final Path localRoot;

  final Path options;

  /** A run named {@code name} in {@code dir}: its source, options and tables ({@code dir/lake}). */
  DemoRun(String name, Path dir, List<String> extraOptions) throws IOException {
    this(name, dir, dir.resolve("lake").toString(), dir.resolve("lake"), extraOptions);
  }

  /**
   * A run named {@code name} in {@code dir} (its source and options) whose tables are under {@code
   * tableRoot} (a path or URI the job takes), their files in the local directory {@code localRoot};
   * {@code extraOptions} follow the run's own (a store's {@code --hadoopConf}, say).
   */
  DemoRun(String name, Path dir, String tableRoot, Path localRoot, List<String> extraOptions)
      throws IOException {
    this.name = name;
    this.dir = dir;
    Files.createDirectories(dir);
    this.tableRoot = tableRoot;
    this.localRoot = localRoot;
    List<String> lines = new ArrayList<>();
    Path tablesFile = dir.resolve("tables.options");
    Files.write(tablesFile, TABLES_FILE);
    lines.add("--tablesFile=" + tablesFile);
    lines.add("--fakePath=" + dir.resolve("source"));
    lines.add("--buildDemo=true");
    lines.add("--demoScale=0.001");
    lines.add("--demoTransactions=100");
    lines.add("--maxCommitsPerBatch=10");
    lines.add("--targetTemplate=" + tableRoot + "/{ci}");
    lines.add("--factsTable=" + tableRoot + "/facts");
    lines.add("--controlTable=" + tableRoot + "/table_finalization");
    lines.add("--silverTemplate=" + tableRoot + "/silver/{ci}");
    lines.addAll(extraOptions);
    this.options = dir.resolve(name + ".options");
    Files.write(options, lines);
  }

  /** The run's Delta tables by name: each bronze, facts, control, each silver. */
  Map<String, String> tables() {
    Map<String, String> out = new LinkedHashMap<>();
    for (String ci : TABLES) {
      out.put(ci, tableRoot + "/" + ci);
    }
    out.put("facts", tableRoot + "/facts");
    out.put("table_finalization", tableRoot + "/table_finalization");
    for (String ci : TABLES) {
      out.put("silver/" + ci, tableRoot + "/silver/" + ci);
    }
    return out;
  }

  /** The local directory of every table's files, in {@link #tables()}' order. */
  List<Path> localTables() {
    return tables().keySet().stream().map(this::localTable).toList();
  }

  /** The local directory of a table's files ({@link #tables()}' name). */
  Path localTable(String table) {
    return localRoot.resolve(tables().get(table).substring(tableRoot.length() + 1));
  }

  /**
   * Every table's rows as delta-spark reads them, one line per row (its values joined by {@code |},
   * the run's table root replaced by {@code <root>}, a bronze table id in a detail by {@code <id>},
   * {@link #TIMING_COLUMNS} left out, and the control table's {@link #BATCH_END_COLUMNS}), sorted.
   */
  Map<String, List<String>> contents(SparkSession spark) {
    Map<String, List<String>> out = new LinkedHashMap<>();
    tables()
        .forEach(
            (table, path) -> {
              List<String> left = new ArrayList<>(TIMING_COLUMNS);
              if (table.equals("table_finalization")) {
                left.addAll(BATCH_END_COLUMNS);
              }
              Dataset<Row> rows =
                  spark.read().format("delta").load(path).drop(left.toArray(String[]::new));
              out.put(
                  table,
                  rows.collectAsList().stream()
                      .map(
                          r ->
                              TARGET_ID
                                  .matcher(r.mkString("|").replace(tableRoot, "<root>"))
                                  .replaceAll("\"target_id\":\"<id>\""))
                      .sorted()
                      .collect(Collectors.toList()));
            });
    return out;
  }
}
