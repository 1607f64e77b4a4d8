package org.lakecdc.io.mssqlcdc.source;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import org.lakecdc.io.mssqlcdc.client.SchemaChangedError;
import org.lakecdc.io.mssqlcdc.schema.CapturedColumn;
import org.lakecdc.io.mssqlcdc.schema.ColumnSpec;
import org.lakecdc.io.mssqlcdc.schema.ColumnsDdl;
import org.lakecdc.io.mssqlcdc.schema.OutputType;
import org.lakecdc.io.mssqlcdc.schema.ReservedNames;
import org.lakecdc.io.mssqlcdc.schema.TypeCompatibility;
import org.lakecdc.io.mssqlcdc.schema.TypeMapping;
import org.lakecdc.io.mssqlcdc.schema.UnsupportedTypeException;

/**
 * The captured columns of a table inferred from CDC metadata when the {@code columns} option is not
 * given (docs/tables.md "Bronze"): the output columns after the metadata columns, plus the warnings
 * the caller logs (and carries to the facts).
 *
 * <p>{@link #infer} takes every capture instance of the table, oldest first, and:
 *
 * <ol>
 *   <li>drops computed columns ({@code sys.columns.is_computed}; CDC stores NULL for them in every
 *       change row), with one warning per instance naming them;
 *   <li>sorts the rest by {@code column_ordinal};
 *   <li>refuses reserved names ({@link ReservedNames#checkCaptured}) and two names equal ignoring
 *       case;
 *   <li>maps each type ({@link TypeMapping}; an unmappable type fails naming the column, the
 *       instance and the {@code columns} option);
 *   <li>takes the union by name, ignoring case, in capture order, older instance first: a new name
 *       is appended; a name seen before keeps its place and its first spelling; a different type
 *       replaces the type seen before when {@link TypeCompatibility#fits fits(before, newer)}, else
 *       inference fails with {@link SchemaChangedError}.
 * </ol>
 *
 * A range of an instance that lacks a column of the union reads it as typed NULL. The schema is
 * fixed for the life of a query.
 *
 * @param columns the inferred columns, in output order; at least one
 * @param warnings warnings for the caller to log, in the order found (computed columns left out)
 */
record CapturedSchema(List<ColumnSpec> columns, List<String> warnings) {
  private static final String COLUMNS_REQUIRED =
      "'columns' is required: declare the columns to read (withColumns / --columns)";

  /**
   * Checks and copies the components.
   *
   * @param columns the inferred columns, in output order
   * @param warnings warnings for the caller to log
   * @throws NullPointerException when a component is null
   */
  CapturedSchema {
    columns = List.copyOf(columns);
    warnings = List.copyOf(warnings);
  }

  /**
   * Infers the captured columns of a table from its capture instances (see the class comment).
   *
   * @param instances every capture instance of the table with its captured columns, oldest first
   * @return the columns and the warnings
   * @throws IllegalArgumentException when there is no instance ({@code No capture instance to infer
   *     the columns from; 'columns' is required...}), an instance reports no column ({@code Capture
   *     instance <ci> reports no captured columns; 'columns' is required...}), no column is left
   *     once computed ones are dropped, a name is reserved ({@code Source column(s) <names> take
   *     the name of a metadata column ...; capture instance <ci> captures them ...}), an instance
   *     captures two names equal ignoring case, or a type has no mapping ({@link
   *     UnsupportedTypeException}, naming the instance)
   * @throws SchemaChangedError when two instances type a column so that the older type does not fit
   *     the newer: {@code Capture instances <older> and <newer> type column '<name>' as <older
   *     type> and <newer type>: the newer type does not hold every value of the older one; pass
   *     'columns' (withColumns / --columns) with a type holding both, or disable the older instance
   *     once the stream has read past the newer one's start}
   */
  static CapturedSchema infer(List<InstanceColumns> instances) {
    Objects.requireNonNull(instances, "instances");
    if (instances.isEmpty()) {
      throw new IllegalArgumentException(
          "No capture instance to infer the columns from; " + COLUMNS_REQUIRED);
    }
    Map<String, Slot> union = new LinkedHashMap<>();
    List<String> warnings = new ArrayList<>();
    for (InstanceColumns instance : instances) {
      String ci = instance.captureInstance();
      if (instance.columns().isEmpty()) {
        throw new IllegalArgumentException(
            "Capture instance " + ci + " reports no captured columns; " + COLUMNS_REQUIRED);
      }
      List<CapturedColumn> sorted = new ArrayList<>(instance.columns());
      sorted.sort(Comparator.comparingInt(CapturedColumn::ordinal));
      List<String> computed = new ArrayList<>();
      List<CapturedColumn> kept = new ArrayList<>();
      for (CapturedColumn column : sorted) {
        if (column.computed()) {
          computed.add(column.name());
        } else {
          kept.add(column);
        }
      }
      if (!computed.isEmpty()) {
        warnings.add(
            "Computed column(s) "
                + String.join(", ", computed)
                + " of capture instance "
                + ci
                + " are left out of the inferred schema: CDC stores NULL for computed columns in"
                + " every change row");
      }
      ReservedNames.checkCaptured(ci, kept.stream().map(CapturedColumn::name).toList());
      checkDistinct(ci, kept);
      for (CapturedColumn column : kept) {
        OutputType type;
        try {
          type = TypeMapping.outputType(column.name(), column.type());
        } catch (UnsupportedTypeException e) {
          throw e.inCaptureInstance(ci);
        }
        String key = column.name().toLowerCase(Locale.ROOT);
        Slot slot = union.get(key);
        if (slot == null) {
          union.put(key, new Slot(column.name(), type, ci));
          continue;
        }
        if (!slot.type.equals(type) && !TypeCompatibility.fits(slot.type, type)) {
          throw new SchemaChangedError(
              "Capture instances "
                  + slot.captureInstance
                  + " and "
                  + ci
                  + " type column '"
                  + column.name()
                  + "' as "
                  + slot.type
                  + " and "
                  + type
                  + ": the newer type does not hold every value of the older one; pass 'columns'"
                  + " (withColumns / --columns) with a type holding both, or disable the older"
                  + " instance once the stream has read past the newer one's start");
        }
        slot.type = type;
        slot.captureInstance = ci;
      }
    }
    if (union.isEmpty()) {
      throw new IllegalArgumentException(
          "The capture instances of the table ("
              + String.join(", ", instances.stream().map(InstanceColumns::captureInstance).toList())
              + ") capture only computed columns; "
              + COLUMNS_REQUIRED);
    }
    List<ColumnSpec> columns = new ArrayList<>();
    for (Slot slot : union.values()) {
      columns.add(new ColumnSpec(slot.name, slot.type));
    }
    return new CapturedSchema(columns, warnings);
  }

  /**
   * The columns as canonical DDL, e.g. {@code `order_id` INT, `amount` DECIMAL(18,2)} ({@link
   * ColumnsDdl#format}).
   *
   * @return the DDL text
   */
  String ddl() {
    return ColumnsDdl.format(columns);
  }

  private static void checkDistinct(String ci, List<CapturedColumn> columns) {
    Map<String, String> seen = new HashMap<>();
    for (CapturedColumn column : columns) {
      String before = seen.putIfAbsent(column.name().toLowerCase(Locale.ROOT), column.name());
      if (before != null) {
        throw new IllegalArgumentException(
            "Capture instance "
                + ci
                + " captures columns "
                + before
                + " and "
                + column.name()
                + ", equal ignoring case, which output columns cannot be; declare the columns to"
                + " read with 'columns' (withColumns / --columns) and leave one out");
      }
    }
  }

  /** A column of the union being built: first spelling, current type, instance that typed it. */
  private static final class Slot {
    final String name;
    OutputType type;
    String captureInstance;

    Slot(String name, OutputType type, String captureInstance) {
      this.name = name;
      this.type = type;
      this.captureInstance = captureInstance;
    }
  }
}
