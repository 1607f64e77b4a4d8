package org.lakecdc.transforms.delta;

import io.delta.kernel.engine.Engine;
import io.delta.kernel.expressions.Predicate;
import io.delta.kernel.utils.CloseableIterator;
import java.io.UncheckedIOException;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import org.apache.beam.sdk.schemas.Schema;
import org.apache.beam.sdk.values.Row;
import org.apache.hadoop.conf.Configuration;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.io.mssqlcdc.client.SchemaChangedError;

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
 * <p>Every call works on the table's latest snapshot. An instance keeps the latest snapshot it read
 * or committed per path and reuses it while it is still the latest (no commit file of the next
 * version, its own commit file unchanged, no checkpoint written since): a commit of another writer,
 * a table deleted and created again at the path, are seen as a listing would see them ({@link
 * #snapshotLoads}).
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
 *
 * <h2>Parts</h2>
 *
 * <p>This class is the one entry: its methods hand over to the snapshot cache and engine ({@code
 * TableSnapshots}), commits ({@code TableCommits}), scans ({@code TableScans}), the table's
 * definition and migrations ({@code TableLifecycle}) and the deletion-vector reads and commit of
 * silver ({@link TableDeletionVectors}); only {@link KernelInternals} touches Kernel's internal
 * classes.
 */
public final class DeltaTables {
  /**
   * Attempts of an append that loses to a concurrent metadata or protocol change ({@code
   * ConcurrentWriteException} after Kernel's own conflict resolution), each on a fresh snapshot.
   */
  public static final int MAX_APPEND_ATTEMPTS = TableCommits.MAX_APPEND_ATTEMPTS;

  private final TableSnapshots snapshots;
  private final TableLifecycle lifecycle;
  private final TableCommits commits;
  private final TableScans scans;
  private final TableDeletionVectors deletionVectors;
  private final TableGroupCommits groupCommits;
  private final SmallFileCompaction smallFiles;

  private DeltaTables(Configuration hadoopConf, Clock clock) {
    this.snapshots = new TableSnapshots(hadoopConf);
    this.commits =
        new TableCommits(snapshots, new ParquetDataFiles(snapshots.fileIO(), hadoopConf), clock);
    this.scans = new TableScans(snapshots);
    this.lifecycle = new TableLifecycle(snapshots, scans);
    this.deletionVectors = new TableDeletionVectors(snapshots, commits, clock);
    this.groupCommits = new TableGroupCommits(snapshots, commits, clock);
    this.smallFiles = new SmallFileCompaction(this);
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
    return lifecycle.exists(path);
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
    return lifecycle.createIfAbsent(path, definition, () -> {});
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
    return lifecycle.open(path, kind);
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
    return lifecycle.addColumns(path, columns);
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
    return lifecycle.evolveSchema(path, columns);
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
    return lifecycle.setTableProperties(path, properties);
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
    return commits.writeDataFiles(path, rowSchema, rows);
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
    return commits.openDataFileWriter(path, rowSchema);
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
    return afterCommit(path, commits.commit(path, files, appId, txnVersion, domainMetadata));
  }

  /**
   * {@link #commit(String, List, String, long, Map)} whose checkpoint, when Kernel offers one after
   * it, is written as {@code timing} says: {@link CheckpointTiming#IN_COMMIT} as that method does,
   * or {@link CheckpointTiming#IN_BACKGROUND} by the background thread of these tables after this
   * call returned (at most one per table queued or running: an interval that comes while one is in
   * flight is skipped; a failure is logged and the next interval tries again; {@link
   * #awaitCheckpoints} waits for them). Until it is written a reader replays the log from the
   * checkpoint before; a process that ends before it leaves the log as without it.
   *
   * @param path the table path or URI
   * @param files the data files; may be empty
   * @param appId the transaction's app id, or null
   * @param txnVersion the transaction version for {@code appId}
   * @param domainMetadata domain name to configuration
   * @param timing when the checkpoint is written
   * @return the outcome and the table version
   * @throws IllegalArgumentException when an action is not a serialized {@code add} action
   * @throws DeltaConflictException when every attempt lost to concurrent metadata changes
   */
  public CommitResult commit(
      String path,
      List<DataFileAction> files,
      @Nullable String appId,
      long txnVersion,
      Map<String, String> domainMetadata,
      CheckpointTiming timing) {
    return afterCommit(
        path, commits.commit(path, files, appId, txnVersion, domainMetadata, timing));
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
    return afterCommit(
        path, commits.append(path, rowSchema, rows, appId, txnVersion, domainMetadata));
  }

  /**
   * {@link #append} in a group commit ({@code TableGroupCommits}): while another writer of this JVM
   * commits to the table, this append waits and goes into the next commit with all others that
   * waited (one data file, one commit), each with its own transaction identifier ({@code txn}
   * action) and domain metadata; exactly once per {@code (appId, txnVersion)}: the group is built
   * on a snapshot where no member's identifier has reached its version and lands as the next
   * version or not at all, members found committed are {@link
   * CommitResult.Status#ALREADY_COMMITTED}. A writer alone commits at once.
   *
   * @param path the table path or URI
   * @param rowSchema the schema of the rows
   * @param rows the rows (a few: held until the group is written)
   * @param appId the transaction's app id
   * @param txnVersion the transaction version
   * @param domainMetadata domain name to configuration, set by no other writer's append
   * @return this append's outcome: the group's version and data files when committed
   * @throws DeltaConflictException when the group lost to concurrent commits 200 times
   */
  public CommitResult appendGrouped(
      String path,
      Schema rowSchema,
      List<Row> rows,
      String appId,
      long txnVersion,
      Map<String, String> domainMetadata) {
    return afterCommit(
        path,
        groupCommits.append(path, rowSchema, rows, appId, txnVersion, domainMetadata, () -> {}));
  }

  /**
   * The appends of a committer round, all in one group commit ({@link #appendGrouped} for each, but
   * queued together): one data file and one Delta commit carry every append's rows, each with its
   * own transaction identifier ({@code txn} action) and domain metadata, exactly once per {@code
   * (appId, txnVersion)} as in {@link #appendGrouped}. Appends of other writers of this JVM waiting
   * at the time go into the same commit.
   *
   * @param path the table path or URI
   * @param appends the round's appends: distinct app ids, one row schema
   * @return each append's outcome, in the order of {@code appends}; {@link
   *     CommitResult.Status#ALREADY_COMMITTED} for one whose identifier had reached its version
   * @throws IllegalArgumentException when two appends share an app id or their schemas differ
   * @throws DeltaConflictException when the group lost to concurrent commits 200 times
   */
  public List<CommitResult> appendRound(String path, List<GroupedAppend> appends) {
    if (appends.isEmpty()) {
      return List.of();
    }
    List<TableGroupCommits.Member> members = new ArrayList<>();
    for (GroupedAppend a : appends) {
      members.add(
          new TableGroupCommits.Member(
              a.rowSchema(), a.rows(), a.appId(), a.txnVersion(), a.domainMetadata()));
    }
    List<CommitResult> results = groupCommits.appendAll(path, members, () -> {});
    for (CommitResult result : results) {
      if (result.committed()) {
        // One commit for the round: the compaction's check counts it once.
        afterCommit(path, result);
        break;
      }
    }
    return results;
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
    return afterCommit(path, commits.rewrite(path, rowSchema, rows, appId, txnVersion));
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
    return afterCommit(path, commits.rewrite(path, rowSchema, rows));
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
    return afterCommit(
        path,
        commits.rewrite(path, readVersion, rowSchema, rows, appId, txnVersion, domainMetadata));
  }

  /**
   * Runs the small-file check of the job's own tables after a commit ({@link #compactSmallFiles}).
   */
  private CommitResult afterCommit(String path, CommitResult result) {
    smallFiles.afterCommit(path, result);
    return result;
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
    return commits.rearrangeFiles(path, removed, added);
  }

  /**
   * Rewrites the table's small data files (under 8 MiB) into files of up to 8 MiB holding exactly
   * their rows, in commit order, in one {@code dataChange = false} commit, then checkpoints that
   * version ({@link SmallFileCompaction}): what the commits of facts and control tables start on a
   * background thread once per checkpoint interval, here for any table and on the caller's thread.
   * Transaction identifiers and domain metadata stay as they are. A commit that lands in between
   * makes it list the files again, at most {@value SmallFileCompaction#MAX_ATTEMPTS} attempts.
   *
   * @param path the table path or URI
   * @return the files before and after, and the compaction's outcome (not committed when fewer than
   *     two files were small)
   * @throws IllegalStateException when no table exists
   * @throws DeltaConflictException when every attempt lost to a concurrent commit; nothing is
   *     visible, the files written stay uncommitted orphans ({@link #vacuum} deletes them)
   */
  public SmallFileCompaction.Outcome compactSmallFiles(String path) {
    return smallFiles.compact(path);
  }

  /**
   * Waits until no background compaction of these tables ({@link SmallFileCompaction}: facts and
   * control, started by commits of this instance) is queued or running. A job calls it at the end
   * of a run, so it ends with no compaction in flight; the compaction thread itself ends a few
   * seconds after its last work.
   *
   * @throws InterruptedException when the waiting thread is interrupted
   */
  public void awaitCompactions() throws InterruptedException {
    smallFiles.awaitIdle();
  }

  /**
   * Waits until no checkpoint of these tables handed to the background thread ({@link
   * CheckpointTiming#IN_BACKGROUND}) is queued or running: after it, every such checkpoint offered
   * so far is written (or its failure logged). A job calls it at the end of a run.
   *
   * @throws InterruptedException when the waiting thread is interrupted
   */
  public void awaitCheckpoints() throws InterruptedException {
    snapshots.awaitCheckpoints();
  }

  /** The table's properties as of a version this instance just committed (no file read). */
  Map<String, String> propertiesAfterCommit(String path, long version) {
    return snapshots.propertiesAfterCommit(path, version);
  }

  /** The background checkpoints of these tables, for tests' hooks. */
  BackgroundCheckpoints backgroundCheckpoints() {
    return snapshots.backgroundCheckpoints();
  }

  /** The small-file compaction of these tables, for tests' hooks. */
  SmallFileCompaction smallFiles() {
    return smallFiles;
  }

  /**
   * Writes a checkpoint of the table at a version ({@code <version>.checkpoint.parquet} and {@code
   * _last_checkpoint}), unless one exists there.
   *
   * @param path the table path or URI
   * @param version the version to checkpoint
   * @return true when this call wrote it, false when it existed
   * @throws IllegalStateException when no table exists
   * @throws UncheckedIOException when writing fails
   */
  public boolean checkpoint(String path, long version) {
    return snapshots.checkpoint(path, version);
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
    return snapshots.require(path).getVersion();
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
    return snapshots.latestTransactionVersion(path, appId);
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
    return snapshots.require(path).getDomainMetadata(domain);
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
    return snapshots.at(path, version).getDomainMetadata(domain);
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
    return scans.tableId(path);
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
    return scans.hasDataFiles(path);
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
    return lifecycle.replaceColumnsOfEmptyTable(path, columns);
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
    return scans.describe(path);
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
    return DeltaLogHistory.read(snapshots.hadoopConf(), path);
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
    return scans.scan(path);
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
    return scans.scanFiles(path);
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
    return scans.dataFileDetails(path);
  }

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
  public VacuumResult vacuum(String path, Instant cutoff, boolean dryRun) {
    return TableVacuum.run(
        snapshots.hadoopConf(), path, dataFileDetails(path), cutoff.toEpochMilli(), dryRun);
  }

  /**
   * Marker files in a hidden folder of a table's directory, on the file system its data files are
   * written with ({@link TableMarkers}); the table need not exist.
   *
   * @param path the table path or URI
   * @param folder the folder under it, starting with {@code _} or {@code .}; may hold {@code /}
   * @return the markers
   * @throws IllegalArgumentException when the folder is not hidden
   * @throws UncheckedIOException when the path's file system cannot be opened
   */
  public TableMarkers markers(String path, String folder) {
    return new TableMarkers(snapshots.hadoopConf(), path, folder);
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
    return scans.readScanFile(file);
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
      String path, long version, @Nullable Predicate fileFilter) {
    return scans.scanAtVersion(path, version, fileFilter);
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
    return scans.scan(path, schema);
  }

  // ------------------------------------------------------------------------------------------
  // Deletion vectors (silver's MERGE, docs/behaviour.md §10.5)
  // ------------------------------------------------------------------------------------------

  /**
   * The deletion-vector side of these tables, which silver's MERGE, its maintenance and reconcile
   * use: live rows with their files and positions, deleted positions, per-file row counts, and the
   * commit of new vectors on exactly the version read (same engine and snapshot cache as these
   * tables).
   *
   * @return the deletion-vector reads and commit of these tables
   */
  public TableDeletionVectors deletionVectors() {
    return deletionVectors;
  }

  /** The lifecycle behind {@link #createIfAbsent} and {@link #open}, for tests' hooks. */
  TableLifecycle lifecycle() {
    return lifecycle;
  }

  /** The commits behind {@link #commit} and {@link #rewrite}, for tests' hooks. */
  TableCommits commits() {
    return commits;
  }

  /**
   * How many times this instance has read a table's latest snapshot from its log (listing the log
   * and replaying it from the last checkpoint): the main fixed cost of a commit, counted for tests
   * and benchmarks. A snapshot this instance read or committed is reused while it is the table's
   * latest, which two file status calls tell (see the class comment); reuses are not counted.
   * Migrations and other metadata commits ({@link #open}, {@link #addColumns}, {@link
   * #evolveSchema}) read the latest snapshot through the same cache, counted here.
   *
   * @return the count since the instance was created
   */
  public long snapshotLoads() {
    return snapshots.loads();
  }

  /**
   * How many snapshots Delta Kernel has read from a table's log for this instance (one Kernel
   * snapshot report each): the latest ones of {@link #snapshotLoads} and every snapshot as of an
   * older version (time travel, scans of a committed version). Tests count with it that nothing
   * reads a log around the snapshot cache.
   *
   * @return the count since the instance was created
   */
  public long kernelSnapshotReads() {
    return snapshots.kernelReads();
  }

  /**
   * How many snapshots built after this instance's commits took the clustering columns of the
   * snapshot the commit was made on, instead of reading the log's domain metadata for them at the
   * next commit (tests and benchmarks).
   */
  long clusteringCarried() {
    return snapshots.clusteringCarried();
  }
}
