package org.lakecdc.transforms.reconcile;

import io.delta.kernel.expressions.Column;
import io.delta.kernel.expressions.Literal;
import io.delta.kernel.expressions.Predicate;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Clock;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.UUID;
import org.apache.beam.sdk.values.Row;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.io.mssqlcdc.client.CdcClient;
import org.lakecdc.io.mssqlcdc.client.CloseableIterator;
import org.lakecdc.io.mssqlcdc.client.KeyBucket;
import org.lakecdc.io.mssqlcdc.client.TableQuery;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.io.mssqlcdc.schema.OutputType;
import org.lakecdc.io.mssqlcdc.schema.ValueConverter;
import org.lakecdc.transforms.delta.DeltaColumn;
import org.lakecdc.transforms.delta.DeltaTables;
import org.lakecdc.transforms.silver.SilverPosition;
import org.lakecdc.transforms.silver.SilverTable;

/**
 * Reconcile's steps (docs/behaviour.md §11.2), each usable on its own so the job can run tier 2 in
 * a Beam pipeline: {@link #plan} on the launcher (pin silver's version and its applied_lsn E, read
 * M = {@code max_lsn}, tier 1 on both sides, the keys in flight after the counts, bucket statuses,
 * the seeded sample), {@link #compare} per group of key ranges on a worker (tier 2: the source's
 * rows through {@code CdcClient.readTable} under the spec's isolation level, never NOLOCK, never a
 * write; silver's through Delta Kernel at the pinned version; one {@link RowHash} on both sides),
 * and {@link #finish} once (the keys in flight read again after every source read, then the report
 * commit). The chunk checks ({@link ChunkChecks}, no SQL Server read) run in {@link #plan}, after
 * tier 1 (the facts table before bronze).
 *
 * <p>Memory: tier 1 holds at most about {@link KeyBuckets#MAX_FINE_BUCKETS} fine buckets per side;
 * tier 2 holds one digest per source row of one group of at most {@link #GROUP_ROWS} rows (never
 * rows), plus the keys in flight.
 */
public final class Reconciler {
  /** At most about this many rows (the larger side) are compared in one group. */
  public static final long GROUP_ROWS = 250_000;

  private final DeltaTables tables;
  private final Clock clock;

  /**
   * @param tables the Delta access
   * @param clock the clock of {@code run_at}
   */
  public Reconciler(DeltaTables tables, Clock clock) {
    this.tables = tables;
    this.clock = clock;
  }

  /**
   * Tier 1 and the sample: everything before the row comparisons.
   *
   * @param client the source
   * @param spec the reconcile
   * @return the plan
   * @throws IllegalStateException when silver does not exist
   * @throws IllegalArgumentException when a key or computed column is not one of silver's captured
   *     columns
   */
  public ReconcilePlan plan(CdcClient client, ReconcileSpec spec) {
    long started = System.nanoTime();
    LocalDateTime runAt = LocalDateTime.ofInstant(clock.instant(), ZoneOffset.UTC);
    String runId = UUID.randomUUID().toString();
    long version = tables.version(spec.silver());
    String appliedLsn =
        tables
            .domainMetadataAt(spec.silver(), version, SilverPosition.DOMAIN)
            .map(SilverPosition::fromJson)
            .map(SilverPosition::appliedLsn)
            .orElse(null);
    List<DeltaColumn> silverColumns = tables.describe(spec.silver()).columns();
    List<String> columns = new ArrayList<>();
    List<OutputType> types = new ArrayList<>();
    Map<String, OutputType> byName = new HashMap<>();
    for (String name : SilverTable.capturedColumns(DeltaColumn.toBeamSchema(silverColumns))) {
      OutputType type =
          DeltaColumn.toBeamSchema(silverColumns).getField(name) == null
              ? null
              : OutputType.fromBeamFieldType(
                  DeltaColumn.toBeamSchema(silverColumns).getField(name).getType());
      byName.put(name.toLowerCase(java.util.Locale.ROOT), type);
      if (ReconcileSpec.find(spec.computed(), name) == null) {
        columns.add(name);
        types.add(type);
      }
    }
    List<OutputType> keyTypes = new ArrayList<>();
    for (String key : spec.keys()) {
      OutputType type = byName.get(key.toLowerCase(java.util.Locale.ROOT));
      if (type == null) {
        throw new IllegalArgumentException(
            "keys " + spec.keys() + " are not captured columns of silver " + spec.silver());
      }
      keyTypes.add(type);
    }
    Lsn m = client.maxLsn().orElse(null);
    KeyOrdinal ordinal =
        spec.keys().size() == 1 ? KeyOrdinal.of(keyTypes.get(0)).orElse(null) : null;
    List<Bucket> buckets;
    List<Part> candidates = new ArrayList<>();
    if (ordinal != null) {
      String key = spec.keys().get(0);
      long width = width(client, spec, ordinal, version);
      SortedMap<Long, KeyBucket> source =
          client.keyBuckets(spec.sourceSchema(), spec.sourceTable(), key, width, spec.isolation());
      TreeMap<Long, KeyBucket> silver = new TreeMap<>();
      tables
          .deletionVectors()
          .scanLiveRows(
              spec.silver(),
              version,
              List.of(key),
              (file, position, values) -> {
                if (values[0] != null) {
                  long o = ordinal.ordinal(values[0]);
                  silver.merge(Math.floorDiv(o, width), KeyBucket.EMPTY.plus(o), KeyBucket::plus);
                }
              });
      buckets = KeyBuckets.merge(width, source, silver, spec.bucketRows());
    } else {
      long sourceRows = client.rowCount(spec.sourceSchema(), spec.sourceTable(), spec.isolation());
      long silverRows =
          tables
              .deletionVectors()
              .scanLiveRows(spec.silver(), version, List.of(spec.keys().get(0)), (f, p, v) -> {});
      buckets =
          List.of(
              new Bucket(
                  0,
                  null,
                  null,
                  List.of(),
                  new KeyBucket(sourceRows, java.math.BigInteger.ZERO),
                  new KeyBucket(silverRows, java.math.BigInteger.ZERO),
                  false));
    }
    InFlight.Keys moved =
        InFlight.read(
            client, tables, spec, keyTypes, appliedLsn == null ? null : Lsn.parse(appliedLsn), m);
    if (ordinal != null) {
      buckets = KeyBuckets.markMoved(buckets, moved.ordinals());
    } else if (buckets.get(0).status() != Bucket.Status.MATCH && !moved.keys().isEmpty()) {
      buckets = List.of(buckets.get(0).withMoved(true));
    }
    Set<Integer> hashed = new HashSet<>();
    List<Part> parts = new ArrayList<>();
    if (ordinal != null) {
      List<Integer> matching = new ArrayList<>();
      for (Bucket b : buckets) {
        if (b.status() == Bucket.Status.MISMATCH) {
          hashed.add(b.index());
        } else if (b.status() == Bucket.Status.MATCH) {
          matching.add(b.index());
        }
      }
      hashed.addAll(sample(matching, spec.sample(), spec.seed()));
      for (Bucket b : buckets) {
        if (hashed.contains(b.index())) {
          parts.add(
              Part.of(
                  b.index(),
                  listOf(ordinal.bound(b.lo())),
                  listOf(ordinal.bound(b.hi())),
                  b.lo(),
                  b.hi(),
                  ordinal.boundJson(b.lo()),
                  ordinal.boundJson(b.hi())));
        }
      }
    } else {
      Bucket whole = buckets.get(0);
      long rows = whole.largerRows();
      int tiles =
          (int) Math.max(1, Math.min(100_000, (rows + spec.bucketRows() - 1) / spec.bucketRows()));
      List<List<Object>> cuts =
          tiles == 1
              ? List.of()
              : client.keyTiles(
                  spec.sourceSchema(), spec.sourceTable(), spec.keys(), tiles, spec.isolation());
      List<Integer> all = new ArrayList<>();
      for (int i = 0; i <= cuts.size(); i++) {
        all.add(i);
      }
      Set<Integer> chosen =
          whole.status() == Bucket.Status.MISMATCH
              ? new HashSet<>(all)
              : whole.status() == Bucket.Status.MATCH
                  ? sample(all, spec.sample(), spec.seed())
                  : Set.of();
      for (int i : all) {
        if (chosen.contains(i)) {
          parts.add(
              Part.of(
                  0,
                  i == 0 ? null : cuts.get(i - 1),
                  i == cuts.size() ? null : cuts.get(i),
                  null,
                  null,
                  null,
                  null));
        }
      }
      if (!parts.isEmpty()) {
        hashed.add(0);
      }
    }
    List<List<Part>> groups = new ArrayList<>();
    List<Part> group = new ArrayList<>();
    long groupRows = 0;
    for (Part p : parts) {
      long rows = ordinal != null ? buckets.get(p.bucket()).largerRows() : spec.bucketRows();
      if (!group.isEmpty() && groupRows + rows > GROUP_ROWS) {
        groups.add(group);
        group = new ArrayList<>();
        groupRows = 0;
      }
      group.add(p);
      groupRows += rows;
    }
    if (!group.isEmpty()) {
      groups.add(group);
    }
    List<ChunkChecks.Failure> chunkFailures =
        spec.facts() == null ? List.of() : ChunkChecks.read(tables, spec.facts(), spec.bronze());
    return new ReconcilePlan(
        new ReconcileReport.Run(
            runId, runAt, spec.silver(), version, appliedLsn, m == null ? null : m.toString()),
        columns,
        types,
        keyTypes,
        ordinal,
        buckets,
        hashed,
        groups,
        chunkFailures,
        (System.nanoTime() - started) / 1e9);
  }

  /** The seeded sample: {@code ceil(sample × n)} of the indexes, chosen by a shuffle. */
  static Set<Integer> sample(List<Integer> indexes, double sample, long seed) {
    int n = (int) Math.ceil(sample * indexes.size() - 1e-9);
    List<Integer> shuffled = new ArrayList<>(indexes);
    Collections.shuffle(shuffled, new Random(seed));
    return new HashSet<>(shuffled.subList(0, Math.min(n, shuffled.size())));
  }

  private static @Nullable List<Object> listOf(@Nullable Object value) {
    return value == null ? null : List.of(value);
  }

  /** The fine width from the source's key range (silver's when the source is empty). */
  private long width(CdcClient client, ReconcileSpec spec, KeyOrdinal ordinal, long version) {
    Optional<List<Object>> range =
        client.keyRange(
            spec.sourceSchema(), spec.sourceTable(), spec.keys().get(0), spec.isolation());
    if (range.isPresent()) {
      return KeyBuckets.width(
          ordinal.ordinal(range.get().get(0)), ordinal.ordinal(range.get().get(1)));
    }
    long[] minMax = {Long.MAX_VALUE, Long.MIN_VALUE};
    tables
        .deletionVectors()
        .scanLiveRows(
            spec.silver(),
            version,
            List.of(spec.keys().get(0)),
            (f, p, v) -> {
              if (v[0] != null) {
                long o = ordinal.ordinal(v[0]);
                minMax[0] = Math.min(minMax[0], o);
                minMax[1] = Math.max(minMax[1], o);
              }
            });
    return minMax[0] > minMax[1] ? 1 : KeyBuckets.width(minMax[0], minMax[1]);
  }

  /**
   * The outcome of comparing one group.
   *
   * @param diffs the keys that differ (not yet classified as in flight)
   * @param sourceRows source rows read
   * @param silverRows silver rows compared
   */
  public record Compared(List<KeyDiff> diffs, long sourceRows, long silverRows) {}

  /**
   * Tier 2 for one group of key ranges: the source's rows of each range (cast to silver's types as
   * bronze stores them) are digested by key, then silver's rows at the pinned version (files
   * skipped by the key's statistics for ranges of an ordinal) are matched against them. A key only
   * in the source is MISSING_TARGET, only in silver MISSING_SOURCE (ranges of an ordinal only:
   * otherwise silver is joined from the source's keys), in both with another hash RECORD_DIFF
   * naming the columns.
   *
   * @param client the source
   * @param spec the reconcile
   * @param plan the plan
   * @param group the ranges, in key order
   * @return the differences and the rows read
   */
  public Compared compare(
      CdcClient client, ReconcileSpec spec, ReconcilePlan plan, List<Part> group) {
    List<String> columns = plan.columns();
    int[] keyAt = new int[spec.keys().size()];
    for (int k = 0; k < keyAt.length; k++) {
      keyAt[k] = columns.indexOf(ReconcileSpec.find(columns, spec.keys().get(k)));
      if (keyAt[k] < 0) {
        throw new IllegalArgumentException(
            "Key column " + spec.keys().get(k) + " is computed; reconcile needs a captured key");
      }
    }
    record Source(RowHash.Digest digest, int part) {}
    Map<String, Source> source = new HashMap<>();
    long sourceRows = 0;
    List<Object> values = new ArrayList<>(columns.size());
    List<Object> key = new ArrayList<>(keyAt.length);
    for (int p = 0; p < group.size(); p++) {
      Part part = group.get(p);
      try (CloseableIterator<List<Object>> rows =
          client.readTable(
              new TableQuery(
                  spec.sourceSchema(),
                  spec.sourceTable(),
                  columns,
                  spec.keys(),
                  Optional.ofNullable(part.lo()),
                  Optional.ofNullable(part.hi()),
                  spec.isolation()))) {
        while (rows.hasNext()) {
          List<Object> row = rows.next();
          values.clear();
          for (int i = 0; i < columns.size(); i++) {
            values.add(ValueConverter.toBeamValue(row.get(i), plan.types().get(i), columns.get(i)));
          }
          source.put(keyJson(spec, keyAt, values, key), new Source(RowHash.of(values), p));
          sourceRows++;
        }
      }
    }
    List<KeyDiff> diffs = new ArrayList<>();
    long silverRows = 0;
    KeyOrdinal ordinal = plan.ordinal();
    List<String> read = new ArrayList<>(columns);
    read.add(SilverTable.START_LSN);
    Predicate filter = ordinal == null ? null : keyFilter(spec.keys().get(0), ordinal, group);
    try (io.delta.kernel.utils.CloseableIterator<Map<String, Object>> rows =
        tables.scanAtVersion(spec.silver(), plan.run().silverVersion(), filter)) {
      while (rows.hasNext()) {
        Map<String, Object> row = rows.next();
        values.clear();
        for (String c : columns) {
          values.add(row.get(c));
        }
        int p;
        String k = keyJson(spec, keyAt, values, key);
        Source s;
        if (ordinal != null) {
          Object v = values.get(keyAt[0]);
          p = v == null ? -1 : partOf(group, ordinal.ordinal(v));
          if (p < 0) {
            continue;
          }
          s = source.remove(k);
        } else {
          s = source.remove(k);
          if (s == null) {
            continue;
          }
          p = s.part();
        }
        silverRows++;
        Part part = group.get(p);
        String lsn = (String) row.get(SilverTable.START_LSN);
        if (s == null) {
          diffs.add(
              new KeyDiff(
                  k, ReconcileReport.MISSING_SOURCE, List.of(), lsn, part.loJson(), part.hiJson()));
          continue;
        }
        RowHash.Digest d = RowHash.of(values);
        if (!d.matches(s.digest())) {
          diffs.add(
              new KeyDiff(
                  k,
                  ReconcileReport.RECORD_DIFF,
                  d.differingColumns(columns, s.digest()),
                  lsn,
                  part.loJson(),
                  part.hiJson()));
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot read Delta table " + spec.silver(), e);
    }
    for (Map.Entry<String, Source> missing : source.entrySet()) {
      Part part = group.get(missing.getValue().part());
      diffs.add(
          new KeyDiff(
              missing.getKey(),
              ReconcileReport.MISSING_TARGET,
              List.of(),
              null,
              part.loJson(),
              part.hiJson()));
    }
    diffs.sort(java.util.Comparator.comparing(KeyDiff::key));
    return new Compared(diffs, sourceRows, silverRows);
  }

  private static String keyJson(
      ReconcileSpec spec, int[] keyAt, List<Object> values, List<Object> key) {
    key.clear();
    for (int i : keyAt) {
      key.add(values.get(i));
    }
    return KeyJson.of(spec.keys(), key);
  }

  /** The index of the part whose ordinals hold {@code ordinal}, or -1. */
  private static int partOf(List<Part> group, long ordinal) {
    int lo = 0;
    int hi = group.size() - 1;
    while (lo <= hi) {
      int mid = (lo + hi) >>> 1;
      Part p = group.get(mid);
      if (ordinal < p.loOrdinal()) {
        hi = mid - 1;
      } else if (ordinal >= p.hiOrdinal()) {
        lo = mid + 1;
      } else {
        return mid;
      }
    }
    return -1;
  }

  /** Kernel's file-skipping filter {@code key >= first lo AND key < last hi} of a group. */
  private static @Nullable Predicate keyFilter(String key, KeyOrdinal ordinal, List<Part> group) {
    Object lo = ordinal.bound(group.get(0).loOrdinal());
    Object hi = ordinal.bound(group.get(group.size() - 1).hiOrdinal());
    Predicate low = lo == null ? null : new Predicate(">=", new Column(key), literal(lo));
    Predicate high = hi == null ? null : new Predicate("<", new Column(key), literal(hi));
    if (low == null) {
      return high;
    }
    return high == null ? low : new Predicate("AND", low, high);
  }

  private static Literal literal(Object value) {
    if (value instanceof Short s) {
      return Literal.ofShort(s);
    }
    if (value instanceof Integer i) {
      return Literal.ofInt(i);
    }
    if (value instanceof Long l) {
      return Literal.ofLong(l);
    }
    return Literal.ofDate((int) ((LocalDate) value).toEpochDay());
  }

  /**
   * The end of a run: the keys in flight read again (after every source read), each difference on
   * one of them made IN_FLIGHT, and the report's rows appended in one commit.
   *
   * @param client the source
   * @param spec the reconcile
   * @param plan the plan
   * @param diffs every group's differences
   * @return the rows written (bucket rows, then key rows in key order, then chunk rows)
   */
  public List<Row> finish(
      CdcClient client, ReconcileSpec spec, ReconcilePlan plan, List<KeyDiff> diffs) {
    InFlight.Keys moved =
        InFlight.read(
            client,
            tables,
            spec,
            plan.keyTypes(),
            plan.run().silverLsn() == null ? null : Lsn.parse(plan.run().silverLsn()),
            plan.run().sourceLsn() == null ? null : Lsn.parse(plan.run().sourceLsn()));
    List<Row> rows = new ArrayList<>();
    for (Bucket b : plan.buckets()) {
      rows.add(
          ReconcileReport.bucketRow(
              plan.run(), b, plan.ordinal(), plan.hashed().contains(b.index())));
    }
    List<KeyDiff> sorted = new ArrayList<>(diffs);
    sorted.sort(java.util.Comparator.comparing(KeyDiff::key));
    for (KeyDiff d : sorted) {
      rows.add(
          ReconcileReport.keyRow(plan.run(), moved.keys().contains(d.key()) ? d.inFlight() : d));
    }
    for (ChunkChecks.Failure f : plan.chunkFailures()) {
      rows.add(ReconcileReport.chunkRow(plan.run(), f));
    }
    ReconcileReport.append(tables, spec.report(), plan.run().runId(), rows);
    return rows;
  }
}
