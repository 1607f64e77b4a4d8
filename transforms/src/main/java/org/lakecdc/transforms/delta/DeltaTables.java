package org.lakecdc.transforms.delta;

import io.delta.kernel.Operation;
import io.delta.kernel.Scan;
import io.delta.kernel.Snapshot;
import io.delta.kernel.Table;
import io.delta.kernel.Transaction;
import io.delta.kernel.TransactionCommitResult;
import io.delta.kernel.data.ColumnarBatch;
import io.delta.kernel.data.FilteredColumnarBatch;
import io.delta.kernel.defaults.engine.DefaultEngine;
import io.delta.kernel.defaults.engine.hadoopio.HadoopFileIO;
import io.delta.kernel.engine.Engine;
import io.delta.kernel.engine.FileReadResult;
import io.delta.kernel.exceptions.ConcurrentTransactionException;
import io.delta.kernel.exceptions.ConcurrentWriteException;
import io.delta.kernel.exceptions.MaxCommitRetryLimitReachedException;
import io.delta.kernel.exceptions.TableNotFoundException;
import io.delta.kernel.hook.PostCommitHook;
import io.delta.kernel.transaction.UpdateTableTransactionBuilder;
import io.delta.kernel.types.StructType;
import io.delta.kernel.utils.CloseableIterable;
import io.delta.kernel.utils.CloseableIterator;
import io.delta.kernel.utils.FileStatus;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.beam.sdk.schemas.Schema;
import org.apache.beam.sdk.values.Row;
import org.apache.hadoop.conf.Configuration;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.io.mssqlcdc.client.SchemaChangedError;
import org.lakecdc.io.mssqlcdc.schema.OutputType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Delta tables through Delta Kernel: create with comments and properties, migrate, write data files
 * on workers and commit them in one place, idempotently, with the stream position in domain
 * metadata, rewrite small tables, and read tables back (docs/architecture.md "Delta tables").
 *
 * <p>Paths are a local filesystem path ({@code /data/bronze/orders}) or any Hadoop URI ({@code
 * s3a://bucket/bronze/orders}, {@code abfss://...}); the Hadoop configuration given at {@link
 * #create(Map)} reaches the filesystem (credentials, endpoints). An instance holds a Kernel {@link
 * Engine}: it is thread-safe but not serializable, so a Beam {@code DoFn} creates one in its
 * {@code @Setup} from a serializable configuration map.
 *
 * <h2>Exactly once</h2>
 *
 * <p>{@link #writeDataFiles} writes Parquet files into the table directory and returns their {@code
 * add} actions as {@link DataFileAction}s; nothing is visible until {@link #commit} commits them in
 * one Delta transaction tagged with a transaction identifier {@code (appId, txnVersion)}. Delta
 * keeps the highest version committed per app id, and a transaction whose version is not above it
 * is refused ({@code ConcurrentTransactionException}): {@link #commit} reports that as {@link
 * CommitResult.Status#ALREADY_COMMITTED}, so a replayed batch is never written twice. Domain
 * metadata committed in the same transaction (the stream position) is atomic with the data, which
 * makes the table its own checkpoint ({@link #domainMetadata}, {@link #latestTransactionVersion}).
 * Data file names are random UUIDs (as Kernel's default engine names them): a retried worker writes
 * new files, and files never committed are orphans that {@code VACUUM} removes; the transaction
 * identifier, not the names, keeps commits idempotent.
 *
 * <h2>Snapshots</h2>
 *
 * <p>Every call works on the table's latest snapshot. Reading one from the log (Kernel's {@code
 * getLatestSnapshot}: list the log, read the last checkpoint and the commits after it) is the main
 * fixed cost of a small commit, so an instance keeps the latest snapshot it read or committed per
 * path (Kernel's post-commit snapshot) and reuses it while it is still the latest: while the log
 * has no commit file of the next version and the commit file of its version is unchanged (two file
 * status calls), and until a checkpoint is written (the kept snapshot would replay the log from its
 * older checkpoint). A commit of another writer or instance, a table deleted and created again at
 * the path, are seen as a listing would see them; commits race as they did with a snapshot read
 * just before (Kernel's conflict detection, the transaction identifiers, {@code withMaxRetries(0)}
 * for rewrites).
 *
 * <h2>What Kernel cannot write</h2>
 *
 * <p>Tables are created without column mapping, change data feed, check constraints, generated or
 * identity columns (Kernel 4.4 refuses to write tables with them) and with domain metadata
 * supported. Kernel's public API cannot remove files, evolve a schema without column mapping or set
 * the table comment; those go through {@link KernelInternals} and are committed without Kernel
 * retries (rewrites and metadata changes assume one committer per table). Kernel 4.4 does write
 * tables with Delta type widening (table feature {@code typeWidening}, or its preview): {@link
 * #evolveSchema} widens a column of such a table, recording the change in {@code
 * delta.typeChanges}, and reads older files in the wider type.
 */
public final class DeltaTables {
  private static final Logger LOG = LoggerFactory.getLogger(DeltaTables.class);

  /** The {@code commitInfo.engineInfo} of our commits (Kernel prefixes its own version). */
  static final String ENGINE_INFO = "lakecdc";

  /**
   * Attempts of an append that loses to a concurrent metadata or protocol change ({@code
   * ConcurrentWriteException} after Kernel's own conflict resolution), each on a fresh snapshot.
   */
  public static final int MAX_APPEND_ATTEMPTS = 5;

  /** Object-store tables this instance has read: one missing now is a listing gone wrong. */
  private final Set<String> seenOnObjectStore = ConcurrentHashMap.newKeySet();

  private final Engine engine;
  private final Configuration hadoopConf;
  private final TableMigrator migrator;
  private final Clock clock;
  private final ParquetDataFiles parquet;
  private final HadoopFileIO fileIO;
  private final AtomicLong snapshotLoads = new AtomicLong();

  /**
   * The latest snapshot this instance read or committed per table path, with the status of its
   * version's commit file; reused while it is still the table's latest ({@link #isLatest}).
   */
  private final Map<String, KnownSnapshot> snapshots = new ConcurrentHashMap<>();

  private record KnownSnapshot(Snapshot snapshot, FileStatus commitFile) {}

  private DeltaTables(Configuration hadoopConf, Clock clock) {
    if (LocalFileLogStore.isHadoopLocal(hadoopConf)) {
      hadoopConf.setIfUnset(LocalFileLogStore.CONF_KEY, LocalFileLogStore.class.getName());
    }
    // s3a: commits with conditional PUTs, safe with any number of writers (S3ConditionalLogStore).
    hadoopConf.setIfUnset(S3ConditionalLogStore.CONF_KEY, S3ConditionalLogStore.class.getName());
    this.hadoopConf = hadoopConf;
    this.fileIO = new HadoopFileIO(hadoopConf);
    this.engine = DefaultEngine.create(fileIO);
    this.parquet = new ParquetDataFiles(fileIO, hadoopConf);
    this.migrator = new TableMigrator(engine);
    this.clock = clock;
  }

  /**
   * Tables on the default Hadoop configuration (local files, and whatever {@code core-site.xml} on
   * the classpath configures).
   *
   * @return the instance
   */
  public static DeltaTables create() {
    return create(Map.of());
  }

  /**
   * Tables on the default Hadoop configuration with these properties set over it, e.g. {@code
   * fs.s3a.endpoint}.
   *
   * @param hadoopProperties Hadoop configuration keys and values
   * @return the instance
   */
  public static DeltaTables create(Map<String, String> hadoopProperties) {
    Configuration conf = new Configuration();
    hadoopProperties.forEach(conf::set);
    return new DeltaTables(conf, Clock.systemUTC());
  }

  /**
   * Tables on this Hadoop configuration (not copied: do not change it afterwards). Unless it names
   * a log store for {@code file:} ({@value LocalFileLogStore#CONF_KEY}) or another file system for
   * the scheme, {@link LocalFileLogStore} is set in it for local tables (all constructors do this).
   *
   * @param hadoopConf the Hadoop configuration
   * @return the instance
   */
  public static DeltaTables create(Configuration hadoopConf) {
    return new DeltaTables(Objects.requireNonNull(hadoopConf, "hadoopConf"), Clock.systemUTC());
  }

  // ------------------------------------------------------------------------------------------
  // Creating and opening
  // ------------------------------------------------------------------------------------------

  /**
   * Whether a Delta table exists at the path (its {@code _delta_log} has a commit).
   *
   * @param path the table path or URI
   * @return true when a table exists
   */
  public boolean exists(String path) {
    return latestSnapshot(path).isPresent();
  }

  /**
   * Creates the table if none exists at the path, else opens it ({@link #open}). A new table gets
   * the definition's columns with their comments (Delta field metadata {@code comment}), the table
   * comment as {@code metaData.description}, the definition's properties plus {@link
   * TableProperties#SCHEMA_VERSION} = the kind's {@link TableKind#currentVersion()} and {@link
   * TableProperties#TABLE_KIND}, and domain metadata support ({@code withDomainMetadataSupported}).
   *
   * <p>Creation is two commits: version 0 creates the table through Kernel; version 1 sets the
   * table comment, which Kernel's public API cannot set. A creation interrupted between them is
   * finished by the next {@link #open}. A creation that loses to a concurrent creator takes that
   * creator's table when it exists afterwards (C133); an existing table is never re-created, its
   * columns are not compared with the definition (add new ones with {@link #addColumns}).
   *
   * @param path the table path or URI
   * @param definition kind, columns, comment and properties
   * @return the table state; {@link OpenResult#created()} tells whether this call created it
   * @throws IncompatibleTableException when an existing table cannot be opened as the kind
   * @throws io.delta.kernel.exceptions.KernelException when Kernel refuses the schema (e.g. a
   *     column name with a character Delta refuses without column mapping) or the creation failed
   *     and no table exists afterwards
   */
  public OpenResult createIfAbsent(String path, TableDefinition definition) {
    return createIfAbsent(path, definition, () -> {});
  }

  /** {@link #createIfAbsent(String, TableDefinition)} running a test hook before the commit. */
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
      runPostCommitHooks(path, txn.commit(engine, CloseableIterable.emptyIterable()));
    } catch (RuntimeException e) {
      if (exists(path)) {
        LOG.info(
            "Delta table {}: creation lost to a concurrent creator ({}); using its table",
            path,
            e.toString());
        return open(path, kind, definition.tableComment());
      }
      throw e;
    }
    migrator.setDescriptionIfAbsent(path, definition.tableComment());
    long version = version(path);
    LOG.info("Delta table {}: created as a {} table (version {})", path, kind, version);
    return new OpenResult(path, version, true, kind.currentVersion(), 0);
  }

  /**
   * Opens an existing table as a table of this kind: checks its {@link TableProperties#TABLE_KIND}
   * (when set) and {@link TableProperties#SCHEMA_VERSION} (0 when unset), then applies the kind's
   * migrations it has not had, in order, one commit each, each commit stamping its version
   * (docs/tables.md). Nothing is written when the table is current. Sets the kind's table comment
   * when the table has none.
   *
   * @param path the table path or URI
   * @param kind the kind the caller expects
   * @return the table state after migrations
   * @throws IllegalStateException {@code No Delta table at <path>} when none exists
   * @throws IncompatibleTableException {@code Delta table <path> is a <other> table
   *     (mssql_cdc.table_kind), not a <kind> table}, or {@code Delta table <path> is at <kind>
   *     schema version <v> (mssql_cdc.schema_version), newer than <k>, the newest <kind> version
   *     this build knows; upgrade lakecdc to write it}
   * @throws DeltaConflictException when a migration keeps losing to concurrent commits
   */
  public OpenResult open(String path, TableKind kind) {
    return open(path, kind, kind.tableComment());
  }

  private OpenResult open(String path, TableKind kind, String tableComment) {
    return open(path, kind.propertyValue(), kind.migrations(), tableComment);
  }

  /** {@link #open(String, TableKind)} for a kind given by name and migration list (tests). */
  OpenResult open(String path, String kindName, List<Migration> migrations, String tableComment) {
    requireTable(path);
    return migrator.open(path, kindName, Migration.checkOrdered(migrations), tableComment);
  }

  /**
   * Appends nullable columns the table lacks, after the existing ones, in one metadata-only commit;
   * columns it already has (names compared ignoring case) are skipped, and when none is missing
   * nothing is committed (docs/tables.md; C134). Rows written before read the new columns as NULL.
   *
   * @param path the table path or URI
   * @param columns the columns, each nullable
   * @return the names of the columns added, in order; empty when nothing was committed
   * @throws IllegalArgumentException when a column is not nullable
   * @throws io.delta.kernel.exceptions.KernelException when Kernel's schema checks refuse a name
   *     ({@code Column name '<name>' contains one of the unsupported ([ ,;{}()\n\t=]) characters.})
   * @throws DeltaConflictException when the commit keeps losing to concurrent commits
   */
  public List<String> addColumns(String path, List<DeltaColumn> columns) {
    requireTable(path);
    return migrator.addColumns(path, columns);
  }

  /**
   * Makes the table take rows of these columns (docs/tables.md "Bronze"; C043, C054, C055), in one
   * metadata-only commit, or none when it already does. For each column, names compared ignoring
   * case:
   *
   * <ul>
   *   <li>absent from the table: appended after the existing columns, nullable, with its comment;
   *       rows written before read it as NULL;
   *   <li>present with a type that holds the column's type unchanged ({@link
   *       org.lakecdc.io.mssqlcdc.schema.TypeCompatibility#fits fits(type, tableType)}, equal types
   *       included): nothing to do ({@link #writeDataFiles} converts such values);
   *   <li>present with a type the column's type widens ({@code fits(tableType, type)}) and that
   *       Delta Kernel's type widening covers (integer widening, float or small integers to double,
   *       date to timestamp_ntz, decimal widening): widened when the table has {@link
   *       TableProperties#ENABLE_TYPE_WIDENING} = {@code true} (Delta table feature {@code
   *       typeWidening}, which Kernel writes); the change is recorded in the column's field
   *       metadata {@code delta.typeChanges} as Delta's type widening requires, and rows written
   *       before read in the new type.
   * </ul>
   *
   * Table columns not in the list are left as they are. Every column is checked before anything is
   * committed: on an error the table is unchanged.
   *
   * @param path the table path or URI
   * @param columns the columns the rows to write have
   * @return what was added and widened, with the commit's version
   * @throws SchemaChangedError when a new column's name needs column mapping ({@code Delta table
   *     <path> can take column(s) '<name>' only with column mapping, and column mapping is off on
   *     this table: ...}; Kernel cannot write tables with column mapping, so the message says to
   *     declare the columns without it); when a type is not one Kernel can widen the column to
   *     ({@code Delta table <path> holds column '<name>' as <type>, which cannot take <type>
   *     unchanged, and Delta Kernel <version> cannot widen ...}); or when it is, but type widening
   *     is off ({@code ... and type widening is off on this table. Enable it and run again; ...:
   *     ALTER TABLE delta.`<path>` SET TBLPROPERTIES ('delta.enableTypeWidening' = 'true'). ...})
   * @throws IncompatibleTableException when the table has column mapping (Kernel cannot write it),
   *     or a column of a type this project does not write
   * @throws IllegalStateException when no table exists
   * @throws DeltaConflictException when the commit keeps losing to concurrent commits
   */
  public SchemaEvolution evolveSchema(String path, List<DeltaColumn> columns) {
    requireTable(path);
    return migrator.evolve(path, List.copyOf(columns));
  }

  /**
   * Sets table properties ({@code ALTER TABLE ... SET TBLPROPERTIES}) through Kernel's public API,
   * in one commit; Kernel adds the table features a property needs to the protocol (e.g. {@code
   * typeWidening} for {@code delta.enableTypeWidening = true}). Nothing is committed when every
   * property already has its value.
   *
   * @param path the table path or URI
   * @param properties property names and values
   * @return the table version after the call
   * @throws IllegalStateException when no table exists
   * @throws io.delta.kernel.exceptions.KernelException when Kernel refuses a property (an unknown
   *     {@code delta.*} key, an invalid value, a feature it cannot write)
   */
  public long setTableProperties(String path, Map<String, String> properties) {
    Snapshot snapshot = requireTable(path);
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
    runPostCommitHooks(path, result);
    return result.getVersion();
  }

  // ------------------------------------------------------------------------------------------
  // Writing
  // ------------------------------------------------------------------------------------------

  /**
   * Writes rows as Parquet data files into the table's directory without committing them: the
   * worker half of an append (Kernel's {@code transformLogicalData}, {@code getWriteContext}, the
   * project's Parquet writer, {@code generateAppendActions}). Every file's footer carries {@code
   * org.apache.spark.version}, so Spark reads its dates and timestamps as proleptic Gregorian with
   * default settings (docs/tables.md, "Extreme values"). Row fields are matched to table columns by
   * name ignoring case; table columns the rows lack are written as NULL. Values are the Java values
   * of {@link org.lakecdc.io.mssqlcdc.schema.OutputType}'s Beam field types (LocalDate,
   * LocalDateTime in UTC, Instant, BigDecimal, ...); timestamps keep microseconds.
   *
   * @param path the table path or URI; the table must exist
   * @param rowSchema the schema of the rows
   * @param rows the rows; may be empty
   * @return one action per file written (Kernel rolls files at its target size), in write order;
   *     empty for no rows. The rows are pulled one at a time as the files are written, never held
   *     all at once: memory holds one batch of {@value RowBatches#BATCH_ROWS} rows and the open
   *     file's row group
   * @throws IncompatibleTableException when a field has no column or a different type, or a NOT
   *     NULL column has no field
   * @throws IllegalArgumentException when a value does not fit its column (NULL in a NOT NULL
   *     column, a DECIMAL needing rounding or more digits)
   * @throws UncheckedIOException when writing a file fails: {@code Cannot write data files of Delta
   *     table <path>: <the I/O error>} (for example {@code No space left on device}), with the
   *     original failure in its cause chain
   */
  public List<DataFileAction> writeDataFiles(String path, Schema rowSchema, Iterable<Row> rows) {
    Snapshot snapshot = requireTable(path);
    Transaction txn =
        snapshot.buildUpdateTableTransaction(ENGINE_INFO, Operation.WRITE).build(engine);
    return writeDataFiles(path, txn, rowSchema, rows);
  }

  private List<DataFileAction> writeDataFiles(
      String path, Transaction txn, Schema rowSchema, Iterable<Row> rows) {
    // The writer checks the rows' schema against the table's before any row (also for no rows).
    try (DataFileWriter writer = new DataFileWriter(path, engine, txn, rowSchema, parquet)) {
      Iterator<Row> iterator = rows.iterator();
      while (iterator.hasNext()) {
        writer.write(iterator.next());
      }
      return writer.finish();
    }
  }

  /**
   * Starts a write of rows pushed one at a time ({@link DataFileWriter#write}), for callers that
   * cannot hand {@link #writeDataFiles} an iterator (a Beam bundle): the same files, values,
   * rolling and errors, in memory bounded by one batch of {@value RowBatches#BATCH_ROWS} rows and
   * the open file's row group. Nothing is committed; {@link DataFileWriter#finish} gives the
   * actions.
   *
   * @param path the table path or URI; the table must exist
   * @param rowSchema the schema of the rows
   * @return the writer; close it (it abandons the write unless finished)
   * @throws IncompatibleTableException when a field has no column or a different type, or a NOT
   *     NULL column has no field
   * @throws IllegalStateException {@code No Delta table at <path>} when none exists
   */
  public DataFileWriter openDataFileWriter(String path, Schema rowSchema) {
    Snapshot snapshot = requireTable(path);
    Transaction txn =
        snapshot.buildUpdateTableTransaction(ENGINE_INFO, Operation.WRITE).build(engine);
    return new DataFileWriter(path, engine, txn, rowSchema, parquet);
  }

  /**
   * The deepest {@link IOException} in the cause chain of {@code failure} (the file system's own,
   * such as {@code No space left on device}, under the wrappers), or null.
   */
  static @Nullable IOException ioCause(Throwable failure) {
    java.util.Set<Throwable> seen =
        java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
    IOException deepest = null;
    for (Throwable t = failure; t != null && seen.add(t); t = t.getCause()) {
      if (t instanceof IOException io) {
        deepest = io;
      }
    }
    return deepest;
  }

  /**
   * Commits data files written by {@link #writeDataFiles} (on any worker) in one Delta transaction,
   * with a transaction identifier and domain metadata: the committer half of an append. When the
   * table already has a transaction of {@code appId} with a version {@code >= txnVersion}, nothing
   * is written and the result says {@link CommitResult.Status#ALREADY_COMMITTED} (a replay). A
   * commit that loses to concurrent blind appends is rebased by Kernel; one that loses to a
   * concurrent metadata or protocol change is rebuilt on a fresh snapshot, at most {@link
   * #MAX_APPEND_ATTEMPTS} times. A CHECKPOINT post-commit hook (every {@code
   * delta.checkpointInterval} commits, 10 by default) is run; its failure is logged, the commit
   * stands.
   *
   * @param path the table path or URI
   * @param files the data files; may be empty (a commit of only the transaction identifier and
   *     domain metadata)
   * @param appId the transaction's app id (e.g. the bronze sink id), or null for a commit without
   *     one (then never skipped)
   * @param txnVersion the transaction version for {@code appId} (e.g. the batch number), ignored
   *     when {@code appId} is null; must increase per app id
   * @param domainMetadata domain name to configuration (any string, JSON by convention), committed
   *     atomically with the files; domain names must not start with {@code delta.}
   * @return the outcome and the table version
   * @throws IllegalArgumentException when an action is not a serialized {@code add} action
   * @throws DeltaConflictException when every attempt lost to concurrent metadata changes
   */
  public CommitResult commit(
      String path,
      List<DataFileAction> files,
      @Nullable String appId,
      long txnVersion,
      Map<String, String> domainMetadata) {
    return commit(path, files, appId, txnVersion, domainMetadata, () -> {});
  }

  /**
   * {@link #commit(String, List, String, long, Map)} running a test hook between building the first
   * attempt's transaction and committing it, where a concurrent writer can interfere.
   */
  CommitResult commit(
      String path,
      List<DataFileAction> files,
      @Nullable String appId,
      long txnVersion,
      Map<String, String> domainMetadata,
      Runnable beforeFirstCommit) {
    return commit(path, files, appId, txnVersion, domainMetadata, beforeFirstCommit, null);
  }

  /**
   * {@link #commit(String, List, String, long, Map, Runnable)} whose first attempt commits {@code
   * firstTransaction} (built by the caller on the latest snapshot with the same transaction
   * identifier) when given, instead of building one on a snapshot read again.
   */
  private CommitResult commit(
      String path,
      List<DataFileAction> files,
      @Nullable String appId,
      long txnVersion,
      Map<String, String> domainMetadata,
      Runnable beforeFirstCommit,
      @Nullable Transaction firstTransaction) {
    List<io.delta.kernel.data.Row> actions = new ArrayList<>(files.size());
    for (DataFileAction file : files) {
      actions.add(KernelInternals.addActionFromJson(file.actionJson()));
    }
    Map<String, String> domains = new LinkedHashMap<>(domainMetadata);
    RuntimeException last = null;
    try (KernelRetries.Attempts transientFailures = new KernelRetries.Attempts(path, "an append")) {
      for (int attempt = 1; attempt <= MAX_APPEND_ATTEMPTS; attempt++) {
        Transaction txn;
        if (attempt == 1 && firstTransaction != null && transientFailures.failures() == 0) {
          txn = firstTransaction;
        } else {
          try {
            txn = transaction(requireTable(path), appId, txnVersion).build(engine);
          } catch (ConcurrentTransactionException e) {
            return alreadyCommitted(path, appId, txnVersion, version(path));
          } catch (RuntimeException e) {
            if (!KernelRetries.isRetryable(e)) {
              throw e;
            }
            snapshots.remove(path);
            transientFailures.pauseOrThrow(e);
            attempt--;
            continue;
          }
        }
        domains.forEach(txn::addDomainMetadata);
        if (attempt == 1 && transientFailures.failures() == 0) {
          beforeFirstCommit.run();
        }
        try {
          TransactionCommitResult result =
              txn.commit(
                  engine,
                  CloseableIterable.inMemoryIterable(KernelIterators.of(actions.iterator())));
          rememberCommitted(path, result);
          runPostCommitHooks(path, result);
          return new CommitResult(
              CommitResult.Status.COMMITTED, result.getVersion(), files.size(), 0);
        } catch (ConcurrentTransactionException e) {
          return alreadyCommitted(path, appId, txnVersion, version(path));
        } catch (RuntimeException e) {
          if (e instanceof ConcurrentWriteException
              || !KernelRetries.isRetryableCommit(e, appId != null)) {
            if (e instanceof ConcurrentWriteException cwe) {
              LOG.info(
                  "Delta table {}: append (appId {}, version {}) lost to a concurrent change"
                      + " (attempt {} of {}): {}",
                  path,
                  appId,
                  txnVersion,
                  attempt,
                  MAX_APPEND_ATTEMPTS,
                  cwe.getMessage());
              last = cwe;
              continue;
            }
            throw e;
          }
          // A transient failure of the store or of a listing: the next attempt starts from a fresh
          // snapshot, whose transaction identifier tells whether this one was committed after all.
          snapshots.remove(path);
          transientFailures.pauseOrThrow(e);
          attempt--;
        }
      }
    }
    throw new DeltaConflictException(
        "Delta table "
            + path
            + ": the append of appId "
            + appId
            + " version "
            + txnVersion
            + " lost to concurrent changes "
            + MAX_APPEND_ATTEMPTS
            + " times",
        last);
  }

  /** An append's transaction on {@code snapshot}, tagged {@code (appId, txnVersion)} if given. */
  private static UpdateTableTransactionBuilder transaction(
      Snapshot snapshot, @Nullable String appId, long txnVersion) {
    UpdateTableTransactionBuilder builder =
        snapshot.buildUpdateTableTransaction(ENGINE_INFO, Operation.WRITE);
    return appId == null ? builder : builder.withTransactionId(appId, txnVersion);
  }

  private CommitResult alreadyCommitted(
      String path, @Nullable String appId, long txnVersion, long tableVersion) {
    LOG.info(
        "Delta table {}: transaction (appId {}, version {}) is already committed; skipped",
        path,
        appId,
        txnVersion);
    return new CommitResult(CommitResult.Status.ALREADY_COMMITTED, tableVersion, 0, 0);
  }

  /**
   * Writes the rows and commits them in this process: {@link #writeDataFiles} then {@link #commit}.
   * For small writes (facts rows, tests); large appends write files on workers. The latest snapshot
   * is read once: the transaction built on it checks the transaction identifier (a replay is
   * skipped before any file is written), gives the files' write context and is the first commit
   * attempt.
   *
   * @param path the table path or URI
   * @param rowSchema the schema of the rows
   * @param rows the rows
   * @param appId the transaction's app id, or null
   * @param txnVersion the transaction version, ignored when {@code appId} is null
   * @param domainMetadata domain name to configuration
   * @return the outcome and the table version
   * @throws IncompatibleTableException see {@link #writeDataFiles}
   * @throws DeltaConflictException see {@link #commit}
   */
  public CommitResult append(
      String path,
      Schema rowSchema,
      Iterable<Row> rows,
      @Nullable String appId,
      long txnVersion,
      Map<String, String> domainMetadata) {
    Transaction txn;
    try {
      // Building reads the snapshot's transaction identifiers (from a checkpoint an object store
      // may be listing or replacing): retried from a fresh snapshot (KernelRetries).
      txn =
          KernelRetries.call(
              path,
              "starting an append",
              () -> {
                try {
                  return transaction(requireTable(path), appId, txnVersion).build(engine);
                } catch (ConcurrentTransactionException e) {
                  throw e; // committed before: the kept snapshot says so, and stays
                } catch (RuntimeException e) {
                  snapshots.remove(path);
                  throw e;
                }
              });
    } catch (ConcurrentTransactionException e) {
      return alreadyCommitted(path, appId, txnVersion, version(path));
    }
    List<DataFileAction> files = writeDataFiles(path, txn, rowSchema, rows);
    return commit(path, files, appId, txnVersion, domainMetadata, () -> {}, txn);
  }

  /**
   * Replaces all rows of a small table with these rows in one commit: removes every data file of
   * the snapshot the transaction reads and adds files with the new rows (the control table, one row
   * per target, is rewritten in place). Removes are built with Kernel's internal API ({@link
   * KernelInternals#removeAction}); the commit runs with {@code withMaxRetries(0)}, because
   * Kernel's conflict resolution does not check removed files: a concurrent commit makes it fail
   * instead of being rebased. Callers that computed the rows from the table's content must re-read
   * and recompute after a {@link DeltaConflictException}.
   *
   * @param path the table path or URI
   * @param rowSchema the schema of the rows
   * @param rows the table's new content; may be empty (the table is emptied)
   * @param appId a transaction app id for an idempotent rewrite, or null
   * @param txnVersion the transaction version, ignored when {@code appId} is null
   * @return the outcome: version, files added and removed; {@link
   *     CommitResult.Status#ALREADY_COMMITTED} when {@code (appId, txnVersion)} is already in
   * @throws IncompatibleTableException see {@link #writeDataFiles}
   * @throws DeltaConflictException when another commit landed first
   */
  public CommitResult rewrite(
      String path, Schema rowSchema, Iterable<Row> rows, @Nullable String appId, long txnVersion) {
    return rewrite(path, rowSchema, rows, appId, txnVersion, () -> {});
  }

  /** {@link #rewrite(String, Schema, Iterable, String, long)} running a test hook before commit. */
  CommitResult rewrite(
      String path,
      Schema rowSchema,
      Iterable<Row> rows,
      @Nullable String appId,
      long txnVersion,
      Runnable beforeCommit) {
    return rewrite(path, -1, rowSchema, rows, appId, txnVersion, Map.of(), beforeCommit);
  }

  /**
   * The rewrite, on the latest snapshot, which must be {@code readVersion} when that is not -1: the
   * files removed are those of the version whose content the caller's rows replace.
   */
  private CommitResult rewrite(
      String path,
      long readVersion,
      Schema rowSchema,
      Iterable<Row> rows,
      @Nullable String appId,
      long txnVersion,
      Map<String, String> domainMetadata,
      Runnable beforeCommit) {
    Snapshot snapshot = requireTable(path);
    if (readVersion >= 0 && snapshot.getVersion() != readVersion) {
      throw conflict(path, readVersion, snapshot.getVersion(), null);
    }
    UpdateTableTransactionBuilder builder =
        snapshot.buildUpdateTableTransaction(ENGINE_INFO, Operation.WRITE).withMaxRetries(0);
    if (appId != null) {
      builder = builder.withTransactionId(appId, txnVersion);
    }
    Transaction txn;
    try {
      txn = builder.build(engine);
    } catch (ConcurrentTransactionException e) {
      return alreadyCommitted(path, appId, txnVersion, snapshot.getVersion());
    }
    long now = clock.millis();
    List<io.delta.kernel.data.Row> actions = new ArrayList<>();
    forEachScanFile(
        snapshot.getScanBuilder().build(),
        (scanState, scanFile) -> actions.add(KernelInternals.removeAction(scanFile, now)));
    int removed = actions.size();
    List<DataFileAction> added = writeDataFiles(path, txn, rowSchema, rows);
    for (DataFileAction file : added) {
      actions.add(KernelInternals.addActionFromJson(file.actionJson()));
    }
    domainMetadata.forEach(txn::addDomainMetadata);
    beforeCommit.run();
    return commitOnce(
        path,
        txn,
        actions,
        appId,
        txnVersion,
        added.size(),
        removed,
        "the rewrite read version "
            + snapshot.getVersion()
            + " but another commit landed first; re-read the table and rewrite again");
  }

  /**
   * Commits a transaction built with {@code withMaxRetries(0)} (a rewrite, a rearrangement, a
   * deletion-vector wave: Kernel's conflict resolution does not check removed files, so such a
   * commit is never rebased), runs the post-commit hooks and says what was committed.
   *
   * @param conflict the message after {@code Delta table <path>: } when another commit landed first
   * @throws DeltaConflictException when another commit landed first
   */
  private CommitResult commitOnce(
      String path,
      Transaction txn,
      List<io.delta.kernel.data.Row> actions,
      @Nullable String appId,
      long txnVersion,
      int filesAdded,
      int filesRemoved,
      String conflict) {
    try {
      TransactionCommitResult result =
          txn.commit(
              engine, CloseableIterable.inMemoryIterable(KernelIterators.of(actions.iterator())));
      rememberCommitted(path, result);
      runPostCommitHooks(path, result);
      return new CommitResult(
          CommitResult.Status.COMMITTED, result.getVersion(), filesAdded, filesRemoved);
    } catch (ConcurrentTransactionException e) {
      return alreadyCommitted(path, appId, txnVersion, version(path));
    } catch (MaxCommitRetryLimitReachedException | ConcurrentWriteException e) {
      throw new DeltaConflictException("Delta table " + path + ": " + conflict, e);
    } catch (RuntimeException e) {
      if (!KernelRetries.isRetryable(e)) {
        throw e;
      }
      // A transient failure of the store: the commit may or may not have landed. The callers of
      // these commits re-read the table and recompute on a conflict, which covers both; with a
      // transaction identifier, one that landed is reported as such.
      snapshots.remove(path);
      if (appId != null) {
        Snapshot latest = requireTable(path);
        Optional<Long> committed = latest.getLatestTransactionVersion(engine, appId);
        if (committed.isPresent() && committed.get() >= txnVersion) {
          return alreadyCommitted(path, appId, txnVersion, latest.getVersion());
        }
      }
      throw new DeltaConflictException(
          "Delta table "
              + path
              + ": the commit failed on the way ("
              + e
              + "); re-read the table and commit again",
          e);
    }
  }

  /**
   * {@link #rewrite(String, Schema, Iterable, String, long)} without a transaction identifier.
   *
   * @param path the table path or URI
   * @param rowSchema the schema of the rows
   * @param rows the table's new content
   * @return the outcome
   */
  public CommitResult rewrite(String path, Schema rowSchema, Iterable<Row> rows) {
    return rewrite(path, rowSchema, rows, null, 0);
  }

  /**
   * Runs the checkpoint Kernel offers after a commit every {@code delta.checkpointInterval}
   * versions. Version checksums ({@code <version>.crc}, the other post-commit hooks) are not
   * written: Kernel derives each from the one before and from the actions it knows of, and the
   * schema migrations commit their metadata as raw actions ({@link TableMigrator}), which a derived
   * checksum would miss. A failed checkpoint is logged and skipped: the commit itself has
   * succeeded.
   */
  private void runPostCommitHooks(String path, TransactionCommitResult result) {
    for (PostCommitHook hook : result.getPostCommitHooks()) {
      if (hook.getType() != PostCommitHook.PostCommitHookType.CHECKPOINT) {
        continue;
      }
      try {
        hook.threadSafeInvoke(engine);
        // The kept snapshot replays the log from the checkpoint it was read with, a longer log
        // with every commit: the next call reads the table again, from the new checkpoint.
        snapshots.remove(path);
      } catch (IOException | RuntimeException e) {
        LOG.warn(
            "Delta table {}: checkpoint at version {} failed; the next one will be tried",
            path,
            result.getVersion(),
            e);
      }
    }
  }

  // ------------------------------------------------------------------------------------------
  // Reading
  // ------------------------------------------------------------------------------------------

  /**
   * The latest table version.
   *
   * @param path the table path or URI
   * @return the version, from 0
   * @throws IllegalStateException {@code No Delta table at <path>} when none exists
   */
  public long version(String path) {
    return requireTable(path).getVersion();
  }

  /**
   * The highest transaction version committed for an app id ({@code txn} actions): where a stream
   * that tags its commits with this app id resumes.
   *
   * @param path the table path or URI
   * @param appId the app id
   * @return the version, or empty when the app id never committed (or its entry expired after
   *     {@code delta.setTransactionRetentionDuration}, unset by default: never)
   * @throws IllegalStateException when no table exists
   */
  public OptionalLong latestTransactionVersion(String path, String appId) {
    Optional<Long> version = requireTable(path).getLatestTransactionVersion(engine, appId);
    return version.map(OptionalLong::of).orElse(OptionalLong.empty());
  }

  /**
   * The configuration of a domain's latest {@code domainMetadata} action.
   *
   * @param path the table path or URI
   * @param domain the domain name
   * @return the configuration, or empty when the domain was never set or was removed
   * @throws IllegalStateException when no table exists
   */
  public Optional<String> domainMetadata(String path, String domain) {
    return requireTable(path).getDomainMetadata(domain);
  }

  /**
   * The configuration of a domain's {@code domainMetadata} action as of one table version: what a
   * reader pinned to that version sees (reconcile reads silver's position with the rows it
   * compares).
   *
   * @param path the table path or URI
   * @param version the table version
   * @param domain the domain name
   * @return the configuration, or empty when the domain was not set (or was removed) at the version
   * @throws IllegalStateException when no table exists or the version is no longer readable
   */
  public Optional<String> domainMetadataAt(String path, long version, String domain) {
    return snapshotAt(path, version).getDomainMetadata(domain);
  }

  /**
   * The table's id: Delta's {@code metaData.id}, a UUID given at creation and kept for the table's
   * life (what delta-spark's {@code DESCRIBE DETAIL} shows as {@code id}). It tells one incarnation
   * of a path from another: a table deleted and created again at the same path has a new id.
   *
   * @param path the table path or URI
   * @return the id
   * @throws IllegalStateException when no table exists
   */
  public String tableId(String path) {
    return KernelInternals.tableId(requireTable(path));
  }

  /**
   * Whether the latest version has at least one data file. Lists the log's file actions only (no
   * data file is read), stopping at the first.
   *
   * @param path the table path or URI
   * @return true when the table holds a data file
   * @throws IllegalStateException when no table exists
   */
  public boolean hasDataFiles(String path) {
    Scan scan = requireTable(path).getScanBuilder().build();
    try (CloseableIterator<FilteredColumnarBatch> batches = scan.getScanFiles(engine)) {
      while (batches.hasNext()) {
        try (CloseableIterator<io.delta.kernel.data.Row> files = batches.next().getRows()) {
          if (files.hasNext()) {
            return true;
          }
        }
      }
      return false;
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot list the data files of Delta table " + path, e);
    }
  }

  /**
   * Gives a table that holds no data file these columns in place of its own, in one metadata
   * commit: a table created for rows that were never written (a run that failed before its first
   * commit) takes the next run's columns, whatever their types, since no row can read differently.
   * Nothing is committed when the columns are already the table's (names, types, nullability and
   * comments).
   *
   * @param path the table path or URI
   * @param columns the new columns, in order
   * @return true when the columns were replaced
   * @throws IllegalStateException when no table exists, or when it holds a data file (its columns
   *     can then only evolve, {@link #evolveSchema})
   * @throws DeltaConflictException when the commit keeps losing to concurrent commits
   */
  public boolean replaceColumnsOfEmptyTable(String path, List<DeltaColumn> columns) {
    requireTable(path);
    return migrator.replaceColumnsOfEmptyTable(
        path, List.copyOf(columns), () -> hasDataFiles(path));
  }

  /**
   * The table's metadata at its latest version: table comment, properties, columns with comments.
   *
   * @param path the table path or URI
   * @return the metadata
   * @throws IllegalStateException when no table exists
   * @throws IncompatibleTableException when a column has a type outside the output types
   */
  public TableInfo describe(String path) {
    Snapshot snapshot = requireTable(path);
    return new TableInfo(
        path,
        snapshot.getVersion(),
        KernelInternals.description(snapshot).orElse(null),
        snapshot.getTableProperties(),
        DeltaTypes.toColumns(path, snapshot.getSchema()));
  }

  /**
   * The table's commits as its log files hold them, oldest first (see {@link CommitSummary}).
   * Counting commits of one operation or app id checks, e.g., one bronze commit per batch.
   *
   * @param path the table path or URI
   * @return the commits still in the log
   * @throws UncheckedIOException when the log cannot be listed or read
   */
  public List<CommitSummary> history(String path) {
    return DeltaLogHistory.read(hadoopConf, path);
  }

  /**
   * All rows of the latest version, as maps from column name (the table's spelling, in column
   * order) to plain Java values: Boolean, Short, Integer, Long, Float, Double, BigDecimal,
   * LocalDate, LocalDateTime (TIMESTAMP_NTZ), Instant (TIMESTAMP, UTC), String, byte[]; null for
   * NULL. Rows come file by file in no particular order. Reads the whole table into memory: for
   * small tables, tests and resume checks.
   *
   * @param path the table path or URI
   * @return the rows
   * @throws IllegalStateException when no table exists
   * @throws UncheckedIOException when a data file cannot be read
   */
  public List<Map<String, Object>> scan(String path) {
    Snapshot snapshot = requireTable(path);
    Scan scan = snapshot.getScanBuilder().build();
    List<Map<String, Object>> result = new ArrayList<>();
    forEachScanFile(
        scan,
        (scanState, scanFile) -> {
          try (CloseableIterator<Map<String, Object>> rows =
              readScanFile(path, scanState, scanFile)) {
            rows.forEachRemaining(result::add);
          } catch (IOException e) {
            throw new UncheckedIOException("Cannot close a data file of Delta table " + path, e);
          }
        });
    return result;
  }

  /**
   * One data file of a table version, as {@link #scanFiles} lists it: what a worker needs to read
   * it ({@link #readScanFile(ScanFile)}). Small (the file's {@code add} action); pipelines carry it
   * in {@link ScanFileCoder}, not Java serialization.
   *
   * @param tablePath the table path or URI
   * @param version the table version the file was listed at
   * @param json the Kernel scan file row, as JSON
   */
  public record ScanFile(String tablePath, long version, String json)
      implements java.io.Serializable {
    public ScanFile {
      Objects.requireNonNull(tablePath, "tablePath");
      Objects.requireNonNull(json, "json");
    }
  }

  /**
   * The data files of the table's latest version, one {@link ScanFile} each: read from the Delta
   * log only (no data file is opened), to be read in parallel, one file per task ({@link
   * #readScanFile(ScanFile)}).
   *
   * @param path the table path or URI
   * @return the files, in the log's order
   * @throws IllegalStateException when no table exists
   */
  public List<ScanFile> scanFiles(String path) {
    Snapshot snapshot = requireTable(path);
    long version = snapshot.getVersion();
    List<ScanFile> files = new ArrayList<>();
    forEachScanFile(
        snapshot.getScanBuilder().build(),
        (scanState, scanFile) ->
            files.add(new ScanFile(path, version, KernelInternals.scanFileToJson(scanFile))));
    return files;
  }

  /**
   * The data files of the table's latest version with their sizes, row counts and deletion vectors
   * (for compaction and vacuum): read from the Delta log only, statistics included.
   *
   * @param path the table path or URI
   * @return the files, in the log's order; their {@link DataFileDetail#scanFile()}s carry the
   *     version they were listed at
   * @throws IllegalStateException when no table exists
   */
  public List<DataFileDetail> dataFileDetails(String path) {
    Snapshot snapshot = requireTable(path);
    long version = snapshot.getVersion();
    List<DataFileDetail> files = new ArrayList<>();
    forEachScanFile(
        snapshot.getScanBuilder().build(),
        true,
        (scanState, scanFile) -> {
          FileStatus status = KernelInternals.dataFileStatus(scanFile);
          files.add(
              new DataFileDetail(
                  new ScanFile(path, version, KernelInternals.scanFileToJson(scanFile)),
                  status.getPath(),
                  status.getSize(),
                  status.getModificationTime(),
                  KernelInternals.numRecords(scanFile).orElse(-1L),
                  KernelInternals.deletionVectorCardinality(scanFile),
                  KernelInternals.deletionVectorFile(scanFile, snapshot.getPath())));
        });
    return files;
  }

  /**
   * Replaces data files by files holding the same rows (compaction), in one commit: a {@code
   * remove} with {@code dataChange = false} for each removed file (its deletion vector included)
   * and each added file's {@code add} with {@code dataChange = false}, so streaming readers of the
   * table skip the commit. No transaction identifier; the table's domain metadata are kept as they
   * are. The caller guarantees that the added files hold exactly the rows the removed ones show
   * (deletion vectors applied). Committed with {@code withMaxRetries(0)} on the version the removed
   * files were listed at: a commit that landed since makes it fail, because Kernel's conflict
   * resolution does not check removed files (a concurrent wave may have changed their deletion
   * vectors).
   *
   * @param path the table path or URI
   * @param removed files listed by {@link #dataFileDetails} (or {@link #scanFiles}), all at the
   *     same version; at least one
   * @param added files written by {@link #writeDataFiles} or {@link #openDataFileWriter}; may be
   *     empty (the removed files' rows were all deleted)
   * @return the commit's version, files added and removed
   * @throws IllegalArgumentException when nothing is removed, or the files were listed at different
   *     versions or of another table
   * @throws DeltaConflictException when the table is no longer at the version the files were listed
   *     at, or another commit landed before this one: nothing is committed; the added files stay
   *     uncommitted orphans ({@link #vacuum} deletes them)
   */
  public CommitResult rearrangeFiles(
      String path, List<ScanFile> removed, List<DataFileAction> added) {
    if (removed.isEmpty()) {
      throw new IllegalArgumentException(
          "Delta table " + path + ": a rearrangement removes at least one file");
    }
    long readVersion = removed.get(0).version();
    for (ScanFile file : removed) {
      if (file.version() != readVersion || !file.tablePath().equals(path)) {
        throw new IllegalArgumentException(
            "Delta table "
                + path
                + ": the files to remove must be listed at one version of this table, got "
                + file.tablePath()
                + " version "
                + file.version()
                + " and version "
                + readVersion);
      }
    }
    Snapshot snapshot = requireTable(path);
    if (snapshot.getVersion() != readVersion) {
      throw new DeltaConflictException(
          "Delta table "
              + path
              + ": the rearrangement read version "
              + readVersion
              + " but the table is at version "
              + snapshot.getVersion()
              + "; list the files again",
          null);
    }
    Transaction txn =
        snapshot
            .buildUpdateTableTransaction(ENGINE_INFO, Operation.MANUAL_UPDATE)
            .withMaxRetries(0)
            .build(engine);
    long now = clock.millis();
    List<io.delta.kernel.data.Row> actions = new ArrayList<>(removed.size() + added.size());
    for (ScanFile file : removed) {
      actions.add(
          KernelInternals.removeAction(KernelInternals.scanFileFromJson(file.json()), now, false));
    }
    for (DataFileAction file : added) {
      actions.add(KernelInternals.addActionFromJson(withoutDataChange(file.actionJson())));
    }
    return commitOnce(
        path,
        txn,
        actions,
        null,
        0,
        added.size(),
        removed.size(),
        "the rearrangement read version "
            + readVersion
            + " but another commit landed first; list the files again");
  }

  /** An {@code add} action's JSON ({@code {"add":{...}}}) with {@code dataChange} false. */
  private static String withoutDataChange(String addJson) {
    try {
      com.fasterxml.jackson.databind.node.ObjectNode action =
          (com.fasterxml.jackson.databind.node.ObjectNode) JSON.readTree(addJson);
      ((com.fasterxml.jackson.databind.node.ObjectNode) action.get("add")).put("dataChange", false);
      return JSON.writeValueAsString(action);
    } catch (IOException | ClassCastException | NullPointerException e) {
      throw new IllegalArgumentException("Not a Delta add action: " + addJson, e);
    }
  }

  private static final com.fasterxml.jackson.databind.ObjectMapper JSON =
      new com.fasterxml.jackson.databind.ObjectMapper();

  /**
   * Deletes the files of the table no version a reader may still read references, by the Delta
   * protocol's {@code VACUUM} rule: a file is kept when the latest version references it (a data
   * file or its deletion vector file), when a {@code remove} of it (or of a file whose deletion
   * vector it holds) has a {@code deletionTimestamp} at or after {@code cutoff} (the tombstone has
   * not expired: versions before that remove still read it), or when it was modified at or after
   * {@code cutoff} (a write not committed yet). The rest of the {@code *.parquet} data files and
   * {@code deletion_vector_*.bin} files under the table directory are deleted, uncommitted orphans
   * included; {@code _delta_log} and other hidden directories ({@code _*}, {@code .*}) are never
   * touched, nor other files. With {@code cutoff = now - retention}, every version committed within
   * the retention stays readable (time travel), and so does the version in force at the cutoff.
   *
   * <p>Unsafe with a retention shorter than the longest write to the table: a writer still writing
   * files it will commit may lose them (delta-spark refuses retentions under 7 days by default for
   * this reason). Tombstones are read from the commit files modified at or after {@code cutoff}
   * less one hour; commit files removed by log cleanup ({@code delta.logRetentionDuration}, 30 days
   * by default) are not read, so a cutoff older than the log retention keeps less than it says.
   *
   * @param path the table path or URI
   * @param cutoff tombstones deleted before it have expired; files modified before it may go
   * @param dryRun true to delete nothing and return what would be deleted
   * @return the files deleted (or to delete)
   * @throws IllegalStateException when no table exists
   * @throws UncheckedIOException when listing, reading the log or deleting fails
   */
  public VacuumResult vacuum(String path, java.time.Instant cutoff, boolean dryRun) {
    java.util.Set<String> referenced = new java.util.HashSet<>();
    for (DataFileDetail file : dataFileDetails(path)) {
      referenced.add(file.path());
      if (file.deletionVectorPath() != null) {
        referenced.add(file.deletionVectorPath());
      }
    }
    return TableVacuum.run(hadoopConf, path, referenced, cutoff.toEpochMilli(), dryRun);
  }

  /**
   * The rows of one data file listed by {@link #scanFiles}, read as {@link #scan(String)} reads
   * them (the same Java values, deletion vectors and partition values applied), a Parquet batch at
   * a time: the whole file is never held in memory. The table is opened at the file's version.
   *
   * @param file the data file
   * @return the rows; close it when done
   * @throws UncheckedIOException when the file cannot be read
   */
  public CloseableIterator<Map<String, Object>> readScanFile(ScanFile file) {
    Snapshot snapshot;
    try {
      snapshot =
          Table.forPath(engine, file.tablePath()).getSnapshotAsOfVersion(engine, file.version());
    } catch (TableNotFoundException e) {
      throw new IllegalStateException("No Delta table at " + file.tablePath(), e);
    }
    io.delta.kernel.data.Row scanState = snapshot.getScanBuilder().build().getScanState(engine);
    return readScanFile(file.tablePath(), scanState, KernelInternals.scanFileFromJson(file.json()));
  }

  /**
   * The rows of one table version, streamed a Parquet batch at a time (the table is never held in
   * memory), read from the data files whose statistics may hold a row matching {@code fileFilter}
   * (Kernel's file skipping on {@code minValues}/{@code maxValues}/{@code nullCount}). The filter
   * only skips files: rows of a file it keeps are all returned, so callers test each row
   * themselves. Values are {@link #scan(String)}'s Java values, keyed by the table's column names.
   *
   * @param path the table path or URI
   * @param version the table version to read ({@code VERSION AS OF})
   * @param fileFilter a Kernel predicate on the table's columns (e.g. {@code new Predicate(">", new
   *     Column("_start_lsn"), Literal.ofString("0x..."))}), or null to read every file
   * @return the rows, file by file in the log's order; close it when done
   * @throws IllegalStateException {@code No Delta table at <path>} when none exists, or when the
   *     version does not exist
   * @throws UncheckedIOException when a data file cannot be read
   */
  public CloseableIterator<Map<String, Object>> scanAtVersion(
      String path, long version, io.delta.kernel.expressions.@Nullable Predicate fileFilter) {
    Snapshot snapshot;
    try {
      snapshot = Table.forPath(engine, path).getSnapshotAsOfVersion(engine, version);
    } catch (TableNotFoundException e) {
      throw new IllegalStateException("No Delta table at " + path, e);
    } catch (RuntimeException e) {
      throw new IllegalStateException(
          "Delta table " + path + " has no version " + version + ": " + e.getMessage(), e);
    }
    io.delta.kernel.ScanBuilder builder = snapshot.getScanBuilder();
    if (fileFilter != null) {
      builder = builder.withFilter(fileFilter);
    }
    Scan scan = builder.build();
    io.delta.kernel.data.Row scanState = scan.getScanState(engine);
    List<String> files = new ArrayList<>();
    forEachScanFile(scan, (state, file) -> files.add(KernelInternals.scanFileToJson(file)));
    Iterator<String> remaining = files.iterator();
    return new CloseableIterator<>() {
      private CloseableIterator<Map<String, Object>> current;

      @Override
      public boolean hasNext() {
        while (current == null || !current.hasNext()) {
          closeCurrent();
          if (!remaining.hasNext()) {
            return false;
          }
          current =
              readScanFile(path, scanState, KernelInternals.scanFileFromJson(remaining.next()));
        }
        return true;
      }

      @Override
      public Map<String, Object> next() {
        if (!hasNext()) {
          throw new java.util.NoSuchElementException();
        }
        return current.next();
      }

      private void closeCurrent() {
        if (current != null) {
          try {
            current.close();
          } catch (IOException e) {
            throw new UncheckedIOException("Cannot close a data file of Delta table " + path, e);
          } finally {
            current = null;
          }
        }
      }

      @Override
      public void close() {
        closeCurrent();
      }
    };
  }

  private CloseableIterator<Map<String, Object>> readScanFile(
      String path, io.delta.kernel.data.Row scanState, io.delta.kernel.data.Row scanFile) {
    FileStatus file = KernelInternals.dataFileStatus(scanFile);
    StructType physicalSchema = KernelInternals.physicalReadSchema(scanState);
    CloseableIterator<FilteredColumnarBatch> logical;
    try {
      CloseableIterator<ColumnarBatch> physical =
          engine
              .getParquetHandler()
              .readParquetFiles(KernelIterators.single(file), physicalSchema, Optional.empty())
              .map(FileReadResult::getData);
      logical = Scan.transformPhysicalData(engine, scanState, scanFile, physical);
    } catch (IOException e) {
      throw new UncheckedIOException(
          "Cannot read " + file.getPath() + " of Delta table " + path, e);
    }
    return new CloseableIterator<>() {
      private CloseableIterator<io.delta.kernel.data.Row> rows;

      @Override
      public boolean hasNext() {
        try {
          while (rows == null || !rows.hasNext()) {
            if (rows != null) {
              rows.close();
              rows = null;
            }
            if (!logical.hasNext()) {
              return false;
            }
            rows = logical.next().getRows();
          }
          return true;
        } catch (IOException e) {
          throw new UncheckedIOException(
              "Cannot read " + file.getPath() + " of Delta table " + path, e);
        }
      }

      @Override
      public Map<String, Object> next() {
        if (!hasNext()) {
          throw new java.util.NoSuchElementException();
        }
        io.delta.kernel.data.Row row = rows.next();
        Map<String, Object> values = new LinkedHashMap<>();
        for (int i = 0; i < row.getSchema().length(); i++) {
          values.put(row.getSchema().at(i).getName(), RowBatches.javaValue(path, row, i));
        }
        return values;
      }

      @Override
      public void close() throws IOException {
        try {
          if (rows != null) {
            rows.close();
          }
        } finally {
          logical.close();
        }
      }
    };
  }

  /**
   * All rows of the latest version as Beam rows of the given schema: each field takes the column of
   * the same name (ignoring case), NULL when the table has no such column; {@link #scan(String)}'s
   * Java values are the Beam values of {@link org.lakecdc.io.mssqlcdc.schema.OutputType}'s field
   * types.
   *
   * @param path the table path or URI
   * @param schema the Beam schema of the result
   * @return the rows, in no particular order
   * @throws IllegalStateException when no table exists
   * @throws IllegalArgumentException when a value does not fit its field (e.g. NULL in a
   *     non-nullable field)
   */
  public List<Row> scan(String path, Schema schema) {
    List<Row> rows = new ArrayList<>();
    for (Map<String, Object> values : scan(path)) {
      Map<String, Object> byLowerName = new HashMap<>();
      values.forEach((k, v) -> byLowerName.put(k.toLowerCase(Locale.ROOT), v));
      Row.Builder builder = Row.withSchema(schema);
      for (Schema.Field field : schema.getFields()) {
        builder.addValue(byLowerName.get(field.getName().toLowerCase(Locale.ROOT)));
      }
      rows.add(builder.build());
    }
    return rows;
  }

  // ------------------------------------------------------------------------------------------
  // Deletion vectors (silver's MERGE, DESIGN.md §6b)
  // ------------------------------------------------------------------------------------------

  /** Receives the live rows of {@link #scanLiveRows}. */
  @FunctionalInterface
  public interface LiveRowVisitor {
    /**
     * One row no deletion vector deletes.
     *
     * @param file the data file's {@code add} path as the log holds it (relative to the table root,
     *     URI-encoded), which {@link DeletionVectorUpdate#file()} takes
     * @param position the row's position in the file, from 0 (Parquet row order)
     * @param values the requested columns' values, in the requested order, as {@link #scan(String)}
     *     gives them; the array is reused for the next row
     */
    void visit(String file, long position, Object[] values);
  }

  /**
   * Reads some columns of every live row of a table version with the row's file and position: one
   * pass over the data files reading only these columns, skipping the rows the files' deletion
   * vectors delete (whoever wrote them: this project or delta-spark). Memory holds one Parquet
   * batch and one file's deleted positions.
   *
   * @param path the table path or URI
   * @param version the table version to read
   * @param columns column names (matched ignoring case), at least one
   * @param visitor receives each live row
   * @return the number of live rows visited
   * @throws IllegalStateException when no table exists or the version is no longer readable
   * @throws IllegalArgumentException when a column is not in the table
   * @throws UncheckedIOException when a data file or a deletion vector cannot be read
   */
  public long scanLiveRows(
      String path, long version, List<String> columns, LiveRowVisitor visitor) {
    Snapshot snapshot = snapshotAt(path, version);
    StructType tableSchema = snapshot.getSchema();
    List<io.delta.kernel.types.StructField> fields = new ArrayList<>();
    for (String column : columns) {
      io.delta.kernel.types.StructField found = null;
      for (io.delta.kernel.types.StructField field : tableSchema.fields()) {
        if (field.getName().equalsIgnoreCase(column)) {
          found = field;
        }
      }
      if (found == null) {
        throw new IllegalArgumentException(
            "Delta table " + path + " has no column '" + column + "'; it has " + tableSchema);
      }
      fields.add(found);
    }
    if (fields.isEmpty()) {
      throw new IllegalArgumentException("scanLiveRows needs at least one column");
    }
    OutputType[] types = new OutputType[fields.size()];
    for (int i = 0; i < types.length; i++) {
      types[i] = DeltaTypes.outputType(path, fields.get(i));
    }
    fields.add(io.delta.kernel.types.StructField.DEFAULT_ROW_INDEX_COLUMN);
    StructType readSchema = new StructType(fields);
    int positionOrdinal = fields.size() - 1;
    String tableRoot = snapshot.getPath();
    Object[] values = new Object[columns.size()];
    long[] visited = {0};
    forEachScanFile(
        snapshot.getScanBuilder().build(),
        (scanState, scanFile) -> {
          String file = KernelInternals.addPath(scanFile);
          FileStatus status = KernelInternals.dataFileStatus(scanFile);
          try {
            long[] deleted = KernelInternals.deletedRowPositions(engine, tableRoot, scanFile);
            int next = 0;
            try (CloseableIterator<FileReadResult> batches =
                engine
                    .getParquetHandler()
                    .readParquetFiles(
                        KernelIterators.single(status), readSchema, Optional.empty())) {
              while (batches.hasNext()) {
                ColumnarBatch batch = batches.next().getData();
                io.delta.kernel.data.ColumnVector positions =
                    batch.getColumnVector(positionOrdinal);
                io.delta.kernel.data.ColumnVector[] vectors =
                    new io.delta.kernel.data.ColumnVector[values.length];
                for (int i = 0; i < values.length; i++) {
                  vectors[i] = batch.getColumnVector(i);
                }
                int size = batch.getSize();
                for (int r = 0; r < size; r++) {
                  long position = positions.getLong(r);
                  while (next < deleted.length && deleted[next] < position) {
                    next++;
                  }
                  if (next < deleted.length && deleted[next] == position) {
                    continue;
                  }
                  for (int i = 0; i < values.length; i++) {
                    values[i] = columnValue(types[i], vectors[i], r);
                  }
                  visitor.visit(file, position, values);
                  visited[0]++;
                }
              }
            }
          } catch (IOException e) {
            throw new UncheckedIOException(
                "Cannot read " + status.getPath() + " of Delta table " + path, e);
          }
        });
    return visited[0];
  }

  /**
   * The row positions the deletion vectors of some data files of a table version delete.
   *
   * @param path the table path or URI
   * @param version the table version
   * @param files data files by their {@code add} path ({@link LiveRowVisitor#visit}'s {@code file})
   * @return per file asked for, its deleted positions ascending (empty without a vector)
   * @throws IllegalStateException when no table exists or a file is not in the version
   * @throws UncheckedIOException when a vector cannot be read
   */
  public Map<String, long[]> deletedRowPositions(
      String path, long version, java.util.Collection<String> files) {
    Snapshot snapshot = snapshotAt(path, version);
    java.util.Set<String> wanted = new java.util.HashSet<>(files);
    Map<String, long[]> result = new HashMap<>();
    forEachScanFile(
        snapshot.getScanBuilder().build(),
        (scanState, scanFile) -> {
          String file = KernelInternals.addPath(scanFile);
          if (wanted.contains(file)) {
            try {
              result.put(
                  file, KernelInternals.deletedRowPositions(engine, snapshot.getPath(), scanFile));
            } catch (IOException e) {
              throw new UncheckedIOException(
                  "Cannot read a deletion vector of Delta table " + path, e);
            }
          }
        });
    for (String file : wanted) {
      if (!result.containsKey(file)) {
        throw new IllegalStateException(
            "Delta table " + path + " has no data file " + file + " at version " + version);
      }
    }
    return result;
  }

  /**
   * One data file of a table version with its row counts.
   *
   * @param file the {@code add} path as the log holds it
   * @param sizeBytes the file's size
   * @param numRecords the rows the file holds (its statistics' {@code numRecords}), -1 when it has
   *     no statistics
   * @param deletedRows the rows its deletion vector deletes (the vector's cardinality), 0 without
   */
  public record DataFileRows(String file, long sizeBytes, long numRecords, long deletedRows) {}

  /**
   * The data files of a table version with their row and deleted-row counts, from the log only (no
   * data file or vector is read).
   *
   * @param path the table path or URI
   * @param version the table version
   * @return the files, in the log's order
   * @throws IllegalStateException when no table exists or the version is no longer readable
   */
  public List<DataFileRows> dataFileRows(String path, long version) {
    Snapshot snapshot = snapshotAt(path, version);
    List<DataFileRows> files = new ArrayList<>();
    forEachScanFile(
        snapshot.getScanBuilder().build(),
        true,
        (scanState, scanFile) ->
            files.add(
                new DataFileRows(
                    KernelInternals.addPath(scanFile),
                    KernelInternals.dataFileStatus(scanFile).getSize(),
                    KernelInternals.numRecords(scanFile).orElse(-1L),
                    KernelInternals.deletionVectorCardinality(scanFile))));
    return files;
  }

  /**
   * A data file's new deletion vector, stored in the vector file of {@link #commitDeletionVectors}.
   *
   * @param file the data file's {@code add} path as the log holds it
   * @param offset where the vector's size field starts in the vector file
   * @param sizeInBytes the serialized vector's length
   * @param cardinality the rows the vector deletes (the old vector's rows included)
   */
  public record DeletionVectorUpdate(String file, int offset, int sizeInBytes, long cardinality) {}

  /**
   * Commits new deletion vectors for some data files and new data files, in one commit on exactly
   * the version read: writes {@code vectorFile} as {@code deletion_vector_<uuid>.bin} in the table
   * directory (when there is an update), then commits per update a {@code remove} of the file's
   * {@code add} (with its old vector) and an {@code add} of the same file with the new vector
   * (statistics marked {@code tightBounds = false}), the {@code added} files, the transaction
   * identifier and the domain metadata, with {@code withMaxRetries(0)}: any commit after {@code
   * readVersion} makes it fail, since the vectors were computed from that version.
   *
   * @param path the table path or URI; the table must have table feature {@code deletionVectors}
   * @param readVersion the version the updates were computed from
   * @param vectorFile the vector file's content (the vectors the updates point into), or null when
   *     there is no update
   * @param updates new vectors, at most one per file, each replacing the file's old vector
   * @param added data files written by {@link #writeDataFiles}
   * @param appId the transaction app id, or null
   * @param txnVersion the transaction version, ignored when {@code appId} is null
   * @param domainMetadata domain name to configuration
   * @return the outcome; {@link CommitResult#filesRemoved()} counts the files whose vector changed;
   *     {@link CommitResult.Status#ALREADY_COMMITTED} when {@code (appId, txnVersion)} is already
   *     in
   * @throws DeltaConflictException when the table is past {@code readVersion} or another commit
   *     landed first; nothing is visible
   * @throws IllegalArgumentException when an update's file is not in the version, or two updates
   *     name the same file, or updates come without a vector file
   * @throws UncheckedIOException when the vector file cannot be written
   */
  public CommitResult commitDeletionVectors(
      String path,
      long readVersion,
      byte @Nullable [] vectorFile,
      List<DeletionVectorUpdate> updates,
      List<DataFileAction> added,
      @Nullable String appId,
      long txnVersion,
      Map<String, String> domainMetadata) {
    return commitDeletionVectors(
        path, readVersion, vectorFile, updates, added, appId, txnVersion, domainMetadata, () -> {});
  }

  /**
   * {@link #commitDeletionVectors} running {@code beforeCommit} after the vector file is written,
   * just before the commit: for tests only (a concurrent commit landing there, or a simulated crash
   * that leaves the written files unreferenced).
   */
  public CommitResult commitDeletionVectors(
      String path,
      long readVersion,
      byte @Nullable [] vectorFile,
      List<DeletionVectorUpdate> updates,
      List<DataFileAction> added,
      @Nullable String appId,
      long txnVersion,
      Map<String, String> domainMetadata,
      Runnable beforeCommit) {
    if (!updates.isEmpty() && vectorFile == null) {
      throw new IllegalArgumentException("Deletion vector updates need their vector file");
    }
    Snapshot latest = requireTable(path);
    if (latest.getVersion() != readVersion) {
      if (appId != null) {
        Optional<Long> committed = latest.getLatestTransactionVersion(engine, appId);
        if (committed.isPresent() && committed.get() >= txnVersion) {
          return alreadyCommitted(path, appId, txnVersion, latest.getVersion());
        }
      }
      throw conflict(path, readVersion, latest.getVersion(), null);
    }
    UpdateTableTransactionBuilder builder =
        latest.buildUpdateTableTransaction(ENGINE_INFO, Operation.WRITE).withMaxRetries(0);
    if (appId != null) {
      builder = builder.withTransactionId(appId, txnVersion);
    }
    Transaction txn;
    try {
      txn = builder.build(engine);
    } catch (ConcurrentTransactionException e) {
      return alreadyCommitted(path, appId, txnVersion, latest.getVersion());
    }
    Map<String, DeletionVectorUpdate> byFile = new HashMap<>();
    for (DeletionVectorUpdate update : updates) {
      if (byFile.put(update.file(), update) != null) {
        throw new IllegalArgumentException(
            "Two deletion vector updates for data file " + update.file() + " of " + path);
      }
    }
    List<io.delta.kernel.data.Row> actions = new ArrayList<>();
    java.util.UUID vectorId = java.util.UUID.randomUUID();
    long now = clock.millis();
    if (!byFile.isEmpty()) {
      java.util.Set<String> found = new java.util.HashSet<>();
      forEachScanFile(
          latest.getScanBuilder().build(),
          true,
          (scanState, scanFile) -> {
            DeletionVectorUpdate update = byFile.get(KernelInternals.addPath(scanFile));
            if (update != null) {
              found.add(update.file());
              actions.add(KernelInternals.removeAction(scanFile, now));
              actions.add(
                  KernelInternals.addWithDeletionVector(
                      scanFile,
                      vectorId,
                      update.offset(),
                      update.sizeInBytes(),
                      update.cardinality()));
            }
          });
      if (found.size() != byFile.size()) {
        java.util.Set<String> missing = new java.util.TreeSet<>(byFile.keySet());
        missing.removeAll(found);
        throw new IllegalArgumentException(
            "Delta table " + path + " has no data file " + missing + " at version " + readVersion);
      }
      writeFile(KernelInternals.deletionVectorFilePath(latest.getPath(), vectorId), vectorFile);
    }
    for (DataFileAction file : added) {
      actions.add(KernelInternals.addActionFromJson(file.actionJson()));
    }
    domainMetadata.forEach(txn::addDomainMetadata);
    beforeCommit.run();
    return commitOnce(
        path,
        txn,
        actions,
        appId,
        txnVersion,
        added.size(),
        byFile.size(),
        conflictMessage(readVersion, -1));
  }

  /** The Java value of row {@code r} of a column vector, as {@link #scan(String)} gives it. */
  private static @Nullable Object columnValue(
      OutputType type, io.delta.kernel.data.ColumnVector vector, int r) {
    if (vector.isNullAt(r)) {
      return null;
    }
    switch (type.kind()) {
      case BOOLEAN:
        return vector.getBoolean(r);
      case SMALLINT:
        return vector.getShort(r);
      case INT:
        return vector.getInt(r);
      case BIGINT:
        return vector.getLong(r);
      case FLOAT:
        return vector.getFloat(r);
      case DOUBLE:
        return vector.getDouble(r);
      case DECIMAL:
        return vector.getDecimal(r);
      case DATE:
        return java.time.LocalDate.ofEpochDay(vector.getInt(r));
      case TIMESTAMP_NTZ:
        long ntz = vector.getLong(r);
        return java.time.LocalDateTime.ofEpochSecond(
            Math.floorDiv(ntz, 1_000_000L),
            (int) Math.floorMod(ntz, 1_000_000L) * 1_000,
            java.time.ZoneOffset.UTC);
      case TIMESTAMP:
        long micros = vector.getLong(r);
        return java.time.Instant.ofEpochSecond(
            Math.floorDiv(micros, 1_000_000L), Math.floorMod(micros, 1_000_000L) * 1_000L);
      case STRING:
        return vector.getString(r);
      case BINARY:
        return vector.getBinary(r);
      default:
        throw new IllegalStateException("Unhandled output type " + type);
    }
  }

  private static DeltaConflictException conflict(
      String path, long readVersion, long latestVersion, @Nullable Exception cause) {
    return new DeltaConflictException(
        "Delta table " + path + ": " + conflictMessage(readVersion, latestVersion), cause);
  }

  private static String conflictMessage(long readVersion, long latestVersion) {
    return "the merge read version "
        + readVersion
        + " but another commit landed first"
        + (latestVersion >= 0 ? " (the table is at version " + latestVersion + ")" : "")
        + "; re-read the table and merge again";
  }

  /** Writes a new file (never overwriting one) with this content. */
  private void writeFile(String file, byte[] content) {
    org.apache.hadoop.fs.Path target = new org.apache.hadoop.fs.Path(file);
    try {
      org.apache.hadoop.fs.FileSystem fs = target.getFileSystem(hadoopConf);
      try (org.apache.hadoop.fs.FSDataOutputStream out = fs.create(target, false)) {
        out.write(content);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot write " + file, e);
    }
  }

  /**
   * {@link #rewrite(String, Schema, Iterable, String, long)} on exactly the version read, with
   * domain metadata: removes every data file of {@code readVersion} and adds files with these rows
   * (streamed, files cut at the writer's size), one commit with {@code withMaxRetries(0)}.
   *
   * @param path the table path or URI
   * @param readVersion the version the caller read (e.g. counted the rows of)
   * @param rowSchema the schema of the rows
   * @param rows the table's new content
   * @param appId a transaction app id, or null
   * @param txnVersion the transaction version, ignored when {@code appId} is null
   * @param domainMetadata domain name to configuration, committed with the rows
   * @return the outcome: version, files added and removed
   * @throws DeltaConflictException when the table is past {@code readVersion} or another commit
   *     landed first
   */
  public CommitResult rewrite(
      String path,
      long readVersion,
      Schema rowSchema,
      Iterable<Row> rows,
      @Nullable String appId,
      long txnVersion,
      Map<String, String> domainMetadata) {
    Snapshot latest = requireTable(path);
    if (latest.getVersion() != readVersion) {
      if (appId != null) {
        Optional<Long> committed = latest.getLatestTransactionVersion(engine, appId);
        if (committed.isPresent() && committed.get() >= txnVersion) {
          return alreadyCommitted(path, appId, txnVersion, latest.getVersion());
        }
      }
      throw conflict(path, readVersion, latest.getVersion(), null);
    }
    return rewrite(path, readVersion, rowSchema, rows, appId, txnVersion, domainMetadata, () -> {});
  }

  /**
   * The snapshot of a version: the kept latest one when it is that version, else read from the log.
   */
  private Snapshot snapshotAt(String path, long version) {
    Snapshot latest = requireTable(path);
    if (latest.getVersion() == version) {
      return latest;
    }
    try {
      return Table.forPath(engine, path).getSnapshotAsOfVersion(engine, version);
    } catch (TableNotFoundException e) {
      throw new IllegalStateException("No Delta table at " + path, e);
    } catch (RuntimeException e) {
      throw new IllegalStateException(
          "Delta table " + path + " cannot be read at version " + version + ": " + e.getMessage(),
          e);
    }
  }

  // ------------------------------------------------------------------------------------------
  // Helpers
  // ------------------------------------------------------------------------------------------

  private interface ScanFileConsumer {
    void accept(io.delta.kernel.data.Row scanState, io.delta.kernel.data.Row scanFile);
  }

  private void forEachScanFile(Scan scan, ScanFileConsumer consumer) {
    forEachScanFile(scan, false, consumer);
  }

  /** Every scan file of a scan; with {@code includeStats} their {@code add.stats} too. */
  private void forEachScanFile(Scan scan, boolean includeStats, ScanFileConsumer consumer) {
    io.delta.kernel.data.Row scanState = scan.getScanState(engine);
    try (CloseableIterator<FilteredColumnarBatch> batches =
        scan.getScanFiles(engine, includeStats)) {
      while (batches.hasNext()) {
        try (CloseableIterator<io.delta.kernel.data.Row> files = batches.next().getRows()) {
          while (files.hasNext()) {
            consumer.accept(scanState, files.next());
          }
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot list the data files of " + scan, e);
    }
  }

  /**
   * How many times this instance has read a table's latest snapshot from its log (listing the log
   * and replaying it from the last checkpoint): the main fixed cost of a commit, counted for tests
   * and benchmarks. A snapshot this instance read or committed is reused while it is the table's
   * latest, which two file status calls tell (see the class comment); reuses are not counted.
   * Migrations and other metadata commits ({@link #open}, {@link #addColumns}, {@link
   * #evolveSchema}) read snapshots of their own, not counted here.
   *
   * @return the count since the instance was created
   */
  public long snapshotLoads() {
    return snapshotLoads.get();
  }

  /**
   * The table's latest snapshot: the one this instance last read or committed when it is still the
   * latest, else read from the log.
   */
  private Optional<Snapshot> latestSnapshot(String path) {
    KnownSnapshot known = snapshots.get(path);
    if (known != null && isLatest(known)) {
      return Optional.of(known.snapshot());
    }
    snapshotLoads.incrementAndGet();
    Snapshot snapshot;
    try {
      // A listing of an object store can miss a file just written: retried (KernelRetries).
      snapshot =
          KernelRetries.call(
              path,
              "loading the latest snapshot",
              () -> {
                try {
                  return Table.forPath(engine, path).getLatestSnapshot(engine);
                } catch (TableNotFoundException e) {
                  if (!seenOnObjectStore.contains(path)) {
                    throw e;
                  }
                  // This instance has read the table before: an object store's listing of its log
                  // came back empty under load (seen with a local S3 server), retried. No cause
                  // attached: a TableNotFoundException in the chain would make it fatal.
                  throw new UncheckedIOException(
                      new IOException(
                          "Delta table "
                              + path
                              + " was read before, but a listing of its _delta_log found no"
                              + " commit"));
                }
              });
    } catch (TableNotFoundException e) {
      snapshots.remove(path);
      return Optional.empty();
    }
    remember(path, snapshot);
    return Optional.of(snapshot);
  }

  /** Keeps {@code snapshot} as the latest of {@code path} (not when its commit file is gone). */
  private void remember(String path, Snapshot snapshot) {
    try {
      FileStatus commitFile = fileIO.getFileStatus(commitFile(snapshot, snapshot.getVersion()));
      snapshots.put(path, new KnownSnapshot(snapshot, commitFile));
      if (path.indexOf("://") > 0 && !path.startsWith("file:")) {
        seenOnObjectStore.add(path);
      }
    } catch (IOException e) {
      // A log whose commit file of the latest version was cleaned up (a checkpoint holds it):
      // nothing to compare later, so the snapshot is read again next time.
      snapshots.remove(path);
    }
  }

  /**
   * Whether a snapshot is still its table's latest: no commit file of the next version exists, and
   * the commit file of its own version is the one it was read from (same size and modification
   * time; a table deleted and created again at the path has new commit files). Delta versions are
   * contiguous and commit files are never rewritten, so this is what listing the log would tell.
   */
  private boolean isLatest(KnownSnapshot known) {
    Snapshot snapshot = known.snapshot();
    try {
      fileIO.getFileStatus(commitFile(snapshot, snapshot.getVersion() + 1));
      return false;
    } catch (FileNotFoundException e) {
      // No next version: compare the current one below.
    } catch (IOException e) {
      return false;
    }
    try {
      FileStatus current = fileIO.getFileStatus(commitFile(snapshot, snapshot.getVersion()));
      return current.getSize() == known.commitFile().getSize()
          && current.getModificationTime() == known.commitFile().getModificationTime();
    } catch (IOException e) {
      return false;
    }
  }

  /** The path of the commit file ({@code _delta_log/<version, 20 digits>.json}) of a version. */
  private static String commitFile(Snapshot snapshot, long version) {
    String table = snapshot.getPath();
    return (table.endsWith("/") ? table : table + "/")
        + "_delta_log/"
        + String.format(Locale.ROOT, "%020d.json", version);
  }

  /** Keeps the snapshot Kernel built after our commit, when it built one. */
  private void rememberCommitted(String path, TransactionCommitResult result) {
    result.getPostCommitSnapshot().ifPresent(snapshot -> remember(path, snapshot));
  }

  private Snapshot requireTable(String path) {
    return latestSnapshot(path)
        .orElseThrow(() -> new IllegalStateException("No Delta table at " + path));
  }
}
