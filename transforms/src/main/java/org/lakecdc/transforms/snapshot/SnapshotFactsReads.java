package org.lakecdc.transforms.snapshot;

import static org.lakecdc.transforms.snapshot.ChunkedSnapshotFacts.EVENT_RESNAPSHOT;
import static org.lakecdc.transforms.snapshot.ChunkedSnapshotFacts.EVENT_RESNAPSHOT_FAILED;
import static org.lakecdc.transforms.snapshot.ChunkedSnapshotFacts.EVENT_SNAPSHOT_CHUNK;
import static org.lakecdc.transforms.snapshot.ChunkedSnapshotFacts.EVENT_SNAPSHOT_OPEN;
import static org.lakecdc.transforms.snapshot.ChunkedSnapshotFacts.EVENT_SNAPSHOT_PLAN;
import static org.lakecdc.transforms.snapshot.ChunkedSnapshotFacts.KIND_BOOTSTRAP;
import static org.lakecdc.transforms.snapshot.ChunkedSnapshotFacts.KIND_RESNAPSHOT;
import static org.lakecdc.transforms.snapshot.ChunkedSnapshotFacts.MODE_FULL;

import com.fasterxml.jackson.databind.JsonNode;
import io.delta.kernel.expressions.Column;
import io.delta.kernel.expressions.Literal;
import io.delta.kernel.expressions.Predicate;
import io.delta.kernel.utils.CloseableIterator;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.transforms.delta.DeltaTables;
import org.lakecdc.transforms.facts.FactsTable;
import org.lakecdc.transforms.snapshot.ChunkedSnapshotFacts.ChunkFact;
import org.lakecdc.transforms.snapshot.ChunkedSnapshotFacts.Open;
import org.lakecdc.transforms.snapshot.ChunkedSnapshotFacts.Plan;
import org.lakecdc.transforms.snapshot.ChunkedSnapshotFacts.Recoveries;
import org.lakecdc.transforms.snapshot.ChunkedSnapshotFacts.Snapshots;
import org.lakecdc.transforms.snapshot.ChunkedSnapshotFacts.State;

/**
 * Reads chunked snapshots' facts rows back ({@link ChunkedSnapshotFacts}'s {@code read}, {@code
 * recoveries} and {@code opensOfTable} delegate here): one scan of the facts table at its latest
 * version per call, with file skipping on {@code event}, keeping only the rows of one target (and
 * one stream family); rows whose detail is not the form written are skipped. Times are UTC.
 */
final class SnapshotFactsReads {
  private SnapshotFactsReads() {}

  /** {@link ChunkedSnapshotFacts#read} and {@code readOfTable} ({@code ofTable}). */
  static Snapshots read(
      DeltaTables tables,
      String factsPath,
      String appId,
      String target,
      boolean ofTable,
      @Nullable String bronzeId) {
    List<Open> opens = new ArrayList<>();
    List<Map<String, Object>> plans = new ArrayList<>();
    List<Map<String, Object>> chunkRows = new ArrayList<>();
    List<Lsn> completions = new ArrayList<>();
    forEachFamilyRow(
        tables,
        factsPath,
        List.of(
            EVENT_SNAPSHOT_OPEN,
            EVENT_SNAPSHOT_PLAN,
            EVENT_SNAPSHOT_CHUNK,
            FactsTable.EVENT_BOOTSTRAP,
            EVENT_RESNAPSHOT),
        target,
        appId,
        (event, row) -> {
          if (EVENT_SNAPSHOT_OPEN.equals(event)) {
            Open open = openOf(row, ofTable, bronzeId);
            if (open != null) {
              opens.add(open);
            }
          } else if (EVENT_SNAPSHOT_PLAN.equals(event)) {
            plans.add(row);
          } else if (EVENT_SNAPSHOT_CHUNK.equals(event)) {
            chunkRows.add(row);
          } else if ((FactsTable.EVENT_BOOTSTRAP.equals(event) || EVENT_RESNAPSHOT.equals(event))
              && row.get(FactsTable.MAX_LSN) instanceof String max) {
            completions.add(Lsn.parse(max));
          }
        });
    Lsn newestCompletion = completions.stream().max(Lsn::compareTo).orElse(null);
    Open chunkedOpen = null;
    Open fullOpen = null;
    for (Open open : opens) {
      if (open.chunked()) {
        if (chunkedOpen == null || open.s().isAfter(chunkedOpen.s())) {
          chunkedOpen = open;
        }
      } else if (fullOpen == null || !fullOpen.s().isAfter(open.s())) {
        fullOpen = open;
      }
    }
    Lsn completion = newestCompletion;
    Optional<State> state = Optional.empty();
    if (chunkedOpen != null) {
      Lsn s = chunkedOpen.s();
      Optional<Plan> plan = Optional.empty();
      for (Map<String, Object> row : plans) {
        Plan p = planOf(row);
        if (p != null && p.s().equals(s)) {
          plan = Optional.of(p);
        }
      }
      SortedMap<Integer, ChunkFact> chunks = new TreeMap<>();
      for (Map<String, Object> row : chunkRows) {
        ChunkFact c = chunkOf(row);
        if (c != null && c.s().equals(s)) {
          chunks.put(c.chunk(), c);
        }
      }
      state =
          Optional.of(
              new State(chunkedOpen, plan, chunks, completion != null && !completion.isBefore(s)));
    }
    Open full = fullOpen;
    return new Snapshots(
        state,
        Optional.ofNullable(full),
        full != null && completion != null && !completion.isBefore(full.s()),
        Optional.ofNullable(completion));
  }

  /** {@link ChunkedSnapshotFacts#opensOfTable}. */
  static List<Open> opensOfTable(
      DeltaTables tables, String factsPath, String target, String bronzeId) {
    List<Open> opens = new ArrayList<>();
    forEachRow(
        tables,
        factsPath,
        List.of(EVENT_SNAPSHOT_OPEN),
        row -> {
          if (target.equals(row.get(FactsTable.TARGET))
              && EVENT_SNAPSHOT_OPEN.equals(row.get(FactsTable.EVENT))) {
            Open open = openOf(row);
            if (open != null && bronzeId.equals(open.targetId())) {
              opens.add(open);
            }
          }
        });
    return opens;
  }

  /**
   * {@link #forEachRow} keeping the rows of {@code target} whose app id is {@code appId} or one of
   * its generations; {@code each} gets the row's event and the row.
   */
  private static void forEachFamilyRow(
      DeltaTables tables,
      String factsPath,
      List<String> events,
      String target,
      String appId,
      BiConsumer<Object, Map<String, Object>> each) {
    forEachRow(
        tables,
        factsPath,
        events,
        row -> {
          if (target.equals(row.get(FactsTable.TARGET))
              && ChunkedSnapshotFacts.ofFamily(row.get(FactsTable.APP_ID), appId)) {
            each.accept(row.get(FactsTable.EVENT), row);
          }
        });
  }

  /**
   * An open row's {@link Open}, or null when its detail is not the form written or, with {@code
   * ofTable}, it is another bronze table's ({@link Open#ofTable}).
   */
  private static @Nullable Open openOf(
      Map<String, Object> row, boolean ofTable, @Nullable String bronzeId) {
    Open open = openOf(row);
    return open != null && (!ofTable || open.ofTable(bronzeId)) ? open : null;
  }

  /**
   * Runs {@code each} on every row of the facts table at its latest version whose event is one of
   * {@code events} (file skipping on {@code event}; a file may hold other rows too, which callers
   * skip); nothing when the facts table does not exist.
   *
   * @throws UncheckedIOException when the facts table cannot be read
   */
  private static void forEachRow(
      DeltaTables tables,
      String factsPath,
      List<String> events,
      Consumer<Map<String, Object>> each) {
    if (!tables.exists(factsPath)) {
      return;
    }
    try (CloseableIterator<Map<String, Object>> rows =
        tables.scanAtVersion(factsPath, tables.version(factsPath), eventIn(events))) {
      while (rows.hasNext()) {
        each.accept(rows.next());
      }
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot read Delta table " + factsPath, e);
    }
  }

  /** {@link ChunkedSnapshotFacts#recoveries} and {@code recoveriesOfTable} ({@code ofTable}). */
  static Recoveries recoveries(
      DeltaTables tables,
      String factsPath,
      String appId,
      String target,
      boolean ofTable,
      @Nullable String bronzeId) {
    SortedMap<Integer, Open> opens = new TreeMap<>();
    java.util.Set<Integer> completed = new java.util.HashSet<>();
    Map<Integer, Instant> failed = new java.util.HashMap<>();
    forEachFamilyRow(
        tables,
        factsPath,
        List.of(EVENT_SNAPSHOT_OPEN, EVENT_RESNAPSHOT, EVENT_RESNAPSHOT_FAILED),
        target,
        appId,
        (event, row) -> {
          if (EVENT_SNAPSHOT_OPEN.equals(event)) {
            Open open = openOf(row, ofTable, bronzeId);
            if (open != null && KIND_RESNAPSHOT.equals(open.kind())) {
              opens.put(open.generation(), open);
            }
          } else if (EVENT_RESNAPSHOT.equals(event)) {
            completed.add(ChunkedSnapshotFacts.generationOf((String) row.get(FactsTable.APP_ID)));
          } else {
            JsonNode detail = FactsTable.detail(row);
            Instant at = utc(row.get(FactsTable.WRITTEN_AT));
            boolean ours =
                !ofTable
                    || detail == null
                    || !detail.path("target_id").isTextual()
                    || detail.get("target_id").asText().equals(bronzeId);
            if (detail != null && at != null && ours) {
              failed.merge(detail.path("generation").asInt(), at, (a, b) -> a.isAfter(b) ? a : b);
            }
          }
        });
    return new Recoveries(opens, completed, failed);
  }

  /** {@code event = e1 OR event = e2 ...}: the file skipping of the facts scans here. */
  private static Predicate eventIn(List<String> names) {
    Predicate events = null;
    for (String e : names) {
      Predicate one = new Predicate("=", new Column(FactsTable.EVENT), Literal.ofString(e));
      events = events == null ? one : new Predicate("OR", events, one);
    }
    return events;
  }

  private static @Nullable Open openOf(Map<String, Object> row) {
    JsonNode d = FactsTable.detail(row);
    if (d == null || !(row.get(FactsTable.MIN_LSN) instanceof String s)) {
      return null;
    }
    List<String> keys = new ArrayList<>();
    d.path("keys").forEach(k -> keys.add(k.asText()));
    JsonNode plan = d.path("plan");
    return new Open(
        (String) row.get(FactsTable.APP_ID),
        (String) row.get(FactsTable.TARGET),
        Lsn.parse(s),
        utc(row.get(FactsTable.MIN_COMMIT_TS)),
        d.path("mode").asText(MODE_FULL),
        d.path("kind").asText(KIND_BOOTSTRAP),
        d.path("generation").asInt(0),
        keys,
        plan.isMissingNode() || plan.isNull() ? null : plan.toString(),
        utc(row.get(FactsTable.LOST_FROM_TS)),
        utc(row.get(FactsTable.LOST_TO_TS)),
        utc(row.get(FactsTable.WRITTEN_AT)),
        d.path("capture_instance").isTextual() ? d.get("capture_instance").asText() : null,
        d.path("target_id").isTextual() ? d.get("target_id").asText() : null);
  }

  private static @Nullable Plan planOf(Map<String, Object> row) {
    JsonNode d = FactsTable.detail(row);
    if (d == null || !d.path("snapshot").isTextual() || !d.path("chunks").isArray()) {
      return null;
    }
    List<String> keys = new ArrayList<>();
    d.path("keys").forEach(k -> keys.add(k.asText()));
    Object started = row.get(FactsTable.STARTED_AT);
    Object duration = row.get(FactsTable.DURATION_MS);
    return new Plan(
        (String) row.get(FactsTable.APP_ID),
        (String) row.get(FactsTable.TARGET),
        Lsn.parse(d.get("snapshot").asText()),
        d.path("kind").asText(),
        keys,
        d.path("chunk_rows").asLong(),
        Math.max(1, d.path("chunks_per_wave").asInt(1)),
        d.get("chunks").toString(),
        started == null ? Instant.EPOCH : utc(started),
        duration instanceof Number n ? n.longValue() : 0L);
  }

  /**
   * A {@code snapshot_chunk} facts row as a scan reads it back (times as UTC {@code
   * LocalDateTime}), or null when its detail is not the form {@link ChunkFact#toRow} writes.
   */
  private static @Nullable ChunkFact chunkOf(Map<String, Object> row) {
    JsonNode d = FactsTable.detail(row);
    if (d == null
        || !d.path("snapshot").isTextual()
        || !(row.get(FactsTable.MIN_LSN) instanceof String min)) {
      return null;
    }
    Object max = row.get(FactsTable.MAX_LSN);
    Object rows = row.get(FactsTable.ROWS);
    Object duration = row.get(FactsTable.DURATION_MS);
    Object read = row.get(FactsTable.READ_SECONDS);
    return new ChunkFact(
        (String) row.get(FactsTable.APP_ID),
        (String) row.get(FactsTable.TARGET),
        Lsn.parse(d.get("snapshot").asText()),
        d.path("chunk").asInt(),
        d.path("wave").asInt(),
        d.path("lo").toString(),
        d.path("hi").toString(),
        d.path("last").asBoolean(),
        rows instanceof Number n ? n.longValue() : 0L,
        Lsn.parse(min),
        utc(row.get(FactsTable.MIN_COMMIT_TS)),
        max instanceof String m ? Lsn.parse(m) : null,
        utc(row.get(FactsTable.MAX_COMMIT_TS)),
        utc(row.get(FactsTable.STARTED_AT)),
        duration instanceof Number n ? n.longValue() : null,
        read instanceof Number n ? n.doubleValue() : null);
  }

  /** {@link ChunkFact#fromJson}. */
  static ChunkFact chunkOfJson(String json) {
    JsonNode n = ChunkedSnapshotFacts.parse(json);
    try {
      return new ChunkFact(
          n.get("app_id").asText(),
          n.get("target").asText(),
          Lsn.parse(n.get("snapshot").asText()),
          n.get("chunk").asInt(),
          n.get("wave").asInt(),
          n.get("lo").toString(),
          n.get("hi").toString(),
          n.get("last").asBoolean(),
          n.get("rows").asLong(),
          Lsn.parse(n.get("stamp").asText()),
          time(n.get("stamp_commit_ts")),
          n.path("high_lsn").isTextual() ? Lsn.parse(n.get("high_lsn").asText()) : null,
          time(n.get("high_commit_ts")),
          time(n.get("started_at")),
          n.path("duration_ms").isNumber() ? n.get("duration_ms").asLong() : null,
          n.path("read_seconds").isNumber() ? n.get("read_seconds").asDouble() : null);
    } catch (RuntimeException e) {
      throw new IllegalArgumentException("Not a snapshot chunk record: " + json, e);
    }
  }

  private static @Nullable Instant time(@Nullable JsonNode node) {
    return node == null || !node.isTextual() ? null : Instant.parse(node.asText());
  }

  /** A scanned timestamp (UTC {@code LocalDateTime}) as an instant; null when it is none. */
  static @Nullable Instant utc(@Nullable Object value) {
    if (value instanceof LocalDateTime t) {
      return t.toInstant(ZoneOffset.UTC);
    }
    return value instanceof Instant i ? i : null;
  }
}
