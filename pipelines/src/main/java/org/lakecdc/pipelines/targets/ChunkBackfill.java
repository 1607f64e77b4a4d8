package org.lakecdc.pipelines.targets;

import java.io.PrintStream;
import java.util.List;
import java.util.Optional;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.values.PCollection;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.io.mssqlcdc.MssqlCdcIO;
import org.lakecdc.io.mssqlcdc.chunk.Chunk;
import org.lakecdc.io.mssqlcdc.chunk.ChunkBounds;
import org.lakecdc.io.mssqlcdc.chunk.ChunkPlanner;
import org.lakecdc.io.mssqlcdc.chunk.SnapshotExtent;
import org.lakecdc.io.mssqlcdc.client.CdcClient;
import org.lakecdc.io.mssqlcdc.schema.SqlServerType;
import org.lakecdc.transforms.Counts;
import org.lakecdc.transforms.position.StreamPosition;
import org.lakecdc.transforms.snapshot.ChunkedSnapshotFacts.Plan;
import org.lakecdc.transforms.snapshot.ChunkedSnapshotFacts.State;
import org.lakecdc.transforms.snapshot.ChunkedSnapshotSpec;
import org.lakecdc.transforms.snapshot.CommittedChunk;
import org.lakecdc.transforms.snapshot.WriteChunksToDelta;

/**
 * The chunks of an open chunked snapshot one pipeline reads and commits (docs/behaviour.md §6.9):
 * the plan's chunks after the last recorded one, all of them or those of the next {@code maxWaves}
 * waves, read by {@code MssqlCdcIO.snapshotChunks()} each with its own stamp and committed by
 * {@link WriteChunksToDelta} in index order (one bronze commit and one {@code snapshot_chunk} facts
 * row per chunk, then the completion row after the plan's last). The main job expands it beside the
 * stream ({@code --backfill}); {@code Backfill} runs one per wave.
 *
 * @param config the table's configuration
 * @param state the snapshot as the facts rows told it when this was made (planned)
 * @param keyTypes the key columns' captured types
 * @param spec what the committer writes where
 * @param chunks the chunks to read, in index order (not empty)
 * @param openEndAfter a keyset plan's MAX when its last chunk's end is open (re-sought before that
 *     chunk's read), else null
 */
public record ChunkBackfill(
    JobConfig config,
    State state,
    List<SqlServerType> keyTypes,
    ChunkedSnapshotSpec spec,
    List<Chunk> chunks,
    @Nullable List<Object> openEndAfter) {

  /**
   * Repairs what a crash left in {@code state}'s snapshot ({@link WriteChunksToDelta#repair}: the
   * facts row of a chunk bronze holds, the completion row after the last chunk), before anything is
   * read.
   *
   * @param state a planned snapshot
   * @return the snapshot as the facts rows tell it after the repair
   */
  public static State repair(Target target, State state, PrintStream out) {
    int repaired =
        WriteChunksToDelta.repair(target.tables(), spec(target, state, keyTypes(target)));
    if (repaired == 0) {
      return state;
    }
    out.printf(
        "Repaired %s of the chunked snapshot at S = %s that the previous run committed to bronze"
            + " but not to facts%n",
        Counts.of(repaired, "facts row", "facts rows"), state.open().s());
    return ChunkedSnapshot.read(target).chunked().orElse(state);
  }

  /**
   * The next chunks of {@code state}'s snapshot: the plan's chunks after the last recorded one, of
   * at most {@code maxWaves} waves (0: all).
   *
   * @param state a planned, repaired snapshot
   * @return empty when every chunk is recorded
   */
  public static Optional<ChunkBackfill> next(Target target, State state, int maxWaves) {
    Plan plan = state.plan().orElseThrow(() -> new IllegalStateException("not planned"));
    List<SqlServerType> keyTypes = keyTypes(target);
    List<Chunk> all = ChunkBounds.planFromJson(plan.chunksJson(), keyTypes);
    int next = state.nextChunk();
    if (state.complete() || next >= all.size()) {
      return Optional.empty();
    }
    int lastWave = maxWaves == 0 ? Integer.MAX_VALUE : plan.waveOf(next) + maxWaves - 1;
    List<Chunk> chunks =
        all.subList(next, all.size()).stream()
            .filter(c -> plan.waveOf(c.index()) <= lastWave)
            .toList();
    List<Object> openEnd = null;
    Chunk last = all.get(all.size() - 1);
    if (last.hi() == null && state.open().extentJson() != null) {
      SnapshotExtent extent = SnapshotExtent.fromJson(state.open().extentJson(), keyTypes);
      if (!extent.isInt() && extent.max() != null) {
        openEnd = extent.max();
      }
    }
    return Optional.of(
        new ChunkBackfill(
            target.config(), state, keyTypes, spec(target, state, keyTypes), chunks, openEnd));
  }

  private static List<SqlServerType> keyTypes(Target target) {
    try (CdcClient client = target.config().clientFactory().open()) {
      return ChunkPlanner.forInstance(client, target.captureInstance(), target.config().isolation())
          .keyTypes();
    }
  }

  /** What the committer of {@code state}'s chunks writes where. */
  static ChunkedSnapshotSpec spec(Target target, State state, List<SqlServerType> keyTypes) {
    String eventsAppId =
        new StreamPosition(
                state.open().appId(),
                state.open().generation(),
                -1,
                state.open().s(),
                state.open().sCommitTime(),
                target.captureInstance())
            .ofTarget(target.bronze(), target.bronzeId())
            .eventsAppId();
    return new ChunkedSnapshotSpec(
        target.bronze(),
        target.facts(),
        eventsAppId,
        state.open(),
        state.plan().orElseThrow(),
        keyTypes,
        target.captureInstance());
  }

  /** The waves these chunks belong to, as {@code first..last} (or one number). */
  public String waves() {
    Plan plan = state.plan().get();
    int first = plan.waveOf(chunks.get(0).index());
    int last = plan.waveOf(chunks.get(chunks.size() - 1).index());
    return first == last ? "wave " + first : "waves " + first + ".." + last;
  }

  /**
   * The chunks' read and commit, expanded into {@code pipeline}: the committed chunks. Their
   * progress lines are the launcher's ({@link WaveProgress}).
   */
  public PCollection<CommittedChunk> expand(Pipeline pipeline) {
    MssqlCdcIO.SnapshotChunks read =
        MssqlCdcIO.snapshotChunks()
            .withSourceConfiguration(config.source())
            .withSnapshotLsn(state.open().s())
            .withIsolationLevel(config.isolation())
            .withChunks(chunks)
            .withOpenEndAfter(openEndAfter);
    WriteChunksToDelta write =
        WriteChunksToDelta.of(read, spec)
            .withHadoopConf(config.hadoopConf())
            .withCrash(config.crash());
    return pipeline.apply(
        "Chunks "
            + chunks.get(0).index()
            + ".."
            + chunks.get(chunks.size() - 1).index()
            + " of "
            + config.captureInstance()
            + " to bronze",
        write);
  }
}
