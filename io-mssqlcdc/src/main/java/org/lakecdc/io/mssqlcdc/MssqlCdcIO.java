package org.lakecdc.io.mssqlcdc;

import static org.apache.beam.sdk.util.Preconditions.checkArgumentNotNull;

import com.google.auto.value.AutoValue;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.coders.KvCoder;
import org.apache.beam.sdk.coders.NullableCoder;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.schemas.Schema;
import org.apache.beam.sdk.transforms.Create;
import org.apache.beam.sdk.transforms.PTransform;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.Reshuffle;
import org.apache.beam.sdk.transforms.display.DisplayData;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PBegin;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.PCollectionTuple;
import org.apache.beam.sdk.values.Row;
import org.apache.beam.sdk.values.TupleTag;
import org.apache.beam.sdk.values.TupleTagList;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.joda.time.Duration;
import org.lakecdc.io.mssqlcdc.client.CdcClient;
import org.lakecdc.io.mssqlcdc.client.CdcClientFactory;
import org.lakecdc.io.mssqlcdc.client.IsolationLevel;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;

/**
 * Reads SQL Server Change Data Capture change rows as Beam {@link Row}s.
 *
 * <pre>{@code
 * PCollection<Row> changes =
 *     pipeline.apply(
 *         MssqlCdcIO.read()
 *             .withCaptureInstance("dbo_orders")
 *             .withClientFactory(clientFactory)
 *             .withStartingLsn(StartingLsn.earliest())
 *             .withMaxCommitsPerBatch(1000));
 * }</pre>
 *
 * <h2>Output</h2>
 *
 * Each row has the six metadata columns {@code _capture_instance STRING, _start_lsn STRING, _seqval
 * STRING, _operation INT32, _command_id INT32} (absent with {@code withIncludeCommandId(false)}),
 * {@code _commit_ts} (a zone-less date-time in UTC), then the captured columns, typed by the
 * mapping of docs/tables.md "Bronze". Order a table's changes by {@code (_start_lsn, _command_id,
 * _seqval, _operation)}. Element timestamps are the UTC commit times. {@link ReadWithBatches} also
 * emits one {@link ChangeBatch} per batch read.
 *
 * <h2>Forms</h2>
 *
 * The bounded form (default) reads up to {@code sys.fn_cdc_get_max_lsn()} as read once at the
 * start, in batches of at most {@code maxCommitsPerBatch} commits, and finishes; it runs on every
 * runner. The continuous form ({@link Read#withContinuous(boolean)}) follows {@code max_lsn} and
 * polls every {@link Read#withPollInterval(Duration)} when caught up, until its {@link
 * Read#withStopCondition(StopCondition)} holds; it needs a runner that runs unbounded splittable
 * DoFns (Direct, Flink).
 *
 * <h2>Columns</h2>
 *
 * Without {@link Read#withColumns(String)} the captured columns are inferred when the pipeline is
 * built, from {@code sys.sp_cdc_get_captured_columns} of every capture instance of the table (the
 * union, older instance first, computed columns left out). A column named like a metadata column or
 * of a type without a mapping ({@code sql_variant}, {@code geography}, ...) fails the build with an
 * error naming it and the fix.
 *
 * <h2>Guards</h2>
 *
 * Each batch checks each capture instance's minimum LSN before and after reading: changes removed
 * by CDC cleanup (or held only by a capture instance disabled before the read reached them) fail
 * the read with {@link org.lakecdc.io.mssqlcdc.client.DataLossError}.
 *
 * <p>Before any row of a batch is read, its schema is checked (docs/scenarios.md "Schema change"),
 * and a failing batch emits nothing; the batches before it are emitted as usual:
 *
 * <ul>
 *   <li>DDL in the batch's range ({@code sys.sp_cdc_get_ddl_history}), by {@link
 *       Read#withSchemaChangePolicy}: with {@code classify} a captured column the read reads whose
 *       new type does not fit its expected type fails with {@link
 *       org.lakecdc.io.mssqlcdc.client.SchemaChangedError} (restart to re-infer, or update {@code
 *       columns}); other DDL goes on with a warning. With {@code fail} any DDL fails.
 *   <li>A capture instance created after the pipeline was built (the batch reaches its start LSN S,
 *       or it is the only instance left): with inferred columns, one that captures a column the
 *       schema lacks, or types a column so the schema's type cannot hold it, fails with {@link
 *       org.lakecdc.io.mssqlcdc.client.SchemaChangedError} before anything at or past S is read (a
 *       restart re-infers the union and resumes at S); with declared columns it is followed in
 *       place and the columns it captures that {@code columns} does not list are not read (a
 *       warning).
 * </ul>
 *
 * <h2>Snapshots</h2>
 *
 * {@link #snapshot()} reads a tracked table's current rows once (bounded), in the same schema as
 * change rows, every row stamped with one snapshot LSN S recorded before any row is read ({@link
 * SnapshotLsn}): {@code _start_lsn} = S, {@code _seqval} NULL, {@code _operation} 0, {@code
 * _command_id} NULL, {@code _commit_ts} = the UTC commit time of S.
 *
 * <pre>{@code
 * MssqlCdcIO.Snapshot snapshot =
 *     MssqlCdcIO.snapshot().withCaptureInstance("dbo_orders").withClientFactory(clientFactory);
 * Lsn s = snapshot.resolveSnapshotLsn();  // record S first
 * PCollection<Row> rows = pipeline.apply(snapshot.withSnapshotLsn(s).withNumPartitions(8));
 * // then follow the changes after S: MssqlCdcIO.read().withStartingLsn(StartingLsn.after(s))
 * }</pre>
 *
 * {@link Snapshot#writeTo(RowSink)} writes each key range's rows through a {@link RowSink} in the
 * stage that reads them (one result per range, the range's number as the sequence), so that a table
 * of any size is written in bounded memory and no row crosses a shuffle.
 */
public final class MssqlCdcIO {
  /** The main output of {@link ReadWithBatches}: change rows. */
  public static final TupleTag<Row> CHANGES = new TupleTag<Row>("changes") {};

  /** The second output of {@link ReadWithBatches}: one {@link ChangeBatch} per batch read. */
  public static final TupleTag<ChangeBatch> BATCHES = new TupleTag<ChangeBatch>("batches") {};

  /** Default wait of the continuous form when caught up: 5 seconds. */
  public static final Duration DEFAULT_POLL_INTERVAL = Duration.standardSeconds(5);

  private MssqlCdcIO() {}

  /**
   * Throws {@link IllegalArgumentException} with {@code String.format(message, args)} unless ok.
   */
  private static void require(boolean ok, String message, Object... args) {
    if (!ok) {
      throw new IllegalArgumentException(String.format(Locale.ROOT, message, args));
    }
  }

  /** The one element a read starts from: the capture instance's name. */
  private static PCollection<String> captureInstance(PBegin input, String captureInstance) {
    return input.apply(
        "Capture instance " + captureInstance.toLowerCase(Locale.ROOT),
        Create.of(captureInstance).withCoder(StringUtf8Coder.of()));
  }

  /**
   * Reads many capture instances in one splittable DoFn: one element per capture instance, each
   * read as its own {@link Read} configures it (schema, starting position, batch size, partitions,
   * schema-change policy) with its own restriction, watermark and batch sequence, each batch's rows
   * written through that table's {@link RowSink} (there is no row output: every table's rows have
   * their own schema). See {@link ReadAll}.
   */
  public static ReadAll readAll() {
    return new ReadAll(List.of());
  }

  /**
   * A read with defaults: bounded, {@code startingLsn=earliest}, no commit limit per batch, one
   * partition, {@code _command_id} read, columns inferred, poll interval 5 s, {@code
   * schemaChangePolicy=classify}.
   */
  public static Read read() {
    return new AutoValue_MssqlCdcIO_Read.Builder()
        .setStartingLsn(StartingLsn.earliest())
        .setMaxCommitsPerBatch(0)
        .setContinuous(false)
        .setPollInterval(DEFAULT_POLL_INTERVAL)
        .setStopCondition(StopCondition.NEVER)
        .setNumPartitions(1)
        .setMinRowsPerPartition(RangePlanner.DEFAULT_MIN_ROWS_PER_PARTITION)
        .setIncludeCommandId(true)
        .setSchemaChangePolicy(SchemaChangePolicy.CLASSIFY)
        .setDataLossPolicy(DataLossPolicy.FAIL)
        .build();
  }

  /**
   * A snapshot with defaults: S resolved when the pipeline is built, one partition, {@code READ
   * COMMITTED}, {@code _command_id} in the schema (NULL), columns inferred. See {@link Snapshot}.
   */
  public static Snapshot snapshot() {
    return new AutoValue_MssqlCdcIO_Snapshot.Builder()
        .setNumPartitions(1)
        .setIsolationLevel(IsolationLevel.READ_COMMITTED)
        .setIncludeCommandId(true)
        .build();
  }

  /**
   * A chunked snapshot read with defaults: {@code READ COMMITTED}, {@code _command_id} in the
   * schema (NULL), columns inferred, no open end to seek. S and the chunks are required. See {@link
   * SnapshotChunks}.
   */
  public static SnapshotChunks snapshotChunks() {
    return new AutoValue_MssqlCdcIO_SnapshotChunks.Builder()
        .setIsolationLevel(IsolationLevel.READ_COMMITTED)
        .setIncludeCommandId(true)
        .setChunks(List.of())
        .build();
  }

  /** The change read. See {@link MssqlCdcIO}. */
  @AutoValue
  public abstract static class Read extends PTransform<PBegin, PCollection<Row>> {
    abstract @Nullable String getCaptureInstance();

    /**
     * The capture instance this read is configured with ({@link #withCaptureInstance}), or null.
     */
    public @Nullable String captureInstance() {
      return getCaptureInstance();
    }

    abstract @Nullable CdcClientFactory getClientFactory();

    abstract StartingLsn getStartingLsn();

    abstract int getMaxCommitsPerBatch();

    abstract boolean isContinuous();

    abstract Duration getPollInterval();

    abstract StopCondition getStopCondition();

    abstract int getNumPartitions();

    abstract long getMinRowsPerPartition();

    abstract boolean getIncludeCommandId();

    abstract @Nullable String getColumns();

    abstract SchemaChangePolicy getSchemaChangePolicy();

    abstract DataLossPolicy getDataLossPolicy();

    abstract Builder toBuilder();

    @AutoValue.Builder
    abstract static class Builder {
      abstract Builder setCaptureInstance(String captureInstance);

      abstract Builder setClientFactory(CdcClientFactory clientFactory);

      abstract Builder setStartingLsn(StartingLsn startingLsn);

      abstract Builder setMaxCommitsPerBatch(int maxCommitsPerBatch);

      abstract Builder setContinuous(boolean continuous);

      abstract Builder setPollInterval(Duration pollInterval);

      abstract Builder setStopCondition(StopCondition stopCondition);

      abstract Builder setNumPartitions(int numPartitions);

      abstract Builder setMinRowsPerPartition(long minRowsPerPartition);

      abstract Builder setIncludeCommandId(boolean includeCommandId);

      abstract Builder setColumns(String columns);

      abstract Builder setSchemaChangePolicy(SchemaChangePolicy schemaChangePolicy);

      abstract Builder setDataLossPolicy(DataLossPolicy dataLossPolicy);

      abstract Read build();
    }

    /** The capture instance to follow (SQL Server's default name is {@code <schema>_<table>}). */
    public Read withCaptureInstance(String captureInstance) {
      checkArgumentNotNull(captureInstance, "withCaptureInstance() needs a name, not null");
      return toBuilder().setCaptureInstance(captureInstance).build();
    }

    /** How to open a {@link CdcClient}: the SQL Server client's factory, or the simulator's. */
    public Read withClientFactory(CdcClientFactory clientFactory) {
      checkArgumentNotNull(clientFactory, "withClientFactory() needs a factory, not null");
      return toBuilder().setClientFactory(clientFactory).build();
    }

    /** Where the read starts: earliest (default), latest, or after a given LSN. */
    public Read withStartingLsn(StartingLsn startingLsn) {
      checkArgumentNotNull(startingLsn, "withStartingLsn() needs a position, not null");
      return toBuilder().setStartingLsn(startingLsn).build();
    }

    /**
     * At most this many commits of {@code cdc.lsn_time_mapping} per batch (idle entries and other
     * tables' commits count); a batch always ends on a commit.
     *
     * @throws IllegalArgumentException unless {@code maxCommitsPerBatch > 0}
     */
    public Read withMaxCommitsPerBatch(int maxCommitsPerBatch) {
      if (maxCommitsPerBatch <= 0) {
        throw new IllegalArgumentException(
            "maxCommitsPerBatch must be a positive integer, not '"
                + maxCommitsPerBatch
                + "'; omit it to read up to max_lsn");
      }
      return toBuilder().setMaxCommitsPerBatch(maxCommitsPerBatch).build();
    }

    /** True for the continuous form (follows {@code max_lsn}); false (default) for bounded. */
    public Read withContinuous(boolean continuous) {
      return toBuilder().setContinuous(continuous).build();
    }

    /**
     * How long the continuous form waits before polling {@code max_lsn} again when caught up.
     *
     * @throws IllegalArgumentException unless positive
     */
    public Read withPollInterval(Duration pollInterval) {
      checkArgumentNotNull(pollInterval, "withPollInterval() needs a duration, not null");
      if (!pollInterval.isLongerThan(Duration.ZERO)) {
        throw new IllegalArgumentException(
            "pollInterval must be a positive duration, not " + pollInterval);
      }
      return toBuilder().setPollInterval(pollInterval).build();
    }

    /**
     * When the continuous form stops (default: never): asked after each batch and at each poll;
     * once true, the read ends with every batch it read emitted, and the pipeline can finish. The
     * bounded form ends at {@code max_lsn} and does not ask.
     */
    public Read withStopCondition(StopCondition stopCondition) {
      checkArgumentNotNull(stopCondition, "withStopCondition() needs a condition, not null");
      return toBuilder().setStopCondition(stopCondition).build();
    }

    /**
     * Splits the range to read into at most this many parts read in parallel, at commit LSNs that
     * balance change rows; each part holds at least {@link #withMinRowsPerPartition(long)} rows.
     *
     * @throws IllegalArgumentException unless {@code numPartitions > 0}
     */
    public Read withNumPartitions(int numPartitions) {
      if (numPartitions <= 0) {
        throw new IllegalArgumentException(
            "numPartitions must be a positive integer, not '" + numPartitions + "'");
      }
      return toBuilder().setNumPartitions(numPartitions).build();
    }

    /**
     * The floor of change rows per parallel part (default 50,000).
     *
     * @throws IllegalArgumentException unless positive
     */
    public Read withMinRowsPerPartition(long minRowsPerPartition) {
      if (minRowsPerPartition <= 0) {
        throw new IllegalArgumentException(
            "minRowsPerPartition must be a positive integer, not '" + minRowsPerPartition + "'");
      }
      return toBuilder().setMinRowsPerPartition(minRowsPerPartition).build();
    }

    /**
     * Whether to read {@code __$command_id} into {@code _command_id} (default true); false for
     * change tables without it (SQL Server 2016 before its cumulative update).
     */
    public Read withIncludeCommandId(boolean includeCommandId) {
      return toBuilder().setIncludeCommandId(includeCommandId).build();
    }

    /**
     * Declares the captured columns to read and their output types, as a Spark-style DDL list
     * ({@code "order_id INT, amount DECIMAL(18,2)"}); values are cast to these types. Without it
     * the columns are inferred from CDC metadata.
     */
    public Read withColumns(String columns) {
      checkArgumentNotNull(columns, "withColumns() needs a column list, not null");
      return toBuilder().setColumns(columns).build();
    }

    /**
     * What a batch whose LSN range holds DDL on the table does (docs/scenarios.md "Schema change"),
     * checked before any row of the batch is read: {@link SchemaChangePolicy#CLASSIFY} (default)
     * fails only when a captured column the read reads got a type its expected type does not hold;
     * {@link SchemaChangePolicy#FAIL} fails on any DDL. Either failure is a {@link
     * org.lakecdc.io.mssqlcdc.client.SchemaChangedError}, never retried.
     */
    public Read withSchemaChangePolicy(SchemaChangePolicy schemaChangePolicy) {
      checkArgumentNotNull(schemaChangePolicy, "withSchemaChangePolicy() needs a policy, not null");
      return toBuilder().setSchemaChangePolicy(schemaChangePolicy).build();
    }

    /**
     * {@link #withSchemaChangePolicy(SchemaChangePolicy)} by name: {@code classify} or {@code fail}
     * (case ignored).
     *
     * @throws IllegalArgumentException for another name: {@code schemaChangePolicy must be
     *     'classify' or 'fail', not '<value>'}
     */
    public Read withSchemaChangePolicy(String schemaChangePolicy) {
      checkArgumentNotNull(schemaChangePolicy, "withSchemaChangePolicy() needs a policy, not null");
      return withSchemaChangePolicy(SchemaChangePolicy.parse(schemaChangePolicy));
    }

    /**
     * What the read does when the changes it needs next were purged by CDC cleanup: {@link
     * DataLossPolicy#FAIL} (default) and {@link DataLossPolicy#RESNAPSHOT} fail the read with
     * {@link org.lakecdc.io.mssqlcdc.client.DataLossError} (the job that runs it re-snapshots);
     * {@link DataLossPolicy#SKIP} reads each batch from the capture instance's {@code min_lsn} on
     * and reports the gap in the batch's {@link BatchSource#skipped()}, certain when found before
     * the read, possible when cleanup moved {@code min_lsn} during it (BEHAVIOUR.md 3.8, 4.5). A
     * batch's boundaries never change, so split parts keep their numbering.
     */
    public Read withDataLoss(DataLossPolicy dataLossPolicy) {
      checkArgumentNotNull(dataLossPolicy, "withDataLoss() needs a policy, not null");
      return toBuilder().setDataLossPolicy(dataLossPolicy).build();
    }

    /**
     * The Beam schema of the rows this read emits, resolved as {@code expand()} resolves it (from
     * the declared columns, or from CDC metadata through a client).
     *
     * @throws IllegalArgumentException for an invalid configuration, as {@code expand()}
     */
    public Schema outputSchema() {
      return resolve().schema();
    }

    /** The same read, also emitting one {@link ChangeBatch} per batch under {@link #BATCHES}. */
    public ReadWithBatches withBatches() {
      return new ReadWithBatches(this);
    }

    /**
     * The same read, writing each batch's rows through {@code sink} in the reading stage instead of
     * emitting them: the output is one {@code (batch, what the sink wrote)} per batch, in no
     * particular order (number them with {@link ChangeBatch#sequence()}), timestamped with the
     * batch's end commit time. Rows never become elements, so memory is bounded by what the sink
     * buffers, not by the size of a batch (one transaction can hold millions of rows and is never
     * split), and no row crosses a shuffle.
     */
    public <ResultT> WriteBatches<ResultT> writeTo(RowSink<ResultT> sink) {
      checkArgumentNotNull(sink, "writeTo() needs a sink, not null");
      return new WriteBatches<>(this, sink);
    }

    @Override
    public PCollection<Row> expand(PBegin input) {
      return input.apply("Read change batches", withBatches()).get(CHANGES);
    }

    @Override
    public void populateDisplayData(DisplayData.Builder builder) {
      super.populateDisplayData(builder);
      builder
          .addIfNotNull(DisplayData.item("captureInstance", getCaptureInstance()))
          .add(DisplayData.item("startingLsn", getStartingLsn().toString()))
          .add(DisplayData.item("maxCommitsPerBatch", getMaxCommitsPerBatch()))
          .add(DisplayData.item("continuous", isContinuous()))
          .add(DisplayData.item("numPartitions", getNumPartitions()))
          .add(DisplayData.item("includeCommandId", getIncludeCommandId()))
          .addIfNotNull(DisplayData.item("columns", getColumns()))
          .add(DisplayData.item("schemaChangePolicy", getSchemaChangePolicy().toString()))
          .add(DisplayData.item("onDataLoss", getDataLossPolicy().toString()));
    }

    /** Validates the configuration and fixes the output schema, reading CDC metadata. */
    ReadSpec resolve() {
      OutputColumns output =
          OutputColumns.resolve(
              "read()",
              getCaptureInstance(),
              getClientFactory(),
              getColumns(),
              getIncludeCommandId());
      return new ReadSpec(
          getCaptureInstance(),
          getClientFactory(),
          getStartingLsn(),
          getMaxCommitsPerBatch(),
          getNumPartitions(),
          getMinRowsPerPartition(),
          getIncludeCommandId(),
          output.columns(),
          output.schema(),
          getPollInterval(),
          getStopCondition(),
          getSchemaChangePolicy(),
          getDataLossPolicy(),
          output.declared(),
          output.instances(),
          output.expectedTypes());
    }
  }

  /**
   * A bounded read of the current rows of the table a capture instance tracks, stamped with one
   * snapshot LSN S, in the schema of {@link Read} (docs/tables.md "Bronze").
   *
   * <h2>Snapshot LSN</h2>
   *
   * S is {@link #withSnapshotLsn(Lsn)} when given; otherwise {@link SnapshotLsn#resolve} (the rule
   * of docs/tables.md "Bronze") when the pipeline is built ({@code expand}, on the launcher),
   * before any row is read. Every commit up to S is in the rows read; rows may also hold commits
   * after S, which a change read starting after S replays (by design: the latest image per key
   * absorbs the overlap). A job that records S itself calls {@link #resolveSnapshotLsn()} once and
   * passes the answer with {@link #withSnapshotLsn(Lsn)}.
   *
   * <h2>Rows</h2>
   *
   * {@code _capture_instance} = the configured instance, {@code _start_lsn} = S, {@code _seqval}
   * NULL, {@code _operation} 0, {@code _command_id} NULL (present unless {@code
   * withIncludeCommandId(false)}), {@code _commit_ts} = UTC commit time of S ({@code
   * cdc.lsn_time_mapping}; the last commit before S when S is no commit LSN), then the captured
   * columns cast like change rows; a column the table no longer has reads NULL. Element timestamps
   * are the commit time of S. Counter {@code mssqlcdc/snapshot_rows} counts the rows read.
   *
   * <h2>Partitions</h2>
   *
   * A first step plans key ranges over the oldest capture instance's key ({@link
   * CdcClient#keyTiles}: {@code numPartitions} NTILE tiles, NULL keys first), the ranges are
   * reshuffled, and each is read in one query ({@code lo <= key < hi}) on the client its worker
   * keeps (one per {@code DoFn} instance); every row is read exactly once. A table without key
   * columns, or {@code numPartitions = 1}, is one range. With {@link #writeTo(RowSink)} each
   * range's rows are written by a sink in the reading stage and only the sink's result per range is
   * emitted: no row crosses a shuffle.
   *
   * <h2>Errors</h2>
   *
   * Building fails with {@link IllegalArgumentException} naming the option for a missing capture
   * instance or client factory, a bad {@code columns} list or an unmappable type, with {@link
   * org.lakecdc.io.mssqlcdc.client.CaptureInstanceNotFoundError} for an unknown instance, and with
   * {@link IllegalStateException} when S cannot be resolved yet. Running fails with {@link
   * IllegalStateException} when {@code cdc.lsn_time_mapping} has no commit at or before S.
   */
  @AutoValue
  public abstract static class Snapshot extends PTransform<PBegin, PCollection<Row>> {
    abstract @Nullable String getCaptureInstance();

    abstract @Nullable CdcClientFactory getClientFactory();

    abstract @Nullable Lsn getSnapshotLsn();

    abstract int getNumPartitions();

    abstract IsolationLevel getIsolationLevel();

    abstract boolean getIncludeCommandId();

    abstract @Nullable String getColumns();

    abstract Builder toBuilder();

    @AutoValue.Builder
    abstract static class Builder {
      abstract Builder setCaptureInstance(String captureInstance);

      abstract Builder setClientFactory(CdcClientFactory clientFactory);

      abstract Builder setSnapshotLsn(Lsn snapshotLsn);

      abstract Builder setNumPartitions(int numPartitions);

      abstract Builder setIsolationLevel(IsolationLevel isolationLevel);

      abstract Builder setIncludeCommandId(boolean includeCommandId);

      abstract Builder setColumns(String columns);

      abstract Snapshot build();
    }

    /**
     * The capture instance whose table is read (SQL Server's default name is {@code
     * <schema>_<table>}); rows carry it as {@code _capture_instance}.
     */
    public Snapshot withCaptureInstance(String captureInstance) {
      checkArgumentNotNull(captureInstance, "withCaptureInstance() needs a name, not null");
      return toBuilder().setCaptureInstance(captureInstance).build();
    }

    /** How to open a {@link CdcClient}: the SQL Server client's factory, or the simulator's. */
    public Snapshot withClientFactory(CdcClientFactory clientFactory) {
      checkArgumentNotNull(clientFactory, "withClientFactory() needs a factory, not null");
      return toBuilder().setClientFactory(clientFactory).build();
    }

    /**
     * The snapshot LSN S stamped on every row, recorded by the caller before the read (rows may be
     * newer than S, never older). Default: {@link SnapshotLsn#resolve} when the pipeline is built.
     *
     * @throws IllegalArgumentException for {@link Lsn#ZERO}, which no commit has
     */
    public Snapshot withSnapshotLsn(Lsn snapshotLsn) {
      checkArgumentNotNull(snapshotLsn, "withSnapshotLsn() needs an LSN, not null");
      if (snapshotLsn.isZero()) {
        throw new IllegalArgumentException(
            "snapshotLsn must be an LSN recorded before the read (above "
                + Lsn.ZERO
                + "), not "
                + snapshotLsn);
      }
      return toBuilder().setSnapshotLsn(snapshotLsn).build();
    }

    /**
     * Reads the table in at most this many key ranges in parallel (default 1): NTILE tiles of the
     * key, so ranges hold nearly equal row counts.
     *
     * @throws IllegalArgumentException unless {@code numPartitions > 0}
     */
    public Snapshot withNumPartitions(int numPartitions) {
      if (numPartitions <= 0) {
        throw new IllegalArgumentException(
            "numPartitions must be a positive integer, not '" + numPartitions + "'");
      }
      return toBuilder().setNumPartitions(numPartitions).build();
    }

    /**
     * The isolation level of the reads of the table (default {@link IsolationLevel#READ_COMMITTED};
     * {@link IsolationLevel#SNAPSHOT} needs the database's {@code ALLOW_SNAPSHOT_ISOLATION}).
     * Uncommitted reads ({@code NOLOCK}) are never used.
     */
    public Snapshot withIsolationLevel(IsolationLevel isolationLevel) {
      checkArgumentNotNull(isolationLevel, "withIsolationLevel() needs a level, not null");
      return toBuilder().setIsolationLevel(isolationLevel).build();
    }

    /**
     * Whether the schema has {@code _command_id} (default true), NULL on snapshot rows: set it as
     * on the change read so both have one schema.
     */
    public Snapshot withIncludeCommandId(boolean includeCommandId) {
      return toBuilder().setIncludeCommandId(includeCommandId).build();
    }

    /**
     * Declares the captured columns to read and their output types, as for {@link
     * Read#withColumns(String)}; without it they are inferred from CDC metadata.
     */
    public Snapshot withColumns(String columns) {
      checkArgumentNotNull(columns, "withColumns() needs a column list, not null");
      return toBuilder().setColumns(columns).build();
    }

    /**
     * The snapshot LSN S this snapshot stamps: the one given with {@link #withSnapshotLsn(Lsn)},
     * else {@link SnapshotLsn#resolve} now (each call may return a newer LSN; keep the first and
     * pass it with {@link #withSnapshotLsn(Lsn)}).
     *
     * @throws IllegalArgumentException when the capture instance or client factory is missing
     * @throws IllegalStateException when CDC has no {@code max_lsn} and the instance no start LSN
     */
    public Lsn resolveSnapshotLsn() {
      OutputColumns.checkConfigured("snapshot()", getCaptureInstance(), getClientFactory());
      Lsn given = getSnapshotLsn();
      if (given != null) {
        return given;
      }
      try (CdcClient client = getClientFactory().open()) {
        return SnapshotLsn.resolve(client, getCaptureInstance());
      }
    }

    /**
     * The Beam schema of the rows this snapshot reads, resolved as {@code expand()} resolves it
     * (from the declared columns, or from CDC metadata through a client).
     *
     * @throws IllegalArgumentException for an invalid configuration, as {@code expand()}
     */
    public Schema outputSchema() {
      OutputColumns.checkConfigured("snapshot()", getCaptureInstance(), getClientFactory());
      return OutputColumns.resolve(
              "snapshot()",
              getCaptureInstance(),
              getClientFactory(),
              getColumns(),
              getIncludeCommandId())
          .schema();
    }

    /**
     * The same snapshot, writing each key range's rows through {@code sink} in the stage that reads
     * them instead of emitting them: the output is one result of the sink per key range (the
     * sequence given to {@link RowSink#write} is the range's number, 0 to the number of ranges - 1
     * in key order), in no particular order, timestamped with the commit time of S. Only the small
     * range descriptions are reshuffled; rows never become elements, so no row crosses a shuffle
     * and memory is bounded by what the sink buffers, not by the size of a range. S, partitions and
     * errors are as for the rows form.
     *
     * @param sink writes the rows of one range; its {@link RowSink#resultCoder()} encodes the
     *     output
     * @param <ResultT> what the sink returns per range
     */
    public <ResultT> WriteRanges<ResultT> writeTo(RowSink<ResultT> sink) {
      checkArgumentNotNull(sink, "writeTo() needs a sink, not null");
      return new WriteRanges<>(this, sink);
    }

    @Override
    public PCollection<Row> expand(PBegin input) {
      SnapshotSpec spec = resolve();
      return ranges(input, spec)
          .apply("Read key ranges", ParDo.of(ReadSnapshotRangeFn.emittingRows(spec)))
          .setRowSchema(spec.schema());
    }

    /** The planned key ranges of {@code spec}, spread over workers. */
    static PCollection<SnapshotRange> ranges(PBegin input, SnapshotSpec spec) {
      return input
          .apply(
              "Capture instance " + spec.captureInstance().toLowerCase(Locale.ROOT),
              Create.of(spec.captureInstance()).withCoder(StringUtf8Coder.of()))
          .apply("Plan key ranges", ParDo.of(new PlanSnapshotRangesFn(spec)))
          .setCoder(SnapshotRangeCoder.of())
          .apply("Spread key ranges", Reshuffle.viaRandomKey());
    }

    @Override
    public void populateDisplayData(DisplayData.Builder builder) {
      super.populateDisplayData(builder);
      Lsn snapshotLsn = getSnapshotLsn();
      builder
          .addIfNotNull(DisplayData.item("captureInstance", getCaptureInstance()))
          .addIfNotNull(
              DisplayData.item("snapshotLsn", snapshotLsn == null ? null : snapshotLsn.toString()))
          .add(DisplayData.item("numPartitions", getNumPartitions()))
          .add(DisplayData.item("isolationLevel", getIsolationLevel().name()))
          .add(DisplayData.item("includeCommandId", getIncludeCommandId()))
          .addIfNotNull(DisplayData.item("columns", getColumns()));
    }

    /**
     * Validates the configuration, records S (before anything is read) and fixes the output schema,
     * reading CDC metadata only.
     */
    SnapshotSpec resolve() {
      Lsn snapshotLsn = resolveSnapshotLsn();
      OutputColumns output =
          OutputColumns.resolve(
              "snapshot()",
              getCaptureInstance(),
              getClientFactory(),
              getColumns(),
              getIncludeCommandId());
      return new SnapshotSpec(
          getCaptureInstance(),
          getClientFactory(),
          snapshotLsn,
          getNumPartitions(),
          getIsolationLevel(),
          getIncludeCommandId(),
          output.columns(),
          output.schema());
    }
  }

  /**
   * Many change reads in one splittable DoFn ({@link MssqlCdcIO#readAll()}), the shape of KafkaIO's
   * {@code ReadSourceDescriptors}: the elements are the capture instances, each with its own {@link
   * Read} configuration, restriction ({@code LsnRange}), watermark and batch sequence, so tables
   * advance independently and a runner spreads them over workers. All reads share one client
   * factory (one client per DoFn instance serves them all) and one form (bounded, or continuous).
   *
   * <h2>Failures stop one table</h2>
   *
   * A {@link TableFailure} (data loss, a schema change the read cannot follow, a missing grant, a
   * capture instance disabled) ends that capture instance's read only: instead of failing the
   * pipeline, its read emits one {@link ChangeBatch#failed} batch (the sequence number of the batch
   * it could not read, no row) and stops; the other capture instances read on, to their end or
   * until stopped. Any other error fails the pipeline as a single read does.
   */
  public static final class ReadAll implements java.io.Serializable {
    private final List<Read> reads;

    ReadAll(List<Read> reads) {
      this.reads = List.copyOf(reads);
    }

    /**
     * These reads and {@code read} (a {@link Read} with its capture instance and client factory).
     *
     * @throws IllegalArgumentException when {@code read} is null
     */
    public ReadAll with(Read read) {
      checkArgumentNotNull(read, "readAll().with() needs a read, not null");
      List<Read> more = new ArrayList<>(reads);
      more.add(read);
      return new ReadAll(more);
    }

    /** The reads, in the order they were added. */
    public List<Read> reads() {
      return reads;
    }

    /**
     * Writes each capture instance's batches through its own sink in the reading stage; the output
     * is one {@code (batch, what the sink wrote)} per batch, {@link ChangeBatch#captureInstance()}
     * naming the table (a {@link ChangeBatch#failed} batch comes with a null result).
     *
     * @param sinks the sink of each capture instance, by the name its read was configured with
     * @throws IllegalArgumentException when a read has no sink, a capture instance is read twice,
     *     the reads do not share one client factory or one form, or there is no read
     */
    public <ResultT> WriteAllBatches<ResultT> writeTo(
        Map<String, ? extends RowSink<ResultT>> sinks) {
      require(!reads.isEmpty(), "readAll() needs at least one read (with())");
      Set<String> names = new HashSet<>();
      for (Read read : reads) {
        String ci = read.getCaptureInstance();
        require(ci != null, "readAll(): every read needs withCaptureInstance()");
        require(
            names.add(ci.toLowerCase(Locale.ROOT)),
            "readAll() reads capture instance %s twice",
            ci);
        require(sinks.containsKey(ci), "readAll().writeTo(): no sink for capture instance %s", ci);
        require(
            java.util.Objects.equals(read.getClientFactory(), reads.get(0).getClientFactory()),
            "readAll(): the reads of %s and %s use different client factories; one readAll()"
                + " reads one source",
            reads.get(0).getCaptureInstance(),
            ci);
        require(
            read.isContinuous() == reads.get(0).isContinuous(),
            "readAll(): the reads of %s and %s are of different forms (bounded, continuous)",
            reads.get(0).getCaptureInstance(),
            ci);
      }
      return new WriteAllBatches<>(reads, new LinkedHashMap<>(sinks));
    }
  }

  /**
   * Many change reads writing through their sinks: see {@link ReadAll#writeTo(Map)}.
   *
   * @param <ResultT> what the sinks return per batch
   */
  public static final class WriteAllBatches<ResultT>
      extends PTransform<PBegin, PCollection<KV<ChangeBatch, ResultT>>> {
    private final List<Read> reads;
    private final Map<String, ? extends RowSink<ResultT>> sinks;

    WriteAllBatches(List<Read> reads, Map<String, ? extends RowSink<ResultT>> sinks) {
      this.reads = reads;
      this.sinks = sinks;
    }

    @Override
    @SuppressWarnings("unchecked")
    public PCollection<KV<ChangeBatch, ResultT>> expand(PBegin input) {
      List<ReadSpec> specs = new ArrayList<>();
      Map<String, RowSink<Object>> anySinks = new LinkedHashMap<>();
      for (Read read : reads) {
        ReadSpec spec = read.resolve();
        specs.add(spec);
        anySinks.put(
            spec.captureInstance(), (RowSink<Object>) sinks.get(read.getCaptureInstance()));
      }
      TupleTag<KV<ChangeBatch, Object>> written = new TupleTag<>("written");
      ReadChangesDoFn<KV<ChangeBatch, Object>> fn =
          ReadChangesDoFn.of(
              reads.get(0).isContinuous(), specs, CHANGES, BATCHES, written, anySinks, true);
      List<String> names = specs.stream().map(ReadSpec::captureInstance).toList();
      PCollectionTuple outputs =
          input
              .apply("Capture instances", Create.of(names).withCoder(StringUtf8Coder.of()))
              .apply(
                  "Read and write changes by LSN range",
                  ParDo.of(fn).withOutputTags(written, TupleTagList.empty()));
      PCollection<KV<ChangeBatch, Object>> out = outputs.get(written);
      Coder<Object> resultCoder = (Coder<Object>) sinks.values().iterator().next().resultCoder();
      out.setCoder(KvCoder.of(ChangeBatchCoder.of(), NullableCoder.of(resultCoder)));
      return (PCollection<KV<ChangeBatch, ResultT>>) (PCollection<?>) out;
    }

    @Override
    public void populateDisplayData(DisplayData.Builder builder) {
      super.populateDisplayData(builder);
      builder.add(
          DisplayData.item(
              "captureInstances",
              String.join(",", reads.stream().map(Read::getCaptureInstance).toList())));
    }
  }

  /**
   * The snapshot writing through a {@link RowSink}: see {@link Snapshot#writeTo(RowSink)}.
   *
   * @param <ResultT> what the sink returns per key range
   */
  public static final class WriteRanges<ResultT> extends PTransform<PBegin, PCollection<ResultT>> {
    private final Snapshot snapshot;
    private final RowSink<ResultT> sink;

    WriteRanges(Snapshot snapshot, RowSink<ResultT> sink) {
      this.snapshot = snapshot;
      this.sink = sink;
    }

    @Override
    public PCollection<ResultT> expand(PBegin input) {
      SnapshotSpec spec = snapshot.resolve();
      return Snapshot.ranges(input, spec)
          .apply("Read and write key ranges", ParDo.of(ReadSnapshotRangeFn.writingTo(spec, sink)))
          .setCoder(sink.resultCoder());
    }

    @Override
    public void populateDisplayData(DisplayData.Builder builder) {
      snapshot.populateDisplayData(builder);
      builder.add(DisplayData.item("sink", sink.getClass().getName()));
    }
  }

  /**
   * The change read writing through a {@link RowSink}: see {@link Read#writeTo(RowSink)}.
   *
   * @param <ResultT> what the sink returns per batch
   */
  public static final class WriteBatches<ResultT>
      extends PTransform<PBegin, PCollection<KV<ChangeBatch, ResultT>>> {
    private final Read read;
    private final RowSink<ResultT> sink;

    WriteBatches(Read read, RowSink<ResultT> sink) {
      this.read = read;
      this.sink = sink;
    }

    @Override
    @SuppressWarnings("unchecked")
    public PCollection<KV<ChangeBatch, ResultT>> expand(PBegin input) {
      ReadSpec spec = read.resolve();
      TupleTag<KV<ChangeBatch, Object>> written = new TupleTag<>("written");
      RowSink<Object> anySink = (RowSink<Object>) sink;
      ReadChangesDoFn<KV<ChangeBatch, Object>> fn =
          ReadChangesDoFn.of(
              read.isContinuous(),
              List.of(spec),
              CHANGES,
              BATCHES,
              written,
              Map.of(spec.captureInstance(), anySink),
              false);
      PCollectionTuple outputs =
          captureInstance(input, spec.captureInstance())
              .apply(
                  "Read and write changes by LSN range",
                  ParDo.of(fn).withOutputTags(written, TupleTagList.empty()));
      PCollection<KV<ChangeBatch, Object>> out = outputs.get(written);
      out.setCoder(KvCoder.of(ChangeBatchCoder.of(), (Coder<Object>) sink.resultCoder()));
      return (PCollection<KV<ChangeBatch, ResultT>>) (PCollection<?>) out;
    }

    @Override
    public void populateDisplayData(DisplayData.Builder builder) {
      read.populateDisplayData(builder);
      builder.add(DisplayData.item("sink", sink.getClass().getName()));
    }
  }

  /**
   * The change read with two outputs: {@link #CHANGES} (rows) and {@link #BATCHES} (one {@link
   * ChangeBatch} per batch, after its rows).
   */
  public static final class ReadWithBatches extends PTransform<PBegin, PCollectionTuple> {
    private final Read read;

    ReadWithBatches(Read read) {
      this.read = read;
    }

    @Override
    public PCollectionTuple expand(PBegin input) {
      ReadSpec spec = read.resolve();
      ReadChangesDoFn<Row> fn =
          ReadChangesDoFn.of(
              read.isContinuous(), List.of(spec), CHANGES, BATCHES, null, null, false);
      PCollectionTuple outputs =
          captureInstance(input, spec.captureInstance())
              .apply(
                  "Read changes by LSN range",
                  ParDo.of(fn).withOutputTags(CHANGES, TupleTagList.of(BATCHES)));
      outputs.get(CHANGES).setRowSchema(spec.schema());
      outputs.get(BATCHES).setCoder(ChangeBatchCoder.of());
      return outputs;
    }

    @Override
    public void populateDisplayData(DisplayData.Builder builder) {
      read.populateDisplayData(builder);
    }
  }

  /**
   * The read of some chunks of a chunked snapshot (BEHAVIOUR.md 6.7, 6.9; docs/tables.md "Chunked
   * snapshots"), each written through a {@link RowSink} in the reading stage: {@link
   * #writeTo(RowSink)} emits one {@link ChunkRead} per chunk, in no particular order.
   *
   * <pre>{@code
   * PCollection<ChunkRead<SnapshotFiles>> reads =
   *     pipeline.apply(
   *         MssqlCdcIO.snapshotChunks()
   *             .withCaptureInstance("dbo_orders")
   *             .withClientFactory(clientFactory)
   *             .withSnapshotLsn(s)                 // S of the open snapshot
   *             .withChunks(chunksOfThisWave)       // from the plan
   *             .writeTo(sink));
   * }</pre>
   *
   * <h2>Per chunk, on the worker</h2>
   *
   * The chunk's stamp L is the snapshot-LSN rule read right before its {@code SELECT} ({@link
   * SnapshotLsn}); a stamp below S fails the read ({@link IllegalStateException}: the chunks are
   * read from another server than S came from, e.g. a readable secondary). Its rows ({@code lo <=
   * (keys) < hi}, {@link CdcClient#readTable} under the isolation level, never NOLOCK) are snapshot
   * rows stamped L: {@code _start_lsn} = L, {@code _commit_ts} = the UTC commit time of L (of the
   * last commit before L when L is no commit LSN), {@code _seqval} and {@code _command_id} NULL,
   * {@code _operation} 0. They go to the sink with the chunk's index as the sequence; no row
   * becomes an element. {@code max_lsn} is read after the read ({@link ChunkRead#highLsn()}). With
   * {@link #withOpenEndAfter(List)}, a chunk whose {@code hi} is open reads only up to the first
   * key after that MAX now ({@link CdcClient#keyBound} at offset 1), or to the end when there is
   * none. The chunks are reshuffled first, so a runner reads them in parallel.
   *
   * <p>Counters {@code mssqlcdc/snapshot_rows} and {@code mssqlcdc/snapshot_chunks_read},
   * distribution {@code mssqlcdc/snapshot_chunk_read_ms}.
   *
   * <h2>Errors</h2>
   *
   * Building ({@code expand}) fails with {@link IllegalArgumentException} naming the option for a
   * missing capture instance, client factory or S, a bad {@code columns} list or an unmappable
   * type; with {@link org.lakecdc.io.mssqlcdc.client.CaptureInstanceNotFoundError} for an unknown
   * instance. Running fails for a stamp below S and when {@code cdc.lsn_time_mapping} has no commit
   * at or before a stamp.
   */
  @AutoValue
  public abstract static class SnapshotChunks implements java.io.Serializable {
    private static final long serialVersionUID = 1L;

    abstract @Nullable String getCaptureInstance();

    abstract @Nullable CdcClientFactory getClientFactory();

    abstract @Nullable Lsn getSnapshotLsn();

    abstract IsolationLevel getIsolationLevel();

    abstract boolean getIncludeCommandId();

    abstract @Nullable String getColumns();

    abstract List<org.lakecdc.io.mssqlcdc.chunk.Chunk> getChunks();

    abstract @Nullable List<Object> getOpenEndAfter();

    abstract Builder toBuilder();

    @AutoValue.Builder
    abstract static class Builder {
      abstract Builder setCaptureInstance(String captureInstance);

      abstract Builder setClientFactory(CdcClientFactory clientFactory);

      abstract Builder setSnapshotLsn(Lsn snapshotLsn);

      abstract Builder setIsolationLevel(IsolationLevel isolationLevel);

      abstract Builder setIncludeCommandId(boolean includeCommandId);

      abstract Builder setColumns(String columns);

      abstract Builder setChunks(List<org.lakecdc.io.mssqlcdc.chunk.Chunk> chunks);

      abstract Builder setOpenEndAfter(@Nullable List<Object> openEndAfter);

      abstract SnapshotChunks build();
    }

    /** The capture instance configured ({@link #withCaptureInstance}), or null. */
    public @Nullable String captureInstance() {
      return getCaptureInstance();
    }

    /** S configured ({@link #withSnapshotLsn}), or null. */
    public @Nullable Lsn snapshotLsn() {
      return getSnapshotLsn();
    }

    /** The chunks to read, in the order given. */
    public List<org.lakecdc.io.mssqlcdc.chunk.Chunk> chunks() {
      return getChunks();
    }

    /**
     * The capture instance whose table is read; rows carry it as {@code _capture_instance}.
     *
     * @throws IllegalArgumentException when null
     */
    public SnapshotChunks withCaptureInstance(String captureInstance) {
      checkArgumentNotNull(captureInstance, "withCaptureInstance() needs a name, not null");
      return toBuilder().setCaptureInstance(captureInstance).build();
    }

    /** How to open a {@link CdcClient}: the SQL Server client's factory, or the simulator's. */
    public SnapshotChunks withClientFactory(CdcClientFactory clientFactory) {
      checkArgumentNotNull(clientFactory, "withClientFactory() needs a factory, not null");
      return toBuilder().setClientFactory(clientFactory).build();
    }

    /**
     * S, the snapshot LSN recorded when the chunked snapshot opened: no chunk's stamp may be below
     * it. Required.
     *
     * @throws IllegalArgumentException for null or {@link Lsn#ZERO}
     */
    public SnapshotChunks withSnapshotLsn(Lsn snapshotLsn) {
      checkArgumentNotNull(snapshotLsn, "withSnapshotLsn() needs an LSN, not null");
      require(
          !snapshotLsn.isZero(),
          "snapshotLsn must be the LSN S recorded at the open (above %s), not %s",
          Lsn.ZERO,
          snapshotLsn);
      return toBuilder().setSnapshotLsn(snapshotLsn).build();
    }

    /**
     * The isolation level of every chunk's reads (default {@link IsolationLevel#READ_COMMITTED}).
     */
    public SnapshotChunks withIsolationLevel(IsolationLevel isolationLevel) {
      checkArgumentNotNull(isolationLevel, "withIsolationLevel() needs a level, not null");
      return toBuilder().setIsolationLevel(isolationLevel).build();
    }

    /** Whether the schema has {@code _command_id} (default true), NULL on snapshot rows. */
    public SnapshotChunks withIncludeCommandId(boolean includeCommandId) {
      return toBuilder().setIncludeCommandId(includeCommandId).build();
    }

    /** Declares the captured columns and their output types, as {@link Read#withColumns}. */
    public SnapshotChunks withColumns(String columns) {
      checkArgumentNotNull(columns, "withColumns() needs a column list, not null");
      return toBuilder().setColumns(columns).build();
    }

    /**
     * The chunks to read (of the snapshot's plan): at least one, distinct indexes.
     *
     * @throws IllegalArgumentException when empty, null or an index repeats
     */
    public SnapshotChunks withChunks(List<org.lakecdc.io.mssqlcdc.chunk.Chunk> chunks) {
      checkArgumentNotNull(chunks, "withChunks() needs chunks, not null");
      require(!chunks.isEmpty(), "withChunks() needs at least one chunk");
      Set<Integer> seen = new HashSet<>();
      for (org.lakecdc.io.mssqlcdc.chunk.Chunk chunk : chunks) {
        require(seen.add(chunk.index()), "withChunks(): chunk %d is given twice", chunk.index());
      }
      return toBuilder().setChunks(List.copyOf(chunks)).build();
    }

    /**
     * The keyset MAX recorded at the open, after which an open last chunk's end is sought right
     * before its read (BEHAVIOUR.md 6.8); null (default) reads an open chunk to the table's end.
     */
    public SnapshotChunks withOpenEndAfter(@Nullable List<Object> max) {
      return toBuilder()
          .setOpenEndAfter(
              max == null ? null : java.util.Collections.unmodifiableList(new ArrayList<>(max)))
          .build();
    }

    /**
     * The Beam schema of the rows read (the change read's), resolved as {@code expand()} does.
     *
     * @throws IllegalArgumentException for an invalid configuration
     */
    public Schema outputSchema() {
      OutputColumns.checkConfigured("snapshotChunks()", getCaptureInstance(), getClientFactory());
      return OutputColumns.resolve(
              "snapshotChunks()",
              getCaptureInstance(),
              getClientFactory(),
              getColumns(),
              getIncludeCommandId())
          .schema();
    }

    /**
     * Reads each chunk and writes its rows through {@code sink} in the reading stage: the output is
     * one {@link ChunkRead} per chunk (the sink's result inside), in no particular order,
     * timestamped with the commit time of its stamp, coded with {@link ChunkRead#coder} over the
     * sink's {@link RowSink#resultCoder()}.
     *
     * @param <R> what the sink returns per chunk
     * @throws IllegalArgumentException when {@code sink} is null
     */
    public <R> WriteChunks<R> writeTo(RowSink<R> sink) {
      checkArgumentNotNull(sink, "writeTo() needs a sink, not null");
      return new WriteChunks<>(this, sink);
    }

    /** Validates the configuration and fixes the source table, key and output schema. */
    ChunkSpec resolve() {
      OutputColumns.checkConfigured("snapshotChunks()", getCaptureInstance(), getClientFactory());
      Lsn s = getSnapshotLsn();
      require(s != null, "MssqlCdcIO.snapshotChunks() needs S: withSnapshotLsn() is required");
      require(
          !getChunks().isEmpty(),
          "MssqlCdcIO.snapshotChunks() needs chunks: withChunks() is required");
      OutputColumns output =
          OutputColumns.resolve(
              "snapshotChunks()",
              getCaptureInstance(),
              getClientFactory(),
              getColumns(),
              getIncludeCommandId());
      org.lakecdc.io.mssqlcdc.client.CaptureInstance instance;
      try (CdcClient client = getClientFactory().open()) {
        instance = client.captureInstances(getCaptureInstance()).get(0);
      }
      return new ChunkSpec(
          getCaptureInstance(),
          getClientFactory(),
          s,
          instance.sourceSchema(),
          instance.sourceTable(),
          instance.keyColumns(),
          getIsolationLevel(),
          getIncludeCommandId(),
          output.columns(),
          output.schema(),
          getOpenEndAfter());
    }

    /** Display data of the read. */
    void populateDisplayData(DisplayData.Builder builder) {
      Lsn s = getSnapshotLsn();
      builder
          .addIfNotNull(DisplayData.item("captureInstance", getCaptureInstance()))
          .addIfNotNull(DisplayData.item("snapshotLsn", s == null ? null : s.toString()))
          .add(DisplayData.item("chunks", getChunks().size()))
          .add(DisplayData.item("isolationLevel", getIsolationLevel().name()))
          .add(DisplayData.item("includeCommandId", getIncludeCommandId()))
          .addIfNotNull(DisplayData.item("columns", getColumns()));
    }
  }

  /**
   * The chunked snapshot read writing through a {@link RowSink}: see {@link
   * SnapshotChunks#writeTo(RowSink)}.
   *
   * @param <R> what the sink returns per chunk
   */
  public static final class WriteChunks<R> extends PTransform<PBegin, PCollection<ChunkRead<R>>> {
    private final SnapshotChunks read;
    private final RowSink<R> sink;

    WriteChunks(SnapshotChunks read, RowSink<R> sink) {
      this.read = read;
      this.sink = sink;
    }

    @Override
    public PCollection<ChunkRead<R>> expand(PBegin input) {
      ChunkSpec spec = read.resolve();
      return input
          .apply(
              "Chunks of " + spec.captureInstance().toLowerCase(Locale.ROOT),
              Create.of(read.getChunks()).withCoder(ChunkCoder.of()))
          .apply("Spread chunks", Reshuffle.viaRandomKey())
          .apply("Read and write chunks", ParDo.of(new ReadChunkFn<>(spec, sink)))
          .setCoder(ChunkRead.coder(sink.resultCoder()));
    }

    @Override
    public void populateDisplayData(DisplayData.Builder builder) {
      super.populateDisplayData(builder);
      read.populateDisplayData(builder);
      builder.add(DisplayData.item("sink", sink.getClass().getName()));
    }
  }
}
