package org.lakecdc.transforms.reconcile;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import org.checkerframework.checker.nullness.qual.Nullable;

/**
 * Keys as the reconcile report writes them (docs/behaviour.md §11.3): a compact JSON object of the
 * key columns in key order, {@code {"order_id":3}}, a NULL value as {@code null} ({@code
 * {"order_id":null}}), numbers as JSON numbers, everything else (dates, times, decimals, text) as
 * JSON strings in {@link RowHash}'s canonical text. Key equality across the source, silver and
 * bronze is equality of this text: null-safe, and a NULL key is one key.
 */
public final class KeyJson {
  private static final ObjectMapper JSON = new ObjectMapper();

  private KeyJson() {}

  /**
   * The key's JSON object.
   *
   * @param columns the key columns, in order
   * @param values their Beam values (Short, Integer, Long, LocalDate, String, ...; nulls allowed)
   * @return e.g. {@code {"order_id":3}}
   */
  public static String of(List<String> columns, List<?> values) {
    ObjectNode node = JSON.createObjectNode();
    for (int i = 0; i < columns.size(); i++) {
      Object v = values.get(i);
      if (v == null) {
        node.putNull(columns.get(i));
      } else if (v instanceof Short || v instanceof Integer || v instanceof Long) {
        node.put(columns.get(i), ((Number) v).longValue());
      } else {
        node.put(columns.get(i), text(v));
      }
    }
    return write(node);
  }

  /**
   * One value as JSON text: a number for an integer, else a JSON string of its canonical text.
   *
   * @param value a non-null Beam value
   * @return e.g. {@code 10} or {@code "1970-01-01"}
   */
  public static String value(Object value) {
    if (value instanceof Short || value instanceof Integer || value instanceof Long) {
      return Long.toString(((Number) value).longValue());
    }
    try {
      return JSON.writeValueAsString(text(value));
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("Cannot write " + value + " as JSON", e);
    }
  }

  private static String text(@Nullable Object v) {
    return RowHash.canonical(v);
  }

  private static String write(ObjectNode node) {
    try {
      return JSON.writeValueAsString(node);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("Cannot write key " + node, e);
    }
  }
}
