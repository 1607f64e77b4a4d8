package org.lakecdc.transforms.snapshot;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.UncheckedIOException;
import java.time.Instant;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;
import org.apache.beam.sdk.values.Row;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.transforms.delta.DeltaTables;
import org.lakecdc.transforms.facts.FactsTable;

/**
 * The facts rows of chunked snapshots (docs/behaviour.md §6.7, §6.9; docs/tables.md "Chunked
 * snapshots"), written and read back. Every row has {@code min_lsn = max_lsn = S} but a chunk's,
 * whose {@code min_lsn} is its stamp L and {@code max_lsn} the {@code max_lsn} read after its read.
 * Times are UTC.
 *
 * <p>Idempotency keys (Delta transaction ids of the facts table):
 *
 * <ul>
 *   <li>{@code snapshot_open}: {@link #openAppId} version = generation (one per generation);
 *   <li>{@code snapshot_plan}: {@link #planAppId} version 0 (a concurrent plan loses to the stored
 *       one);
 *   <li>{@code snapshot_chunk}: {@link #chunkFactsAppId} version = chunk index;
 *   <li>completion ({@code bootstrap}/{@code resnapshot}): the target's events app id, version =
 *       generation.
 * </ul>
 *
 * The chunk's bronze commit uses {@link #bronzeAppId} version = chunk index.
 */
public final class ChunkedSnapshotFacts {
  /** Event names. */
  public static final String EVENT_SNAPSHOT_OPEN = "snapshot_open",
      EVENT_SNAPSHOT_PLAN = "snapshot_plan",
      EVENT_SNAPSHOT_CHUNK = "snapshot_chunk",
      EVENT_RESNAPSHOT = "resnapshot";

  /**
   * A re-snapshot after data loss that did not start its generation: its snapshot's own S was
   * purged before the read ended (docs/behaviour.md §9.3 step 5). {@code detail} {@code
   * {"generation","snapshot","reason"}}; counted by the anti-loop guard.
   */
  public static final String EVENT_RESNAPSHOT_FAILED = "resnapshot_failed";

  /** Snapshot modes of an open row. */
  public static final String MODE_CHUNKED = "chunked", MODE_FULL = "full";

  /** Snapshot kinds of an open row: what its completion row is. */
  public static final String KIND_BOOTSTRAP = "bootstrap", KIND_RESNAPSHOT = "resnapshot";

  private static final ObjectMapper JSON = new ObjectMapper();

  private ChunkedSnapshotFacts() {}

  /**
   * Facts transaction app id of a stream's opens as lakecdc wrote it before it recorded the bronze
   * table's id: {@code <appId>#snapshots}.
   */
  public static String openAppId(String appId) {
    return appId + "#snapshots";
  }

  /**
   * Facts transaction app id of a stream's opens into one bronze table: {@code
   * <appId>#snapshots@<bronze table id>}, version = generation. Named after the table as the events
   * are, so a table created again at the same path (a reset target) records opens of its own.
   *
   * @param bronzeId the bronze table's Delta table id ({@code metaData.id})
   */
  public static String openAppId(String appId, String bronzeId) {
    return appId + "#snapshots@" + bronzeId;
  }

  /** Facts transaction app id of the plan of S: {@code <appId>#snapplan.<S>}. */
  public static String planAppId(String appId, Lsn s) {
    return appId + "#snapplan." + s;
  }

  /** Bronze transaction app id of the chunks of S: {@code <appId>#snap.<S>}. */
  public static String bronzeAppId(String appId, Lsn s) {
    return appId + "#snap." + s;
  }

  /** Facts transaction app id of the chunk rows of S: {@code <appId>#snapchunks.<S>}. */
  public static String chunkFactsAppId(String appId, Lsn s) {
    return appId + "#snapchunks." + s;
  }

  /**
   * A {@code snapshot_open} row.
   *
   * @param appId the stream's app id (of the generation: {@code <appId>} or {@code <appId>.g<n>})
   * @param target the bronze table's path
   * @param s the snapshot LSN S
   * @param sCommitTime the commit time of S (UTC), or null when unknown
   * @param mode {@link #MODE_CHUNKED} or {@link #MODE_FULL}
   * @param kind {@link #KIND_BOOTSTRAP} or {@link #KIND_RESNAPSHOT}
   * @param generation the stream generation the snapshot starts, from 0
   * @param keys the key columns the snapshot is planned over
   * @param extentJson the key's extent ({@code SnapshotExtent#toJson}), or null (a full open)
   * @param lostFrom a re-snapshot's lost gap start (UTC), else null
   * @param lostTo a re-snapshot's lost gap end (UTC), else null
   * @param writtenAt when the row was written (UTC); null on a row not yet written
   * @param captureInstance the capture instance the snapshot reads (detail {@code
   *     capture_instance}), or null on a row written before it was recorded
   * @param targetId the Delta table id of the bronze table the snapshot is of ({@code "target_id"}
   *     in the detail), or null on a row written before lakecdc recorded it
   */
  public record Open(
      String appId,
      String target,
      Lsn s,
      @Nullable Instant sCommitTime,
      String mode,
      String kind,
      int generation,
      List<String> keys,
      @Nullable String extentJson,
      @Nullable Instant lostFrom,
      @Nullable Instant lostTo,
      @Nullable Instant writtenAt,
      @Nullable String captureInstance,
      @Nullable String targetId)
      implements java.io.Serializable {
    public Open {
      keys = List.copyOf(keys);
    }

    /** An open that records neither capture instance nor bronze table id (rows written before). */
    public Open(
        String appId,
        String target,
        Lsn s,
        @Nullable Instant sCommitTime,
        String mode,
        String kind,
        int generation,
        List<String> keys,
        @Nullable String extentJson,
        @Nullable Instant lostFrom,
        @Nullable Instant lostTo,
        @Nullable Instant writtenAt) {
      this(
          appId,
          target,
          s,
          sCommitTime,
          mode,
          kind,
          generation,
          keys,
          extentJson,
          lostFrom,
          lostTo,
          writtenAt,
          null,
          null);
    }

    /**
     * Whether this open is of the bronze table whose Delta table id is {@code bronzeId} (null: no
     * table exists at the target's path): an open recorded with another id is a former table's at
     * the same path; one recorded without an id is taken as the table's.
     */
    public boolean ofTable(@Nullable String bronzeId) {
      return targetId == null || targetId.equals(bronzeId);
    }

    /** Whether this opens a chunked snapshot. */
    public boolean chunked() {
      return MODE_CHUNKED.equals(mode);
    }

    /**
     * The detail JSON: {@code {"mode","kind","keys","plan","generation","lost_from_ts",
     * "lost_to_ts","capture_instance","target_id"}} ({@code capture_instance} and {@code target_id}
     * only when known; status shows the capture instance before the target has a position).
     */
    public String detail() {
      ObjectNode node = JSON.createObjectNode();
      node.put("mode", mode);
      node.put("kind", kind);
      ArrayNode k = node.putArray("keys");
      keys.forEach(k::add);
      node.set("plan", extentJson == null ? NullNode.getInstance() : parse(extentJson));
      node.put("generation", generation);
      putTime(node, "lost_from_ts", lostFrom);
      putTime(node, "lost_to_ts", lostTo);
      if (captureInstance != null) {
        node.put("capture_instance", captureInstance);
      }
      if (targetId != null) {
        node.put("target_id", targetId);
      }
      return node.toString();
    }

    /** The facts row, written at {@code now}. */
    public Row toRow(Instant now) {
      return FactsTable.row()
          .set(FactsTable.APP_ID, appId)
          .set(FactsTable.ROWS, 0L)
          .set(FactsTable.MIN_LSN, s.toString())
          .set(FactsTable.MAX_LSN, s.toString())
          .set(FactsTable.MIN_COMMIT_TS, sCommitTime)
          .set(FactsTable.MAX_COMMIT_TS, sCommitTime)
          .set(FactsTable.EVENT, EVENT_SNAPSHOT_OPEN)
          .set(FactsTable.LOST_FROM_TS, lostFrom)
          .set(FactsTable.LOST_TO_TS, lostTo)
          .set(FactsTable.DETAIL, detail())
          .set(FactsTable.TARGET, target)
          .set(FactsTable.WRITTEN_AT, now)
          .build();
    }
  }

  /**
   * A {@code snapshot_plan} row: every chunk of S, planned once.
   *
   * @param appId the generation's app id
   * @param target the bronze table's path
   * @param s the snapshot LSN S
   * @param kind the extent's kind ({@code int} or {@code keyset})
   * @param keys the key columns
   * @param chunkRows the most rows per chunk the plan was made with
   * @param chunksPerWave chunks per wave, fixed with the plan: wave w is chunks {@code [w*k,
   *     (w+1)*k)}
   * @param chunksJson the chunks, {@code [[index, lo, hi], ...]} ({@code ChunkBounds#planJson})
   * @param startedAt when planning started (UTC)
   * @param durationMs how long planning took
   */
  public record Plan(
      String appId,
      String target,
      Lsn s,
      String kind,
      List<String> keys,
      long chunkRows,
      int chunksPerWave,
      String chunksJson,
      Instant startedAt,
      long durationMs)
      implements java.io.Serializable {
    public Plan {
      keys = List.copyOf(keys);
      if (chunksPerWave < 1) {
        throw new IllegalArgumentException(
            "chunksPerWave must be at least 1, not " + chunksPerWave);
      }
    }

    /** The number of chunks planned. */
    public int chunkCount() {
      return parse(chunksJson).size();
    }

    /** The wave chunk {@code chunk} belongs to. */
    public int waveOf(int chunk) {
      return chunk / chunksPerWave;
    }

    /** The number of waves. */
    public int waveCount() {
      return (chunkCount() + chunksPerWave - 1) / chunksPerWave;
    }

    /**
     * The detail JSON: {@code {"snapshot","kind","keys","chunk_rows","chunks_per_wave","chunks"}}.
     */
    public String detail() {
      ObjectNode node = JSON.createObjectNode();
      node.put("snapshot", s.toString());
      node.put("kind", kind);
      ArrayNode k = node.putArray("keys");
      keys.forEach(k::add);
      node.put("chunk_rows", chunkRows);
      node.put("chunks_per_wave", chunksPerWave);
      node.set("chunks", parse(chunksJson));
      return node.toString();
    }

    /** The facts row, written at {@code now}. */
    public Row toRow(Instant now) {
      return FactsTable.row()
          .set(FactsTable.APP_ID, appId)
          .set(FactsTable.ROWS, 0L)
          .set(FactsTable.MIN_LSN, s.toString())
          .set(FactsTable.MAX_LSN, s.toString())
          .set(FactsTable.STARTED_AT, startedAt)
          .set(FactsTable.DURATION_MS, durationMs)
          .set(FactsTable.EVENT, EVENT_SNAPSHOT_PLAN)
          .set(FactsTable.DETAIL, detail())
          .set(FactsTable.TARGET, target)
          .set(FactsTable.WRITTEN_AT, now)
          .build();
    }
  }

  /**
   * A {@code snapshot_chunk} row: one chunk read and committed to bronze.
   *
   * @param appId the generation's app id
   * @param target the bronze table's path
   * @param s the snapshot LSN S
   * @param chunk the chunk's index
   * @param wave the chunk's wave
   * @param loJson the chunk's lower bound as JSON ({@code null} open)
   * @param hiJson the chunk's upper bound as JSON, as read (the re-sought end of an open last
   *     chunk)
   * @param last whether it is the plan's last chunk
   * @param rows the rows read
   * @param stamp L, the {@code _start_lsn} of its rows (at least S)
   * @param stampCommitTime the commit time of L (UTC)
   * @param highLsn {@code max_lsn} read after the read, or null
   * @param highCommitTime its commit time, or null
   * @param startedAt when its read started (UTC)
   * @param durationMs from {@code startedAt} to its bronze commit
   * @param readSeconds seconds its read took, or null when unknown (rebuilt after a crash)
   */
  public record ChunkFact(
      String appId,
      String target,
      Lsn s,
      int chunk,
      int wave,
      String loJson,
      String hiJson,
      boolean last,
      long rows,
      Lsn stamp,
      @Nullable Instant stampCommitTime,
      @Nullable Lsn highLsn,
      @Nullable Instant highCommitTime,
      @Nullable Instant startedAt,
      @Nullable Long durationMs,
      @Nullable Double readSeconds) {

    /** The detail JSON: {@code {"snapshot","wave","chunk","lo","hi","last"}}. */
    public String detail() {
      ObjectNode node = JSON.createObjectNode();
      node.put("snapshot", s.toString());
      node.put("wave", wave);
      node.put("chunk", chunk);
      node.set("lo", parse(loJson));
      node.set("hi", parse(hiJson));
      node.put("last", last);
      return node.toString();
    }

    /** The facts row, written at {@code now}. */
    public Row toRow(Instant now) {
      return FactsTable.row()
          .set(FactsTable.APP_ID, appId)
          .set(FactsTable.ROWS, rows)
          .set(FactsTable.MIN_LSN, stamp.toString())
          .set(FactsTable.MAX_LSN, (highLsn == null ? stamp : highLsn).toString())
          .set(FactsTable.MIN_COMMIT_TS, stampCommitTime)
          .set(FactsTable.MAX_COMMIT_TS, highLsn == null ? stampCommitTime : highCommitTime)
          .set(FactsTable.INSERTS, 0L)
          .set(FactsTable.UPDATES, 0L)
          .set(FactsTable.DELETES, 0L)
          .set(FactsTable.STARTED_AT, startedAt)
          .set(FactsTable.DURATION_MS, durationMs)
          .set(FactsTable.READ_SECONDS, readSeconds)
          .set(FactsTable.EVENT, EVENT_SNAPSHOT_CHUNK)
          .set(FactsTable.DETAIL, detail())
          .set(FactsTable.TARGET, target)
          .set(FactsTable.WRITTEN_AT, now)
          .build();
    }

    /** The JSON of the bronze domain {@link #BRONZE_DOMAIN} recording this chunk's commit. */
    public String toJson() {
      ObjectNode node = JSON.createObjectNode();
      node.put("app_id", appId);
      node.put("target", target);
      node.put("snapshot", s.toString());
      node.put("chunk", chunk);
      node.put("wave", wave);
      node.set("lo", parse(loJson));
      node.set("hi", parse(hiJson));
      node.put("last", last);
      node.put("rows", rows);
      node.put("stamp", stamp.toString());
      putTime(node, "stamp_commit_ts", stampCommitTime);
      if (highLsn == null) {
        node.putNull("high_lsn");
      } else {
        node.put("high_lsn", highLsn.toString());
      }
      putTime(node, "high_commit_ts", highCommitTime);
      putTime(node, "started_at", startedAt);
      if (durationMs == null) {
        node.putNull("duration_ms");
      } else {
        node.put("duration_ms", durationMs);
      }
      if (readSeconds == null) {
        node.putNull("read_seconds");
      } else {
        node.put("read_seconds", readSeconds);
      }
      return node.toString();
    }

    /**
     * {@link #toJson}'s form read back.
     *
     * @throws IllegalArgumentException when it is not of that form
     */
    public static ChunkFact fromJson(String json) {
      return SnapshotFactsReads.chunkOfJson(json);
    }
  }

  /** Bronze domain of the last chunk committed: {@link ChunkFact#toJson()}. */
  public static final String BRONZE_DOMAIN = "mssql_cdc.snapshot_chunk";

  /**
   * The completion row of a chunked snapshot: {@code bootstrap} (generation 0) or {@code
   * resnapshot}, {@code min_lsn = max_lsn = end_lsn = S}, rows = the sum of its chunks' rows,
   * {@code started_at} = the open row's {@code written_at}, {@code duration_ms} = open to {@code
   * now}, detail {@code {"snapshot","chunks","rows","last_lsn"}} (the largest stamp).
   */
  public static Row completionRow(Open open, long rows, int chunks, Lsn lastLsn, Instant now) {
    ObjectNode detail = JSON.createObjectNode();
    detail.put("snapshot", open.s().toString());
    detail.put("chunks", chunks);
    detail.put("rows", rows);
    detail.put("last_lsn", lastLsn.toString());
    Instant opened = open.writtenAt();
    return FactsTable.row()
        .set(FactsTable.APP_ID, open.appId())
        .set(FactsTable.ROWS, rows)
        .set(FactsTable.MIN_LSN, open.s().toString())
        .set(FactsTable.MAX_LSN, open.s().toString())
        .set(FactsTable.END_LSN, open.s().toString())
        .set(FactsTable.END_COMMIT_TS, open.sCommitTime())
        .set(FactsTable.STARTED_AT, opened)
        .set(
            FactsTable.DURATION_MS,
            opened == null ? null : Math.max(0, now.toEpochMilli() - opened.toEpochMilli()))
        .set(
            FactsTable.EVENT,
            KIND_RESNAPSHOT.equals(open.kind()) ? EVENT_RESNAPSHOT : FactsTable.EVENT_BOOTSTRAP)
        .set(FactsTable.LOST_FROM_TS, open.lostFrom())
        .set(FactsTable.LOST_TO_TS, open.lostTo())
        .set(FactsTable.DETAIL, detail.toString())
        .set(FactsTable.TARGET, open.target())
        .set(FactsTable.WRITTEN_AT, now)
        .build();
  }

  /**
   * A chunked snapshot as its facts rows tell it.
   *
   * @param open the newest chunked open of the stream family for the target (highest S)
   * @param plan its plan, or empty before the first wave planned it
   * @param chunks its recorded chunks by index
   * @param complete whether a {@code bootstrap}/{@code resnapshot} row of the family for the target
   *     has {@code max_lsn >= S}
   */
  public record State(
      Open open, Optional<Plan> plan, SortedMap<Integer, ChunkFact> chunks, boolean complete) {
    public State {
      chunks = Collections.unmodifiableSortedMap(new TreeMap<>(chunks));
    }

    /** Chunks recorded. */
    public int chunksDone() {
      return chunks.size();
    }

    /** Chunks planned, or -1 before planning. */
    public int chunksTotal() {
      return plan.map(Plan::chunkCount).orElse(-1);
    }

    /** Rows of the recorded chunks. */
    public long rowsDone() {
      return chunks.values().stream().mapToLong(ChunkFact::rows).sum();
    }

    /**
     * This state as it was when chunk {@code chunk} was committed: only the recorded chunks up to
     * and including it (readers commit chunks as they are read, so the facts table may already
     * record later ones when a wave's progress line is written).
     *
     * @param chunk a chunk index, from 0
     * @return the same open row, plan and completion, with the chunks at or below {@code chunk}
     */
    public State through(int chunk) {
      return new State(open, plan, chunks.headMap(chunk + 1), complete);
    }

    /** The first chunk index not recorded (chunks commit in index order). */
    public int nextChunk() {
      return chunks.isEmpty() ? 0 : chunks.lastKey() + 1;
    }

    /**
     * The highest wave whose every chunk is recorded (waves commit in order), or -1 when none is
     * (or before planning).
     */
    public int lastCompleteWave() {
      if (plan.isEmpty()) {
        return -1;
      }
      Plan p = plan.get();
      int next = nextChunk();
      if (next >= p.chunkCount()) {
        return p.waveCount() - 1;
      }
      return p.waveOf(next) - 1;
    }

    /** The largest stamp of the recorded chunks, or empty. */
    public Optional<Lsn> maxStamp() {
      return chunks.values().stream().map(ChunkFact::stamp).max(Lsn::compareTo);
    }
  }

  /**
   * What the facts table says about the snapshots of one stream family (app id {@code appId} and
   * its generations {@code appId.g<n>}) for one target.
   *
   * @param chunked the newest chunked snapshot (highest S), or empty
   * @param fullOpen the newest full open, or empty
   * @param fullOpenComplete whether a completion row has {@code max_lsn >=} the full open's S
   * @param newestCompletion the highest {@code max_lsn} of the family's completion rows, or empty
   */
  public record Snapshots(
      Optional<State> chunked,
      Optional<Open> fullOpen,
      boolean fullOpenComplete,
      Optional<Lsn> newestCompletion) {}

  /**
   * Reads the snapshot rows of {@code appId}'s family for {@code target} from the facts table at
   * its latest version (file skipping on {@code event}); memory holds the rows of that one family
   * and target only.
   *
   * @return what they say; all empty when the facts table does not exist
   * @throws UncheckedIOException when the facts table cannot be read
   */
  public static Snapshots read(DeltaTables tables, String factsPath, String appId, String target) {
    return SnapshotFactsReads.read(tables, factsPath, appId, target, false, null);
  }

  /**
   * {@link #read(DeltaTables, String, String, String)} for one bronze table: the opens recorded for
   * another bronze table at the same path (a table deleted and created again: a reset target) are
   * left out, so a table never takes a former table's snapshot for its own ({@link Open#ofTable}).
   *
   * @param bronzeId the bronze table's Delta table id, or null when no table exists at {@code
   *     target} (then only opens recorded without an id count)
   */
  public static Snapshots readOfTable(
      DeltaTables tables,
      String factsPath,
      String appId,
      String target,
      @Nullable String bronzeId) {
    return SnapshotFactsReads.read(tables, factsPath, appId, target, true, bronzeId);
  }

  /**
   * The re-snapshots after data loss of one stream family for one target, as its facts rows tell
   * them (docs/behaviour.md §9.3): each recovery's {@code snapshot_open} row (kind {@code
   * resnapshot}), which generations completed (a {@code resnapshot} completion row) and which
   * failed (a {@code resnapshot_failed} row, with when).
   *
   * @param opens the {@code snapshot_open} rows of kind {@code resnapshot}, by generation
   * @param completed the generations with a {@code resnapshot} row
   * @param failed when each failed generation's {@code resnapshot_failed} row was written (UTC)
   */
  public record Recoveries(
      SortedMap<Integer, Open> opens,
      java.util.Set<Integer> completed,
      Map<Integer, Instant> failed) {
    public Recoveries {
      opens = Collections.unmodifiableSortedMap(new TreeMap<>(opens));
      completed = java.util.Set.copyOf(completed);
      failed = Map.copyOf(failed);
    }

    /**
     * When the last automatic re-snapshot of the family started or failed (the newest {@code
     * written_at} of its opens and failures), or empty when it never re-snapshotted: what the
     * anti-loop guard measures from.
     */
    public Optional<Instant> lastAttempt() {
      Instant last = null;
      for (Open open : opens.values()) {
        if (open.writtenAt() != null && (last == null || open.writtenAt().isAfter(last))) {
          last = open.writtenAt();
        }
      }
      for (Instant at : failed.values()) {
        if (last == null || at.isAfter(last)) {
          last = at;
        }
      }
      return Optional.ofNullable(last);
    }
  }

  /**
   * The {@code snapshot_open} rows of any app id that name the bronze table {@code bronzeId} at
   * {@code target} (rows without a table id are left out), read from the facts table at its latest
   * version: which stream a bronze table's snapshots belong to, when bronze records no position.
   *
   * @return them, in no particular order; none when the facts table does not exist
   * @throws UncheckedIOException when the facts table cannot be read
   */
  public static List<Open> opensOfTable(
      DeltaTables tables, String factsPath, String target, String bronzeId) {
    return SnapshotFactsReads.opensOfTable(tables, factsPath, target, bronzeId);
  }

  /**
   * Reads the re-snapshots of {@code appId}'s family for {@code target} ({@link Recoveries}) from
   * the facts table at its latest version (file skipping on {@code event}).
   *
   * @return them; none when the facts table does not exist
   * @throws UncheckedIOException when the facts table cannot be read
   */
  public static Recoveries recoveries(
      DeltaTables tables, String factsPath, String appId, String target) {
    return SnapshotFactsReads.recoveries(tables, factsPath, appId, target, false, null);
  }

  /**
   * {@link #recoveries(DeltaTables, String, String, String)} for one bronze table: opens and
   * failures recorded for another bronze table at the same path are left out ({@link
   * Open#ofTable}).
   *
   * @param bronzeId the bronze table's Delta table id, or null when no table exists at {@code
   *     target}
   */
  public static Recoveries recoveriesOfTable(
      DeltaTables tables,
      String factsPath,
      String appId,
      String target,
      @Nullable String bronzeId) {
    return SnapshotFactsReads.recoveries(tables, factsPath, appId, target, true, bronzeId);
  }

  /** The generation of a stream app id: n of {@code <appId>.g<n>}, 0 without the suffix. */
  public static int generationOf(String streamAppId) {
    java.util.regex.Matcher m =
        java.util.regex.Pattern.compile("\\.g([0-9]+)$").matcher(streamAppId);
    return m.find() ? Integer.parseInt(m.group(1)) : 0;
  }

  /** Whether a row's app id is {@code appId} or one of its generations {@code appId.g<n>}. */
  public static boolean ofFamily(@Nullable Object rowAppId, String appId) {
    if (!(rowAppId instanceof String id)) {
      return false;
    }
    if (id.equals(appId)) {
      return true;
    }
    String prefix = appId + ".g";
    return id.startsWith(prefix)
        && id.length() > prefix.length()
        && id.substring(prefix.length()).chars().allMatch(Character::isDigit);
  }

  /**
   * JSON text parsed.
   *
   * @throws IllegalArgumentException when it is not JSON
   */
  static JsonNode parse(String json) {
    try {
      return JSON.readTree(json);
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException("Not JSON: " + json, e);
    }
  }

  private static void putTime(ObjectNode node, String name, @Nullable Instant time) {
    if (time == null) {
      node.putNull(name);
    } else {
      node.put(name, time.toString());
    }
  }
}
