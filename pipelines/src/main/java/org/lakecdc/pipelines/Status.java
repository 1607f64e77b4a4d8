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
import org.lakecdc.transforms.delta.TableKind;
import org.lakecdc.transforms.facts.FactsTable;
import org.lakecdc.transforms.finalization.ControlTable;
import org.lakecdc.transforms.finalization.Granularity;
import org.lakecdc.transforms.position.StreamPosition;
import org.lakecdc.transforms.snapshot.ChunkedSnapshotFacts;

/**
 * The {@code status} command: where every table the main job writes stands, read from its facts and
 * control tables with Delta Kernel (no Spark, no Beam pipeline). One table per distinct {@code
 * (app_id, target)} of the facts table, in that order, each with:
 *
 * <ul>
 *   <li>its target (the bronze table's path), app id and capture instance (from the bronze table's
 *       position, {@link StreamPosition#BRONZE_DOMAIN}, else from the job's position in the facts
 *       table);
 *   <li>its position: the end LSN and end commit time (UTC) of its last batch (the facts batch row
 *       written last), or of its stored position when it has no batch yet (a bootstrap only);
 *   <li>the last batch's id and when it was written ({@code written_at}, UTC);
 *   <li>rows today: the sum of {@code rows} of its batch rows written on the current UTC day of the
 *       clock ({@code [00:00, 24:00)});
 *   <li>the verdict {@code finalized_until} of its control row and the granularity that verdict was
 *       computed with (the granularities whose truncation of the row's {@code end_commit_ts} gives
 *       {@code finalized_until}: the control table does not store it);
 *   <li>the lag in seconds: the source's newest commit time (the commit of its {@code max_lsn})
 *       minus the position's commit time when a source is given or the demo source exists, else the
 *       last batch's {@code source_max_commit_ts - end_commit_ts};
 *   <li>its failure: the newest {@value FactsTable#EVENT_TABLE_FAILED} row of its app id when it
 *       was written after the last batch ({@code detail} {@code "<ErrorClass>: <message>"}, {@code
 *       end_lsn} where it failed);
 *   <li>its newest bootstrap snapshot (rows, LSN S, when; a chunked one's chunk count), and its
 *       open snapshot: the {@code snapshot_open} row with the highest S among the chunked ones,
 *       else among the full ones, that no {@code bootstrap}/{@code resnapshot} row of the stream
 *       family ({@code app_id} and {@code app_id.g<n>}) with {@code max_lsn >= S} completes; a full
 *       open does not count next to a chunked open of the same app id (BEHAVIOUR.md 6.10). A
 *       chunked one shows its mode, kind, generation, when it was opened, and from its {@code
 *       snapshot_plan} and {@code snapshot_chunk} rows ({@link ChunkedSnapshotFacts}) the chunks
 *       done of those planned, the complete waves, the rows so far and the newest chunk's {@code
 *       written_at}.
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
      org.lakecdc.transforms.delta.HadoopConf.checkOccurrences(
          "hadoopConf", CommandLine.values(args, "hadoopConf"));
      source = source(options, defaultSource);
      tables = TableReading.tables(options);
      facts = TableReading.existingTable(tables, "factsTable", options.getFactsTable());
      requireKind(tables, "factsTable", facts, TableKind.FACTS);
      control = TableReading.tablePath("controlTable", options.getControlTable());
      out = TableReading.output(options, out);
    } catch (IllegalArgumentException e) {
      err.println("error: " + TableReading.firstLine(e));
      return JobExit.BAD_OPTION;
    }
    try {
      Optional<Commit> newest = source.flatMap(factory -> newestCommit(factory, err));
      Report report = read(tables, facts, control, newest, clock, source.isPresent());
      if (options.getJson()) {
        out.println(JSON.writerWithDefaultPrettyPrinter().writeValueAsString(json(report)));
      } else {
        printText(report, out);
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

  /** A batch or event facts row, as much of it as the status needs. */
  record FactsEvent(
      @Nullable Long batchId,
      @Nullable Long rows,
      @Nullable String lsn,
      @Nullable Instant commitTime,
      @Nullable Instant sourceMaxCommitTime,
      @Nullable String detail,
      @Nullable Instant writtenAt) {
    /** Orders {@code written_at} times, NULL first. */
    static final Comparator<@Nullable Instant> WRITTEN_AT =
        Comparator.nullsFirst(Comparator.<Instant>naturalOrder());

    /** Orders rows by {@code written_at} (NULL first), then by batch id (NULL first). */
    static final Comparator<FactsEvent> WRITTEN =
        Comparator.comparing(FactsEvent::writtenAt, WRITTEN_AT)
            .thenComparing(
                FactsEvent::batchId, Comparator.nullsFirst(Comparator.<Long>naturalOrder()));

    /** The later of {@code a} and {@code b} by {@link #WRITTEN}; {@code b} when equal. */
    static @Nullable FactsEvent later(@Nullable FactsEvent a, FactsEvent b) {
      return a == null || WRITTEN.compare(b, a) >= 0 ? b : a;
    }
  }

  /**
   * A {@code snapshot_open} row: its S, and from its detail JSON the mode, kind and generation (a
   * row without detail reads as a full bootstrap of generation 0).
   */
  record OpenFact(Lsn s, String mode, String kind, int generation, @Nullable Instant writtenAt) {
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

  /** The per-table aggregate of the facts rows: what the status keeps while streaming them. */
  static final class TableFacts {
    final String appId;
    final @Nullable String target;
    @Nullable FactsEvent lastBatch;
    long rowsToday;
    @Nullable FactsEvent bootstrap;
    @Nullable OpenFact fullOpen;

    /** The chunked snapshots' rows by S (open, plan and chunk rows may come in any file order). */
    final Map<Lsn, ChunkedFacts> chunked = new TreeMap<>();

    TableFacts(String appId, @Nullable String target) {
      this.appId = appId;
      this.target = target;
    }

    ChunkedFacts chunked(Lsn s) {
      return chunked.computeIfAbsent(s, k -> new ChunkedFacts());
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

  /** The verdict row of a table in the control table. */
  record Verdict(@Nullable LocalDateTime finalizedUntil, @Nullable LocalDateTime endCommitTime) {}

  /**
   * One table's status.
   *
   * @param target the bronze table's path as the facts rows name it, or null
   * @param targetExists whether a Delta table exists at the target
   * @param appId the job's app id
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
   */
  record TableStatus(
      @Nullable String target,
      boolean targetExists,
      String appId,
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
      @Nullable OpenSnapshot openSnapshot) {}

  /**
   * The whole status.
   *
   * @param facts the facts table read
   * @param control the control table read
   * @param readAt when it was read (the clock's instant, to the millisecond)
   * @param sourceGiven whether a source was given (or the demo source found)
   * @param newest the source's newest commit, when it was read
   * @param tables the tables, by app id then target
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
    Map<List<String>, Lsn> completions = new HashMap<>();
    for (DeltaTables.ScanFile file : tables.scanFiles(facts)) {
      try (var rows = tables.readScanFile(file)) {
        while (rows.hasNext()) {
          Map<String, Object> row = rows.next();
          String appId = (String) row.get(FactsTable.APP_ID);
          if (appId == null) {
            continue;
          }
          String target = (String) row.get(FactsTable.TARGET);
          String event = (String) row.get(FactsTable.EVENT);
          FactsEvent fact = event(row);
          if (FactsTable.EVENT_TABLE_FAILED.equals(event)) {
            failures.merge(appId, fact, (a, b) -> FactsEvent.later(a, b));
            if (target == null) {
              continue;
            }
          }
          TableFacts table =
              byTable.computeIfAbsent(
                  java.util.Arrays.asList(appId, target), k -> new TableFacts(appId, target));
          if (event == null) {
            table.lastBatch = FactsEvent.later(table.lastBatch, fact);
            Instant written = fact.writtenAt();
            if (written != null
                && fact.rows() != null
                && !written.isBefore(todayFrom)
                && written.isBefore(todayTo)) {
              table.rowsToday += fact.rows();
            }
          } else {
            if (FactsTable.EVENT_BOOTSTRAP.equals(event)) {
              table.bootstrap = FactsEvent.later(table.bootstrap, fact);
            }
            snapshotRow(table, completions, event, row);
          }
        }
      } catch (IOException e) {
        throw new UncheckedIOException("Cannot read the facts table " + facts, e);
      }
    }
    // A failure of an app id that has no row naming its target is still a table.
    for (String appId : failures.keySet()) {
      boolean known = byTable.values().stream().anyMatch(t -> t.appId.equals(appId));
      if (!known) {
        byTable.put(java.util.Arrays.asList(appId, null), new TableFacts(appId, null));
      }
    }
    Map<String, Verdict> verdicts = verdicts(tables, control, byTable.values());
    List<TableStatus> result = new ArrayList<>();
    for (TableFacts t : byTable.values()) {
      Lsn completed = completions.get(java.util.Arrays.asList(familyOf(t.appId), t.target));
      result.add(status(tables, facts, t, failures.get(t.appId), verdicts, newest, completed));
    }
    return new Report(facts, control, now, sourceGiven, newest, result, silvers(tables, control));
  }

  /**
   * Folds a snapshot row into its table's aggregate: a {@code snapshot_open} (full: the highest S;
   * chunked: by S), a {@code snapshot_plan} (its chunk count), a {@code snapshot_chunk} (counted
   * once per index), or a completion ({@code bootstrap}/{@code resnapshot}: the highest {@code
   * max_lsn} of the stream family and target). Rows whose LSNs or detail do not parse tell nothing
   * and are left out.
   */
  private static void snapshotRow(
      TableFacts table, Map<List<String>, Lsn> completions, String event, Map<String, Object> row) {
    if (FactsTable.EVENT_BOOTSTRAP.equals(event)
        || ChunkedSnapshotFacts.EVENT_RESNAPSHOT.equals(event)) {
      Lsn max = lsn(row.get(FactsTable.MAX_LSN));
      if (max != null) {
        completions.merge(
            java.util.Arrays.asList(familyOf(table.appId), table.target),
            max,
            (a, b) -> b.isAfter(a) ? b : a);
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
              written);
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
   * The stream family of an app id: {@code x} for {@code x} and for a generation {@code x.g<n>}.
   */
  static String familyOf(String appId) {
    int dot = appId.lastIndexOf(".g");
    if (dot > 0
        && dot + 2 < appId.length()
        && appId.substring(dot + 2).chars().allMatch(Character::isDigit)) {
      return appId.substring(0, dot);
    }
    return appId;
  }

  /**
   * The table's open snapshot: the newest (highest S) chunked open when no completion of its family
   * reaches its S, else the newest full open under the same condition when the table has no chunked
   * open at all (a full open beside a chunked one is dead, BEHAVIOUR.md 6.10).
   */
  private static @Nullable OpenSnapshot openSnapshot(TableFacts t, @Nullable Lsn completed) {
    Lsn newestChunked = null;
    ChunkedFacts c = null;
    for (Map.Entry<Lsn, ChunkedFacts> e : t.chunked.entrySet()) {
      if (e.getValue().open != null) {
        newestChunked = e.getKey();
        c = e.getValue();
      }
    }
    if (c != null && c.open != null) {
      if (completed != null && !completed.isBefore(newestChunked)) {
        return null;
      }
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

  private static FactsEvent event(Map<String, Object> row) {
    String lsn = (String) row.get(FactsTable.END_LSN);
    if (lsn == null) {
      lsn = (String) row.get(FactsTable.MAX_LSN);
    }
    return new FactsEvent(
        (Long) row.get(FactsTable.BATCH_ID),
        (Long) row.get(FactsTable.ROWS),
        lsn,
        TableReading.utc(row.get(FactsTable.END_COMMIT_TS)),
        TableReading.utc(row.get(FactsTable.SOURCE_MAX_COMMIT_TS)),
        (String) row.get(FactsTable.DETAIL),
        TableReading.utc(row.get(FactsTable.WRITTEN_AT)));
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
    for (DeltaTables.ScanFile file : tables.scanFiles(control)) {
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

  /** The control rows of the tables' targets, streamed; empty when there is no control table. */
  private static Map<String, Verdict> verdicts(
      DeltaTables tables, String control, java.util.Collection<TableFacts> of) {
    Set<String> targets =
        of.stream().map(t -> t.target).filter(Objects::nonNull).collect(Collectors.toSet());
    Map<String, Verdict> verdicts = new HashMap<>();
    if (targets.isEmpty() || !tables.exists(control)) {
      return verdicts;
    }
    for (DeltaTables.ScanFile file : tables.scanFiles(control)) {
      try (var rows = tables.readScanFile(file)) {
        while (rows.hasNext()) {
          Map<String, Object> row = rows.next();
          Object name = row.get(ControlTable.TABLE_NAME);
          if (name instanceof String table && targets.contains(table)) {
            verdicts.put(
                table,
                new Verdict(
                    (LocalDateTime) row.get(ControlTable.FINALIZED_UNTIL),
                    (LocalDateTime) row.get(ControlTable.END_COMMIT_TS)));
          }
        }
      } catch (IOException e) {
        throw new UncheckedIOException("Cannot read the control table " + control, e);
      }
    }
    return verdicts;
  }

  private static TableStatus status(
      DeltaTables tables,
      String facts,
      TableFacts t,
      @Nullable FactsEvent failure,
      Map<String, Verdict> verdicts,
      Optional<Commit> newest,
      @Nullable Lsn completed) {
    boolean exists = t.target != null && tables.exists(t.target);
    Optional<StreamPosition> position = position(tables, facts, t, exists);
    String lsn;
    Instant commitTime;
    if (t.lastBatch != null) {
      lsn = t.lastBatch.lsn();
      commitTime = t.lastBatch.commitTime();
    } else {
      lsn = position.map(p -> p.endLsn().toString()).orElse(null);
      commitTime = position.map(StreamPosition::endCommitTime).orElse(null);
    }
    BigDecimal lag = null;
    boolean fromSource = false;
    if (newest.isPresent() && commitTime != null) {
      lag = seconds(commitTime, newest.get().commitTime());
      fromSource = true;
    } else if (t.lastBatch != null
        && t.lastBatch.sourceMaxCommitTime() != null
        && t.lastBatch.commitTime() != null) {
      lag = seconds(t.lastBatch.commitTime(), t.lastBatch.sourceMaxCommitTime());
    }
    if (failure != null
        && t.lastBatch != null
        && FactsEvent.WRITTEN.compare(failure, t.lastBatch) <= 0) {
      failure = null;
    }
    JsonNode bootstrapDetail = t.bootstrap == null ? null : detailOf(t.bootstrap.detail());
    Integer bootstrapChunks =
        bootstrapDetail != null && bootstrapDetail.path("chunks").canConvertToInt()
            ? bootstrapDetail.get("chunks").asInt()
            : null;
    Verdict verdict = t.target == null ? null : verdicts.get(t.target);
    return new TableStatus(
        t.target,
        exists,
        t.appId,
        position.map(StreamPosition::captureInstance).filter(ci -> !ci.isEmpty()).orElse(null),
        lsn,
        commitTime,
        t.lastBatch,
        t.rowsToday,
        verdict,
        granularities(verdict),
        lag,
        fromSource,
        failure,
        t.bootstrap,
        bootstrapChunks,
        openSnapshot(t, completed));
  }

  /**
   * The table's stored position: the bronze table's ({@link StreamPosition#BRONZE_DOMAIN}) when it
   * is this app id's, else the job's position in the facts table when it names this target.
   */
  private static Optional<StreamPosition> position(
      DeltaTables tables, String facts, TableFacts t, boolean targetExists) {
    try {
      if (targetExists) {
        Optional<StreamPosition> bronze =
            StreamPosition.fromJson(tables.domainMetadata(t.target, StreamPosition.BRONZE_DOMAIN))
                .filter(p -> p.appId().equals(t.appId));
        if (bronze.isPresent()) {
          return bronze;
        }
      }
      return StreamPosition.fromJson(
              tables.domainMetadata(facts, StreamPosition.factsDomain(t.appId)))
          .filter(p -> p.target() == null || t.target == null || p.target().equals(t.target));
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
    }
    return root;
  }

  private static void putCommit(ObjectNode node, @Nullable Commit commit) {
    node.put("max_lsn", commit == null ? null : commit.lsn().toString());
    node.put("max_commit_ts", commit == null ? null : instant(commit.commitTime()));
  }

  private static @Nullable String instant(@Nullable Instant instant) {
    return instant == null ? null : instant.toString();
  }
}
