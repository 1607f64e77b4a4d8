package org.lakecdc.transforms.snapshot;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import org.apache.beam.sdk.coders.KvCoder;
import org.apache.beam.sdk.coders.SerializableCoder;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.coders.VarIntCoder;
import org.apache.beam.sdk.state.BagState;
import org.apache.beam.sdk.state.StateSpec;
import org.apache.beam.sdk.state.StateSpecs;
import org.apache.beam.sdk.state.ValueState;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.PTransform;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.WithKeys;
import org.apache.beam.sdk.transforms.display.DisplayData;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PBegin;
import org.apache.beam.sdk.values.PCollection;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.io.mssqlcdc.MssqlCdcIO;
import org.lakecdc.io.mssqlcdc.SourceConfiguration;
import org.lakecdc.io.mssqlcdc.chunk.ChunkBounds;
import org.lakecdc.io.mssqlcdc.chunk.ChunkRead;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.transforms.Counts;
import org.lakecdc.transforms.bronze.CrashPlan;
import org.lakecdc.transforms.bronze.CrashPoint;
import org.lakecdc.transforms.delta.CommitResult;
import org.lakecdc.transforms.delta.DeltaTables;
import org.lakecdc.transforms.delta.HadoopConf;
import org.lakecdc.transforms.facts.FactsTable;
import org.lakecdc.transforms.snapshot.ChunkedSnapshotFacts.ChunkFact;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads chunks of an open chunked snapshot ({@code MssqlCdcIO.snapshotChunks()}) and commits each
 * to bronze and facts exactly once, strictly in index order (docs/behaviour.md §6.7, §6.9;
 * docs/tables.md "Chunked snapshots").
 *
 * <pre>
 * chunks ── each read on a worker and written to bronze data files there (_snapshot = S,
 *   _chunk = index) ── (chunk read, files) ── key by app id ── commit each chunk once it is the
 *   next in index order (stateful, one key per snapshot)
 * </pre>
 *
 * <p>Per chunk c, in order: one bronze commit (no data file for an empty chunk) with transaction id
 * {@code (ChunkedSnapshotFacts.bronzeAppId(appId, S), c)} and the domain {@link
 * ChunkedSnapshotFacts#BRONZE_DOMAIN} = the chunk's {@link ChunkFact#toJson()}; then its {@code
 * snapshot_chunk} facts row ({@link ChunkFact#toRow}) with {@code (chunkFactsAppId(appId, S), c)};
 * after the plan's last chunk, the snapshot's completion row ({@link
 * ChunkedSnapshotFacts#completionRow}) with {@code (eventsAppId, generation)}. When a wave's last
 * chunk commits, a {@link BackfillProgress} line is logged. One {@link CommittedChunk} per chunk is
 * emitted.
 *
 * <p>The chunk's bronze commit touches neither the stream's transaction id nor its domains
 * (position, batch stats), so it and the stream's batch commits rebase on each other (Delta's
 * blind-append rule) and never conflict: chunks commit beside a running stream.
 *
 * <h2>Order and replays</h2>
 *
 * The committer expects first the chunk after the last one the facts table records ({@link
 * ChunkedSnapshotFacts.State#nextChunk()}, read on first use) and keeps chunks that arrive early in
 * its state (descriptions only: file actions and counts, never rows). A chunk at or below the
 * chunks already committed is a replay: bronze's transaction id skips its append (its new files
 * stay unreferenced; {@code VACUUM} removes them), its facts row is written from bronze's domain
 * when it is missing, and nothing is appended twice. So after a crash at most the last
 * bronze-committed chunk lacks its facts row, which the rerun (or {@link #repair}) writes.
 *
 * <p>No window, trigger or {@code GroupByKey} decides when a chunk commits: a stateful {@code DoFn}
 * in the global window, in a bounded pipeline or in a streaming one beside the change stream.
 */
public final class WriteChunksToDelta extends PTransform<PBegin, PCollection<CommittedChunk>> {
  private static final Logger LOG = LoggerFactory.getLogger(WriteChunksToDelta.class);
  private static final ObjectMapper JSON = new ObjectMapper();

  private final MssqlCdcIO.SnapshotChunks read;
  private final ChunkedSnapshotSpec spec;
  private final HadoopConf hadoopConf;
  private final @Nullable CrashPlan crash;
  private final boolean waveLines;

  private WriteChunksToDelta(
      MssqlCdcIO.SnapshotChunks read,
      ChunkedSnapshotSpec spec,
      HadoopConf hadoopConf,
      @Nullable CrashPlan crash,
      boolean waveLines) {
    this.read = read;
    this.spec = spec;
    this.hadoopConf = hadoopConf;
    this.crash = crash;
    this.waveLines = waveLines;
  }

  /**
   * Reads the chunks {@code read} is configured with and commits them to {@code spec}'s tables
   * (which must exist). The read's S defaults to the spec's.
   *
   * @throws IllegalArgumentException when the read's S or capture instance is not the spec's, or a
   *     chunk's index is not in the plan
   */
  public static WriteChunksToDelta of(MssqlCdcIO.SnapshotChunks read, ChunkedSnapshotSpec spec) {
    Objects.requireNonNull(read, "read");
    Objects.requireNonNull(spec, "spec");
    Lsn s = read.getSnapshotLsn();
    if (s == null) {
      read = read.withSnapshotLsn(spec.s());
    } else if (!s.equals(spec.s())) {
      throw new IllegalArgumentException(
          "The chunk read's snapshotLsn " + s + " is not the open snapshot's S " + spec.s());
    }
    SourceConfiguration source = read.getSourceConfiguration();
    String ci = source == null ? null : source.getCaptureInstance();
    if (ci != null && !ci.equalsIgnoreCase(spec.captureInstance())) {
      throw new IllegalArgumentException(
          "The chunk read's capture instance "
              + ci
              + " is not the snapshot's "
              + spec.captureInstance());
    }
    int planned = spec.plan().chunkCount();
    for (org.lakecdc.io.mssqlcdc.chunk.Chunk chunk : read.getChunks()) {
      if (chunk.index() >= planned) {
        throw new IllegalArgumentException(
            "Chunk "
                + chunk.index()
                + " is not in the plan of snapshot "
                + spec.s()
                + ", which has chunks 0 to "
                + (planned - 1));
      }
    }
    return new WriteChunksToDelta(read, spec, HadoopConf.empty(), null, true);
  }

  /**
   * The same write with this Hadoop configuration on every worker (file systems, {@code
   * delta.kernel.default.parquet.writer.targetMaxFileSize}).
   */
  public WriteChunksToDelta withHadoopConf(HadoopConf conf) {
    return new WriteChunksToDelta(
        read, spec, Objects.requireNonNull(conf, "conf"), crash, waveLines);
  }

  /**
   * The same write without the committer's progress line per wave, for a launcher that prints its
   * own after each wave's pipeline (the Backfill job): one line per wave on the console.
   */
  public WriteChunksToDelta withoutWaveLines() {
    return new WriteChunksToDelta(read, spec, hadoopConf, crash, false);
  }

  /**
   * Crash tests: the same write, stopping a chunk's commit where {@code plan} says ({@link
   * CrashPlan#chunk}, {@link CrashPlan#firstChunk}; null: never).
   */
  public WriteChunksToDelta withCrash(@Nullable CrashPlan plan) {
    return new WriteChunksToDelta(read, spec, hadoopConf, plan, waveLines);
  }

  @Override
  public PCollection<CommittedChunk> expand(PBegin input) {
    SnapshotFileSink sink =
        SnapshotFileSink.forChunks(
            spec.bronzePath(), spec.s().toString(), hadoopConf.entries(), null);
    return input
        .apply("Read and write chunks", read.writeTo(sink))
        .apply("Key by app id", WithKeys.of(spec.appId()))
        .setCoder(KvCoder.of(StringUtf8Coder.of(), ChunkRead.coder(SnapshotFiles.coder())))
        .apply(
            "Commit chunks in order",
            ParDo.of(new CommitInOrder(spec, hadoopConf, crash, waveLines)))
        .setCoder(SerializableCoder.of(CommittedChunk.class));
  }

  @Override
  public void populateDisplayData(DisplayData.Builder builder) {
    super.populateDisplayData(builder);
    builder
        .add(DisplayData.item("bronzePath", spec.bronzePath()))
        .add(DisplayData.item("factsPath", spec.factsPath()))
        .add(DisplayData.item("snapshot", spec.s().toString()))
        .add(DisplayData.item("chunks", read.getChunks().size()));
  }

  /**
   * Launcher repair after a crash (docs/behaviour.md §6.9): writes the {@code snapshot_chunk} facts
   * row of the chunk bronze holds but the facts table lacks (rebuilt from bronze's {@link
   * ChunkedSnapshotFacts#BRONZE_DOMAIN}: chunks commit in order, so it is the last one), then the
   * completion row when every planned chunk is recorded and none is written. Idempotent.
   *
   * @param tables the Delta tables
   * @param spec the snapshot; its bronze and facts tables must exist
   * @return the facts rows written: 0, 1 or 2
   * @throws IllegalStateException when bronze's chunk transaction is ahead of its domain (a chunk
   *     committed by other means)
   */
  public static int repair(DeltaTables tables, ChunkedSnapshotSpec spec) {
    Committer committer = new Committer(spec, tables, null, false);
    return committer.repair();
  }

  /**
   * The commit sequence of a snapshot's chunks, shared by the stateful committer and {@link
   * #repair}.
   */
  static final class Committer {
    private final ChunkedSnapshotSpec spec;
    private final DeltaTables tables;
    private final @Nullable CrashPlan crash;
    private final boolean waveLines;
    private final Map<Integer, String[]> bounds = new HashMap<>();
    private @Nullable Instant runStarted;
    private int runChunks;
    private long runRows;
    private boolean crashed;

    Committer(
        ChunkedSnapshotSpec spec,
        DeltaTables tables,
        @Nullable CrashPlan crash,
        boolean waveLines) {
      this.waveLines = waveLines;
      this.spec = spec;
      this.tables = tables;
      this.crash = crash;
      JsonNode plan = parse(spec.plan().chunksJson());
      for (JsonNode chunk : plan) {
        bounds.put(
            chunk.get(0).asInt(), new String[] {chunk.get(1).toString(), chunk.get(2).toString()});
      }
    }

    /** The snapshot as the facts table tells it now (this S only). */
    Optional<ChunkedSnapshotFacts.State> state() {
      return ChunkedSnapshotFacts.read(tables, spec.factsPath(), spec.appId(), spec.bronzePath())
          .chunked()
          .filter(state -> state.open().s().equals(spec.s()));
    }

    /** The first chunk the facts table does not record. */
    int nextChunk() {
      return state().map(ChunkedSnapshotFacts.State::nextChunk).orElse(0);
    }

    private void crashIf(CrashPoint point, int chunk) {
      if (crash != null && !crashed && crash.stops(CrashPlan.Scope.CHUNK, point, chunk)) {
        crashed = true;
        crash.raise(point, chunk);
      }
    }

    /** The chunk's facts as read now. */
    ChunkFact factOf(ChunkRead<SnapshotFiles> read) {
      String[] b = bounds.get(read.chunk());
      if (b == null) {
        throw new IllegalStateException(
            "Chunk "
                + read.chunk()
                + " of snapshot "
                + spec.s()
                + " of "
                + spec.bronzePath()
                + " is not in its plan of "
                + Counts.of(bounds.size(), "chunk", "chunks"));
      }
      String hi = b[1];
      if ("null".equals(hi) && read.hiRead() != null) {
        hi = ChunkBounds.toJson(read.hiRead(), spec.keyTypes()).toString();
      }
      Instant now = Instant.now();
      return new ChunkFact(
          spec.appId(),
          spec.bronzePath(),
          spec.s(),
          read.chunk(),
          spec.plan().waveOf(read.chunk()),
          b[0],
          hi,
          read.chunk() == spec.plan().chunkCount() - 1,
          read.rows(),
          read.stamp(),
          read.stampCommitTime(),
          read.highLsn(),
          read.highCommitTime(),
          read.startedAt(),
          Math.max(0, now.toEpochMilli() - read.startedAt().toEpochMilli()),
          read.readSeconds());
    }

    /** The chunk bronze's domain records, if it is chunk {@code chunk} of this snapshot. */
    Optional<ChunkFact> bronzeFact(int chunk) {
      return tables
          .domainMetadata(spec.bronzePath(), ChunkedSnapshotFacts.BRONZE_DOMAIN)
          .map(ChunkFact::fromJson)
          .filter(
              f -> f.chunk() == chunk && f.s().equals(spec.s()) && f.appId().equals(spec.appId()));
    }

    /** Commits one chunk (the next in order): bronze, facts, and the completion after the last. */
    CommittedChunk commit(ChunkRead<SnapshotFiles> read) {
      int c = read.chunk();
      ChunkFact fact = factOf(read);
      crashIf(CrashPoint.AFTER_DATA_FILES, c);
      CommitResult bronze =
          tables.commit(
              spec.bronzePath(),
              read.result().files(),
              spec.bronzeAppId(),
              c,
              Map.of(ChunkedSnapshotFacts.BRONZE_DOMAIN, fact.toJson()));
      boolean skipped = !bronze.committed();
      if (skipped) {
        // Committed before (a rerun after a crash): what bronze holds is the chunk, not this read.
        fact =
            bronzeFact(c)
                .orElseThrow(
                    () ->
                        new IllegalStateException(
                            "Chunk "
                                + c
                                + " of snapshot "
                                + spec.s()
                                + " is committed to "
                                + spec.bronzePath()
                                + " (transaction "
                                + spec.bronzeAppId()
                                + ") but bronze's "
                                + ChunkedSnapshotFacts.BRONZE_DOMAIN
                                + " is another chunk's: its facts row cannot be rebuilt"));
        LOG.info(
            "Chunk {} of snapshot {} is already in {}: its read is discarded",
            c,
            spec.s(),
            spec.bronzePath());
      } else {
        runChunks++;
        runRows += fact.rows();
        if (runStarted == null || read.startedAt().isBefore(runStarted)) {
          runStarted = read.startedAt();
        }
      }
      crashIf(CrashPoint.AFTER_BRONZE_COMMIT, c);
      writeFacts(fact);
      crashIf(CrashPoint.AFTER_FACTS_COMMIT, c);
      LOG.info(
          "Chunk {} of snapshot {} (wave {}): {} at {} committed to {}, bronze version {}",
          c,
          spec.s(),
          fact.wave(),
          Counts.of(fact.rows(), "row", "rows"),
          fact.stamp(),
          spec.bronzePath(),
          skipped ? "unchanged" : bronze.version());
      boolean completed = false;
      boolean waveEnd = fact.last() || spec.plan().waveOf(c + 1) != fact.wave();
      if (waveEnd) {
        ChunkedSnapshotFacts.State state = state().orElseThrow();
        if (waveLines) {
          LOG.info(
              BackfillProgress.line(
                  spec.captureInstance(),
                  fact.wave(),
                  state.chunksDone(),
                  spec.plan().chunkCount(),
                  state.rowsDone(),
                  runChunks,
                  runRows,
                  runStarted == null
                      ? 0
                      : (Instant.now().toEpochMilli() - runStarted.toEpochMilli()) / 1e3));
        }
        if (fact.last()) {
          completed = complete(state);
        }
      }
      return new CommittedChunk(
          spec.appId(),
          spec.s().toString(),
          c,
          fact.wave(),
          fact.rows(),
          fact.stamp().toString(),
          skipped ? -1 : bronze.version(),
          skipped,
          completed);
    }

    /** A chunk below the next expected one: recorded before (its facts row if missing). */
    CommittedChunk replay(ChunkRead<SnapshotFiles> read) {
      Optional<ChunkFact> recorded =
          state().map(s -> s.chunks().get(read.chunk())).filter(Objects::nonNull);
      if (recorded.isEmpty()) {
        return commit(read);
      }
      ChunkFact fact = recorded.get();
      return new CommittedChunk(
          spec.appId(),
          spec.s().toString(),
          fact.chunk(),
          fact.wave(),
          fact.rows(),
          fact.stamp().toString(),
          -1,
          true,
          false);
    }

    private void writeFacts(ChunkFact fact) {
      tables.append(
          spec.factsPath(),
          FactsTable.SCHEMA,
          List.of(fact.toRow(Instant.now())),
          spec.chunkFactsAppId(),
          fact.chunk(),
          Map.of());
    }

    /**
     * Writes the completion row when every planned chunk is recorded and no completion is.
     *
     * @return whether it was written now
     */
    boolean complete(ChunkedSnapshotFacts.State state) {
      int total = spec.plan().chunkCount();
      if (state.complete() || state.chunksDone() < total) {
        return false;
      }
      Lsn last = state.maxStamp().orElse(spec.s());
      CommitResult result =
          tables.append(
              spec.factsPath(),
              FactsTable.SCHEMA,
              List.of(
                  ChunkedSnapshotFacts.completionRow(
                      spec.open(), state.rowsDone(), total, last, Instant.now())),
              spec.eventsAppId(),
              spec.open().generation(),
              Map.of());
      if (result.committed()) {
        LOG.info(
            "Chunked snapshot {} of {} complete: {} in {}, last stamp {}",
            spec.s(),
            spec.bronzePath(),
            Counts.of(state.rowsDone(), "row", "rows"),
            Counts.of(total, "chunk", "chunks"),
            last);
      }
      return result.committed();
    }

    /** See {@link WriteChunksToDelta#repair}. */
    int repair() {
      int written = 0;
      ChunkedSnapshotFacts.State state = state().orElse(null);
      int next = state == null ? 0 : state.nextChunk();
      OptionalLong inBronze =
          tables.latestTransactionVersion(spec.bronzePath(), spec.bronzeAppId());
      if (inBronze.isPresent() && inBronze.getAsLong() >= next) {
        long c = inBronze.getAsLong();
        if (c != next) {
          throw new IllegalStateException(
              "Bronze "
                  + spec.bronzePath()
                  + " holds chunk "
                  + c
                  + " of snapshot "
                  + spec.s()
                  + " but the facts table records chunks only up to "
                  + (next - 1)
                  + ": chunks must commit in order; the missing facts rows cannot be rebuilt");
        }
        ChunkFact fact =
            bronzeFact((int) c)
                .orElseThrow(
                    () ->
                        new IllegalStateException(
                            "Bronze "
                                + spec.bronzePath()
                                + " holds chunk "
                                + c
                                + " of snapshot "
                                + spec.s()
                                + " but its "
                                + ChunkedSnapshotFacts.BRONZE_DOMAIN
                                + " is another chunk's"));
        writeFacts(fact);
        LOG.info(
            "Repaired the facts row of chunk {} of snapshot {} of {} from bronze",
            c,
            spec.s(),
            spec.bronzePath());
        written++;
        state = state().orElseThrow();
      }
      if (state != null && complete(state)) {
        written++;
      }
      return written;
    }
  }

  /**
   * The stateful committer (one key per snapshot): commits the next chunk in index order, keeps the
   * ones that arrive early.
   */
  static final class CommitInOrder
      extends DoFn<KV<String, ChunkRead<SnapshotFiles>>, CommittedChunk> {
    private final ChunkedSnapshotSpec spec;
    private final HadoopConf hadoopConf;
    private final @Nullable CrashPlan crash;
    private final boolean waveLines;

    @StateId("pending")
    private final StateSpec<BagState<ChunkRead<SnapshotFiles>>> pendingSpec =
        StateSpecs.bag(ChunkRead.coder(SnapshotFiles.coder()));

    @StateId("next")
    private final StateSpec<ValueState<Integer>> nextSpec = StateSpecs.value(VarIntCoder.of());

    private transient @Nullable Committer committer;

    CommitInOrder(
        ChunkedSnapshotSpec spec,
        HadoopConf hadoopConf,
        @Nullable CrashPlan crash,
        boolean waveLines) {
      this.spec = spec;
      this.hadoopConf = hadoopConf;
      this.crash = crash;
      this.waveLines = waveLines;
    }

    private Committer committer() {
      Committer c = committer;
      if (c == null) {
        c = new Committer(spec, hadoopConf.tables(), crash, waveLines);
        committer = c;
      }
      return c;
    }

    @ProcessElement
    public void process(
        @Element KV<String, ChunkRead<SnapshotFiles>> element,
        @StateId("pending") BagState<ChunkRead<SnapshotFiles>> pendingState,
        @StateId("next") ValueState<Integer> nextState,
        OutputReceiver<CommittedChunk> out) {
      Committer c = committer();
      Integer stored = nextState.read();
      int next = stored == null ? c.nextChunk() : stored;
      ChunkRead<SnapshotFiles> arrived = element.getValue();
      if (arrived.chunk() < next) {
        out.output(c.replay(arrived));
        nextState.write(next);
        return;
      }
      if (arrived.chunk() > next) {
        LOG.info(
            "Chunk {} of snapshot {} waits for chunk {} to commit first",
            arrived.chunk(),
            spec.s(),
            next);
        pendingState.add(arrived);
        nextState.write(next);
        return;
      }
      List<ChunkRead<SnapshotFiles>> pending = new ArrayList<>();
      pendingState.read().forEach(pending::add);
      ChunkRead<SnapshotFiles> chunk = arrived;
      while (chunk != null) {
        out.output(c.commit(chunk));
        next++;
        chunk = null;
        for (int i = 0; i < pending.size(); i++) {
          if (pending.get(i).chunk() == next) {
            chunk = pending.remove(i);
            break;
          }
        }
      }
      nextState.write(next);
      pendingState.clear();
      for (ChunkRead<SnapshotFiles> rest : pending) {
        if (rest.chunk() > next) {
          pendingState.add(rest);
        }
      }
    }
  }

  private static JsonNode parse(String json) {
    try {
      return JSON.readTree(json);
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException("Not JSON: " + json, e);
    }
  }
}
