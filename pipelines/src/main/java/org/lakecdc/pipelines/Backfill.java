package org.lakecdc.pipelines;

import java.io.PrintStream;
import java.time.Clock;
import java.util.Optional;
import java.util.function.UnaryOperator;
import org.apache.beam.sdk.Pipeline;
import org.lakecdc.pipelines.backfill.BackfillState;
import org.lakecdc.pipelines.backfill.BackfillThrottle;
import org.lakecdc.pipelines.cli.CommandLine;
import org.lakecdc.pipelines.cli.ConsoleLogging;
import org.lakecdc.pipelines.cli.JobExit;
import org.lakecdc.pipelines.cli.OptionRefusedException;
import org.lakecdc.pipelines.options.BackfillOptions;
import org.lakecdc.pipelines.targets.ChunkBackfill;
import org.lakecdc.pipelines.targets.ChunkedSnapshot;
import org.lakecdc.pipelines.targets.JobConfig;
import org.lakecdc.pipelines.targets.Recovery;
import org.lakecdc.pipelines.targets.SnapshotSettings;
import org.lakecdc.transforms.delta.DeltaTables;
import org.lakecdc.transforms.delta.HadoopConf;
import org.lakecdc.transforms.snapshot.BackfillProgress;
import org.lakecdc.transforms.snapshot.ChunkedSnapshotFacts.State;

/**
 * The backfill job: reads the open chunked snapshot of a target (opened by {@link CdcToDelta} with
 * {@code --snapshot=chunked}) in waves, one bounded pipeline per wave on the chosen runner, next to
 * the running stream (docs/behaviour.md §6.9; docs/options.md "Backfill"). Each run repairs what a
 * crash left (a chunk's facts row, the completion row), plans the snapshot at its first wave, then
 * reads wave after wave until the plan's last chunk is recorded (and the snapshot's completion row
 * written), {@code --maxWaves} waves were read, {@code --maxSeconds} passed, or the stream's
 * retention headroom is below {@code --minHeadroomHours}. A progress line follows each wave; the
 * last line gives the state: {@code done}, {@code running}, {@code waiting_headroom}, {@code
 * waiting_metrics} or {@code no_snapshot} ({@link BackfillState}).
 *
 * <p>Exit codes ({@link JobExit}): 0 whatever the state; 2 a bad option value or a refused run (the
 * mode lock: a whole snapshot of the stream still open), one line, nothing written; 1 a failed run.
 * What was committed stays committed: a rerun goes on from the next chunk.
 */
public final class Backfill {
  private Backfill() {}

  /** Entry point; {@link BackfillOptions} lists the options. Exits the JVM with the code. */
  public static void main(String[] args) {
    JobExit.main(
        () -> run(args, System.out, System.err, Clock.systemUTC(), UnaryOperator.identity()));
  }

  /**
   * What a run did.
   *
   * @param state the final state
   * @param reason why it paused or stopped, or empty
   * @param waves waves read in this run
   * @param chunksDone chunks recorded after the run (0 without a snapshot)
   * @param chunksTotal chunks planned, or -1 before planning
   * @param rows rows of the recorded chunks
   */
  record Result(
      BackfillState state, String reason, int waves, int chunksDone, int chunksTotal, long rows) {}

  /**
   * Runs the job of a command line and returns its exit code instead of exiting.
   *
   * @param clock the clock of the headroom's age (UTC)
   * @param adjust applied to the validated configuration (tests inject crashes with it)
   */
  static int run(
      String[] args,
      PrintStream out,
      PrintStream err,
      Clock clock,
      UnaryOperator<JobConfig> adjust) {
    BackfillOptions options;
    JobConfig config;
    try {
      options = CommandLine.parse(args, BackfillOptions.class);
      HadoopConf.checkOccurrences("hadoopConf", CommandLine.values(args, "hadoopConf"));
      refuseMainJobOnly(options);
      config = adjust.apply(CdcToDelta.config(options));
      CdcToDelta.checkObjectStores(java.util.List.of(config));
      requireTables(config, args);
    } catch (IllegalArgumentException e) {
      err.println("error: " + CommandLine.firstLine(e));
      return JobExit.BAD_OPTION;
    }
    try {
      ConsoleLogging.startFile(options);
      Result result =
          run(
              config,
              options,
              options.getMaxSeconds() == null ? 0 : options.getMaxSeconds(),
              options.getMinHeadroomHours(),
              clock,
              out);
      out.println(stateLine(config, result));
    } catch (Throwable t) {
      return JobExit.failed(t, err, options.getVerbose());
    }
    return JobExit.OK;
  }

  /**
   * Refuses a target or facts table that does not exist: a chunked snapshot is read into the target
   * the main job opened it for, from the state in its facts table, so a missing one is a mistyped
   * path (or a target never opened), not a run with nothing to do.
   *
   * @throws OptionRefusedException naming {@code --target} or {@code --factsTable} and the path
   */
  private static void requireTables(JobConfig config, String[] args) {
    DeltaTables tables = config.hadoopConf().tables();
    CommandLine.existingTable(
        tables,
        "target",
        config.bronzePath(),
        CommandLine.values(args, "target").isEmpty()
            ? CommandLine.defaultFor(args, config.captureInstance())
            : null,
        "give the bronze table whose chunked snapshot CdcToDelta --snapshot=chunked opened");
    CommandLine.existingTable(
        tables,
        "factsTable",
        config.factsPath(),
        CommandLine.values(args, "factsTable").isEmpty() ? "the default" : null,
        "give the facts table of the run that opened the chunked snapshot");
  }

  /**
   * Refuses the main job's options that have no meaning here, and the backfill's own out of range.
   *
   * @throws IllegalArgumentException naming the option
   */
  private static void refuseMainJobOnly(BackfillOptions o) {
    if (o.getContinuous()) {
      throw new IllegalArgumentException(
          "--continuous is an option of CdcToDelta: Backfill reads its waves and ends (run it"
              + " again, or let CdcToDelta --snapshot=chunked --continuous read them)");
    }
    if (o.getTables() != null || o.getTablesFile() != null) {
      throw new IllegalArgumentException(
          "--"
              + (o.getTables() != null ? "tables" : "tablesFile")
              + " is an option of CdcToDelta: Backfill reads one table's snapshot (--captureInstance,"
              + " --target, --appId)");
    }
    if (o.getMaxSeconds() != null && o.getMaxSeconds() < 0) {
      throw new IllegalArgumentException(
          "--maxSeconds must be 0 (no limit) or a positive integer, not '"
              + o.getMaxSeconds()
              + "'");
    }
    if (o.getMinHeadroomHours() != null
        && !(o.getMinHeadroomHours() >= 0 && Double.isFinite(o.getMinHeadroomHours()))) {
      throw new IllegalArgumentException(
          "--minHeadroomHours must be 0 or a positive number of hours, not '"
              + CommandLine.typed(o, "minHeadroomHours", o.getMinHeadroomHours())
              + "'");
    }
  }

  /**
   * The waves of {@code config}'s open chunked snapshot, each one bounded pipeline on the runner of
   * {@code beamOptions}.
   *
   * @param maxSeconds no wave starts after this many seconds; 0 for no limit
   * @param minHeadroomHours the throttle ({@link BackfillThrottle}), or null for none
   * @throws OptionRefusedException when a whole snapshot of the stream is open (the mode lock)
   */
  static Result run(
      JobConfig config,
      org.apache.beam.sdk.options.PipelineOptions beamOptions,
      long maxSeconds,
      Double minHeadroomHours,
      Clock clock,
      PrintStream out) {
    long began = System.nanoTime();
    config = Recovery.continueUnderTargetAppId(config, out);
    DeltaTables tables = config.hadoopConf().tables();
    ChunkedSnapshot.checkModeLock(
        config, tables, SnapshotSettings.Mode.CHUNKED, "running Backfill");
    Optional<State> found = ChunkedSnapshot.read(config, tables).chunked();
    if (found.isEmpty() || !tables.exists(config.bronzePath())) {
      return new Result(
          BackfillState.NO_SNAPSHOT,
          "no chunked snapshot is open for "
              + config.bronzePath()
              + " (app id "
              + config.appId()
              + "): open one with CdcToDelta --snapshot=chunked",
          0,
          0,
          -1,
          0);
    }
    State state = found.get();
    if (state.plan().isPresent()) {
      state = ChunkBackfill.repair(config, tables, state, out);
    }
    int maxWaves = config.snapshot().maxWaves();
    int waves = 0;
    int runChunks = 0;
    long runRows = 0;
    while (true) {
      if (state.complete()) {
        return result(BackfillState.DONE, "", waves, state);
      }
      if (maxWaves > 0 && waves >= maxWaves) {
        return result(BackfillState.RUNNING, "stopped after --maxWaves=" + maxWaves, waves, state);
      }
      if (maxSeconds > 0 && (System.nanoTime() - began) / 1e9 >= maxSeconds) {
        return result(
            BackfillState.RUNNING, "stopped after --maxSeconds=" + maxSeconds, waves, state);
      }
      if (minHeadroomHours != null) {
        Optional<BackfillThrottle.Pause> pause =
            BackfillThrottle.check(
                tables,
                config.factsPath(),
                state.open().appId(),
                config.bronzePath(),
                minHeadroomHours,
                clock);
        if (pause.isPresent()) {
          return result(pause.get().state(), pause.get().reason(), waves, state);
        }
      }
      if (state.plan().isEmpty()) {
        state = ChunkedSnapshot.plan(config, tables, state, out);
      }
      Optional<ChunkBackfill> next = ChunkBackfill.next(config, tables, state, 1);
      if (next.isEmpty()) {
        // Every chunk is recorded: the repair writes a completion row a crash left missing.
        state = ChunkBackfill.repair(config, tables, state, out);
        if (!state.complete()) {
          throw new IllegalStateException(
              "Every chunk of the chunked snapshot at S = "
                  + state.open().s()
                  + " of "
                  + config.bronzePath()
                  + " is recorded, but its completion row is not written");
        }
        continue;
      }
      ChunkBackfill wave = next.get();
      out.printf(
          "Backfill of %s: reading %s (chunks %d..%d of %d)%n",
          config.captureInstance(),
          wave.waves(),
          wave.chunks().get(0).index(),
          wave.chunks().get(wave.chunks().size() - 1).index(),
          state.chunksTotal());
      Pipeline pipeline = Pipeline.create(beamOptions);
      wave.expand(pipeline, false);
      JobExit.run(pipeline);
      waves++;
      int doneBefore = state.chunksDone();
      long rowsBefore = state.rowsDone();
      state = ChunkedSnapshot.read(config, tables).chunked().orElseThrow();
      runChunks += state.chunksDone() - doneBefore;
      runRows += state.rowsDone() - rowsBefore;
      out.println(
          BackfillProgress.line(
              config.captureInstance(),
              wave.state().plan().get().waveOf(wave.chunks().get(wave.chunks().size() - 1).index()),
              state.chunksDone(),
              state.chunksTotal(),
              state.rowsDone(),
              runChunks,
              runRows,
              (System.nanoTime() - began) / 1e9));
    }
  }

  private static Result result(BackfillState state, String reason, int waves, State snapshot) {
    return new Result(
        state, reason, waves, snapshot.chunksDone(), snapshot.chunksTotal(), snapshot.rowsDone());
  }

  /**
   * The final line: {@code Backfill of <ci>: <state> (<reason>); chunks d/n, r rows}, {@code not
   * planned yet} before the plan.
   */
  static String stateLine(JobConfig config, Result r) {
    String progress =
        r.chunksTotal() < 0
            ? "not planned yet"
            : "chunks " + r.chunksDone() + "/" + r.chunksTotal();
    return "Backfill of "
        + config.captureInstance()
        + ": "
        + r.state()
        + (r.reason().isEmpty() ? "" : " (" + r.reason() + ")")
        + "; "
        + (r.state() == BackfillState.NO_SNAPSHOT
            ? "nothing read"
            : progress
                + ", "
                + org.lakecdc.transforms.Counts.of(r.rows(), "row", "rows")
                + ", "
                + org.lakecdc.transforms.Counts.of(r.waves(), "wave", "waves")
                + " this run");
  }
}
