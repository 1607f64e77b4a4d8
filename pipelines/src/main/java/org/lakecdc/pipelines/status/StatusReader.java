package org.lakecdc.pipelines.status;

import static org.lakecdc.pipelines.status.StatusModel.*;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.io.mssqlcdc.client.Commit;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.pipelines.cli.TableReading;
import org.lakecdc.pipelines.targets.JobConfig;
import org.lakecdc.pipelines.targets.MembershipFacts;
import org.lakecdc.transforms.delta.DeltaTables;
import org.lakecdc.transforms.delta.ScanFile;
import org.lakecdc.transforms.facts.FactsTable;
import org.lakecdc.transforms.finalization.ControlTable;
import org.lakecdc.transforms.finalization.Granularity;
import org.lakecdc.transforms.finalization.LostPeriod;
import org.lakecdc.transforms.position.StreamPosition;
import org.lakecdc.transforms.snapshot.ChunkedSnapshotFacts;

/**
 * Reads the facts and control tables (and the silver tables the control rows name) into a {@link
 * StatusModel.Report}: one data file at a time, a Parquet batch at a time, keeping only per-table
 * aggregates, so memory is bounded by the number of tables, not of facts rows.
 */
public final class StatusReader {
  private StatusReader() {}

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
  public static Report read(
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
    Map<List<String>, TableFacts> byTable = new TreeMap<>(StatusReader::compareKeys);
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
            } else if (MembershipFacts.EVENT_JOINED.equals(event)) {
              table.joined = FactsEvent.later(table.joined, fact);
            } else if (MembershipFacts.EVENT_LEFT.equals(event)) {
              table.left = FactsEvent.later(table.left, fact);
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
  static void lossRow(TableFacts table, String event, FactsEvent fact) {
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
  static void snapshotRow(TableFacts table, String event, Map<String, Object> row) {
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
    if (ChunkedSnapshotFacts.EVENT_SNAPSHOT_OPEN.equals(event)) {
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
   * The table's open snapshot: the newest (highest S) chunked open when no completion of its family
   * reaches its S, else the newest full open under the same condition (a full open beside an
   * incomplete chunked one is dead, docs/behaviour.md §6.10; one below a complete chunked one is
   * complete too; one above it, a later generation's re-snapshot, is open).
   */
  static @Nullable OpenSnapshot openSnapshot(TableFacts t) {
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
  static JsonNode detailOf(@Nullable Object detail) {
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

  static @Nullable Lsn lsn(@Nullable Object text) {
    if (!(text instanceof String value)) {
      return null;
    }
    try {
      return Lsn.parse(value);
    } catch (IllegalArgumentException e) {
      return null;
    }
  }

  static int compareKeys(List<String> a, List<String> b) {
    Comparator<String> text = Comparator.nullsFirst(Comparator.naturalOrder());
    int byApp = text.compare(a.get(0), b.get(0));
    return byApp != 0 ? byApp : text.compare(a.get(1), b.get(1));
  }

  static FactsEvent event(String appId, Map<String, Object> row) {
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
  static List<SilverStatus> silvers(DeltaTables tables, String control) {
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
                    table,
                    applied,
                    (LocalDateTime) row.get(ControlTable.FINALIZED_UNTIL),
                    kindOf(tables, table)));
          }
        }
      } catch (IOException e) {
        throw new UncheckedIOException("Cannot read the control table " + control, e);
      }
    }
    silvers.sort(Comparator.comparing(SilverStatus::table));
    return silvers;
  }

  /** {@code history} for a history table, else {@code silver} (also when it cannot be read). */
  private static String kindOf(DeltaTables tables, String table) {
    String history = org.lakecdc.transforms.delta.TableKind.HISTORY.propertyValue();
    try {
      return tables.exists(table)
              && tables.describe(table).kind().filter(history::equalsIgnoreCase).isPresent()
          ? history
          : "silver";
    } catch (RuntimeException e) {
      return "silver";
    }
  }

  /**
   * A control row's {@code lost_periods} ({@link LostPeriod#fromJson}); empty for NULL or a control
   * table without the column.
   *
   * @throws IllegalStateException naming the row when the value is not that JSON form
   */
  static List<LostPeriod> lostPeriods(String table, @Nullable Object value) {
    try {
      return LostPeriod.fromJson((String) value);
    } catch (IllegalArgumentException e) {
      throw new IllegalStateException(
          "The control row of " + table + " has an unreadable lost_periods: " + value, e);
    }
  }

  /** The control rows of the tables' targets, streamed; empty when there is no control table. */
  static Map<String, Verdict> verdicts(
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
  static TableStatus status(
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
        verdict == null ? List.of() : verdict.lostPeriods(),
        t.joined,
        t.left);
  }

  /** A {@code resnapshot} row as a {@link ResnapshotFact}. */
  static ResnapshotFact resnapshotOf(FactsEvent row) {
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
  static SkippedGap skippedOf(FactsEvent row) {
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
  static Optional<StreamPosition> position(
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
  static BigDecimal seconds(Instant from, Instant to) {
    BigDecimal s =
        BigDecimal.valueOf(Duration.between(from, to).toMillis())
            .movePointLeft(3)
            .stripTrailingZeros();
    return s.scale() < 0 ? s.setScale(0) : s;
  }

  // ------------------------------------------------------------------------------------------
  // Output
  // ------------------------------------------------------------------------------------------

  static String granularityText(Set<Granularity> granularities) {
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
}
