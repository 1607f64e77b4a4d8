package org.lakecdc.pipelines.targets;

import java.util.List;
import java.util.Objects;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.io.mssqlcdc.MssqlCdcIO;
import org.lakecdc.io.mssqlcdc.SourceConfiguration;
import org.lakecdc.io.mssqlcdc.client.CdcClientFactory;
import org.lakecdc.io.mssqlcdc.client.IsolationLevel;
import org.lakecdc.io.mssqlcdc.read.DataLossPolicy;
import org.lakecdc.io.mssqlcdc.read.SchemaChangePolicy;
import org.lakecdc.io.mssqlcdc.read.StartingLsn;
import org.lakecdc.pipelines.options.CdcToDeltaOptions;
import org.lakecdc.transforms.bronze.CommitHook;
import org.lakecdc.transforms.bronze.CrashPlan;
import org.lakecdc.transforms.bronze.CrashPoint;
import org.lakecdc.transforms.delta.HadoopConf;
import org.lakecdc.transforms.delta.TablePaths;
import org.lakecdc.transforms.finalization.Granularity;

/**
 * A validated configuration of one table of the job (a run of many tables has one per table).
 *
 * @param clientFactory opens CDC clients
 * @param captureInstance the capture instance to read
 * @param bronzePath the bronze table (the target), {@link TablePaths#normalize normalized}
 * @param factsPath the facts table, normalized
 * @param controlPath the control table, normalized
 * @param appId the job's identity in the target
 * @param bootstrap whether a new target starts with a whole snapshot
 * @param startingLsn where a new target starts without bootstrap
 * @param maxCommitsPerBatch commits per batch, 0 for no limit
 * @param numPartitions parallel parts of a read
 * @param granularity the verdict's period
 * @param includeCommandId whether {@code _command_id} is read
 * @param columns declared columns, or null to infer
 * @param isolation isolation of snapshot reads
 * @param schemaChangePolicy what DDL in a batch's range does (the read's {@link
 *     MssqlCdcIO.Read#withSchemaChangePolicy(SchemaChangePolicy)})
 * @param crash crash tests only: where the job stops and what it throws there ({@link CrashPlan}: a
 *     batch's commits, a re-snapshot's steps, a chunk's commits or a silver wave), or null
 * @param seed a new target's seed from an existing copy instead of the bootstrap snapshot
 *     (docs/options.md "Seeding from a copy"), or null
 * @param hadoopConf the Hadoop configuration every Delta table is opened with, on the launcher and
 *     on every worker
 * @param silverPath the silver table kept current after each bronze commit ({@code --silver}),
 *     normalized, or null for none
 * @param historyPath the history table kept current after each bronze commit ({@code --history}),
 *     normalized, or null for none
 * @param historyColumns the history's tracked columns ({@code --historyColumns}), or empty for all
 * @param keys silver's and the history's key columns as given ({@code --keys}), or empty for the
 *     source's key columns (the unique index the capture instance uses)
 * @param silverWaveRows at most this many bronze rows per silver wave (positive)
 * @param snapshot how the target's snapshots are taken (whole or chunked; {@link SnapshotSettings})
 * @param onDataLoss what the stream does when CDC cleanup purged changes it had not read ({@code
 *     --onDataLoss}; {@link Resnapshot})
 * @param resnapshotIntervalDays at most one automatic re-snapshot (or failed attempt) per this many
 *     days ({@code --resnapshotIntervalDays}, at least 0)
 * @param generation the target's stream generation this configuration writes: 0 until a re-snapshot
 *     starts generation 1 (resolved from bronze's position by {@link Resnapshot}); the generation's
 *     app id is {@link #streamAppId()}
 * @param silverIntervalSeconds in a continuous run, silver is applied at least every this many
 *     seconds ({@code --silverIntervalSeconds}, positive)
 * @param afterCommit tests only: run in the committer after each batch is fully committed, or null
 */
public record JobConfig(
    CdcClientFactory clientFactory,
    String captureInstance,
    String bronzePath,
    String factsPath,
    String controlPath,
    String appId,
    boolean bootstrap,
    StartingLsn startingLsn,
    int maxCommitsPerBatch,
    int numPartitions,
    Granularity granularity,
    boolean includeCommandId,
    @Nullable String columns,
    IsolationLevel isolation,
    SchemaChangePolicy schemaChangePolicy,
    @Nullable CrashPlan crash,
    @Nullable SeedCopy seed,
    HadoopConf hadoopConf,
    @Nullable String silverPath,
    @Nullable String historyPath,
    List<String> historyColumns,
    List<String> keys,
    int silverWaveRows,
    SnapshotSettings snapshot,
    DataLossPolicy onDataLoss,
    double resnapshotIntervalDays,
    int generation,
    int silverIntervalSeconds,
    @Nullable CommitHook afterCommit) {
  public JobConfig {
    Objects.requireNonNull(hadoopConf, "hadoopConf");
    Objects.requireNonNull(clientFactory, "clientFactory");
    Objects.requireNonNull(captureInstance, "captureInstance");
    Objects.requireNonNull(bronzePath, "bronzePath");
    Objects.requireNonNull(factsPath, "factsPath");
    Objects.requireNonNull(controlPath, "controlPath");
    // One spelling per table, here once: facts rows, control rows and messages name it so.
    bronzePath = TablePaths.normalize(bronzePath);
    factsPath = TablePaths.normalize(factsPath);
    controlPath = TablePaths.normalize(controlPath);
    Objects.requireNonNull(appId, "appId");
    Objects.requireNonNull(startingLsn, "startingLsn");
    Objects.requireNonNull(granularity, "granularity");
    Objects.requireNonNull(isolation, "isolation");
    Objects.requireNonNull(schemaChangePolicy, "schemaChangePolicy");
    if (silverPath != null) {
      silverPath = TablePaths.normalize(silverPath);
    }
    if (historyPath != null) {
      historyPath = TablePaths.normalize(historyPath);
    }
    historyColumns = List.copyOf(historyColumns);
    keys = List.copyOf(keys);
    Objects.requireNonNull(snapshot, "snapshot");
    Objects.requireNonNull(onDataLoss, "onDataLoss");
    if (!(resnapshotIntervalDays >= 0)) {
      throw new IllegalArgumentException(
          "resnapshotIntervalDays must be 0 or more, not " + resnapshotIntervalDays);
    }
    if (generation < 0) {
      throw new IllegalArgumentException("generation must be 0 or more, not " + generation);
    }
    if (silverIntervalSeconds < 1) {
      throw new IllegalArgumentException(
          "silverIntervalSeconds must be positive, not " + silverIntervalSeconds);
    }
  }

  /**
   * The app id of generation {@code generation} of the stream family {@code appId}: {@code appId}
   * itself for generation 0, {@code <appId>.g<n>} after the n-th re-snapshot (docs/behaviour.md
   * §9.1).
   */
  public static String streamAppId(String appId, int generation) {
    return generation == 0 ? appId : appId + ".g" + generation;
  }

  /**
   * The app id this configuration writes under: {@link #appId()} in generation 0, {@code
   * <appId>.g<n>} in generation n (bronze and facts transaction ids, positions, facts rows).
   */
  public String streamAppId() {
    return streamAppId(appId, generation);
  }

  /** The same configuration writing generation {@code n} of its stream family. */
  public JobConfig withGeneration(int n) {
    return toBuilder().generation(n).build();
  }

  /**
   * The source every read of this table takes: the capture instance, the client factory, the
   * declared columns (when given) and whether {@code _command_id} is read.
   */
  public SourceConfiguration source() {
    SourceConfiguration source =
        SourceConfiguration.create(captureInstance)
            .withClientFactory(clientFactory)
            .withIncludeCommandId(includeCommandId);
    return columns == null ? source : source.withColumns(columns);
  }

  /** {@code --silverWaveRows}'s default: bronze rows per silver wave. */
  public static final int DEFAULT_SILVER_WAVE_ROWS = 100_000;

  /** {@code --silverIntervalSeconds}'s default. */
  public static final int DEFAULT_SILVER_INTERVAL_SECONDS =
      CdcToDeltaOptions.DEFAULT_SILVER_INTERVAL_SECONDS;

  /** The same configuration with another app id. */
  public JobConfig withAppId(String otherAppId) {
    return toBuilder().appId(otherAppId).build();
  }

  /** The same configuration with a seed from an existing copy (or none for null). */
  public JobConfig withSeed(@Nullable SeedCopy otherSeed) {
    return toBuilder().seed(otherSeed).build();
  }

  /** The same configuration, stopping at {@code point} of batch {@code batch} (crash tests). */
  public JobConfig withCrash(CrashPoint point, long batch) {
    return withCrash(CrashPlan.batch(point, batch));
  }

  /**
   * The same configuration, throwing {@code failure} at {@code point} of batch {@code batch} (crash
   * and fatal-error tests).
   */
  public JobConfig withCrash(CrashPoint point, long batch, CrashPoint.Failure failure) {
    return withCrash(CrashPlan.batch(point, batch, failure));
  }

  /** The same configuration, stopping where {@code plan} says (crash tests; null: never). */
  public JobConfig withCrash(@Nullable CrashPlan plan) {
    return toBuilder().crash(plan).build();
  }

  /**
   * A builder with the command line's defaults for everything but the tables and the source: app id
   * the capture instance, bootstrap on, starting LSN earliest, 100 commits per batch, one
   * partition, hourly verdict, {@code _command_id} read, inferred columns, read-committed snapshot
   * reads, schema changes classified, no crash point, no seed and no silver (the source's keys,
   * {@value #DEFAULT_SILVER_WAVE_ROWS} bronze rows per wave), whole snapshots.
   *
   * @param clientFactory opens CDC clients
   * @param captureInstance the capture instance to read
   * @param bronzePath the bronze table (the target)
   * @param factsPath the facts table
   * @param controlPath the control table
   */
  public static Builder builder(
      CdcClientFactory clientFactory,
      String captureInstance,
      String bronzePath,
      String factsPath,
      String controlPath) {
    return new Builder(clientFactory, captureInstance, bronzePath, factsPath, controlPath);
  }

  /** A builder holding this configuration's values. */
  public Builder toBuilder() {
    return new Builder(clientFactory, captureInstance, bronzePath, factsPath, controlPath)
        .appId(appId)
        .bootstrap(bootstrap)
        .startingLsn(startingLsn)
        .maxCommitsPerBatch(maxCommitsPerBatch)
        .numPartitions(numPartitions)
        .granularity(granularity)
        .includeCommandId(includeCommandId)
        .columns(columns)
        .isolation(isolation)
        .schemaChangePolicy(schemaChangePolicy)
        .crash(crash)
        .seed(seed)
        .hadoopConf(hadoopConf)
        .silverPath(silverPath)
        .history(historyPath, historyColumns)
        .keys(keys)
        .silverWaveRows(silverWaveRows)
        .snapshot(snapshot)
        .onDataLoss(onDataLoss)
        .resnapshotIntervalDays(resnapshotIntervalDays)
        .generation(generation)
        .silverIntervalSeconds(silverIntervalSeconds)
        .afterCommit(afterCommit);
  }

  /**
   * Builds a {@link JobConfig}: the source and the tables are fixed, every other component has a
   * setter and starts at the command line's default (see {@link JobConfig#builder}). {@link #build}
   * validates.
   */
  public static final class Builder {
    private final CdcClientFactory clientFactory;
    private final String captureInstance;
    private final String bronzePath;
    private final String factsPath;
    private final String controlPath;
    private String appId;
    private boolean bootstrap = true;
    private StartingLsn startingLsn = StartingLsn.earliest();
    private int maxCommitsPerBatch = 100;
    private int numPartitions = 1;
    private Granularity granularity = Granularity.HOUR;
    private boolean includeCommandId = true;
    private @Nullable String columns;
    private IsolationLevel isolation = IsolationLevel.READ_COMMITTED;
    private SchemaChangePolicy schemaChangePolicy = SchemaChangePolicy.CLASSIFY;
    private @Nullable CrashPlan crash;
    private @Nullable SeedCopy seed;
    private HadoopConf hadoopConf = HadoopConf.empty();
    private @Nullable String silverPath;
    private @Nullable String historyPath;
    private List<String> historyColumns = List.of();
    private List<String> keys = List.of();
    private int silverWaveRows = DEFAULT_SILVER_WAVE_ROWS;
    private SnapshotSettings snapshot = SnapshotSettings.DEFAULTS;
    private DataLossPolicy onDataLoss = DataLossPolicy.FAIL;
    private double resnapshotIntervalDays = Resnapshot.DEFAULT_INTERVAL_DAYS;
    private int generation;
    private int silverIntervalSeconds = DEFAULT_SILVER_INTERVAL_SECONDS;
    private @Nullable CommitHook afterCommit;

    private Builder(
        CdcClientFactory clientFactory,
        String captureInstance,
        String bronzePath,
        String factsPath,
        String controlPath) {
      this.clientFactory = clientFactory;
      this.captureInstance = captureInstance;
      this.bronzePath = bronzePath;
      this.factsPath = factsPath;
      this.controlPath = controlPath;
      this.appId = captureInstance;
    }

    /** The job's identity in the target (default: the capture instance). */
    public Builder appId(String appId) {
      this.appId = appId;
      return this;
    }

    /** Whether a new target starts with a whole snapshot (default true). */
    public Builder bootstrap(boolean bootstrap) {
      this.bootstrap = bootstrap;
      return this;
    }

    /** Where a new target starts without bootstrap (default earliest). */
    public Builder startingLsn(StartingLsn startingLsn) {
      this.startingLsn = startingLsn;
      return this;
    }

    /** Commits per batch, 0 for no limit (default 100). */
    public Builder maxCommitsPerBatch(int maxCommitsPerBatch) {
      this.maxCommitsPerBatch = maxCommitsPerBatch;
      return this;
    }

    /** Parallel parts of a read (default 1). */
    public Builder numPartitions(int numPartitions) {
      this.numPartitions = numPartitions;
      return this;
    }

    /** The verdict's period (default hour). */
    public Builder granularity(Granularity granularity) {
      this.granularity = granularity;
      return this;
    }

    /** Whether {@code _command_id} is read (default true). */
    public Builder includeCommandId(boolean includeCommandId) {
      this.includeCommandId = includeCommandId;
      return this;
    }

    /** Declared columns, or null to infer (default null). */
    public Builder columns(@Nullable String columns) {
      this.columns = columns;
      return this;
    }

    /** Isolation of snapshot reads (default read committed). */
    public Builder isolation(IsolationLevel isolation) {
      this.isolation = isolation;
      return this;
    }

    /** What DDL in a batch's range does (default {@link SchemaChangePolicy#CLASSIFY}). */
    public Builder schemaChangePolicy(SchemaChangePolicy schemaChangePolicy) {
      this.schemaChangePolicy = schemaChangePolicy;
      return this;
    }

    /** Crash tests only: where the job stops and what it throws, or null (default null). */
    public Builder crash(@Nullable CrashPlan crash) {
      this.crash = crash;
      return this;
    }

    /** A new target's seed from an existing copy, or null for none (default null). */
    public Builder seed(@Nullable SeedCopy seed) {
      this.seed = seed;
      return this;
    }

    /** The Hadoop configuration of every Delta table (default: none). */
    public Builder hadoopConf(HadoopConf hadoopConf) {
      this.hadoopConf = hadoopConf;
      return this;
    }

    /** The silver table to keep current, or null for none (default null). */
    public Builder silverPath(@Nullable String silverPath) {
      this.silverPath = silverPath;
      return this;
    }

    /**
     * The history table to keep current and its tracked columns (empty: all), or null and empty for
     * none (the default).
     */
    public Builder history(@Nullable String historyPath, List<String> historyColumns) {
      this.historyPath = historyPath;
      this.historyColumns = historyColumns;
      return this;
    }

    /** Silver's key columns, or empty for the source's (default empty). */
    public Builder keys(List<String> keys) {
      this.keys = keys;
      return this;
    }

    /**
     * At most this many bronze rows per silver wave (default {@value #DEFAULT_SILVER_WAVE_ROWS}).
     */
    public Builder silverWaveRows(int silverWaveRows) {
      this.silverWaveRows = silverWaveRows;
      return this;
    }

    /** How snapshots are taken (default {@link SnapshotSettings#DEFAULTS}: whole). */
    public Builder snapshot(SnapshotSettings snapshot) {
      this.snapshot = snapshot;
      return this;
    }

    /** What the stream does when CDC cleanup purged unread changes (default fail). */
    public Builder onDataLoss(DataLossPolicy onDataLoss) {
      this.onDataLoss = onDataLoss;
      return this;
    }

    /**
     * At most one automatic re-snapshot per this many days (default {@value
     * Resnapshot#DEFAULT_INTERVAL_DAYS}).
     */
    public Builder resnapshotIntervalDays(double days) {
      this.resnapshotIntervalDays = days;
      return this;
    }

    /** The stream generation written (default 0; resolved from bronze by {@link Resnapshot}). */
    public Builder generation(int generation) {
      this.generation = generation;
      return this;
    }

    /**
     * In a continuous run, apply silver at least every this many seconds (default {@value
     * #DEFAULT_SILVER_INTERVAL_SECONDS}).
     */
    public Builder silverIntervalSeconds(int seconds) {
      this.silverIntervalSeconds = seconds;
      return this;
    }

    /** Tests only: run after each batch is fully committed, or null for nothing (default). */
    public Builder afterCommit(@Nullable CommitHook hook) {
      this.afterCommit = hook;
      return this;
    }

    /** The configuration; throws when a required value is null. */
    public JobConfig build() {
      return new JobConfig(
          clientFactory,
          captureInstance,
          bronzePath,
          factsPath,
          controlPath,
          appId,
          bootstrap,
          startingLsn,
          maxCommitsPerBatch,
          numPartitions,
          granularity,
          includeCommandId,
          columns,
          isolation,
          schemaChangePolicy,
          crash,
          seed,
          hadoopConf,
          silverPath,
          historyPath,
          historyColumns,
          keys,
          silverWaveRows,
          snapshot,
          onDataLoss,
          resnapshotIntervalDays,
          generation,
          silverIntervalSeconds,
          afterCommit);
    }
  }
}
