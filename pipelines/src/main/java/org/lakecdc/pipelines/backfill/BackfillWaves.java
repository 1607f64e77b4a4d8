package org.lakecdc.pipelines.backfill;

import java.io.PrintStream;
import java.time.Clock;
import java.util.List;
import java.util.Optional;
import org.apache.beam.sdk.Pipeline;
import org.lakecdc.pipelines.cli.JobExit;
import org.lakecdc.pipelines.cli.OptionRefusedException;
import org.lakecdc.pipelines.targets.ChunkBackfill;
import org.lakecdc.pipelines.targets.ChunkReadPool;
import org.lakecdc.pipelines.targets.ChunkedSnapshot;
import org.lakecdc.pipelines.targets.JobConfig;
import org.lakecdc.pipelines.targets.Recovery;
import org.lakecdc.pipelines.targets.SnapshotSettings;
import org.lakecdc.pipelines.targets.Target;
import org.lakecdc.pipelines.targets.WaveProgress;
import org.lakecdc.transforms.delta.DeltaTables;
import org.lakecdc.transforms.snapshot.ChunkedSnapshotFacts.State;

/**
 * The work of the {@code Backfill} job once its command line is checked: the waves of a target's
 * open chunked snapshot, one bounded pipeline per wave, until the snapshot is complete, {@code
 * --maxWaves} waves were read, {@code --maxSeconds} passed, or the stream's retention headroom is
 * below {@code --minHeadroomHours} ({@link BackfillThrottle}); and the line that reports the final
 * {@link BackfillState}.
 */
public final class BackfillWaves {
  private BackfillWaves() {}

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
  public record Result(
      BackfillState state, String reason, int waves, int chunksDone, int chunksTotal, long rows) {}

  /**
   * The waves of {@code config}'s open chunked snapshot, each one bounded pipeline on the runner of
   * {@code beamOptions}.
   *
   * @param maxSeconds no wave starts after this many seconds; 0 for no limit
   * @param minHeadroomHours the throttle ({@link BackfillThrottle}), or null for none
   * @throws OptionRefusedException when a whole snapshot of the stream is open (the mode lock)
   */
  public static Result run(
      JobConfig config,
      org.apache.beam.sdk.options.PipelineOptions beamOptions,
      long maxSeconds,
      Double minHeadroomHours,
      Clock clock,
      PrintStream out) {
    long began = System.nanoTime();
    Target target = Recovery.continueUnderTargetAppId(Target.of(config), out);
    config = target.config();
    DeltaTables tables = target.tables();
    ChunkedSnapshot.checkModeLock(target, SnapshotSettings.Mode.CHUNKED, "running Backfill");
    Optional<State> found = ChunkedSnapshot.read(target).chunked();
    if (found.isEmpty() || !target.exists()) {
      return new Result(
          BackfillState.NO_SNAPSHOT,
          "no chunked snapshot is open for "
              + target.bronze()
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
      state = ChunkBackfill.repair(target, state, out);
    }
    int maxWaves = config.snapshot().maxWaves();
    int waves = 0;
    // The waves' lines give this run's rate: the chunks and rows from here, the time from the
    // start.
    WaveProgress.RunStart run =
        new WaveProgress.RunStart(state.chunksDone(), state.rowsDone(), began);
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
                target.facts(),
                state.open().appId(),
                target.bronze(),
                minHeadroomHours,
                clock);
        if (pause.isPresent()) {
          return result(pause.get().state(), pause.get().reason(), waves, state);
        }
      }
      if (state.plan().isEmpty()) {
        state = ChunkedSnapshot.plan(target, state, out);
      }
      Optional<ChunkBackfill> next = ChunkBackfill.next(target, state, 1);
      if (next.isEmpty()) {
        // Every chunk is recorded: the repair writes a completion row a crash left missing.
        state = ChunkBackfill.repair(target, state, out);
        if (!state.complete()) {
          throw new IllegalStateException(
              "Every chunk of the chunked snapshot at S = "
                  + state.open().s()
                  + " of "
                  + target.bronze()
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
      ChunkReadPool.fit(beamOptions, List.of(wave), 0);
      Pipeline pipeline = Pipeline.create(beamOptions);
      wave.expand(pipeline);
      // The wave's line (and the completion's) as the facts table records them, on this console.
      try (WaveProgress progress = WaveProgress.follow(wave, run, out)) {
        JobExit.run(pipeline);
      }
      waves++;
      state = ChunkedSnapshot.read(target).chunked().orElseThrow();
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
  public static String stateLine(JobConfig config, Result r) {
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
