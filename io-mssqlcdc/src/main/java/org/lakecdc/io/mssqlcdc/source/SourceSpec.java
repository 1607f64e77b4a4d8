package org.lakecdc.io.mssqlcdc.source;

import java.io.Serializable;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Objects;
import org.apache.beam.sdk.annotations.Internal;
import org.apache.beam.sdk.metrics.Counter;
import org.apache.beam.sdk.schemas.Schema;
import org.apache.beam.sdk.values.Row;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.io.mssqlcdc.client.CaptureInstance;
import org.lakecdc.io.mssqlcdc.client.CdcClient;
import org.lakecdc.io.mssqlcdc.client.CdcClientFactory;
import org.lakecdc.io.mssqlcdc.client.ChangeRow;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.io.mssqlcdc.schema.CapturedColumn;
import org.lakecdc.io.mssqlcdc.schema.ChangeSchema;
import org.lakecdc.io.mssqlcdc.schema.ColumnSpec;
import org.lakecdc.io.mssqlcdc.schema.ColumnsDdl;
import org.lakecdc.io.mssqlcdc.schema.DeclaredColumnsException;
import org.lakecdc.io.mssqlcdc.schema.MetadataColumns;
import org.lakecdc.io.mssqlcdc.schema.OutputType;
import org.lakecdc.io.mssqlcdc.schema.TypeCompatibility;
import org.lakecdc.io.mssqlcdc.schema.TypeMapping;
import org.lakecdc.io.mssqlcdc.schema.ValueConverter;

/**
 * The resolved source configuration every read mode shares ({@code SourceConfiguration} once the
 * pipeline is built): the capture instance, how to reach it, and the captured columns and output
 * schema, one schema for change rows and snapshot rows (docs/tables.md "Bronze"). Shipped to
 * workers inside each read mode's spec; it also builds the output rows.
 *
 * <p>Internal: {@code MssqlCdcIO} resolves it; users configure {@code SourceConfiguration}.
 *
 * @param captureInstance the capture instance the read was configured with ({@code
 *     _capture_instance})
 * @param clientFactory opens each reading DoFn instance's client ({@link WorkerClient})
 * @param includeCommandId whether the schema has {@code _command_id}
 * @param columns the captured columns read, in output order
 * @param schema the output row schema: metadata columns, then {@code columns}
 * @param columnsDeclared whether {@code columns} were declared (option {@code columns}) rather than
 *     inferred
 * @param knownInstances the names of the table's capture instances when the columns were resolved,
 *     oldest first: the instances the schema already accounts for
 * @param expectedTypes per column read (lower-cased name), the type a captured type must still fit
 *     after DDL (docs/tables.md "Schema evolution of bronze"): the query's type when inferred; with
 *     declared columns, the captured type reported now (the newest instance capturing it), for
 *     columns whose type maps
 */
@Internal
public record SourceSpec(
    String captureInstance,
    CdcClientFactory clientFactory,
    boolean includeCommandId,
    List<ColumnSpec> columns,
    Schema schema,
    boolean columnsDeclared,
    List<String> knownInstances,
    Map<String, OutputType> expectedTypes)
    implements Serializable {
  /** The namespace of the counters and distributions every read mode reports: {@code mssqlcdc}. */
  public static final String METRICS_NAMESPACE = "mssqlcdc";

  /** Checks the fields and copies the collections. */
  public SourceSpec {
    Objects.requireNonNull(captureInstance, "captureInstance");
    Objects.requireNonNull(clientFactory, "clientFactory");
    columns = List.copyOf(columns);
    Objects.requireNonNull(schema, "schema");
    knownInstances = List.copyOf(knownInstances);
    expectedTypes = Map.copyOf(expectedTypes);
  }

  /**
   * Resolves the columns: the declared ones (option {@code columns}, checked against what the
   * capture instances capture) or, without them, the union inferred from every capture instance of
   * the table (docs/tables.md "Bronze"). Reads CDC metadata through one client, closed before it
   * returns.
   *
   * @param captureInstance the configured capture instance
   * @param factory opens the client that reads CDC metadata
   * @param declared the {@code columns} DDL, or null to infer
   * @param includeCommandId whether the schema has {@code _command_id}
   * @return the resolved source
   * @throws IllegalArgumentException for a reserved name or an unmappable type
   * @throws DeclaredColumnsException for a declared column no instance captures, or a declared type
   *     that cannot hold a captured column's SQL Server type ({@link TypeCompatibility#holds})
   * @throws org.lakecdc.io.mssqlcdc.client.CaptureInstanceNotFoundError for an unknown instance
   */
  public static SourceSpec resolve(
      String captureInstance,
      CdcClientFactory factory,
      @Nullable String declared,
      boolean includeCommandId) {
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
    return new SourceSpec(
        captureInstance,
        factory,
        includeCommandId,
        columns,
        ChangeSchema.of(columns, includeCommandId),
        declared != null,
        instanceNames,
        expected);
  }

  /**
   * Names of the captured columns, in output order.
   *
   * @return the names
   */
  public List<String> columnNames() {
    return columns.stream().map(ColumnSpec::name).toList();
  }

  /**
   * A change row of the output schema: the metadata columns from {@code change}, then its captured
   * values cast to the columns' output types (docs/tables.md "Extreme values"); {@code _commit_ts}
   * is the UTC commit time as a zone-less date-time.
   *
   * @param captureInstance the capture instance whose change table the row was read from ({@code
   *     _capture_instance}; a newer instance after a switch)
   * @param change a row read from the change table, its values in {@link #columns()} order
   * @return the row
   */
  public Row changeRow(String captureInstance, ChangeRow change) {
    return row(
        captureInstance,
        change.startLsn().toString(),
        change.seqval().toString(),
        change.operation(),
        change.commandId(),
        change.commitTime(),
        change.values());
  }

  /**
   * A snapshot row of the output schema (docs/tables.md "Bronze"): {@code _start_lsn} = the
   * snapshot LSN S (or a chunk's stamp), {@code _seqval} NULL, {@code _operation} 0, {@code
   * _command_id} NULL, {@code _commit_ts} = the commit time of S.
   *
   * @param snapshotLsn the LSN the row is stamped with
   * @param commitTime its UTC commit time
   * @param values the source table's current values of {@link #columns()}, in order
   * @return the row
   */
  public Row snapshotRow(Lsn snapshotLsn, Instant commitTime, List<Object> values) {
    return row(
        captureInstance,
        snapshotLsn.toString(),
        null,
        MetadataColumns.OP_SNAPSHOT,
        null,
        commitTime,
        values);
  }

  /**
   * The values of a snapshot key range or chunk as its snapshot rows ({@link #snapshotRow}),
   * converted as they are pulled, each counted in {@code counter} and in {@link
   * SnapshotRows#count()}.
   *
   * @param values the source table's values of {@link #columns()}, streamed
   * @param snapshotLsn the LSN every row is stamped with
   * @param commitTime its UTC commit time
   * @param counter the Beam counter of rows read
   * @param unit what the values are, for the message when read past their end
   * @return the rows
   */
  public SnapshotRows snapshotRows(
      Iterator<List<Object>> values,
      Lsn snapshotLsn,
      Instant commitTime,
      Counter counter,
      String unit) {
    return new SnapshotRows(values, snapshotLsn, commitTime, counter, unit);
  }

  /** Snapshot rows converted as they are pulled: see {@link #snapshotRows}. */
  public final class SnapshotRows implements Iterator<Row> {
    private final Iterator<List<Object>> values;
    private final Lsn snapshotLsn;
    private final Instant commitTime;
    private final Counter counter;
    private final String unit;
    private long count;

    private SnapshotRows(
        Iterator<List<Object>> values,
        Lsn snapshotLsn,
        Instant commitTime,
        Counter counter,
        String unit) {
      this.values = values;
      this.snapshotLsn = snapshotLsn;
      this.commitTime = commitTime;
      this.counter = counter;
      this.unit = unit;
    }

    @Override
    public boolean hasNext() {
      return values.hasNext();
    }

    @Override
    public Row next() {
      if (!values.hasNext()) {
        throw new NoSuchElementException("no row left in the " + unit);
      }
      Row row = snapshotRow(snapshotLsn, commitTime, values.next());
      count++;
      counter.inc();
      return row;
    }

    /**
     * The rows returned so far.
     *
     * @return 0 or more
     */
    public long count() {
      return count;
    }
  }

  private Row row(
      String readInstance,
      String startLsn,
      @Nullable String seqval,
      int operation,
      @Nullable Integer commandId,
      Instant commitTime,
      List<Object> captured) {
    List<Object> values = new ArrayList<>(schema.getFieldCount());
    values.add(readInstance);
    values.add(startLsn);
    values.add(seqval);
    values.add(operation);
    if (includeCommandId) {
      values.add(commandId);
    }
    values.add(LocalDateTime.ofInstant(commitTime, ZoneOffset.UTC));
    for (int i = 0; i < columns.size(); i++) {
      ColumnSpec column = columns.get(i);
      values.add(ValueConverter.toBeamValue(captured.get(i), column.type(), column.name()));
    }
    // The values already have the schema's Java types (ValueConverter's contract, tested per SQL
    // Server type), so they are attached without Row.Builder's per-value type matching, which
    // cost a quarter of the reading stage's CPU.
    return Row.withSchema(schema).attachValues(values);
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
