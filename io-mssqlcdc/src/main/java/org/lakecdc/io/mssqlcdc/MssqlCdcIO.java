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
import org.apache.beam.sdk.schemas.Schema;
import org.apache.beam.sdk.transforms.PTransform;
import org.apache.beam.sdk.transforms.SerializableFunction;
import org.apache.beam.sdk.transforms.display.DisplayData;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PBegin;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.PCollectionTuple;
import org.apache.beam.sdk.values.POutput;
import org.apache.beam.sdk.values.Row;
import org.apache.beam.sdk.values.TupleTag;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.joda.time.Duration;
import org.lakecdc.io.mssqlcdc.chunk.AfterChunkRead;
import org.lakecdc.io.mssqlcdc.chunk.Chunk;
import org.lakecdc.io.mssqlcdc.chunk.ChunkRead;
import org.lakecdc.io.mssqlcdc.chunk.ChunkSpec;
import org.lakecdc.io.mssqlcdc.client.CdcClient;
import org.lakecdc.io.mssqlcdc.client.IsolationLevel;
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

/**
 * Reads SQL Server Change Data Capture change rows, and whole or chunked snapshots of the tracked
 * tables, as Beam {@link Row}s: the factories and the AutoValue configurations of the read modes,
 * each of which takes one {@link SourceConfiguration} (as every JdbcIO transform takes one {@code
 * DataSourceConfiguration}). The package documentation has an example; the read modes' packages
 * ({@link org.lakecdc.io.mssqlcdc.read}, {@link org.lakecdc.io.mssqlcdc.snapshot}, {@link
 * org.lakecdc.io.mssqlcdc.chunk}) say what each reads, checks and emits.
 *
 * <p>Each row has the metadata columns {@code _capture_instance STRING, _start_lsn STRING, _seqval
 * STRING, _operation INT32, _command_id INT32} (absent with {@code withIncludeCommandId(false)}),
 * {@code _commit_ts} (a zone-less date-time in UTC), then the captured columns, typed by the
 * mapping of docs/tables.md "Bronze"; element timestamps are the UTC commit times. The {@code
 * writeTo(RowSink)} forms write the rows through a {@link RowSink} in the stage that reads them, so
 * that a table of any size is written in bounded memory and no row crosses a shuffle.
 */
public final class MssqlCdcIO {
  /** The main output of {@link Read#withBatches()}: change rows. */
  public static final TupleTag<Row> CHANGES = ReadSpec.CHANGES;

  /** The second output of {@link Read#withBatches()}: one {@link ChangeBatch} per batch read. */
  public static final TupleTag<ChangeBatch> BATCHES = ReadSpec.BATCHES;

  /** Default wait of the continuous form when caught up: 5 seconds. */
  public static final Duration DEFAULT_POLL_INTERVAL = Duration.standardSeconds(5);

  /** Default floor of change rows per part of a split range: 50,000. */
  public static final long DEFAULT_MIN_ROWS_PER_PARTITION = 50_000;

  private MssqlCdcIO() {}

  private static void require(boolean ok, String message, Object... args) {
    if (!ok) {
      throw new IllegalArgumentException(String.format(Locale.ROOT, message, args));
    }
  }

  /**
   * A change read with defaults: bounded, {@code startingLsn=earliest}, no commit limit per batch,
   * one partition, poll interval 5 s, {@code schemaChangePolicy=classify}, {@code onDataLoss=fail}.
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

  /** Many change reads in one splittable DoFn, each as its {@link Read} configures it. */
  public static ReadAll readAll() {
    return new ReadAll(List.of());
  }

  /** A whole snapshot with defaults: S resolved when built, one partition, READ COMMITTED. */
  public static Snapshot snapshot() {
    return new AutoValue_MssqlCdcIO_Snapshot.Builder()
        .setNumPartitions(1)
        .setIsolationLevel(IsolationLevel.READ_COMMITTED)
        .build();
  }

  /** A chunked snapshot read with defaults: READ COMMITTED, no open end to seek. */
  public static SnapshotChunks snapshotChunks() {
    return new AutoValue_MssqlCdcIO_SnapshotChunks.Builder()
        .setIsolationLevel(IsolationLevel.READ_COMMITTED)
        .setChunks(List.of())
        .build();
  }

  /** The change read. See {@link MssqlCdcIO} and {@link org.lakecdc.io.mssqlcdc.read}. */
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

    /** Where a new read starts: earliest (default), latest, or after a given LSN. */
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
     * When the continuous form stops (default: never), asked after each batch and at each poll; the
     * read then ends with every batch it read emitted.
     */
    public Read withStopCondition(StopCondition stopCondition) {
      checkArgumentNotNull(stopCondition, "withStopCondition() needs a condition, not null");
      return toBuilder().setStopCondition(stopCondition).build();
    }

    /**
     * Splits the range into at most this many parts read in parallel, at commit LSNs that balance
     * change rows, each of at least {@link #withMinRowsPerPartition(long)} rows.
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
     * What a batch whose range holds DDL on the table does, checked before any of its rows is read
     * (default {@link SchemaChangePolicy#CLASSIFY}).
     */
    public Read withSchemaChangePolicy(SchemaChangePolicy schemaChangePolicy) {
      checkArgumentNotNull(schemaChangePolicy, "withSchemaChangePolicy() needs a policy, not null");
      return toBuilder().setSchemaChangePolicy(schemaChangePolicy).build();
    }

    /**
     * What the read does when the changes it needs next were purged by CDC cleanup (default {@link
     * DataLossPolicy#FAIL}); with {@link DataLossPolicy#SKIP} the gap is reported in the batch's
     * {@link org.lakecdc.io.mssqlcdc.read.BatchSource#skipped()}.
     */
    public Read withOnDataLoss(DataLossPolicy onDataLoss) {
      checkArgumentNotNull(onDataLoss, "withOnDataLoss() needs a policy, not null");
      return toBuilder().setOnDataLoss(onDataLoss).build();
    }

    /**
     * The Beam schema of the rows this read emits, resolved as {@code expand()} resolves it. Throws
     * {@link IllegalArgumentException} for an invalid configuration, as {@code expand()}.
     */
    public Schema outputSchema() {
      return resolve().source().schema();
    }

    /** The same read with two outputs: {@link #CHANGES} and {@link #BATCHES} (after its rows). */
    public PTransform<PBegin, PCollectionTuple> withBatches() {
      return new Expansion<>(
          "MssqlCdcIO.ReadWithBatches",
          this::populateDisplayData,
          null,
          input -> resolve().expandRowsAndBatches(input));
    }

    /**
     * The same read, writing each batch's rows through {@code sink} in the reading stage instead of
     * emitting them: one {@code (batch, what the sink wrote)} per batch, in no particular order
     * (number them by {@link ChangeBatch#sequence()}), timestamped with the batch's end commit
     * time. Memory is bounded by what the sink buffers, not by the size of a batch.
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

    /**
     * {@link #writeTo}, the read started by an element of the input naming its capture instance
     * (the name it was configured with), e.g. after something upstream (a snapshot) is done; no
     * element, no read. As in {@link #writeTo}, any failure fails the pipeline ({@link ReadAll}
     * isolates a table's failures instead); an element naming another capture instance fails it
     * too.
     *
     * @param <ResultT> what the sink returns per batch
     * @throws IllegalArgumentException when {@code sink} is null or the read's configuration is
     *     invalid (as {@code expand()})
     */
    public <ResultT>
        PTransform<PCollection<String>, PCollection<KV<ChangeBatch, ResultT>>> writeFrom(
            RowSink<ResultT> sink) {
      checkArgumentNotNull(sink, "writeFrom() needs a sink, not null");
      ReadSpec spec = resolve();
      return new PTransform<>("MssqlCdcIO.WriteStartedBatches") {
        @Override
        public PCollection<KV<ChangeBatch, ResultT>> expand(PCollection<String> started) {
          return spec.expandWritesFrom(started, sink);
        }
      };
    }

    @Override
    public PCollection<Row> expand(PBegin input) {
      return input.apply("Read change batches", withBatches()).get(CHANGES);
    }

    @Override
    public void populateDisplayData(DisplayData.Builder builder) {
      super.populateDisplayData(builder);
      SourceConfiguration.display(getSourceConfiguration(), builder);
      builder
          .add(DisplayData.item("startingLsn", getStartingLsn().toString()))
          .add(DisplayData.item("maxCommitsPerBatch", getMaxCommitsPerBatch()))
          .add(DisplayData.item("continuous", isContinuous()))
          .add(DisplayData.item("numPartitions", getNumPartitions()))
          .add(DisplayData.item("schemaChangePolicy", getSchemaChangePolicy().toString()))
          .add(DisplayData.item("onDataLoss", getOnDataLoss().toString()));
    }

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
   * Read} configuration, restriction, watermark and batch sequence, so tables advance
   * independently. All reads share one client factory and one form (bounded, or continuous). A
   * table's own failure ({@link org.lakecdc.io.mssqlcdc.read.TableFailure}: data loss, a schema
   * change the read cannot follow, a missing grant, a capture instance disabled) ends that table's
   * read with one {@link ChangeBatch#failed} batch; the others read on. Any other error fails the
   * pipeline.
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
     * Writes each capture instance's batches through its own sink in the reading stage: one {@code
     * (batch, what the sink wrote)} per batch, {@link ChangeBatch#captureInstance()} naming the
     * table (a {@link ChangeBatch#failed} batch comes with a null result).
     *
     * @param sinks the sink of each capture instance, by the name its read was configured with
     * @param <ResultT> what the sinks return per batch
     * @throws IllegalArgumentException when a read has no source or no sink, a capture instance is
     *     read twice, the reads do not share one client factory or one form, or there is no read
     */
    public <ResultT> PTransform<PBegin, PCollection<KV<ChangeBatch, ResultT>>> writeTo(
        Map<String, ? extends RowSink<ResultT>> sinks) {
      List<String> captureInstances = checked(sinks);
      Map<String, ? extends RowSink<ResultT>> bySource = new LinkedHashMap<>(sinks);
      return new Expansion<>(
          "MssqlCdcIO.WriteAllBatches",
          builder ->
              builder.add(DisplayData.item("captureInstances", String.join(",", captureInstances))),
          null,
          input ->
              ReadSpec.expandAllWrites(
                  input, reads.stream().map(Read::resolve).toList(), bySource));
    }

    /**
     * {@link #writeTo}, each table's read started by an element of the input: the descriptor of a
     * read is the capture instance its {@link Read} was configured with (that read's start LSN and
     * configuration), and the read starts when the element arrives, e.g. after something upstream
     * (a snapshot) is done. A read whose element never arrives reads nothing; an element naming no
     * read fails the pipeline.
     *
     * @param sinks the sink of each capture instance, by the name its read was configured with
     * @param <ResultT> what the sinks return per batch
     * @throws IllegalArgumentException as {@link #writeTo}
     */
    public <ResultT>
        PTransform<PCollection<String>, PCollection<KV<ChangeBatch, ResultT>>> writeFrom(
            Map<String, ? extends RowSink<ResultT>> sinks) {
      List<String> captureInstances = checked(sinks);
      Map<String, ? extends RowSink<ResultT>> bySource = new LinkedHashMap<>(sinks);
      List<ReadSpec> specs = reads.stream().map(Read::resolve).toList();
      String name = "MssqlCdcIO.WriteStartedBatches(" + String.join(",", captureInstances) + ")";
      return new PTransform<>(name) {
        @Override
        public PCollection<KV<ChangeBatch, ResultT>> expand(PCollection<String> started) {
          return ReadSpec.expandAllWritesFrom(started, specs, bySource);
        }
      };
    }

    /** Checks the reads and their sinks: the capture instances read, in order. */
    private List<String> checked(Map<String, ?> sinks) {
      require(!reads.isEmpty(), "readAll() needs at least one read (with())");
      Set<String> names = new HashSet<>();
      List<String> captureInstances = new ArrayList<>();
      Read first = reads.get(0);
      for (Read read : reads) {
        SourceConfiguration source =
            SourceConfiguration.required("readAll()", read.getSourceConfiguration());
        String ci = source.getCaptureInstance();
        String firstCi = first.getSourceConfiguration().getCaptureInstance();
        require(
            names.add(ci.toLowerCase(Locale.ROOT)),
            "readAll() reads capture instance %s twice",
            ci);
        require(sinks.containsKey(ci), "readAll().writeTo(): no sink for capture instance %s", ci);
        require(
            Objects.equals(
                source.getClientFactory(), first.getSourceConfiguration().getClientFactory()),
            "readAll(): the reads of %s and %s use different client factories; one readAll()"
                + " reads one source",
            firstCi,
            ci);
        require(
            read.isContinuous() == first.isContinuous(),
            "readAll(): the reads of %s and %s are of different forms (bounded, continuous)",
            firstCi,
            ci);
        captureInstances.add(ci);
      }
      return captureInstances;
    }
  }

  /**
   * A bounded read of the current rows of the table a capture instance tracks, stamped with one
   * snapshot LSN S, in the schema of {@link Read}: S is {@link #withSnapshotLsn(Lsn)} when given,
   * else {@link SnapshotLsn#resolve} when the pipeline is built, before any row is read. The rows,
   * the key ranges read in parallel and the errors: {@link org.lakecdc.io.mssqlcdc.snapshot}.
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
     * The snapshot LSN S stamped on every row, recorded by the caller before the read. Throws
     * {@link IllegalArgumentException} for {@link Lsn#ZERO}, which no commit has.
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
     * Reads the table in at most this many key ranges in parallel (default 1), NTILE tiles of the
     * key.
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
     * {@link IsolationLevel#SNAPSHOT} needs {@code ALLOW_SNAPSHOT_ISOLATION}); never {@code
     * NOLOCK}.
     */
    public Snapshot withIsolationLevel(IsolationLevel isolationLevel) {
      checkArgumentNotNull(isolationLevel, "withIsolationLevel() needs a level, not null");
      return toBuilder().setIsolationLevel(isolationLevel).build();
    }

    /**
     * The snapshot LSN S this snapshot stamps: the one given, else {@link SnapshotLsn#resolve} now
     * (a later call may return a newer LSN: keep the first and pass it with {@link
     * #withSnapshotLsn}).
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
     * The Beam schema of the rows this snapshot reads, resolved as {@code expand()} resolves it.
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
     * them: one result per range (its sequence is the range's number, 0 to the number of ranges - 1
     * in key order), timestamped with the commit time of S; only range descriptions are reshuffled.
     *
     * @param <ResultT> what the sink returns per range, coded with its {@link
     *     RowSink#resultCoder()}
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
      SourceConfiguration.display(getSourceConfiguration(), builder);
      Lsn snapshotLsn = getSnapshotLsn();
      builder
          .addIfNotNull(
              DisplayData.item("snapshotLsn", snapshotLsn == null ? null : snapshotLsn.toString()))
          .add(DisplayData.item("numPartitions", getNumPartitions()))
          .add(DisplayData.item("isolationLevel", getIsolationLevel().name()));
    }

    SnapshotSpec resolve() {
      Lsn snapshotLsn = resolveSnapshotLsn();
      return new SnapshotSpec(
          getSourceConfiguration().resolve(), snapshotLsn, getNumPartitions(), getIsolationLevel());
    }
  }

  /**
   * The read of some chunks of a chunked snapshot (docs/tables.md "Chunked snapshots"), each
   * written through a {@link RowSink} in the reading stage: {@link #writeTo(RowSink)} emits one
   * {@link ChunkRead} per chunk, in no particular order. Per chunk on the worker, its counters and
   * errors: {@link org.lakecdc.io.mssqlcdc.chunk}.
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
   */
  @AutoValue
  public abstract static class SnapshotChunks implements Serializable {
    private static final long serialVersionUID = 1L;

    /** The source ({@link #withSourceConfiguration}), or null. */
    public abstract @Nullable SourceConfiguration getSourceConfiguration();

    /** S ({@link #withSnapshotLsn}), or null. */
    public abstract @Nullable Lsn getSnapshotLsn();

    /** The chunks to read, in the order given. */
    public abstract List<Chunk> getChunks();

    abstract IsolationLevel getIsolationLevel();

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
     * The chunks to read (of the snapshot's plan): at least one, distinct indexes. Required. Throws
     * {@link IllegalArgumentException} when empty, null or an index repeats.
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
     * before its read; null (default) reads an open chunk to the table's end.
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
     * Reads each chunk and writes its rows through {@code sink} in the reading stage: one {@link
     * ChunkRead} per chunk (the sink's result inside), timestamped with the commit time of its
     * stamp, coded with {@link ChunkRead#coder} over the sink's {@link RowSink#resultCoder()}.
     *
     * @param <R> what the sink returns per chunk
     * @throws IllegalArgumentException when {@code sink} is null
     */
    public <R> PTransform<PBegin, PCollection<ChunkRead<R>>> writeTo(RowSink<R> sink) {
      checkArgumentNotNull(sink, "writeTo() needs a sink, not null");
      return writeTo(sink, AfterChunkRead.none(sink.resultCoder()));
    }

    /**
     * As {@link #writeTo(RowSink)}, and {@code after} runs on each chunk in the reading stage right
     * after its rows are written (on the thread that read it, before the chunk leaves the stage):
     * one {@link ChunkRead} per chunk carrying {@code after}'s result, coded with {@link
     * ChunkRead#coder} over {@link AfterChunkRead#resultCoder()}. For a step that must happen per
     * chunk as soon as it is read (a chunk's commit), whatever the runner makes of the steps after
     * the read.
     *
     * @param <R> what the sink returns per chunk
     * @param <O> what {@code after} returns per chunk
     * @throws IllegalArgumentException when {@code sink} or {@code after} is null
     */
    public <R, O> PTransform<PBegin, PCollection<ChunkRead<O>>> writeTo(
        RowSink<R> sink, AfterChunkRead<R, O> after) {
      checkArgumentNotNull(sink, "writeTo() needs a sink, not null");
      checkArgumentNotNull(after, "writeTo() needs what to do after each read, not null");
      return new Expansion<>(
          "MssqlCdcIO.WriteChunks",
          this::populateDisplayData,
          sink,
          input -> resolve().expandWrites(input, sink, after));
    }

    ChunkSpec resolve() {
      SourceConfiguration source =
          SourceConfiguration.required("snapshotChunks()", getSourceConfiguration());
      Lsn s = getSnapshotLsn();
      require(s != null, "MssqlCdcIO.snapshotChunks() needs S: withSnapshotLsn() is required");
      require(
          !getChunks().isEmpty(),
          "MssqlCdcIO.snapshotChunks() needs chunks: withChunks() is required");
      return ChunkSpec.of(source.resolve(), s, getIsolationLevel(), getChunks(), getOpenEndAfter());
    }

    void populateDisplayData(DisplayData.Builder builder) {
      SourceConfiguration.display(getSourceConfiguration(), builder);
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
