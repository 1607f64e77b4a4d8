package org.lakecdc.transforms.delta;

import io.delta.kernel.Meta;
import io.delta.kernel.Operation;
import io.delta.kernel.Snapshot;
import io.delta.kernel.Transaction;
import io.delta.kernel.data.Row;
import io.delta.kernel.engine.Engine;
import io.delta.kernel.exceptions.ConcurrentWriteException;
import io.delta.kernel.exceptions.MaxCommitRetryLimitReachedException;
import io.delta.kernel.types.StructField;
import io.delta.kernel.types.StructType;
import io.delta.kernel.utils.CloseableIterable;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.lakecdc.io.mssqlcdc.client.SchemaChangedError;
import org.lakecdc.io.mssqlcdc.schema.OutputType;
import org.lakecdc.io.mssqlcdc.schema.TypeCompatibility;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Metadata-only commits: migrations of a table kind, added and widened columns and the table
 * comment. Each is one Delta commit of a {@code metaData} action ({@link
 * KernelInternals#metadataAction}) computed from the latest snapshot and committed with no Kernel
 * retry ({@code withMaxRetries(0)}: Kernel's conflict resolution does not know this commit changes
 * metadata). A lost race re-reads the table and recomputes, at most {@link #MAX_ATTEMPTS} times;
 * every change is idempotent, so recomputing may find nothing left to do.
 */
final class TableMigrator {
  private static final Logger LOG = LoggerFactory.getLogger(TableMigrator.class);

  /**
   * A metadata commit that lost a race and is tried again (two first runs of one target setting its
   * comment together): a routine retry, under {@code org.lakecdc.detail}, log file only.
   */
  private static final Logger DETAIL =
      LoggerFactory.getLogger("org.lakecdc.detail." + TableMigrator.class.getSimpleName());

  /** Attempts of one metadata commit before a lost race is reported. */
  static final int MAX_ATTEMPTS = 5;

  private final Engine engine;

  /** Where every latest snapshot is read: the tables' cache, so a current one is not read again. */
  private final TableSnapshots snapshots;

  TableMigrator(TableSnapshots snapshots) {
    this.snapshots = snapshots;
    this.engine = snapshots.engine();
  }

  /** A metadata change computed from a snapshot. */
  private record MetadataUpdate(
      StructType schema,
      Map<String, String> properties,
      Optional<String> description,
      List<String> addedColumns) {}

  /**
   * Checks a table's kind and version and applies the migrations it lacks, then sets the table
   * comment if it is still unset (a creation interrupted between its two commits).
   *
   * @throws IncompatibleTableException when the table is of another kind or at a newer version
   */
  OpenResult open(String path, String kindName, List<Migration> migrations, String tableComment) {
    Snapshot snapshot = snapshots.require(path);
    Map<String, String> properties = snapshot.getTableProperties();
    String recordedKind = properties.get(TableProperties.TABLE_KIND);
    if (recordedKind != null && !recordedKind.equalsIgnoreCase(kindName)) {
      throw new IncompatibleTableException(
          "Delta table "
              + path
              + " is a "
              + recordedKind
              + " table ("
              + TableProperties.TABLE_KIND
              + "), not a "
              + kindName
              + " table");
    }
    int version =
        TableInfo.parseSchemaVersion(path, properties.get(TableProperties.SCHEMA_VERSION));
    int known = migrations.size();
    if (version > known) {
      throw newerVersion(path, kindName, version, known);
    }
    int applied = 0;
    for (Migration migration : migrations.subList(version, known)) {
      if (apply(path, kindName, migration)) {
        applied++;
      }
    }
    setDescriptionIfAbsent(path, tableComment);
    long tableVersion = snapshots.require(path).getVersion();
    return new OpenResult(path, tableVersion, false, known, applied);
  }

  static IncompatibleTableException newerVersion(
      String path, String kindName, int version, int known) {
    return new IncompatibleTableException(
        "Delta table "
            + path
            + " is at "
            + kindName
            + " schema version "
            + version
            + " ("
            + TableProperties.SCHEMA_VERSION
            + "), newer than "
            + known
            + ", the newest "
            + kindName
            + " version this build knows; upgrade lakecdc to write it");
  }

  /** Applies one migration unless the table already has its version; true when committed. */
  private boolean apply(String path, String kindName, Migration migration) {
    Optional<Long> committed =
        commitMetadata(
            path,
            "migration " + migration.version() + " of " + kindName,
            snapshot -> {
              int current =
                  TableInfo.parseSchemaVersion(
                      path, snapshot.getTableProperties().get(TableProperties.SCHEMA_VERSION));
              if (current >= migration.version()) {
                return Optional.empty();
              }
              StructType schema = snapshot.getSchema();
              Optional<String> description = KernelInternals.description(snapshot);
              List<String> added = new ArrayList<>();
              for (SchemaChange change : migration.changes()) {
                if (change instanceof SchemaChange.AddColumns add) {
                  schema = addColumns(schema, add.columns(), added);
                } else if (change instanceof SchemaChange.SetColumnComment comment) {
                  schema = setComment(schema, comment.column(), comment.comment());
                } else if (change instanceof SchemaChange.SetTableComment comment) {
                  description = Optional.of(comment.comment());
                }
              }
              Map<String, String> properties = new HashMap<>();
              properties.put(TableProperties.SCHEMA_VERSION, String.valueOf(migration.version()));
              properties.put(TableProperties.TABLE_KIND, kindName);
              return Optional.of(new MetadataUpdate(schema, properties, description, added));
            });
    committed.ifPresent(
        v ->
            LOG.info(
                "Delta table {}: applied {} migration {} ({}) as version {}",
                path,
                kindName,
                migration.version(),
                migration.description(),
                v));
    return committed.isPresent();
  }

  /**
   * Appends the columns the table lacks (names compared ignoring case) in one metadata commit.
   *
   * @return the names added, in order; empty when none was missing (no commit)
   */
  List<String> addColumns(String path, List<DeltaColumn> columns) {
    SchemaChange.AddColumns change = new SchemaChange.AddColumns(columns);
    List<String> result = new ArrayList<>();
    commitMetadata(
        path,
        "adding columns",
        snapshot -> {
          List<String> added = new ArrayList<>();
          StructType schema = addColumns(snapshot.getSchema(), change.columns(), added);
          result.clear();
          result.addAll(added);
          if (added.isEmpty()) {
            return Optional.empty();
          }
          return Optional.of(
              new MetadataUpdate(schema, Map.of(), KernelInternals.description(snapshot), added));
        });
    if (!result.isEmpty()) {
      LOG.info("Delta table {}: added columns {}", path, result);
    }
    return List.copyOf(result);
  }

  /** The Kernel release this project writes with, as messages name it. */
  static final String KERNEL = "Delta Kernel " + Meta.KERNEL_VERSION;

  /**
   * Adds the columns the table lacks and widens the columns whose type cannot hold the rows' type,
   * in one metadata commit; the tables' {@code evolveSchema} says the rules and the errors.
   *
   * @return what changed; {@link SchemaEvolution#NONE} when nothing was committed
   */
  SchemaEvolution evolve(String path, List<DeltaColumn> columns) {
    List<DeltaColumn> added = new ArrayList<>();
    List<SchemaEvolution.Widening> widened = new ArrayList<>();
    Optional<Long> version =
        commitMetadata(
            path,
            "evolving the schema",
            snapshot -> {
              added.clear();
              widened.clear();
              StructType schema =
                  planEvolution(
                      path,
                      snapshot.getSchema(),
                      snapshot.getTableProperties(),
                      columns,
                      added,
                      widened);
              if (added.isEmpty() && widened.isEmpty()) {
                return Optional.empty();
              }
              return Optional.of(
                  new MetadataUpdate(
                      schema,
                      Map.of(),
                      KernelInternals.description(snapshot),
                      added.stream().map(DeltaColumn::name).toList()));
            });
    if (version.isEmpty()) {
      return SchemaEvolution.NONE;
    }
    SchemaEvolution result = new SchemaEvolution(added, widened, version.get());
    LOG.info(
        "Delta table {}: schema evolved as version {}: added [{}], widened [{}]",
        path,
        version.get(),
        result.addedNames(),
        result.widenedText());
    return result;
  }

  /**
   * Replaces the columns of a table without data files (the tables' {@code
   * replaceColumnsOfEmptyTable}).
   *
   * @param hasDataFiles whether the table holds a data file, asked on every attempt
   * @return whether a commit replaced the columns
   */
  boolean replaceColumnsOfEmptyTable(
      String path, List<DeltaColumn> columns, java.util.function.BooleanSupplier hasDataFiles) {
    StructType replacement = DeltaTypes.toStruct(columns);
    Optional<Long> version =
        commitMetadata(
            path,
            "replacing the columns of an empty table",
            snapshot -> {
              if (snapshot.getSchema().equals(replacement)) {
                return Optional.empty();
              }
              if (hasDataFiles.getAsBoolean()) {
                throw new IllegalStateException(
                    "Delta table " + path + " holds data files: its columns can only evolve");
              }
              return Optional.of(
                  new MetadataUpdate(
                      replacement,
                      Map.of(),
                      KernelInternals.description(snapshot),
                      columns.stream().map(DeltaColumn::name).toList()));
            });
    version.ifPresent(
        v -> LOG.info("Delta table {}: columns of the empty table replaced (version {})", path, v));
    return version.isPresent();
  }

  /**
   * The schema that takes rows of {@code columns}: missing columns appended (nullable), columns
   * whose type does not hold the rows' type widened. Fills {@code added} and {@code widened}.
   *
   * @throws IncompatibleTableException when the table has column mapping or a column of a type this
   *     project does not write
   * @throws SchemaChangedError when a new name needs column mapping, or a type cannot be widened
   */
  static StructType planEvolution(
      String path,
      StructType schema,
      Map<String, String> properties,
      List<DeltaColumn> columns,
      List<DeltaColumn> added,
      List<SchemaEvolution.Widening> widened) {
    String mapping = properties.getOrDefault(TableProperties.COLUMN_MAPPING_MODE, "none");
    if (!mapping.equalsIgnoreCase("none")) {
      throw new IncompatibleTableException(
          "Delta table "
              + path
              + " has column mapping ('"
              + TableProperties.COLUMN_MAPPING_MODE
              + "' = '"
              + mapping
              + "'), and "
              + KERNEL
              + ", which this project writes with, cannot write tables with column mapping;"
              + " write a new target");
    }
    boolean wideningOn =
        "true".equalsIgnoreCase(properties.get(TableProperties.ENABLE_TYPE_WIDENING));
    List<StructField> fields = new ArrayList<>(schema.fields());
    List<String> needMapping = new ArrayList<>();
    List<SchemaEvolution.Widening> notWidenable = new ArrayList<>();
    List<SchemaEvolution.Widening> wideningOff = new ArrayList<>();
    Set<String> seen = new HashSet<>();
    for (DeltaColumn column : columns) {
      if (!seen.add(column.name().toLowerCase(Locale.ROOT))) {
        continue;
      }
      int index = DeltaTypes.indexOfIgnoreCase(new StructType(fields), column.name());
      if (index < 0) {
        if (DeltaTypes.needsColumnMapping(column.name())) {
          needMapping.add(column.name());
          continue;
        }
        DeltaColumn nullable =
            new DeltaColumn(column.name(), column.type(), true, column.comment());
        fields.add(DeltaTypes.toField(nullable));
        added.add(nullable);
        continue;
      }
      StructField field = fields.get(index);
      OutputType current = DeltaTypes.outputType(path, field);
      OutputType wanted = column.type();
      if (TypeCompatibility.fits(wanted, current)) {
        continue;
      }
      SchemaEvolution.Widening widening =
          new SchemaEvolution.Widening(field.getName(), current, wanted);
      if (!TypeCompatibility.fits(current, wanted)
          || !KernelInternals.isTypeWideningSupported(
              field.getDataType(), DeltaTypes.toKernel(wanted))) {
        notWidenable.add(widening);
      } else if (!wideningOn) {
        wideningOff.add(widening);
      } else {
        fields.set(index, DeltaTypes.widen(field, wanted));
        widened.add(widening);
      }
    }
    if (!needMapping.isEmpty()) {
      throw new SchemaChangedError(columnMappingNeeded(path, needMapping));
    }
    if (!notWidenable.isEmpty()) {
      throw new SchemaChangedError(notWidenable(path, notWidenable));
    }
    if (!wideningOff.isEmpty()) {
      throw new SchemaChangedError(typeWideningOff(path, wideningOff));
    }
    return new StructType(fields);
  }

  private static String columnMappingNeeded(String path, List<String> names) {
    return "Delta table "
        + path
        + " can take column(s) "
        + quoted(names)
        + " only with column mapping, and column mapping is off on this table: without it Delta"
        + " refuses a space or any of ,;{}()= (or a newline or tab) in a column name. Turning it"
        + " on would not help, because "
        + KERNEL
        + ", which writes this table, cannot write tables with column mapping. Declare the"
        + " columns to read without them ('columns': withColumns / --columns), or capture the"
        + " table with a capture instance that leaves them out.";
  }

  private static String notWidenable(String path, List<SchemaEvolution.Widening> changes) {
    return "Delta table "
        + path
        + " holds "
        + holds(changes)
        + ", and "
        + KERNEL
        + " cannot widen "
        + changes.stream()
            .map(w -> w.from() + " to " + w.to())
            .collect(Collectors.joining(", nor "))
        + ". Declare the columns to read ('columns': withColumns / --columns) keeping "
        + keeping(changes)
        + " while the values fit, or write a new target.";
  }

  private static String typeWideningOff(String path, List<SchemaEvolution.Widening> changes) {
    return "Delta table "
        + path
        + " holds "
        + holds(changes)
        + ", and type widening is off on this table. Enable it and run again; the column is then"
        + " widened in a metadata commit and the rows written before read in the new type: ALTER"
        + " TABLE delta.`"
        + path
        + "` SET TBLPROPERTIES ('"
        + TableProperties.ENABLE_TYPE_WIDENING
        + "' = 'true'). "
        + KERNEL
        + " writes such a table, "
        + readers(changes)
        + ". Or declare the columns to read ('columns': withColumns / --columns) keeping "
        + keeping(changes)
        + " while the values fit, or write a new target.";
  }

  /**
   * Which readers read a table holding these type changes: Delta Lake 3.2/3.3 (type widening
   * preview) reads only byte or short to int; Delta Lake 4.0 reads every change Kernel writes, and
   * delta-spark 3.3 refuses a table holding another one ("Please upgrade to Delta 4.0 or higher to
   * read this table").
   */
  private static String readers(List<SchemaEvolution.Widening> changes) {
    boolean shortToInt =
        changes.stream()
            .allMatch(
                w ->
                    w.from().kind() == OutputType.Kind.SMALLINT
                        && w.to().kind() == OutputType.Kind.INT);
    return shortToInt
        ? "and Delta Lake 3.2 or later reads it"
        : "but only Delta Lake 4.0 or later reads this type change (delta-spark 3.x refuses the"
            + " table once it holds it)";
  }

  /** {@code column 'a' as T1, which cannot take T2 unchanged; column 'b' ...}. */
  private static String holds(List<SchemaEvolution.Widening> changes) {
    return changes.stream()
        .map(
            w ->
                "column '"
                    + w.column()
                    + "' as "
                    + w.from()
                    + ", which cannot take "
                    + w.to()
                    + " unchanged")
        .collect(Collectors.joining("; "));
  }

  /** {@code a T1, b T2}: the declaration keeping the table's types. */
  private static String keeping(List<SchemaEvolution.Widening> changes) {
    return changes.stream().map(w -> w.column() + " " + w.from()).collect(Collectors.joining(", "));
  }

  private static String quoted(List<String> names) {
    return names.stream().map(n -> "'" + n + "'").collect(Collectors.joining(", "));
  }

  /** Sets the table comment when the table has none. */
  void setDescriptionIfAbsent(String path, String tableComment) {
    commitMetadata(
        path,
        "setting the table comment",
        snapshot ->
            KernelInternals.description(snapshot).isPresent()
                ? Optional.empty()
                : Optional.of(
                    new MetadataUpdate(
                        snapshot.getSchema(), Map.of(), Optional.of(tableComment), List.of())));
  }

  private static StructType addColumns(
      StructType schema, List<DeltaColumn> columns, List<String> added) {
    List<StructField> fields = new ArrayList<>(schema.fields());
    for (DeltaColumn column : columns) {
      if (DeltaTypes.indexOfIgnoreCase(new StructType(fields), column.name()) < 0) {
        fields.add(DeltaTypes.toField(column));
        added.add(column.name());
      }
    }
    return new StructType(fields);
  }

  private static StructType setComment(StructType schema, String column, String comment) {
    int index = DeltaTypes.indexOfIgnoreCase(schema, column);
    if (index < 0) {
      return schema;
    }
    List<StructField> fields = new ArrayList<>(schema.fields());
    fields.set(index, DeltaTypes.withComment(fields.get(index), comment));
    return new StructType(fields);
  }

  /**
   * Commits the metadata change computed from the latest snapshot; empty when the function finds
   * nothing to do.
   *
   * @return the committed table version, or empty
   * @throws DeltaConflictException when {@link #MAX_ATTEMPTS} attempts all lost a race
   */
  private Optional<Long> commitMetadata(
      String path, String what, Function<Snapshot, Optional<MetadataUpdate>> change) {
    RuntimeException last = null;
    for (int attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      Snapshot snapshot = snapshots.require(path);
      Optional<MetadataUpdate> update = change.apply(snapshot);
      if (update.isEmpty()) {
        return Optional.empty();
      }
      MetadataUpdate u = update.get();
      KernelInternals.validateSchema(u.schema());
      Row action =
          KernelInternals.metadataAction(snapshot, u.schema(), u.properties(), u.description());
      Transaction txn =
          snapshot
              .buildUpdateTableTransaction(TableSnapshots.ENGINE_INFO, Operation.MANUAL_UPDATE)
              .withMaxRetries(0)
              .build(engine);
      try {
        long version =
            txn.commit(engine, CloseableIterable.inMemoryIterable(KernelIterators.single(action)))
                .getVersion();
        return Optional.of(version);
      } catch (MaxCommitRetryLimitReachedException | ConcurrentWriteException e) {
        DETAIL.info(
            "Delta table {}: {} lost a race with a concurrent commit (attempt {} of {}); retrying",
            path,
            what,
            attempt,
            MAX_ATTEMPTS);
        last = e;
      }
    }
    throw new DeltaConflictException(
        "Delta table "
            + path
            + ": "
            + what
            + " lost to concurrent commits "
            + MAX_ATTEMPTS
            + " times; is another job changing this table?",
        last);
  }
}
