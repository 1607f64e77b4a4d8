package org.lakecdc.io.mssqlcdc.fake;

import java.util.Arrays;
import java.util.Collections;
import java.util.List;

/**
 * The values of a table's key columns in key order, ordered as the fake orders keys: column by
 * column, NULL first ({@link SqlValues#compare}). Equality is that order's equality, so two tuples
 * of one table that compare equal are the same key.
 */
final class KeyTuple implements Comparable<KeyTuple> {
  private final Object[] values;

  KeyTuple(List<?> values) {
    this.values = values.toArray();
  }

  /** The key values, stored form, in key column order. */
  List<Object> values() {
    return Collections.unmodifiableList(Arrays.asList(values));
  }

  @Override
  public int compareTo(KeyTuple other) {
    int n = Math.min(values.length, other.values.length);
    for (int i = 0; i < n; i++) {
      int c = SqlValues.compare(values[i], other.values[i]);
      if (c != 0) {
        return c;
      }
    }
    return Integer.compare(values.length, other.values.length);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof KeyTuple && compareTo((KeyTuple) o) == 0;
  }

  @Override
  public int hashCode() {
    int h = 1;
    for (Object v : values) {
      int e;
      if (v == null) {
        e = 0;
      } else if (v instanceof byte[]) {
        e = Arrays.hashCode((byte[]) v);
      } else if (v instanceof java.math.BigDecimal) {
        e = ((java.math.BigDecimal) v).stripTrailingZeros().hashCode();
      } else if (v instanceof java.time.OffsetDateTime) {
        e = ((java.time.OffsetDateTime) v).toInstant().hashCode();
      } else {
        e = v.hashCode();
      }
      h = 31 * h + e;
    }
    return h;
  }

  /** The SQL Server way of printing a key in an error message: {@code (1, 'a')}. */
  @Override
  public String toString() {
    StringBuilder b = new StringBuilder("(");
    for (int i = 0; i < values.length; i++) {
      if (i > 0) {
        b.append(", ");
      }
      Object v = values[i];
      b.append(v == null ? "<NULL>" : v instanceof byte[] ? Arrays.toString((byte[]) v) : v);
    }
    return b.append(')').toString();
  }
}
