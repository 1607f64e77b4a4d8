package org.lakecdc.transforms.silver;

import io.delta.kernel.expressions.Column;
import io.delta.kernel.expressions.Literal;
import io.delta.kernel.expressions.Predicate;
import io.delta.kernel.utils.CloseableIterator;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Clock;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import org.apache.beam.sdk.schemas.Schema;
import org.apache.beam.sdk.values.Row;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.lakecdc.io.mssqlcdc.schema.MetadataColumns;
import org.lakecdc.io.mssqlcdc.schema.OutputType;
import org.lakecdc.transforms.Counts;
import org.lakecdc.transforms.delta.CommitResult;
import org.lakecdc.transforms.delta.DeltaColumn;
import org.lakecdc.transforms.delta.DeltaConflictException;
import org.lakecdc.transforms.delta.DeltaTables;
import org.lakecdc.transforms.delta.TablePaths;
import org.lakecdc.transforms.facts.FactsTable;
import org.lakecdc.transforms.finalization.ControlTable;
import org.lakecdc.transforms.finalization.Finalization;
import org.lakecdc.transforms.snapshot.ChunkedSnapshotFacts;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One call of {@code apply_changes} (docs/behaviour.md §10.2): reads bronze since silver's position
 * in waves of at most {@link SilverSpec#waveRows()} rows, ranks the latest image per key ({@link
 * LatestImage}), merges each wave through {@link SilverMerge}, records the position ({@link
 * SilverPosition} in silver's domain metadata, atomically with the wave; then silver's control
 * row), and advances silver's verdict to bronze's (never ahead).
 *
 * <p>Chunked snapshots (docs/behaviour.md §10.2 steps 4, 7, 8, 11, 14–16; §10.4): with facts, the
 * newest chunked {@code snapshot_open} row for bronze (whatever stream family wrote it; its plan
 * and chunks through {@link ChunkedSnapshotFacts#read}) is open while it is newer than every
 * completed snapshot. While open, after the changes, each complete wave ({@link
 * ChunkedSnapshotFacts.State#lastCompleteWave}) after silver's {@code snapshot_wave} of that S is
 * merged in a commit of its own: the wave's chunk rows ({@code _operation = 0}, {@code _snapshot =
 * S}, {@code _chunk} in the wave; file skipping on {@code _chunk} and {@code _start_lsn}) ranked
 * with every change after S of their keys, so a chunk row stamped L never outranks a delete
 * committed after L; when silver's key is exactly the open row's one key column of an integer,
 * {@code DATE} or {@code TIMESTAMP_NTZ} type, each silver key inside a chunk's range that the wave
 * does not hold and whose image is older than the chunk's stamp L is deleted at L ({@link
 * OpenChunkedSnapshot#range}: BIGINT bounds, the microsecond rule). The position records {@code
 * open_snapshot_lsn = S} and the last wave applied; the verdict is held. At completion (a {@code
 * bootstrap}/{@code resnapshot} row with {@code max_lsn >= S}) silver is rebuilt from S: every
 * chunk's rows of S plus the changes after S, keys absent from both deleted, and {@code
 * open_snapshot_lsn}/{@code snapshot_wave} become NULL. Chunk rows in bronze without a facts table,
 * or without a chunked open row for bronze in it, fail the call.
 *
 * <p>Steps, in order: read bronze's control row ({@code end_lsn}, {@code end_commit_ts}) and
 * silver's; bronze missing: a warning, nothing written ({@code bronzeFound=false}); with facts, the
 * newest {@code bootstrap}/{@code resnapshot} fact of this bronze; pin bronze's latest version;
 * {@code whole} = the newest whole snapshot in bronze; {@code snapshot} = the later of both;
 * rebuild when nothing was applied yet or {@code snapshot} is after the snapshot silver was last
 * rebuilt from. A rebuild with a snapshot replaces silver's content with the snapshot's rows (one
 * commit), then merges the changes after it; without one (a first apply) it empties silver when it
 * has rows, then merges every change. Otherwise the changes after {@code applied_lsn} are merged.
 * Each wave is one silver commit carrying the position reached (app id {@value
 * SilverPosition#APP_ID}, version = wave number), so a crash at any point is recovered by the next
 * call: a row only takes an image newer than its own {@code _start_lsn}, so nothing is applied
 * twice or resurrected. When nothing is new, nothing is committed.
 *
 * <p>The verdict: only with a facts table (without one an open snapshot cannot be ruled out),
 * {@link Finalization#advance} of silver to bronze's verdict as read first, so silver never claims
 * more than the bronze version it read held.
 *
 * <p>One instance per worker: it holds a {@link SilverMerge} (and its key index); the warnings
 * given once are remembered for the JVM (a launcher's apply after its pipeline's says nothing
 * again). One apply per silver table at a time; a silver commit that loses to another writer
 * (maintenance) restarts the call, at most {@value DerivedApply#ATTEMPTS} times.
 */
public final class SilverApplier {
  private static final Logger LOG = LoggerFactory.getLogger(SilverApplier.class);

  static final String EVENT_RESNAPSHOT = "resnapshot";

  private final DeltaTables tables;
  private final Clock clock;
  private final SilverMerge merge;
  private final Consumer<String> warnings;
  private final Consumer<String> lines;
  private final SilverChunkWaves chunkWaves;

  /**
   * The warnings given in this JVM (by id: the warning's kind and its tables), shared by every
   * instance: a launcher's apply after a pipeline's apply in the same JVM repeats none.
   */
  private static final Set<String> WARNED_ONCE = ConcurrentHashMap.newKeySet();

  private final Map<String, Finalization> finalizations = new ConcurrentHashMap<>();

  /** Test hook points: after bronze is pinned, after a rebuild's commit, after each commit. */
  private volatile DerivedApply.Hook hook = point -> {};

  /**
   * @param tables the Delta access
   * @param clock the clock of the control table's {@code updated_at}
   */
  public SilverApplier(DeltaTables tables, Clock clock) {
    this(tables, clock, message -> {});
  }

  /** With a sink that receives every warning's text too (tests). */
  SilverApplier(DeltaTables tables, Clock clock, Consumer<String> warnings) {
    this(tables, clock, warnings, line -> {});
  }

  /**
   * With sinks that receive every warning's text and every line printed for a wave or a rebuild too
   * (tests).
   */
  SilverApplier(
      DeltaTables tables, Clock clock, Consumer<String> warnings, Consumer<String> lines) {
    this.tables = Objects.requireNonNull(tables, "tables");
    this.clock = Objects.requireNonNull(clock, "clock");
    this.merge = new SilverMerge(tables);
    this.warnings = warnings;
    this.lines = lines;
    this.chunkWaves = new SilverChunkWaves(tables, line -> info("%s", line));
  }

  /** Sets the test hook. */
  void hook(DerivedApply.Hook hook) {
    this.hook = hook;
  }

  /**
   * Sets the hook run in every merge wave after its files (Parquet, deletion vector file) are
   * written, just before its silver commit (crash tests; {@link SilverMerge#beforeCommit}).
   */
  void beforeWaveCommit(Runnable hook) {
    merge.beforeCommit(hook);
  }

  /**
   * Applies bronze's new rows to silver (docs/behaviour.md §10.2), see the class comment.
   * Idempotent; safe after a crash at any step.
   *
   * @param spec the tables, keys and capture instances
   * @return the outcome
   * @throws IllegalArgumentException when a key is not a captured column of bronze ({@code keys
   *     [..] are not captured columns of bronze <path>; captured: [..]}), a bronze row to apply is
   *     of a capture instance outside {@link SilverSpec#captureInstances()} ({@code ... capture
   *     instance '<name>' ... pass options ...}), bronze holds chunk rows but no facts table is
   *     given ({@code ... cannot apply without facts_table ...}) or the facts have no chunked
   *     {@code snapshot_open} row for bronze ({@code ... targets with one: [..] ...}), or a chunk's
   *     bound does not read as the key's type
   * @throws DeltaConflictException when silver commits kept losing to other writers
   */
  public ApplyResult apply(SilverSpec spec) {
    return DerivedApply.retrying("Silver", spec.silver(), () -> applyOnce(spec), () -> {});
  }

  private ApplyResult applyOnce(SilverSpec spec) {
    if (spec.facts() == null) {
      warnOnce(
          "facts:" + spec.silver(),
          "Silver "
              + spec.silver()
              + " is applied without facts_table: no snapshot event can be seen, so its verdict"
              + " is never advanced (pass the bronze stream's facts table)");
    }
    // Step 2: the verdict rows first; bronze commits rows before its verdict.
    DerivedApply.Start start =
        DerivedApply.start(
            finalizations, tables, clock, spec.control(), spec.bronze(), spec.silver());
    Finalization finalization = start.finalization();
    Row silverRow = start.derivedRow();
    LocalDateTime storedVerdict = start.storedVerdict();
    if (!tables.exists(spec.bronze())) {
      warn(
          "Bronze table "
              + spec.bronze()
              + " does not exist; silver "
              + spec.silver()
              + " is left as it is");
      return new ApplyResult(
          false,
          silverRow == null ? null : silverRow.getString(ControlTable.APPLIED_LSN),
          storedVerdict,
          false,
          0,
          0,
          0,
          tables.exists(spec.silver()) ? tables.version(spec.silver()) : -1);
    }
    String newest = spec.facts() == null ? null : newestSnapshotFact(spec);
    long bronzeVersion = tables.version(spec.bronze());
    hook.at("pinned");

    Schema bronzeSchema = DeltaColumn.toBeamSchema(tables.describe(spec.bronze()).columns());
    List<String> keys = resolveKeys(spec, bronzeSchema);
    boolean withCommandId = bronzeSchema.hasField(MetadataColumns.COMMAND_ID);
    if (!withCommandId) {
      warnOnce(
          "command_id:" + spec.bronze(),
          "Bronze table "
              + spec.bronze()
              + " has no "
              + MetadataColumns.COMMAND_ID
              + " column: changes of one transaction are ordered by _seqval only");
    }
    BronzeWaves bronze =
        new BronzeWaves(
            tables, spec.bronze(), bronzeVersion, spec.captureInstances(), keys, withCommandId);

    SilverPosition position =
        SilverPosition.read(tables, spec.silver()).orElse(SilverPosition.NONE);
    String applied = position.appliedLsn();
    String rebuiltFrom = position.snapshotLsn();
    BronzeWaves.Snapshots found = bronze.snapshots(rebuiltFrom);
    String whole = found.whole();
    // Steps 4 and 7: the newest chunked open of this bronze; chunk rows need one.
    ChunkedSnapshotFacts.State opened = chunkWaves.openedSnapshot(spec, found.chunkRows());
    String snapshot = later(newest, whole);
    // Step 8: a chunked open newer than every completed snapshot is open.
    String sOpen = opened == null ? null : opened.open().s().toString();
    boolean isOpen = sOpen != null && (snapshot == null || sOpen.compareTo(snapshot) > 0);
    boolean rebuild =
        (applied == null && position.openSnapshotLsn() == null)
            || (snapshot != null && (rebuiltFrom == null || snapshot.compareTo(rebuiltFrom) > 0));
    // Step 11: the waves of the open snapshot applied already.
    int after =
        !rebuild
                && isOpen
                && sOpen.equals(position.openSnapshotLsn())
                && position.snapshotWave() != null
            ? position.snapshotWave()
            : -1;
    position = position.withProgress(isOpen ? sOpen : null, isOpen && after >= 0 ? after : null);

    Schema silverSchema = ensureSilver(spec, bronzeSchema);
    Converter converter = new Converter(silverSchema, keys);
    int waves = 0;
    long rowsRead = 0;
    long keysApplied = 0;
    boolean merged = false;
    String lower = rebuild ? snapshot : applied;
    // The first wave is planned before anything is committed: a row of another capture instance
    // fails the call with silver untouched.
    BronzeWaves.Plan plan = bronze.plan(lower, spec.waveRows());
    if (rebuild && snapshot != null) {
      SilverPosition next = position.next(snapshot, snapshot);
      long[] count = {0};
      WaveResult result;
      try (CloseableIterator<Map<String, Object>> rows = bronze.snapshotRows(snapshot)) {
        Iterator<Row> silverRows =
            rows.map(
                row -> {
                  count[0]++;
                  return converter.upsert(row);
                });
        result =
            merge.replaceAll(
                spec.silver(),
                keys,
                silverRows,
                SilverPosition.APP_ID,
                next.wave(),
                next.domainMetadata());
      } catch (IOException e) {
        throw new UncheckedIOException("Cannot read Delta table " + spec.bronze(), e);
      }
      position = committed(spec, result, next);
      waves++;
      rowsRead += count[0];
      keysApplied += count[0];
      merged = true;
      info(
          "Silver %s: rebuilt from the snapshot at %s of bronze %s: %s%s",
          spec.silver(),
          snapshot,
          spec.bronze(),
          Counts.of(count[0], "row", "rows"),
          result.deleted() > 0
              ? ", replacing the " + Counts.of(result.deleted(), "row", "rows") + " it held"
              : "");
      hook.at("rebuilt");
    } else if (rebuild) {
      if (tables.hasDataFiles(spec.silver())) {
        SilverPosition next = position.next(null, null);
        WaveResult result =
            merge.replaceAll(
                spec.silver(),
                keys,
                Collections.emptyIterator(),
                SilverPosition.APP_ID,
                next.wave(),
                next.domainMetadata());
        position = committed(spec, result, next);
        waves++;
        info(
            "Silver %s: emptied (%s) to be rebuilt from bronze %s's changes",
            spec.silver(), Counts.of(result.deleted(), "row", "rows"), spec.bronze());
        hook.at("rebuilt");
      }
    }

    for (; plan != null; plan = bronze.plan(lower, spec.waveRows())) {
      int partitions = DerivedApply.partitions(plan, spec.waveRows());
      for (int partition = 0; partition < partitions; partition++) {
        long[] read = {0};
        Map<List<Object>, Map<String, Object>> latest =
            bronze.latest(lower, plan.upper(), partition, partitions, read);
        List<SilverImage> images = images(latest.values(), converter);
        boolean lastPartition = partition == partitions - 1;
        SilverPosition next =
            position.next(
                lastPartition ? plan.upper() : position.appliedLsn(), position.snapshotLsn());
        WaveResult result =
            merge.merge(
                spec.silver(),
                keys,
                images,
                SilverPosition.APP_ID,
                next.wave(),
                next.domainMetadata());
        position = committed(spec, result, next);
        waves++;
        rowsRead += read[0];
        keysApplied += images.size();
        merged = true;
        info(
            "Silver %s: wave %d applied bronze %s up to %s%s: %s, %s (%s)",
            spec.silver(),
            next.wave(),
            spec.bronze(),
            plan.upper(),
            partitions > 1 ? " (hash partition " + (partition + 1) + " of " + partitions + ")" : "",
            Counts.of(read[0], "row", "rows"),
            Counts.of(images.size(), "key", "keys"),
            result.parts(images.size()));
        hook.at("committed");
      }
      lower = plan.upper();
    }

    // Steps 11 and 14: the complete waves of the open snapshot not applied yet, one commit each.
    if (isOpen && opened.plan().isPresent()) {
      ChunkedSnapshotFacts.Plan chunkPlan = opened.plan().get();
      OutputType.Kind rangeKind =
          OpenChunkedSnapshot.rangeKind(keys, opened.open().keys(), chunkWaves.keyType(spec, keys));
      for (int w = after + 1; w <= opened.lastCompleteWave(); w++) {
        Set<Integer> chunks = new TreeSet<>();
        for (int c = w * chunkPlan.chunksPerWave();
            c < Math.min((w + 1) * chunkPlan.chunksPerWave(), chunkPlan.chunkCount());
            c++) {
          chunks.add(c);
        }
        long[] read = {0};
        Map<List<Object>, Map<String, Object>> latest =
            chunkWaves.wave(spec, bronze, opened, chunks, rangeKind, keys, read);
        List<SilverImage> images = images(latest.values(), converter);
        SilverPosition next =
            position.next(position.appliedLsn(), position.snapshotLsn()).withProgress(sOpen, w);
        WaveResult result =
            merge.merge(
                spec.silver(),
                keys,
                images,
                SilverPosition.APP_ID,
                next.wave(),
                next.domainMetadata());
        position = committed(spec, result, next);
        waves++;
        rowsRead += read[0];
        keysApplied += images.size();
        merged = true;
        info(
            "Silver %s: wave %d of the chunked snapshot at %s applied (chunks %s): %s, %s (%s)",
            spec.silver(),
            w,
            sOpen,
            chunks,
            Counts.of(read[0], "row", "rows"),
            Counts.of(images.size(), "key", "keys"),
            result.parts(images.size()));
        hook.at("committed");
      }
    }

    // Step 15: the control row copies the position (repaired here after a crash).
    if (position.wave() > 0) {
      finalization.recordSilverPosition(
          spec.silver(),
          position.appliedLsn(),
          position.snapshotLsn(),
          position.openSnapshotLsn(),
          position.snapshotWave());
    }
    // Step 16: the verdict, bronze's as read first, only with facts.
    LocalDateTime verdict =
        DerivedApply.verdict(
            start, spec.silver(), spec.facts() != null && !isOpen, spec.granularity());
    return new ApplyResult(
        rebuild && merged,
        position.appliedLsn(),
        verdict,
        true,
        waves,
        rowsRead,
        keysApplied,
        tables.version(spec.silver()));
  }

  /** The position after a silver commit; a replay of the same position is accepted. */
  private SilverPosition committed(SilverSpec spec, WaveResult result, SilverPosition next) {
    if (result.status() == CommitResult.Status.COMMITTED) {
      return next;
    }
    String stored = tables.domainMetadata(spec.silver(), SilverPosition.DOMAIN).orElse(null);
    if (next.toJson().equals(stored)) {
      return next;
    }
    throw new IllegalStateException(
        "Silver "
            + spec.silver()
            + " already has wave "
            + next.wave()
            + " of "
            + SilverPosition.APP_ID
            + " with another position ("
            + stored
            + "): another apply is writing this silver table; run one apply per silver table at a"
            + " time");
  }

  /** Silver's image of each latest bronze row: a delete for operations 1 and 3, else an upsert. */
  private static List<SilverImage> images(
      java.util.Collection<Map<String, Object>> latest, Converter converter) {
    List<SilverImage> images = new ArrayList<>(latest.size());
    for (Map<String, Object> row : latest) {
      images.add(
          LatestImage.deletes(BronzeWaves.operation(row))
              ? SilverImage.delete(converter.delete(row))
              : SilverImage.upsert(converter.upsert(row)));
    }
    return images;
  }

  /**
   * Step 4: max {@code max_lsn} of the bootstrap/resnapshot facts rows of this bronze, targets
   * compared as one spelling ({@link TablePaths#normalize}: a relative path, an absolute path and a
   * {@code file:} URI of one table are one target). When there is none and no snapshot was opened
   * for bronze either, a warning (once) says the facts table has no row for bronze at all, which is
   * a bronze spelled otherwise than its job was given it or another job's facts table; a target the
   * facts table has batch rows for was started without a snapshot on purpose ({@code
   * --bootstrap=false}, {@code --startingLsn}) and a bronze nothing was streamed into yet has
   * nothing to apply: neither is warned about.
   */
  private @Nullable String newestSnapshotFact(SilverSpec spec) {
    String facts = spec.facts();
    String bronze = normalized(spec.bronze());
    String newest = null;
    boolean opened = false;
    if (tables.exists(facts)) {
      Predicate snapshotEvents =
          new Predicate(
              "OR",
              new Predicate(
                  "OR",
                  new Predicate(
                      "=",
                      new Column(FactsTable.EVENT),
                      Literal.ofString(FactsTable.EVENT_BOOTSTRAP)),
                  new Predicate(
                      "=", new Column(FactsTable.EVENT), Literal.ofString(EVENT_RESNAPSHOT))),
              new Predicate(
                  "=",
                  new Column(FactsTable.EVENT),
                  Literal.ofString(ChunkedSnapshotFacts.EVENT_SNAPSHOT_OPEN)));
      try (CloseableIterator<Map<String, Object>> rows =
          tables.scanAtVersion(facts, tables.version(facts), snapshotEvents)) {
        while (rows.hasNext()) {
          Map<String, Object> row = rows.next();
          Object event = row.get(FactsTable.EVENT);
          if (!(row.get(FactsTable.TARGET) instanceof String target)
              || !bronze.equals(normalized(target))) {
            continue;
          }
          if (ChunkedSnapshotFacts.EVENT_SNAPSHOT_OPEN.equals(event)) {
            // A snapshot opened for this target (not complete yet) is a row for it too.
            opened = true;
            continue;
          }
          if (!FactsTable.EVENT_BOOTSTRAP.equals(event) && !EVENT_RESNAPSHOT.equals(event)) {
            continue;
          }
          Object maxLsn = row.get(FactsTable.MAX_LSN);
          if (maxLsn != null && (newest == null || ((String) maxLsn).compareTo(newest) > 0)) {
            newest = (String) maxLsn;
          }
        }
      } catch (IOException e) {
        throw new UncheckedIOException("Cannot read Delta table " + facts, e);
      }
    }
    // Decided once per silver and bronze, when bronze holds rows: the facts table is scanned
    // whole only here.
    String decided = "target:" + spec.silver() + ":" + spec.bronze();
    if (newest == null
        && !opened
        && !WARNED_ONCE.contains(decided)
        && tables.hasDataFiles(spec.bronze())
        && WARNED_ONCE.add(decided)) {
      Set<String> targets = factsTargets(facts);
      if (!targets.contains(bronze)) {
        warn(
            "Facts table "
                + facts
                + " has no row for target "
                + bronze
                + ", so no snapshot of it can be seen (its targets: "
                + targets
                + "): pass bronze spelled as the bronze job was given it, and the facts table that"
                + " job wrote");
      }
    }
    return newest;
  }

  /** Every target the facts table has a row for, normalized; empty when it does not exist. */
  private Set<String> factsTargets(String facts) {
    Set<String> targets = new TreeSet<>();
    if (!tables.exists(facts)) {
      return targets;
    }
    try (CloseableIterator<Map<String, Object>> rows =
        tables.scanAtVersion(facts, tables.version(facts), null)) {
      while (rows.hasNext()) {
        if (rows.next().get(FactsTable.TARGET) instanceof String target) {
          targets.add(normalized(target));
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot read Delta table " + facts, e);
    }
    return targets;
  }

  /** A table path in its one spelling; a value that is no path stays as it is. */
  private static String normalized(String path) {
    try {
      return TablePaths.normalize(path);
    } catch (IllegalArgumentException e) {
      return path;
    }
  }

  /** Step 13: keys must be captured columns; returns them in bronze's spelling. */
  private static List<String> resolveKeys(SilverSpec spec, Schema bronzeSchema) {
    List<String> captured = SilverTable.capturedColumns(bronzeSchema);
    Map<String, String> byLower = new HashMap<>();
    for (String column : captured) {
      byLower.put(column.toLowerCase(Locale.ROOT), column);
    }
    List<String> keys = new ArrayList<>();
    List<String> missing = new ArrayList<>();
    for (String key : spec.keys()) {
      String column = byLower.get(key.toLowerCase(Locale.ROOT));
      if (column == null) {
        missing.add(key);
      } else {
        keys.add(column);
      }
    }
    if (!missing.isEmpty()) {
      throw new IllegalArgumentException(
          "keys "
              + missing
              + " are not captured columns of bronze "
              + spec.bronze()
              + "; captured: "
              + captured);
    }
    return keys;
  }

  /**
   * Step 13: creates silver (recording its bronze and capture instances in its table properties),
   * adds the captured columns bronze gained; silver's row schema.
   */
  private Schema ensureSilver(SilverSpec spec, Schema bronzeSchema) {
    Schema wanted = SilverTable.schema(bronzeSchema);
    tables.createIfAbsent(
        spec.silver(), SilverTable.definition(wanted, spec.bronze(), spec.captureInstances()));
    List<DeltaColumn> existing = tables.describe(spec.silver()).columns();
    Set<String> have = new java.util.HashSet<>();
    for (DeltaColumn column : existing) {
      have.add(column.name().toLowerCase(Locale.ROOT));
    }
    List<DeltaColumn> gained = new ArrayList<>();
    for (DeltaColumn column : DeltaColumn.fromBeamSchema(wanted)) {
      if (!have.contains(column.name().toLowerCase(Locale.ROOT))) {
        gained.add(new DeltaColumn(column.name(), column.type(), true, column.comment()));
      }
    }
    if (!gained.isEmpty()) {
      List<String> added = tables.addColumns(spec.silver(), gained);
      LOG.info("Silver {}: added columns {} that bronze gained", spec.silver(), added);
    }
    return DeltaColumn.toBeamSchema(tables.describe(spec.silver()).columns());
  }

  private static @Nullable String later(@Nullable String a, @Nullable String b) {
    if (a == null) {
      return b;
    }
    return b == null || a.compareTo(b) >= 0 ? a : b;
  }

  private void warnOnce(String id, String message) {
    if (WARNED_ONCE.add(id)) {
      warn(message);
    }
  }

  private void warn(String message) {
    LOG.warn(message);
    warnings.accept(message);
  }

  /** Prints one line for people (a wave, a rebuild), formatted with {@link Locale#ROOT}. */
  private void info(String format, Object... args) {
    String line = String.format(Locale.ROOT, format, args);
    LOG.info(line);
    lines.accept(line);
  }

  /** Bronze rows (as scanned) to silver rows of silver's current schema. */
  private static final class Converter {
    private final Schema schema;
    private final Set<String> keep;

    Converter(Schema schema, List<String> keys) {
      this.schema = schema;
      this.keep = new java.util.HashSet<>();
      for (String key : keys) {
        keep.add(key.toLowerCase(Locale.ROOT));
      }
      keep.add(SilverTable.START_LSN);
      keep.add(SilverTable.COMMIT_TS);
    }

    Row upsert(Map<String, Object> bronzeRow) {
      List<Object> values = new ArrayList<>(schema.getFieldCount());
      for (Schema.Field field : schema.getFields()) {
        values.add(value(bronzeRow, field.getName()));
      }
      return Row.withSchema(schema).addValues(values).build();
    }

    Row delete(Map<String, Object> bronzeRow) {
      List<Object> values = new ArrayList<>(schema.getFieldCount());
      for (Schema.Field field : schema.getFields()) {
        values.add(
            keep.contains(field.getName().toLowerCase(Locale.ROOT))
                ? value(bronzeRow, field.getName())
                : null);
      }
      return Row.withSchema(schema).attachValues(values);
    }

    private static @Nullable Object value(Map<String, Object> bronzeRow, String name) {
      Object value = bronzeRow.get(name);
      if (value == null && !bronzeRow.containsKey(name)) {
        for (Map.Entry<String, Object> entry : bronzeRow.entrySet()) {
          if (entry.getKey().equalsIgnoreCase(name)) {
            value = entry.getValue();
            break;
          }
        }
      }
      if (value instanceof java.time.Instant instant) {
        return LocalDateTime.ofInstant(instant, ZoneOffset.UTC);
      }
      return value;
    }
  }
}
