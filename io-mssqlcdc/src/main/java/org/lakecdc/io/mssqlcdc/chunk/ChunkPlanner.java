package org.lakecdc.io.mssqlcdc.chunk;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.SortedMap;
import org.lakecdc.io.mssqlcdc.client.CaptureInstance;
import org.lakecdc.io.mssqlcdc.client.CdcClient;
import org.lakecdc.io.mssqlcdc.client.IsolationLevel;
import org.lakecdc.io.mssqlcdc.schema.CapturedColumn;
import org.lakecdc.io.mssqlcdc.schema.SqlServerType;

/**
 * Plans a chunked snapshot of one source table (docs/behaviour.md §6.8): the key's extent at the
 * open, then every chunk once. Every query runs on SQL Server (through {@link CdcClient}) under the
 * backfill's isolation; string keys are compared by the server under their collation, never by
 * Java.
 */
public final class ChunkPlanner {
  /** The most slices one count asks for. */
  static final long MAX_SLICES = 100_000;

  private static final Set<String> INTEGER = Set.of("tinyint", "smallint", "int", "bigint");

  private final CdcClient client;
  private final String schema;
  private final String table;
  private final List<String> keyColumns;
  private final List<SqlServerType> keyTypes;
  private final IsolationLevel isolation;

  /**
   * A planner of {@code schema.table} over its unique key.
   *
   * @param keyColumns the key columns (the capture instance's unique index), possibly none
   * @param keyTypes their captured SQL Server types, one per key column
   */
  public ChunkPlanner(
      CdcClient client,
      String schema,
      String table,
      List<String> keyColumns,
      List<SqlServerType> keyTypes,
      IsolationLevel isolation) {
    this.client = client;
    this.schema = schema;
    this.table = table;
    this.keyColumns = List.copyOf(keyColumns);
    this.keyTypes = List.copyOf(keyTypes);
    this.isolation = isolation;
  }

  /**
   * A planner of the table the capture instance tracks, over the instance's key columns and their
   * captured types ({@code sp_cdc_get_captured_columns}). A key column the instance does not
   * capture leaves the planner without a key: its extent is one chunk of the whole table.
   *
   * @throws org.lakecdc.io.mssqlcdc.client.CaptureInstanceNotFoundError when the instance does not
   *     exist
   */
  public static ChunkPlanner forInstance(
      CdcClient client, String captureInstance, IsolationLevel isolation) {
    CaptureInstance instance = null;
    for (CaptureInstance ci : client.captureInstances(captureInstance)) {
      if (ci.name().equalsIgnoreCase(captureInstance)) {
        instance = ci;
      }
    }
    if (instance == null) {
      throw new IllegalStateException(
          "The capture instances of " + captureInstance + " do not list it");
    }
    Map<String, SqlServerType> captured = new HashMap<>();
    for (CapturedColumn c : client.capturedColumns(instance.name())) {
      captured.put(c.name().toLowerCase(Locale.ROOT), c.type());
    }
    List<String> keys = new ArrayList<>();
    List<SqlServerType> types = new ArrayList<>();
    for (String k : instance.keyColumns()) {
      SqlServerType type = captured.get(k.toLowerCase(Locale.ROOT));
      if (type == null) {
        keys.clear();
        types.clear();
        break;
      }
      keys.add(k);
      types.add(type);
    }
    return new ChunkPlanner(
        client, instance.sourceSchema(), instance.sourceTable(), keys, types, isolation);
  }

  /** The key columns. */
  public List<String> keyColumns() {
    return keyColumns;
  }

  /** The key columns' captured types. */
  public List<SqlServerType> keyTypes() {
    return keyTypes;
  }

  /**
   * Whether chunks can be planned over the key (docs/behaviour.md §6.3): at least one key column,
   * every type one a bound can be cast to ({@code time} and unmapped types cannot), and a {@code
   * datetime2(7)}/{@code datetimeoffset(7)} column only as the last key column.
   */
  public boolean rangeable() {
    if (keyColumns.isEmpty() || keyColumns.size() != keyTypes.size()) {
      return false;
    }
    for (int i = 0; i < keyTypes.size(); i++) {
      SqlServerType t = keyTypes.get(i);
      // docs/behaviour.md §6.3: time keys are not rangeable in a plan.
      if (!SqlServerType.boundCastable(t.name()) || t.name().equals("time")) {
        return false;
      }
      boolean sevenDigits =
          (t.name().equals("datetime2") || t.name().equals("datetimeoffset"))
              && (t.precision() == null || t.precision() >= 7);
      if (sevenDigits && i < keyTypes.size() - 1) {
        return false;
      }
    }
    return true;
  }

  /** Whether the key is one integer column (an {@code int} extent and plan). */
  private boolean integerKey() {
    return keyColumns.size() == 1 && INTEGER.contains(keyTypes.get(0).name()) && rangeable();
  }

  /**
   * The key's extent now (read after S): for one integer column {@code {int, MIN, MAX, sp_spaceused
   * rows}}; for any other rangeable key {@code {keyset, MAX}} (MAX of one column, the last key in
   * {@code ORDER BY} order of a composite key, as it reads back from JSON); {@code {keyset, null}}
   * for no key, an unrangeable key or a table without a non-NULL key.
   */
  public SnapshotExtent extent() {
    if (!rangeable()) {
      return SnapshotExtent.ofKeyset(null);
    }
    if (keyColumns.size() == 1) {
      Optional<List<Object>> range = client.keyRange(schema, table, keyColumns.get(0), isolation);
      if (range.isEmpty()) {
        return SnapshotExtent.ofKeyset(null);
      }
      if (integerKey()) {
        long rows = client.rowEstimate(schema, table);
        return SnapshotExtent.ofInt(
            ((Number) range.get().get(0)).longValue(),
            ((Number) range.get().get(1)).longValue(),
            Math.max(0, rows));
      }
      List<Object> max = new ArrayList<>();
      max.add(range.get().get(1));
      return SnapshotExtent.ofKeyset(ChunkBounds.roundTrip(max, keyTypes));
    }
    Optional<List<Object>> max = client.keyMax(schema, table, keyColumns, isolation);
    return SnapshotExtent.ofKeyset(max.map(m -> ChunkBounds.roundTrip(m, keyTypes)).orElse(null));
  }

  /**
   * Every chunk of the snapshot (docs/behaviour.md §6.8): contiguous, the first open below, the
   * last ending at MAX + 1 (an integer key) or the first key after MAX now, or open.
   *
   * <p>Integer plan: rows are counted per slice of a grid of {@code n = min(100000, max(1, ceil(16
   * * rows / chunkRows)))} slices over {@code [lo, hi]} in one server-side {@code GROUP BY} ({@link
   * CdcClient#keySlices}); a slice of more than {@code chunkRows} rows is counted again on a finer
   * grid over its own MIN..MAX (found by two {@link CdcClient#keyBound} seeks), down to single
   * values; consecutive non-empty slices are packed into chunks of at most {@code chunkRows} rows
   * (a single value with more rows is a chunk of its own). Bounds are slice starts, in the key's
   * Java type; the last {@code hi} is {@code hi + 1} in that type, or a {@link
   * java.math.BigInteger} when it lies above the type's maximum ({@link ChunkBounds#fromJson} reads
   * that back as open).
   *
   * <p>Keyset plan: from an open start, each bound is the ({@code chunkRows} + 1)-th key of {@code
   * [lo, MAX)} ({@link CdcClient#keyBound}), as it reads back from JSON ({@link
   * ChunkBounds#roundTrip}); the last chunk ends at {@link #firstKeyAfter}, or is open.
   *
   * @param chunkRows the most rows per chunk, at least 1
   * @throws IllegalArgumentException when {@code chunkRows < 1}, or an int extent does not fit the
   *     key
   */
  public List<Chunk> plan(SnapshotExtent extent, long chunkRows) {
    if (chunkRows < 1) {
      throw new IllegalArgumentException("snapshotChunkRows must be at least 1, not " + chunkRows);
    }
    if (extent.isInt()) {
      if (!integerKey()) {
        throw new IllegalArgumentException(
            "An int extent needs one integer key column, not " + keyColumns + " " + keyTypes);
      }
      return integerPlan(extent, chunkRows);
    }
    if (extent.max() == null || !rangeable()) {
      return List.of(new Chunk(0, null, null));
    }
    return keysetPlan(extent.max(), chunkRows);
  }

  /**
   * The first key after {@code max} now ({@code keyBound(max, open, 1)}: the second key at or after
   * it), as it reads back from JSON; empty when none, or when it reads back equal to {@code max} (a
   * {@code datetime2(7)} key in MAX's microsecond).
   */
  public Optional<List<Object>> firstKeyAfter(List<Object> max) {
    Optional<List<Object>> next =
        client.keyBound(
            schema, table, keyColumns, Optional.of(max), Optional.empty(), 1, isolation);
    if (next.isEmpty()) {
      return Optional.empty();
    }
    List<Object> read = ChunkBounds.roundTrip(next.get(), keyTypes);
    if (read == null || ChunkBounds.sameKey(read, ChunkBounds.roundTrip(max, keyTypes))) {
      return Optional.empty();
    }
    return Optional.of(read);
  }

  // ---- keyset ----------------------------------------------------------------------------------

  private List<Chunk> keysetPlan(List<Object> max, long chunkRows) {
    List<Chunk> chunks = new ArrayList<>();
    List<Object> lo = null;
    while (true) {
      long n = chunkRows;
      Optional<List<Object>> bound = seek(lo, max, n);
      List<Object> read = bound.map(b -> ChunkBounds.roundTrip(b, keyTypes)).orElse(null);
      // A bound that reads back as the previous one (datetime2(7) keys in one microsecond) would
      // make an empty chunk: seek further.
      while (bound.isPresent() && lo != null && ChunkBounds.sameKey(read, lo)) {
        n += chunkRows;
        bound = seek(lo, max, n);
        read = bound.map(b -> ChunkBounds.roundTrip(b, keyTypes)).orElse(null);
      }
      if (bound.isEmpty()) {
        break;
      }
      chunks.add(new Chunk(chunks.size(), lo, read));
      lo = read;
    }
    chunks.add(new Chunk(chunks.size(), lo, firstKeyAfter(max).orElse(null)));
    return List.copyOf(chunks);
  }

  private Optional<List<Object>> seek(List<Object> lo, List<Object> max, long n) {
    return client.keyBound(
        schema, table, keyColumns, Optional.ofNullable(lo), Optional.of(max), n, isolation);
  }

  // ---- integer ---------------------------------------------------------------------------------

  /** A non-empty slice: its first value and its row count. */
  private record Slice(long start, long rows) {}

  private List<Chunk> integerPlan(SnapshotExtent extent, long chunkRows) {
    List<Slice> slices = new ArrayList<>();
    count(extent.lo(), extent.hi(), extent.rows(), chunkRows, slices);
    List<Chunk> chunks = new ArrayList<>();
    List<Object> lo = null;
    long rows = 0;
    for (Slice s : slices) {
      if (rows > 0 && rows + s.rows() > chunkRows) {
        List<Object> bound = key(s.start());
        chunks.add(new Chunk(chunks.size(), lo, bound));
        lo = bound;
        rows = s.rows();
      } else {
        rows += s.rows();
      }
    }
    BigInteger end = BigInteger.valueOf(extent.hi()).add(BigInteger.ONE);
    List<Object> hi = new ArrayList<>(1);
    hi.add(end.compareTo(BigInteger.valueOf(typeMax())) > 0 ? end : javaInteger(end.longValue()));
    chunks.add(new Chunk(chunks.size(), lo, hi));
    return List.copyOf(chunks);
  }

  /**
   * Counts {@code [low, high]} (about {@code rows} rows) on a grid and appends its non-empty slices
   * in key order, counting a slice of more than {@code chunkRows} rows again on a finer grid.
   */
  private void count(long low, long high, long rows, long chunkRows, List<Slice> out) {
    BigInteger sixteen = BigInteger.valueOf(16).multiply(BigInteger.valueOf(Math.max(0, rows)));
    BigInteger r = BigInteger.valueOf(chunkRows);
    long n =
        ceilDiv(sixteen, r).max(BigInteger.ONE).min(BigInteger.valueOf(MAX_SLICES)).longValue();
    BigInteger span =
        BigInteger.valueOf(high).subtract(BigInteger.valueOf(low)).add(BigInteger.ONE);
    long width =
        ceilDiv(span, BigInteger.valueOf(n))
            .max(BigInteger.ONE)
            .min(BigInteger.valueOf(Long.MAX_VALUE))
            .longValue();
    SortedMap<Long, Long> counts =
        client.keySlices(schema, table, keyColumns.get(0), width, low, high, isolation);
    for (Map.Entry<Long, Long> e : counts.entrySet()) {
      long slice = e.getKey();
      long sliceRows = e.getValue();
      BigInteger first = BigInteger.valueOf(slice).multiply(BigInteger.valueOf(width));
      long start = first.max(BigInteger.valueOf(low)).longValue();
      long end = first.add(BigInteger.valueOf(width - 1)).min(BigInteger.valueOf(high)).longValue();
      if (sliceRows > chunkRows && width > 1) {
        Optional<List<Object>> upper =
            end == typeMax() ? Optional.empty() : Optional.of(key(end + 1));
        Optional<List<Object>> min = sliceKey(start, upper, 0);
        if (min.isEmpty()) {
          continue; // its rows are gone since they were counted
        }
        Optional<List<Object>> max = sliceKey(start, upper, sliceRows - 1);
        long lo = ((Number) min.get().get(0)).longValue();
        long hi = max.map(m -> ((Number) m.get(0)).longValue()).orElse(end);
        count(lo, hi, sliceRows, chunkRows, out);
      } else {
        out.add(new Slice(start, sliceRows));
      }
    }
  }

  private Optional<List<Object>> sliceKey(long start, Optional<List<Object>> upper, long offset) {
    return client.keyBound(
        schema, table, keyColumns, Optional.of(key(start)), upper, offset, isolation);
  }

  private static BigInteger ceilDiv(BigInteger a, BigInteger b) {
    BigInteger[] qr = a.divideAndRemainder(b);
    return qr[1].signum() > 0 ? qr[0].add(BigInteger.ONE) : qr[0];
  }

  /** A one-column key of the integer value in the column's Java type. */
  private List<Object> key(long value) {
    List<Object> key = new ArrayList<>(1);
    key.add(javaInteger(value));
    return key;
  }

  private Object javaInteger(long value) {
    return switch (keyTypes.get(0).name()) {
      case "tinyint", "smallint" -> (short) value;
      case "int" -> Math.toIntExact(value);
      default -> value;
    };
  }

  private long typeMax() {
    return switch (keyTypes.get(0).name()) {
      case "tinyint" -> 255L;
      case "smallint" -> Short.MAX_VALUE;
      case "int" -> Integer.MAX_VALUE;
      default -> Long.MAX_VALUE;
    };
  }
}
