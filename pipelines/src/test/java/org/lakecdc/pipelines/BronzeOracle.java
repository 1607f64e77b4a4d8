package org.lakecdc.pipelines;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.beam.sdk.values.Row;
import org.lakecdc.io.mssqlcdc.schema.MetadataColumns;

/** What the job tests read out of bronze rows: the change order and the {@code latest} oracle. */
public final class BronzeOracle {
  private BronzeOracle() {}

  /** Bronze change order: (_start_lsn, _command_id, _seqval, _operation), NULLs first. */
  static final Comparator<Row> CHANGE_ORDER =
      Comparator.comparing((Row r) -> r.getString(MetadataColumns.START_LSN))
          .thenComparing(
              r -> r.getInt32(MetadataColumns.COMMAND_ID),
              Comparator.nullsFirst(Comparator.naturalOrder()))
          .thenComparing(
              r -> r.getString(MetadataColumns.SEQVAL),
              Comparator.nullsFirst(Comparator.naturalOrder()))
          .thenComparing(r -> r.getInt32(MetadataColumns.OPERATION));

  /**
   * The {@code latest} oracle of docs/scenarios.md (C086, C087): from the newest snapshot's rows
   * on, without before-images, the last row per key in change order; keys whose last row is a
   * delete are gone.
   *
   * @param key an INT key column
   * @return key → the row's {@code columns} ({@link #normal} values), ordered by key
   */
  public static Map<Integer, List<Object>> latest(List<Row> bronze, String key, String... columns) {
    String snapshot =
        bronze.stream()
            .filter(r -> r.getInt32(MetadataColumns.OPERATION) == 0)
            .map(r -> r.getString(MetadataColumns.START_LSN))
            .max(Comparator.naturalOrder())
            .orElse("");
    List<Row> rows = new ArrayList<>(bronze);
    rows.removeIf(
        r ->
            r.getInt32(MetadataColumns.OPERATION) == 3
                || r.getString(MetadataColumns.START_LSN).compareTo(snapshot) < 0);
    rows.sort(CHANGE_ORDER);
    Map<Integer, List<Object>> latest = new TreeMap<>();
    for (Row r : rows) {
      if (r.getInt32(MetadataColumns.OPERATION) == 1) {
        latest.remove(r.getInt32(key));
      } else {
        List<Object> values = new ArrayList<>();
        for (String c : columns) {
          values.add(normal(r.getValue(c)));
        }
        latest.put(r.getInt32(key), values);
      }
    }
    return latest;
  }

  /**
   * Decimals as plain text without trailing zeros (compared by value), other values as they are.
   */
  static Object normal(Object value) {
    return value instanceof BigDecimal d ? d.stripTrailingZeros().toPlainString() : value;
  }
}
