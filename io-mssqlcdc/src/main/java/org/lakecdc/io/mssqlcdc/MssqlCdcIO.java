package org.lakecdc.io.mssqlcdc;

import static org.apache.beam.sdk.util.Preconditions.checkArgumentNotNull;

import com.google.auto.value.AutoValue;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Consumer;
import javax.sql.DataSource;
import org.apache.beam.sdk.io.jdbc.JdbcIO;
import org.apache.beam.sdk.schemas.Schema;
import org.apache.beam.sdk.transforms.PTransform;
import org.apache.beam.sdk.transforms.SerializableFunction;
import org.apache.beam.sdk.transforms.display.DisplayData;
import org.apache.beam.sdk.transforms.display.HasDisplayData;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PBegin;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.PCollectionTuple;
import org.apache.beam.sdk.values.POutput;
import org.apache.beam.sdk.values.Row;
import org.apache.beam.sdk.values.TupleTag;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.joda.time.Duration;
import org.lakecdc.io.mssqlcdc.chunk.Chunk;
import org.lakecdc.io.mssqlcdc.chunk.ChunkRead;
import org.lakecdc.io.mssqlcdc.chunk.ChunkSpec;
import org.lakecdc.io.mssqlcdc.client.CaptureInstance;
import org.lakecdc.io.mssqlcdc.client.CdcClient;
import org.lakecdc.io.mssqlcdc.client.CdcClientFactory;
import org.lakecdc.io.mssqlcdc.client.IsolationLevel;
import org.lakecdc.io.mssqlcdc.client.SqlCdcClientFactory;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.io.mssqlcdc.read.ChangeBatch;
import org.lakecdc.io.mssqlcdc.read.DataLossPolicy;
import org.lakecdc.io.mssqlcdc.read.ReadSpec;
import org.lakecdc.io.mssqlcdc.read.SchemaChangePolicy;
import org.lakecdc.io.mssqlcdc.read.StartingLsn;
import org.lakecdc.io.mssqlcdc.read.StopCondition;
import org.lakecdc.io.mssqlcdc.snapshot.SnapshotLsn;
import org.lakecdc.io.mssqlcdc.snapshot.SnapshotSpec;
import org.lakecdc.io.mssqlcdc.source.RowSink;
import org.lakecdc.io.mssqlcdc.source.SourceSpec;

/**
 * Reads SQL Server Change Data Capture change rows, and whole or chunked snapshots of the tracked
 * tables, as Beam {@link Row}s.
 *
 * <pre>{@code
 * MssqlCdcIO.SourceConfiguration orders =
 *     MssqlCdcIO.SourceConfiguration.create("dbo_orders")
 *         .withDataSourceConfiguration(
 *             SqlCdcClientFactory.dataSourceConfiguration(
 *                 "jdbc:sqlserver://db:1433;databaseName=sales",
 *                 "lakecdc_reader",
 *                 PasswordSource.environmentVariable("LAKECDC_PASSWORD"),
 *                 java.time.Duration.ofSeconds(30)));
 * PCollection<Row> changes =
 *     pipeline.apply(
 *         MssqlCdcIO.read()
 *             .withSourceConfiguration(orders)
 *             .withStartingLsn(StartingLsn.earliest())
 *             .withMaxCommitsPerBatch(1000));
 * }</pre>
 *
 * <h2>The source</h2>
 *
 * Every read mode takes one {@link SourceConfiguration}, as every JdbcIO transform takes one {@code
 * DataSourceConfiguration}: the capture instance, how to reach SQL Server (Beam's {@link
 * JdbcIO.DataSourceConfiguration}, a {@code DataSource} provider, or any {@link CdcClientFactory},
 * such as the simulator's), the columns and whether {@code _command_id} is read. Without {@link
 * SourceConfiguration#withColumns} the captured columns are inferred when the pipeline is built,
 * from {@code sys.sp_cdc_get_captured_columns} of every capture instance of the table (the union,
 * older instance first, computed columns left out). A column named like a metadata column or of a
 * type without a mapping ({@code sql_variant}, {@code geography}, ...) fails the build with an
 * error naming it and the fix.
 *
 * <h2>Output</h2>
 *
 * Each row has the metadata columns {@code _capture_instance STRING, _start_lsn STRING, _seqval
 * STRING, _operation INT32, _command_id INT32} (absent with {@code withIncludeCommandId(false)}),
 * {@code _commit_ts} (a zone-less date-time in UTC), then the captured columns, typed by the
 * mapping of docs/tables.md "Bronze". Order a table's changes by {@code (_start_lsn, _command_id,
 * _seqval, _operation)} ({@link org.lakecdc.io.mssqlcdc.source.ChangeOrdering}). Element timestamps
 * are the UTC commit times. {@link Read#withBatches()} also emits one {@link ChangeBatch} per
 * batch.
 *
 * <h2>Change reads</h2>
 *
 * The bounded form (default) of {@link #read()} reads up to {@code sys.fn_cdc_get_max_lsn()} as
 * read once at the start, in batches of at most {@code maxCommitsPerBatch} commits, and finishes;
 * it runs on every runner. The continuous form ({@link Read#withContinuous(boolean)}) follows
 * {@code max_lsn} and polls every {@link Read#withPollInterval(Duration)} when caught up, until its
 * {@link Read#withStopCondition(StopCondition)} holds; it needs a runner that runs unbounded
 * splittable DoFns (Direct, Flink). {@link #readAll()} reads many capture instances in one DoFn.
 *
 * <p>Each batch checks each capture instance's minimum LSN before and after reading: changes
 * removed by CDC cleanup (or held only by a capture instance disabled before the read reached them)
 * fail the read with {@link org.lakecdc.io.mssqlcdc.client.DataLossError}, or are skipped and
 * reported ({@link Read#withOnDataLoss}). Before any row of a batch is read, its schema is checked
 * (docs/scenarios.md "Schema change"): DDL in the batch's range by {@link
 * Read#withSchemaChangePolicy}, and a capture instance created after the pipeline was built (with
 * inferred columns, one that captures a column the schema lacks, or types a column so the schema's
 * type cannot hold it, fails with {@link org.lakecdc.io.mssqlcdc.client.SchemaChangedError} before
 * anything at or past its start LSN is read; with declared columns it is followed in place). A
 * failing batch emits nothing; the batches before it are emitted as usual.
 *
 * <h2>Snapshots</h2>
 *
 * {@link #snapshot()} reads a tracked table's current rows once (bounded), in the same schema as
 * change rows, every row stamped with one snapshot LSN S recorded before any row is read ({@link
 * SnapshotLsn}): {@code _start_lsn} = S, {@code _seqval} NULL, {@code _operation} 0, {@code
 * _command_id} NULL, {@code _commit_ts} = the UTC commit time of S. {@link #snapshotChunks()} reads
 * chunks of a chunked snapshot, each stamped with its own LSN. Their {@code writeTo(RowSink)} forms
 * write each key range's or chunk's rows through a {@link RowSink} in the stage that reads them, so
 * that a table of any size is written in bounded memory and no row crosses a shuffle.
 *
 * <pre>{@code
 * MssqlCdcIO.Snapshot snapshot = MssqlCdcIO.snapshot().withSourceConfiguration(orders);
 * Lsn s = snapshot.resolveSnapshotLsn();  // record S first
 * PCollection<Row> rows = pipeline.apply(snapshot.withSnapshotLsn(s).withNumPartitions(8));
 * // then follow the changes after S: MssqlCdcIO.read().withStartingLsn(StartingLsn.after(s))
 * }</pre>
 */
public final class MssqlCdcIO {
  /** The main output of {@link Read#withBatches()}: change rows. */
  public static final TupleTag<Row> CHANGES = ReadSpec.CHANGES;

  /** The second output of {@link Read#withBatches()}: one {@link ChangeBatch} per batch read. */
  public static final TupleTag<ChangeBatch> BATCHES = ReadSpec.BATCHES;

  /** Default wait of the continuous form when caught up: 5 seconds. */
  public static final Duration DEFAULT_POLL_INTERVAL = Duration.standardSeconds(5);

  /**
   * Default floor of change rows per part when a range is split for parallel reading: 50,000 (a
   * range under about twice this stays one part).
   */
  public static final long DEFAULT_MIN_ROWS_PER_PARTITION = 50_000;

  private MssqlCdcIO() {}

  /**
   * Throws {@link IllegalArgumentException} with {@code String.format(message, args)} unless ok.
   */
  private static void require(boolean ok, String message, Object... args) {
    if (!ok) {
      throw new IllegalArgumentException(String.format(Locale.ROOT, message, args));
    }
  }

  /**
   * A change read with defaults: bounded, {@code startingLsn=earliest}, no commit limit per batch,
   * one partition, poll interval 5 s, {@code schemaChangePolicy=classify}, {@code onDataLoss=fail}.
   * The source is required.
   */
  public static Read read() {
    return new AutoValue_MssqlCdcIO_Read.Builder()
        .setStartingLsn(StartingLsn.earliest())
        .setMaxCommitsPerBatch(0)
        .setContinuous(false)
        .setPollInterval(DEFAULT_POLL_INTERVAL)
        .setStopCondition(StopCondition.NEVER)
        .setNumPartitions(1)
        .setMinRowsPerPartition(DEFAULT_MIN_ROWS_PER_PARTITION)
        .setSchemaChangePolicy(SchemaChangePolicy.CLASSIFY)
        .setOnDataLoss(DataLossPolicy.FAIL)
        .build();
  }

  /**
   * Many change reads in one splittable DoFn: one element per capture instance, each read as its
   * own {@link Read} configures it (source, starting position, batch size, partitions, policies)
   * with its own restriction, watermark and batch sequence, each batch's rows written through that
   * table's {@link RowSink}. See {@link ReadAll}.
   */
  public static ReadAll readAll() {
    return new ReadAll(List.of());
  }

  /**
   * A whole snapshot with defaults: S resolved when the pipeline is built, one partition, {@code
   * READ COMMITTED}. The source is required. See {@link Snapshot}.
   */
  public static Snapshot snapshot() {
    return new AutoValue_MssqlCdcIO_Snapshot.Builder()
        .setNumPartitions(1)
        .setIsolationLevel(IsolationLevel.READ_COMMITTED)
        .build();
  }

  /**
   * A chunked snapshot read with defaults: {@code READ COMMITTED}, no open end to seek. The source,
   * S and the chunks are required. See {@link SnapshotChunks}.
   */
  public static SnapshotChunks snapshotChunks() {
    return new AutoValue_MssqlCdcIO_SnapshotChunks.Builder()
        .setIsolationLevel(IsolationLevel.READ_COMMITTED)
        .setChunks(List.of())
        .build();
  }

  /**
   * The source every read mode takes: the capture instance, how to reach SQL Server, the captured
   * columns to read and whether {@code _command_id} is in the schema. Serializable; each {@code
   * withX} returns a copy. Its display data names the capture instance, the columns and the
   * connection's non-secret settings ({@code jdbcUrl}, {@code username}), never a password.
   */
  @AutoValue
  public abstract static class SourceConfiguration implements Serializable, HasDisplayData {
    private static final long serialVersionUID = 1L;

    /** The capture instance read (SQL Server's default name is {@code <schema>_<table>}). */
    public abstract String getCaptureInstance();

    /** How a client reaches SQL Server, or null until one of the {@code with...} forms sets it. */
    public abstract @Nullable CdcClientFactory getClientFactory();

    /** The declared columns ({@link #withColumns}), or null when they are inferred. */
    public abstract @Nullable String getColumns();

    /** Whether the schema has {@code _command_id} (default true). */
    public abstract boolean getIncludeCommandId();

    abstract Builder toBuilder();

    @AutoValue.Builder
    abstract static class Builder {
      abstract Builder setCaptureInstance(String captureInstance);

      abstract Builder setClientFactory(CdcClientFactory clientFactory);

      abstract Builder setColumns(String columns);

      abstract Builder setIncludeCommandId(boolean includeCommandId);

      abstract SourceConfiguration build();
    }

    /**
     * The source of {@code captureInstance}, columns inferred, {@code _command_id} read; give it a
     * way to reach SQL Server next.
     *
     * @throws IllegalArgumentException for a null or blank name
     */
    public static SourceConfiguration create(String captureInstance) {
      return new AutoValue_MssqlCdcIO_SourceConfiguration.Builder()
          .setCaptureInstance(checkCaptureInstance(captureInstance))
          .setIncludeCommandId(true)
          .build();
    }

    private static String checkCaptureInstance(@Nullable String captureInstance) {
      require(
          captureInstance != null && !captureInstance.isBlank(),
          "captureInstance must name a capture instance, not '%s'",
          captureInstance);
      return captureInstance;
    }

    /**
     * Another capture instance of the same source (the same connection, columns and {@code
     * _command_id} setting).
     *
     * @throws IllegalArgumentException for a null or blank name
     */
    public SourceConfiguration withCaptureInstance(String captureInstance) {
      return toBuilder().setCaptureInstance(checkCaptureInstance(captureInstance)).build();
    }

    /**
     * Reaches SQL Server through Beam's JDBC configuration: pooled connections on each worker
     * ({@link SqlCdcClientFactory#of(JdbcIO.DataSourceConfiguration)}), the client's default
     * settings ({@code sourceTimeZone=auto}, no lock timeout). Give the password as a {@link
     * org.lakecdc.io.mssqlcdc.client.PasswordSource}, read on the worker, never as a string.
     */
    public SourceConfiguration withDataSourceConfiguration(
        JdbcIO.DataSourceConfiguration configuration) {
      checkArgumentNotNull(configuration, "withDataSourceConfiguration() needs one, not null");
      return withClientFactory(SqlCdcClientFactory.of(configuration));
    }

    /**
     * Reaches SQL Server through the {@code DataSource} {@code provider} returns on each worker (as
     * JdbcIO's {@code withDataSourceProviderFn}); it should pool, and must not hold a password.
     */
    public SourceConfiguration withDataSourceProviderFn(
        SerializableFunction<Void, DataSource> provider) {
      checkArgumentNotNull(provider, "withDataSourceProviderFn() needs a provider, not null");
      return withClientFactory(SqlCdcClientFactory.of(provider));
    }

    /**
     * Reaches SQL Server (or the simulator) through any client factory: a {@link
     * SqlCdcClientFactory} with its own settings, the file-backed simulator's, a test's.
     */
    public SourceConfiguration withClientFactory(CdcClientFactory clientFactory) {
      checkArgumentNotNull(clientFactory, "withClientFactory() needs a factory, not null");
      return toBuilder().setClientFactory(clientFactory).build();
    }

    /**
     * Declares the captured columns to read and their output types, as a Spark-style DDL list
     * ({@code "order_id INT, amount DECIMAL(18,2)"}); values are cast to these types. Without it
     * the columns are inferred from CDC metadata.
     */
    public SourceConfiguration withColumns(String columns) {
      checkArgumentNotNull(columns, "withColumns() needs a column list, not null");
      return toBuilder().setColumns(columns).build();
    }

    /**
     * Whether to read {@code __$command_id} into {@code _command_id} (default true; NULL on
     * snapshot rows); false for change tables without it (SQL Server 2016 before its cumulative
     * update). Set it alike for a table's change read and snapshots so both have one schema.
     */
    public SourceConfiguration withIncludeCommandId(boolean includeCommandId) {
      return toBuilder().setIncludeCommandId(includeCommandId).build();
    }

    @Override
    public void populateDisplayData(DisplayData.Builder builder) {
      builder
          .add(DisplayData.item("captureInstance", getCaptureInstance()))
          .add(DisplayData.item("includeCommandId", getIncludeCommandId()))
          .addIfNotNull(DisplayData.item("columns", getColumns()));
      CdcClientFactory factory = getClientFactory();
      if (factory instanceof HasDisplayData) {
        builder.include("clientFactory", (HasDisplayData) factory);
      }
    }

    /**
     * The source of {@code configuration}, checked for {@code transform}.
     *
     * @throws IllegalArgumentException naming the missing builder method
     */
    static SourceConfiguration required(
        String transform, @Nullable SourceConfiguration configuration) {
      require(
          configuration != null,
          "MssqlCdcIO.%s needs a source: withSourceConfiguration() is required",
          transform);
      require(
          configuration.getClientFactory() != null,
          "MssqlCdcIO.%s needs a way to reach SQL Server: withClientFactory() is required (or"
              + " withDataSourceConfiguration(), withDataSourceProviderFn() on its"
              + " SourceConfiguration)",
          transform);
      return configuration;
    }

    /** Resolves the columns and schema, reading CDC metadata through one client. */
    SourceSpec resolve() {
      return SourceSpec.resolve(
          getCaptureInstance(), getClientFactory(), getColumns(), getIncludeCommandId());
    }
  }

  /** The change read. See {@link MssqlCdcIO}. */
  @AutoValue
  public abstract static class Read extends PTransform<PBegin, PCollection<Row>> {
    /** The source ({@link #withSourceConfiguration}), or null. */
    public abstract @Nullable SourceConfiguration getSourceConfiguration();

    abstract StartingLsn getStartingLsn();

    abstract int getMaxCommitsPerBatch();

    abstract boolean isContinuous();

    abstract Duration getPollInterval();

    abstract StopCondition getStopCondition();

    abstract int getNumPartitions();

    abstract long getMinRowsPerPartition();

    abstract SchemaChangePolicy getSchemaChangePolicy();

    abstract DataLossPolicy getOnDataLoss();

    abstract Builder toBuilder();

    @AutoValue.Builder
    abstract static class Builder {
      abstract Builder setSourceConfiguration(SourceConfiguration sourceConfiguration);

      abstract Builder setStartingLsn(StartingLsn startingLsn);

      abstract Builder setMaxCommitsPerBatch(int maxCommitsPerBatch);

      abstract Builder setContinuous(boolean continuous);

      abstract Builder setPollInterval(Duration pollInterval);

      abstract Builder setStopCondition(StopCondition stopCondition);

      abstract Builder setNumPartitions(int numPartitions);

      abstract Builder setMinRowsPerPartition(long minRowsPerPartition);

      abstract Builder setSchemaChangePolicy(SchemaChangePolicy schemaChangePolicy);

      abstract Builder setOnDataLoss(DataLossPolicy onDataLoss);

      abstract Read build();
    }

    /** The capture instance to follow, how to reach it and its columns. Required. */
    public Read withSourceConfiguration(SourceConfiguration sourceConfiguration) {
      checkArgumentNotNull(sourceConfiguration, "withSourceConfiguration() needs one, not null");
      return toBuilder().setSourceConfiguration(sourceConfiguration).build();
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
      require(
          maxCommitsPerBatch > 0,
          "maxCommitsPerBatch must be a positive integer, not '%d'; omit it to read up to max_lsn",
          maxCommitsPerBatch);
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
      require(
          pollInterval.isLongerThan(Duration.ZERO),
          "pollInterval must be a positive duration, not %s",
          pollInterval);
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
      require(
          numPartitions > 0, "numPartitions must be a positive integer, not '%d'", numPartitions);
      return toBuilder().setNumPartitions(numPartitions).build();
    }

    /**
     * The floor of change rows per parallel part (default {@link #DEFAULT_MIN_ROWS_PER_PARTITION}).
     *
     * @throws IllegalArgumentException unless positive
     */
    public Read withMinRowsPerPartition(long minRowsPerPartition) {
      require(
          minRowsPerPartition > 0,
          "minRowsPerPartition must be a positive integer, not '%d'",
          minRowsPerPartition);
      return toBuilder().setMinRowsPerPartition(minRowsPerPartition).build();
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
     * What the read does when the changes it needs next were purged by CDC cleanup: {@link
     * DataLossPolicy#FAIL} (default) and {@link DataLossPolicy#RESNAPSHOT} fail the read with
     * {@link org.lakecdc.io.mssqlcdc.client.DataLossError} (the job that runs it re-snapshots);
     * {@link DataLossPolicy#SKIP} reads each batch from the capture instance's {@code min_lsn} on
     * and reports the gap in the batch's {@link
     * org.lakecdc.io.mssqlcdc.read.BatchSource#skipped()}, certain when found before the read,
     * possible when cleanup moved {@code min_lsn} during it. A batch's boundaries never change, so
     * split parts keep their numbering.
     */
    public Read withOnDataLoss(DataLossPolicy onDataLoss) {
      checkArgumentNotNull(onDataLoss, "withOnDataLoss() needs a policy, not null");
      return toBuilder().setOnDataLoss(onDataLoss).build();
    }

    /**
     * The Beam schema of the rows this read emits, resolved as {@code expand()} resolves it (from
     * the declared columns, or from CDC metadata through a client).
     *
     * @throws IllegalArgumentException for an invalid configuration, as {@code expand()}
     */
    public Schema outputSchema() {
      return resolve().source().schema();
    }

    /**
     * The same read with two outputs: {@link #CHANGES} (rows) and {@link #BATCHES} (one {@link
     * ChangeBatch} per batch, after its rows).
     */
    public PTransform<PBegin, PCollectionTuple> withBatches() {
      return new Expansion<>(
          "MssqlCdcIO.ReadWithBatches",
          this::populateDisplayData,
          null,
          input -> resolve().expandRowsAndBatches(input));
    }

    /**
     * The same read, writing each batch's rows through {@code sink} in the reading stage instead of
     * emitting them: the output is one {@code (batch, what the sink wrote)} per batch, in no
     * particular order (number them with {@link ChangeBatch#sequence()}), timestamped with the
     * batch's end commit time. Rows never become elements, so memory is bounded by what the sink
     * buffers, not by the size of a batch (one transaction can hold millions of rows and is never
     * split), and no row crosses a shuffle.
     *
     * @param <ResultT> what the sink returns per batch
     */
    public <ResultT> PTransform<PBegin, PCollection<KV<ChangeBatch, ResultT>>> writeTo(
        RowSink<ResultT> sink) {
      checkArgumentNotNull(sink, "writeTo() needs a sink, not null");
      return new Expansion<>(
          "MssqlCdcIO.WriteBatches",
          this::populateDisplayData,
          sink,
          input -> resolve().expandWrites(input, sink));
    }

    @Override
    public PCollection<Row> expand(PBegin input) {
      return input.apply("Read change batches", withBatches()).get(CHANGES);
    }

    @Override
    public void populateDisplayData(DisplayData.Builder builder) {
      super.populateDisplayData(builder);
      SourceConfiguration source = getSourceConfiguration();
      if (source != null) {
        source.populateDisplayData(builder);
      }
      builder
          .add(DisplayData.item("startingLsn", getStartingLsn().toString()))
          .add(DisplayData.item("maxCommitsPerBatch", getMaxCommitsPerBatch()))
          .add(DisplayData.item("continuous", isContinuous()))
          .add(DisplayData.item("numPartitions", getNumPartitions()))
          .add(DisplayData.item("schemaChangePolicy", getSchemaChangePolicy().toString()))
          .add(DisplayData.item("onDataLoss", getOnDataLoss().toString()));
    }

    /** Validates the configuration and fixes the output schema, reading CDC metadata. */
    ReadSpec resolve() {
      return new ReadSpec(
          SourceConfiguration.required("read()", getSourceConfiguration()).resolve(),
          getStartingLsn(),
          getMaxCommitsPerBatch(),
          getNumPartitions(),
          getMinRowsPerPartition(),
          isContinuous(),
          getPollInterval(),
          getStopCondition(),
          getSchemaChangePolicy(),
          getOnDataLoss());
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
   * A {@link org.lakecdc.io.mssqlcdc.read.TableFailure} (data loss, a schema change the read cannot
   * follow, a missing grant, a capture instance disabled) ends that capture instance's read only:
   * instead of failing the pipeline, its read emits one {@link ChangeBatch#failed} batch (the
   * sequence number of the batch it could not read, no row) and stops; the other capture instances
   * read on, to their end or until stopped. Any other error fails the pipeline as a single read
   * does.
   */
  public static final class ReadAll implements Serializable {
    private static final long serialVersionUID = 1L;

    private final List<Read> reads;

    ReadAll(List<Read> reads) {
      this.reads = List.copyOf(reads);
    }

    /**
     * These reads and {@code read} (a {@link Read} with its source).
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
    public List<Read> getReads() {
      return reads;
    }

    /**
     * Writes each capture instance's batches through its own sink in the reading stage; the output
     * is one {@code (batch, what the sink wrote)} per batch, {@link ChangeBatch#captureInstance()}
     * naming the table (a {@link ChangeBatch#failed} batch comes with a null result).
     *
     * @param sinks the sink of each capture instance, by the name its read was configured with
     * @param <ResultT> what the sinks return per batch
     * @throws IllegalArgumentException when a read has no source or no sink, a capture instance is
     *     read twice, the reads do not share one client factory or one form, or there is no read
     */
    public <ResultT> PTransform<PBegin, PCollection<KV<ChangeBatch, ResultT>>> writeTo(
        Map<String, ? extends RowSink<ResultT>> sinks) {
      require(!reads.isEmpty(), "readAll() needs at least one read (with())");
      Set<String> names = new HashSet<>();
      Read first = reads.get(0);
      for (Read read : reads) {
        SourceConfiguration source =
            SourceConfiguration.required("readAll()", read.getSourceConfiguration());
        String ci = source.getCaptureInstance();
        require(
            names.add(ci.toLowerCase(Locale.ROOT)),
            "readAll() reads capture instance %s twice",
            ci);
        require(sinks.containsKey(ci), "readAll().writeTo(): no sink for capture instance %s", ci);
        SourceConfiguration firstSource = first.getSourceConfiguration();
        require(
            Objects.equals(source.getClientFactory(), firstSource.getClientFactory()),
            "readAll(): the reads of %s and %s use different client factories; one readAll()"
                + " reads one source",
            firstSource.getCaptureInstance(),
            ci);
        require(
            read.isContinuous() == first.isContinuous(),
            "readAll(): the reads of %s and %s are of different forms (bounded, continuous)",
            firstSource.getCaptureInstance(),
            ci);
      }
      Map<String, ? extends RowSink<ResultT>> bySource = new LinkedHashMap<>(sinks);
      return new Expansion<>(
          "MssqlCdcIO.WriteAllBatches",
          builder ->
              builder.add(
                  DisplayData.item(
                      "captureInstances",
                      String.join(
                          ",",
                          reads.stream()
                              .map(r -> r.getSourceConfiguration().getCaptureInstance())
                              .toList()))),
          null,
          input -> {
            List<ReadSpec> specs = new ArrayList<>();
            for (Read read : reads) {
              specs.add(read.resolve());
            }
            return ReadSpec.expandAllWrites(input, specs, bySource);
          });
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
   * NULL, {@code _operation} 0, {@code _command_id} NULL (present unless the source's {@code
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
   * columns, or {@code numPartitions = 1}, is one range.
   *
   * <h2>Errors</h2>
   *
   * Building fails with {@link IllegalArgumentException} naming the option for a missing source or
   * client, a bad {@code columns} list or an unmappable type, with {@link
   * org.lakecdc.io.mssqlcdc.client.CaptureInstanceNotFoundError} for an unknown instance, and with
   * {@link IllegalStateException} when S cannot be resolved yet. Running fails with {@link
   * IllegalStateException} when {@code cdc.lsn_time_mapping} has no commit at or before S.
   */
  @AutoValue
  public abstract static class Snapshot extends PTransform<PBegin, PCollection<Row>> {
    /** The source ({@link #withSourceConfiguration}), or null. */
    public abstract @Nullable SourceConfiguration getSourceConfiguration();

    abstract @Nullable Lsn getSnapshotLsn();

    abstract int getNumPartitions();

    abstract IsolationLevel getIsolationLevel();

    abstract Builder toBuilder();

    @AutoValue.Builder
    abstract static class Builder {
      abstract Builder setSourceConfiguration(SourceConfiguration sourceConfiguration);

      abstract Builder setSnapshotLsn(Lsn snapshotLsn);

      abstract Builder setNumPartitions(int numPartitions);

      abstract Builder setIsolationLevel(IsolationLevel isolationLevel);

      abstract Snapshot build();
    }

    /** The capture instance whose table is read, how to reach it and its columns. Required. */
    public Snapshot withSourceConfiguration(SourceConfiguration sourceConfiguration) {
      checkArgumentNotNull(sourceConfiguration, "withSourceConfiguration() needs one, not null");
      return toBuilder().setSourceConfiguration(sourceConfiguration).build();
    }

    /**
     * The snapshot LSN S stamped on every row, recorded by the caller before the read (rows may be
     * newer than S, never older). Default: {@link SnapshotLsn#resolve} when the pipeline is built.
     *
     * @throws IllegalArgumentException for {@link Lsn#ZERO}, which no commit has
     */
    public Snapshot withSnapshotLsn(Lsn snapshotLsn) {
      checkArgumentNotNull(snapshotLsn, "withSnapshotLsn() needs an LSN, not null");
      require(
          !snapshotLsn.isZero(),
          "snapshotLsn must be an LSN recorded before the read (above %s), not %s",
          Lsn.ZERO,
          snapshotLsn);
      return toBuilder().setSnapshotLsn(snapshotLsn).build();
    }

    /**
     * Reads the table in at most this many key ranges in parallel (default 1): NTILE tiles of the
     * key, so ranges hold nearly equal row counts.
     *
     * @throws IllegalArgumentException unless {@code numPartitions > 0}
     */
    public Snapshot withNumPartitions(int numPartitions) {
      require(
          numPartitions > 0, "numPartitions must be a positive integer, not '%d'", numPartitions);
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
     * The snapshot LSN S this snapshot stamps: the one given with {@link #withSnapshotLsn(Lsn)},
     * else {@link SnapshotLsn#resolve} now (each call may return a newer LSN; keep the first and
     * pass it with {@link #withSnapshotLsn(Lsn)}).
     *
     * @throws IllegalArgumentException when the source or its client is missing
     * @throws IllegalStateException when CDC has no {@code max_lsn} and the instance no start LSN
     */
    public Lsn resolveSnapshotLsn() {
      SourceConfiguration source =
          SourceConfiguration.required("snapshot()", getSourceConfiguration());
      Lsn given = getSnapshotLsn();
      if (given != null) {
        return given;
      }
      try (CdcClient client = source.getClientFactory().open()) {
        return SnapshotLsn.resolve(client, source.getCaptureInstance());
      }
    }

    /**
     * The Beam schema of the rows this snapshot reads, resolved as {@code expand()} resolves it
     * (from the declared columns, or from CDC metadata through a client).
     *
     * @throws IllegalArgumentException for an invalid configuration, as {@code expand()}
     */
    public Schema outputSchema() {
      return SourceConfiguration.required("snapshot()", getSourceConfiguration())
          .resolve()
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
    public <ResultT> PTransform<PBegin, PCollection<ResultT>> writeTo(RowSink<ResultT> sink) {
      checkArgumentNotNull(sink, "writeTo() needs a sink, not null");
      return new Expansion<>(
          "MssqlCdcIO.WriteRanges",
          this::populateDisplayData,
          sink,
          input -> resolve().expandWrites(input, sink));
    }

    @Override
    public PCollection<Row> expand(PBegin input) {
      return resolve().expandRows(input);
    }

    @Override
    public void populateDisplayData(DisplayData.Builder builder) {
      super.populateDisplayData(builder);
      SourceConfiguration source = getSourceConfiguration();
      if (source != null) {
        source.populateDisplayData(builder);
      }
      Lsn snapshotLsn = getSnapshotLsn();
      builder
          .addIfNotNull(
              DisplayData.item("snapshotLsn", snapshotLsn == null ? null : snapshotLsn.toString()))
          .add(DisplayData.item("numPartitions", getNumPartitions()))
          .add(DisplayData.item("isolationLevel", getIsolationLevel().name()));
    }

    /**
     * Validates the configuration, records S (before anything is read) and fixes the output schema,
     * reading CDC metadata only.
     */
    SnapshotSpec resolve() {
      Lsn snapshotLsn = resolveSnapshotLsn();
      return new SnapshotSpec(
          getSourceConfiguration().resolve(), snapshotLsn, getNumPartitions(), getIsolationLevel());
    }
  }

  /**
   * The read of some chunks of a chunked snapshot (docs/tables.md "Chunked snapshots"), each
   * written through a {@link RowSink} in the reading stage: {@link #writeTo(RowSink)} emits one
   * {@link ChunkRead} per chunk, in no particular order.
   *
   * <pre>{@code
   * PCollection<ChunkRead<SnapshotFiles>> reads =
   *     pipeline.apply(
   *         MssqlCdcIO.snapshotChunks()
   *             .withSourceConfiguration(orders)
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
   * missing source, client or S, a bad {@code columns} list or an unmappable type; with {@link
   * org.lakecdc.io.mssqlcdc.client.CaptureInstanceNotFoundError} for an unknown instance. Running
   * fails for a stamp below S and when {@code cdc.lsn_time_mapping} has no commit at or before a
   * stamp.
   */
  @AutoValue
  public abstract static class SnapshotChunks implements Serializable {
    private static final long serialVersionUID = 1L;

    /** The source ({@link #withSourceConfiguration}), or null. */
    public abstract @Nullable SourceConfiguration getSourceConfiguration();

    /** S ({@link #withSnapshotLsn}), or null. */
    public abstract @Nullable Lsn getSnapshotLsn();

    abstract IsolationLevel getIsolationLevel();

    /** The chunks to read, in the order given. */
    public abstract List<Chunk> getChunks();

    abstract @Nullable List<Object> getOpenEndAfter();

    abstract Builder toBuilder();

    @AutoValue.Builder
    abstract static class Builder {
      abstract Builder setSourceConfiguration(SourceConfiguration sourceConfiguration);

      abstract Builder setSnapshotLsn(Lsn snapshotLsn);

      abstract Builder setIsolationLevel(IsolationLevel isolationLevel);

      abstract Builder setChunks(List<Chunk> chunks);

      abstract Builder setOpenEndAfter(@Nullable List<Object> openEndAfter);

      abstract SnapshotChunks build();
    }

    /** The capture instance whose table is read, how to reach it and its columns. Required. */
    public SnapshotChunks withSourceConfiguration(SourceConfiguration sourceConfiguration) {
      checkArgumentNotNull(sourceConfiguration, "withSourceConfiguration() needs one, not null");
      return toBuilder().setSourceConfiguration(sourceConfiguration).build();
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

    /**
     * The chunks to read (of the snapshot's plan): at least one, distinct indexes.
     *
     * @throws IllegalArgumentException when empty, null or an index repeats
     */
    public SnapshotChunks withChunks(List<Chunk> chunks) {
      checkArgumentNotNull(chunks, "withChunks() needs chunks, not null");
      require(!chunks.isEmpty(), "withChunks() needs at least one chunk");
      Set<Integer> seen = new HashSet<>();
      for (Chunk chunk : chunks) {
        require(seen.add(chunk.index()), "withChunks(): chunk %d is given twice", chunk.index());
      }
      return toBuilder().setChunks(List.copyOf(chunks)).build();
    }

    /**
     * The keyset MAX recorded at the open, after which an open last chunk's end is sought right
     * before its read (docs/tables.md "Chunked snapshots"); null (default) reads an open chunk to
     * the table's end.
     */
    public SnapshotChunks withOpenEndAfter(@Nullable List<Object> max) {
      return toBuilder()
          .setOpenEndAfter(max == null ? null : Collections.unmodifiableList(new ArrayList<>(max)))
          .build();
    }

    /**
     * The Beam schema of the rows read (the change read's), resolved as {@code expand()} does.
     *
     * @throws IllegalArgumentException for an invalid configuration
     */
    public Schema outputSchema() {
      return SourceConfiguration.required("snapshotChunks()", getSourceConfiguration())
          .resolve()
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
    public <R> PTransform<PBegin, PCollection<ChunkRead<R>>> writeTo(RowSink<R> sink) {
      checkArgumentNotNull(sink, "writeTo() needs a sink, not null");
      return new Expansion<>(
          "MssqlCdcIO.WriteChunks",
          this::populateDisplayData,
          sink,
          input -> resolve().expandWrites(input, sink));
    }

    /** Validates the configuration and fixes the source table, key and output schema. */
    ChunkSpec resolve() {
      SourceConfiguration source =
          SourceConfiguration.required("snapshotChunks()", getSourceConfiguration());
      Lsn s = getSnapshotLsn();
      require(s != null, "MssqlCdcIO.snapshotChunks() needs S: withSnapshotLsn() is required");
      require(
          !getChunks().isEmpty(),
          "MssqlCdcIO.snapshotChunks() needs chunks: withChunks() is required");
      SourceSpec resolved = source.resolve();
      CaptureInstance instance;
      try (CdcClient client = source.getClientFactory().open()) {
        instance = client.captureInstances(source.getCaptureInstance()).get(0);
      }
      return new ChunkSpec(
          resolved,
          s,
          instance.sourceSchema(),
          instance.sourceTable(),
          instance.keyColumns(),
          getIsolationLevel(),
          getChunks(),
          getOpenEndAfter());
    }

    /** Display data of the read. */
    void populateDisplayData(DisplayData.Builder builder) {
      SourceConfiguration source = getSourceConfiguration();
      if (source != null) {
        source.populateDisplayData(builder);
      }
      Lsn s = getSnapshotLsn();
      builder
          .addIfNotNull(DisplayData.item("snapshotLsn", s == null ? null : s.toString()))
          .add(DisplayData.item("chunks", getChunks().size()))
          .add(DisplayData.item("isolationLevel", getIsolationLevel().name()));
    }
  }

  /**
   * The transforms of {@code withBatches()} and the {@code writeTo} forms: each expands into its
   * read mode's steps when applied (reading CDC metadata on the launcher then), under the kind name
   * {@code MssqlCdcIO.<Form>}, with its configuration's display data and the sink's class.
   */
  private static final class Expansion<OutputT extends POutput>
      extends PTransform<PBegin, OutputT> {
    private final String kind;
    private final transient Consumer<DisplayData.Builder> display;
    private final @Nullable RowSink<?> sink;
    private final transient SerializableFunction<PBegin, OutputT> expansion;

    Expansion(
        String kind,
        Consumer<DisplayData.Builder> display,
        @Nullable RowSink<?> sink,
        SerializableFunction<PBegin, OutputT> expansion) {
      this.kind = kind;
      this.display = display;
      this.sink = sink;
      this.expansion = expansion;
    }

    @Override
    public OutputT expand(PBegin input) {
      return expansion.apply(input);
    }

    @Override
    protected String getKindString() {
      return kind;
    }

    @Override
    public void populateDisplayData(DisplayData.Builder builder) {
      super.populateDisplayData(builder);
      display.accept(builder);
      if (sink != null) {
        builder.add(DisplayData.item("sink", sink.getClass().getName()));
      }
    }
  }
}
