package org.lakecdc.transforms.snapshot;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.beam.sdk.coders.AtomicCoder;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.coders.KvCoder;
import org.apache.beam.sdk.coders.NullableCoder;
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
import org.apache.beam.sdk.util.BackOff;
import org.apache.beam.sdk.util.FluentBackoff;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PBegin;
import org.apache.beam.sdk.values.PCollection;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.joda.time.Duration;
import org.lakecdc.io.mssqlcdc.MssqlCdcIO;
import org.lakecdc.io.mssqlcdc.SourceConfiguration;
import org.lakecdc.io.mssqlcdc.chunk.AfterChunkRead;
import org.lakecdc.io.mssqlcdc.chunk.Chunk;
import org.lakecdc.io.mssqlcdc.chunk.ChunkBounds;
import org.lakecdc.io.mssqlcdc.chunk.ChunkRead;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.transforms.Counts;
import org.lakecdc.transforms.bronze.CrashPlan;
import org.lakecdc.transforms.bronze.CrashPoint;
import org.lakecdc.transforms.delta.CommitResult;
import org.lakecdc.transforms.delta.DeltaTables;
import org.lakecdc.transforms.delta.HadoopConf;
import org.lakecdc.transforms.delta.KernelRetries;
import org.lakecdc.transforms.delta.TableMarkers;
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
 *   _chunk = index), then committed there when chunk c - 1 is recorded (waiting a bounded time)
 *   ── (chunk read, files or its commit) ── key by app id ── in index order (stateful, one key
 *   per snapshot): commit the chunks the readers handed over, completion row
 * </pre>
 *
 * <p>Per chunk c, in order: one bronze commit (no data file for an empty chunk) with transaction id
 * {@code (ChunkedSnapshotFacts.bronzeAppId(appId, S), c)} and the domain {@link
 * ChunkedSnapshotFacts#BRONZE_DOMAIN} = the chunk's {@link ChunkFact#toJson()}; then its {@code
 * snapshot_chunk} facts row ({@link ChunkFact#toRow}) with {@code (chunkFactsAppId(appId, S), c)};
 * after the plan's last chunk, the snapshot's completion row ({@link
 * ChunkedSnapshotFacts#completionRow}) with {@code (eventsAppId, generation)}. One {@link
 * CommittedChunk} per chunk is emitted. The progress lines ({@link BackfillProgress}: one per wave,
 * and the completion) are not printed here, where a cluster's worker runs this, but by the launcher
 * that waits on the pipeline, from the facts table's rows as it records them (the pipelines
 * module's {@code WaveProgress}); the committer logs its own passing of a wave's end and the
 * completion to the log file only ({@code org.lakecdc.detail}).
 *
 * <p>The chunk's bronze commit touches neither the stream's transaction id nor its domains
 * (position, batch stats), so it and the stream's batch commits rebase on each other (Delta's
 * blind-append rule) and never conflict: chunks commit beside a running stream.
 *
 * <h2>Who commits a chunk</h2>
 *
 * The reader of chunk c commits it right after writing its files, on the same worker thread ({@link
 * CommitAfterRead}), once the facts table records chunk c - 1's row (chunk 0: at once). So on every
 * runner (Direct, Spark and Flink, bounded or streaming) a chunk is committed as soon as it and
 * every chunk before it are read, not when the runner hands the reads' outputs on (Spark's and
 * Flink's batch modes run a stateful step only after the whole reading stage). It waits for chunk c
 * - 1 at most as long as its own read took, 2 s to 60 s, then hands its files to the ordered
 * committer downstream, the backstop, which commits the chunks handed to it in index order with the
 * same code ({@link Committer#write}). Chunk c waits for c - 1's facts row, not only its bronze
 * commit, so that at most one chunk lacks its facts row whatever crashes. A reader hands over at
 * once when a chunk before its own was handed over in the same run on any worker: each hand-over is
 * a marker in bronze's {@code _chunk_handovers} folder that the run's readers on every executor or
 * task manager list while they wait ({@link CommitAfterRead}).
 *
 * <h2>Order and replays</h2>
 *
 * The committer takes the chunks in index order from the read's first chunk (or the first the facts
 * table does not record, when lower) and keeps chunks that arrive early in its state (descriptions
 * only: file actions and counts, never rows); it writes the completion row, so it still comes after
 * the chunks' commits. A chunk at or below the chunks already committed is a replay: bronze's
 * transaction id skips its append (its new files stay unreferenced; {@code VACUUM} removes them),
 * its facts row is written from bronze's domain when it is missing, and nothing is appended twice.
 * So after a crash at most the last bronze-committed chunk lacks its facts row, which the rerun (or
 * {@link #repair}) writes.
 *
 * <p>No window, trigger or {@code GroupByKey} decides when a chunk commits: a stateful {@code DoFn}
 * in the global window, in a bounded pipeline or in a streaming one beside the change stream.
 */
public final class WriteChunksToDelta extends PTransform<PBegin, PCollection<CommittedChunk>> {
  private static final Logger LOG = LoggerFactory.getLogger(WriteChunksToDelta.class);

  /**
   * Who commits which chunk and in what order (a reader handing its chunk over, the ordered
   * committer holding a chunk that came early): under {@code org.lakecdc.detail}, log file only.
   */
  private static final Logger DETAIL =
      LoggerFactory.getLogger("org.lakecdc.detail." + WriteChunksToDelta.class.getSimpleName());

  private static final ObjectMapper JSON = new ObjectMapper();

  private final MssqlCdcIO.SnapshotChunks read;
  private final ChunkedSnapshotSpec spec;
  private final HadoopConf hadoopConf;
  private final @Nullable CrashPlan crash;

  private WriteChunksToDelta(
      MssqlCdcIO.SnapshotChunks read,
      ChunkedSnapshotSpec spec,
      HadoopConf hadoopConf,
      @Nullable CrashPlan crash) {
    this.read = read;
    this.spec = spec;
    this.hadoopConf = hadoopConf;
    this.crash = crash;
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
    for (Chunk chunk : read.getChunks()) {
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
    return new WriteChunksToDelta(read, spec, HadoopConf.empty(), null);
  }

  /**
   * The same write with this Hadoop configuration on every worker (file systems, {@code
   * delta.kernel.default.parquet.writer.targetMaxFileSize}).
   */
  public WriteChunksToDelta withHadoopConf(HadoopConf conf) {
    return new WriteChunksToDelta(read, spec, Objects.requireNonNull(conf, "conf"), crash);
  }

  /**
   * Crash tests: the same write, stopping a chunk's commit where {@code plan} says ({@link
   * CrashPlan#chunk}, {@link CrashPlan#firstChunk}; null: never).
   */
  public WriteChunksToDelta withCrash(@Nullable CrashPlan plan) {
    return new WriteChunksToDelta(read, spec, hadoopConf, plan);
  }

  @Override
  public PCollection<CommittedChunk> expand(PBegin input) {
    SnapshotFileSink sink =
        SnapshotFileSink.forChunks(
            spec.bronzePath(), spec.s().toString(), hadoopConf.entries(), null);
    int first = read.getChunks().stream().mapToInt(Chunk::index).min().orElse(0);
    String run = UUID.randomUUID().toString();
    return input
        .apply(
            "Read, write and commit chunks",
            read.writeTo(sink, new CommitAfterRead(spec, hadoopConf, crash, run)))
        .apply("Key by app id", WithKeys.of(spec.appId()))
        .setCoder(KvCoder.of(StringUtf8Coder.of(), ChunkRead.coder(ReadChunk.coder())))
        .apply(
            "Commit chunks in order",
            ParDo.of(new CommitInOrder(spec, hadoopConf, crash, first, run)))
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
    Committer committer = new Committer(spec, tables, null, false, null);
    return committer.repair();
  }

  /**
   * The commit sequence of a snapshot's chunks, shared by the stateful committer and {@link
   * #repair}.
   */
  static final class Committer {
    /**
     * The runs (in this JVM) a simulated crash stopped, and the crash: their committers commit
     * nothing more.
     */
    private static final Map<String, RuntimeException> CRASHED_RUNS = new ConcurrentHashMap<>();

    /**
     * The runs (in this JVM) whose simulated crash is about to happen, by {@link #announceCrash}.
     */
    private static final Map<String, RuntimeException> CRASHING_RUNS = new ConcurrentHashMap<>();

    private final ChunkedSnapshotSpec spec;
    private final DeltaTables tables;
    private final @Nullable CrashPlan crash;

    /** Whether a wave's end is logged (the ordered committer's, to the log file only). */
    private final boolean waveLines;

    private final Map<Integer, String[]> bounds = new HashMap<>();
    private boolean crashed;
    private final @Nullable String run;

    Committer(
        ChunkedSnapshotSpec spec,
        DeltaTables tables,
        @Nullable CrashPlan crash,
        boolean waveLines,
        @Nullable String run) {
      this.run = run;
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
        try {
          crash.raise(point, chunk);
        } catch (RuntimeException e) {
          if (run != null) {
            CRASHED_RUNS.put(run, e);
          }
          throw e;
        }
      }
    }

    /**
     * Crash tests: a crash planned right after the commit about to be made is recorded for the run
     * before that commit is visible, so that no other reader of the run starts its own commit on
     * seeing it (a crashed JVM's threads would not): {@link #write} refuses to start one. A reader
     * still waiting is not stopped by it (it would fail the run before that commit is made).
     */
    private void announceCrash(CrashPoint point, int chunk) {
      if (crash != null
          && !crashed
          && run != null
          && crash.stops(CrashPlan.Scope.CHUNK, point, chunk)) {
        CRASHING_RUNS.putIfAbsent(run, new CrashPoint.SimulatedCrash(point, chunk));
      }
    }

    /**
     * Crash tests: after a simulated crash in one thread of a run, the run's other committers (the
     * other chunks' readers) stop too, as a crashed JVM's would.
     *
     * @throws IllegalStateException when a simulated crash stopped this run (caused by that crash)
     */
    void stopIfCrashed(int chunk) {
      RuntimeException stopped = run == null ? null : CRASHED_RUNS.get(run);
      if (crash != null && stopped != null) {
        throw new IllegalStateException(
            "Chunk "
                + chunk
                + " of snapshot "
                + spec.s()
                + " is not committed: a simulated crash ("
                + crash
                + ") stopped this run",
            stopped);
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
      return finish(write(read));
    }

    /**
     * The chunk's commit, made by its reader or by the ordered committer (every chunk before it is
     * recorded): its bronze commit, then its {@code snapshot_chunk} facts row, with the crash
     * points between them; the returned chunk is not yet {@link #finish}ed.
     */
    CommittedChunk write(ChunkRead<SnapshotFiles> read) {
      int c = read.chunk();
      stopIfCrashed(c);
      RuntimeException crashing = run == null ? null : CRASHING_RUNS.get(run);
      if (crash != null && crashing != null) {
        throw new IllegalStateException(
            "Chunk "
                + c
                + " of snapshot "
                + spec.s()
                + " is not committed: "
                + crashing.getMessage(),
            crashing);
      }
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
                .or(() -> recordedFact(c))
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
      }
      crashIf(CrashPoint.AFTER_BRONZE_COMMIT, c);
      announceCrash(CrashPoint.AFTER_FACTS_COMMIT, c);
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
      return new CommittedChunk(
          spec.appId(),
          spec.s().toString(),
          c,
          fact.wave(),
          fact.rows(),
          fact.stamp().toString(),
          skipped ? -1 : bronze.version(),
          skipped,
          false);
    }

    /**
     * What follows a chunk's commit in index order, in the ordered committer: at a wave's end a
     * line in the log file (the console's progress line is the launcher's), the completion row
     * after the plan's last chunk.
     *
     * @param chunk the chunk as {@link #write} returned it
     * @return the chunk, {@code completed} when its completion row was written now
     */
    CommittedChunk finish(CommittedChunk chunk) {
      int c = chunk.chunk();
      boolean last = c == spec.plan().chunkCount() - 1;
      boolean completed = false;
      if (waveLines && (last || spec.plan().waveOf(c + 1) != chunk.wave())) {
        DETAIL.info(
            "Wave {} of snapshot {} of {} is committed up to its last chunk, {}",
            chunk.wave(),
            spec.s(),
            spec.bronzePath(),
            c);
      }
      if (last) {
        completed = complete(state().orElseThrow());
      }
      return completed
          ? new CommittedChunk(
              chunk.appId(),
              chunk.snapshot(),
              c,
              chunk.wave(),
              chunk.rows(),
              chunk.stamp(),
              chunk.bronzeVersion(),
              chunk.skipped(),
              true)
          : chunk;
    }

    /** The chunk's facts row as the facts table records it, if it does. */
    private Optional<ChunkFact> recordedFact(int chunk) {
      return state().map(s -> s.chunks().get(chunk)).filter(Objects::nonNull);
    }

    /**
     * The last chunk whose row the facts table records (its transaction id; rows are written in
     * index order), or -1: from the table's latest version, one listing while it is unchanged.
     */
    long lastRecorded() {
      return tables.latestTransactionVersion(spec.factsPath(), spec.chunkFactsAppId()).orElse(-1);
    }

    /** A chunk below the next expected one: recorded before (its facts row if missing). */
    CommittedChunk replay(ChunkRead<SnapshotFiles> read) {
      Optional<ChunkFact> recorded = recordedFact(read.chunk());
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
        // The console's line is the launcher's, once the facts table records the row.
        DETAIL.info(
            BackfillProgress.completion(
                spec.s(), spec.bronzePath(), state.rowsDone(), total, last));
        CommitAfterRead.deleteHandOvers(tables, spec);
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
   * What the reading stage emits per chunk: its files when its reader handed it to the ordered
   * committer, or its commit when the reader made it (its files are then committed and left out).
   *
   * @param files the chunk's data files, uncommitted ({@code committed} null), or none
   * @param committed the reader's commit of the chunk ({@link Committer#write}), or null
   */
  record ReadChunk(SnapshotFiles files, @Nullable CommittedChunk committed) {
    static Coder<ReadChunk> coder() {
      return ReadChunkCoder.INSTANCE;
    }
  }

  private static final class ReadChunkCoder extends AtomicCoder<ReadChunk> {
    static final ReadChunkCoder INSTANCE = new ReadChunkCoder();
    private static final Coder<@Nullable CommittedChunk> COMMITTED =
        NullableCoder.of(SerializableCoder.of(CommittedChunk.class));

    @Override
    public void encode(ReadChunk value, OutputStream out) throws IOException {
      SnapshotFiles.coder().encode(value.files(), out);
      COMMITTED.encode(value.committed(), out);
    }

    @Override
    public ReadChunk decode(InputStream in) throws IOException {
      SnapshotFiles files = SnapshotFiles.coder().decode(in);
      return new ReadChunk(files, COMMITTED.decode(in));
    }
  }

  /**
   * The reader's commit: right after chunk c's files are written, on the thread that wrote them,
   * commits the chunk ({@link Committer#write}) when the facts table records chunk c - 1's row (c =
   * 0: none before it), waiting for it at most as long as chunk c's own read took, from {@value
   * #MIN_WAIT_SECONDS} s to {@value #MAX_WAIT_SECONDS} s (Spark and Flink start a stage's tasks in
   * index order, so chunk c - 1 is being read or done). Otherwise it hands the chunk's files to the
   * ordered committer: when the wait ran out, when the facts table already records chunk c (a
   * retried read, a rerun), and at once when a chunk between the recorded ones and c was handed
   * over in this run, on any worker (its commit waits for the committer, and so do the chunks after
   * it). A waiting task never holds its slot longer than the bound, so a retried predecessor gets
   * one.
   *
   * <h2>The hand-over record, shared by every worker</h2>
   *
   * Each hand-over is recorded in this JVM and as a marker file in bronze's hidden folder {@code
   * _chunk_handovers/<S>/<run id>/<chunk index>} (the reason as its content, {@link TableMarkers}),
   * on the file system the chunk's data files go to, so the readers of a run on other executors or
   * task managers see it: while a reader waits, each poll checks this JVM's record and then lists
   * the run's markers (one listing a poll, never per row). The markers only shorten waits: a marker
   * missing (a failed write is logged) or left over changes who commits a chunk, never what is
   * committed. They are the run's alone: a rerun and each wave of a {@code Backfill} build a new
   * pipeline with a new run id, so they commit their chunks themselves again whatever a crashed run
   * left; a retried read of chunk c ignores chunk c's own marker (only chunks before c block it)
   * and commits the chunk itself once c - 1 is recorded, and a marker of a chunk the facts table
   * records no longer counts. The snapshot's completion deletes the folder {@code _chunk_handovers}
   * (the markers of every run of it, crashed ones included, and of older snapshots of the table,
   * which never complete).
   */
  static final class CommitAfterRead implements AfterChunkRead<SnapshotFiles, ReadChunk> {
    private static final long serialVersionUID = 1L;
    static final int MIN_WAIT_SECONDS = 2;
    static final int MAX_WAIT_SECONDS = 60;

    /** Bronze's hidden folder of the hand-over markers. */
    static final String HAND_OVERS = "_chunk_handovers";

    /** By run: the chunks handed to the committer in this JVM, and why. */
    private static final Map<String, Map<Integer, String>> HANDED_OVER = new ConcurrentHashMap<>();

    private final ChunkedSnapshotSpec spec;
    private final HadoopConf hadoopConf;
    private final @Nullable CrashPlan crash;
    private final String run;
    private transient @Nullable Committer committer;
    private transient @Nullable TableMarkers markers;
    private transient boolean listingFailed;

    CommitAfterRead(
        ChunkedSnapshotSpec spec, HadoopConf hadoopConf, @Nullable CrashPlan crash, String run) {
      this.spec = spec;
      this.hadoopConf = hadoopConf;
      this.crash = crash;
      this.run = run;
    }

    @Override
    public void setup() {
      committer = new Committer(spec, hadoopConf.tables(), crash, false, run);
      markers = runMarkers(hadoopConf.tables(), spec, run);
    }

    /** The markers of one run's hand-overs, named by chunk index. */
    static TableMarkers runMarkers(DeltaTables tables, ChunkedSnapshotSpec spec, String run) {
      return tables.markers(spec.bronzePath(), HAND_OVERS + "/" + spec.s() + "/" + run);
    }

    /**
     * Deletes the hand-over markers of every run of every snapshot of {@code spec}'s bronze table:
     * at the snapshot's completion. A failure is logged, not thrown (they are no Delta files).
     */
    static void deleteHandOvers(DeltaTables tables, ChunkedSnapshotSpec spec) {
      try {
        tables.markers(spec.bronzePath(), HAND_OVERS).deleteAll();
      } catch (IOException | UncheckedIOException e) {
        LOG.warn(
            "Cannot delete the chunk hand-over markers in {}/{} after snapshot {} completed ({});"
                + " they are no Delta files and may be deleted by hand",
            spec.bronzePath(),
            HAND_OVERS,
            spec.s(),
            e.toString());
      }
    }

    @Override
    public ReadChunk afterRead(ChunkRead<SnapshotFiles> read) {
      Committer c = committer;
      if (c == null) {
        setup();
        c = Objects.requireNonNull(committer);
      }
      double wait = Math.min(MAX_WAIT_SECONDS, Math.max(MIN_WAIT_SECONDS, read.readSeconds()));
      if (!predecessorRecorded(c, read.chunk(), Duration.millis(Math.round(wait * 1000)))) {
        return new ReadChunk(read.result(), null);
      }
      CommittedChunk committed = c.write(read);
      return new ReadChunk(new SnapshotFiles(read.result().rows(), List.of()), committed);
    }

    /** Whether chunk c - 1 is recorded and c is not, waiting at most {@code wait} for it. */
    private boolean predecessorRecorded(Committer c, int chunk, Duration wait) {
      BackOff backOff =
          FluentBackoff.DEFAULT
              .withInitialBackoff(Duration.millis(20))
              // A poll is one listing of the facts log's next version and one of the run's
              // markers: cheap, so at most 0.2 s between them, and the commit follows its
              // predecessor's within that.
              .withMaxBackoff(Duration.millis(200))
              .withMaxCumulativeBackoff(wait)
              .backoff();
      while (true) {
        c.stopIfCrashed(chunk);
        long recorded = c.lastRecorded();
        if (recorded >= chunk) {
          DETAIL.info(
              "Chunk {} of snapshot {} is recorded already: its read goes to the ordered committer",
              chunk,
              spec.s());
          return false;
        }
        if (recorded == chunk - 1) {
          return true;
        }
        String blocked = handedOverBefore(recorded, chunk);
        if (blocked != null || !KernelRetries.pause(backOff)) {
          handOver(
              chunk,
              blocked != null
                  ? blocked
                  : "chunk "
                      + (recorded + 1)
                      + " is not committed after "
                      + wait.getMillis()
                      + " ms");
          return false;
        }
      }
    }

    /**
     * Why chunk {@code chunk} must go to the ordered committer at once: the first chunk after the
     * recorded ones and before it that was handed over in this run, in this JVM's record or else in
     * the run's markers (one listing); null when none was.
     */
    private @Nullable String handedOverBefore(long recorded, int chunk) {
      int here = firstBetween(HANDED_OVER.getOrDefault(run, Map.of()).keySet(), recorded, chunk);
      if (here >= 0) {
        return "chunk " + here + " was handed to the ordered committer";
      }
      Set<Integer> shared = new HashSet<>();
      try {
        for (String name : markers().names()) {
          if (name.chars().allMatch(Character::isDigit) && name.length() < 10) {
            shared.add(Integer.parseInt(name));
          }
        }
      } catch (IOException | UncheckedIOException e) {
        if (!listingFailed) {
          listingFailed = true;
          LOG.warn(
              "Cannot list the chunk hand-over markers {} ({}): chunk {} of snapshot {} waits its"
                  + " bound for chunk {}",
              markers().folder(),
              e.toString(),
              chunk,
              spec.s(),
              chunk - 1);
        }
      }
      int elsewhere = firstBetween(shared, recorded, chunk);
      return elsewhere < 0
          ? null
          : "chunk " + elsewhere + " was handed to the ordered committer by another worker";
    }

    /** The lowest of {@code chunks} above {@code recorded} and below {@code chunk}, or -1. */
    private static int firstBetween(Set<Integer> chunks, long recorded, int chunk) {
      int first = -1;
      for (int c : chunks) {
        if (c > recorded && c < chunk && (first < 0 || c < first)) {
          first = c;
        }
      }
      return first;
    }

    /** Records the hand-over of {@code chunk} in this JVM and as the run's marker. */
    private void handOver(int chunk, String reason) {
      HANDED_OVER.computeIfAbsent(run, r -> new ConcurrentHashMap<>()).put(chunk, reason);
      try {
        markers().put(Integer.toString(chunk), reason);
      } catch (IOException | UncheckedIOException e) {
        LOG.warn(
            "Cannot record the hand-over of chunk {} of snapshot {} in {} ({}): chunks after it read"
                + " on other workers wait their bound before they hand over too",
            chunk,
            spec.s(),
            markers().folder(),
            e.toString());
      }
      DETAIL.info(
          "Chunk {} of snapshot {}: {}: the ordered committer commits it", chunk, spec.s(), reason);
    }

    private TableMarkers markers() {
      TableMarkers m = markers;
      if (m == null) {
        m = runMarkers(hadoopConf.tables(), spec, run);
        markers = m;
      }
      return m;
    }

    /** Tests: whether a run in this JVM handed chunk {@code chunk} to the ordered committer. */
    static boolean handedOver(int chunk) {
      return HANDED_OVER.values().stream().anyMatch(chunks -> chunks.containsKey(chunk));
    }

    /** Tests: this JVM's record, by run: the chunks handed to the ordered committer and why. */
    static Map<String, Map<Integer, String>> handOvers() {
      Map<String, Map<Integer, String>> copy = new HashMap<>();
      HANDED_OVER.forEach((r, chunks) -> copy.put(r, Map.copyOf(chunks)));
      return copy;
    }

    /**
     * Tests: forgets this JVM's record of hand-overs, as a worker JVM started after them would have
     * none (the runs' markers stay).
     */
    static void forgetHandOversInThisJvm() {
      HANDED_OVER.clear();
    }

    @Override
    public Coder<ReadChunk> resultCoder() {
      return ReadChunk.coder();
    }

    @Override
    public void teardown() {
      committer = null;
      markers = null;
    }
  }

  /**
   * The stateful committer (one key per snapshot): takes each chunk in index order, from the first
   * chunk of the read (or the first the facts table does not record, when lower), keeps the ones
   * that arrive early; a chunk its reader committed gets what follows a commit ({@link
   * Committer#finish}), any other is committed here unless the facts table records it already.
   */
  static final class CommitInOrder extends DoFn<KV<String, ChunkRead<ReadChunk>>, CommittedChunk> {
    private final ChunkedSnapshotSpec spec;
    private final HadoopConf hadoopConf;
    private final @Nullable CrashPlan crash;
    private final int first;
    private final String run;

    @StateId("pending")
    private final StateSpec<BagState<ChunkRead<ReadChunk>>> pendingSpec =
        StateSpecs.bag(ChunkRead.coder(ReadChunk.coder()));

    @StateId("next")
    private final StateSpec<ValueState<Integer>> nextSpec = StateSpecs.value(VarIntCoder.of());

    private transient @Nullable Committer committer;

    CommitInOrder(
        ChunkedSnapshotSpec spec,
        HadoopConf hadoopConf,
        @Nullable CrashPlan crash,
        int first,
        String run) {
      this.spec = spec;
      this.hadoopConf = hadoopConf;
      this.crash = crash;
      this.first = first;
      this.run = run;
    }

    private Committer committer() {
      Committer c = committer;
      if (c == null) {
        c = new Committer(spec, hadoopConf.tables(), crash, true, run);
        committer = c;
      }
      return c;
    }

    /** The chunk, in index order: finished after its reader's commit, else committed here. */
    private static CommittedChunk inOrder(Committer c, ChunkRead<ReadChunk> read) {
      CommittedChunk byReader = read.result().committed();
      if (byReader != null) {
        return c.finish(byReader);
      }
      ChunkRead<SnapshotFiles> files = read.withResult(read.result().files());
      return c.lastRecorded() >= read.chunk() ? c.replay(files) : c.commit(files);
    }

    @ProcessElement
    public void process(
        @Element KV<String, ChunkRead<ReadChunk>> element,
        @StateId("pending") BagState<ChunkRead<ReadChunk>> pendingState,
        @StateId("next") ValueState<Integer> nextState,
        OutputReceiver<CommittedChunk> out) {
      Committer c = committer();
      Integer stored = nextState.read();
      int next = stored == null ? Math.min(first, c.nextChunk()) : stored;
      ChunkRead<ReadChunk> arrived = element.getValue();
      if (arrived.chunk() < next) {
        CommittedChunk byReader = arrived.result().committed();
        out.output(
            byReader != null ? byReader : c.replay(arrived.withResult(arrived.result().files())));
        nextState.write(next);
        return;
      }
      if (arrived.chunk() > next) {
        DETAIL.info(
            arrived.result().committed() != null
                ? "Chunk {} of snapshot {} (committed by its reader) is counted after chunk {}"
                : "Chunk {} of snapshot {} waits for chunk {} to commit first",
            arrived.chunk(),
            spec.s(),
            next);
        pendingState.add(arrived);
        nextState.write(next);
        return;
      }
      List<ChunkRead<ReadChunk>> pending = new ArrayList<>();
      pendingState.read().forEach(pending::add);
      ChunkRead<ReadChunk> chunk = arrived;
      while (chunk != null) {
        out.output(inOrder(c, chunk));
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
      for (ChunkRead<ReadChunk> rest : pending) {
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
