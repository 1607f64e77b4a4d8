package org.lakecdc.transforms.history;

import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import org.lakecdc.io.mssqlcdc.schema.MetadataColumns;
import org.lakecdc.transforms.delta.DeltaTables;
import org.lakecdc.transforms.silver.LatestImage;

/**
 * The proof's two sides for tests: the state at an instant T computed from bronze alone (the newest
 * whole snapshot committed at or before T, then every change after it committed at or before T, in
 * bronze's order), and the state the history table says was current at T ({@code _valid_from_ts <=
 * T < _valid_to_ts}, or open). Keys and values as text ({@code "null"} for NULL).
 */
final class HistoryModel {
  private HistoryModel() {}

  /** Key to the text of the given columns, from bronze rows committed at or before T. */
  static Map<String, String> fromBronze(
      DeltaTables tables, String bronze, LocalDateTime t, String key, List<String> columns) {
    List<Map<String, Object>> rows = tables.scan(bronze);
    String snapshot = null;
    for (Map<String, Object> row : rows) {
      if (op(row) == 0 && !ts(row).isAfter(t)) {
        String s = (String) row.get(MetadataColumns.SNAPSHOT);
        if (snapshot == null || s.compareTo(snapshot) > 0) {
          snapshot = s;
        }
      }
    }
    Map<String, String> state = new TreeMap<>();
    List<Map<String, Object>> changes = new ArrayList<>();
    for (Map<String, Object> row : rows) {
      if (op(row) == 0) {
        if (Objects.equals(row.get(MetadataColumns.SNAPSHOT), snapshot)) {
          state.put(String.valueOf(row.get(key)), text(row, columns));
        }
      } else if (!ts(row).isAfter(t)
          && (snapshot == null
              || ((String) row.get(MetadataColumns.START_LSN)).compareTo(snapshot) > 0)) {
        changes.add(row);
      }
    }
    changes.sort(LatestImage.order(true));
    for (Map<String, Object> row : changes) {
      if (LatestImage.deletes(op(row))) {
        state.remove(String.valueOf(row.get(key)));
      } else {
        state.put(String.valueOf(row.get(key)), text(row, columns));
      }
    }
    return state;
  }

  /** Key to the text of the given columns of the history's versions current at T. */
  static Map<String, String> fromHistory(
      DeltaTables tables, String history, LocalDateTime t, String key, List<String> columns) {
    Map<String, String> state = new TreeMap<>();
    for (Map<String, Object> row : tables.scan(history)) {
      LocalDateTime from = time(row.get(HistoryTable.VALID_FROM_TS));
      LocalDateTime to = time(row.get(HistoryTable.VALID_TO_TS));
      if (!from.isAfter(t) && (to == null || t.isBefore(to))) {
        String previous = state.put(String.valueOf(row.get(key)), text(row, columns));
        if (previous != null) {
          throw new AssertionError("Two versions of key " + row.get(key) + " current at " + t);
        }
      }
    }
    return state;
  }

  /** Every row of the history as sorted text, all columns (an identical table has equal texts). */
  static List<String> allRows(DeltaTables tables, String history) {
    List<String> rows = new ArrayList<>();
    for (Map<String, Object> row : tables.scan(history)) {
      rows.add(new TreeMap<>(row).toString());
    }
    rows.sort(Comparator.naturalOrder());
    return rows;
  }

  private static String text(Map<String, Object> row, List<String> columns) {
    List<String> values = new ArrayList<>();
    for (String column : columns) {
      values.add(String.valueOf(row.get(column)));
    }
    return String.join("|", values);
  }

  private static int op(Map<String, Object> row) {
    return ((Number) row.get(MetadataColumns.OPERATION)).intValue();
  }

  private static LocalDateTime ts(Map<String, Object> row) {
    return time(row.get(MetadataColumns.COMMIT_TS));
  }

  static LocalDateTime time(Object value) {
    if (value == null) {
      return null;
    }
    return value instanceof Instant instant
        ? LocalDateTime.ofInstant(instant, ZoneOffset.UTC)
        : (LocalDateTime) value;
  }
}
