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
import org.lakecdc.transforms.bronze.DeltaTarget;
import org.lakecdc.transforms.bronze.TableWrite;
import org.lakecdc.transforms.delta.DeltaTables;
import org.lakecdc.transforms.delta.SchemaEvolution;
import org.lakecdc.transforms.facts.FactsTable;
import org.lakecdc.transforms.finalization.ControlTable;
import org.lakecdc.transforms.finalization.Finalization;
import org.lakecdc.transforms.position.StreamPosition;
import org.lakecdc.transforms.silver.SilverTarget;
import org.lakecdc.transforms.snapshot.ChunkedSnapshotFacts;

/**
 * One table's plan on the launcher, made before the change pipeline is built: the checks that
 * refuse a configuration before anything is written ({@link #check}), then ({@link #prepare}) the
 * tables created or migrated, bronze made to take the change schema, the position read and repaired
 * ({@link Recovery}), and a new target bootstrapped or seeded ({@link Bootstrap}, {@link Seeding}).
 * What it holds is what the pipeline needs to read and write the table from its position ({@link
 * #write}).
 *
 * @param target the table's target: its configuration, paths and Delta tables (launcher side)
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
 * @param snapshot the whole snapshot the pipeline reads before the table's stream (a new target's
 *     bootstrap, or a re-snapshot into a new generation), or null for none: {@link #start} is then
 *     its position at S
 */
public record TablePlan(
    Target target,
    Finalization finalization,
    MssqlCdcIO.Read read,
    Schema changeSchema,
    StreamPosition start,
    long snapshotRows,
    double snapshotSeconds,
    Instant startedAt,
    long began,
    @Nullable SilverTarget silver,
    @Nullable ChunkBackfill backfill,
    @Nullable SnapshotTask snapshot) {

  /**
   * This plan with the rows and wall seconds of the snapshot the pipeline read and committed
   * ({@link #snapshot}), for the run's summary.
   */
  public TablePlan withSnapshot(long rows, double seconds) {
    return new TablePlan(
        target,
        finalization,
        read,
        changeSchema,
        start,
        rows,
        seconds,
        startedAt,
        began,
        silver,
        backfill,
        snapshot);
  }

  /** The table's configuration ({@link Target#config()}). */
  public JobConfig config() {
    return target.config();
  }

  /** The Delta tables, launcher side ({@link Target#tables()}). */
  public DeltaTables tables() {
    return target.tables();
  }

  /** The table's target for the committers: bronze, facts and control, from {@link #start}. */
  DeltaTarget deltaTarget() {
    JobConfig config = target.config();
    return new DeltaTarget(
        target.bronze(),
        target.facts(),
        target.control(),
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
    return new TableWrite(positioned, deltaTarget(), changeSchema);
  }

  /**
   * The checks that refuse {@code target} before anything is created or written: a seed's copy
   * (read here), an explicit starting LSN of a new target, an app id another target uses, a facts
   * table that lacks the facts of the target's earlier batches, a target whose recorded snapshot is
   * another app id's or not in the facts table.
   *
   * @return the seed's plan, or null without a seed
   * @throws IllegalArgumentException naming what is refused
   */
  public static Seeding.@Nullable Plan check(Target target, Schema changeSchema, PrintStream out) {
    Seeding.Plan seed = target.config().seed() == null ? null : Seeding.check(target, changeSchema);
    if (seed == null
        && !target.exists()
        && !target.config().bootstrap()
        && target.config().startingLsn().kind() == StartingLsn.Kind.EXPLICIT
        && target.config().onDataLoss() == DataLossPolicy.FAIL) {
      try (CdcClient client = target.config().clientFactory().open()) {
        StartingLsn.checkExplicit(
            client, target.captureInstance(), target.config().startingLsn().lsn().orElseThrow());
      }
    }
    TargetIdentity.check(target, out);
    TargetIdentity.requireTargetsFacts(target);
    TargetIdentity.requireOwnSnapshot(target);
    if (target.config().bootstrap() && seed == null) {
      ChunkedSnapshot.checkModeLock(
          target,
          target.config().snapshot().mode(),
          "running with --snapshot=" + target.config().snapshot().mode());
    }
    return seed;
  }

  /**
   * Plans {@code target}'s table: {@link #check}, then creates the missing tables, makes bronze
   * take the change schema, reads and repairs the target's position, and takes the bootstrap
   * snapshot (or the seed) of a new target, recording its {@code bootstrap} facts event; with
   * {@code --snapshot=chunked} a new target's snapshot is opened instead ({@link
   * ChunkedSnapshot#open}): the stream starts at its S.
   *
   * @throws IllegalArgumentException when the configuration is refused (see {@link #check})
   * @throws org.lakecdc.io.mssqlcdc.client.SchemaChangedError when bronze cannot take the change
   *     schema (nothing written)
   */
  public static TablePlan prepare(Target target, PipelineOptions beamOptions, PrintStream out) {
    return prepare(target, beamOptions, out, false);
  }

  /**
   * {@link #prepare(Target, PipelineOptions, PrintStream)}; with {@code snapshotInPipeline} a new
   * target's whole bootstrap snapshot is only opened here ({@link Bootstrap#open}: S recorded, no
   * row read) and returned as the plan's {@link #snapshot}, for the pipeline to read and commit
   * before the table's stream; its {@code bootstrap} facts event is written after that commit. So
   * is a whole re-snapshot after data loss ({@link Resnapshot}): recorded here, read by the
   * pipeline, its {@code resnapshot} event written after its commit.
   */
  public static TablePlan prepare(
      Target target, PipelineOptions beamOptions, PrintStream out, boolean snapshotInPipeline) {
    long began = System.nanoTime();
    Instant startedAt = Instant.now();
    MssqlCdcIO.Read read = read(target.config());
    Schema changeSchema = outputSchema(read);
    Seeding.Plan seed = check(target, changeSchema, out);
    SilverTarget silver = SilverPlan.target(target, changeSchema, startedAt);
    boolean created =
        target
            .tables()
            .createIfAbsent(target.bronze(), BronzeTable.definition(changeSchema))
            .created();
    String bronzeId = target.bronzeId();
    if (!created) {
      Recovery.takeColumnsIfEmpty(target, changeSchema, out);
    }
    evolveBronze(target, changeSchema, out);
    target.tables().createIfAbsent(target.facts(), FactsTable.definition());
    target.tables().createIfAbsent(target.control(), ControlTable.definition());
    Finalization finalization =
        new Finalization(target.tables(), target.control(), java.time.Clock.systemUTC());

    Optional<StreamPosition> position = Recovery.resumePosition(target, out);
    if (position.isEmpty()) {
      Recovery.forgetFormerVerdict(target, finalization, out);
    }
    long snapshotRows = -1;
    long snapshotBegan = System.nanoTime();
    if (position.isEmpty() && seed != null && !seed.alreadySeeded()) {
      snapshotRows = Seeding.write(target, changeSchema, seed, beamOptions, out);
      position = Recovery.resumePosition(target, out);
    } else if (seed != null) {
      out.printf(
          "Target %s holds the seed at LSN %s (committed at %s): nothing written again%n",
          target.bronze(), seed.lsn(), seed.commitTime());
    } else if (position.isEmpty()
        && target.config().bootstrap()
        && target.config().snapshot().chunked()) {
      position = Optional.of(ChunkedSnapshot.open(target, out));
    } else if (position.isEmpty()
        && target.config().bootstrap()
        && snapshotInPipeline
        && target.config().generation() == 0) {
      StreamPosition atS = Bootstrap.open(target, out, bronzeId);
      return new TablePlan(
          target,
          finalization,
          read,
          changeSchema,
          atS,
          -1,
          0,
          startedAt,
          began,
          silver,
          null,
          new SnapshotTask(target, atS));
    } else if (position.isEmpty() && target.config().bootstrap()) {
      snapshotRows = Bootstrap.snapshot(target, beamOptions, out, bronzeId);
      position = Recovery.resumePosition(target, out);
    } else if (position.isEmpty()) {
      position = Optional.of(Bootstrap.startPosition(target));
      out.printf(
          "New target %s: starting after %s (startingLsn=%s)%n",
          target.bronze(), position.get().endLsn(), target.config().startingLsn());
    }
    double snapshotSeconds = snapshotRows >= 0 ? (System.nanoTime() - snapshotBegan) / 1e9 : 0;
    Optional<Resnapshot.Outcome> recovered =
        Resnapshot.preflight(target, position, beamOptions, out, snapshotInPipeline);
    if (recovered.isPresent()) {
      target = recovered.get().target();
      position = Optional.of(recovered.get().start());
      if (recovered.get().snapshotRows() >= 0) {
        snapshotRows = recovered.get().snapshotRows();
        snapshotSeconds = recovered.get().snapshotSeconds();
      }
      silver = SilverPlan.target(target, changeSchema, startedAt);
      if (recovered.get().snapshot() != null) {
        // A whole re-snapshot the pipeline reads: its event is written after its commit there.
        return new TablePlan(
            target,
            finalization,
            read,
            changeSchema,
            recovered.get().start(),
            -1,
            0,
            startedAt,
            began,
            silver,
            null,
            recovered.get().snapshot());
      }
    }
    StreamPosition start = position.get().ofTarget(target.bronze(), bronzeId);
    if (target.config().bootstrap() || seed != null) {
      Bootstrap.writeBootstrapFact(target, start, snapshotRows);
    }
    ChunkBackfill backfill = backfill(target, out);
    return new TablePlan(
        target,
        finalization,
        read,
        changeSchema,
        start,
        snapshotRows,
        snapshotSeconds,
        startedAt,
        began,
        silver,
        backfill,
        null);
  }

  /**
   * The chunks of the target's open chunked snapshot the run reads beside the stream (with {@code
   * --snapshot=chunked} and {@code --backfill=true}): the snapshot planned (with {@code
   * --backfill=false} too: the plan is then made here and read by the Backfill job), repaired after
   * a crash, then the chunks after the last recorded one, of at most {@code --maxWaves} waves.
   *
   * @return null when there is none to read
   */
  private static @Nullable ChunkBackfill backfill(Target target, PrintStream out) {
    if (!target.config().snapshot().chunked()) {
      return null;
    }
    Optional<ChunkedSnapshotFacts.State> open = ChunkedSnapshot.read(target).chunked();
    if (open.isEmpty() || open.get().complete()) {
      return null;
    }
    // Planned by the run that opens it, also with --backfill=false, so that the Backfill job reads
    // the chunks this run's --snapshotChunkRows and --chunksPerWave asked for.
    ChunkedSnapshotFacts.State state = ChunkedSnapshot.plan(target, open.get(), out);
    if (!target.config().snapshot().backfill()) {
      return null;
    }
    state = ChunkBackfill.repair(target, state, out);
    Optional<ChunkBackfill> next =
        ChunkBackfill.next(target, state, target.config().snapshot().maxWaves());
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
                target.captureInstance()));
    return next.orElse(null);
  }

  /**
   * Advances the verdict to the start position (a crash may have left it behind the data); called
   * after the demo's application has written, right before the stream.
   */
  public void advanceVerdictToStart() {
    if (start.endCommitTime() != null && start.batchId() >= 0) {
      finalization.advance(
          target.bronze(), start.endLsn(), start.endCommitTime(), target.config().granularity());
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
  static void evolveBronze(Target target, Schema changeSchema, PrintStream out) {
    SchemaEvolution evolved = BronzeTable.evolve(target.tables(), target.bronze(), changeSchema);
    if (!evolved.added().isEmpty()) {
      out.printf(
          "Added column(s) %s to bronze %s (version %d): the change rows have them; rows written"
              + " before read them as NULL%n",
          evolved.addedNames(), target.bronze(), evolved.version());
    }
    if (!evolved.widened().isEmpty()) {
      out.printf(
          "Widened column(s) %s in bronze %s (version %d, type widening is on): rows written"
              + " before read in the new type%n",
          evolved.widenedText(), target.bronze(), evolved.version());
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
