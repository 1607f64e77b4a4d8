package org.lakecdc.mssqlcdc.io;

import static org.apache.beam.sdk.util.Preconditions.checkArgumentNotNull;

import com.google.auto.value.AutoValue;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.apache.beam.sdk.coders.SerializableCoder;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.schemas.Schema;
import org.apache.beam.sdk.transforms.Create;
import org.apache.beam.sdk.transforms.PTransform;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.display.DisplayData;
import org.apache.beam.sdk.values.PBegin;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.PCollectionTuple;
import org.apache.beam.sdk.values.Row;
import org.apache.beam.sdk.values.TupleTag;
import org.apache.beam.sdk.values.TupleTagList;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.joda.time.Duration;
import org.lakecdc.mssqlcdc.client.CaptureInstance;
import org.lakecdc.mssqlcdc.client.CapturedColumn;
import org.lakecdc.mssqlcdc.client.CdcClient;
import org.lakecdc.mssqlcdc.client.CdcClientFactory;
import org.lakecdc.mssqlcdc.schema.CapturedSchema;
import org.lakecdc.mssqlcdc.schema.ChangeSchema;
import org.lakecdc.mssqlcdc.schema.ColumnSpec;
import org.lakecdc.mssqlcdc.schema.ColumnsDdl;
import org.lakecdc.mssqlcdc.schema.InstanceColumns;

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
 * <h3>Output</h3>
 *
 * Each row has the six metadata columns {@code _capture_instance STRING, _start_lsn STRING, _seqval
 * STRING, _operation INT32, _command_id INT32} (absent with {@code withIncludeCommandId(false)}),
 * {@code _commit_ts} (a zone-less date-time in UTC), then the captured columns, typed by the
 * mapping of BEHAVIOUR.md 5.4. Order a table's changes by {@code (_start_lsn, _command_id, _seqval,
 * _operation)}. Element timestamps are the UTC commit times. {@link ReadWithBatches} also emits one
 * {@link ChangeBatch} per batch read.
 *
 * <h3>Forms</h3>
 *
 * The bounded form (default) reads up to {@code sys.fn_cdc_get_max_lsn()} as read once at the
 * start, in batches of at most {@code maxCommitsPerBatch} commits, and finishes; it runs on every
 * runner. The continuous form ({@link Read#withContinuous(boolean)}) follows {@code max_lsn} and
 * polls every {@link Read#withPollInterval(Duration)} when caught up; it needs a runner that runs
 * unbounded splittable DoFns (Direct, Flink).
 *
 * <h3>Columns</h3>
 *
 * Without {@link Read#withColumns(String)} the captured columns are inferred when the pipeline is
 * built, from {@code sys.sp_cdc_get_captured_columns} of every capture instance of the table (the
 * union, older instance first, computed columns left out). A column named like a metadata column or
 * of a type without a mapping ({@code sql_variant}, {@code geography}, ...) fails the build with an
 * error naming it and the fix.
 *
 * <h3>Guards</h3>
 *
 * Each batch checks each capture instance's minimum LSN before and after reading: changes removed
 * by CDC cleanup fail the read with {@link org.lakecdc.mssqlcdc.client.DataLossError}.
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
   * A read with defaults: bounded, {@code startingLsn=earliest}, no commit limit per batch, one
   * partition, {@code _command_id} read, columns inferred, poll interval 5 s.
   */
  public static Read read() {
    return new AutoValue_MssqlCdcIO_Read.Builder()
        .setStartingLsn(StartingLsn.earliest())
        .setMaxCommitsPerBatch(0)
        .setContinuous(false)
        .setPollInterval(DEFAULT_POLL_INTERVAL)
        .setNumPartitions(1)
        .setMinRowsPerPartition(RangePlanner.DEFAULT_MIN_ROWS_PER_PARTITION)
        .setIncludeCommandId(true)
        .build();
  }

  /** The change read. See {@link MssqlCdcIO}. */
  @AutoValue
  public abstract static class Read extends PTransform<PBegin, PCollection<Row>> {
    abstract @Nullable String getCaptureInstance();

    abstract @Nullable CdcClientFactory getClientFactory();

    abstract StartingLsn getStartingLsn();

    abstract int getMaxCommitsPerBatch();

    abstract boolean isContinuous();

    abstract Duration getPollInterval();

    abstract int getNumPartitions();

    abstract long getMinRowsPerPartition();

    abstract boolean getIncludeCommandId();

    abstract @Nullable String getColumns();

    abstract Builder toBuilder();

    @AutoValue.Builder
    abstract static class Builder {
      abstract Builder setCaptureInstance(String captureInstance);

      abstract Builder setClientFactory(CdcClientFactory clientFactory);

      abstract Builder setStartingLsn(StartingLsn startingLsn);

      abstract Builder setMaxCommitsPerBatch(int maxCommitsPerBatch);

      abstract Builder setContinuous(boolean continuous);

      abstract Builder setPollInterval(Duration pollInterval);

      abstract Builder setNumPartitions(int numPartitions);

      abstract Builder setMinRowsPerPartition(long minRowsPerPartition);

      abstract Builder setIncludeCommandId(boolean includeCommandId);

      abstract Builder setColumns(String columns);

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
          .addIfNotNull(DisplayData.item("columns", getColumns()));
    }

    /**
     * A declared column that no capture instance of the table captures would read NULL forever:
     * fail instead (BEHAVIOUR.md 3.7, SCENARIOS.md C220).
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
        throw new IllegalArgumentException(
            "No capture instance of the table ("
                + String.join(
                    ", ", captured.stream().map(InstanceColumns::captureInstance).toList())
                + ") captures "
                + String.join(", ", missing)
                + "; fix 'columns' (withColumns) or capture the column on "
                + oldest.sourceSchema()
                + "."
                + oldest.sourceTable()
                + " with a new capture instance");
      }
    }

    /** Validates the configuration and fixes the output schema, reading CDC metadata. */
    ReadSpec resolve() {
      String captureInstance = getCaptureInstance();
      if (captureInstance == null || captureInstance.isBlank()) {
        throw new IllegalArgumentException(
            "MssqlCdcIO.read() needs a capture instance: withCaptureInstance() is required");
      }
      CdcClientFactory factory = getClientFactory();
      if (factory == null) {
        throw new IllegalArgumentException(
            "MssqlCdcIO.read() needs a way to reach SQL Server: withClientFactory() is required");
      }
      List<ColumnSpec> columns;
      try (CdcClient client = factory.open()) {
        List<CaptureInstance> instances = client.captureInstances(captureInstance);
        List<InstanceColumns> captured = new ArrayList<>();
        for (CaptureInstance instance : instances) {
          List<CapturedColumn> instanceColumns = client.capturedColumns(instance.name());
          captured.add(new InstanceColumns(instance.name(), instanceColumns));
        }
        if (getColumns() != null) {
          columns = ColumnsDdl.parse(getColumns());
          checkDeclaredColumnsCaptured(columns, captured, instances.get(0));
        } else {
          columns = CapturedSchema.infer(captured).columns();
        }
      }
      Schema schema = ChangeSchema.of(columns, getIncludeCommandId());
      return new ReadSpec(
          captureInstance,
          factory,
          getStartingLsn(),
          getMaxCommitsPerBatch(),
          getNumPartitions(),
          getMinRowsPerPartition(),
          getIncludeCommandId(),
          columns,
          schema,
          getPollInterval());
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
      ReadChangesDoFn fn =
          read.isContinuous()
              ? new ReadChangesDoFn.Unbounded(spec, CHANGES, BATCHES)
              : new ReadChangesDoFn.Bounded(spec, CHANGES, BATCHES);
      PCollectionTuple outputs =
          input
              .apply(
                  "Capture instance " + spec.captureInstance().toLowerCase(Locale.ROOT),
                  Create.of(spec.captureInstance()).withCoder(StringUtf8Coder.of()))
              .apply(
                  "Read changes by LSN range",
                  ParDo.of(fn).withOutputTags(CHANGES, TupleTagList.of(BATCHES)));
      outputs.get(CHANGES).setRowSchema(spec.schema());
      outputs.get(BATCHES).setCoder(SerializableCoder.of(ChangeBatch.class));
      return outputs;
    }

    @Override
    public void populateDisplayData(DisplayData.Builder builder) {
      read.populateDisplayData(builder);
    }
  }
}
