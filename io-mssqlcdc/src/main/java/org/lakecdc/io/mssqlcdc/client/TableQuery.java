package org.lakecdc.io.mssqlcdc.client;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * A read of a tracked source table's current rows in one key range, for snapshots and reconcile.
 *
 * <p>Rows come in key order, NULL keys first, column by column. The range is {@code lowerInclusive
 * <= key < upperExclusive} compared as tuples; an empty lower bound is open and includes NULL keys,
 * an empty upper bound is open.
 *
 * @param schema source schema, e.g. {@code dbo}
 * @param table source table name
 * @param columns columns to return, in this order; a column the table no longer has reads NULL
 * @param keyColumns the key (unique index) columns the range is over
 * @param lowerInclusive first key tuple of the range, or empty for the start of the table
 * @param upperExclusive first key tuple after the range, or empty for the end of the table
 * @param isolation the isolation level of the read
 */
public record TableQuery(
    String schema,
    String table,
    List<String> columns,
    List<String> keyColumns,
    Optional<List<Object>> lowerInclusive,
    Optional<List<Object>> upperExclusive,
    IsolationLevel isolation) {
  public TableQuery {
    Objects.requireNonNull(schema, "schema");
    Objects.requireNonNull(table, "table");
    columns = List.copyOf(columns);
    keyColumns = List.copyOf(keyColumns);
    Objects.requireNonNull(lowerInclusive, "lowerInclusive");
    Objects.requireNonNull(upperExclusive, "upperExclusive");
    Objects.requireNonNull(isolation, "isolation");
  }
}
