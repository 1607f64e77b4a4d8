package org.lakecdc.transforms.history;

import io.delta.kernel.expressions.Column;
import io.delta.kernel.expressions.Literal;
import io.delta.kernel.expressions.Predicate;
import io.delta.kernel.utils.CloseableIterator;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.time.Clock;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import org.apache.beam.sdk.schemas.Schema;
import org.apache.beam.sdk.values.Row;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.io.mssqlcdc.schema.MetadataColumns;
import org.lakecdc.transforms.Counts;
import org.lakecdc.transforms.delta.CommitResult;
import org.lakecdc.transforms.delta.DataFileAction;
import org.lakecdc.transforms.delta.DeltaColumn;
import org.lakecdc.transforms.delta.DeltaConflictException;
import org.lakecdc.transforms.delta.DeltaTables;
import org.lakecdc.transforms.delta.TablePaths;
import org.lakecdc.transforms.facts.FactsTable;
import org.lakecdc.transforms.finalization.ControlTable;
import org.lakecdc.transforms.finalization.Finalization;
import org.lakecdc.transforms.silver.BronzeWaves;
import org.lakecdc.transforms.silver.DerivedApply;
import org.lakecdc.transforms.silver.KeyIndex;
import org.lakecdc.transforms.silver.LatestImage;
import org.lakecdc.transforms.silver.SilverTable;
import org.lakecdc.transforms.snapshot.ChunkedSnapshotFacts;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One apply of bronze to a history table (docs/tables.md "History"): reads bronze since the
 * history's position in waves of at most {@link HistorySpec#waveRows()} rows, as silver does, and
 * turns every change into versions.
 *
 * <p>Per key, the wave's changes are taken in bronze's order ({@code _start_lsn}, {@code
 * _command_id}, {@code _seqval}, {@code _operation}): an insert or update (2, 4) closes the key's
 * current version at the change's {@code _start_lsn} and {@code _commit_ts} and opens one with the
 * new image from there; a delete (1), or an update's before-image (3) no after-image of the same
 * command follows for the key (the update moved the row to another key), closes it with {@code
 * _deleted = true}; the 3 of an update keeping its key is skipped. With tracked columns, a 2 or 4
 * that leaves every tracked column of the current version as it was rewrites the current version
 * with the new image, keeping its {@code _valid_from_*}. A change at or before the current
 * version's {@code _valid_from_lsn} is skipped.
 *
 * <p>A wave is one Delta commit: the current versions of the changed keys get deletion vectors, the
 * closed versions go to one new Parquet file and the new current versions to another, each sorted
 * by key, the position (domain {@value HistoryPosition#DOMAIN}, transaction {@value
 * HistoryPosition#APP_ID} with the wave number) is in the same commit, so a crash before it leaves
 * nothing and the rerun writes the same table. Cost: the wave's keys and a decode of the files
 * holding their current versions (waves and snapshots write no closed version into those files, so
 * they hold current versions and the deleted rows of ones closed since), of which only the located
 * rows are converted; not the history's closed versions.
 *
 * <p>Snapshots: the first apply with a bootstrap snapshot S writes each snapshot row as a version
 * from S (one commit, streamed); a newer snapshot (a re-snapshot) is compared with the current
 * versions in hash partitions of at most {@code waveRows} snapshot rows, and every current version
 * whose key is gone ({@code _deleted = true}) or whose image differs is closed at S with {@code
 * _lost_from_lsn} = the position before the gap, the snapshot's image opened from S; all in one
 * commit. An open chunked snapshot (a {@code snapshot_open} facts row newer than every completed
 * one) holds the history where it is (nothing applied, the verdict kept) until it completes; a
 * newer snapshot that is not after the position is not applied (a warning). The verdict follows
 * bronze's, only with facts.
 */
public final class HistoryApplier {
  private static final Logger LOG = LoggerFactory.getLogger(HistoryApplier.class);

  private final DeltaTables tables;
  private final Clock clock;
  private final HistoryStore store;
  private final Consumer<String> lines;
  private final Map<String, Finalization> finalizations = new ConcurrentHashMap<>();

  /** Test hook points: after bronze is pinned, after each commit. */
  private volatile DerivedApply.Hook hook = point -> {};

  /**
   * @param tables the Delta access
   * @param clock the clock of the control table's {@code updated_at}
   */
  public HistoryApplier(DeltaTables tables, Clock clock) {
    this(tables, clock, line -> {});
  }

  /**
   * With a sink receiving each line printed for a wave or a snapshot.
   *
   * @param tables the Delta access
   * @param clock the clock of the control table's {@code updated_at}
   * @param lines receives the lines
   */
  public HistoryApplier(DeltaTables tables, Clock clock, Consumer<String> lines) {
    this(tables, clock, lines, org.lakecdc.transforms.silver.SilverMerge.DEFAULT_MAX_INDEX_KEYS);
  }

  /** With a cap of {@code maxIndexKeys} current versions in the key index (tests). */
  HistoryApplier(DeltaTables tables, Clock clock, Consumer<String> lines, int maxIndexKeys) {
    this.tables = Objects.requireNonNull(tables, "tables");
    this.clock = Objects.requireNonNull(clock, "clock");
    this.store = new HistoryStore(tables, maxIndexKeys);
    this.lines = lines;
  }

  /** How many scans found a wave's current versions (the index was stale, absent or capped). */
  long keyScans() {
    return store.keyScans();
  }

  void hook(DerivedApply.Hook hook) {
    this.hook = hook;
  }

  void beforeWaveCommit(Runnable hook) {
    store.beforeCommit(hook);
  }

  /**
   * Applies bronze's new rows to the history table; idempotent, safe after a crash at any step.
   *
   * @param spec the tables, keys, tracked columns and capture instances
   * @return the outcome
   * @throws IllegalArgumentException when a key or a tracked column is not a captured column of
   *     bronze ({@code historyColumns [x] are not captured columns of bronze <path>; captured:
   *     [..]}), or a bronze row is of another capture instance
   * @throws DeltaConflictException when history commits kept losing to other writers
   */
  public HistoryResult apply(HistorySpec spec) {
    return DerivedApply.retrying(
        "History", spec.history(), () -> applyOnce(spec), () -> store.forget(spec.history()));
  }

  private HistoryResult applyOnce(HistorySpec spec) {
    DerivedApply.Start start =
        DerivedApply.start(
            finalizations, tables, clock, spec.control(), spec.bronze(), spec.history());
    Finalization finalization = start.finalization();
    LocalDateTime storedVerdict = start.storedVerdict();
    if (!tables.exists(spec.bronze())) {
      LOG.warn(
          "Bronze table {} does not exist; history {} is left as it is",
          spec.bronze(),
          spec.history());
      return new HistoryResult(
          false,
          HistoryPosition.read(tables, spec.history())
              .map(HistoryPosition::appliedLsn)
              .orElse(null),
          storedVerdict,
          0,
          0,
          0,
          0,
          tables.exists(spec.history()) ? tables.version(spec.history()) : -1);
    }
    LocalDateTime[] factsSTime = new LocalDateTime[1];
    String[] facts = spec.facts() == null ? new String[2] : snapshotFacts(spec, factsSTime);
    long bronzeVersion = tables.version(spec.bronze());
    hook.at("pinned");
    Schema bronzeSchema = DeltaColumn.toBeamSchema(tables.describe(spec.bronze()).columns());
    List<String> captured = SilverTable.capturedColumns(bronzeSchema);
    List<String> keys = resolve(spec, "keys", spec.keys(), captured);
    List<String> tracked = resolve(spec, "historyColumns", spec.historyColumns(), captured);
    boolean withCommandId = bronzeSchema.hasField(MetadataColumns.COMMAND_ID);
    BronzeWaves bronze =
        new BronzeWaves(
            tables, spec.bronze(), bronzeVersion, spec.captureInstances(), keys, withCommandId);
    Schema schema = ensureHistory(spec, bronzeSchema);
    Versions versions = new Versions(schema, keys, captured, tracked);

    HistoryPosition position =
        HistoryPosition.read(tables, spec.history()).orElse(HistoryPosition.NONE);
    String whole = bronze.snapshots(position.snapshotLsn()).whole();
    String snapshot = later(facts[0], whole);
    // S's commit time from its completion row: a chunked snapshot's rows carry their chunk's
    // stamp L's commit time, not S's (whole snapshots' rows carry S's).
    LocalDateTime sTime = snapshot != null && snapshot.equals(facts[0]) ? factsSTime[0] : null;
    boolean open = facts[1] != null && (snapshot == null || facts[1].compareTo(snapshot) > 0);
    boolean first = !open && position.appliedLsn() == null && snapshot != null;
    boolean newer =
        !open
            && position.appliedLsn() != null
            && snapshot != null
            && (position.snapshotLsn() == null || snapshot.compareTo(position.snapshotLsn()) > 0);
    boolean resnapshot = newer && snapshot.compareTo(position.appliedLsn()) > 0;
    if (newer && !resnapshot) {
      LOG.warn(
          "History {}: the snapshot at {} is not after its position {}; its rows are not applied",
          spec.history(),
          snapshot,
          position.appliedLsn());
    }
    String lower = first || resnapshot ? snapshot : position.appliedLsn();
    // While a chunked snapshot is open nothing is applied: its S is where the versions resume.
    BronzeWaves.Wave planned = open ? null : bronze.wave(lower, spec.waveRows());
    int waves = 0;
    long[] counts = new long[3]; // opened, closed, in place
    if (first || resnapshot) {
      HistoryPosition next = position.next(snapshot, snapshot);
      CommitResult result =
          first
              ? bootstrap(spec, bronze, versions, snapshot, sTime, next, counts)
              : resnapshot(spec, bronze, versions, snapshot, sTime, position, next, counts);
      position = committed(spec, result, next);
      waves++;
      hook.at("committed");
    }
    while (planned != null) {
      BronzeWaves.Plan plan = planned.plan();
      int partitions = DerivedApply.partitions(plan, spec.waveRows());
      for (int partition = 0; partition < partitions; partition++) {
        long[] read = {0};
        Map<List<Object>, List<Map<String, Object>>> changes;
        if (partitions == 1 && planned.changes() != null) {
          changes = planned.changes(); // read with the plan: bronze's wave is read once
          read[0] = plan.rows();
        } else {
          changes = bronze.changes(lower, plan.upper(), partition, partitions, read);
        }
        HistoryPosition next =
            position.next(
                partition == partitions - 1 ? plan.upper() : position.appliedLsn(),
                position.snapshotLsn());
        long[] waveCounts = new long[3];
        CommitResult result = wave(spec, versions, changes, next, waveCounts);
        position = committed(spec, result, next);
        for (int i = 0; i < 3; i++) {
          counts[i] += waveCounts[i];
        }
        waves++;
        info(
            "History %s: wave %d applied bronze %s up to %s: %s, %s (%,d versions opened, %,d"
                + " closed, %,d updated in place)",
            spec.history(),
            next.wave(),
            spec.bronze(),
            plan.upper(),
            Counts.of(read[0], "row", "rows"),
            Counts.of(changes.size(), "key", "keys"),
            waveCounts[0],
            waveCounts[1],
            waveCounts[2]);
        hook.at("committed");
      }
      lower = plan.upper();
      planned = bronze.wave(lower, spec.waveRows());
    }
    if (position.wave() > 0) {
      finalization.recordSilverPosition(
          spec.history(), position.appliedLsn(), position.snapshotLsn(), null, null);
    }
    LocalDateTime verdict =
        DerivedApply.verdict(
            start, spec.history(), spec.facts() != null && !open, spec.granularity());
    return new HistoryResult(
        true,
        position.appliedLsn(),
        verdict,
        waves,
        counts[0],
        counts[1],
        counts[2],
        tables.version(spec.history()));
  }

  /** The first apply with a snapshot: each snapshot row a version from S, streamed, one commit. */
  private CommitResult bootstrap(
      HistorySpec spec,
      BronzeWaves bronze,
      Versions versions,
      String snapshot,
      @Nullable LocalDateTime sTime,
      HistoryPosition next,
      long[] counts) {
    store.forget(spec.history());
    try (CloseableIterator<Map<String, Object>> rows = bronze.snapshotRows(snapshot)) {
      Iterable<Row> history =
          () ->
              rows.map(
                  row -> {
                    counts[0]++;
                    return versions.row(
                        versions.open(row, snapshot, sTime != null ? sTime : ts(row)));
                  });
      CommitResult result =
          tables.rewrite(
              spec.history(),
              tables.version(spec.history()),
              versions.schema,
              history,
              HistoryPosition.APP_ID,
              next.wave(),
              next.domainMetadata());
      info(
          "History %s: opened %s from the snapshot at %s of bronze %s",
          spec.history(), Counts.of(counts[0], "version", "versions"), snapshot, spec.bronze());
      return result;
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot read Delta table " + spec.bronze(), e);
    }
  }

  /**
   * A newer snapshot: per hash partition of the keys (at most about {@code waveRows} snapshot rows
   * each), the snapshot's rows against the current versions; one commit.
   */
  private CommitResult resnapshot(
      HistorySpec spec,
      BronzeWaves bronze,
      Versions versions,
      String snapshot,
      @Nullable LocalDateTime sTime,
      HistoryPosition before,
      HistoryPosition next,
      long[] counts) {
    long total = 0;
    LocalDateTime sTs = sTime;
    try (CloseableIterator<Map<String, Object>> rows = bronze.snapshotRows(snapshot)) {
      while (rows.hasNext()) {
        Map<String, Object> row = rows.next();
        total++;
        if (sTs == null) {
          sTs = ts(row);
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot read Delta table " + spec.bronze(), e);
    }
    if (sTs == null) {
      sTs = commitTimeOf(spec, snapshot);
    }
    int partitions = (int) Math.max(1, (total + spec.waveRows() - 1) / spec.waveRows());
    String history = spec.history();
    long version = tables.version(history);
    Map<String, List<Long>> deletions = new HashMap<>();
    List<DataFileAction> written = new ArrayList<>();
    List<String> names = versions.schema.getFieldNames();
    for (int partition = 0; partition < partitions; partition++) {
      int p = partition;
      Map<Object, Map<String, Object>> image = new HashMap<>();
      try (CloseableIterator<Map<String, Object>> rows = bronze.snapshotRows(snapshot)) {
        while (rows.hasNext()) {
          Map<String, Object> row = rows.next();
          List<Object> key = bronze.key(row);
          if (Math.floorMod(key.hashCode(), partitions) == p) {
            image.put(versions.encode(key), versions.open(row, snapshot, sTs));
          }
        }
      } catch (IOException e) {
        throw new UncheckedIOException("Cannot read Delta table " + spec.bronze(), e);
      }
      List<Map.Entry<Object, Map<String, Object>>> out = new ArrayList<>();
      LocalDateTime closeTs = sTs;
      tables
          .deletionVectors()
          .scanLiveRows(
              history,
              version,
              names,
              (file, position, values) -> {
                if (values[names.indexOf(HistoryTable.VALID_TO_LSN)] != null) {
                  return;
                }
                Map<String, Object> current = new LinkedHashMap<>();
                for (int i = 0; i < names.size(); i++) {
                  current.put(names.get(i), values[i]);
                }
                List<Object> key = bronze.key(current);
                if (Math.floorMod(key.hashCode(), partitions) != p) {
                  return;
                }
                Object encoded = versions.encode(key);
                Map<String, Object> now = image.remove(encoded);
                if (now != null && versions.sameImage(current, now, versions.captured)) {
                  return;
                }
                deletions.computeIfAbsent(file, f -> new ArrayList<>()).add(position);
                current.put(HistoryTable.VALID_TO_LSN, snapshot);
                current.put(HistoryTable.VALID_TO_TS, closeTs);
                current.put(HistoryTable.DELETED, now == null);
                current.put(HistoryTable.LOST_FROM_LSN, before.appliedLsn());
                out.add(Map.entry(encoded, current));
                counts[1]++;
                if (now != null) {
                  out.add(Map.entry(encoded, now));
                  counts[0]++;
                }
              });
      for (Map.Entry<Object, Map<String, Object>> entry : image.entrySet()) {
        out.add(entry);
        counts[0]++;
      }
      out.sort((a, b) -> KeyIndex.ORDER.compare(a.getKey(), b.getKey()));
      // Closed versions and current ones go to files apart, as a wave writes them.
      for (boolean current : new boolean[] {false, true}) {
        List<Map.Entry<Object, Map<String, Object>>> part =
            out.stream().filter(e -> isCurrent(e.getValue()) == current).toList();
        if (!part.isEmpty()) {
          written.addAll(
              tables.writeDataFiles(
                  history,
                  versions.schema,
                  () -> part.stream().map(e -> versions.row(e.getValue())).iterator()));
        }
      }
    }
    store.forget(history);
    CommitResult result =
        store.commit(
            history,
            version,
            versions.schema,
            deletions,
            List.of(),
            written,
            HistoryPosition.APP_ID,
            next.wave(),
            next.domainMetadata());
    info(
        "History %s: the snapshot at %s of bronze %s closed %s and opened %s; changes between %s"
            + " and it were lost",
        history,
        snapshot,
        spec.bronze(),
        Counts.of(counts[1], "version", "versions"),
        Counts.of(counts[0], "version", "versions"),
        before.appliedLsn());
    return result;
  }

  /** One wave of changes: one commit. */
  private CommitResult wave(
      HistorySpec spec,
      Versions versions,
      Map<List<Object>, List<Map<String, Object>>> changes,
      HistoryPosition next,
      long[] counts) {
    String history = spec.history();
    long version = tables.version(history);
    Map<Object, List<Map<String, Object>>> byKey = new HashMap<>();
    for (Map.Entry<List<Object>, List<Map<String, Object>>> entry : changes.entrySet()) {
      byKey.put(versions.encode(entry.getKey()), entry.getValue());
    }
    KeyIndex[] index = new KeyIndex[1];
    Map<Object, KeyIndex.Location> locations =
        store.locate(history, version, versions.keys, byKey.keySet(), index);
    Map<Object, Map<String, Object>> currents =
        store.read(history, version, versions.schema, index[0], locations);
    Map<String, List<Long>> deletions = new HashMap<>();
    List<HistoryStore.Written> out = new ArrayList<>();
    List<Object> sortedKeys = new ArrayList<>(byKey.keySet());
    sortedKeys.sort(KeyIndex.ORDER);
    for (Object key : sortedKeys) {
      Map<String, Object> current = currents.get(key);
      boolean fromTable = current != null;
      String floor = fromTable ? (String) current.get(HistoryTable.VALID_FROM_LSN) : null;
      boolean changed = false;
      List<Map<String, Object>> rows = byKey.get(key);
      List<Map<String, Object>> closed = new ArrayList<>();
      for (int i = 0; i < rows.size(); i++) {
        Map<String, Object> row = rows.get(i);
        String lsn = (String) row.get(MetadataColumns.START_LSN);
        if (floor != null && lsn.compareTo(floor) <= 0) {
          continue; // already in the version the table holds
        }
        int operation = BronzeWaves.operation(row);
        if (operation == MetadataColumns.OP_UPDATE_BEFORE
            && i + 1 < rows.size()
            && sameChange(row, rows.get(i + 1))) {
          continue;
        }
        if (LatestImage.deletes(operation)) {
          if (current != null) {
            closed.add(versions.close(current, lsn, ts(row), true));
            counts[1]++;
            current = null;
            changed = true;
          }
          continue;
        }
        Map<String, Object> opened = versions.open(row, lsn, ts(row));
        if (current != null
            && !versions.tracked.isEmpty()
            && versions.sameImage(current, opened, versions.tracked)) {
          for (String column : versions.captured) {
            current.put(column, opened.get(column));
          }
          counts[2]++;
          changed = true;
          continue;
        }
        if (current != null) {
          closed.add(versions.close(current, lsn, ts(row), false));
          counts[1]++;
        }
        current = opened;
        counts[0]++;
        changed = true;
      }
      if (!changed) {
        continue;
      }
      if (fromTable) {
        KeyIndex.Location location = locations.get(key);
        deletions
            .computeIfAbsent(index[0].file(location.file()), f -> new ArrayList<>())
            .add(location.position());
      }
      for (Map<String, Object> row : closed) {
        out.add(new HistoryStore.Written(key, versions.row(row), false, null));
      }
      if (current != null) {
        out.add(
            new HistoryStore.Written(
                key,
                versions.row(current),
                true,
                (String) current.get(HistoryTable.VALID_FROM_LSN)));
      }
    }
    return store.commit(
        history,
        version,
        versions.schema,
        deletions,
        out,
        List.of(),
        HistoryPosition.APP_ID,
        next.wave(),
        next.domainMetadata());
  }

  /** Whether two bronze rows are one command's (an update's 3 and 4 of one key). */
  private static boolean sameChange(Map<String, Object> before, Map<String, Object> after) {
    return BronzeWaves.operation(after) == MetadataColumns.OP_UPDATE_AFTER
        && Objects.equals(
            before.get(MetadataColumns.START_LSN), after.get(MetadataColumns.START_LSN))
        && Objects.equals(before.get(MetadataColumns.SEQVAL), after.get(MetadataColumns.SEQVAL))
        && Objects.equals(
            before.get(MetadataColumns.COMMAND_ID), after.get(MetadataColumns.COMMAND_ID));
  }

  private static boolean isCurrent(Map<String, Object> row) {
    return row.get(HistoryTable.VALID_TO_LSN) == null;
  }

  private HistoryPosition committed(HistorySpec spec, CommitResult result, HistoryPosition next) {
    if (result.committed()) {
      return next;
    }
    String stored = tables.domainMetadata(spec.history(), HistoryPosition.DOMAIN).orElse(null);
    if (next.toJson().equals(stored)) {
      return next;
    }
    throw new IllegalStateException(
        "History "
            + spec.history()
            + " already has wave "
            + next.wave()
            + " with another position ("
            + stored
            + "): another apply is writing this history table; run one apply per history table at"
            + " a time");
  }

  /** The newest completed snapshot's S and the newest chunked open S of bronze in the facts. */
  private String[] snapshotFacts(HistorySpec spec, LocalDateTime[] completedSTime) {
    String[] found = new String[2];
    if (!tables.exists(spec.facts())) {
      return found;
    }
    String bronze = normalized(spec.bronze());
    Predicate events =
        new Predicate(
            "OR",
            new Predicate(
                "OR",
                new Predicate(
                    "=",
                    new Column(FactsTable.EVENT),
                    Literal.ofString(FactsTable.EVENT_BOOTSTRAP)),
                new Predicate("=", new Column(FactsTable.EVENT), Literal.ofString("resnapshot"))),
            new Predicate(
                "=",
                new Column(FactsTable.EVENT),
                Literal.ofString(ChunkedSnapshotFacts.EVENT_SNAPSHOT_OPEN)));
    try (CloseableIterator<Map<String, Object>> rows =
        tables.scanAtVersion(spec.facts(), tables.version(spec.facts()), events)) {
      while (rows.hasNext()) {
        Map<String, Object> row = rows.next();
        if (!(row.get(FactsTable.TARGET) instanceof String target)
            || !bronze.equals(normalized(target))
            || !(row.get(FactsTable.MAX_LSN) instanceof String maxLsn)) {
          continue;
        }
        Object event = row.get(FactsTable.EVENT);
        if (ChunkedSnapshotFacts.EVENT_SNAPSHOT_OPEN.equals(event)) {
          found[1] = later(found[1], maxLsn);
        } else if (FactsTable.EVENT_BOOTSTRAP.equals(event) || "resnapshot".equals(event)) {
          if (found[0] == null || maxLsn.compareTo(found[0]) > 0) {
            Object at = row.get(FactsTable.END_COMMIT_TS);
            completedSTime[0] =
                at instanceof Instant instant
                    ? LocalDateTime.ofInstant(instant, ZoneOffset.UTC)
                    : (LocalDateTime) at;
          }
          found[0] = later(found[0], maxLsn);
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot read Delta table " + spec.facts(), e);
    }
    return found;
  }

  /** The commit time of an LSN bronze's control row ended at, when it is that LSN. */
  private @Nullable LocalDateTime commitTimeOf(HistorySpec spec, String lsn) {
    Row row = new Finalization(tables, spec.control(), clock).row(spec.bronze()).orElse(null);
    if (row != null && lsn.equals(row.getString(ControlTable.END_LSN))) {
      return row.getLogicalTypeValue(ControlTable.END_COMMIT_TS, LocalDateTime.class);
    }
    return null;
  }

  private static String normalized(String path) {
    try {
      return TablePaths.normalize(path);
    } catch (IllegalArgumentException e) {
      return path;
    }
  }

  private static List<String> resolve(
      HistorySpec spec, String option, List<String> given, List<String> captured) {
    Map<String, String> byLower = new HashMap<>();
    for (String column : captured) {
      byLower.put(column.toLowerCase(Locale.ROOT), column);
    }
    List<String> resolved = new ArrayList<>();
    List<String> missing = new ArrayList<>();
    for (String name : given) {
      String column = byLower.get(name.toLowerCase(Locale.ROOT));
      if (column == null) {
        missing.add(name);
      } else {
        resolved.add(column);
      }
    }
    if (!missing.isEmpty()) {
      throw new IllegalArgumentException(
          option
              + " "
              + missing
              + " are not captured columns of bronze "
              + spec.bronze()
              + "; captured: "
              + captured);
    }
    return resolved;
  }

  /** Creates the history table (or adds the captured columns bronze gained); its schema. */
  private Schema ensureHistory(HistorySpec spec, Schema bronzeSchema) {
    Schema wanted = HistoryTable.schema(bronzeSchema);
    tables.createIfAbsent(
        spec.history(),
        HistoryTable.definition(
            wanted, spec.bronze(), spec.captureInstances(), spec.historyColumns()));
    Set<String> have = new HashSet<>();
    for (DeltaColumn column : tables.describe(spec.history()).columns()) {
      have.add(column.name().toLowerCase(Locale.ROOT));
    }
    List<DeltaColumn> gained = new ArrayList<>();
    for (DeltaColumn column : DeltaColumn.fromBeamSchema(wanted)) {
      if (!have.contains(column.name().toLowerCase(Locale.ROOT))) {
        gained.add(new DeltaColumn(column.name(), column.type(), true, column.comment()));
      }
    }
    if (!gained.isEmpty()) {
      tables.addColumns(spec.history(), gained);
    }
    return DeltaColumn.toBeamSchema(tables.describe(spec.history()).columns());
  }

  private static @Nullable LocalDateTime ts(Map<String, Object> row) {
    Object value = row.get(MetadataColumns.COMMIT_TS);
    return value instanceof Instant instant
        ? LocalDateTime.ofInstant(instant, ZoneOffset.UTC)
        : (LocalDateTime) value;
  }

  private static @Nullable String later(@Nullable String a, @Nullable String b) {
    if (a == null) {
      return b;
    }
    return b == null || a.compareTo(b) >= 0 ? a : b;
  }

  private void info(String format, Object... args) {
    String line = String.format(Locale.ROOT, format, args);
    LOG.info(line);
    lines.accept(line);
  }

  /** The history's columns and how versions are made from bronze rows. */
  private static final class Versions {
    final Schema schema;
    final List<String> keys;
    final List<String> captured;
    final List<String> tracked;

    Versions(Schema schema, List<String> keys, List<String> captured, List<String> tracked) {
      this.schema = schema;
      this.keys = keys;
      this.captured = captured;
      this.tracked = tracked;
    }

    Object encode(List<Object> key) {
      Object[] values = new Object[key.size()];
      for (int i = 0; i < values.length; i++) {
        Object value = key.get(i);
        values[i] = value instanceof java.nio.ByteBuffer buffer ? bytes(buffer) : value;
      }
      return KeyIndex.key(values, values.length);
    }

    /** A version opened by a bronze row at this LSN and time (current, not deleted). */
    Map<String, Object> open(
        Map<String, Object> bronzeRow, String lsn, @Nullable LocalDateTime ts) {
      Map<String, Object> row = new LinkedHashMap<>();
      for (Schema.Field field : schema.getFields()) {
        row.put(field.getName(), null);
      }
      for (String column : captured) {
        row.put(column, value(bronzeRow, column));
      }
      row.put(HistoryTable.VALID_FROM_LSN, lsn);
      row.put(HistoryTable.VALID_FROM_TS, ts);
      row.put(HistoryTable.DELETED, false);
      row.put(HistoryTable.COMMAND_ID, number(bronzeRow.get(MetadataColumns.COMMAND_ID)));
      row.put(HistoryTable.SEQVAL, bronzeRow.get(MetadataColumns.SEQVAL));
      row.put(HistoryTable.OPERATION, number(bronzeRow.get(MetadataColumns.OPERATION)));
      return row;
    }

    Map<String, Object> close(
        Map<String, Object> current, String lsn, @Nullable LocalDateTime ts, boolean deleted) {
      Map<String, Object> row = new LinkedHashMap<>(current);
      row.put(HistoryTable.VALID_TO_LSN, lsn);
      row.put(HistoryTable.VALID_TO_TS, ts);
      row.put(HistoryTable.DELETED, deleted);
      return row;
    }

    boolean sameImage(Map<String, Object> a, Map<String, Object> b, List<String> columns) {
      for (String column : columns) {
        if (!same(a.get(column), b.get(column))) {
          return false;
        }
      }
      return true;
    }

    Row row(Map<String, Object> values) {
      List<Object> list = new ArrayList<>(schema.getFieldCount());
      for (Schema.Field field : schema.getFields()) {
        Object value = values.get(field.getName());
        list.add(
            value instanceof Instant instant
                ? LocalDateTime.ofInstant(instant, ZoneOffset.UTC)
                : value);
      }
      // The values are the table's Java types already (bronze's and the store's reads give them),
      // so they are attached as they are: Beam's build() re-checks each one (a twentieth of a
      // wave's time when it reads 10,000 closed versions).
      return Row.withSchema(schema).attachValues(list);
    }

    private static @Nullable Object value(Map<String, Object> row, String name) {
      Object value = row.get(name);
      if (value == null && !row.containsKey(name)) {
        for (Map.Entry<String, Object> entry : row.entrySet()) {
          if (entry.getKey().equalsIgnoreCase(name)) {
            return entry.getValue();
          }
        }
      }
      return value;
    }

    private static @Nullable Integer number(@Nullable Object value) {
      return value == null ? null : ((Number) value).intValue();
    }

    private static byte[] bytes(java.nio.ByteBuffer buffer) {
      byte[] bytes = new byte[buffer.remaining()];
      buffer.duplicate().get(bytes);
      return bytes;
    }

    private static boolean same(@Nullable Object a, @Nullable Object b) {
      if (a instanceof byte[] x && b instanceof byte[] y) {
        return Arrays.equals(x, y);
      }
      if (a instanceof BigDecimal x && b instanceof BigDecimal y) {
        return x.compareTo(y) == 0;
      }
      if (a instanceof Instant x && b instanceof LocalDateTime y) {
        return LocalDateTime.ofInstant(x, ZoneOffset.UTC).equals(y);
      }
      if (a instanceof LocalDateTime x && b instanceof Instant y) {
        return x.equals(LocalDateTime.ofInstant(y, ZoneOffset.UTC));
      }
      return Objects.equals(a, b);
    }
  }
}
