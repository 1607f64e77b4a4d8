package org.lakecdc.pipelines.status;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.math.BigDecimal;
import java.time.Instant;
import java.time.LocalDateTime;
import java.util.BitSet;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.io.mssqlcdc.client.Commit;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.transforms.finalization.Granularity;
import org.lakecdc.transforms.finalization.LostPeriod;
import org.lakecdc.transforms.snapshot.ChunkedSnapshotFacts;

/**
 * What {@code Status} reports, as records: per table its position, verdict, snapshots, losses and
 * silver tables ({@link StatusModel.TableStatus}), and the whole report ({@link
 * StatusModel.Report}), with the facts rows and the aggregates {@link StatusReader} builds them
 * from. Instants are UTC; docs/status.md describes the fields.
 */
public final class StatusModel {
  private StatusModel() {}

  static final ObjectMapper JSON = new ObjectMapper();

  /**
   * The stream family of an app id: {@code x} for {@code x} and for a generation {@code x.g<n>} (n
   * of at most 9 digits, as {@link ChunkedSnapshotFacts#generationOf} reads it).
   */
  static String familyOf(String appId) {
    int dot = appId.lastIndexOf(".g");
    if (dot > 0
        && dot + 2 < appId.length()
        && appId.length() - dot - 2 <= 9
        && appId.substring(dot + 2).chars().allMatch(c -> c >= '0' && c <= '9')) {
      return appId.substring(0, dot);
    }
    return appId;
  }

  /** The generation of an app id: n of {@code x.g<n>}, 0 for an app id of no generation. */
  static int generationOf(String appId) {
    String family = familyOf(appId);
    return family.length() == appId.length()
        ? 0
        : Integer.parseInt(appId.substring(family.length() + 2));
  }

  /**
   * A batch or event facts row, as much of it as the status needs.
   *
   * @param appId the row's app id: the stream's, of its generation ({@code x} or {@code x.g<n>})
   * @param batchId the batch, or null on an event without one
   * @param rows its rows, or null
   * @param lsn its {@code end_lsn}, else its {@code max_lsn}, or null
   * @param commitTime {@code end_commit_ts} (UTC), or null
   * @param sourceMaxCommitTime {@code source_max_commit_ts} (UTC), or null
   * @param detail its detail text or JSON, or null
   * @param writtenAt when it was written (UTC), or null
   * @param lostFrom {@code lost_from_ts} (UTC) of a lost gap, or null
   * @param lostTo {@code lost_to_ts} (UTC) of a lost gap, or null
   */
  public record FactsEvent(
      String appId,
      @Nullable Long batchId,
      @Nullable Long rows,
      @Nullable String lsn,
      @Nullable Instant commitTime,
      @Nullable Instant sourceMaxCommitTime,
      @Nullable String detail,
      @Nullable Instant writtenAt,
      @Nullable Instant lostFrom,
      @Nullable Instant lostTo) {
    /** Orders {@code written_at} times, NULL first. */
    static final Comparator<@Nullable Instant> WRITTEN_AT =
        Comparator.nullsFirst(Comparator.<Instant>naturalOrder());

    /** Orders rows by {@code written_at} (NULL first), then by batch id (NULL first). */
    static final Comparator<FactsEvent> WRITTEN =
        Comparator.comparing(FactsEvent::writtenAt, WRITTEN_AT)
            .thenComparing(
                FactsEvent::batchId, Comparator.nullsFirst(Comparator.<Long>naturalOrder()));

    /** Orders rows by the generation of their app id, then by {@link #WRITTEN}. */
    static final Comparator<FactsEvent> GENERATION_WRITTEN =
        Comparator.comparingInt(FactsEvent::generation).thenComparing(WRITTEN);

    /** The later of {@code a} and {@code b} by {@link #WRITTEN}; {@code b} when equal. */
    static @Nullable FactsEvent later(@Nullable FactsEvent a, FactsEvent b) {
      return a == null || WRITTEN.compare(b, a) >= 0 ? b : a;
    }

    /** The generation of the row's app id: n of {@code x.g<n>}, 0 for {@code x}. */
    int generation() {
      return generationOf(appId);
    }
  }

  /**
   * A {@code snapshot_open} row: its S, and from its detail JSON the mode, kind, generation and
   * capture instance (a row without detail reads as a full bootstrap of generation 0; one written
   * before the capture instance was recorded has none).
   */
  record OpenFact(
      Lsn s,
      String mode,
      String kind,
      int generation,
      @Nullable Instant writtenAt,
      @Nullable String captureInstance) {
    boolean chunked() {
      return ChunkedSnapshotFacts.MODE_CHUNKED.equals(mode);
    }

    /**
     * The later of {@code a} and {@code b} by S, then by {@code written_at}; {@code b} when equal.
     */
    static @Nullable OpenFact later(@Nullable OpenFact a, OpenFact b) {
      if (a == null) {
        return b;
      }
      int byS = b.s().compareTo(a.s());
      if (byS != 0) {
        return byS > 0 ? b : a;
      }
      return FactsEvent.WRITTEN_AT.compare(b.writtenAt(), a.writtenAt()) >= 0 ? b : a;
    }
  }

  /**
   * What the facts rows of one snapshot LSN S of a table say about its chunked snapshot: its open
   * row, its plan's size and the chunks recorded. Chunk rows are counted once per chunk index (a
   * bit each), so memory is a few bytes per chunk of the table's own snapshots.
   */
  static final class ChunkedFacts {
    @Nullable OpenFact open;
    int planned = -1;
    int chunksPerWave;
    long chunkRows;
    final BitSet done = new BitSet();
    long rows;
    @Nullable Instant newestChunkAt;
  }

  /** The batch rows of one generation of a table: its last batch and its rows today. */
  static final class GenerationFacts {
    @Nullable FactsEvent lastBatch;
    long rowsToday;
  }

  /**
   * The per-table aggregate of the facts rows of one stream family and target: what the status
   * keeps while streaming them. Batch rows are kept per generation (a few fields each), the rest as
   * counts and the newest row of each kind.
   */
  static final class TableFacts {
    /** The family's app id ({@code x} of {@code x} and {@code x.g<n>}). */
    final String appId;

    final @Nullable String target;

    /** The batch rows by generation (generations restart batch ids at 0). */
    final Map<Integer, GenerationFacts> generations = new TreeMap<>();

    /** The highest generation of a batch, bootstrap, resnapshot or data_skipped row. */
    int newestGeneration;

    @Nullable FactsEvent bootstrap;

    /** The newest {@code joined} and {@code left} rows. */
    @Nullable FactsEvent joined;

    @Nullable FactsEvent left;

    @Nullable OpenFact fullOpen;

    /**
     * The newest {@code snapshot_open} row (by S, then {@code written_at}) that names its capture
     * instance: the table's capture instance before it has a position.
     */
    @Nullable OpenFact namedOpen;

    /** The highest {@code max_lsn} of the family's {@code bootstrap}/{@code resnapshot} rows. */
    @Nullable Lsn completed;

    /** The generations a {@code resnapshot} row completed (one bit each). */
    final BitSet resnapshotGenerations = new BitSet();

    @Nullable FactsEvent newestResnapshot;
    @Nullable FactsEvent newestResnapshotFailed;
    long skipped;
    @Nullable FactsEvent newestSkipped;

    /** The chunked snapshots' rows by S (open, plan and chunk rows may come in any file order). */
    final Map<Lsn, ChunkedFacts> chunked = new TreeMap<>();

    TableFacts(String appId, @Nullable String target) {
      this.appId = appId;
      this.target = target;
    }

    ChunkedFacts chunked(Lsn s) {
      return chunked.computeIfAbsent(s, k -> new ChunkedFacts());
    }

    GenerationFacts generation(int generation) {
      newestGeneration = Math.max(newestGeneration, generation);
      return generations.computeIfAbsent(generation, k -> new GenerationFacts());
    }
  }

  /**
   * An open snapshot of a table.
   *
   * @param mode {@code chunked} or {@code full}
   * @param kind {@code bootstrap} or {@code resnapshot}
   * @param lsn its S
   * @param generation the stream generation it starts
   * @param openedAt its open row's {@code written_at} (UTC), or null
   * @param chunks a chunked snapshot's progress, or null for a full one
   */
  public record OpenSnapshot(
      String mode,
      String kind,
      Lsn lsn,
      int generation,
      @Nullable Instant openedAt,
      @Nullable ChunkProgress chunks) {}

  /**
   * A chunked snapshot's progress.
   *
   * @param done chunks recorded ({@code snapshot_chunk} rows, one per index)
   * @param planned chunks planned, or -1 before the {@code snapshot_plan} row
   * @param chunksPerWave the plan's chunks per wave (0 before planning)
   * @param chunkRows the plan's most rows per chunk (0 before planning)
   * @param wavesDone waves whose every chunk is recorded (waves commit in order), 0 before planning
   * @param wavesPlanned waves of the plan, or -1 before planning
   * @param rows rows of the recorded chunks
   * @param newestChunkAt the newest chunk row's {@code written_at} (UTC), or null when none
   */
  public record ChunkProgress(
      int done,
      int planned,
      int chunksPerWave,
      long chunkRows,
      int wavesDone,
      int wavesPlanned,
      long rows,
      @Nullable Instant newestChunkAt) {}

  /**
   * The verdict row of a table in the control table.
   *
   * @param finalizedUntil its {@code finalized_until} (UTC), or null
   * @param endCommitTime its {@code end_commit_ts} (UTC), or null
   * @param lostPeriods its {@code lost_periods}, ordered and merged; empty when none (or a control
   *     table before schema version 3)
   */
  public record Verdict(
      @Nullable LocalDateTime finalizedUntil,
      @Nullable LocalDateTime endCommitTime,
      List<LostPeriod> lostPeriods) {}

  /**
   * A re-snapshot after data loss: a {@code resnapshot} completion row.
   *
   * @param generation the generation it started
   * @param appId that generation's app id ({@code x.g<n>})
   * @param mode {@code full} (a whole snapshot: its detail's {@code mode}) or {@code chunked} (a
   *     chunked snapshot's completion, whose detail counts its chunks)
   * @param snapshotLsn its S, or null
   * @param rows the rows it read, or null when not recorded (a snapshot committed before a crash)
   * @param chunks a chunked one's chunk count, else null
   * @param writtenAt when it was written (UTC), or null
   * @param lostFrom the lost gap's start (UTC): the commit time of the last change read, or null
   * @param lostTo the lost gap's end (UTC): the commit time of the first LSN CDC still held, or
   *     null
   */
  record ResnapshotFact(
      int generation,
      String appId,
      String mode,
      @Nullable String snapshotLsn,
      @Nullable Long rows,
      @Nullable Integer chunks,
      @Nullable Instant writtenAt,
      @Nullable Instant lostFrom,
      @Nullable Instant lostTo) {}

  /**
   * A re-snapshot attempt that did not start its generation: a {@code resnapshot_failed} row.
   *
   * @param generation the generation it would have started
   * @param snapshotLsn its S, or null
   * @param reason why ({@code detail.reason}), or null
   * @param writtenAt when it was written (UTC), or null
   */
  record FailedResnapshot(
      int generation,
      @Nullable String snapshotLsn,
      @Nullable String reason,
      @Nullable Instant writtenAt) {}

  /**
   * A gap a batch skipped ({@code --onDataLoss=skip}): a {@code data_skipped} row.
   *
   * @param generation the generation of the batch that skipped it
   * @param appId that generation's app id
   * @param batchId the batch, or null
   * @param captureInstance the capture instance whose changes were purged, or null
   * @param from the first LSN lost ({@code detail.from}), or null
   * @param to the first LSN still held ({@code detail.to}, the capture instance's {@code min_lsn}),
   *     or null
   * @param lostFrom the gap's start (UTC), or null when unknown
   * @param lostTo the gap's end (UTC), or null
   * @param certain true when the changes are gone, false when the gap is only possible
   * @param reason why a possible gap is only possible, or null
   * @param writtenAt when it was written (UTC), or null
   */
  record SkippedGap(
      int generation,
      String appId,
      @Nullable Long batchId,
      @Nullable String captureInstance,
      @Nullable String from,
      @Nullable String to,
      @Nullable Instant lostFrom,
      @Nullable Instant lostTo,
      boolean certain,
      @Nullable String reason,
      @Nullable Instant writtenAt) {}

  /**
   * One table's status.
   *
   * @param target the bronze table's path as the facts rows name it, or null
   * @param targetExists whether a Delta table exists at the target
   * @param appId the job's app id: the stream family's ({@code x} of {@code x.g<n>})
   * @param generation the current generation, 0 before any re-snapshot
   * @param generationAppId the current generation's app id ({@code appId} for generation 0)
   * @param captureInstance the capture instance read last, or null when unknown
   * @param positionLsn the position's end LSN, or null when unknown
   * @param positionCommitTime its commit time (UTC), or null
   * @param lastBatch the last batch row, or null
   * @param rowsToday change rows of the batches written today (UTC day of the clock)
   * @param verdict the control row, or null when the control table has none for the target
   * @param granularities the granularities consistent with the verdict (empty when unknown)
   * @param lagSeconds the lag in seconds, or null when unknown
   * @param lagFromSource true when the lag is against the source's newest commit, false when it is
   *     the last batch's
   * @param failure the table's failure, or null
   * @param bootstrap the newest bootstrap row, or null
   * @param bootstrapChunks the newest bootstrap's chunk count when a chunked snapshot wrote it, or
   *     null
   * @param openSnapshot the open snapshot, or null
   * @param resnapshots how many generations a re-snapshot completed
   * @param newestResnapshot the newest of them (highest generation), or null
   * @param failedResnapshot the newest failed re-snapshot attempt when no re-snapshot completed
   *     after it, or null
   * @param skipped how many gaps {@code data_skipped} rows record
   * @param newestSkipped the newest of them, or null
   * @param lostPeriods the control row's lost periods (empty when none)
   * @param joined the newest {@code joined} row (the table added to a running run's tables file),
   *     or null
   * @param left the newest {@code left} row (the table removed from a running run's tables file),
   *     or null
   */
  public record TableStatus(
      @Nullable String target,
      boolean targetExists,
      String appId,
      int generation,
      String generationAppId,
      @Nullable String captureInstance,
      @Nullable String positionLsn,
      @Nullable Instant positionCommitTime,
      @Nullable FactsEvent lastBatch,
      long rowsToday,
      @Nullable Verdict verdict,
      Set<Granularity> granularities,
      @Nullable BigDecimal lagSeconds,
      boolean lagFromSource,
      @Nullable FactsEvent failure,
      @Nullable FactsEvent bootstrap,
      @Nullable Integer bootstrapChunks,
      @Nullable OpenSnapshot openSnapshot,
      int resnapshots,
      @Nullable ResnapshotFact newestResnapshot,
      @Nullable FailedResnapshot failedResnapshot,
      long skipped,
      @Nullable SkippedGap newestSkipped,
      List<LostPeriod> lostPeriods,
      @Nullable FactsEvent joined,
      @Nullable FactsEvent left) {}

  /**
   * The whole status.
   *
   * @param facts the facts table read
   * @param control the control table read
   * @param readAt when it was read (the clock's instant, to the millisecond)
   * @param sourceGiven whether a source was given (or the demo source found)
   * @param newest the source's newest commit, when it was read
   * @param tables the tables, by the family's app id then target
   * @param silvers the silver tables, by path
   */
  public record Report(
      String facts,
      String control,
      Instant readAt,
      boolean sourceGiven,
      Optional<Commit> newest,
      List<TableStatus> tables,
      List<SilverStatus> silvers) {}

  /**
   * A silver or history table's row of the control table: its position and verdict.
   *
   * @param table the table's path, as its job was given it
   * @param appliedLsn the bronze LSN the table holds every change up to, or null
   * @param finalizedUntil its verdict (UTC), or null
   * @param kind the table's kind: {@code silver} or {@code history}
   */
  public record SilverStatus(
      String table,
      @Nullable String appliedLsn,
      @Nullable LocalDateTime finalizedUntil,
      String kind) {
    /**
     * A silver table's row.
     *
     * @param table the silver table's path
     * @param appliedLsn its position, or null
     * @param finalizedUntil its verdict (UTC), or null
     */
    public SilverStatus(
        String table, @Nullable String appliedLsn, @Nullable LocalDateTime finalizedUntil) {
      this(table, appliedLsn, finalizedUntil, "silver");
    }
  }
}
