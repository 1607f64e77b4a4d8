package org.lakecdc.transforms.silver;

import io.delta.kernel.expressions.Column;
import io.delta.kernel.expressions.Literal;
import io.delta.kernel.expressions.Predicate;
import io.delta.kernel.utils.CloseableIterator;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Consumer;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.io.mssqlcdc.schema.MetadataColumns;
import org.lakecdc.transforms.delta.DeltaTables;

/**
 * Reads one pinned bronze version for {@link SilverApplier}: the newest whole snapshot, its rows,
 * and the change rows after a position cut into waves by LSN. Memory is bounded by the wave size:
 * no pass holds more than {@code waveRows + 1} LSN counts or one wave's keys, and every pass
 * streams bronze a Parquet batch at a time, skipping files by their {@code _start_lsn} and {@code
 * _operation} statistics.
 *
 * <p>A wave is the longest run of consecutive source transactions (bronze {@code _start_lsn}
 * values) after the position whose rows number at most {@code waveRows}, or a single transaction
 * when it alone has more: such a transaction is applied in {@code ceil(rows / waveRows)} hash
 * partitions of its keys, each read again from bronze and committed on its own (so at most about
 * {@code waveRows} keys per commit when keys spread evenly; all rows of one key are always in one
 * partition).
 */
public final class BronzeWaves {
  /** One planned wave: changes with {@code lower < _start_lsn <= upper}, {@code rows} of them. */
  public record Plan(String upper, long rows) {}

  private final DeltaTables tables;
  private final String bronze;
  private final long version;
  private final Set<String> instances;
  private final List<String> keys;
  private final Comparator<Map<String, Object>> order;

  /**
   * @param tables the Delta access
   * @param bronze the bronze path
   * @param version the pinned bronze version
   * @param instances the capture instances whose rows are ours, lower-cased
   * @param keys the key columns, bronze's spelling
   * @param withCommandId whether bronze has {@code _command_id}
   */
  public BronzeWaves(
      DeltaTables tables,
      String bronze,
      long version,
      Set<String> instances,
      List<String> keys,
      boolean withCommandId) {
    this.tables = tables;
    this.bronze = bronze;
    this.version = version;
    this.instances = instances;
    this.keys = keys;
    this.order = LatestImage.order(withCommandId);
  }

  /**
   * The newest whole snapshot of ours and the chunk rows of ours (docs/behaviour.md §10.2 step 7).
   *
   * @param whole max {@code coalesce(_snapshot, _start_lsn)} of operation-0 rows without {@code
   *     _chunk}, or null when there is none
   * @param chunkRows the operation-0 rows with a {@code _chunk}
   */
  public record Snapshots(@Nullable String whole, long chunkRows) {}

  /**
   * The newest whole snapshot of ours: max {@code coalesce(_snapshot, _start_lsn)} of operation-0
   * rows of our instances without {@code _chunk}, and how many chunk rows of ours bronze holds
   * (docs/behaviour.md §10.2 step 7).
   *
   * @param atLeast when known, only rows with {@code _start_lsn} at or after it count (file
   *     skipping)
   */
  public Snapshots snapshots(@Nullable String atLeast) {
    Predicate filter = new Predicate("=", new Column(MetadataColumns.OPERATION), Literal.ofInt(0));
    if (atLeast != null) {
      filter =
          new Predicate(
              "AND",
              filter,
              new Predicate(
                  ">=", new Column(MetadataColumns.START_LSN), Literal.ofString(atLeast)));
    }
    String[] max = {null};
    long[] chunkRows = {0};
    forEach(
        filter,
        row -> {
          if (operation(row) != MetadataColumns.OP_SNAPSHOT || !ours(row)) {
            return;
          }
          String lsn = (String) row.get(MetadataColumns.START_LSN);
          if (atLeast != null && lsn.compareTo(atLeast) < 0) {
            return;
          }
          if (row.get(MetadataColumns.CHUNK) != null) {
            chunkRows[0]++;
            return;
          }
          String s = snapshotOf(row);
          if ((atLeast == null || s.compareTo(atLeast) >= 0)
              && (max[0] == null || s.compareTo(max[0]) > 0)) {
            max[0] = s;
          }
        });
    return new Snapshots(max[0], chunkRows[0]);
  }

  /** {@link #snapshots}' whole snapshot alone. */
  @Nullable String whole(@Nullable String atLeast) {
    return snapshots(atLeast).whole();
  }

  /**
   * The operation-0 rows with {@code coalesce(_snapshot, _start_lsn) = snapshot}, streamed: a whole
   * snapshot's rows and every chunk's rows of a chunked snapshot at {@code snapshot} (stamped at or
   * after it).
   *
   * @throws IllegalArgumentException when one is of an instance outside the set
   */
  public CloseableIterator<Map<String, Object>> snapshotRows(String snapshot) {
    Predicate filter =
        new Predicate(
            "AND",
            new Predicate("=", new Column(MetadataColumns.OPERATION), Literal.ofInt(0)),
            new Predicate(
                "OR",
                new Predicate(
                    "<=", new Column(MetadataColumns.START_LSN), Literal.ofString(snapshot)),
                new Predicate(
                    "=", new Column(MetadataColumns.SNAPSHOT), Literal.ofString(snapshot))));
    CloseableIterator<Map<String, Object>> rows = scan(filter);
    return rows.filter(
        row -> {
          if (operation(row) != MetadataColumns.OP_SNAPSHOT || !snapshot.equals(snapshotOf(row))) {
            return false;
          }
          requireOurs(row);
          return true;
        });
  }

  /**
   * Plans the next wave after {@code lower}: one pass over the change rows after it, keeping the
   * counts of at most {@code waveRows + 1} LSNs. Checks the instance of every change row after
   * {@code lower} (docs/behaviour.md §10.2 step 12).
   *
   * @param lower the exclusive lower bound, or null for all changes
   * @param waveRows the most rows of a wave
   * @return the wave, or null when no change row is after {@code lower}
   * @throws IllegalArgumentException when a change row after {@code lower} is of an instance
   *     outside the set
   */
  public @Nullable Plan plan(@Nullable String lower, int waveRows) {
    Wave wave = wave(lower, waveRows, false);
    return wave == null ? null : wave.plan();
  }

  /**
   * A planned wave and, when it is applied in one partition, its change rows per key.
   *
   * @param plan the wave ({@link #plan})
   * @param changes its rows per key ({@link #key}), each key's in {@link #order()} (oldest first),
   *     as {@link #changes} gives them for one partition; null when the wave is one transaction of
   *     more than {@code waveRows} rows (then read per partition with {@link #changes})
   */
  public record Wave(Plan plan, @Nullable Map<List<Object>, List<Map<String, Object>>> changes) {}

  /**
   * {@link #plan} and the wave's rows in one pass over the change rows after {@code lower}: the
   * rows of the LSNs the plan keeps are kept beside their counts and leave with them, so memory
   * holds at most {@code waveRows + 1} rows; when one transaction alone has more, its rows are let
   * go and {@link Wave#changes()} is null.
   *
   * @param lower the exclusive lower bound, or null for all changes
   * @param waveRows the most rows of a wave
   * @return the wave, or null when no change row is after {@code lower}
   * @throws IllegalArgumentException when a change row after {@code lower} is of an instance
   *     outside the set
   */
  public @Nullable Wave wave(@Nullable String lower, int waveRows) {
    return wave(lower, waveRows, true);
  }

  /** {@link #wave}; with {@code keep} false only the plan (no rows kept, changes null). */
  private @Nullable Wave wave(@Nullable String lower, int waveRows, boolean keep) {
    TreeMap<String, Long> counts = new TreeMap<>();
    Map<String, List<Map<String, Object>>> kept = new HashMap<>();
    long[] total = {0};
    String[] ceiling = {null};
    boolean[] keeping = {keep};
    forEach(
        changesAfter(lower, null),
        row -> {
          String lsn = (String) row.get(MetadataColumns.START_LSN);
          if (!isChange(row) || (lower != null && lsn.compareTo(lower) <= 0)) {
            return;
          }
          requireOurs(row);
          if (ceiling[0] != null && lsn.compareTo(ceiling[0]) >= 0) {
            return;
          }
          counts.merge(lsn, 1L, Long::sum);
          total[0]++;
          if (keeping[0]) {
            kept.computeIfAbsent(lsn, l -> new ArrayList<>()).add(row);
          }
          // The wave is the longest LSN prefix with at most waveRows rows (at least one LSN): the
          // largest LSN leaves when it makes the prefix too long, and every LSN at or above it
          // from then on.
          while (counts.size() > 1 && total[0] > waveRows) {
            Map.Entry<String, Long> last = counts.pollLastEntry();
            total[0] -= last.getValue();
            ceiling[0] = last.getKey();
            kept.remove(last.getKey());
          }
          if (keeping[0] && total[0] > waveRows) {
            keeping[0] = false; // one transaction larger than a wave: read per partition later
            kept.clear();
          }
        });
    if (counts.isEmpty()) {
      return null;
    }
    Plan plan = new Plan(counts.lastKey(), total[0]);
    if (!keeping[0]) {
      return new Wave(plan, null);
    }
    Map<List<Object>, List<Map<String, Object>>> changes = new HashMap<>();
    for (List<Map<String, Object>> rows : kept.values()) {
      for (Map<String, Object> row : rows) {
        changes.computeIfAbsent(key(row), k -> new ArrayList<>()).add(row);
      }
    }
    for (List<Map<String, Object>> rows : changes.values()) {
      rows.sort(order);
    }
    return new Wave(plan, changes);
  }

  /**
   * The latest image per key of the change rows with {@code lower < _start_lsn <= upper} whose key
   * falls in hash partition {@code partition} of {@code partitions}, and how many rows were read.
   */
  Map<List<Object>, Map<String, Object>> latest(
      @Nullable String lower, String upper, int partition, int partitions, long[] rowsRead) {
    Map<List<Object>, Map<String, Object>> latest = new HashMap<>();
    forEach(
        changesAfter(lower, upper),
        row -> {
          String lsn = (String) row.get(MetadataColumns.START_LSN);
          if (!isChange(row)
              || (lower != null && lsn.compareTo(lower) <= 0)
              || lsn.compareTo(upper) > 0) {
            return;
          }
          List<Object> key = key(row);
          if (partitions > 1 && Math.floorMod(key.hashCode(), partitions) != partition) {
            return;
          }
          rowsRead[0]++;
          latest.merge(key, row, (a, b) -> order.compare(a, b) >= 0 ? a : b);
        });
    return latest;
  }

  /**
   * Every change row with {@code lower < _start_lsn <= upper} whose key falls in hash partition
   * {@code partition} of {@code partitions}, per key in {@link #order()} (oldest first): what a
   * history wave needs, one version per change. Memory holds one wave's rows.
   *
   * @param lower the exclusive lower bound, or null for all changes
   * @param upper the inclusive upper bound
   * @param partition the hash partition, from 0
   * @param partitions how many partitions the wave is cut in
   * @param rowsRead receives in its first element how many rows were read
   * @return the rows per key ({@link #key})
   */
  public Map<List<Object>, List<Map<String, Object>>> changes(
      @Nullable String lower, String upper, int partition, int partitions, long[] rowsRead) {
    Map<List<Object>, List<Map<String, Object>>> changes = new HashMap<>();
    forEach(
        changesAfter(lower, upper),
        row -> {
          String lsn = (String) row.get(MetadataColumns.START_LSN);
          if (!isChange(row)
              || (lower != null && lsn.compareTo(lower) <= 0)
              || lsn.compareTo(upper) > 0) {
            return;
          }
          List<Object> key = key(row);
          if (partitions > 1 && Math.floorMod(key.hashCode(), partitions) != partition) {
            return;
          }
          rowsRead[0]++;
          changes.computeIfAbsent(key, k -> new ArrayList<>()).add(new HashMap<>(row));
        });
    for (List<Map<String, Object>> rows : changes.values()) {
      rows.sort(order);
    }
    return changes;
  }

  /**
   * The rows of chunks {@code chunks} of the chunked snapshot at {@code s} (operation 0, {@code
   * _snapshot = s}, {@code _chunk} among them), by chunk index, streamed once with file skipping on
   * {@code _chunk} and {@code _start_lsn}.
   *
   * @throws IllegalArgumentException when one is of an instance outside the set
   */
  Map<Integer, List<Map<String, Object>>> chunkRows(String s, Set<Integer> chunks) {
    Map<Integer, List<Map<String, Object>>> byChunk = new TreeMap<>();
    if (chunks.isEmpty()) {
      return byChunk;
    }
    for (int chunk : chunks) {
      byChunk.put(chunk, new ArrayList<>());
    }
    int min = java.util.Collections.min(chunks);
    int max = java.util.Collections.max(chunks);
    Predicate filter =
        new Predicate(
            "AND",
            new Predicate(
                "AND",
                new Predicate("=", new Column(MetadataColumns.OPERATION), Literal.ofInt(0)),
                new Predicate(">=", new Column(MetadataColumns.START_LSN), Literal.ofString(s))),
            new Predicate(
                "AND",
                new Predicate(">=", new Column(MetadataColumns.CHUNK), Literal.ofInt(min)),
                new Predicate("<=", new Column(MetadataColumns.CHUNK), Literal.ofInt(max))));
    forEach(
        filter,
        row -> {
          Object chunk = row.get(MetadataColumns.CHUNK);
          if (operation(row) != MetadataColumns.OP_SNAPSHOT
              || !(chunk instanceof Number n)
              || !chunks.contains(n.intValue())
              || !s.equals(row.get(MetadataColumns.SNAPSHOT))) {
            return;
          }
          requireOurs(row);
          byChunk.get(n.intValue()).add(row);
        });
    return byChunk;
  }

  /**
   * The change rows after {@code after} whose key is among {@code keys} (the null-safe semi-join of
   * docs/behaviour.md §10.2 step 14), streamed once.
   *
   * @throws IllegalArgumentException when one is of an instance outside the set
   */
  List<Map<String, Object>> changesOfKeys(String after, Set<List<Object>> keys) {
    List<Map<String, Object>> rows = new ArrayList<>();
    if (keys.isEmpty()) {
      return rows;
    }
    forEach(
        changesAfter(after, null),
        row -> {
          String lsn = (String) row.get(MetadataColumns.START_LSN);
          if (!isChange(row) || lsn.compareTo(after) <= 0 || !keys.contains(key(row))) {
            return;
          }
          requireOurs(row);
          rows.add(row);
        });
    return rows;
  }

  /** The ranking of {@link LatestImage}: the later row first. */
  public Comparator<Map<String, Object>> order() {
    return order;
  }

  /** The key values of a row, null-safe and comparable by value (binary keys wrapped). */
  public List<Object> key(Map<String, Object> row) {
    List<Object> key = new ArrayList<>(keys.size());
    for (String column : keys) {
      Object value = row.get(column);
      key.add(value instanceof byte[] bytes ? ByteBuffer.wrap(bytes) : value);
    }
    return key;
  }

  private Predicate changesAfter(@Nullable String lower, @Nullable String upper) {
    Predicate filter = new Predicate(">", new Column(MetadataColumns.OPERATION), Literal.ofInt(0));
    if (lower != null) {
      filter =
          new Predicate(
              "AND",
              filter,
              new Predicate(">", new Column(MetadataColumns.START_LSN), Literal.ofString(lower)));
    }
    if (upper != null) {
      filter =
          new Predicate(
              "AND",
              filter,
              new Predicate("<=", new Column(MetadataColumns.START_LSN), Literal.ofString(upper)));
    }
    return filter;
  }

  private static boolean isChange(Map<String, Object> row) {
    return operation(row) != MetadataColumns.OP_SNAPSHOT;
  }

  /** The {@code _operation} of a bronze row. */
  public static int operation(Map<String, Object> row) {
    return ((Number) row.get(MetadataColumns.OPERATION)).intValue();
  }

  private static String snapshotOf(Map<String, Object> row) {
    Object snapshot = row.get(MetadataColumns.SNAPSHOT);
    return snapshot != null ? (String) snapshot : (String) row.get(MetadataColumns.START_LSN);
  }

  private boolean ours(Map<String, Object> row) {
    Object instance = row.get(MetadataColumns.CAPTURE_INSTANCE);
    return instance != null && instances.contains(((String) instance).toLowerCase(Locale.ROOT));
  }

  private void requireOurs(Map<String, Object> row) {
    if (!ours(row)) {
      throw new IllegalArgumentException(
          "Bronze table "
              + bronze
              + " holds a row of capture instance '"
              + row.get(MetadataColumns.CAPTURE_INSTANCE)
              + "' at "
              + row.get(MetadataColumns.START_LSN)
              + ", which is not among the capture instances given "
              + new java.util.TreeSet<>(instances)
              + ": if it is the same table's, pass options (all the table's capture instances)");
    }
  }

  private CloseableIterator<Map<String, Object>> scan(Predicate filter) {
    return tables.scanAtVersion(bronze, version, filter);
  }

  private void forEach(Predicate filter, Consumer<Map<String, Object>> consumer) {
    try (CloseableIterator<Map<String, Object>> rows = scan(filter)) {
      rows.forEachRemaining(consumer);
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot read Delta table " + bronze, e);
    }
  }
}
