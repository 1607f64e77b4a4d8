package org.lakecdc.io.mssqlcdc.fake;

import java.util.Arrays;
import java.util.Collections;
import java.util.List;

/**
 * The values of a table's key columns in key order, ordered as SQL Server orders keys: column by
 * column, NULL first, character values under their column's {@link Collation} (so {@code 'a'} and
 * {@code 'A '} are one key under {@code _CI_}), everything else by {@link SqlValues#compare}.
 * Equality is that order's equality, so two tuples of one table that compare equal are the same
 * key; {@link #hashCode} agrees with it. The one place the fake compares keys: the writer's rows,
 * the source file's order and every range a reader reads go through it. Only tuples over the same
 * columns are compared.
 */
final class KeyTuple implements Comparable<KeyTuple> {
  private final Object[] values;

  /** Per value: its collation's sort key for a non-NULL collated value, else the value itself. */
  private final Object[] sortKeys;

  private KeyTuple(List<?> values, List<Collation> collations) {
    this.values = values.toArray();
    this.sortKeys = new Object[this.values.length];
    for (int i = 0; i < this.values.length; i++) {
      Object v = this.values[i];
      Collation c = collations.get(i);
      sortKeys[i] = c != null && v instanceof String ? c.sortKey((String) v) : v;
    }
  }

  /**
   * The tuple of stored values of {@code columns}, compared under the columns' collations.
   *
   * @param columns the columns, in key order
   * @param values their stored values ({@link SqlValues#normalize}), one per column
   * @throws IllegalArgumentException when the counts differ
   */
  static KeyTuple of(List<Catalog.Column> columns, List<?> values) {
    if (columns.size() != values.size()) {
      throw new IllegalArgumentException(
          "A key of " + columns.size() + " column(s) needs as many values, got " + values.size());
    }
    List<Collation> collations = new java.util.ArrayList<>(columns.size());
    for (Catalog.Column c : columns) {
      collations.add(c.collation());
    }
    return new KeyTuple(values, collations);
  }

  /** The key values, stored form, in key column order. */
  List<Object> values() {
    return Collections.unmodifiableList(Arrays.asList(values));
  }

  @Override
  public int compareTo(KeyTuple other) {
    int n = Math.min(values.length, other.values.length);
    for (int i = 0; i < n; i++) {
      int c = SqlValues.compare(sortKeys[i], other.sortKeys[i]);
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
    for (Object v : sortKeys) {
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
