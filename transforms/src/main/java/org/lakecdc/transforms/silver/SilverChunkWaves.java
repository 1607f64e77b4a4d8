package org.lakecdc.transforms.silver;

import io.delta.kernel.expressions.Column;
import io.delta.kernel.expressions.Literal;
import io.delta.kernel.expressions.Predicate;
import io.delta.kernel.utils.CloseableIterator;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Consumer;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.io.mssqlcdc.schema.MetadataColumns;
import org.lakecdc.io.mssqlcdc.schema.OutputType;
import org.lakecdc.transforms.Counts;
import org.lakecdc.transforms.delta.DeltaColumn;
import org.lakecdc.transforms.delta.DeltaTables;
import org.lakecdc.transforms.snapshot.ChunkedSnapshotFacts;

/**
 * An open chunked snapshot's side of one silver apply ({@link SilverApplier}, docs/behaviour.md
 * §10.2 steps 4, 7 and 14; §10.4): which chunked snapshot of bronze the facts hold open (and the
 * check that bronze's chunk rows have one), and one wave of it ranked: the wave's chunk rows, the
 * range deletes of the silver keys its chunks no longer hold, and every change after S of their
 * keys, the latest image per key. Memory holds one wave's rows and keys. Thread-safe as the {@link
 * DeltaTables} it reads through.
 */
final class SilverChunkWaves {
  private final DeltaTables tables;
  private final Consumer<String> printed;

  /**
   * @param tables the Delta access
   * @param printed receives each line printed for people (a wave's range deletes)
   */
  SilverChunkWaves(DeltaTables tables, Consumer<String> printed) {
    this.tables = tables;
    this.printed = printed;
  }

  /**
   * Steps 4 and 7: the newest chunked snapshot of this bronze in the facts, or null; checks that
   * bronze's chunk rows have facts and an open row.
   */
  ChunkedSnapshotFacts.@Nullable State openedSnapshot(SilverSpec spec, long chunkRows) {
    String facts = spec.facts();
    if (facts == null) {
      if (chunkRows > 0) {
        throw chunkRowsRefused(
            spec,
            chunkRows,
            ", which silver "
                + spec.silver()
                + " cannot apply without facts_table (pass the bronze stream's facts table)");
      }
      return null;
    }
    OpenChunkedSnapshot.Found found = OpenChunkedSnapshot.read(tables, facts, spec.bronze());
    if (found.state().isEmpty() && chunkRows > 0) {
      throw chunkRowsRefused(
          spec,
          chunkRows,
          " but facts table "
              + facts
              + " has no chunked snapshot_open row for target "
              + spec.bronze()
              + "; targets with one: "
              + found.targets()
              + " (pass bronze spelled as the bronze job was given it)");
    }
    return found.state().orElse(null);
  }

  /**
   * Bronze's chunk rows refused: {@code Bronze table <b> holds <n> rows of a chunked
   * snapshot<why>}.
   */
  private static IllegalArgumentException chunkRowsRefused(
      SilverSpec spec, long chunkRows, String why) {
    return new IllegalArgumentException(
        "Bronze table "
            + spec.bronze()
            + " holds "
            + Counts.of(chunkRows, "row", "rows")
            + " of a chunked snapshot"
            + why);
  }

  /**
   * One wave of the open snapshot ranked (docs/behaviour.md §10.2 step 14): the chunks' rows, the
   * range deletes of docs/behaviour.md §10.4 when {@code rangeKind} is not null, and every change
   * after S of their keys; the latest image per key.
   */
  Map<List<Object>, Map<String, Object>> wave(
      SilverSpec spec,
      BronzeWaves bronze,
      ChunkedSnapshotFacts.State opened,
      Set<Integer> chunks,
      OutputType.@Nullable Kind rangeKind,
      List<String> keys,
      long[] read) {
    String s = opened.open().s().toString();
    Comparator<Map<String, Object>> order = bronze.order();
    Map<List<Object>, Map<String, Object>> latest = new HashMap<>();
    for (List<Map<String, Object>> rows : bronze.chunkRows(s, chunks).values()) {
      for (Map<String, Object> row : rows) {
        read[0]++;
        latest.merge(bronze.key(row), row, (a, b) -> order.compare(a, b) >= 0 ? a : b);
      }
    }
    if (rangeKind != null) {
      for (Map<String, Object> delete :
          rangeDeletes(spec, opened, chunks, rangeKind, keys, latest)) {
        latest.merge(bronze.key(delete), delete, (a, b) -> order.compare(a, b) >= 0 ? a : b);
      }
    }
    for (Map<String, Object> row :
        bronze.changesOfKeys(s, new java.util.HashSet<>(latest.keySet()))) {
      read[0]++;
      latest.merge(bronze.key(row), row, (a, b) -> order.compare(a, b) >= 0 ? a : b);
    }
    return latest;
  }

  /**
   * Range deletes (docs/behaviour.md §10.4): each silver key inside a chunk's range that the wave
   * does not hold and whose image is older than the chunk's stamp L, as a delete row at L.
   */
  private List<Map<String, Object>> rangeDeletes(
      SilverSpec spec,
      ChunkedSnapshotFacts.State opened,
      Set<Integer> chunks,
      OutputType.Kind kind,
      List<String> keys,
      Map<List<Object>, Map<String, Object>> held) {
    List<ChunkedSnapshotFacts.ChunkFact> facts = new ArrayList<>();
    List<OpenChunkedSnapshot.Range> ranges = new ArrayList<>();
    String maxStamp = null;
    for (int chunk : chunks) {
      ChunkedSnapshotFacts.ChunkFact fact = opened.chunks().get(chunk);
      if (fact == null) {
        continue;
      }
      Optional<OpenChunkedSnapshot.Range> range = OpenChunkedSnapshot.range(fact, kind);
      if (range.isEmpty()) {
        continue;
      }
      facts.add(fact);
      ranges.add(range.get());
      String stamp = fact.stamp().toString();
      maxStamp = maxStamp == null || stamp.compareTo(maxStamp) > 0 ? stamp : maxStamp;
    }
    List<Map<String, Object>> deletes = new ArrayList<>();
    if (maxStamp == null || !tables.hasDataFiles(spec.silver())) {
      return deletes;
    }
    String key = keys.get(0);
    Predicate older =
        new Predicate("<", new Column(SilverTable.START_LSN), Literal.ofString(maxStamp));
    try (CloseableIterator<Map<String, Object>> rows =
        tables.scanAtVersion(spec.silver(), tables.version(spec.silver()), older)) {
      while (rows.hasNext()) {
        Map<String, Object> row = rows.next();
        Object value = valueOf(row, key);
        String lsn = (String) row.get(SilverTable.START_LSN);
        if (held.containsKey(java.util.Collections.singletonList(value))) {
          continue;
        }
        for (int i = 0; i < facts.size(); i++) {
          ChunkedSnapshotFacts.ChunkFact fact = facts.get(i);
          String stamp = fact.stamp().toString();
          if (lsn != null && lsn.compareTo(stamp) < 0 && ranges.get(i).contains(value, kind)) {
            Map<String, Object> delete = new HashMap<>();
            delete.put(key, value);
            delete.put(MetadataColumns.START_LSN, stamp);
            delete.put(MetadataColumns.OPERATION, MetadataColumns.OP_DELETE);
            delete.put(MetadataColumns.COMMIT_TS, fact.stampCommitTime());
            delete.put(MetadataColumns.SEQVAL, null);
            delete.put(MetadataColumns.COMMAND_ID, null);
            deletes.add(delete);
            break;
          }
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot read Delta table " + spec.silver(), e);
    }
    if (!deletes.isEmpty()) {
      printed.accept(
          String.format(
              Locale.ROOT,
              "Silver %s: %s of chunks %s %s gone from the source (range deletes)",
              spec.silver(),
              Counts.of(deletes.size(), "key", "keys"),
              chunks,
              deletes.size() == 1 ? "is" : "are"));
    }
    return deletes;
  }

  private static @Nullable Object valueOf(Map<String, Object> row, String column) {
    if (row.containsKey(column)) {
      return row.get(column);
    }
    for (Map.Entry<String, Object> entry : row.entrySet()) {
      if (entry.getKey().equalsIgnoreCase(column)) {
        return entry.getValue();
      }
    }
    return null;
  }

  /** The Delta type of silver's first key column. */
  OutputType keyType(SilverSpec spec, List<String> keys) {
    for (DeltaColumn column : tables.describe(spec.silver()).columns()) {
      if (column.name().equalsIgnoreCase(keys.get(0))) {
        return column.type();
      }
    }
    throw new IllegalStateException(
        "Silver " + spec.silver() + " has no key column " + keys.get(0));
  }
}
