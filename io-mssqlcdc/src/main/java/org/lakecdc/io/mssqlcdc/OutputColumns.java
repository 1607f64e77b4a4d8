package org.lakecdc.io.mssqlcdc;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import org.apache.beam.sdk.schemas.Schema;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.io.mssqlcdc.client.CaptureInstance;
import org.lakecdc.io.mssqlcdc.client.CapturedColumn;
import org.lakecdc.io.mssqlcdc.client.CdcClient;
import org.lakecdc.io.mssqlcdc.client.CdcClientFactory;
import org.lakecdc.io.mssqlcdc.schema.CapturedSchema;
import org.lakecdc.io.mssqlcdc.schema.ChangeSchema;
import org.lakecdc.io.mssqlcdc.schema.ColumnSpec;
import org.lakecdc.io.mssqlcdc.schema.ColumnsDdl;
import org.lakecdc.io.mssqlcdc.schema.DeclaredColumnsException;
import org.lakecdc.io.mssqlcdc.schema.InstanceColumns;
import org.lakecdc.io.mssqlcdc.schema.OutputType;
import org.lakecdc.io.mssqlcdc.schema.TypeCompatibility;
import org.lakecdc.io.mssqlcdc.schema.TypeMapping;

/**
 * The captured columns and the output schema shared by the change read and the snapshot (one schema
 * for both, docs/tables.md "Bronze"), fixed when the pipeline is built.
 *
 * @param columns the captured columns read, in output order
 * @param schema the output row schema: metadata columns, then {@code columns}
 * @param declared whether {@code columns} were declared (option {@code columns}) or inferred
 * @param instances the names of the table's capture instances when the columns were resolved,
 *     oldest first: the instances the schema already accounts for
 * @param expectedTypes per column read (lower-cased name), the type a captured type must still fit
 *     after DDL (docs/tables.md "Schema evolution of bronze"): the query's type when inferred; with
 *     declared columns, the captured type reported now (the newest instance capturing it), for
 *     columns whose type maps
 */
record OutputColumns(
    List<ColumnSpec> columns,
    Schema schema,
    boolean declared,
    List<String> instances,
    Map<String, OutputType> expectedTypes) {
  OutputColumns {
    columns = List.copyOf(columns);
    Objects.requireNonNull(schema, "schema");
    instances = List.copyOf(instances);
    expectedTypes = Map.copyOf(expectedTypes);
  }

  /**
   * Checks that a transform has its capture instance and client factory.
   *
   * @param transform the factory method named in messages, e.g. {@code read()}
   * @throws IllegalArgumentException naming the missing builder method
   */
  static void checkConfigured(
      String transform, @Nullable String captureInstance, @Nullable CdcClientFactory factory) {
    if (captureInstance == null || captureInstance.isBlank()) {
      throw new IllegalArgumentException(
          "MssqlCdcIO."
              + transform
              + " needs a capture instance: withCaptureInstance() is required");
    }
    if (factory == null) {
      throw new IllegalArgumentException(
          "MssqlCdcIO."
              + transform
              + " needs a way to reach SQL Server: withClientFactory() is required");
    }
  }

  /**
   * Resolves the columns: the declared ones ({@code columns} option, checked against what the
   * capture instances capture) or, without them, the union inferred from every capture instance of
   * the table (docs/tables.md "Bronze").
   *
   * @param transform the factory method named in messages, e.g. {@code read()}
   * @param captureInstance the configured capture instance
   * @param factory opens the client that reads CDC metadata (closed before returning)
   * @param declared the {@code columns} DDL, or null to infer
   * @param includeCommandId whether the schema has {@code _command_id}
   * @throws IllegalArgumentException for a missing option, a reserved name or an unmappable type
   * @throws DeclaredColumnsException for a declared column no instance captures, or a declared type
   *     that cannot hold a captured column's SQL Server type ({@link TypeCompatibility#holds})
   * @throws org.lakecdc.io.mssqlcdc.client.CaptureInstanceNotFoundError for an unknown instance
   */
  static OutputColumns resolve(
      String transform,
      @Nullable String captureInstance,
      @Nullable CdcClientFactory factory,
      @Nullable String declared,
      boolean includeCommandId) {
    checkConfigured(transform, captureInstance, factory);
    List<ColumnSpec> columns;
    List<String> instanceNames = new ArrayList<>();
    Map<String, OutputType> expected = new LinkedHashMap<>();
    try (CdcClient client = factory.open()) {
      List<CaptureInstance> instances = client.captureInstances(captureInstance);
      List<InstanceColumns> captured = new ArrayList<>();
      for (CaptureInstance instance : instances) {
        List<CapturedColumn> instanceColumns = client.capturedColumns(instance.name());
        captured.add(new InstanceColumns(instance.name(), instanceColumns));
        instanceNames.add(instance.name());
      }
      if (declared != null) {
        columns = ColumnsDdl.parse(declared);
        checkDeclaredColumnsCaptured(columns, captured, instances.get(0));
        checkDeclaredTypesHold(columns, captured);
        expected.putAll(capturedTypes(columns, captured));
      } else {
        columns = CapturedSchema.infer(captured).columns();
        for (ColumnSpec column : columns) {
          expected.put(column.name().toLowerCase(Locale.ROOT), column.type());
        }
      }
    }
    return new OutputColumns(
        columns,
        ChangeSchema.of(columns, includeCommandId),
        declared != null,
        instanceNames,
        expected);
  }

  /**
   * The captured type of each declared column as the instances report it now (the newest instance
   * capturing it wins); a computed column or a type without a default mapping ({@link
   * org.lakecdc.io.mssqlcdc.schema.UnsupportedTypeException}) is left out (the declared type is the
   * user's own conversion, and a cast failure shows at read time).
   */
  private static Map<String, OutputType> capturedTypes(
      List<ColumnSpec> declared, List<InstanceColumns> captured) {
    Map<String, OutputType> types = new LinkedHashMap<>();
    for (ColumnSpec column : declared) {
      String key = column.name().toLowerCase(Locale.ROOT);
      for (InstanceColumns instance : captured) {
        for (CapturedColumn c : instance.columns()) {
          if (c.computed() || !c.name().equalsIgnoreCase(column.name())) {
            continue;
          }
          try {
            types.put(key, TypeMapping.outputType(c.name(), c.type()));
          } catch (IllegalArgumentException e) {
            types.remove(key);
          }
        }
      }
    }
    return types;
  }

  /**
   * A declared type that cannot hold a captured column's SQL Server type would fail the read at the
   * first value it cannot convert, after the job has created its tables and maybe committed
   * batches: fail when the schema is resolved instead, naming every such column with each instance
   * that captures it (computed columns, NULL in every change row, are left out).
   */
  private static void checkDeclaredTypesHold(
      List<ColumnSpec> declared, List<InstanceColumns> captured) {
    List<String> refused = new ArrayList<>();
    for (ColumnSpec column : declared) {
      for (InstanceColumns instance : captured) {
        for (CapturedColumn c : instance.columns()) {
          if (c.computed()
              || !c.name().equalsIgnoreCase(column.name())
              || TypeCompatibility.holds(column.type(), c.type())) {
            continue;
          }
          refused.add(
              column.name()
                  + " "
                  + column.type()
                  + " cannot hold "
                  + c.type()
                  + " (the type "
                  + instance.captureInstance()
                  + " captures; declare "
                  + suggestion(c)
                  + ")");
        }
      }
    }
    if (!refused.isEmpty()) {
      throw new DeclaredColumnsException(
          "the declared type of "
              + (refused.size() == 1 ? "a column" : "columns")
              + " cannot hold every captured value: "
              + String.join("; ", refused));
    }
  }

  /** The type a captured column maps to by default, or STRING, as what to declare instead. */
  private static String suggestion(CapturedColumn column) {
    try {
      return TypeMapping.outputType(column.name(), column.type())
          + " or another type that holds every "
          + column.type()
          + " value";
    } catch (IllegalArgumentException e) {
      return "STRING";
    }
  }

  /**
   * A declared column that no capture instance of the table captures would read NULL forever: fail
   * instead (docs/options.md, docs/scenarios.md C220).
   */
  private static void checkDeclaredColumnsCaptured(
      List<ColumnSpec> declared, List<InstanceColumns> captured, CaptureInstance oldest) {
    List<String> missing = new ArrayList<>();
    for (ColumnSpec column : declared) {
      boolean found =
          captured.stream()
              .flatMap(instance -> instance.columns().stream())
              .anyMatch(c -> c.name().equalsIgnoreCase(column.name()));
      if (!found) {
        missing.add(column.name());
      }
    }
    if (!missing.isEmpty()) {
      throw new DeclaredColumnsException(
          "No capture instance of the table ("
              + String.join(", ", captured.stream().map(InstanceColumns::captureInstance).toList())
              + ") captures "
              + String.join(", ", missing)
              + "; fix 'columns' (withColumns) or capture the column on "
              + oldest.sourceSchema()
              + "."
              + oldest.sourceTable()
              + " with a new capture instance");
    }
  }
}
