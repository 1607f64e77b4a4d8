package org.lakecdc.pipelines;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.PriorityQueue;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.io.mssqlcdc.schema.MetadataColumns;
import org.lakecdc.pipelines.cli.CommandLine;
import org.lakecdc.pipelines.cli.ConsoleLogging;
import org.lakecdc.pipelines.cli.JobExit;
import org.lakecdc.pipelines.cli.ObjectStores;
import org.lakecdc.pipelines.cli.TableReading;
import org.lakecdc.pipelines.options.ShowOptions;
import org.lakecdc.transforms.Counts;
import org.lakecdc.transforms.delta.DeltaColumn;
import org.lakecdc.transforms.delta.DeltaTables;
import org.lakecdc.transforms.delta.ScanFile;
import org.lakecdc.transforms.delta.TableInfo;
import org.lakecdc.transforms.delta.TableKind;
import org.lakecdc.transforms.facts.FactsTable;
import org.lakecdc.transforms.history.HistoryState;

/**
 * The {@code show} command: prints the first rows of a Delta table with Delta Kernel (no Spark). A
 * bronze table (its {@code mssql_cdc.table_kind} is {@code bronze}) is ordered by the bronze order
 * key {@code (_start_lsn, _command_id, _seqval, _operation)}, NULL first, ties in stored order: the
 * whole table is scanned, keeping only the first {@code --limit} rows (a bounded priority queue). A
 * facts table is ordered the same way by {@code (written_at, app_id, batch_id)}: its oldest rows
 * first. Any other table prints its first rows in stored order (data files in the log's order),
 * reading no further.
 *
 * <p>Text: a line naming the table and the order, a header of the column names, one line per row;
 * timestamps in ISO-8601 UTC (TIMESTAMP_NTZ read as UTC), NULL as {@code NULL}, binary as {@code
 * 0x...}, each value cut to {@value #MAX_WIDTH} characters (a cut value ends in {@code ...}), no
 * blank at a line's end. With {@code --json}: one JSON object per row (JSON Lines), values in full.
 *
 * <p>Exit codes ({@link JobExit}): 0 printed; 2 a bad option (one {@code error:} line: no {@code
 * --table}, a path without a Delta table, a {@code --limit} below 1); 1 a failure reading.
 */
public final class Show {
  /** The widest a value prints in the text form, in characters. */
  static final int MAX_WIDTH = 40;

  /** The bronze order key, in order. */
  static final List<String> BRONZE_ORDER =
      List.of(
          MetadataColumns.START_LSN,
          MetadataColumns.COMMAND_ID,
          MetadataColumns.SEQVAL,
          MetadataColumns.OPERATION);

  private static final ObjectMapper JSON = new ObjectMapper();

  private Show() {}

  /** Entry point; {@link ShowOptions} lists the options. Exits the JVM with the code. */
  public static void main(String[] args) {
    JobExit.main(() -> run(args, System.out, System.err));
  }

  /**
   * Runs a command line and returns its exit code instead of exiting (what {@link #main} runs).
   *
   * @param args the command line
   * @param out where the rows go
   * @param err where the {@code error:} line goes
   * @return {@link JobExit#OK}, {@link JobExit#BAD_OPTION} or {@link JobExit#FAILED}
   */
  static int run(String[] args, PrintStream out, PrintStream err) {
    ShowOptions options;
    DeltaTables tables;
    String path;
    Instant asOf;
    try {
      options = CommandLine.parse(args, ShowOptions.class, "docs/status.md");
      org.lakecdc.transforms.delta.HadoopConf.checkOccurrences(
          "hadoopConf", CommandLine.values(args, "hadoopConf"));
      if (options.getTable() == null) {
        throw new IllegalArgumentException(
            "--table is required: the path or URI of the Delta table to print");
      }
      if (options.getLimit() < 1) {
        throw new IllegalArgumentException(
            "--limit must be a positive integer, not '" + options.getLimit() + "'");
      }
      ObjectStores.check(
          TableReading.conf(options), TableReading.tablePath("table", options.getTable()));
      tables = TableReading.tables(options);
      path = TableReading.existingTable(tables, "table", options.getTable());
      asOf = asOf(tables, path, options.getAsOf());
      out = TableReading.output(options, out);
    } catch (IllegalArgumentException e) {
      err.println("error: " + TableReading.firstLine(e));
      return JobExit.BAD_OPTION;
    }
    try {
      ConsoleLogging.startFile(options);
      TableInfo info = tables.describe(path);
      List<String> order = orderKey(info.kind().orElse(""));
      List<String> columns = info.columns().stream().map(DeltaColumn::name).toList();
      List<Map<String, Object>> rows =
          asOf != null
              ? firstCurrent(tables, path, asOf, options.getLimit())
              : order.isEmpty()
                  ? firstStored(tables, path, options.getLimit())
                  : firstInOrder(tables, path, options.getLimit(), order);
      if (options.getJson()) {
        for (Map<String, Object> row : rows) {
          ObjectNode node = JSON.createObjectNode();
          for (String column : columns) {
            TableReading.put(node, column, row.get(column));
          }
          out.println(JSON.writeValueAsString(node));
        }
      } else if (asOf != null && rows.isEmpty()) {
        out.printf(
            "%s (%s): as of %s, %s%n",
            path, info.kind().orElse("no table kind"), asOf, noVersionAt(tables, path, asOf));
      } else {
        out.printf(
            "%s (%s): %s%s%n",
            path,
            info.kind().orElse("no table kind"),
            (asOf != null ? "as of " + asOf + ", " : "")
                + (rows.size() == 1
                    ? "the first row"
                    : "the first " + Counts.of(rows.size(), "row", "rows")),
            asOf != null || order.isEmpty()
                ? " in stored order"
                : " by " + String.join(", ", order));
        printTable(columns, rows, out);
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

  /**
   * The instant of {@code --asOf}, or null when it is not given.
   *
   * @throws IllegalArgumentException naming {@code --asOf}: a value that is no ISO-8601 instant, or
   *     a table that is not a history table
   */
  static @Nullable Instant asOf(DeltaTables tables, String path, @Nullable String value) {
    if (value == null) {
      return null;
    }
    Instant at;
    try {
      at = java.time.OffsetDateTime.parse(value).toInstant();
    } catch (java.time.format.DateTimeParseException e) {
      throw new IllegalArgumentException(
          "--asOf must be an ISO-8601 instant with a zone offset such as 2026-11-01T08:30:00Z, not '"
              + value
              + "'");
    }
    String kind = tables.describe(path).kind().orElse("no table kind");
    if (!kind.equalsIgnoreCase(TableKind.HISTORY.propertyValue())) {
      throw new IllegalArgumentException(
          "--asOf reads a history table; "
              + path
              + " is a "
              + kind
              + " table (give --table a history table, or leave --asOf out)");
    }
    return at;
  }

  /**
   * Why a history table shows no row as of {@code at}: {@code no version of any key: the history
   * starts at <its first _valid_from_ts>} (e.g. a history built after a re-snapshot, which starts
   * at the current generation), {@code no version of any key: the history holds no version yet}, or
   * {@code no key has a version current then: every key it held by then was deleted}.
   */
  private static String noVersionAt(DeltaTables tables, String path, Instant at) {
    Optional<Instant> first = HistoryState.firstValidFrom(tables, path);
    if (first.isEmpty()) {
      return "no version of any key: the history holds no version yet";
    }
    if (first.get().isAfter(at)) {
      return "no version of any key: the history starts at " + first.get();
    }
    return "no key has a version current then: every key it held by then was deleted";
  }

  /** The first {@code limit} rows current at {@code at}, in stored order, streamed. */
  static List<Map<String, Object>> firstCurrent(
      DeltaTables tables, String path, Instant at, int limit) {
    List<Map<String, Object>> first = new ArrayList<>();
    try (var rows = HistoryState.at(tables, path, at)) {
      while (rows.hasNext() && first.size() < limit) {
        first.add(rows.next());
      }
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot read Delta table " + path, e);
    }
    return first;
  }

  /** Key values (text or numbers of one column) compared naturally, NULL first. */
  private static final Comparator<Comparable<Object>> NULL_FIRST =
      Comparator.nullsFirst(Comparator.naturalOrder());

  /** A key column's value: comparable within the column (its values have one Java type). */
  @SuppressWarnings("unchecked")
  private static Comparable<Object> key(Scanned scanned, String column) {
    return (Comparable<Object>) scanned.row().get(column);
  }

  /** A row with its place in the scan, so that equal keys keep their stored order. */
  private record Scanned(long seq, Map<String, Object> row) {}

  /** The facts order: when the row was written, then the app id and the batch. */
  static final List<String> FACTS_ORDER =
      List.of(FactsTable.WRITTEN_AT, FactsTable.APP_ID, FactsTable.BATCH_ID);

  /**
   * The columns a table of this kind ({@code mssql_cdc.table_kind}) is shown in order of: bronze's
   * order key, facts' {@link #FACTS_ORDER}; empty for the others (stored order).
   */
  static List<String> orderKey(String kind) {
    if (kind.equalsIgnoreCase(TableKind.BRONZE.propertyValue())) {
      return BRONZE_ORDER;
    }
    if (kind.equalsIgnoreCase(TableKind.FACTS.propertyValue())) {
      return FACTS_ORDER;
    }
    return List.of();
  }

  /**
   * The order of {@code columns} with NULL first (the key columns a table lacks read as NULL), then
   * the stored order.
   */
  private static Comparator<Scanned> comparator(List<String> columns) {
    Comparator<Scanned> order = (a, b) -> 0;
    for (String column : columns) {
      order = order.thenComparing(s -> key(s, column), NULL_FIRST);
    }
    return order.thenComparingLong(Scanned::seq);
  }

  /**
   * The first {@code limit} rows of a bronze table by the bronze order key ({@link #firstInOrder}).
   */
  static List<Map<String, Object>> firstInBronzeOrder(DeltaTables tables, String path, int limit) {
    return firstInOrder(tables, path, limit, BRONZE_ORDER);
  }

  /**
   * The first {@code limit} rows by these columns: one pass over every data file, a Parquet batch
   * at a time, holding at most {@code limit} rows (a max-heap whose head is the last row kept,
   * replaced by any row before it).
   */
  static List<Map<String, Object>> firstInOrder(
      DeltaTables tables, String path, int limit, List<String> columns) {
    Comparator<Scanned> byKey = comparator(columns);
    PriorityQueue<Scanned> kept = new PriorityQueue<>(limit, byKey.reversed());
    long seq = 0;
    for (ScanFile file : tables.scanFiles(path)) {
      try (var rows = tables.readScanFile(file)) {
        while (rows.hasNext()) {
          Scanned row = new Scanned(seq++, rows.next());
          if (kept.size() < limit) {
            kept.add(row);
          } else if (byKey.compare(row, kept.peek()) < 0) {
            kept.poll();
            kept.add(row);
          }
        }
      } catch (IOException e) {
        throw new UncheckedIOException("Cannot read Delta table " + path, e);
      }
    }
    List<Scanned> sorted = new ArrayList<>(kept);
    sorted.sort(byKey);
    return sorted.stream().map(Scanned::row).toList();
  }

  /** The first {@code limit} rows in stored order, reading no file after the one that ends them. */
  static List<Map<String, Object>> firstStored(DeltaTables tables, String path, int limit) {
    List<Map<String, Object>> first = new ArrayList<>();
    for (ScanFile file : tables.scanFiles(path)) {
      try (var rows = tables.readScanFile(file)) {
        while (rows.hasNext() && first.size() < limit) {
          first.add(rows.next());
        }
      } catch (IOException e) {
        throw new UncheckedIOException("Cannot read Delta table " + path, e);
      }
      if (first.size() >= limit) {
        break;
      }
    }
    return first;
  }

  /** A value for the text form: {@link TableReading#text(Object)} cut to {@link #MAX_WIDTH}. */
  static String cell(Object value) {
    String text = TableReading.text(value).replaceAll("\\p{Cntrl}", " ");
    return text.length() <= MAX_WIDTH ? text : text.substring(0, MAX_WIDTH - 3) + "...";
  }

  /** The header and the rows, each column as wide as its widest cell (and name), space apart. */
  static void printTable(List<String> columns, List<Map<String, Object>> rows, PrintStream out) {
    List<List<String>> cells = new ArrayList<>();
    int[] widths = new int[columns.size()];
    List<String> header = new ArrayList<>();
    for (int i = 0; i < columns.size(); i++) {
      String name = columns.get(i);
      header.add(name.length() <= MAX_WIDTH ? name : name.substring(0, MAX_WIDTH - 3) + "...");
      widths[i] = header.get(i).length();
    }
    for (Map<String, Object> row : rows) {
      List<String> line = new ArrayList<>();
      for (int i = 0; i < columns.size(); i++) {
        String cell = cell(row.get(columns.get(i)));
        widths[i] = Math.max(widths[i], cell.length());
        line.add(cell);
      }
      cells.add(line);
    }
    out.println(line(header, widths));
    for (List<String> line : cells) {
      out.println(line(line, widths));
    }
  }

  private static String line(List<String> cells, int[] widths) {
    StringBuilder text = new StringBuilder();
    for (int i = 0; i < cells.size(); i++) {
      if (i > 0) {
        text.append("  ");
      }
      text.append(cells.get(i));
      if (i < cells.size() - 1) {
        text.append(" ".repeat(widths[i] - cells.get(i).length()));
      }
    }
    // A last value ending in spaces (a padded CHAR) would leave invisible trailing blanks.
    return text.toString().stripTrailing();
  }
}
