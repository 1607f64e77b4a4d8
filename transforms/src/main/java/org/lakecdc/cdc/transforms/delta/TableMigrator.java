package org.lakecdc.cdc.transforms.delta;

import io.delta.kernel.Operation;
import io.delta.kernel.Snapshot;
import io.delta.kernel.Table;
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
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Metadata-only commits: migrations of a table kind, added columns and the table comment. Each is
 * one Delta commit of a {@code metaData} action ({@link KernelInternals#metadataAction}) computed
 * from the latest snapshot and committed with no Kernel retry ({@code withMaxRetries(0)}: Kernel's
 * conflict resolution does not know this commit changes metadata). A lost race re-reads the table
 * and recomputes, at most {@link #MAX_ATTEMPTS} times; every change is idempotent, so recomputing
 * may find nothing left to do.
 */
final class TableMigrator {
  private static final Logger LOG = LoggerFactory.getLogger(TableMigrator.class);

  /** Attempts of one metadata commit before a lost race is reported. */
  static final int MAX_ATTEMPTS = 5;

  private final Engine engine;

  TableMigrator(Engine engine) {
    this.engine = engine;
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
    Snapshot snapshot = Table.forPath(engine, path).getLatestSnapshot(engine);
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
    long tableVersion = Table.forPath(engine, path).getLatestSnapshot(engine).getVersion();
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
      Snapshot snapshot = Table.forPath(engine, path).getLatestSnapshot(engine);
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
              .buildUpdateTableTransaction(DeltaTables.ENGINE_INFO, Operation.MANUAL_UPDATE)
              .withMaxRetries(0)
              .build(engine);
      try {
        long version =
            txn.commit(engine, CloseableIterable.inMemoryIterable(KernelIterators.single(action)))
                .getVersion();
        return Optional.of(version);
      } catch (MaxCommitRetryLimitReachedException | ConcurrentWriteException e) {
        LOG.info(
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
