package org.lakecdc.pipelines.history;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.pipelines.cli.CommandLine;
import org.lakecdc.pipelines.cli.OptionRefusedException;
import org.lakecdc.transforms.Counts;
import org.lakecdc.transforms.delta.DeltaColumn;
import org.lakecdc.transforms.delta.DeltaTables;
import org.lakecdc.transforms.delta.TableKind;
import org.lakecdc.transforms.history.HistoryResult;
import org.lakecdc.transforms.silver.SilverTable;

/**
 * The checks of a job's history tables before anything is written, and the line a job prints per
 * history table. Every refusal is an {@link OptionRefusedException}: one line naming the option,
 * the value and what is accepted (exit code 2).
 */
public final class HistoryRun {
  private HistoryRun() {}

  /**
   * The columns of {@code --historyColumns}, or empty when it is not given (every column).
   *
   * @throws OptionRefusedException for an empty column or a column listed twice (ignoring case)
   */
  public static List<String> columns(@Nullable String value) {
    if (value == null) {
      return List.of();
    }
    List<String> columns = new ArrayList<>();
    Set<String> seen = new java.util.HashSet<>();
    for (String column : value.split(",", -1)) {
      if (column.isBlank() || !seen.add(column.strip().toLowerCase(Locale.ROOT))) {
        throw new OptionRefusedException(
            "--historyColumns must list captured columns separated by commas, each once, not '"
                + value
                + "'");
      }
      columns.add(column.strip());
    }
    return columns;
  }

  /**
   * Refuses a history path that is the table's bronze or silver, that holds a Delta table of
   * another kind, or that another table of the run also uses.
   *
   * @param option the option that gave the path ({@code history} or {@code historyTemplate})
   * @param histories each table's history path (normalized) by capture instance
   * @param others the run's other tables (bronze, silver, facts, control; normalized)
   * @throws OptionRefusedException naming the option and the path
   */
  public static void checkPaths(
      DeltaTables tables, String option, Map<String, String> histories, Collection<String> others) {
    Map<String, String> seen = new HashMap<>();
    for (Map.Entry<String, String> entry : histories.entrySet()) {
      String path = entry.getValue();
      String before = seen.put(path, entry.getKey());
      if (before != null) {
        throw new OptionRefusedException(
            "--"
                + option
                + ": tables "
                + before
                + " and "
                + entry.getKey()
                + " would share the history table "
                + path
                + ": give each table its own history (a --historyTemplate with {ci}); nothing was"
                + " written");
      }
      if (others.contains(path)) {
        throw new OptionRefusedException(
            "--"
                + option
                + ": "
                + path
                + " is another table of this run (bronze, silver, facts or control), not a history"
                + " table: give the history a path of its own; nothing was written");
      }
      CommandLine.writableTableLocation(option, path);
      if (tables.exists(path)) {
        String history = TableKind.HISTORY.propertyValue();
        tables
            .describe(path)
            .kind()
            .filter(kind -> !kind.equals(history))
            .ifPresent(
                kind -> {
                  throw new OptionRefusedException(
                      "--"
                          + option
                          + ": "
                          + path
                          + " is a "
                          + kind
                          + " table, not a history table: give the history a path of its own;"
                          + " nothing was written");
                });
      }
    }
  }

  /**
   * Refuses tracked columns that are not captured columns of an existing bronze table.
   *
   * @throws OptionRefusedException naming {@code --historyColumns}
   */
  public static void checkColumns(DeltaTables tables, String bronze, List<String> columns) {
    if (columns.isEmpty() || !tables.exists(bronze)) {
      return;
    }
    List<String> captured =
        SilverTable.capturedColumns(DeltaColumn.toBeamSchema(tables.describe(bronze).columns()));
    Set<String> lower = new TreeSet<>();
    for (String column : captured) {
      lower.add(column.toLowerCase(Locale.ROOT));
    }
    List<String> missing = new ArrayList<>();
    for (String column : columns) {
      if (!lower.contains(column.toLowerCase(Locale.ROOT))) {
        missing.add(column);
      }
    }
    if (!missing.isEmpty()) {
      throw new OptionRefusedException(
          "--historyColumns: "
              + missing
              + " are not captured columns of bronze "
              + bronze
              + " (captured: "
              + String.join(", ", captured)
              + "); nothing was written");
    }
  }

  /**
   * The history line of a table: {@code History <ci> <path>: applied_lsn <lsn>, finalized_until
   * <time> UTC, <n> waves, <o> versions opened, <c> closed, <u> updated in place} ({@code none yet}
   * for a missing position or verdict; {@code bronze not found} when bronze does not exist).
   */
  public static String line(String name, String path, HistoryResult result) {
    if (!result.bronzeFound()) {
      return "History " + name + " " + path + ": bronze not found, nothing applied";
    }
    return String.format(
        Locale.ROOT,
        "History %s %s: applied_lsn %s, finalized_until %s, %s, %s opened, %,d closed, %,d updated"
            + " in place",
        name,
        path,
        result.appliedLsn() == null ? "none yet" : result.appliedLsn(),
        result.finalizedUntil() == null ? "none yet" : result.finalizedUntil() + " UTC",
        Counts.of(result.waves(), "wave", "waves"),
        Counts.of(result.opened(), "version", "versions"),
        result.closed(),
        result.updatedInPlace());
  }
}
