package org.lakecdc.pipelines.targets;

import java.io.PrintStream;
import java.time.Instant;
import java.util.Optional;
import org.apache.beam.sdk.options.PipelineOptions;
import org.apache.beam.sdk.schemas.Schema;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.io.mssqlcdc.MssqlCdcIO;
import org.lakecdc.io.mssqlcdc.client.CdcClient;
import org.lakecdc.io.mssqlcdc.read.DataLossPolicy;
import org.lakecdc.io.mssqlcdc.read.StartingLsn;
import org.lakecdc.io.mssqlcdc.schema.DeclaredColumnsException;
import org.lakecdc.pipelines.cli.OptionRefusedException;
import org.lakecdc.transforms.bronze.BronzeTable;
import org.lakecdc.transforms.delta.DeltaTables;
import org.lakecdc.transforms.delta.SchemaEvolution;
import org.lakecdc.transforms.facts.FactsTable;
import org.lakecdc.transforms.finalization.ControlTable;
import org.lakecdc.transforms.finalization.Finalization;
import org.lakecdc.transforms.position.StreamPosition;
import org.lakecdc.transforms.silver.SilverTarget;
import org.lakecdc.transforms.snapshot.ChunkedSnapshotFacts;
import org.lakecdc.transforms.write.DeltaTarget;
import org.lakecdc.transforms.write.TableWrite;

/**
 * One table's plan on the launcher, made before the change pipeline is built: the checks that
 * refuse a configuration before anything is written ({@link #check}), then ({@link #prepare}) the
 * tables created or migrated, bronze made to take the change schema, the position read and repaired
 * ({@link Recovery}), and a new target bootstrapped or seeded ({@link Bootstrap}, {@link Seeding}).
 * What it holds is what the pipeline needs to read and write the table from its position ({@link
 * #write}).
 *
 * @param config the table's configuration
 * @param tables the Delta tables (launcher side)
 * @param finalization the verdict of the shared control table
 * @param read the table's change read, not yet positioned
 * @param changeSchema the read's output schema
 * @param start the target's position: the stream reads after it
 * @param snapshotRows rows of a snapshot or seed this run took, -1 when none
 * @param snapshotSeconds wall seconds of that snapshot, 0 when none
 * @param startedAt when the table's run started (UTC)
 * @param began {@link System#nanoTime} when the table's run started
 * @param silver the silver table kept current after each bronze commit, or null for none
 * @param backfill the chunks of the target's open chunked snapshot this run reads beside the stream
 *     ({@code --snapshot=chunked --backfill=true}), or null for none
 */
public record TablePlan(
    JobConfig config,
    DeltaTables tables,
    Finalization finalization,
    MssqlCdcIO.Read read,
    Schema changeSchema,
    StreamPosition start,
    long snapshotRows,
    double snapshotSeconds,
    Instant startedAt,
    long began,
    @Nullable SilverTarget silver,
    @Nullable ChunkBackfill backfill) {

  /** The table's target for the committers: bronze, facts and control, from {@link #start}. */
  DeltaTarget target() {
    return new DeltaTarget(
        config.bronzePath(),
        config.factsPath(),
        config.controlPath(),
        start,
        config.granularity(),
        startedAt,
        config.crash(),
        config.hadoopConf(),
        config.afterCommit());
  }

  /**
   * The table's part of the change pipeline: its read positioned after {@link #start}, its target
   * and schema; {@code follow} configures the continuous form of the read (null: bounded).
   */
  public TableWrite write(MssqlCdcIO.@Nullable Read follow) {
    MssqlCdcIO.Read positioned =
        (follow == null ? read : follow).withStartingLsn(StartingLsn.after(start.endLsn()));
    return new TableWrite(positioned, target(), changeSchema);
  }

  /**
   * The checks that refuse {@code config} before anything is created or written: a seed's copy
   * (read here), an explicit starting LSN of a new target, an app id another target uses, a facts
   * table that lacks the facts of the target's earlier batches, a target whose recorded snapshot is
   * another app id's or not in the facts table.
   *
   * @return the seed's plan, or null without a seed
   * @throws IllegalArgumentException naming what is refused
   */
  public static Seeding.@Nullable Plan check(
      JobConfig config, DeltaTables tables, Schema changeSchema, PrintStream out) {
    Seeding.Plan seed = config.seed() == null ? null : Seeding.check(config, tables, changeSchema);
    if (seed == null
        && !tables.exists(config.bronzePath())
        && !config.bootstrap()
        && config.startingLsn().kind() == StartingLsn.Kind.EXPLICIT
        && config.onDataLoss() == DataLossPolicy.FAIL) {
      try (CdcClient client = config.clientFactory().open()) {
        StartingLsn.checkExplicit(
            client, config.captureInstance(), config.startingLsn().lsn().orElseThrow());
      }
    }
    TargetIdentity.check(config, tables, out);
    TargetIdentity.requireTargetsFacts(config, tables);
    TargetIdentity.requireOwnSnapshot(config, tables);
    if (config.bootstrap() && seed == null) {
      ChunkedSnapshot.checkModeLock(
          config,
          tables,
          config.snapshot().mode(),
          "running with --snapshot=" + config.snapshot().mode());
    }
    return seed;
  }

  /**
   * Plans {@code config}'s table: {@link #check}, then creates the missing tables, makes bronze
   * take the change schema, reads and repairs the target's position, and takes the bootstrap
   * snapshot (or the seed) of a new target, recording its {@code bootstrap} facts event; with
   * {@code --snapshot=chunked} a new target's snapshot is opened instead ({@link
   * ChunkedSnapshot#open}): the stream starts at its S.
   *
   * @throws IllegalArgumentException when the configuration is refused (see {@link #check})
   * @throws org.lakecdc.io.mssqlcdc.client.SchemaChangedError when bronze cannot take the change
   *     schema (nothing written)
   */
  public static TablePlan prepare(JobConfig config, PipelineOptions beamOptions, PrintStream out) {
    long began = System.nanoTime();
    Instant startedAt = Instant.now();
    DeltaTables tables = config.hadoopConf().tables();
    MssqlCdcIO.Read read = read(config);
    Schema changeSchema = outputSchema(read);
    Seeding.Plan seed = check(config, tables, changeSchema, out);
    SilverTarget silver = SilverPlan.target(config, changeSchema, startedAt);
    boolean created =
        tables.createIfAbsent(config.bronzePath(), BronzeTable.definition(changeSchema)).created();
    String bronzeId = tables.tableId(config.bronzePath());
    if (!created) {
      Recovery.takeColumnsIfEmpty(config, tables, changeSchema, out);
    }
    evolveBronze(config, tables, changeSchema, out);
    tables.createIfAbsent(config.factsPath(), FactsTable.definition());
    tables.createIfAbsent(config.controlPath(), ControlTable.definition());
    Finalization finalization =
        new Finalization(tables, config.controlPath(), java.time.Clock.systemUTC());

    Optional<StreamPosition> position = Recovery.resumePosition(config, tables, out);
    if (position.isEmpty()) {
      Recovery.forgetFormerVerdict(config, finalization, out);
    }
    long snapshotRows = -1;
    long snapshotBegan = System.nanoTime();
    if (position.isEmpty() && seed != null && !seed.alreadySeeded()) {
      snapshotRows = Seeding.write(config, tables, changeSchema, seed, beamOptions, out);
      position = Recovery.resumePosition(config, tables, out);
    } else if (seed != null) {
      out.printf(
          "Target %s holds the seed at LSN %s (committed at %s): nothing written again%n",
          config.bronzePath(), seed.lsn(), seed.commitTime());
    } else if (position.isEmpty() && config.bootstrap() && config.snapshot().chunked()) {
      position = Optional.of(ChunkedSnapshot.open(config, tables, out));
    } else if (position.isEmpty() && config.bootstrap()) {
      snapshotRows = Bootstrap.snapshot(config, tables, beamOptions, out, bronzeId);
      position = Recovery.resumePosition(config, tables, out);
    } else if (position.isEmpty()) {
      position = Optional.of(Bootstrap.startPosition(config));
      out.printf(
          "New target %s: starting after %s (startingLsn=%s)%n",
          config.bronzePath(), position.get().endLsn(), config.startingLsn());
    }
    double snapshotSeconds = snapshotRows >= 0 ? (System.nanoTime() - snapshotBegan) / 1e9 : 0;
    Optional<Resnapshot.Outcome> recovered =
        Resnapshot.preflight(config, tables, position, beamOptions, out);
    if (recovered.isPresent()) {
      config = recovered.get().config();
      position = Optional.of(recovered.get().start());
      if (recovered.get().snapshotRows() >= 0) {
        snapshotRows = recovered.get().snapshotRows();
        snapshotSeconds = recovered.get().snapshotSeconds();
      }
      silver = SilverPlan.target(config, changeSchema, startedAt);
    }
    StreamPosition start = position.get().ofTarget(config.bronzePath(), bronzeId);
    if (config.bootstrap() || seed != null) {
      Bootstrap.writeBootstrapFact(config, tables, start, snapshotRows);
    }
    ChunkBackfill backfill = backfill(config, tables, out);
    return new TablePlan(
        config,
        tables,
        finalization,
        read,
        changeSchema,
        start,
        snapshotRows,
        snapshotSeconds,
        startedAt,
        began,
        silver,
        backfill);
  }

  /**
   * The chunks of the target's open chunked snapshot the run reads beside the stream (with {@code
   * --snapshot=chunked} and {@code --backfill=true}): the snapshot planned (with {@code
   * --backfill=false} too: the plan is then made here and read by the Backfill job), repaired after
   * a crash, then the chunks after the last recorded one, of at most {@code --maxWaves} waves.
   *
   * @return null when there is none to read
   */
  private static @Nullable ChunkBackfill backfill(
      JobConfig config, DeltaTables tables, PrintStream out) {
    if (!config.snapshot().chunked()) {
      return null;
    }
    Optional<ChunkedSnapshotFacts.State> open = ChunkedSnapshot.read(config, tables).chunked();
    if (open.isEmpty() || open.get().complete()) {
      return null;
    }
    // Planned by the run that opens it, also with --backfill=false, so that the Backfill job reads
    // the chunks this run's --snapshotChunkRows and --chunksPerWave asked for.
    ChunkedSnapshotFacts.State state = ChunkedSnapshot.plan(config, tables, open.get(), out);
    if (!config.snapshot().backfill()) {
      return null;
    }
    state = ChunkBackfill.repair(config, tables, state, out);
    Optional<ChunkBackfill> next =
        ChunkBackfill.next(config, tables, state, config.snapshot().maxWaves());
    next.ifPresent(
        b ->
            out.printf(
                "Reading chunks %d..%d of %d (%s) of the chunked snapshot at S = %s of %s beside"
                    + " the stream%n",
                b.chunks().get(0).index(),
                b.chunks().get(b.chunks().size() - 1).index(),
                b.state().chunksTotal(),
                b.waves(),
                b.state().open().s(),
                config.captureInstance()));
    return next.orElse(null);
  }

  /**
   * Advances the verdict to the start position (a crash may have left it behind the data); called
   * after the demo's application has written, right before the stream.
   */
  public void advanceVerdictToStart() {
    if (start.endCommitTime() != null && start.batchId() >= 0) {
      finalization.advance(
          config.bronzePath(), start.endLsn(), start.endCommitTime(), config.granularity());
    }
  }

  /**
   * Makes bronze take the change rows of this run (C043, C054, C055): the change schema, inferred
   * as the union of the table's capture instances, may have columns bronze lacks (a newer instance
   * captures them) or a type wider than bronze's. Columns are added, and types widened when bronze
   * has type widening on, in one metadata commit before anything else is written; each change is
   * printed. Anything bronze cannot take fails the run here, before the bootstrap or the stream.
   *
   * @throws org.lakecdc.io.mssqlcdc.client.SchemaChangedError when bronze cannot take the change
   *     rows (see {@link DeltaTables#evolveSchema})
   */
  static void evolveBronze(
      JobConfig config, DeltaTables tables, Schema changeSchema, PrintStream out) {
    SchemaEvolution evolved = BronzeTable.evolve(tables, config.bronzePath(), changeSchema);
    if (!evolved.added().isEmpty()) {
      out.printf(
          "Added column(s) %s to bronze %s (version %d): the change rows have them; rows written"
              + " before read them as NULL%n",
          evolved.addedNames(), config.bronzePath(), evolved.version());
    }
    if (!evolved.widened().isEmpty()) {
      out.printf(
          "Widened column(s) %s in bronze %s (version %d, type widening is on): rows written"
              + " before read in the new type%n",
          evolved.widenedText(), config.bronzePath(), evolved.version());
    }
  }

  /**
   * The change rows' schema of {@code read}, resolved from the source's CDC metadata before
   * anything is created: declared columns ({@code --columns}) that no capture instance captures, or
   * whose types cannot hold the captured SQL Server types, are a refused option.
   *
   * @throws OptionRefusedException {@code --columns: <why>}
   */
  public static Schema outputSchema(MssqlCdcIO.Read read) {
    try {
      return read.outputSchema();
    } catch (DeclaredColumnsException e) {
      throw new OptionRefusedException("--columns: " + e.getMessage());
    }
  }

  public static MssqlCdcIO.Read read(JobConfig config) {
    MssqlCdcIO.Read read =
        MssqlCdcIO.read()
            .withSourceConfiguration(config.source())
            .withNumPartitions(config.numPartitions())
            .withSchemaChangePolicy(config.schemaChangePolicy())
            .withOnDataLoss(config.onDataLoss());
    if (config.maxCommitsPerBatch() > 0) {
      read = read.withMaxCommitsPerBatch(config.maxCommitsPerBatch());
    }
    return read;
  }
}
