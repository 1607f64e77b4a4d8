package org.lakecdc.transforms.delta;

import static org.lakecdc.transforms.delta.TableSnapshots.ENGINE_INFO;

import io.delta.kernel.Operation;
import io.delta.kernel.Snapshot;
import io.delta.kernel.Table;
import io.delta.kernel.Transaction;
import io.delta.kernel.TransactionCommitResult;
import io.delta.kernel.engine.Engine;
import io.delta.kernel.types.StructType;
import io.delta.kernel.utils.CloseableIterable;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The life of a Delta table's definition: creation with comments and properties, opening as a kind
 * with the kind's migrations ({@link TableMigrator}), added columns, schema evolution, table
 * properties. The public contract of each method is the tables' method of the same name
 * (docs/tables.md). Thread-safe.
 */
final class TableLifecycle {
  private static final Logger LOG = LoggerFactory.getLogger(TableLifecycle.class);

  /**
   * A creation lost to a concurrent creator (two first runs of one target started together), whose
   * table this one then uses: nothing for the user to do, so under {@code org.lakecdc.detail}, log
   * file only, with Kernel's exception.
   */
  private static final Logger DETAIL =
      LoggerFactory.getLogger("org.lakecdc.detail." + TableLifecycle.class.getSimpleName());

  private final TableSnapshots snapshots;
  private final TableScans scans;
  private final TableMigrator migrator;
  private final Engine engine;

  TableLifecycle(TableSnapshots snapshots, TableScans scans) {
    this.snapshots = snapshots;
    this.scans = scans;
    this.engine = snapshots.engine();
    this.migrator = new TableMigrator(snapshots);
  }

  /** Whether a Delta table exists at the path. */
  public boolean exists(String path) {
    return snapshots.latest(path).isPresent();
  }

  /** Creates the table if none exists, else opens it; runs a test hook before the creation. */
  OpenResult createIfAbsent(String path, TableDefinition definition, Runnable beforeCreateCommit) {
    TableKind kind = definition.kind();
    if (exists(path)) {
      return open(path, kind, definition.tableComment());
    }
    Map<String, String> properties = new HashMap<>(definition.properties());
    properties.put(TableProperties.SCHEMA_VERSION, String.valueOf(kind.currentVersion()));
    properties.put(TableProperties.TABLE_KIND, kind.propertyValue());
    StructType schema = DeltaTypes.toStruct(definition.columns());
    try {
      Transaction txn =
          Table.forPath(engine, path)
              .createTransactionBuilder(engine, ENGINE_INFO, Operation.CREATE_TABLE)
              .withSchema(engine, schema)
              .withTableProperties(engine, properties)
              .withDomainMetadataSupported()
              .build(engine);
      beforeCreateCommit.run();
      TransactionCommitResult created = txn.commit(engine, CloseableIterable.emptyIterable());
      // Version 0's snapshot, kept: the table comment's commit below starts on it unread.
      snapshots.rememberCommitted(path, created);
      snapshots.runPostCommitHooks(path, created);
    } catch (RuntimeException e) {
      if (exists(path)) {
        DETAIL.info(
            "Delta table {}: creation lost to a concurrent creator; using its table", path, e);
        return open(path, kind, definition.tableComment());
      }
      throw e;
    }
    migrator.setDescriptionIfAbsent(path, definition.tableComment());
    long version = snapshots.require(path).getVersion();
    LOG.info("Delta table {}: created as a {} table (version {})", path, kind, version);
    return new OpenResult(path, version, true, kind.currentVersion(), 0);
  }

  /** Opens an existing table as a table of this kind, applying its missing migrations. */
  public OpenResult open(String path, TableKind kind) {
    return open(path, kind, kind.tableComment());
  }

  private OpenResult open(String path, TableKind kind, String tableComment) {
    Optional<OpenResult> asIs = openAsIs(path, kind);
    if (asIs.isPresent()) {
      return asIs.get();
    }
    OpenResult opened = open(path, kind.propertyValue(), kind.migrations(), tableComment);
    Map<String, String> current = snapshots.require(path).getTableProperties();
    Map<String, String> missing = new HashMap<>();
    SmallFileCompaction.tableProperties(kind)
        .forEach(
            (key, value) -> {
              if (!current.containsKey(key)) {
                missing.put(key, value);
              }
            });
    if (missing.isEmpty()) {
      return opened;
    }
    long version = setTableProperties(path, missing);
    LOG.info(
        "Delta table {}: set {} for the job's own tables (version {})",
        path,
        String.join(
            ", ", missing.entrySet().stream().map(e -> e.getKey() + " = " + e.getValue()).toList()),
        version);
    return new OpenResult(
        path, version, opened.created(), opened.schemaVersion(), opened.migrationsApplied());
  }

  /**
   * The table as it is, when opening it as {@code kind} has nothing to do, judged from the latest
   * snapshot this JVM keeps (no log read when it is current): its kind recorded and the same, its
   * schema version the kind's current one (no migration left), its comment set and every property
   * the job's own tables get ({@link SmallFileCompaction#tableProperties}) present. Empty otherwise
   * (the full {@link #open} then checks, migrates and completes it). So the shared facts and
   * control tables, opened again by each table a run plans, cost a status check each time.
   */
  private Optional<OpenResult> openAsIs(String path, TableKind kind) {
    Optional<Snapshot> latest = snapshots.latest(path);
    if (latest.isEmpty()) {
      return Optional.empty();
    }
    Snapshot snapshot = latest.get();
    Map<String, String> properties = snapshot.getTableProperties();
    String recordedKind = properties.get(TableProperties.TABLE_KIND);
    String version = properties.get(TableProperties.SCHEMA_VERSION);
    if (recordedKind == null
        || !recordedKind.equalsIgnoreCase(kind.propertyValue())
        || !String.valueOf(kind.currentVersion()).equals(version)
        || KernelInternals.description(snapshot).isEmpty()
        || !properties.keySet().containsAll(SmallFileCompaction.tableProperties(kind).keySet())) {
      return Optional.empty();
    }
    return Optional.of(
        new OpenResult(path, snapshot.getVersion(), false, kind.currentVersion(), 0));
  }

  /** {@link #open(String, TableKind)} for a kind given by name and migration list (tests). */
  OpenResult open(String path, String kindName, List<Migration> migrations, String tableComment) {
    snapshots.require(path);
    return migrator.open(path, kindName, Migration.checkOrdered(migrations), tableComment);
  }

  /** Appends nullable columns the table lacks, in one metadata-only commit. */
  public List<String> addColumns(String path, List<DeltaColumn> columns) {
    snapshots.require(path);
    return migrator.addColumns(path, columns);
  }

  /** Makes the table take rows of these columns, in one metadata-only commit or none. */
  public SchemaEvolution evolveSchema(String path, List<DeltaColumn> columns) {
    snapshots.require(path);
    return migrator.evolve(path, List.copyOf(columns));
  }

  /** Sets table properties through Kernel's public API, in one commit or none. */
  public long setTableProperties(String path, Map<String, String> properties) {
    Snapshot snapshot = snapshots.require(path);
    Map<String, String> current = snapshot.getTableProperties();
    if (properties.entrySet().stream()
        .allMatch(e -> e.getValue().equals(current.get(e.getKey())))) {
      return snapshot.getVersion();
    }
    TransactionCommitResult result =
        snapshot
            .buildUpdateTableTransaction(ENGINE_INFO, Operation.MANUAL_UPDATE)
            .withTablePropertiesAdded(properties)
            .build(engine)
            .commit(engine, CloseableIterable.emptyIterable());
    snapshots.runPostCommitHooks(path, result);
    return result.getVersion();
  }

  /** Gives a table without data files these columns in place of its own. */
  public boolean replaceColumnsOfEmptyTable(String path, List<DeltaColumn> columns) {
    snapshots.require(path);
    return migrator.replaceColumnsOfEmptyTable(
        path, List.copyOf(columns), () -> scans.hasDataFiles(path));
  }
}
