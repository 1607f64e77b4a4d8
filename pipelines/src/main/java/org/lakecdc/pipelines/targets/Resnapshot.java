package org.lakecdc.pipelines.targets;

import java.io.PrintStream;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.beam.sdk.options.PipelineOptions;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.io.mssqlcdc.client.CdcClient;
import org.lakecdc.io.mssqlcdc.client.Commit;
import org.lakecdc.io.mssqlcdc.client.DataLossError;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.io.mssqlcdc.read.DataLossPolicy;
import org.lakecdc.io.mssqlcdc.read.StartingLsn;
import org.lakecdc.io.mssqlcdc.snapshot.SnapshotLsn;
import org.lakecdc.transforms.Counts;
import org.lakecdc.transforms.bronze.CrashPlan;
import org.lakecdc.transforms.bronze.CrashPoint;
import org.lakecdc.transforms.delta.DeltaTables;
import org.lakecdc.transforms.finalization.Finalization;
import org.lakecdc.transforms.finalization.LostPeriod;
import org.lakecdc.transforms.position.StreamPosition;
import org.lakecdc.transforms.snapshot.ChunkedSnapshotFacts;
import org.lakecdc.transforms.snapshot.ChunkedSnapshotFacts.Open;
import org.lakecdc.transforms.snapshot.ChunkedSnapshotFacts.Recoveries;
import org.lakecdc.transforms.snapshot.WriteSnapshotToDelta;

/**
 * The automatic re-snapshot after data loss ({@code --onDataLoss=resnapshot}; docs/behaviour.md
 * §9): when CDC cleanup purged changes a target's stream has not read, the launcher records a new
 * snapshot of the table into a new <em>generation</em> (its S) before the pipeline is built; the
 * pipeline reads and commits the snapshot (the launcher reads no row of it: {@link SnapshotTask})
 * and the stream goes on from S. The same code recovers a table whose running stream met the loss:
 * the job plans that table again ({@code CdcToDeltaJob}).
 *
 * <p>Delta is the checkpoint, as for every position: no state file. Generation n writes under the
 * app id {@code <appId>.g<n>} ({@link JobConfig#streamAppId()}), and bronze's position records the
 * generation, so {@link #resolveGeneration} finds it again. A recovery's steps, each recorded where
 * a rerun finds it:
 *
 * <ol>
 *   <li><b>Recovery recorded</b>: the gap goes into the control row's {@code lost_periods} (no
 *       verdict covers it), then the {@code snapshot_open} facts row of generation n+1 (kind {@code
 *       resnapshot}, mode {@code full} or {@code chunked} after {@code --snapshot}, S, the gap's
 *       {@code lost_from_ts}/{@code lost_to_ts}; transaction {@code <appId>#snapshots} version n+1,
 *       so a rerun finds it and never records a second one).
 *   <li><b>Snapshot written, generation started</b>: whole: the table read at S in key ranges and
 *       committed to bronze in one commit that records the snapshot of generation n+1 and the
 *       position at S under {@code <appId>.g<n+1>} (transaction {@code <appId>.g<n+1>#snapshot});
 *       chunked: a bronze commit of that position alone, the chunks read later beside the stream.
 *   <li><b>Event</b> (whole, {@link ResnapshotEvent}, written by the pipeline's step after the
 *       commit): the {@code resnapshot} facts row (rows, timing, gap; transaction {@code
 *       <appId>.g<n+1>#events@<bronze id>} version n+1); a chunked re-snapshot's is written by its
 *       last chunk.
 * </ol>
 *
 * A crash after any step resumes the same recovery, in the next run of the target whatever its
 * {@code --onDataLoss}: the recorded open is reused (its S, unless cleanup purged the changes after
 * it too, then one generation further), a committed snapshot is never read again, a missing event
 * is written. A whole snapshot whose S cleanup purged before its rows could be committed commits
 * nothing: the attempt is recorded as failed and keeps its generation number, the next one takes
 * the number after it. At most one automatic re-snapshot (or failed attempt) per {@code
 * --resnapshotIntervalDays} starts without a recorded one to reuse: a stream that cannot keep up
 * with the retention fails loudly instead of re-snapshotting forever.
 */
public final class Resnapshot {
  /** {@code --resnapshotIntervalDays}' default. */
  static final double DEFAULT_INTERVAL_DAYS = 7;

  private Resnapshot() {}

  /**
   * What a recovery left for the stream.
   *
   * @param target the target writing the new generation
   * @param start the position at S of the new generation (batch -1)
   * @param snapshotRows rows of a whole snapshot read by this call, -1 when none was read
   * @param snapshotSeconds wall seconds of that read, 0 when none
   * @param snapshot the whole snapshot the pipeline reads (S recorded, no row read here), or null
   */
  record Outcome(
      Target target,
      StreamPosition start,
      long snapshotRows,
      double snapshotSeconds,
      @Nullable SnapshotTask snapshot) {}

  /**
   * {@code target} writing the generation bronze's recorded position is in: a position under {@code
   * <appId>.g<n>} is generation n of the family {@code <appId>}. Anything else (no bronze, no
   * position, generation 0, another app id, which {@link Recovery#resumePosition} refuses) leaves
   * {@code target} as it is.
   */
  public static Target resolveGeneration(Target target) {
    if (!target.exists()) {
      return target;
    }
    Optional<StreamPosition> recorded = target.bronzePosition();
    if (recorded.isEmpty()) {
      return target;
    }
    int generation = recorded.get().generation();
    if (generation > 0
        && recorded.get().appId().equals(JobConfig.streamAppId(target.appId(), generation))
        && generation != target.config().generation()) {
      return target.with(target.config().withGeneration(generation));
    }
    return target;
  }

  /**
   * The pre-flight (docs/behaviour.md §9.3): finishes a recovery a crash left, whatever the run's
   * {@code --onDataLoss} (a recorded re-snapshot is the target's, as a generation is: it was
   * recorded after the loss, and the stream cannot go on without it), unless cleanup purged its S
   * too; then, with {@code --onDataLoss=resnapshot}, when the changes right after {@code position}
   * are gone ({@link StartingLsn#lostAfter}), re-snapshots the target into the next generation: one
   * after the highest recorded, so an attempt that failed keeps its number.
   *
   * @param target the table's target, its generation resolved ({@link #resolveGeneration})
   * @param position where the stream would start (the target's position, or a new target's start),
   *     or empty when it has none
   * @param snapshotInPipeline whether a whole re-snapshot is read by the pipeline ({@link
   *     Outcome#snapshot}) rather than here
   * @return the new generation's start, or empty when there is no recovery to finish and nothing
   *     was purged (or the policy is another)
   * @throws DataLossError when the anti-loop guard refuses (an automatic re-snapshot or a failed
   *     attempt less than {@code --resnapshotIntervalDays} ago), or when the snapshot's own S was
   *     purged before its read ended
   */
  static Optional<Outcome> preflight(
      Target target,
      Optional<StreamPosition> position,
      PipelineOptions beamOptions,
      PrintStream out,
      boolean snapshotInPipeline) {
    if (position.isEmpty()
        || (target.config().onDataLoss() != DataLossPolicy.RESNAPSHOT
            && !mayHaveRecovery(target))) {
      return Optional.empty();
    }
    Recoveries recoveries = recoveries(target);
    int generation = target.config().generation();
    try (CdcClient client = target.config().clientFactory().open()) {
      Optional<Open> pending = pending(target, recoveries);
      if (pending.isPresent()) {
        Open open = pending.get();
        if (StartingLsn.lostAfter(client, target.captureInstance(), open.s()).isEmpty()) {
          out.printf(
              "Target %s: the re-snapshot into generation %d recorded at S = %s (%s) goes on%n",
              target.bronze(), open.generation(), open.s(), open.mode());
          return Optional.of(finish(target, open, beamOptions, out, snapshotInPipeline));
        }
        // Cleanup passed the recorded S too: a new recovery, one generation further.
        generation = Math.max(generation, open.generation());
      }
      if (target.config().onDataLoss() != DataLossPolicy.RESNAPSHOT) {
        return Optional.empty();
      }
      if (!recoveries.opens().isEmpty()) {
        // A failed attempt keeps its generation: its open (and failure) rows are under its app id.
        generation = Math.max(generation, recoveries.opens().lastKey());
      }
      StreamPosition start = position.get();
      Optional<Lsn> max = client.maxLsn();
      if (max.isEmpty() || !max.get().isAfter(start.endLsn())) {
        return Optional.empty();
      }
      Optional<Lsn> low = StartingLsn.lostAfter(client, target.captureInstance(), start.endLsn());
      if (low.isEmpty()) {
        return Optional.empty();
      }
      Instant lostTo = client.lastCommitAtOrBefore(low.get()).map(Commit::commitTime).orElse(null);
      checkInterval(target, client, recoveries, start, low.get(), lostTo);
      int next = generation + 1;
      out.printf(
          "Target %s: CDC cleanup purged the changes of %s after %s%s up to min_lsn %s%s:"
              + " re-snapshotting (%s) into generation %d under app id %s%n",
          target.bronze(),
          target.captureInstance(),
          start.endLsn(),
          start.endCommitTime() == null ? "" : " (committed at " + start.endCommitTime() + ")",
          low.get(),
          lostTo == null ? "" : " (committed at " + lostTo + ")",
          target.config().snapshot().chunked() ? "chunked" : "whole",
          next,
          JobConfig.streamAppId(target.appId(), next));
      new Finalization(target.tables(), target.control(), java.time.Clock.systemUTC())
          .recordLost(
              target.bronze(),
              List.of(
                  LostPeriod.of(
                      start.endCommitTime(),
                      lostTo == null ? Instant.now() : lostTo,
                      target.config().granularity())));
      Open open =
          target.config().snapshot().chunked()
              ? ChunkedSnapshot.writeOpen(
                  target, ChunkedSnapshotFacts.KIND_RESNAPSHOT, next, start.endCommitTime(), lostTo)
              : writeFullOpen(target, client, next, start.endCommitTime(), lostTo);
      CrashPlan.atStep(target.config().crash(), CrashPoint.AFTER_RECOVERY_RECORDED);
      return Optional.of(finish(target, open, beamOptions, out, snapshotInPipeline));
    }
  }

  /**
   * Whether the facts table may hold a recovery of the target to finish, told from transaction
   * versions alone (the log, no data file), so that a run without {@code --onDataLoss=resnapshot}
   * reads the facts rows of recoveries only when there may be one: an open of a generation after
   * {@code target}'s ({@code <appId>#snapshots@<bronze table id>}, or {@code <appId>#snapshots} as
   * written before, at a higher version), or, in a generation after 0, no {@code resnapshot} event
   * of it yet (a whole one's event missing, or a chunked one still being read).
   */
  private static boolean mayHaveRecovery(Target target) {
    String bronzeId = ChunkedSnapshot.bronzeId(target);
    if (bronzeId == null || !target.tables().exists(target.facts())) {
      return false;
    }
    long opened =
        Math.max(
            target
                .tables()
                .latestTransactionVersion(
                    target.facts(), ChunkedSnapshotFacts.openAppId(target.appId(), bronzeId))
                .orElse(-1),
            target
                .tables()
                .latestTransactionVersion(
                    target.facts(), ChunkedSnapshotFacts.openAppId(target.appId()))
                .orElse(-1));
    if (opened > target.config().generation()) {
      return true;
    }
    if (target.config().generation() == 0) {
      return false;
    }
    String events =
        target.startAt(Lsn.ZERO, null, "").ofTarget(target.bronze(), bronzeId).eventsAppId();
    return target.tables().latestTransactionVersion(target.facts(), events).orElse(-1)
        < target.config().generation();
  }

  /** The re-snapshots recorded for {@code target}'s bronze table (not a former one's). */
  private static Recoveries recoveries(Target target) {
    return ChunkedSnapshotFacts.recoveriesOfTable(
        target.tables(),
        target.facts(),
        target.appId(),
        target.bronze(),
        ChunkedSnapshot.bronzeId(target));
  }

  /**
   * The recorded recovery a crash left unfinished, if any: the open of a generation after the
   * configuration's (bronze's position is not in it yet: nothing of a whole one is committed, or a
   * chunked one's generation did not start, also when Backfill read all its chunks meanwhile), or
   * the whole re-snapshot of the configuration's own generation whose {@code resnapshot} event is
   * missing; never one that failed.
   */
  private static Optional<Open> pending(Target target, Recoveries recoveries) {
    if (recoveries.opens().isEmpty()) {
      return Optional.empty();
    }
    Open newest = recoveries.opens().get(recoveries.opens().lastKey());
    int g = newest.generation();
    if (recoveries.failed().containsKey(g)) {
      return Optional.empty();
    }
    if (g > target.config().generation()) {
      return Optional.of(newest);
    }
    if (g == target.config().generation()
        && !newest.chunked()
        && !recoveries.completed().contains(g)) {
      return Optional.of(newest);
    }
    return Optional.empty();
  }

  /**
   * The anti-loop guard (docs/behaviour.md §9.5): at most one automatic re-snapshot (or failed
   * attempt) per {@code --resnapshotIntervalDays}.
   *
   * @throws DataLossError naming the loss, the last attempt and what to change
   */
  private static void checkInterval(
      Target target,
      CdcClient client,
      Recoveries recoveries,
      StreamPosition start,
      Lsn low,
      @Nullable Instant lostTo) {
    Optional<Instant> last = recoveries.lastAttempt();
    if (last.isEmpty()) {
      return;
    }
    Duration interval =
        Duration.ofSeconds(Math.round(target.config().resnapshotIntervalDays() * 86_400));
    Instant now = Instant.now();
    if (!now.isBefore(last.get().plus(interval))) {
      return;
    }
    throw new DataLossError(
        target.captureInstance(),
        client.incrementLsn(start.endLsn()),
        low,
        target.captureInstance()
            + ": change data after "
            + start.endLsn()
            + " was purged by CDC cleanup (min_lsn is now "
            + low
            + (lostTo == null ? "" : ", committed at " + lostTo)
            + "), and the last automatic re-snapshot of "
            + target.bronze()
            + " started or failed at "
            + last.get()
            + ", less than --resnapshotIntervalDays="
            + trim(target.config().resnapshotIntervalDays())
            + " ago: the stream does not keep up with the CDC retention, or keeps stopping longer"
            + " than it. Raise the retention (sys.sp_cdc_change_job @retention), speed the stream"
            + " up, or rerun with a smaller --resnapshotIntervalDays (0 re-snapshots now).");
  }

  private static String trim(double days) {
    return days == Math.rint(days) ? Long.toString((long) days) : Double.toString(days);
  }

  /**
   * Writes the full {@code snapshot_open} row of a whole re-snapshot into {@code generation} at S
   * (resolved now: docs/behaviour.md §6.1) with the gap and the bronze table's id, once per
   * generation (transaction {@code <appId>#snapshots@<bronze table id>} version = generation), and
   * reads it back.
   */
  private static Open writeFullOpen(
      Target target,
      CdcClient client,
      int generation,
      @Nullable Instant lostFrom,
      @Nullable Instant lostTo) {
    Lsn s = SnapshotLsn.resolve(client, target.captureInstance());
    String bronzeId = target.bronzeId();
    Open open =
        new Open(
            JobConfig.streamAppId(target.appId(), generation),
            target.bronze(),
            s,
            ChunkedSnapshot.commitTime(client, s),
            ChunkedSnapshotFacts.MODE_FULL,
            ChunkedSnapshotFacts.KIND_RESNAPSHOT,
            generation,
            ChunkedSnapshot.keyColumns(target),
            null,
            lostFrom,
            lostTo,
            null,
            target.captureInstance(),
            bronzeId);
    target.appendFacts(
        List.of(open.toRow(Instant.now())),
        ChunkedSnapshotFacts.openAppId(target.appId(), bronzeId),
        generation,
        Map.of());
    return recoveries(target).opens().get(generation);
  }

  /**
   * Takes the recorded recovery {@code open} to its end: the new generation's bronze commit at S
   * (the whole snapshot read unless already committed, or, chunked, the position alone), then for a
   * whole snapshot the {@code resnapshot} event ({@link ResnapshotEvent}). With {@code
   * snapshotInPipeline} a whole snapshot not yet committed is only planned here: the outcome's
   * {@link Outcome#snapshot} is read, committed and followed by its event in the pipeline, and no
   * row is read on the launcher. A whole snapshot is committed only while CDC still holds the
   * changes right after S ({@link Bootstrap#readInto}); when cleanup purged them first, nothing is
   * committed, the attempt is recorded as failed ({@code resnapshot_failed}) and the table fails. A
   * generation committed before a purge stands: its stream meets the loss as any stream does.
   */
  private static Outcome finish(
      Target target,
      Open open,
      PipelineOptions beamOptions,
      PrintStream out,
      boolean snapshotInPipeline) {
    Target next = target.with(target.config().withGeneration(open.generation()));
    String bronzeId = target.bronzeId();
    StreamPosition atS =
        next.startAt(open.s(), open.sCommitTime(), target.captureInstance())
            .ofTarget(target.bronze(), bronzeId);
    if (open.chunked()) {
      startGeneration(target.tables(), target.bronze(), atS);
      CrashPlan.atStep(target.config().crash(), CrashPoint.AFTER_RESNAPSHOT_COMMIT);
      out.printf(
          "Target %s: generation %d starts at S = %s (committed at %s) under app id %s; the"
              + " chunked snapshot is read beside the stream%n",
          target.bronze(),
          next.config().generation(),
          open.s(),
          open.sCommitTime(),
          next.streamAppId());
      return new Outcome(next, atS, -1, 0, null);
    }
    Optional<WriteSnapshotToDelta.SnapshotRecord> committed =
        WriteSnapshotToDelta.committedRecord(target.tables(), target.bronze())
            .filter(r -> r.generation() >= next.config().generation());
    if (committed.isPresent()) {
      // The rows recorded with the snapshot commit, also after a crash between that commit and
      // this event, as the bootstrap event has them; the read's timing stays unknown (NULL).
      long rows = committed.get().rows();
      ResnapshotEvent.of(next, open, null)
          .write(target.tables(), committed.get(), rows >= 0 ? rows : null);
      printStarted(next, open.s(), "its snapshot was already in", out);
      return new Outcome(next, atS, -1, 0, null);
    }
    out.printf(
        "Target %s: taking a snapshot of %s stamped with S = %s (committed at %s) for"
            + " generation %d%n",
        target.bronze(),
        target.captureInstance(),
        open.s(),
        open.sCommitTime(),
        next.config().generation());
    long began = System.nanoTime();
    ResnapshotEvent event = ResnapshotEvent.of(next, open, Instant.now());
    if (snapshotInPipeline) {
      return new Outcome(next, atS, -1, 0, new SnapshotTask(next, atS, event));
    }
    long rows;
    try {
      rows = Bootstrap.readInto(next, beamOptions, out, atS);
    } catch (Bootstrap.Outlived e) {
      throw event.refused(target.tables(), open.s(), e.firstMissing(), e.minLsn());
    }
    double seconds = (System.nanoTime() - began) / 1e9;
    event.write(
        target.tables(),
        WriteSnapshotToDelta.committedRecord(target.tables(), target.bronze()).orElseThrow(),
        rows);
    printStarted(next, open.s(), "a snapshot of " + Counts.of(rows, "row", "rows"), out);
    return new Outcome(next, atS, rows, seconds, null);
  }

  /**
   * Prints {@code Target <bronze>: generation <n> starts at S = <S> under app id <appId>.g<n>
   * (<how>)}: a whole re-snapshot's generation started at {@code s}.
   */
  public static void printStarted(Target next, Lsn s, String how, PrintStream out) {
    out.printf(
        "Target %s: generation %d starts at S = %s under app id %s (%s)%n",
        next.bronze(), next.config().generation(), s, next.streamAppId(), how);
  }

  /**
   * Commits {@code atS} as bronze's position, once (transaction {@code <streamAppId>#generation}
   * version 0): the start of a chunked re-snapshot's generation, whose rows come by chunks later.
   */
  private static void startGeneration(DeltaTables tables, String bronzePath, StreamPosition atS) {
    tables.commit(
        bronzePath,
        List.of(),
        atS.appId() + "#generation",
        0,
        Map.of(StreamPosition.BRONZE_DOMAIN, atS.toJson()));
  }
}
