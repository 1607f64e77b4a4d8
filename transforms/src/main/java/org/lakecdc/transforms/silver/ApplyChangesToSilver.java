package org.lakecdc.transforms.silver;

import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.beam.sdk.coders.BooleanCoder;
import org.apache.beam.sdk.coders.KvCoder;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.metrics.Metrics;
import org.apache.beam.sdk.state.StateSpec;
import org.apache.beam.sdk.state.StateSpecs;
import org.apache.beam.sdk.state.TimeDomain;
import org.apache.beam.sdk.state.Timer;
import org.apache.beam.sdk.state.TimerSpec;
import org.apache.beam.sdk.state.TimerSpecs;
import org.apache.beam.sdk.state.ValueState;
import org.apache.beam.sdk.transforms.Create;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.FlatMapElements;
import org.apache.beam.sdk.transforms.Flatten;
import org.apache.beam.sdk.transforms.PTransform;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.SerializableFunction;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.PCollectionList;
import org.apache.beam.sdk.values.TypeDescriptor;
import org.apache.beam.sdk.values.TypeDescriptors;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.joda.time.Duration;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.io.mssqlcdc.read.StopCondition;
import org.lakecdc.transforms.bronze.CommittedBatch;
import org.lakecdc.transforms.bronze.RecordedFailure;
import org.lakecdc.transforms.position.StreamPosition;
import org.lakecdc.transforms.snapshot.CommittedChunk;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps the tables derived from bronze current inside the change pipeline ({@link DerivedTarget}:
 * silver tables, {@link SilverTarget}, and history tables): after each bronze batch of a table is
 * committed (its {@link CommittedBatch}, emitted once bronze's facts row and verdict for it are
 * written), one apply of each of that table's derived tables (for silver {@link
 * SilverApplier#apply}) brings it up to what bronze holds, and caps its verdict at bronze's. What
 * follows says silver; a history table takes the same path, as its own key.
 *
 * <pre>
 * committed batches ── those of tables with silver ── key by path (one key per silver table) ──┐
 * committed chunks ({@link #withChunks}) ── those of tables with silver ── key by path ───────┤
 * continuous ({@link #following}): one tick per silver table at the start ────────────────────┴─
 *   flatten ── Apply to silver (stateful: one apply at a time per table, in arrival order)
 * </pre>
 *
 * <p>The applier is a field of the {@code DoFn} instance, made in {@code @Setup}: its key index
 * (SilverMerge's cache) lives as long as the worker's instance. Each key's state holds the bronze
 * end LSN silver was last applied up to: a batch not after it (a replay, or one an earlier apply
 * already covered) applies nothing; a committed chunk always applies (a wave of a chunked snapshot
 * is not an LSN after it). An apply reads bronze from silver's own position (silver's domain
 * metadata), so it is idempotent and a crash anywhere is repaired by the next one; the job's
 * launcher also applies once after the pipeline, so a run that commits nothing still brings silver
 * up to bronze.
 *
 * <p>Failures: with one table ({@code isolate} false) a failed apply fails the pipeline. With many
 * tables a failed apply stops that table's silver alone for the rest of the run: a {@code
 * table_failed} facts row ({@link RecordedFailure}, target = the silver path, message starting with
 * {@code silver}) and a warning; bronze, and the other tables, go on. The launcher reads the record
 * and exits with code 3.
 *
 * <p>Bounded and continuous: in the bounded form the committed batches of a table arrive after the
 * bronze commits of the whole run; the first apply brings silver to bronze's end and the others
 * find nothing new. In the continuous form ({@link #following}) a committed batch reaches the apply
 * only when the runner hands the committer's output on, which on the DirectRunner is the end of the
 * committer's bundle: a backlog of many batches read in one bundle would reach silver only after
 * all of them are committed. So each silver table also applies on its own clock: a tick at the
 * pipeline's start applies at once (a silver table a new target needs exists from the start) and
 * sets a processing-time timer; each firing applies whatever bronze holds by then and sets the next
 * one, {@link SilverTarget#applyInterval()} later, until the stop condition holds (the launcher's
 * apply after the pipeline then brings silver to bronze's end). A table whose stream stopped in
 * this run ({@code table_failed}) stops its timer. Stateful processing in the global window:
 * Direct, Spark (batch) and Flink; the timers only in the continuous form (Direct, Flink).
 *
 * <p>Counters per table, namespace {@code lakecdc.table.<appId>}: {@code silver_applies}, {@code
 * silver_waves}, {@code silver_keys_applied}, {@code silver_rebuilds}.
 */
public final class ApplyChangesToSilver
    extends PTransform<PCollection<CommittedBatch>, PCollection<Void>> {
  /** Counter names (namespace {@code lakecdc.table.<appId>}). */
  public static final String APPLIES = "silver_applies";

  /** Waves merged. */
  public static final String WAVES = "silver_waves";

  /** Keys whose images were applied. */
  public static final String KEYS_APPLIED = "silver_keys_applied";

  /** Applies that rebuilt silver from a snapshot. */
  public static final String REBUILDS = "silver_rebuilds";

  private final Map<String, DerivedTarget> targets;
  private final boolean isolate;
  private final transient @Nullable PCollection<CommittedChunk> chunks;
  private final @Nullable StopCondition following;

  private ApplyChangesToSilver(
      Map<String, DerivedTarget> targets,
      boolean isolate,
      @Nullable PCollection<CommittedChunk> chunks,
      @Nullable StopCondition following) {
    this.targets = targets;
    this.isolate = isolate;
    this.chunks = chunks;
    this.following = following;
  }

  /**
   * Also applies after each committed chunk of a chunked snapshot (its {@link CommittedChunk},
   * emitted once the chunk's bronze commit and facts row are written), so silver takes each wave as
   * soon as its last chunk is in. A chunk belongs to the silver table whose app id is its app id,
   * or the stream family's ({@code <appId>} of a generation {@code <appId>.g<n>}); chunks of other
   * tables are ignored. Chunk and batch applies share the table's key (its app id): one apply at a
   * time per silver table. A chunk always applies (its wave is not an LSN after the last batch).
   *
   * @param chunks the committed chunks of the pipeline's chunked snapshots
   * @return a transform applying after batches and chunks alike
   */
  public ApplyChangesToSilver withChunks(PCollection<CommittedChunk> chunks) {
    return new ApplyChangesToSilver(
        targets, isolate, java.util.Objects.requireNonNull(chunks), following);
  }

  /**
   * The continuous form: besides the batch and chunk applies, each silver table applies when the
   * pipeline starts and then at least every {@link SilverTarget#applyInterval()} (a processing-time
   * timer per table) until {@code stop} holds, whatever the runner's bundles; see the class
   * comment. Only in a streaming pipeline (Direct, Flink).
   *
   * @param stop the continuous source's stop condition: once it holds, no timer is set again
   * @return a transform applying on a clock too
   */
  public ApplyChangesToSilver following(StopCondition stop) {
    return new ApplyChangesToSilver(
        targets, isolate, chunks, java.util.Objects.requireNonNull(stop));
  }

  /** The silver table's app id of a chunk's app id, or null when no silver table has it. */
  static @Nullable String targetOf(java.util.Set<String> appIds, String chunkAppId) {
    if (appIds.contains(chunkAppId)) {
      return chunkAppId;
    }
    String family = chunkAppId.replaceFirst("\\.g[0-9]+$", "");
    return appIds.contains(family) ? family : null;
  }

  /**
   * Applies the committed batches of each of {@code targets}' tables (matched by app id; batches of
   * other tables are ignored) to its derived tables: its silver table, its history table, or both.
   *
   * @param targets the derived tables, at most one of each kind per app id
   * @param isolate true in a run of many tables: a failed apply stops that derived table alone
   *     (recorded); false: it fails the pipeline
   * @throws IllegalArgumentException when two tables of one kind share an app id ({@code Two <kind>
   *     tables for the app id <id>}) or two targets share a path
   */
  public static ApplyChangesToSilver of(List<? extends DerivedTarget> targets, boolean isolate) {
    Map<String, DerivedTarget> byPath = new LinkedHashMap<>();
    java.util.Set<String> kinds = new java.util.HashSet<>();
    for (DerivedTarget target : targets) {
      if (!kinds.add(target.kind() + " " + target.appId())) {
        throw new IllegalArgumentException(
            "Two " + target.kind() + " tables for the app id " + target.appId());
      }
      DerivedTarget other = byPath.put(target.path(), target);
      if (other != null) {
        throw new IllegalArgumentException(
            "The tables of "
                + other.appId()
                + " and "
                + target.appId()
                + " would both write the "
                + target.kind()
                + " table "
                + target.path());
      }
    }
    return new ApplyChangesToSilver(byPath, isolate, null, null);
  }

  /** Per app id, the paths of its derived tables, in the order given. */
  private Map<String, List<String>> pathsByAppId() {
    Map<String, List<String>> paths = new LinkedHashMap<>();
    for (DerivedTarget target : targets.values()) {
      paths.computeIfAbsent(target.appId(), a -> new ArrayList<>()).add(target.path());
    }
    return paths;
  }

  @Override
  public PCollection<Void> expand(PCollection<CommittedBatch> committed) {
    Map<String, List<String>> paths = pathsByAppId();
    java.util.Set<String> appIds = new java.util.HashSet<>(paths.keySet());
    KvCoder<String, ApplyTrigger> coder = KvCoder.of(StringUtf8Coder.of(), ApplyTrigger.Coder.of());
    PCollection<KV<String, ApplyTrigger>> triggers =
        committed
            .apply(
                "Key batches by silver table",
                FlatMapElements.into(
                        TypeDescriptors.kvs(
                            TypeDescriptors.strings(), TypeDescriptor.of(ApplyTrigger.class)))
                    .via(
                        (SerializableFunction<CommittedBatch, Iterable<KV<String, ApplyTrigger>>>)
                            b -> keyed(paths.get(b.appId()), ApplyTrigger.of(b))))
            .setCoder(coder);
    PCollectionList<KV<String, ApplyTrigger>> all = PCollectionList.of(triggers);
    if (chunks != null) {
      all =
          all.and(
              chunks
                  .apply(
                      "Key chunks by silver table",
                      FlatMapElements.into(
                              TypeDescriptors.kvs(
                                  TypeDescriptors.strings(), TypeDescriptor.of(ApplyTrigger.class)))
                          .via(
                              (SerializableFunction<
                                      CommittedChunk, Iterable<KV<String, ApplyTrigger>>>)
                                  c -> {
                                    String appId = targetOf(appIds, c.appId());
                                    return keyed(
                                        appId == null ? null : paths.get(appId),
                                        ApplyTrigger.of(c));
                                  }))
                  .setCoder(coder));
    }
    if (following != null) {
      List<KV<String, ApplyTrigger>> ticks = new ArrayList<>();
      for (String path : targets.keySet()) {
        ticks.add(KV.of(path, ApplyTrigger.tick()));
      }
      all =
          all.and(
              committed
                  .getPipeline()
                  .apply("Start each silver's clock", Create.of(ticks).withCoder(coder)));
    }
    if (all.size() > 1) {
      triggers = all.apply("Batches, chunks and ticks", Flatten.pCollections()).setCoder(coder);
    }
    return following == null
        ? triggers.apply("Apply to silver", ParDo.of(new ApplyFn(targets, isolate)))
        : triggers.apply(
            "Apply to silver as bronze grows", ParDo.of(new FollowFn(targets, isolate, following)));
  }

  /** {@code trigger} once per path of {@code paths} (none when null: a table without any). */
  private static List<KV<String, ApplyTrigger>> keyed(
      @Nullable List<String> paths, ApplyTrigger trigger) {
    List<KV<String, ApplyTrigger>> out = new ArrayList<>();
    if (paths != null) {
      for (String path : paths) {
        out.add(KV.of(path, trigger));
      }
    }
    return out;
  }

  /** The stateful apply of one key (path) = one derived table at a time. */
  static class ApplyFn extends DoFn<KV<String, ApplyTrigger>, Void> {
    private final Applies applies;

    /** The bronze end LSN (canonical text) silver was last applied up to. */
    @StateId("appliedUpTo")
    private final StateSpec<ValueState<String>> appliedSpec =
        StateSpecs.value(StringUtf8Coder.of());

    /** True once the table's silver failed in this run (isolated runs only). */
    @StateId("failed")
    private final StateSpec<ValueState<Boolean>> failedSpec = StateSpecs.value(BooleanCoder.of());

    ApplyFn(Map<String, DerivedTarget> targets, boolean isolate) {
      this.applies = new Applies(targets, isolate);
    }

    @Setup
    public void setup() {
      applies.setup();
    }

    @ProcessElement
    public void process(
        @Element KV<String, ApplyTrigger> element,
        @StateId("appliedUpTo") ValueState<String> appliedState,
        @StateId("failed") ValueState<Boolean> failedState) {
      applies.apply(element.getKey(), element.getValue(), appliedState, failedState);
    }
  }

  /**
   * {@link ApplyFn} in a continuous pipeline: the same applies, plus the tick's apply and the
   * processing-time timer that applies again every {@link SilverTarget#applyInterval()} until the
   * stop condition holds or the table's stream stopped in this run.
   */
  static final class FollowFn extends DoFn<KV<String, ApplyTrigger>, Void> {
    private final Applies applies;
    private final StopCondition stop;

    @StateId("appliedUpTo")
    private final StateSpec<ValueState<String>> appliedSpec =
        StateSpecs.value(StringUtf8Coder.of());

    @StateId("failed")
    private final StateSpec<ValueState<Boolean>> failedSpec = StateSpecs.value(BooleanCoder.of());

    /** The key (path) of the timer: timers carry no element. */
    @StateId("appId")
    private final StateSpec<ValueState<String>> appIdSpec = StateSpecs.value(StringUtf8Coder.of());

    @TimerId("interval")
    private final TimerSpec intervalSpec = TimerSpecs.timer(TimeDomain.PROCESSING_TIME);

    FollowFn(Map<String, DerivedTarget> targets, boolean isolate, StopCondition stop) {
      this.applies = new Applies(targets, isolate);
      this.stop = stop;
    }

    @Setup
    public void setup() {
      applies.setup();
    }

    @ProcessElement
    public void process(
        @Element KV<String, ApplyTrigger> element,
        @StateId("appliedUpTo") ValueState<String> appliedState,
        @StateId("failed") ValueState<Boolean> failedState,
        @StateId("appId") ValueState<String> appIdState,
        @TimerId("interval") Timer interval) {
      applies.apply(element.getKey(), element.getValue(), appliedState, failedState);
      if (element.getValue().isTick()) {
        appIdState.write(element.getKey());
        next(element.getKey(), interval, failedState);
      }
    }

    @OnTimer("interval")
    public void onInterval(
        @StateId("appliedUpTo") ValueState<String> appliedState,
        @StateId("failed") ValueState<Boolean> failedState,
        @StateId("appId") ValueState<String> appIdState,
        @TimerId("interval") Timer interval) {
      String path = appIdState.read();
      if (path == null || stop.shouldStop()) {
        return; // the run is ending: the launcher's apply after the pipeline takes the rest
      }
      if (applies.streamStopped(path)) {
        failedState.write(true);
        return; // the table's stream stopped in this run: its silver stops with it
      }
      applies.apply(path, ApplyTrigger.tick(), appliedState, failedState);
      next(path, interval, failedState);
    }

    private void next(String path, Timer interval, ValueState<Boolean> failedState) {
      DerivedTarget target = applies.targets.get(path);
      if (target != null && !Boolean.TRUE.equals(failedState.read()) && !stop.shouldStop()) {
        interval.offset(Duration.millis(target.applyInterval().toMillis())).setRelative();
      }
    }
  }

  /** The applies of the derived tables of one {@code DoFn} instance (one applier per table). */
  static final class Applies implements java.io.Serializable {
    private static final long serialVersionUID = 1L;
    private static final Logger LOG = LoggerFactory.getLogger(ApplyChangesToSilver.class);

    private final Map<String, DerivedTarget> targets;
    private final boolean isolate;

    /** Per path: the applier of its table, made in {@link #setup}. */
    private transient Map<String, DerivedTarget.Applier> appliers;

    Applies(Map<String, DerivedTarget> targets, boolean isolate) {
      this.targets = new LinkedHashMap<>(targets);
      this.isolate = isolate;
    }

    void setup() {
      appliers = new HashMap<>();
      for (Map.Entry<String, DerivedTarget> e : targets.entrySet()) {
        appliers.put(e.getKey(), e.getValue().applier());
      }
    }

    /**
     * Whether the stream of the table of {@code path} recorded its failure in this run (many
     * tables): a failure of the app id in this run that is not one of its derived tables'.
     */
    boolean streamStopped(String path) {
      DerivedTarget target = targets.get(path);
      if (target == null || !isolate || target.facts() == null) {
        return false;
      }
      return RecordedFailure.last(target.hadoopConf().tables(), target.facts(), target.appId())
          .filter(f -> f.runStartedAt().equals(target.runStartedAt()))
          .filter(f -> !targets.containsKey(f.target()))
          .isPresent();
    }

    /**
     * One apply of the derived table of {@code path} for {@code trigger}; see the class comment.
     */
    void apply(
        String path,
        ApplyTrigger trigger,
        ValueState<String> appliedState,
        ValueState<Boolean> failedState) {
      CommittedBatch batch = trigger.batch();
      CommittedChunk chunk = trigger.chunk();
      DerivedTarget target = targets.get(path);
      if (target == null
          || Boolean.TRUE.equals(failedState.read())
          || (batch != null && batch.failed())) {
        return; // no silver, its silver stopped, or bronze stopped before this batch
      }
      String applied = appliedState.read();
      // A chunk or a tick is applied whatever LSN silver reached: neither is an LSN after it.
      Lsn end =
          batch != null
              ? Lsn.parse(batch.endLsn())
              : applied != null
                  ? Lsn.parse(applied)
                  : chunk != null ? Lsn.parse(chunk.stamp()) : null;
      if (batch != null && applied != null && !end.isAfter(Lsn.parse(applied))) {
        return; // silver already holds bronze up to this batch
      }
      long batchId = batch != null ? batch.batchId() : -1;
      DerivedTarget.Applied result;
      DerivedTarget.Applier applier = appliers.get(path);
      if (batch != null && target.stopsAfter(batch.batchId())) {
        int[] waves = {0};
        applier.beforeWaveCommit(
            () -> {
              if (++waves[0] == 2) {
                throw new SilverTarget.SimulatedSilverCrash(target.path(), batch.batchId());
              }
            });
      }
      try {
        result = applier.apply();
      } catch (RuntimeException e) {
        if (!isolate || target.facts() == null) {
          throw e;
        }
        StreamPosition bronze =
            end == null
                ? StreamPosition.fromJson(
                        target
                            .hadoopConf()
                            .tables()
                            .domainMetadata(target.bronze(), StreamPosition.BRONZE_DOMAIN))
                    .orElse(null)
                : null;
        RecordedFailure failure =
            failure(
                target,
                bronze != null ? bronze.batchId() : batchId,
                end != null ? end : bronze != null ? bronze.endLsn() : Lsn.ZERO,
                batch != null
                    ? batch.endCommitTime()
                    : bronze != null ? bronze.endCommitTime() : null,
                Instant.now(),
                e);
        failure.write(target.hadoopConf().tables(), target.facts());
        LOG.warn(
            "{} {} of {} stopped for the rest of this run (bronze goes on): {}",
            target.kind().substring(0, 1).toUpperCase(java.util.Locale.ROOT)
                + target.kind().substring(1),
            target.path(),
            target.appId(),
            failure.text());
        failedState.write(true);
        return;
      } finally {
        applier.beforeWaveCommit(() -> {});
      }
      // The apply brought silver to what bronze held, maybe past this batch: later batches up to
      // there need no apply of their own.
      Lsn reached = batch != null || applied != null ? end : null;
      if (result.appliedLsn() != null
          && (reached == null || Lsn.parse(result.appliedLsn()).isAfter(reached))) {
        reached = Lsn.parse(result.appliedLsn());
      }
      if (reached != null) {
        appliedState.write(reached.toString());
      }
      String table = "lakecdc.table." + target.appId();
      Metrics.counter(table, target.kind() + "_applies").inc();
      for (Map.Entry<String, Long> counter : result.counters().entrySet()) {
        if (counter.getValue() != 0) {
          Metrics.counter(table, counter.getKey()).inc(counter.getValue());
        }
      }
      // The applier printed each wave; the launcher prints the run's silver line.
      LOG.debug(
          "{}: {} {} applied after {}: {} waves, applied_lsn {}",
          target.appId(),
          target.kind(),
          target.path(),
          batch != null
              ? "batch " + batch.batchId()
              : chunk != null
                  ? "chunk " + chunk.chunk() + " of the snapshot at " + chunk.snapshot()
                  : "its interval",
          result.waves(),
          result.appliedLsn());
    }
  }

  /**
   * The record of a failed apply of {@code target} ({@code table_failed} in facts): bronze stood at
   * batch {@code batchId} ending at {@code positionLsn}; the message is {@code <kind> <path> could
   * not be applied: <first line of the error>} ({@code silver ...} or {@code history ...}).
   *
   * @param positionCommitTime bronze's end commit time (UTC), or null
   * @param writtenAt when the failure is recorded (UTC)
   */
  public static RecordedFailure failure(
      DerivedTarget target,
      long batchId,
      Lsn positionLsn,
      @Nullable Instant positionCommitTime,
      Instant writtenAt,
      RuntimeException e) {
    String message = e.getMessage() == null ? e.toString() : e.getMessage();
    String first = message.lines().findFirst().orElse(message);
    return new RecordedFailure(
        target.appId(),
        target.path(),
        e.getClass().getSimpleName(),
        target.kind() + " " + target.path() + " could not be applied: " + first,
        batchId + 1,
        positionLsn.increment(),
        positionLsn,
        positionCommitTime,
        target.runStartedAt(),
        writtenAt);
  }
}
