package org.lakecdc.io.mssqlcdc.read;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.io.mssqlcdc.client.CaptureInstance;
import org.lakecdc.io.mssqlcdc.client.CdcClient;
import org.lakecdc.io.mssqlcdc.client.DdlChange;
import org.lakecdc.io.mssqlcdc.client.SchemaChangedError;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.io.mssqlcdc.schema.CapturedColumn;
import org.lakecdc.io.mssqlcdc.schema.OutputType;
import org.lakecdc.io.mssqlcdc.schema.TypeCompatibility;
import org.lakecdc.io.mssqlcdc.schema.TypeMapping;

/**
 * The schema checks the change reader runs before it reads a batch's rows (docs/options.md,
 * docs/sql-server.md "Switching to a new capture instance"), as functions over a {@link CdcClient}
 * and the read's {@link ReadSpec}. A check that fails throws {@link SchemaChangedError} (never
 * retried), so nothing of the batch is emitted; one that passes returns the warnings for the caller
 * to log.
 */
final class SchemaGuard {
  /** The longest DDL command text quoted in a message or warning. */
  static final int MAX_COMMAND_CHARS = 500;

  private SchemaGuard() {}

  /**
   * DDL on the table in the batch's range: {@link CdcClient#ddlHistory} of each capture instance
   * with {@code afterLsn < ddl_lsn <= upToLsn}, one change per LSN (both instances of a table may
   * record one statement), in LSN order.
   *
   * @param instances the distinct capture instances the batch reads
   * @param afterLsn the last processed LSN before the batch
   * @param upToLsn the batch's end commit LSN
   * @return the DDL changes, possibly none
   */
  static List<DdlChange> ddlInRange(
      CdcClient client, List<String> instances, Lsn afterLsn, Lsn upToLsn) {
    TreeMap<Lsn, DdlChange> byLsn = new TreeMap<>();
    for (String instance : new LinkedHashSet<>(instances)) {
      for (DdlChange ddl : client.ddlHistory(instance, afterLsn, upToLsn)) {
        byLsn.putIfAbsent(ddl.lsn(), ddl);
      }
    }
    return new ArrayList<>(byLsn.values());
  }

  /**
   * The DDL check of a batch (docs/options.md): finds the DDL in {@code (afterLsn, upToLsn]} of the
   * batch's capture instances; none passes. With {@link SchemaChangePolicy#FAIL} any DDL fails.
   * With {@link SchemaChangePolicy#CLASSIFY} the captured columns of the batch's instances are read
   * again and each one the query reads is compared with its expected type ({@link
   * ReadSpec#expectedTypes()}): a new captured type that does not fit it ({@link
   * TypeCompatibility#fits fits(new, expected)} false) fails; otherwise every DDL goes on with a
   * warning ({@code ADD}, {@code DROP COLUMN}, a widening the query's type still holds, ...).
   *
   * @param instances the distinct capture instances the batch reads, oldest first
   * @param afterLsn the end of the batch before: the last processed LSN, or for the first batch of
   *     a split part the previous part's last batch end (the lower bound of the batch's facts DDL
   *     list), so DDL between two parts is checked once, by the later part's first batch
   * @param upToLsn the batch's end commit LSN
   * @return one warning per DDL that goes on, in LSN order
   * @throws SchemaChangedError with policy {@code fail}: {@code DDL on the table of capture
   *     instance <ci> in the batch <from>..<to>: <lsn> <command> (the first of n). The read stops
   *     at any DDL with schemaChangePolicy=fail; ...}; with {@code classify}: {@code Captured
   *     column(s) no longer fit the query's schema after DDL in the batch <from>..<to>: <name> <NEW
   *     TYPE> (read as <old type>), ... DDL: <lsn> <command>; ... Restart the query to re-infer the
   *     schema ... 'delta.enableTypeWidening' ...}
   */
  static List<String> checkDdl(
      CdcClient client, ReadSpec spec, List<String> instances, Lsn afterLsn, Lsn upToLsn) {
    List<DdlChange> changes = ddlInRange(client, instances, afterLsn, upToLsn);
    if (changes.isEmpty()) {
      return List.of();
    }
    String batch = afterLsn.increment() + ".." + upToLsn;
    if (spec.schemaChangePolicy() == SchemaChangePolicy.FAIL) {
      DdlChange first = changes.get(0);
      throw new SchemaChangedError(
          "DDL on the table of capture instance "
              + first.captureInstance()
              + " in the batch "
              + batch
              + ": "
              + first.lsn()
              + " "
              + command(first)
              + (changes.size() > 1 ? " (the first of " + changes.size() + ")" : "")
              + ". The read stops at any DDL with schemaChangePolicy=fail; nothing of this batch"
              + " was read. The replay holds the same DDL: check the change, then restart the"
              + " query with schemaChangePolicy=classify to go on.");
    }
    Map<String, String> misfits = new LinkedHashMap<>();
    for (String instance : new LinkedHashSet<>(instances)) {
      for (CapturedColumn column : client.capturedColumns(instance)) {
        String key = column.name().toLowerCase(Locale.ROOT);
        OutputType expected = spec.source().expectedTypes().get(key);
        if (column.computed() || expected == null || misfits.containsKey(key)) {
          continue;
        }
        OutputType mapped = mappedType(column);
        if (mapped == null || !TypeCompatibility.fits(mapped, expected)) {
          misfits.put(
              key,
              column.name() + " " + capturedType(column) + " (read as " + readAs(expected) + ")");
        }
      }
    }
    if (!misfits.isEmpty()) {
      List<String> commands = new ArrayList<>();
      for (DdlChange ddl : changes) {
        commands.add(ddl.lsn() + " " + command(ddl));
      }
      String advice =
          spec.source().columnsDeclared()
              ? "Update 'columns' (withColumns / --columns) to types that hold the new ones and"
                  + " restart the query"
              : "Restart the query to re-infer the schema, or declare 'columns' (withColumns /"
                  + " --columns) with types that hold the new ones";
      throw new SchemaChangedError(
          "Captured column(s) no longer fit the query's schema after DDL in the batch "
              + batch
              + ": "
              + String.join(", ", misfits.values())
              + ". DDL: "
              + String.join("; ", commands)
              + ". Nothing of this batch was read. "
              + advice
              + "; for a widening, enable type widening on the bronze table first (ALTER TABLE"
              + " <bronze> SET TBLPROPERTIES ('delta.enableTypeWidening' = 'true')).");
    }
    List<String> warnings = new ArrayList<>();
    for (DdlChange ddl : changes) {
      warnings.add(
          "DDL on capture instance "
              + ddl.captureInstance()
              + " at "
              + ddl.lsn()
              + ddl.commitTime().map(t -> " (after the commit at " + t + ")").orElse("")
              + " goes on: the query's schema still holds every captured column it reads: "
              + command(ddl));
    }
    return warnings;
  }

  /**
   * The switch check of a capture instance the schema does not account for yet (created after the
   * pipeline was built; docs/sql-server.md "Switching to a new capture instance"), before the first
   * row from {@code fromLsn} is read:
   *
   * <ul>
   *   <li>inferred columns: a column it captures that the schema lacks, or a type the schema's type
   *       does not hold ({@link TypeCompatibility#fits fits(new, query)} false), fails; columns of
   *       the schema it does not capture read NULL (a warning);
   *   <li>declared columns: it is followed in place; the columns it captures that {@code columns}
   *       does not list are not read (a warning).
   * </ul>
   *
   * Computed columns are left out, as inference leaves them out.
   *
   * @param instance the newer capture instance
   * @param captured its captured columns
   * @param fromLsn the first LSN the batch would read from it
   * @param batchEnd the batch's end commit LSN
   * @return the warnings, possibly none
   * @throws SchemaChangedError for an inferred schema that cannot hold the instance's columns:
   *     {@code The read reaches capture instance '<ci>' (start LSN <S>), which the query's inferred
   *     schema does not account for: it adds column(s) <name> <TYPE>, ...; ... Nothing from <from>
   *     on was read ... Restart the query: ...}
   */
  static List<String> checkNewInstance(
      ReadSpec spec,
      CaptureInstance instance,
      List<CapturedColumn> captured,
      Lsn fromLsn,
      Lsn batchEnd) {
    Lsn start = instance.startLsn().orElse(fromLsn);
    String named = "capture instance '" + instance.name() + "' (start LSN " + start + ")";
    Map<String, OutputType> query = spec.source().expectedTypes();
    Set<String> read = new LinkedHashSet<>();
    for (String name : spec.source().columnNames()) {
      read.add(name.toLowerCase(Locale.ROOT));
    }
    List<String> added = new ArrayList<>();
    List<String> misfits = new ArrayList<>();
    Set<String> capturedNames = new LinkedHashSet<>();
    for (CapturedColumn column : captured) {
      if (column.computed()) {
        continue;
      }
      String key = column.name().toLowerCase(Locale.ROOT);
      capturedNames.add(key);
      if (!read.contains(key)) {
        added.add(
            spec.source().columnsDeclared()
                ? column.name()
                : column.name() + " " + capturedType(column));
        continue;
      }
      OutputType expected = query.get(key);
      if (spec.source().columnsDeclared() || expected == null) {
        continue;
      }
      OutputType mapped = mappedType(column);
      if (mapped == null || !TypeCompatibility.fits(mapped, expected)) {
        misfits.add(
            column.name() + " " + capturedType(column) + " (read as " + readAs(expected) + ")");
      }
    }
    List<String> warnings = new ArrayList<>();
    if (spec.source().columnsDeclared()) {
      if (!added.isEmpty()) {
        warnings.add(
            "The read follows "
                + named
                + ", which captures column(s) "
                + String.join(", ", added)
                + " that 'columns' does not list: they are not read (add them to 'columns' and"
                + " restart to read them)");
      }
      return warnings;
    }
    if (!added.isEmpty() || !misfits.isEmpty()) {
      List<String> what = new ArrayList<>();
      if (!added.isEmpty()) {
        what.add("it adds column(s) " + String.join(", ", added));
      }
      if (!misfits.isEmpty()) {
        what.add("it types " + String.join(", ", misfits));
      }
      throw new SchemaChangedError(
          "The read reaches "
              + named
              + ", which the query's inferred schema does not account for: "
              + String.join("; ", what)
              + ". Nothing from "
              + fromLsn
              + " on was read (batch up to "
              + batchEnd
              + "). Restart the query: it infers the schema again as the union of the capture"
              + " instances and resumes after the last batch written, reading '"
              + instance.name()
              + "' from "
              + start
              + ".");
    }
    List<String> gone = new ArrayList<>();
    for (String name : spec.source().columnNames()) {
      if (!capturedNames.contains(name.toLowerCase(Locale.ROOT))) {
        gone.add(name);
      }
    }
    if (!gone.isEmpty()) {
      warnings.add(
          "The read follows "
              + named
              + ", which no longer captures "
              + String.join(", ", gone)
              + ": read as NULL from "
              + fromLsn
              + " on");
    }
    return warnings;
  }

  /** The captured column's output type as text, or its SQL Server type when it has no mapping. */
  private static String capturedType(CapturedColumn column) {
    OutputType mapped = mappedType(column);
    return mapped != null ? mapped.toString() : column.type().toString();
  }

  /** The captured column's output type, or null when its SQL Server type has no mapping. */
  private static @Nullable OutputType mappedType(CapturedColumn column) {
    try {
      return TypeMapping.outputType(column.name(), column.type());
    } catch (IllegalArgumentException e) {
      return null;
    }
  }

  /** An expected type as Spark's simple string names it, e.g. {@code decimal(18,2)}. */
  private static String readAs(OutputType type) {
    return type.toString().toLowerCase(Locale.ROOT);
  }

  private static String command(DdlChange ddl) {
    String text = ddl.command().strip();
    return text.length() <= MAX_COMMAND_CHARS ? text : text.substring(0, MAX_COMMAND_CHARS) + "...";
  }
}
