package org.lakecdc.pipelines.targets;

import java.io.PrintStream;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.io.mssqlcdc.chunk.Chunk;
import org.lakecdc.io.mssqlcdc.chunk.ChunkBounds;
import org.lakecdc.io.mssqlcdc.chunk.ChunkPlanner;
import org.lakecdc.io.mssqlcdc.chunk.SnapshotExtent;
import org.lakecdc.io.mssqlcdc.client.CaptureInstance;
import org.lakecdc.io.mssqlcdc.client.CdcClient;
import org.lakecdc.io.mssqlcdc.client.Commit;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.io.mssqlcdc.snapshot.SnapshotLsn;
import org.lakecdc.pipelines.cli.OptionRefusedException;
import org.lakecdc.transforms.Counts;
import org.lakecdc.transforms.position.StreamPosition;
import org.lakecdc.transforms.snapshot.ChunkedSnapshotFacts;
import org.lakecdc.transforms.snapshot.ChunkedSnapshotFacts.Open;
import org.lakecdc.transforms.snapshot.ChunkedSnapshotFacts.Plan;
import org.lakecdc.transforms.snapshot.ChunkedSnapshotFacts.Snapshots;
import org.lakecdc.transforms.snapshot.ChunkedSnapshotFacts.State;

/**
 * The launcher's part of a chunked snapshot's lifecycle (docs/behaviour.md §6.7, §6.10;
 * docs/tables.md "Chunked snapshots"): the mode lock, the open at a new target's bootstrap (S, the
 * key's extent, the {@code snapshot_open} facts row, the stream's start at S) and the plan at the
 * first wave (the {@code snapshot_plan} facts row). All state lives in facts rows ({@link
 * ChunkedSnapshotFacts}) and bronze's {@code _snapshot}/{@code _chunk} columns: every step writes
 * its row with a Delta transaction id and reads it back, so a concurrent or repeated step keeps the
 * stored one.
 */
public final class ChunkedSnapshot {
  private ChunkedSnapshot() {}

  /**
   * What the facts table says about the snapshots of {@code target}'s stream family in its bronze
   * table: opens recorded for a former table at the same path are left out ({@link
   * ChunkedSnapshotFacts#readOfTable}), and so is an open recorded without a table id (by an
   * earlier lakecdc) whose chunks are recorded in the facts but not in this bronze table.
   */
  public static Snapshots read(Target target) {
    String bronzeId = bronzeId(target);
    Snapshots read =
        ChunkedSnapshotFacts.readOfTable(
            target.tables(), target.facts(), target.appId(), target.bronze(), bronzeId);
    Optional<State> chunked = read.chunked();
    if (chunked.isPresent()
        && chunked.get().open().targetId() == null
        && chunked.get().chunksDone() > 0
        && (bronzeId == null
            || target
                .tables()
                .latestTransactionVersion(
                    target.bronze(),
                    ChunkedSnapshotFacts.bronzeAppId(
                        chunked.get().open().appId(), chunked.get().open().s()))
                .isEmpty())) {
      return new Snapshots(
          Optional.empty(), read.fullOpen(), read.fullOpenComplete(), read.newestCompletion());
    }
    return read;
  }

  /** The bronze table's Delta table id, or null when no table exists at its path. */
  static @Nullable String bronzeId(Target target) {
    return target.exists() ? target.bronzeId() : null;
  }

  /**
   * The position a recorded chunked snapshot gives the target's stream of {@code target}'s
   * generation: at its S (batch -1), when the target's newest chunked snapshot (open or complete)
   * was opened under {@code target}'s stream app id. What {@link Recovery#resumePosition} falls
   * back to when neither bronze nor the facts table records a position: an open written by an
   * earlier lakecdc, whose row carried no position.
   */
  static Optional<StreamPosition> recordedStart(Target target) {
    return read(target)
        .chunked()
        .map(State::open)
        .filter(open -> open.appId().equals(target.streamAppId()))
        .map(open -> atS(target, open));
  }

  /** The stream's position at {@code open}'s S (batch -1), under the open's app id. */
  private static StreamPosition atS(Target target, Open open) {
    return new StreamPosition(
        open.appId(),
        open.generation(),
        -1,
        open.s(),
        open.sCommitTime(),
        target.captureInstance());
  }

  /**
   * The mode lock (docs/behaviour.md §6.10) of a run that may take a snapshot in {@code mode}: a
   * whole run is refused while a chunked snapshot of the stream family is open and incomplete; a
   * chunked run is refused while a whole snapshot's open is incomplete and CDC still holds the
   * changes right after its S (a purged one can never complete, and a chunked open of its
   * generation supersedes it).
   *
   * @param what what the refused run is, for the message ({@code running with --snapshot=whole})
   * @throws OptionRefusedException one line naming the target, the open snapshot's mode, S and
   *     generation, and what to do
   */
  public static void checkModeLock(Target target, SnapshotSettings.Mode mode, String what) {
    Snapshots snapshots = read(target);
    if (mode == SnapshotSettings.Mode.WHOLE) {
      Optional<State> chunked = snapshots.chunked().filter(s -> !s.complete());
      if (chunked.isPresent()) {
        Open open = chunked.get().open();
        throw new OptionRefusedException(
            "Target "
                + target.bronze()
                + " has a chunked snapshot open at S = "
                + open.s()
                + " (generation "
                + open.generation()
                + ", "
                + progress(chunked.get())
                + ") that is not complete: run Backfill (or CdcToDelta with"
                + " --snapshot=chunked) until it is done before "
                + what);
      }
      return;
    }
    Optional<Open> full = snapshots.fullOpen();
    if (full.isEmpty() || snapshots.fullOpenComplete()) {
      return;
    }
    Open open = full.get();
    if (snapshots.chunked().filter(s -> s.open().appId().equals(open.appId())).isPresent()) {
      return;
    }
    try (CdcClient client = target.config().clientFactory().open()) {
      if (client.incrementLsn(open.s()).isBefore(client.minLsn(target.captureInstance()))) {
        return;
      }
    }
    throw new OptionRefusedException(
        "Target "
            + target.bronze()
            + " has a whole snapshot open at S = "
            + open.s()
            + " (generation "
            + open.generation()
            + ") that is not complete: rerun with --snapshot=whole to finish it, or wait until"
            + " CDC cleanup passes its S, before "
            + what);
  }

  /** {@code chunks d/n, r rows} of a state ({@code not planned yet} before its plan). */
  public static String progress(State state) {
    String chunks =
        state.plan().isPresent()
            ? "chunks " + state.chunksDone() + "/" + state.chunksTotal()
            : "not planned yet";
    return chunks + ", " + Counts.of(state.rowsDone(), "row", "rows");
  }

  /**
   * Opens the chunked snapshot of a new target (one with no position: {@link
   * Recovery#resumePosition}): records S (docs/behaviour.md §6.1), then the key's extent after S,
   * writes the {@code snapshot_open} row together with the stream's position at S (in one facts
   * commit, so the target is never new again) and reads it back. Nothing is read from the table.
   *
   * @return the stream's start: the position at S (batch -1)
   */
  static StreamPosition open(Target target, PrintStream out) {
    Open stored = writeOpen(target, ChunkedSnapshotFacts.KIND_BOOTSTRAP, 0, null, null);
    out.printf(
        "New target %s: opened a chunked snapshot of %s at S = %s (committed at %s); the"
            + " stream starts at S now, the table is read in chunks%n",
        target.bronze(), target.captureInstance(), stored.s(), stored.sCommitTime());
    return atS(target, stored);
  }

  /**
   * Records S (docs/behaviour.md §6.1), then the key's extent after S, writes the {@code
   * snapshot_open} row of a chunked snapshot of {@code kind} starting {@code generation} (app id
   * {@code <appId>.g<n>}; detail {@code target_id} the bronze table's id; transaction {@code
   * <appId>#snapshots@<bronze table id>} version = the generation: one per generation) and reads it
   * back: a concurrent open that was stored first is kept. A bootstrap's open (generation 0)
   * records the stream's position at S in the same facts commit (domain {@code
   * mssql_cdc.position.<appId>}, naming the bronze table), so the target has a position from the
   * moment its snapshot is recorded; a re-snapshot's generation starts with a bronze commit of its
   * own. Nothing is read from the table.
   *
   * @param lostFrom a re-snapshot's lost gap start (UTC), else null
   * @param lostTo a re-snapshot's lost gap end (UTC), else null
   * @return the stored open
   */
  static Open writeOpen(
      Target target,
      String kind,
      int generation,
      @Nullable Instant lostFrom,
      @Nullable Instant lostTo) {
    Open open;
    String bronzeId = target.bronzeId();
    try (CdcClient client = target.config().clientFactory().open()) {
      Lsn s = SnapshotLsn.resolve(client, target.captureInstance());
      Instant time = commitTime(client, s);
      ChunkPlanner planner =
          ChunkPlanner.forInstance(client, target.captureInstance(), target.config().isolation());
      SnapshotExtent extent = planner.extent();
      open =
          new Open(
              JobConfig.streamAppId(target.appId(), generation),
              target.bronze(),
              s,
              time,
              ChunkedSnapshotFacts.MODE_CHUNKED,
              kind,
              generation,
              planner.keyColumns(),
              extent.toJson(planner.keyTypes()),
              lostFrom,
              lostTo,
              null,
              target.captureInstance(),
              bronzeId);
    }
    Map<String, String> position =
        generation == 0
            ? Map.of(
                StreamPosition.factsDomain(open.appId()),
                atS(target, open).ofTarget(target.bronze(), bronzeId).toJson())
            : Map.of();
    target.appendFacts(
        List.of(open.toRow(Instant.now())),
        ChunkedSnapshotFacts.openAppId(target.appId(), bronzeId),
        open.generation(),
        position);
    return read(target)
        .chunked()
        .filter(state -> state.open().generation() == generation)
        .orElseThrow(
            () ->
                new IllegalStateException(
                    "The snapshot_open row of "
                        + target.bronze()
                        + " was written but does not read back from "
                        + target.facts()))
        .open();
  }

  /**
   * Writes the full {@code snapshot_open} row of a whole bootstrap at S, before any row is read (no
   * transaction id: one per run attempt), so a chunked run knows the whole snapshot is open until
   * its {@code bootstrap} row.
   */
  static void writeFullOpen(Target target, Lsn s, Instant sCommitTime, List<String> keys) {
    Open open =
        new Open(
            target.appId(),
            target.bronze(),
            s,
            sCommitTime,
            ChunkedSnapshotFacts.MODE_FULL,
            ChunkedSnapshotFacts.KIND_BOOTSTRAP,
            0,
            keys,
            null,
            null,
            null,
            null,
            target.captureInstance(),
            bronzeId(target));
    target.appendFacts(List.of(open.toRow(Instant.now())), null, 0, Map.of());
  }

  /** The key columns of the capture instance (its unique index), possibly none. */
  static List<String> keyColumns(Target target) {
    try (CdcClient client = target.config().clientFactory().open()) {
      List<CaptureInstance> instances = client.captureInstances(target.captureInstance());
      return instances.isEmpty() ? List.of() : instances.get(0).keyColumns();
    }
  }

  /**
   * The plan of {@code state}'s snapshot: the stored one, or, at the first wave, every chunk
   * planned now ({@code --snapshotChunkRows}, {@code --chunksPerWave}) and written as the {@code
   * snapshot_plan} row (transaction {@code <appId>#snapplan.<S>} version 0), then read back: a
   * concurrent plan that was stored first wins. A stored plan made with other values is kept, with
   * a printed line.
   *
   * @return the state holding its plan
   */
  public static State plan(Target target, State state, PrintStream out) {
    SnapshotSettings settings = target.config().snapshot();
    if (state.plan().isPresent()) {
      Plan plan = state.plan().get();
      List<String> ignored = new ArrayList<>();
      if (plan.chunkRows() != settings.chunkRows()
          && settings.chunkRows() != SnapshotSettings.DEFAULT_CHUNK_ROWS) {
        ignored.add("--snapshotChunkRows=" + settings.chunkRows());
      }
      if (plan.chunksPerWave() != settings.chunksPerWave()
          && settings.chunksPerWave() != SnapshotSettings.DEFAULT_CHUNKS_PER_WAVE) {
        ignored.add("--chunksPerWave=" + settings.chunksPerWave());
      }
      if (!ignored.isEmpty()) {
        out.printf(
            "Chunked snapshot at S = %s of %s is planned with %,d rows per chunk and %d chunks per"
                + " wave: %s ignored (a plan never changes while open)%n",
            plan.s(),
            target.bronze(),
            (long) plan.chunkRows(),
            plan.chunksPerWave(),
            String.join(" and ", ignored));
      }
      return state;
    }
    Open open = state.open();
    Instant started = Instant.now();
    long began = System.nanoTime();
    List<Chunk> chunks;
    String chunksJson;
    String kind;
    try (CdcClient client = target.config().clientFactory().open()) {
      ChunkPlanner planner =
          ChunkPlanner.forInstance(client, target.captureInstance(), target.config().isolation());
      checkKeys(target, open, planner.keyColumns());
      SnapshotExtent extent =
          open.extentJson() == null
              ? new SnapshotExtent(SnapshotExtent.KEYSET, null, null, null, null)
              : SnapshotExtent.fromJson(open.extentJson(), planner.keyTypes());
      kind = extent.kind();
      chunks = planner.plan(extent, settings.chunkRows());
      chunksJson = ChunkBounds.planJson(chunks, planner.keyTypes());
    }
    Plan plan =
        new Plan(
            open.appId(),
            open.target(),
            open.s(),
            kind,
            open.keys(),
            settings.chunkRows(),
            settings.chunksPerWave(),
            chunksJson,
            started,
            (System.nanoTime() - began) / 1_000_000);
    target.appendFacts(
        List.of(plan.toRow(Instant.now())),
        ChunkedSnapshotFacts.planAppId(open.appId(), open.s()),
        0,
        Map.of());
    State stored = read(target).chunked().filter(s -> s.open().s().equals(open.s())).get();
    Plan kept = stored.plan().orElseThrow();
    out.printf(
        "Planned the chunked snapshot at S = %s of %s: %s of at most %s, %d per wave (%s)%n",
        open.s(),
        target.captureInstance(),
        Counts.of(kept.chunkCount(), "chunk", "chunks"),
        Counts.of(kept.chunkRows(), "row", "rows"),
        kept.chunksPerWave(),
        Counts.of(kept.waveCount(), "wave", "waves"));
    return stored;
  }

  /**
   * Refuses a plan when the capture instance's key is no longer the open's (docs/behaviour.md §6.7
   * step 2): its chunks would not tile the table.
   */
  private static void checkKeys(Target target, Open open, List<String> keys) {
    List<String> a = keys.stream().map(k -> k.toLowerCase(java.util.Locale.ROOT)).toList();
    List<String> b = open.keys().stream().map(k -> k.toLowerCase(java.util.Locale.ROOT)).toList();
    if (!a.equals(b)) {
      throw new IllegalStateException(
          "The unique key of "
              + target.captureInstance()
              + " is now "
              + keys
              + ", not the key "
              + open.keys()
              + " the chunked snapshot at S = "
              + open.s()
              + " was opened over: take a new snapshot of "
              + target.bronze());
    }
  }

  /** The commit time of S: the last commit at or before it. */
  static Instant commitTime(CdcClient client, Lsn s) {
    return client
        .lastCommitAtOrBefore(s)
        .map(Commit::commitTime)
        .orElseThrow(
            () ->
                new IllegalStateException(
                    "Snapshot LSN "
                        + s
                        + " has no commit at or before it in cdc.lsn_time_mapping: run again once"
                        + " the capture job has written one"));
  }
}
