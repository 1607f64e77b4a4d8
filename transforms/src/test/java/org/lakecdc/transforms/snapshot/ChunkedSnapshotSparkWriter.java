package org.lakecdc.transforms.snapshot;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.schemas.Schema;
import org.lakecdc.io.mssqlcdc.MssqlCdcIO;
import org.lakecdc.io.mssqlcdc.SourceConfiguration;
import org.lakecdc.io.mssqlcdc.chunk.Chunk;
import org.lakecdc.io.mssqlcdc.chunk.ChunkBounds;
import org.lakecdc.io.mssqlcdc.chunk.ChunkPlanner;
import org.lakecdc.io.mssqlcdc.chunk.SnapshotExtent;
import org.lakecdc.io.mssqlcdc.client.CdcClient;
import org.lakecdc.io.mssqlcdc.client.Commit;
import org.lakecdc.io.mssqlcdc.client.IsolationLevel;
import org.lakecdc.io.mssqlcdc.fake.ColumnDefinition;
import org.lakecdc.io.mssqlcdc.fake.FakeSqlServer;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.io.mssqlcdc.read.StartingLsn;
import org.lakecdc.io.mssqlcdc.snapshot.SnapshotLsn;
import org.lakecdc.transforms.bronze.BronzeTable;
import org.lakecdc.transforms.bronze.DeltaTarget;
import org.lakecdc.transforms.bronze.WriteChangesToDelta;
import org.lakecdc.transforms.delta.DeltaTables;
import org.lakecdc.transforms.delta.HadoopConf;
import org.lakecdc.transforms.facts.FactsTable;
import org.lakecdc.transforms.finalization.ControlTable;
import org.lakecdc.transforms.finalization.Granularity;
import org.lakecdc.transforms.position.StreamPosition;
import org.lakecdc.transforms.silver.SilverApplier;
import org.lakecdc.transforms.silver.SilverSpec;

/**
 * Writes a chunked snapshot for an independent reader (the {@code delta-spark-check} module's
 * {@code ChunkedSnapshotSparkTest} runs it in its own JVM, then reads the tables with delta-spark).
 * Usage: {@code ChunkedSnapshotSparkWriter <directory>}.
 *
 * <p>The simulator's {@code dbo.orders} ({@code order_id INT} key, {@code status VARCHAR(20)})
 * holds the even keys 2..90 at S. The transforms-level API opens and plans the snapshot ({@link
 * ChunkPlanner} over the simulator, 6 rows a chunk, 4 chunks a wave; {@link ChunkedSnapshotFacts}
 * open and plan rows); {@link WriteChunksToDelta} on the DirectRunner writes wave 0, then the rest.
 * Changes committed in the simulator around the waves are written to bronze by {@link
 * WriteChangesToDelta} (the ordinary change write, starting after S), and {@link SilverApplier}
 * applies bronze to silver after each change write. Changes before a chunk's read touch its range
 * by updates only (so every chunk holds exactly the rows of its range at S); the others insert,
 * delete and update anywhere, above MAX too.
 *
 * <p>Tables under {@code <directory>}: {@code bronze}, {@code facts}, {@code control}, {@code
 * silver}. Record {@code <directory>/chunked.tsv}, tab-separated lines: {@code s <S>}, {@code k
 * <chunks per wave>}, {@code at_s <order_id> <status>} per row at S, {@code open <silver version>
 * <bronze version> <chunks applied>} after each silver apply while the snapshot is open, {@code
 * final <silver version> <bronze version>} after the completion's apply, {@code table <order_id>
 * <status>} per row of the simulator's table at the end.
 */
public final class ChunkedSnapshotSparkWriter {
  private static final String APP = "dbo_orders";
  private static final String INSTANCE = "dbo_orders";
  private static final Instant T0 = Instant.parse("2026-10-05T08:00:00Z");
  private static final int CHUNK_ROWS = 6;
  private static final int PER_WAVE = 4;

  private final DeltaTables tables = DeltaTables.create();
  private final FakeSqlServer db;
  private final String bronze;
  private final String facts;
  private final String control;
  private final String silver;
  private final SilverApplier applier = new SilverApplier(tables, Clock.systemUTC());
  private final List<String> record = new ArrayList<>();
  private int minutes;

  private ChunkedSnapshotSparkWriter(Path dir) {
    db = FakeSqlServer.open(dir.resolve("src"));
    bronze = dir.resolve("bronze").toString();
    facts = dir.resolve("facts").toString();
    control = dir.resolve("control").toString();
    silver = dir.resolve("silver").toString();
  }

  /**
   * Writes the tables and the record under {@code args[0]}.
   *
   * @throws IOException when the record cannot be written
   */
  public static void main(String[] args) throws IOException {
    Path dir = Path.of(args[0]);
    ChunkedSnapshotSparkWriter writer = new ChunkedSnapshotSparkWriter(dir);
    writer.run();
    Files.write(dir.resolve("chunked.tsv"), writer.record, StandardCharsets.UTF_8);
  }

  private void line(Object... fields) {
    StringBuilder b = new StringBuilder();
    for (Object f : fields) {
      b.append(b.length() == 0 ? "" : "\t").append(f);
    }
    record.add(b.toString());
  }

  /** The next commit time: T0 plus one more minute. */
  private Instant next() {
    return T0.plusSeconds(60L * ++minutes);
  }

  private Instant commitTime(Lsn lsn) {
    try (CdcClient client = db.clientFactory().open()) {
      return client.lastCommitAtOrBefore(lsn).map(Commit::commitTime).orElseThrow();
    }
  }

  private static void run(Pipeline pipeline) {
    PipelineResult.State state = pipeline.run().waitUntilFinish();
    if (state != PipelineResult.State.DONE) {
      throw new IllegalStateException("The pipeline ended " + state);
    }
  }

  private MssqlCdcIO.Read changeRead() {
    return MssqlCdcIO.read()
        .withSourceConfiguration(
            SourceConfiguration.create(INSTANCE)
                .withClientFactory(db.clientFactory())
                .withIncludeCommandId(true));
  }

  /** The ordinary change write from bronze's position (or S before the first batch). */
  private void writeChanges(StreamPosition first) {
    StreamPosition start =
        StreamPosition.fromJson(tables.domainMetadata(bronze, StreamPosition.BRONZE_DOMAIN))
            .orElse(first)
            .ofTarget(bronze, tables.tableId(bronze));
    MssqlCdcIO.Read read = changeRead().withStartingLsn(StartingLsn.after(start.endLsn()));
    DeltaTarget target =
        new DeltaTarget(
            bronze,
            facts,
            control,
            start,
            Granularity.HOUR,
            Instant.now(),
            null,
            HadoopConf.empty(),
            null);
    Pipeline p = Pipeline.create(PipelineOptionsFactory.create());
    p.apply(WriteChangesToDelta.from(read, target, read.outputSchema()));
    run(p);
  }

  private void applySilver(int chunksApplied, boolean open) {
    applier.apply(
        new SilverSpec(
            bronze,
            silver,
            control,
            facts,
            java.util.Set.of(INSTANCE),
            List.of("order_id"),
            Granularity.HOUR,
            1000));
    if (open) {
      line("open", tables.version(silver), tables.version(bronze), chunksApplied);
    } else {
      line("final", tables.version(silver), tables.version(bronze));
    }
  }

  private void writeChunks(ChunkedSnapshotSpec spec, List<Chunk> chunks) {
    MssqlCdcIO.SnapshotChunks read =
        MssqlCdcIO.snapshotChunks()
            .withSourceConfiguration(
                SourceConfiguration.create(INSTANCE)
                    .withClientFactory(db.clientFactory())
                    .withIncludeCommandId(true))
            .withChunks(chunks);
    Pipeline p = Pipeline.create(PipelineOptionsFactory.create());
    p.apply(WriteChunksToDelta.of(read, spec));
    run(p);
  }

  private static Map<String, Object> order(int id, String status) {
    return Map.of("order_id", id, "status", status);
  }

  /** The first key at S inside {@code chunk}'s range, or the last with {@code last}. */
  private static int keyIn(List<Integer> keysAtS, Chunk chunk, boolean last) {
    int found = Integer.MIN_VALUE;
    for (int key : keysAtS) {
      boolean above = chunk.lo() == null || key >= ((Number) chunk.lo().get(0)).longValue();
      boolean below = chunk.hi() == null || key < ((Number) chunk.hi().get(0)).longValue();
      if (above && below) {
        found = key;
        if (!last) {
          break;
        }
      }
    }
    if (found == Integer.MIN_VALUE) {
      throw new IllegalStateException("No key at S in chunk " + chunk);
    }
    return found;
  }

  private void run() {
    db.createTable(
        "dbo.orders",
        List.of(
            ColumnDefinition.of("order_id", "int"), ColumnDefinition.of("status", "varchar(20)")),
        List.of("order_id"));
    db.enableCdc("dbo.orders");
    FakeSqlServer.Transaction tx = db.transaction(next());
    for (int id = 2; id <= 60; id += 2) {
      tx.insert("dbo.orders", order(id, "s" + id));
    }
    tx.commit();
    tx = db.transaction(next());
    for (int id = 62; id <= 90; id += 2) {
      tx.insert("dbo.orders", order(id, "s" + id));
    }
    tx.commit();

    Lsn s;
    try (CdcClient client = db.clientFactory().open()) {
      s = SnapshotLsn.resolve(client, INSTANCE);
    }
    List<Integer> keysAtS = new ArrayList<>();
    for (Map<String, Object> row : db.rows("dbo.orders")) {
      keysAtS.add((Integer) row.get("order_id"));
      line("at_s", row.get("order_id"), row.get("status"));
    }
    line("s", s);
    line("k", PER_WAVE);

    Schema changeSchema = changeRead().outputSchema();
    tables.createIfAbsent(bronze, BronzeTable.definition(changeSchema));
    tables.createIfAbsent(facts, FactsTable.definition());
    tables.createIfAbsent(control, ControlTable.definition());

    // Open, then plan: the extent and the chunks from the planner over the simulator.
    Instant started = Instant.now();
    SnapshotExtent extent;
    List<Chunk> chunks;
    ChunkPlanner planner;
    try (CdcClient client = db.clientFactory().open()) {
      planner = ChunkPlanner.forInstance(client, INSTANCE, IsolationLevel.READ_COMMITTED);
      extent = planner.extent();
      chunks = planner.plan(extent, CHUNK_ROWS);
    }
    if (chunks.size() <= PER_WAVE) {
      throw new IllegalStateException("The plan needs more than one wave: " + chunks);
    }
    ChunkedSnapshotFacts.Open open =
        new ChunkedSnapshotFacts.Open(
            APP,
            bronze,
            s,
            commitTime(s),
            ChunkedSnapshotFacts.MODE_CHUNKED,
            ChunkedSnapshotFacts.KIND_BOOTSTRAP,
            0,
            planner.keyColumns(),
            extent.toJson(planner.keyTypes()),
            null,
            null,
            null);
    tables.append(
        facts,
        FactsTable.SCHEMA,
        List.of(open.toRow(Instant.now())),
        ChunkedSnapshotFacts.openAppId(APP),
        0,
        Map.of());
    ChunkedSnapshotFacts.Plan plan =
        new ChunkedSnapshotFacts.Plan(
            APP,
            bronze,
            s,
            extent.kind(),
            planner.keyColumns(),
            CHUNK_ROWS,
            PER_WAVE,
            ChunkBounds.planJson(chunks, planner.keyTypes()),
            started,
            0);
    tables.append(
        facts,
        FactsTable.SCHEMA,
        List.of(plan.toRow(Instant.now())),
        ChunkedSnapshotFacts.planAppId(APP, s),
        0,
        Map.of());
    ChunkedSnapshotFacts.State state =
        ChunkedSnapshotFacts.read(tables, facts, APP, bronze).chunked().orElseThrow();
    ChunkedSnapshotSpec spec =
        new ChunkedSnapshotSpec(
            bronze,
            facts,
            APP + "#events",
            state.open(),
            state.plan().orElseThrow(),
            planner.keyTypes(),
            INSTANCE);
    StreamPosition atS = new StreamPosition(APP, 0, -1, s, commitTime(s), INSTANCE);
    long max = ((Number) extent.hi()).longValue();
    List<Chunk> wave0 = chunks.subList(0, PER_WAVE);
    List<Chunk> rest = chunks.subList(PER_WAVE, chunks.size());

    // Before any chunk is read: updates inside the plan, an insert above MAX.
    db.transaction(next())
        .update("dbo.orders", List.of(keyIn(keysAtS, chunks.get(0), true)), Map.of("status", "c0"))
        .update("dbo.orders", List.of(keyIn(keysAtS, rest.get(0), false)), Map.of("status", "c0"))
        .insert("dbo.orders", order((int) max + 10, "c0-new"))
        .commit();
    writeChanges(atS);
    applySilver(0, true);

    writeChunks(spec, wave0);

    // Between the waves: deletes, inserts and updates in wave 0's ranges (read already), updates
    // only in the rest's (read later), a delete above MAX.
    int first = keyIn(keysAtS, chunks.get(0), false);
    db.transaction(next())
        .update("dbo.orders", List.of(first), Map.of("status", "c1"))
        .delete("dbo.orders", List.of(keyIn(keysAtS, chunks.get(1), false)))
        .insert("dbo.orders", order(keyIn(keysAtS, chunks.get(2), false) + 1, "c1-new"))
        .commit();
    db.transaction(next())
        .update(
            "dbo.orders",
            List.of(keyIn(keysAtS, rest.get(rest.size() - 1), true)),
            Map.of("status", "c1"))
        .delete("dbo.orders", List.of((int) max + 10))
        .commit();
    writeChanges(atS);
    applySilver(PER_WAVE, true);

    // Updates of keys silver holds (deletion vectors), one inside the rest's ranges.
    db.transaction(next())
        .update("dbo.orders", List.of(first), Map.of("status", "c1b"))
        .update("dbo.orders", List.of(keyIn(keysAtS, chunks.get(3), true)), Map.of("status", "c1b"))
        .update("dbo.orders", List.of(keyIn(keysAtS, rest.get(0), false)), Map.of("status", "c1b"))
        .commit();
    writeChanges(atS);
    applySilver(PER_WAVE, true);

    writeChunks(spec, rest);

    // After the completion: anything anywhere.
    db.transaction(next())
        .delete("dbo.orders", List.of(keyIn(keysAtS, rest.get(1), false)))
        .update("dbo.orders", List.of(keyIn(keysAtS, rest.get(1), true)), Map.of("status", "c2"))
        .update("dbo.orders", List.of(first), Map.of("status", "c2"))
        .insert("dbo.orders", order((int) max + 20, "c2-new"))
        .commit();
    writeChanges(atS);
    applySilver(chunks.size(), false);

    for (Map<String, Object> row : db.rows("dbo.orders")) {
      line("table", row.get("order_id"), row.get("status"));
    }
  }
}
