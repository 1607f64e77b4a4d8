package org.lakecdc.pipelines;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.io.mssqlcdc.client.CdcClient;
import org.lakecdc.io.mssqlcdc.client.CdcClientFactory;
import org.lakecdc.io.mssqlcdc.client.Commit;
import org.lakecdc.io.mssqlcdc.client.SourceTimeZone;
import org.lakecdc.io.mssqlcdc.fake.FakeCdcClientFactory;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.pipelines.demo.DemoDatabase;
import org.lakecdc.transforms.Counts;
import org.lakecdc.transforms.delta.DeltaTables;
import org.lakecdc.transforms.delta.ScanFile;
import org.lakecdc.transforms.delta.TableKind;
import org.lakecdc.transforms.facts.FactsTable;
import org.lakecdc.transforms.finalization.ControlTable;
import org.lakecdc.transforms.finalization.Granularity;
import org.lakecdc.transforms.finalization.LostPeriod;
import org.lakecdc.transforms.position.StreamPosition;
import org.lakecdc.transforms.snapshot.ChunkedSnapshotFacts;

/**
 * The {@code status} command: where every table the main job writes stands, read from its facts and
 * control tables with Delta Kernel (no Spark, no Beam pipeline). One table per distinct {@code
 * (stream family, target)} of the facts table, in that order: the family of an app id {@code x} is
 * {@code x} itself and its generations {@code x.g<n>} (a re-snapshot after data loss starts
 * generation n under {@code x.g<n>}, BEHAVIOUR.md 9.1), so a re-snapshotted target is one table.
 * Each with:
 *
 * <ul>
 *   <li>its target (the bronze table's path), the family's app id, its current generation (the
 *       highest of its batch, {@code bootstrap}, {@code resnapshot} and {@code data_skipped} rows
 *       and of its stored position) with that generation's app id, and its capture instance (from
 *       the bronze table's position, {@link StreamPosition#BRONZE_DOMAIN}, else from the job's
 *       position in the facts table, else from its newest {@code snapshot_open} row that names
 *       one);
 *   <li>its position: the end LSN and end commit time (UTC) of the current generation's last batch
 *       (the facts batch row written last), or of its stored position when that generation has no
 *       batch yet (a bootstrap or a re-snapshot only);
 *   <li>the last batch's id and when it was written ({@code written_at}, UTC);
 *   <li>rows today: the sum of {@code rows} of the current generation's batch rows written on the
 *       current UTC day of the clock ({@code [00:00, 24:00)});
 *   <li>the verdict {@code finalized_until} of its control row and the granularity that verdict was
 *       computed with (the granularities whose truncation of the row's {@code end_commit_ts} gives
 *       {@code finalized_until}: the control table does not store it);
 *   <li>the lag in seconds: the source's newest commit time (the commit of its {@code max_lsn})
 *       minus the position's commit time when a source is given or the demo source exists, else the
 *       last batch's {@code source_max_commit_ts - end_commit_ts};
 *   <li>its failure: the newest {@value FactsTable#EVENT_TABLE_FAILED} row of the current
 *       generation's app id when it was written after that generation's last batch and its {@code
 *       resnapshot} row ({@code detail} {@code "<ErrorClass>: <message>"}, {@code end_lsn} where it
 *       failed): a failure of an older generation was recovered by the re-snapshot that started a
 *       newer one;
 *   <li>its newest bootstrap snapshot (rows, LSN S, when; a chunked one's chunk count), and its
 *       open snapshot: the {@code snapshot_open} row with the highest S among the chunked ones,
 *       else among the full ones, that no {@code bootstrap}/{@code resnapshot} row of the stream
 *       family ({@code app_id} and {@code app_id.g<n>}) with {@code max_lsn >= S} completes; a full
 *       open does not count next to an incomplete chunked open (BEHAVIOUR.md 6.10). A chunked one
 *       shows its mode, kind, generation, when it was opened, and from its {@code snapshot_plan}
 *       and {@code snapshot_chunk} rows ({@link ChunkedSnapshotFacts}) the chunks done of those
 *       planned, the complete waves, the rows so far and the newest chunk's {@code written_at}.
 *   <li>its re-snapshots after data loss: how many generations a {@code resnapshot} row completed,
 *       the newest (generation, mode, rows, S, when, the lost gap {@code lost_from_ts} to {@code
 *       lost_to_ts}), and the newest {@code resnapshot_failed} row when no re-snapshot completed
 *       after it;
 *   <li>its {@code data_skipped} rows ({@code --onDataLoss=skip}): how many, and the newest gap;
 *   <li>the lost periods of its control row ({@link LostPeriod}): spans no verdict covers.
 * </ul>
 *
 * <p>Memory is bounded by the number of tables, not of facts rows: the facts table is read one data
 * file at a time, a Parquet batch at a time, and only per-table aggregates are kept.
 *
 * <p>Exit codes ({@link JobExit}): 0 printed; 2 a bad option (one {@code error:} line naming it,
 * e.g. a facts table path that holds no Delta table); 1 a failure reading the tables.
 */
public final class Status {
  private static final ObjectMapper JSON = new ObjectMapper();

  /** The event that opens a snapshot, completed by a {@code bootstrap} row at or after its S. */
  static final String EVENT_SNAPSHOT_OPEN = ChunkedSnapshotFacts.EVENT_SNAPSHOT_OPEN;

  private Status() {}

  /** Entry point; {@link StatusOptions} lists the options. Exits the JVM with the code. */
  public static void main(String[] args) {
    JobExit.main(
        () -> run(args, System.out, System.err, Clock.systemUTC(), DemoDatabase.DEFAULT_DIRECTORY));
  }

  /**
   * Runs a command line and returns its exit code instead of exiting (what {@link #main} runs).
   *
   * @param args the command line
   * @param out where the status goes
   * @param err where {@code error:} and {@code warning:} lines go
   * @param clock the clock of "today" and of the time the status was read
   * @param defaultSource the simulator directory read when neither {@code --fakePath} nor {@code
   *     --connectionUrl} is given, if it holds a simulator database
   * @return {@link JobExit#OK}, {@link JobExit#BAD_OPTION} or {@link JobExit#FAILED}
   */
  static int run(String[] args, PrintStream out, PrintStream err, Clock clock, Path defaultSource) {
    StatusOptions options;
    DeltaTables tables;
    String facts;
    String control;
    Optional<CdcClientFactory> source;
    try {
      options = CommandLine.parse(args, StatusOptions.class, "docs/status.md");
      if (!List.of("text", "json", "prometheus").contains(options.getFormat())) {
        throw new IllegalArgumentException(
            "--format must be text, json or prometheus, not '" + options.getFormat() + "'");
      }
      org.lakecdc.transforms.delta.HadoopConf.checkOccurrences(
          "hadoopConf", CommandLine.values(args, "hadoopConf"));
      source = source(options, defaultSource);
      tables = TableReading.tables(options);
      facts = TableReading.existingTable(tables, "factsTable", options.getFactsTable());
      requireKind(tables, "factsTable", facts, TableKind.FACTS);
      control = TableReading.tablePath("controlTable", options.getControlTable());
      if (!CommandLine.values(args, "controlTable").isEmpty()) {
        CommandLine.existingTable(
            tables,
            "controlTable",
            control,
            null,
            "give the control table the job wrote (leave --controlTable out to print without"
                + " verdicts when there is none)");
      }
      out = TableReading.output(options, out);
    } catch (IllegalArgumentException e) {
      err.println("error: " + TableReading.firstLine(e));
      return JobExit.BAD_OPTION;
    }
    try {
      Optional<Commit> newest = source.flatMap(factory -> newestCommit(factory, err));
      Report report = read(tables, facts, control, newest, clock, source.isPresent());
      if (options.getFormat().equals("prometheus")) {
        out.print(StatusPrometheus.render(report));
      } else if (options.getJson() || options.getFormat().equals("json")) {
        out.println(JSON.writerWithDefaultPrettyPrinter().writeValueAsString(json(report)));
      } else {
        printText(report, out);
      }
      if (options.getHtml() != null) {
        StatusPage.write(Path.of(options.getHtml()), report);
      }
      out.flush();
      if (options.getOutput() != null) {
        out.close();
      }
    } catch (Throwable t) {
      return JobExit.report(t, err, options.getVerbose());
    }
    return JobExit.OK;
  }

  /** Refuses a table whose kind property names another kind than {@code kind}. */
  private static void requireKind(DeltaTables tables, String option, String path, TableKind kind) {
    Optional<String> actual = tables.describe(path).kind();
    if (actual.isPresent() && !actual.get().equalsIgnoreCase(kind.propertyValue())) {
      throw new IllegalArgumentException(
          "--"
              + option
              + " "
              + path
              + " is a "
              + actual.get()
              + " table, not a "
              + kind.propertyValue()
              + " table: give the "
              + kind.propertyValue()
              + " table the job wrote");
    }
  }

  // ------------------------------------------------------------------------------------------
  // The source
  // ------------------------------------------------------------------------------------------

  /**
   * The source whose newest commit the lag is measured against: {@code --connectionUrl}, {@code
   * --fakePath}, or the default simulator directory when it holds a database; empty otherwise.
   *
   * @throws IllegalArgumentException one line naming the option and what it accepts
   */
  static Optional<CdcClientFactory> source(StatusOptions o, Path defaultSource) {
    SourceTimeZone zone = SqlServerSource.checkTimeoutAndZone(o);
    if (o.getConnectionUrl() == null) {
      String serverOnly =
          o.getUser() != null
              ? "--user"
              : o.getPasswordEnv() != null
                  ? "--passwordEnv"
                  : o.getPasswordFile() != null
                      ? "--passwordFile"
                      : !zone.isAuto() ? "--sourceTimeZone" : null;
      if (serverOnly != null) {
        throw new IllegalArgumentException(
            serverOnly
                + " applies to --connectionUrl (a real SQL Server); add --connectionUrl, or leave "
                + serverOnly
                + " out");
      }
      if (o.getFakePath() == null) {
        return TableReading.isSimulator(defaultSource)
            ? Optional.of(new FakeCdcClientFactory(defaultSource.toString()))
            : Optional.empty();
      }
      Path path = Path.of(o.getFakePath());
      if (o.getFakePath().isBlank() || !TableReading.isSimulator(path)) {
        throw new IllegalArgumentException(
            "--fakePath "
                + o.getFakePath()
                + " holds no simulator database (no server.json; docs/fake-format.md describes the"
                + " directory): give the job's --fakePath, or leave it out");
      }
      return Optional.of(new FakeCdcClientFactory(path.toString()));
    }
    if (o.getFakePath() != null) {
      throw new IllegalArgumentException(
          "--fakePath is for the simulator and --connectionUrl for a real SQL Server: pass one of"
              + " them, not both");
    }
    return Optional.of(SqlServerSource.factory(o, zone, null));
  }

  /**
   * The source's newest commit (its {@code max_lsn} and that LSN's commit time), or empty with a
   * {@code warning:} line when the source cannot be read or has no commit.
   */
  private static Optional<Commit> newestCommit(CdcClientFactory factory, PrintStream err) {
    try (CdcClient client = factory.open()) {
      Optional<Lsn> max = client.maxLsn();
      if (max.isEmpty()) {
        return Optional.empty();
      }
      return client.lastCommitAtOrBefore(max.get());
    } catch (RuntimeException e) {
      err.println(
          "warning: the source cannot be read ("
              + TableReading.firstLine(e)
              + "): each table's lag is its last batch's");
      return Optional.empty();
    }
  }

  // ------------------------------------------------------------------------------------------
  // Reading the tables
  // ------------------------------------------------------------------------------------------

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
  record FactsEvent(
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
  record OpenSnapshot(
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
  record ChunkProgress(
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
  record Verdict(
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
   */
  record TableStatus(
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
      List<LostPeriod> lostPeriods) {}

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
  record Report(
      String facts,
      String control,
      Instant readAt,
      boolean sourceGiven,
      Optional<Commit> newest,
      List<TableStatus> tables,
      List<SilverStatus> silvers) {}

  /**
   * A silver table's row of the control table: its position and verdict.
   *
   * @param table the silver table's path, as its job was given it
   * @param appliedLsn the bronze LSN silver holds every change up to, or null
   * @param finalizedUntil silver's verdict (UTC), or null
   */
  record SilverStatus(
      String table, @Nullable String appliedLsn, @Nullable LocalDateTime finalizedUntil) {}

  /**
   * Reads the status: streams the facts rows into per-table aggregates, then reads each table's
   * position and control row.
   *
   * @param tables the Delta access
   * @param facts the facts table, which exists
   * @param control the control table (absent: no verdicts)
   * @param newest the source's newest commit, when known
   * @param clock the clock of today and of {@link Report#readAt}
   * @param sourceGiven whether a source was given
   * @return the status
   */
  static Report read(
      DeltaTables tables,
      String facts,
      String control,
      Optional<Commit> newest,
      Clock clock,
      boolean sourceGiven) {
    Instant now = clock.instant().truncatedTo(ChronoUnit.MILLIS);
    LocalDateTime dayStart = LocalDate.ofInstant(now, ZoneOffset.UTC).atStartOfDay();
    Instant todayFrom = dayStart.toInstant(ZoneOffset.UTC);
    Instant todayTo = dayStart.plusDays(1).toInstant(ZoneOffset.UTC);
    Map<List<String>, TableFacts> byTable = new TreeMap<>(Status::compareKeys);
    Map<String, FactsEvent> failures = new HashMap<>();
    for (ScanFile file : tables.scanFiles(facts)) {
      try (var rows = tables.readScanFile(file)) {
        while (rows.hasNext()) {
          Map<String, Object> row = rows.next();
          String appId = (String) row.get(FactsTable.APP_ID);
          if (appId == null) {
            continue;
          }
          String family = familyOf(appId);
          String target = (String) row.get(FactsTable.TARGET);
          String event = (String) row.get(FactsTable.EVENT);
          FactsEvent fact = event(appId, row);
          if (FactsTable.EVENT_TABLE_FAILED.equals(event)) {
            failures.merge(appId, fact, (a, b) -> FactsEvent.later(a, b));
            if (target == null) {
              continue;
            }
          }
          TableFacts table =
              byTable.computeIfAbsent(
                  java.util.Arrays.asList(family, target), k -> new TableFacts(family, target));
          if (event == null) {
            GenerationFacts generation = table.generation(fact.generation());
            generation.lastBatch = FactsEvent.later(generation.lastBatch, fact);
            Instant written = fact.writtenAt();
            if (written != null
                && fact.rows() != null
                && !written.isBefore(todayFrom)
                && written.isBefore(todayTo)) {
              generation.rowsToday += fact.rows();
            }
          } else {
            lossRow(table, event, fact);
            if (FactsTable.EVENT_BOOTSTRAP.equals(event)) {
              table.bootstrap = FactsEvent.later(table.bootstrap, fact);
            }
            snapshotRow(table, event, row);
          }
        }
      } catch (IOException e) {
        throw new UncheckedIOException("Cannot read the facts table " + facts, e);
      }
    }
    // A failure of a family that has no row naming its target is still a table.
    for (String appId : failures.keySet()) {
      String family = familyOf(appId);
      boolean known =
          byTable.values().stream().anyMatch(t -> t.appId.equals(family) && t.target != null);
      if (!known) {
        byTable
            .computeIfAbsent(
                java.util.Arrays.asList(family, null), k -> new TableFacts(family, null))
            .generation(generationOf(appId));
      }
    }
    Map<String, Verdict> verdicts = verdicts(tables, control, byTable.values());
    List<TableStatus> result = new ArrayList<>();
    for (TableFacts t : byTable.values()) {
      result.add(status(tables, facts, t, failures, verdicts, newest));
    }
    return new Report(facts, control, now, sourceGiven, newest, result, silvers(tables, control));
  }

  /**
   * Folds a row of the generations and data loss into its table's aggregate: a {@code bootstrap} or
   * {@code resnapshot} completion or a {@code data_skipped} row makes its generation known (a
   * {@code resnapshot} also counts once per generation and may be the newest), a {@code
   * resnapshot_failed} may be the newest failed attempt, a {@code data_skipped} is counted and may
   * be the newest gap.
   */
  private static void lossRow(TableFacts table, String event, FactsEvent fact) {
    if (FactsTable.EVENT_BOOTSTRAP.equals(event)) {
      table.generation(fact.generation());
    } else if (ChunkedSnapshotFacts.EVENT_RESNAPSHOT.equals(event)) {
      table.generation(fact.generation());
      table.resnapshotGenerations.set(fact.generation());
      if (table.newestResnapshot == null
          || FactsEvent.GENERATION_WRITTEN.compare(fact, table.newestResnapshot) >= 0) {
        table.newestResnapshot = fact;
      }
    } else if (ChunkedSnapshotFacts.EVENT_RESNAPSHOT_FAILED.equals(event)) {
      table.newestResnapshotFailed = FactsEvent.later(table.newestResnapshotFailed, fact);
    } else if (FactsTable.EVENT_DATA_SKIPPED.equals(event)) {
      table.generation(fact.generation());
      table.skipped++;
      if (table.newestSkipped == null
          || FactsEvent.GENERATION_WRITTEN.compare(fact, table.newestSkipped) >= 0) {
        table.newestSkipped = fact;
      }
    }
  }

  /**
   * Folds a snapshot row into its table's aggregate: a {@code snapshot_open} (full: the highest S;
   * chunked: by S), a {@code snapshot_plan} (its chunk count), a {@code snapshot_chunk} (counted
   * once per index), or a completion ({@code bootstrap}/{@code resnapshot}: the highest {@code
   * max_lsn} of the stream family and target). Rows whose LSNs or detail do not parse tell nothing
   * and are left out.
   */
  private static void snapshotRow(TableFacts table, String event, Map<String, Object> row) {
    if (FactsTable.EVENT_BOOTSTRAP.equals(event)
        || ChunkedSnapshotFacts.EVENT_RESNAPSHOT.equals(event)) {
      Lsn max = lsn(row.get(FactsTable.MAX_LSN));
      if (max != null && (table.completed == null || max.isAfter(table.completed))) {
        table.completed = max;
      }
      return;
    }
    Instant written = TableReading.utc(row.get(FactsTable.WRITTEN_AT));
    JsonNode detail = detailOf(row.get(FactsTable.DETAIL));
    if (EVENT_SNAPSHOT_OPEN.equals(event)) {
      Lsn s = lsn(row.get(FactsTable.MIN_LSN));
      if (s == null) {
        s = lsn(row.get(FactsTable.END_LSN));
      }
      if (s == null) {
        return;
      }
      OpenFact open =
          new OpenFact(
              s,
              detail.path("mode").asText(ChunkedSnapshotFacts.MODE_FULL),
              detail.path("kind").asText(ChunkedSnapshotFacts.KIND_BOOTSTRAP),
              detail.path("generation").asInt(0),
              written,
              detail.path("capture_instance").isTextual()
                  ? detail.get("capture_instance").asText()
                  : null);
      if (open.captureInstance() != null) {
        table.namedOpen = OpenFact.later(table.namedOpen, open);
      }
      if (open.chunked()) {
        ChunkedFacts c = table.chunked(s);
        c.open = OpenFact.later(c.open, open);
      } else {
        table.fullOpen = OpenFact.later(table.fullOpen, open);
      }
      return;
    }
    Lsn s = lsn(detail.path("snapshot").asText(null));
    if (s == null) {
      return;
    }
    if (ChunkedSnapshotFacts.EVENT_SNAPSHOT_PLAN.equals(event) && detail.path("chunks").isArray()) {
      ChunkedFacts c = table.chunked(s);
      c.planned = detail.get("chunks").size();
      c.chunksPerWave = Math.max(1, detail.path("chunks_per_wave").asInt(1));
      c.chunkRows = detail.path("chunk_rows").asLong();
    } else if (ChunkedSnapshotFacts.EVENT_SNAPSHOT_CHUNK.equals(event)
        && detail.path("chunk").canConvertToInt()
        && detail.get("chunk").asInt() >= 0) {
      ChunkedFacts c = table.chunked(s);
      int index = detail.get("chunk").asInt();
      if (!c.done.get(index)) {
        c.done.set(index);
        if (row.get(FactsTable.ROWS) instanceof Long rows) {
          c.rows += rows;
        }
      }
      if (FactsEvent.WRITTEN_AT.compare(written, c.newestChunkAt) > 0) {
        c.newestChunkAt = written;
      }
    }
  }

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
   * The table's open snapshot: the newest (highest S) chunked open when no completion of its family
   * reaches its S, else the newest full open under the same condition (a full open beside an
   * incomplete chunked one is dead, BEHAVIOUR.md 6.10; one below a complete chunked one is complete
   * too; one above it, a later generation's re-snapshot, is open).
   */
  private static @Nullable OpenSnapshot openSnapshot(TableFacts t) {
    Lsn completed = t.completed;
    Lsn newestChunked = null;
    ChunkedFacts c = null;
    for (Map.Entry<Lsn, ChunkedFacts> e : t.chunked.entrySet()) {
      if (e.getValue().open != null) {
        newestChunked = e.getKey();
        c = e.getValue();
      }
    }
    if (c != null && c.open != null && (completed == null || completed.isBefore(newestChunked))) {
      int wavesPlanned = -1;
      int wavesDone = 0;
      if (c.planned >= 0) {
        wavesPlanned = (c.planned + c.chunksPerWave - 1) / c.chunksPerWave;
        int firstMissing = c.done.nextClearBit(0);
        wavesDone = firstMissing >= c.planned ? wavesPlanned : firstMissing / c.chunksPerWave;
      }
      OpenFact open = c.open;
      return new OpenSnapshot(
          open.mode(),
          open.kind(),
          open.s(),
          open.generation(),
          open.writtenAt(),
          new ChunkProgress(
              c.done.cardinality(),
              c.planned,
              c.chunksPerWave,
              c.chunkRows,
              wavesDone,
              wavesPlanned,
              c.rows,
              c.newestChunkAt));
    }
    OpenFact full = t.fullOpen;
    if (full == null || (completed != null && !completed.isBefore(full.s()))) {
      return null;
    }
    return new OpenSnapshot(
        full.mode(), full.kind(), full.s(), full.generation(), full.writtenAt(), null);
  }

  /** A facts row's detail as a JSON object; an empty object when it is not one. */
  private static JsonNode detailOf(@Nullable Object detail) {
    if (detail instanceof String text && text.startsWith("{")) {
      try {
        JsonNode node = JSON.readTree(text);
        if (node != null && node.isObject()) {
          return node;
        }
      } catch (JsonProcessingException e) {
        // Free text that merely starts with a brace: no snapshot detail.
      }
    }
    return JSON.createObjectNode();
  }

  private static @Nullable Lsn lsn(@Nullable Object text) {
    if (!(text instanceof String value)) {
      return null;
    }
    try {
      return Lsn.parse(value);
    } catch (IllegalArgumentException e) {
      return null;
    }
  }

  private static int compareKeys(List<String> a, List<String> b) {
    Comparator<String> text = Comparator.nullsFirst(Comparator.naturalOrder());
    int byApp = text.compare(a.get(0), b.get(0));
    return byApp != 0 ? byApp : text.compare(a.get(1), b.get(1));
  }

  private static FactsEvent event(String appId, Map<String, Object> row) {
    String lsn = (String) row.get(FactsTable.END_LSN);
    if (lsn == null) {
      lsn = (String) row.get(FactsTable.MAX_LSN);
    }
    return new FactsEvent(
        appId,
        (Long) row.get(FactsTable.BATCH_ID),
        (Long) row.get(FactsTable.ROWS),
        lsn,
        TableReading.utc(row.get(FactsTable.END_COMMIT_TS)),
        TableReading.utc(row.get(FactsTable.SOURCE_MAX_COMMIT_TS)),
        (String) row.get(FactsTable.DETAIL),
        TableReading.utc(row.get(FactsTable.WRITTEN_AT)),
        TableReading.utc(row.get(FactsTable.LOST_FROM_TS)),
        TableReading.utc(row.get(FactsTable.LOST_TO_TS)));
  }

  /**
   * The silver tables' control rows (those with an {@code applied_lsn}), in table-name order; empty
   * when there is no control table.
   */
  private static List<SilverStatus> silvers(DeltaTables tables, String control) {
    List<SilverStatus> silvers = new ArrayList<>();
    if (!tables.exists(control)) {
      return silvers;
    }
    for (ScanFile file : tables.scanFiles(control)) {
      try (var rows = tables.readScanFile(file)) {
        while (rows.hasNext()) {
          Map<String, Object> row = rows.next();
          if (row.get(ControlTable.TABLE_NAME) instanceof String table
              && row.get(ControlTable.APPLIED_LSN) instanceof String applied) {
            silvers.add(
                new SilverStatus(
                    table, applied, (LocalDateTime) row.get(ControlTable.FINALIZED_UNTIL)));
          }
        }
      } catch (IOException e) {
        throw new UncheckedIOException("Cannot read the control table " + control, e);
      }
    }
    silvers.sort(Comparator.comparing(SilverStatus::table));
    return silvers;
  }

  /**
   * A control row's {@code lost_periods} ({@link LostPeriod#fromJson}); empty for NULL or a control
   * table without the column.
   *
   * @throws IllegalStateException naming the row when the value is not that JSON form
   */
  private static List<LostPeriod> lostPeriods(String table, @Nullable Object value) {
    try {
      return LostPeriod.fromJson((String) value);
    } catch (IllegalArgumentException e) {
      throw new IllegalStateException(
          "The control row of " + table + " has an unreadable lost_periods: " + value, e);
    }
  }

  /** The control rows of the tables' targets, streamed; empty when there is no control table. */
  private static Map<String, Verdict> verdicts(
      DeltaTables tables, String control, java.util.Collection<TableFacts> of) {
    Set<String> targets =
        of.stream().map(t -> t.target).filter(Objects::nonNull).collect(Collectors.toSet());
    Map<String, Verdict> verdicts = new HashMap<>();
    if (targets.isEmpty() || !tables.exists(control)) {
      return verdicts;
    }
    for (ScanFile file : tables.scanFiles(control)) {
      try (var rows = tables.readScanFile(file)) {
        while (rows.hasNext()) {
          Map<String, Object> row = rows.next();
          Object name = row.get(ControlTable.TABLE_NAME);
          if (name instanceof String table && targets.contains(table)) {
            verdicts.put(
                table,
                new Verdict(
                    (LocalDateTime) row.get(ControlTable.FINALIZED_UNTIL),
                    (LocalDateTime) row.get(ControlTable.END_COMMIT_TS),
                    lostPeriods(table, row.get(ControlTable.LOST_PERIODS))));
          }
        }
      } catch (IOException e) {
        throw new UncheckedIOException("Cannot read the control table " + control, e);
      }
    }
    return verdicts;
  }

  /**
   * One table's status from its aggregate: the current generation is the highest of the facts rows'
   * and of the stored position's; position, last batch, rows today and failure are that
   * generation's.
   *
   * @param failures the newest {@code table_failed} row of each app id (of a generation)
   */
  private static TableStatus status(
      DeltaTables tables,
      String facts,
      TableFacts t,
      Map<String, FactsEvent> failures,
      Map<String, Verdict> verdicts,
      Optional<Commit> newest) {
    boolean exists = t.target != null && tables.exists(t.target);
    Optional<StreamPosition> position = position(tables, facts, t, exists);
    int generation =
        Math.max(t.newestGeneration, position.map(StreamPosition::generation).orElse(0));
    String generationAppId = JobConfig.streamAppId(t.appId, generation);
    GenerationFacts current = t.generations.getOrDefault(generation, new GenerationFacts());
    FactsEvent lastBatch = current.lastBatch;
    String lsn;
    Instant commitTime;
    if (lastBatch != null) {
      lsn = lastBatch.lsn();
      commitTime = lastBatch.commitTime();
    } else {
      lsn = position.map(p -> p.endLsn().toString()).orElse(null);
      commitTime = position.map(StreamPosition::endCommitTime).orElse(null);
    }
    BigDecimal lag = null;
    boolean fromSource = false;
    if (newest.isPresent() && commitTime != null) {
      lag = seconds(commitTime, newest.get().commitTime());
      fromSource = true;
    } else if (lastBatch != null
        && lastBatch.sourceMaxCommitTime() != null
        && lastBatch.commitTime() != null) {
      lag = seconds(lastBatch.commitTime(), lastBatch.sourceMaxCommitTime());
    }
    FactsEvent failure = failures.get(generationAppId);
    FactsEvent started =
        t.newestResnapshot != null && t.newestResnapshot.generation() == generation
            ? t.newestResnapshot
            : null;
    for (FactsEvent after : java.util.Arrays.asList(lastBatch, started)) {
      if (failure != null && after != null && FactsEvent.WRITTEN.compare(failure, after) <= 0) {
        failure = null;
      }
    }
    JsonNode bootstrapDetail = t.bootstrap == null ? null : detailOf(t.bootstrap.detail());
    Integer bootstrapChunks =
        bootstrapDetail != null && bootstrapDetail.path("chunks").canConvertToInt()
            ? bootstrapDetail.get("chunks").asInt()
            : null;
    Verdict verdict = t.target == null ? null : verdicts.get(t.target);
    FailedResnapshot failed = null;
    FactsEvent attempt = t.newestResnapshotFailed;
    if (attempt != null
        && (t.newestResnapshot == null
            || FactsEvent.WRITTEN.compare(attempt, t.newestResnapshot) > 0)) {
      JsonNode detail = detailOf(attempt.detail());
      failed =
          new FailedResnapshot(
              detail.path("generation").asInt(attempt.generation()),
              detail.path("snapshot").asText(attempt.lsn()),
              detail.path("reason").asText(null),
              attempt.writtenAt());
    }
    return new TableStatus(
        t.target,
        exists,
        t.appId,
        generation,
        generationAppId,
        position
            .map(StreamPosition::captureInstance)
            .filter(ci -> !ci.isEmpty())
            .orElse(t.namedOpen == null ? null : t.namedOpen.captureInstance()),
        lsn,
        commitTime,
        lastBatch,
        current.rowsToday,
        verdict,
        granularities(verdict),
        lag,
        fromSource,
        failure,
        t.bootstrap,
        bootstrapChunks,
        openSnapshot(t),
        t.resnapshotGenerations.cardinality(),
        t.newestResnapshot == null ? null : resnapshotOf(t.newestResnapshot),
        failed,
        t.skipped,
        t.newestSkipped == null ? null : skippedOf(t.newestSkipped),
        verdict == null ? List.of() : verdict.lostPeriods());
  }

  /** A {@code resnapshot} row as a {@link ResnapshotFact}. */
  private static ResnapshotFact resnapshotOf(FactsEvent row) {
    JsonNode detail = detailOf(row.detail());
    boolean chunked =
        !detail.has("mode")
            ? detail.path("chunks").canConvertToInt()
            : ChunkedSnapshotFacts.MODE_CHUNKED.equals(detail.get("mode").asText());
    return new ResnapshotFact(
        row.generation(),
        row.appId(),
        chunked ? ChunkedSnapshotFacts.MODE_CHUNKED : ChunkedSnapshotFacts.MODE_FULL,
        detail.path("snapshot").asText(row.lsn()),
        row.rows(),
        chunked && detail.path("chunks").canConvertToInt() ? detail.get("chunks").asInt() : null,
        row.writtenAt(),
        row.lostFrom(),
        row.lostTo());
  }

  /** A {@code data_skipped} row as a {@link SkippedGap}. */
  private static SkippedGap skippedOf(FactsEvent row) {
    JsonNode detail = detailOf(row.detail());
    return new SkippedGap(
        row.generation(),
        row.appId(),
        row.batchId(),
        detail.path("capture_instance").asText(null),
        detail.path("from").asText(null),
        detail.path("to").asText(row.lsn()),
        row.lostFrom(),
        row.lostTo(),
        detail.path("certain").asBoolean(true),
        detail.path("reason").asText(null),
        row.writtenAt());
  }

  /**
   * The table's stored position: the bronze table's ({@link StreamPosition#BRONZE_DOMAIN}) when it
   * is of this app id's stream family, else the job's position in the facts table (under the newest
   * generation's app id the facts rows know, then the family's) when it names this target.
   */
  private static Optional<StreamPosition> position(
      DeltaTables tables, String facts, TableFacts t, boolean targetExists) {
    try {
      if (targetExists) {
        Optional<StreamPosition> bronze =
            StreamPosition.fromJson(tables.domainMetadata(t.target, StreamPosition.BRONZE_DOMAIN))
                .filter(p -> ChunkedSnapshotFacts.ofFamily(p.appId(), t.appId));
        if (bronze.isPresent()) {
          return bronze;
        }
      }
      List<String> appIds =
          java.util.stream.Stream.of(JobConfig.streamAppId(t.appId, t.newestGeneration), t.appId)
              .distinct()
              .toList();
      for (String appId : appIds) {
        Optional<StreamPosition> inFacts =
            StreamPosition.fromJson(tables.domainMetadata(facts, StreamPosition.factsDomain(appId)))
                .filter(p -> p.target() == null || t.target == null || p.target().equals(t.target));
        if (inFacts.isPresent()) {
          return inFacts;
        }
      }
      return Optional.empty();
    } catch (IllegalArgumentException e) {
      // A position that does not parse tells nothing; the facts rows still do.
      return Optional.empty();
    }
  }

  /** The granularities whose truncation of the row's end commit time is its verdict. */
  static Set<Granularity> granularities(@Nullable Verdict verdict) {
    Set<Granularity> found = EnumSet.noneOf(Granularity.class);
    if (verdict == null || verdict.finalizedUntil() == null || verdict.endCommitTime() == null) {
      return found;
    }
    for (Granularity g : Granularity.values()) {
      if (g.truncate(verdict.endCommitTime()).equals(verdict.finalizedUntil())) {
        found.add(g);
      }
    }
    return found;
  }

  /** {@code to - from} in seconds, to the millisecond, without trailing zeros. */
  private static BigDecimal seconds(Instant from, Instant to) {
    BigDecimal s =
        BigDecimal.valueOf(Duration.between(from, to).toMillis())
            .movePointLeft(3)
            .stripTrailingZeros();
    return s.scale() < 0 ? s.setScale(0) : s;
  }

  // ------------------------------------------------------------------------------------------
  // Output
  // ------------------------------------------------------------------------------------------

  private static String granularityText(Set<Granularity> granularities) {
    return granularities.stream().map(Granularity::toString).collect(Collectors.joining(" or "));
  }

  /** The failure's {@code detail} split at its first {@code ": "}: error class and message. */
  static String[] errorOf(@Nullable String detail) {
    if (detail == null) {
      return new String[] {null, null};
    }
    int colon = detail.indexOf(": ");
    return colon < 0
        ? new String[] {null, detail}
        : new String[] {detail.substring(0, colon), detail.substring(colon + 2)};
  }

  /** The text form: a header line, then one aligned block per table. */
  static void printText(Report report, PrintStream out) {
    out.printf(
        "%s in %s, read at %s%n",
        Counts.of(report.tables().size(), "table", "tables"), report.facts(), report.readAt());
    if (report.newest().isPresent()) {
      Commit newest = report.newest().get();
      out.printf(
          "Source: newest commit %s at %s%n", newest.lsn(), TableReading.text(newest.commitTime()));
    } else {
      out.printf(
          "Source: %s; each lag is the last batch's (source_max_commit_ts - end_commit_ts)%n",
          report.sourceGiven() ? "not read" : "none given");
    }
    for (TableStatus t : report.tables()) {
      Map<String, String> lines = new LinkedHashMap<>();
      lines.put("app id", t.appId());
      if (t.generation() > 0) {
        lines.put("generation", t.generation() + " (app id " + t.generationAppId() + ")");
      }
      lines.put("capture instance", Objects.requireNonNullElse(t.captureInstance(), "unknown"));
      lines.put(
          "position",
          t.positionLsn() == null
              ? "none"
              : t.positionLsn()
                  + (t.positionCommitTime() == null
                      ? " (no commit time: not in cdc.lsn_time_mapping)"
                      : " committed at " + t.positionCommitTime()));
      lines.put(
          "last batch",
          t.lastBatch() == null
              ? "none"
              : t.lastBatch().batchId()
                  + ", written at "
                  + TableReading.text(t.lastBatch().writtenAt()));
      lines.put("rows today", String.format("%,d", t.rowsToday()));
      lines.put(
          "finalized_until",
          t.verdict() == null || t.verdict().finalizedUntil() == null
              ? "none yet"
              : TableReading.text(t.verdict().finalizedUntil())
                  + (t.granularities().isEmpty()
                      ? ""
                      : " (" + granularityText(t.granularities()) + ")"));
      lines.put(
          "lag",
          t.lagSeconds() == null
              ? "unknown"
              : t.lagSeconds().toPlainString()
                  + " s"
                  + (t.lagFromSource()
                      ? " behind the source's newest commit"
                      : " behind the source at the last batch"));
      if (t.failure() == null) {
        lines.put("failure", "none");
      } else {
        lines.put(
            "failure",
            "at "
                + Objects.requireNonNullElse(t.failure().lsn(), "an unknown LSN")
                + ", written at "
                + TableReading.text(t.failure().writtenAt())
                + ": "
                + t.failure().detail());
      }
      lines.put(
          "bootstrap",
          t.bootstrap() == null
              ? "none"
              : (t.bootstrap().rows() == null
                      ? "a reused snapshot"
                      : Counts.of(t.bootstrap().rows(), "row", "rows"))
                  + " at S "
                  + t.bootstrap().lsn()
                  + (t.bootstrapChunks() == null
                      ? ""
                      : " in " + Counts.of(t.bootstrapChunks(), "chunk", "chunks"))
                  + ", written at "
                  + TableReading.text(t.bootstrap().writtenAt()));
      OpenSnapshot open = t.openSnapshot();
      lines.put(
          "snapshot",
          open == null
              ? "no open snapshot"
              : open.mode()
                  + " "
                  + open.kind()
                  + " open at S "
                  + open.lsn()
                  + ", generation "
                  + open.generation()
                  + ", since "
                  + TableReading.text(open.openedAt()));
      if (open != null && open.chunks() != null) {
        lines.put("chunks", progressText(open.chunks()));
      }
      if (t.newestResnapshot() != null) {
        lines.put(
            "resnapshots",
            t.resnapshots() + ", the newest: " + resnapshotText(t.newestResnapshot()));
      }
      FailedResnapshot failed = t.failedResnapshot();
      if (failed != null) {
        lines.put(
            "resnapshot failed",
            "generation "
                + failed.generation()
                + " at S "
                + failed.snapshotLsn()
                + ", written at "
                + TableReading.text(failed.writtenAt())
                + (failed.reason() == null ? "" : ": " + failed.reason()));
      }
      if (t.newestSkipped() != null) {
        lines.put(
            "data skipped",
            Counts.of(t.skipped(), "gap", "gaps")
                + ", the newest: "
                + skippedText(t.newestSkipped()));
      }
      if (!t.lostPeriods().isEmpty()) {
        lines.put(
            "lost periods",
            t.lostPeriods().stream().map(LostPeriod::toString).collect(Collectors.joining(", "))
                + " (no verdict covers them)");
      }
      out.println();
      out.println(
          t.target() == null
              ? "(no target recorded)"
              : t.target() + (t.targetExists() ? "" : "  (no Delta table there)"));
      for (Map.Entry<String, String> line : lines.entrySet()) {
        out.printf("  %-17s %s%n", line.getKey(), line.getValue());
      }
    }
    for (SilverStatus silver : report.silvers()) {
      out.println();
      out.println(silver.table() + "  (silver)");
      out.printf("  %-17s %s%n", "applied_lsn", silver.appliedLsn());
      out.printf(
          "  %-17s %s%n",
          "finalized_until",
          silver.finalizedUntil() == null
              ? "none yet"
              : TableReading.text(silver.finalizedUntil()));
    }
  }

  /**
   * A re-snapshot, e.g. {@code generation 1, whole, 4 rows at S 0x0000002A000001000061, written at
   * 2030-01-02T03:00:00Z, lost 2026-09-28T13:52:00Z to 2026-09-28T13:54:00Z} ({@code chunked in 4
   * chunks} for a chunked one; {@code rows not recorded} when the row has none; the gap left out
   * when the row records none).
   */
  static String resnapshotText(ResnapshotFact r) {
    boolean chunked = ChunkedSnapshotFacts.MODE_CHUNKED.equals(r.mode());
    return "generation "
        + r.generation()
        + ", "
        + (chunked
            ? "chunked"
                + (r.chunks() == null ? "" : " in " + Counts.of(r.chunks(), "chunk", "chunks"))
            : "whole")
        + ", "
        + (r.rows() == null ? "rows not recorded" : Counts.of(r.rows(), "row", "rows"))
        + " at S "
        + r.snapshotLsn()
        + ", written at "
        + TableReading.text(r.writtenAt())
        + gapText(r.lostFrom(), r.lostTo());
  }

  /**
   * A skipped gap, e.g. {@code batch 1, lost 2026-09-28T13:52:00Z to 2026-09-28T16:00:00Z
   * (certain), written at 2030-01-02T03:00:00Z}; {@code of generation n} after the batch when n >
   * 0, {@code (possible: <reason>)} for a gap that is only possible.
   */
  static String skippedText(SkippedGap g) {
    return "batch "
        + (g.batchId() == null ? "unknown" : g.batchId().toString())
        + (g.generation() > 0 ? " of generation " + g.generation() : "")
        + gapText(g.lostFrom(), g.lostTo())
        + (g.certain()
            ? " (certain)"
            : " (possible" + (g.reason() == null ? ")" : ": " + g.reason() + ")"))
        + ", written at "
        + TableReading.text(g.writtenAt());
  }

  /**
   * {@code , lost <from> to <to>} ({@code , lost up to <to>} without a start); empty without both.
   */
  private static String gapText(@Nullable Instant from, @Nullable Instant to) {
    if (to == null) {
      return from == null ? "" : ", lost from " + from;
    }
    return from == null ? ", lost up to " + to : ", lost " + from + " to " + to;
  }

  /**
   * A chunked snapshot's progress line, e.g. {@code 2 of 4 done, 1 of 2 waves (2 chunks each),
   * 1,200 rows, newest chunk at 2030-01-02T03:10:00Z}, or {@code not planned yet} before its plan.
   */
  static String progressText(ChunkProgress p) {
    String rows =
        Counts.of(p.rows(), "row", "rows")
            + (p.newestChunkAt() == null
                ? ", no chunk yet"
                : ", newest chunk at " + TableReading.text(p.newestChunkAt()));
    if (p.planned() < 0) {
      return "not planned yet" + (p.done() == 0 ? "" : ", " + p.done() + " done, " + rows);
    }
    return p.done()
        + " of "
        + p.planned()
        + " done, "
        + p.wavesDone()
        + " of "
        + p.wavesPlanned()
        + " waves ("
        + Counts.of(p.chunksPerWave(), "chunk", "chunks")
        + " each), "
        + rows;
  }

  /** The JSON form (docs/status.md lists the fields). */
  static ObjectNode json(Report report) {
    ObjectNode root = JSON.createObjectNode();
    root.put("facts_table", report.facts());
    root.put("control_table", report.control());
    root.put("read_at", report.readAt().toString());
    ObjectNode source = root.putObject("source");
    source.put("given", report.sourceGiven());
    putCommit(source, report.newest().orElse(null));
    ArrayNode silvers = root.putArray("silver_tables");
    for (SilverStatus silver : report.silvers()) {
      ObjectNode node = silvers.addObject();
      node.put("table", silver.table());
      node.put("applied_lsn", silver.appliedLsn());
      TableReading.put(node, "finalized_until", silver.finalizedUntil());
    }
    ArrayNode list = root.putArray("tables");
    for (TableStatus t : report.tables()) {
      ObjectNode node = list.addObject();
      node.put("target", t.target());
      node.put("target_exists", t.targetExists());
      node.put("app_id", t.appId());
      node.put("generation", t.generation());
      node.put("generation_app_id", t.generationAppId());
      node.put("capture_instance", t.captureInstance());
      ObjectNode position = node.putObject("position");
      position.put("end_lsn", t.positionLsn());
      position.put("end_commit_ts", instant(t.positionCommitTime()));
      if (t.lastBatch() == null) {
        node.putNull("last_batch");
      } else {
        ObjectNode batch = node.putObject("last_batch");
        batch.put("batch_id", t.lastBatch().batchId());
        batch.put("written_at", instant(t.lastBatch().writtenAt()));
      }
      node.put("rows_today", t.rowsToday());
      node.put(
          "finalized_until",
          t.verdict() == null ? null : instant(TableReading.utc(t.verdict().finalizedUntil())));
      ArrayNode granularities = node.putArray("granularity");
      t.granularities().forEach(g -> granularities.add(g.toString()));
      node.put("lag_seconds", t.lagSeconds());
      node.put(
          "lag_basis", t.lagSeconds() == null ? null : t.lagFromSource() ? "source" : "last_batch");
      if (t.failure() == null) {
        node.putNull("failure");
      } else {
        ObjectNode failure = node.putObject("failure");
        String[] error = errorOf(t.failure().detail());
        failure.put("error_class", error[0]);
        failure.put("message", error[1]);
        failure.put("end_lsn", t.failure().lsn());
        failure.put("written_at", instant(t.failure().writtenAt()));
      }
      if (t.bootstrap() == null) {
        node.putNull("bootstrap");
      } else {
        ObjectNode bootstrap = node.putObject("bootstrap");
        bootstrap.put("rows", t.bootstrap().rows());
        bootstrap.put("snapshot_lsn", t.bootstrap().lsn());
        bootstrap.put("written_at", instant(t.bootstrap().writtenAt()));
        bootstrap.put("chunks", t.bootstrapChunks());
      }
      OpenSnapshot o = t.openSnapshot();
      if (o == null) {
        node.putNull("open_snapshot");
      } else {
        ObjectNode open = node.putObject("open_snapshot");
        open.put("mode", o.mode());
        open.put("kind", o.kind());
        open.put("snapshot_lsn", o.lsn().toString());
        open.put("generation", o.generation());
        open.put("written_at", instant(o.openedAt()));
        ChunkProgress p = o.chunks();
        if (p == null) {
          open.putNull("chunks");
        } else {
          boolean planned = p.planned() >= 0;
          ObjectNode chunks = open.putObject("chunks");
          chunks.put("planned", planned ? p.planned() : null);
          chunks.put("done", p.done());
          chunks.put("chunks_per_wave", planned ? p.chunksPerWave() : null);
          chunks.put("chunk_rows", planned ? p.chunkRows() : null);
          chunks.put("waves_planned", planned ? p.wavesPlanned() : null);
          chunks.put("waves_done", planned ? p.wavesDone() : null);
          chunks.put("rows", p.rows());
          chunks.put("newest_chunk_at", instant(p.newestChunkAt()));
        }
      }
      putLosses(node, t);
    }
    return root;
  }

  /** The fields {@code resnapshots}, {@code data_skipped} and {@code lost_periods} of a table. */
  private static void putLosses(ObjectNode node, TableStatus t) {
    ObjectNode resnapshots = node.putObject("resnapshots");
    resnapshots.put("count", t.resnapshots());
    ResnapshotFact r = t.newestResnapshot();
    if (r == null) {
      resnapshots.putNull("newest");
    } else {
      ObjectNode newest = resnapshots.putObject("newest");
      newest.put("generation", r.generation());
      newest.put("app_id", r.appId());
      newest.put("mode", r.mode());
      newest.put("snapshot_lsn", r.snapshotLsn());
      newest.put("rows", r.rows());
      newest.put("chunks", r.chunks());
      newest.put("written_at", instant(r.writtenAt()));
      newest.put("lost_from_ts", instant(r.lostFrom()));
      newest.put("lost_to_ts", instant(r.lostTo()));
    }
    FailedResnapshot f = t.failedResnapshot();
    if (f == null) {
      resnapshots.putNull("failed");
    } else {
      ObjectNode failed = resnapshots.putObject("failed");
      failed.put("generation", f.generation());
      failed.put("snapshot_lsn", f.snapshotLsn());
      failed.put("reason", f.reason());
      failed.put("written_at", instant(f.writtenAt()));
    }
    ObjectNode skipped = node.putObject("data_skipped");
    skipped.put("count", t.skipped());
    SkippedGap g = t.newestSkipped();
    if (g == null) {
      skipped.putNull("newest");
    } else {
      ObjectNode newest = skipped.putObject("newest");
      newest.put("generation", g.generation());
      newest.put("app_id", g.appId());
      newest.put("batch_id", g.batchId());
      newest.put("capture_instance", g.captureInstance());
      newest.put("from", g.from());
      newest.put("to", g.to());
      newest.put("lost_from_ts", instant(g.lostFrom()));
      newest.put("lost_to_ts", instant(g.lostTo()));
      newest.put("certain", g.certain());
      newest.put("reason", g.reason());
      newest.put("written_at", instant(g.writtenAt()));
    }
    ArrayNode lost = node.putArray("lost_periods");
    for (LostPeriod p : t.lostPeriods()) {
      ObjectNode period = lost.addObject();
      TableReading.put(period, "from", p.from());
      TableReading.put(period, "to", p.to());
    }
  }

  private static void putCommit(ObjectNode node, @Nullable Commit commit) {
    node.put("max_lsn", commit == null ? null : commit.lsn().toString());
    node.put("max_commit_ts", commit == null ? null : instant(commit.commitTime()));
  }

  private static @Nullable String instant(@Nullable Instant instant) {
    return instant == null ? null : instant.toString();
  }
}
