package org.lakecdc.transforms.reconcile;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.delta.kernel.expressions.Column;
import io.delta.kernel.expressions.Literal;
import io.delta.kernel.expressions.Predicate;
import java.io.IOException;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.SortedMap;
import java.util.TreeMap;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.io.mssqlcdc.schema.MetadataColumns;
import org.lakecdc.transforms.delta.DeltaTables;
import org.lakecdc.transforms.facts.FactsTable;
import org.lakecdc.transforms.snapshot.ChunkedSnapshotFacts;

/**
 * Reconcile's chunk checks (docs/behaviour.md §11.2, docs/tables.md "Reconcile"): bronze's newest
 * chunked snapshot S against its {@code snapshot_chunk} facts rows, with no SQL Server read. The
 * facts table is read before bronze, so a wave still being written (bronze rows of chunks above the
 * last facts row of an open snapshot) is no failure.
 *
 * <ul>
 *   <li>{@code CHUNK_TILING}: a chunk index below the highest recorded one without a facts row
 *       (bounds NULL); a chunk with more than one facts row; the first chunk not open below; a
 *       chunk not starting where the one before ended (or following a chunk flagged last); for a
 *       complete snapshot, the highest chunk not flagged as the plan's last.
 *   <li>{@code CHUNK_ROWS}: a chunk's facts {@code rows} differ from bronze's rows with {@code
 *       _snapshot} = S and that {@code _chunk}; bronze rows of a chunk without a facts row (bounds
 *       NULL, {@code facts_rows} null) when the index is below the highest recorded one or the
 *       snapshot is complete.
 *   <li>{@code CHUNK_STAMP}: a facts row's stamp ({@code min_lsn}) or bronze's lowest {@code
 *       _start_lsn} of the chunk below S (a chunk read from a replica behind the primary S came
 *       from). A missing stamp is taken as S.
 * </ul>
 *
 * A snapshot is complete when a {@code bootstrap} or {@code resnapshot} facts row of its target has
 * {@code max_lsn} = S itself. Memory: one small record per chunk.
 */
public final class ChunkChecks {
  private static final ObjectMapper JSON = new ObjectMapper();

  private ChunkChecks() {}

  /**
   * One {@code snapshot_chunk} facts row as the checks see it.
   *
   * @param chunk the chunk's index
   * @param loJson its lower bound as JSON text ({@code null} = open below)
   * @param hiJson its upper bound as JSON text ({@code null} = open above)
   * @param last whether it is flagged as the plan's last chunk
   * @param rows the rows it recorded
   * @param stamp its stamp L ({@code min_lsn}), or null when the row has none (taken as S)
   */
  public record FactsChunk(
      int chunk, String loJson, String hiJson, boolean last, long rows, @Nullable Lsn stamp) {}

  /**
   * Bronze's rows of one chunk of S.
   *
   * @param rows the rows with {@code _snapshot} = S and this {@code _chunk}
   * @param stamp the lowest {@code _start_lsn} among them, or null (taken as S)
   */
  public record BronzeChunk(long rows, @Nullable Lsn stamp) {}

  /**
   * One failed check: a report row of kind chunk.
   *
   * @param failureType {@code CHUNK_TILING}, {@code CHUNK_ROWS} or {@code CHUNK_STAMP}
   * @param chunk the chunk's index
   * @param lo the chunk's first key as JSON, or null (open, or no facts row)
   * @param hi the key the chunk ends before as JSON, or null (open, or no facts row)
   * @param detailJson {@code {"snapshot","chunk",…}} with what was found: {@code problem} (tiling),
   *     {@code facts_rows} and {@code bronze_rows} (rows), {@code lsn} and {@code in} ({@code
   *     facts} or {@code bronze}; stamp)
   */
  public record Failure(
      String failureType, int chunk, @Nullable String lo, @Nullable String hi, String detailJson)
      implements Serializable {}

  /**
   * The checks of one chunked snapshot.
   *
   * @param s the snapshot LSN S
   * @param facts its {@code snapshot_chunk} facts rows, in any order (duplicates kept)
   * @param bronze bronze's rows per chunk index
   * @param complete whether a completion row at S exists
   * @return the failures, by chunk index, then tiling, rows, stamp
   */
  public static List<Failure> check(
      Lsn s, List<FactsChunk> facts, SortedMap<Integer, BronzeChunk> bronze, boolean complete) {
    TreeMap<Integer, List<FactsChunk>> byIndex = new TreeMap<>();
    for (FactsChunk f : facts) {
      byIndex.computeIfAbsent(f.chunk(), i -> new ArrayList<>()).add(f);
    }
    int highest = byIndex.isEmpty() ? -1 : byIndex.lastKey();
    TreeMap<Integer, Boolean> indexes = new TreeMap<>();
    byIndex.keySet().forEach(i -> indexes.put(i, true));
    for (int i = 0; i < highest; i++) {
      indexes.putIfAbsent(i, true);
    }
    for (int i : bronze.keySet()) {
      if (i <= highest || complete) {
        indexes.putIfAbsent(i, true);
      }
    }
    List<Failure> out = new ArrayList<>();
    for (int i : indexes.keySet()) {
      List<FactsChunk> rows = byIndex.get(i);
      BronzeChunk b = bronze.get(i);
      if (rows == null) {
        if (i < highest) {
          out.add(tiling(s, i, null, null, "no 'snapshot_chunk' facts row"));
        }
        if (b != null) {
          out.add(rowsFailure(s, i, null, null, null, b.rows()));
          stamp(s, i, null, null, b.stamp(), "bronze", out);
        }
        continue;
      }
      FactsChunk f = rows.get(0);
      String lo = bound(f.loJson());
      String hi = bound(f.hiJson());
      if (rows.size() > 1) {
        out.add(tiling(s, i, lo, hi, rows.size() + " 'snapshot_chunk' facts rows"));
      }
      if (i == 0 && lo != null) {
        out.add(tiling(s, i, lo, hi, "the first chunk is not open below"));
      }
      List<FactsChunk> before = byIndex.get(i - 1);
      if (i > 0
          && before != null
          && (before.get(0).last() || !Objects.equals(bound(before.get(0).hiJson()), lo))) {
        out.add(tiling(s, i, lo, hi, "it does not start where the one before ended"));
      }
      if (complete && i == highest && !f.last()) {
        out.add(tiling(s, i, lo, hi, "the last chunk is not the plan's final"));
      }
      long bronzeRows = b == null ? 0 : b.rows();
      if (bronzeRows != f.rows()) {
        out.add(rowsFailure(s, i, lo, hi, f.rows(), bronzeRows));
      }
      stamp(s, i, lo, hi, f.stamp(), "facts", out);
      stamp(s, i, lo, hi, b == null ? null : b.stamp(), "bronze", out);
    }
    return out;
  }

  /**
   * Reads what the checks need and runs them: the facts rows of {@code bronzePath}'s newest chunked
   * snapshot (the {@code snapshot_open} row of mode {@code chunked} with the highest S), then
   * bronze's rows of S at its latest version (files skipped by their {@code _snapshot} statistics;
   * only the per-chunk counts and lowest stamps are kept).
   *
   * @param tables the Delta access
   * @param factsPath the facts table
   * @param bronzePath the bronze table (the facts rows' {@code target})
   * @return the failures; empty when the facts table or bronze does not exist or bronze had no
   *     chunked snapshot
   * @throws UncheckedIOException when a table cannot be read
   */
  public static List<Failure> read(DeltaTables tables, String factsPath, String bronzePath) {
    if (!tables.exists(factsPath) || !tables.exists(bronzePath)) {
      return List.of();
    }
    Predicate events = null;
    for (String e :
        List.of(
            ChunkedSnapshotFacts.EVENT_SNAPSHOT_OPEN,
            ChunkedSnapshotFacts.EVENT_SNAPSHOT_CHUNK,
            FactsTable.EVENT_BOOTSTRAP,
            ChunkedSnapshotFacts.EVENT_RESNAPSHOT)) {
      Predicate one = new Predicate("=", new Column(FactsTable.EVENT), Literal.ofString(e));
      events = events == null ? one : new Predicate("OR", events, one);
    }
    Lsn s = null;
    List<Map<String, Object>> chunkRows = new ArrayList<>();
    List<String> completions = new ArrayList<>();
    try (io.delta.kernel.utils.CloseableIterator<Map<String, Object>> rows =
        tables.scanAtVersion(factsPath, tables.version(factsPath), events)) {
      while (rows.hasNext()) {
        Map<String, Object> row = rows.next();
        if (!bronzePath.equals(row.get(FactsTable.TARGET))) {
          continue;
        }
        Object event = row.get(FactsTable.EVENT);
        if (ChunkedSnapshotFacts.EVENT_SNAPSHOT_OPEN.equals(event)) {
          JsonNode d = FactsTable.detail(row);
          if (d != null
              && ChunkedSnapshotFacts.MODE_CHUNKED.equals(d.path("mode").asText())
              && row.get(FactsTable.MIN_LSN) instanceof String open) {
            Lsn lsn = Lsn.parse(open);
            s = s == null || lsn.isAfter(s) ? lsn : s;
          }
        } else if (ChunkedSnapshotFacts.EVENT_SNAPSHOT_CHUNK.equals(event)) {
          chunkRows.add(row);
        } else if (row.get(FactsTable.MAX_LSN) instanceof String max) {
          completions.add(max);
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot read Delta table " + factsPath, e);
    }
    if (s == null) {
      return List.of();
    }
    List<FactsChunk> facts = new ArrayList<>();
    for (Map<String, Object> row : chunkRows) {
      JsonNode d = FactsTable.detail(row);
      if (d == null || !s.toString().equals(d.path("snapshot").asText())) {
        continue;
      }
      Object rows = row.get(FactsTable.ROWS);
      Object min = row.get(FactsTable.MIN_LSN);
      facts.add(
          new FactsChunk(
              d.path("chunk").asInt(),
              d.path("lo").isMissingNode() ? "null" : d.get("lo").toString(),
              d.path("hi").isMissingNode() ? "null" : d.get("hi").toString(),
              d.path("last").asBoolean(),
              rows instanceof Number n ? n.longValue() : 0L,
              min instanceof String text ? Lsn.parse(text) : null));
    }
    boolean complete = completions.contains(s.toString());
    SortedMap<Integer, BronzeChunk> bronze = new TreeMap<>();
    Predicate ofS =
        new Predicate("=", new Column(MetadataColumns.SNAPSHOT), Literal.ofString(s.toString()));
    try (io.delta.kernel.utils.CloseableIterator<Map<String, Object>> rows =
        tables.scanAtVersion(bronzePath, tables.version(bronzePath), ofS)) {
      while (rows.hasNext()) {
        Map<String, Object> row = rows.next();
        if (!s.toString().equals(row.get(MetadataColumns.SNAPSHOT))
            || !(row.get(MetadataColumns.CHUNK) instanceof Number chunk)) {
          continue;
        }
        Lsn stamp =
            row.get(MetadataColumns.START_LSN) instanceof String text ? Lsn.parse(text) : null;
        bronze.merge(
            chunk.intValue(),
            new BronzeChunk(1, stamp),
            (a, b) ->
                new BronzeChunk(
                    a.rows() + b.rows(),
                    a.stamp() == null || (b.stamp() != null && b.stamp().isBefore(a.stamp()))
                        ? b.stamp()
                        : a.stamp()));
      }
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot read Delta table " + bronzePath, e);
    }
    return check(s, facts, bronze, complete);
  }

  private static void stamp(
      Lsn s,
      int chunk,
      @Nullable String lo,
      @Nullable String hi,
      @Nullable Lsn stamp,
      String in,
      List<Failure> out) {
    if (stamp != null && stamp.isBefore(s)) {
      ObjectNode d = detail(s, chunk);
      d.put("lsn", stamp.toString());
      d.put("in", in);
      out.add(new Failure(ReconcileReport.CHUNK_STAMP, chunk, lo, hi, d.toString()));
    }
  }

  private static Failure tiling(
      Lsn s, int chunk, @Nullable String lo, @Nullable String hi, String problem) {
    ObjectNode d = detail(s, chunk);
    d.put("problem", problem);
    return new Failure(ReconcileReport.CHUNK_TILING, chunk, lo, hi, d.toString());
  }

  private static Failure rowsFailure(
      Lsn s,
      int chunk,
      @Nullable String lo,
      @Nullable String hi,
      @Nullable Long factsRows,
      long bronzeRows) {
    ObjectNode d = detail(s, chunk);
    if (factsRows == null) {
      d.putNull("facts_rows");
    } else {
      d.put("facts_rows", factsRows);
    }
    d.put("bronze_rows", bronzeRows);
    return new Failure(ReconcileReport.CHUNK_ROWS, chunk, lo, hi, d.toString());
  }

  private static ObjectNode detail(Lsn s, int chunk) {
    ObjectNode d = JSON.createObjectNode();
    d.put("snapshot", s.toString());
    d.put("chunk", chunk);
    return d;
  }

  /** A bound's JSON text as the report stores it: null for an open bound. */
  private static @Nullable String bound(@Nullable String json) {
    return json == null || json.equals("null") ? null : json;
  }
}
