package org.lakecdc.pipelines.targets;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.apache.beam.sdk.values.Row;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.transforms.delta.DeltaTables;
import org.lakecdc.transforms.facts.FactsTable;
import org.lakecdc.transforms.position.StreamPosition;

/**
 * One target on the launcher: a table's bronze table with the facts and control tables it shares
 * (and its silver table, when the run keeps one), the {@link DeltaTables} they are opened with, and
 * the identity it is written under (capture instance, app id, generation). Every class of the
 * target's lifecycle (plan, bootstrap, seeding, recovery, re-snapshot, identity, chunked snapshot,
 * backfill) takes one instead of a {@link JobConfig}, the {@link DeltaTables} and the paths it
 * would derive again from them: the paths ({@link org.lakecdc.transforms.delta.TablePaths#normalize
 * normalized} once, by {@link JobConfig}) are read here only.
 *
 * <p>The {@link #config() configuration} stays the job's settings for the table (options turned
 * into values); a target whose app id or generation the launcher resolves is a new {@code Target}
 * ({@link #with}) on the same tables. Not serializable: launcher side only (the workers get {@link
 * org.lakecdc.transforms.bronze.DeltaTarget} and {@link
 * org.lakecdc.transforms.silver.SilverTarget}).
 *
 * @param config the job's settings for the table
 * @param tables the Delta tables, launcher side (shared by the run's targets)
 * @param bronze the bronze table's path or URI, normalized: also the target's name in facts and
 *     control
 * @param facts the facts table's path or URI, normalized (may be shared by several targets)
 * @param control the control table's path or URI, normalized (may be shared)
 * @param silver the silver table kept current after each bronze commit, normalized, or null for
 *     none
 */
public record Target(
    JobConfig config,
    DeltaTables tables,
    String bronze,
    String facts,
    String control,
    @Nullable String silver) {
  /**
   * Checks the components.
   *
   * @throws NullPointerException when a component but {@code silver} is null
   * @throws IllegalArgumentException when a path is not the configuration's
   */
  public Target {
    if (!bronze.equals(config.bronzePath())
        || !facts.equals(config.factsPath())
        || !control.equals(config.controlPath())
        || !Objects.equals(silver, config.silverPath())) {
      throw new IllegalArgumentException(
          "A target's paths are its configuration's: " + bronze + " is not " + config.bronzePath());
    }
    Objects.requireNonNull(tables, "tables");
  }

  /** The target of {@code config}, its tables opened with the configuration's Hadoop settings. */
  public static Target of(JobConfig config) {
    return of(config, config.hadoopConf().tables());
  }

  /** The target of {@code config} on {@code tables} (the launcher's, shared by its targets). */
  public static Target of(JobConfig config, DeltaTables tables) {
    return new Target(
        config,
        tables,
        config.bronzePath(),
        config.factsPath(),
        config.controlPath(),
        config.silverPath());
  }

  /**
   * The same tables under another configuration of the same table (another app id or generation,
   * resolved by the launcher).
   *
   * @throws IllegalArgumentException when {@code other} names another bronze table
   */
  public Target with(JobConfig other) {
    if (!other.bronzePath().equals(bronze)) {
      throw new IllegalArgumentException(
          "A target keeps its bronze table: " + bronze + " is not " + other.bronzePath());
    }
    return of(other, tables);
  }

  /** The capture instance the target reads ({@link JobConfig#captureInstance()}). */
  public String captureInstance() {
    return config.captureInstance();
  }

  /** The app id of the target's stream family: generation 0's ({@link JobConfig#appId()}). */
  public String appId() {
    return config.appId();
  }

  /**
   * The app id this run writes under: {@link #appId()} in generation 0, {@code <appId>.g<n>} in
   * generation n ({@link JobConfig#streamAppId()}): the bronze and facts transaction ids and the
   * position key.
   */
  public String streamAppId() {
    return config.streamAppId();
  }

  /** Whether the bronze table exists. */
  public boolean exists() {
    return tables.exists(bronze);
  }

  /**
   * Bronze's Delta table id ({@code metaData.id}).
   *
   * @throws RuntimeException when bronze does not exist
   */
  public String bronzeId() {
    return tables.tableId(bronze);
  }

  /** The bronze table's domain metadata {@code domain}, when present. Bronze must exist. */
  public Optional<String> bronzeDomain(String domain) {
    return tables.domainMetadata(bronze, domain);
  }

  /** Bronze's own position, when bronze exists and records one (read now, not kept). */
  public Optional<StreamPosition> bronzePosition() {
    if (!exists()) {
      return Optional.empty();
    }
    return StreamPosition.fromJson(bronzeDomain(StreamPosition.BRONZE_DOMAIN));
  }

  /**
   * The position of this target's stream at {@code lsn} before its first batch (batch -1), under
   * {@link #streamAppId()} in the configuration's generation.
   *
   * @param commitTime {@code lsn}'s commit time (UTC), or null when unknown
   * @param captureInstance the capture instance the position names (may be empty)
   */
  public StreamPosition startAt(Lsn lsn, @Nullable Instant commitTime, String captureInstance) {
    return new StreamPosition(
        streamAppId(), config.generation(), -1, lsn, commitTime, captureInstance);
  }

  /**
   * Appends {@code rows} to the facts table in one commit ({@link DeltaTables#append}), with
   * transaction id {@code (txnAppId, txnVersion)} when {@code txnAppId} is not null (a commit that
   * is written once) and {@code domains} set in the same commit.
   */
  public void appendFacts(
      List<Row> rows, @Nullable String txnAppId, long txnVersion, Map<String, String> domains) {
    tables.append(facts, FactsTable.SCHEMA, rows, txnAppId, txnVersion, domains);
  }
}
