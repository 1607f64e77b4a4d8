package org.lakecdc.transforms.snapshot;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.coders.KvCoder;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.options.PipelineOptions;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.options.StreamingOptions;
import org.apache.beam.sdk.testing.PAssert;
import org.apache.beam.sdk.testing.TestStream;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollection;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.io.mssqlcdc.MssqlCdcIO;
import org.lakecdc.io.mssqlcdc.SourceConfiguration;
import org.lakecdc.io.mssqlcdc.chunk.Chunk;
import org.lakecdc.io.mssqlcdc.chunk.ChunkRead;
import org.lakecdc.io.mssqlcdc.client.CdcClient;
import org.lakecdc.io.mssqlcdc.client.CdcClientFactory;
import org.lakecdc.io.mssqlcdc.client.Commit;
import org.lakecdc.io.mssqlcdc.client.TableQuery;
import org.lakecdc.io.mssqlcdc.fake.ColumnDefinition;
import org.lakecdc.io.mssqlcdc.fake.FakeSqlServer;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;
import org.lakecdc.io.mssqlcdc.schema.SqlServerType;
import org.lakecdc.io.mssqlcdc.snapshot.SnapshotLsn;
import org.lakecdc.transforms.bronze.BronzeTable;
import org.lakecdc.transforms.bronze.CrashPlan;
import org.lakecdc.transforms.bronze.CrashPoint;
import org.lakecdc.transforms.delta.CommitSummary;
import org.lakecdc.transforms.delta.DeltaTables;
import org.lakecdc.transforms.delta.HadoopConf;
import org.lakecdc.transforms.delta.TableMarkers;
import org.lakecdc.transforms.facts.FactsTable;

/**
 * {@link WriteChunksToDelta} on the DirectRunner over the simulator (docs/scenarios.md C097, C099):
 * each chunk read stamped on the worker, committed once to bronze and facts in index order, the
 * completion row after the last; crashes at every point of a chunk's commit sequence, reruns and
 * {@link WriteChunksToDelta#repair}.
 */
class WriteChunksToDeltaTest {
  @TempDir Path dir;

  private static final Instant T0 = Instant.parse("2026-09-28T13:00:00Z");
  private static final String PLAN = "[[0,null,2],[1,2,4],[2,4,6]]";
  private static final List<Chunk> CHUNKS =
      List.of(
          new Chunk(0, null, List.of(2)),
          new Chunk(1, List.of(2), List.of(4)),
          new Chunk(2, List.of(4), List.of(6)));

  private final DeltaTables tables = DeltaTables.create();
  private FakeSqlServer db;
  private Lsn s;
  private String bronze;
  private String facts;

  /** dbo.orders with orders 0..5 (status "s<i>") committed at T0; S recorded after. */
  private void orders() {
    db = FakeSqlServer.open(dir.resolve("src"));
    db.createTable(
        "dbo.orders",
        List.of(
            ColumnDefinition.of("order_id", "int"), ColumnDefinition.of("status", "varchar(10)")),
        List.of("order_id"));
    db.enableCdc("dbo.orders");
    FakeSqlServer.Transaction tx = db.transaction(T0);
    for (int i = 0; i < 6; i++) {
      tx.insert("dbo.orders", Map.of("order_id", i, "status", "s" + i));
    }
    tx.commit();
    try (CdcClient client = db.clientFactory().open()) {
      s = SnapshotLsn.resolve(client, "dbo_orders");
    }
  }

  private Instant commitTime(Lsn lsn) {
    try (CdcClient client = db.clientFactory().open()) {
      return client.lastCommitAtOrBefore(lsn).map(Commit::commitTime).orElseThrow();
    }
  }

  private static MssqlCdcIO.SnapshotChunks read(CdcClientFactory factory) {
    return MssqlCdcIO.snapshotChunks()
        .withSourceConfiguration(
            SourceConfiguration.create("dbo_orders").withClientFactory(factory))
        .withChunks(CHUNKS);
  }

  /** Creates bronze and facts, writes the open and plan rows and reads them back. */
  private ChunkedSnapshotSpec open(int chunksPerWave) {
    return openWithPlan(chunksPerWave, PLAN);
  }

  /** {@link #open(int)} with the plan {@code planJson} ({@code [[index, lo, hi], ...]}). */
  private ChunkedSnapshotSpec openWithPlan(int chunksPerWave, String planJson) {
    bronze = dir.resolve("bronze").toString();
    facts = dir.resolve("facts").toString();
    tables.createIfAbsent(bronze, BronzeTable.definition(read(db.clientFactory()).outputSchema()));
    tables.createIfAbsent(facts, FactsTable.definition());
    ChunkedSnapshotFacts.Open open =
        new ChunkedSnapshotFacts.Open(
            "app",
            bronze,
            s,
            commitTime(s),
            ChunkedSnapshotFacts.MODE_CHUNKED,
            ChunkedSnapshotFacts.KIND_BOOTSTRAP,
            0,
            List.of("order_id"),
            "{\"kind\":\"int\",\"lo\":0,\"hi\":5,\"rows\":6}",
            null,
            null,
            null);
    tables.append(
        facts,
        FactsTable.SCHEMA,
        List.of(open.toRow(T0.plusSeconds(60))),
        ChunkedSnapshotFacts.openAppId("app"),
        0,
        Map.of());
    ChunkedSnapshotFacts.Plan plan =
        new ChunkedSnapshotFacts.Plan(
            "app",
            bronze,
            s,
            "int",
            List.of("order_id"),
            2,
            chunksPerWave,
            planJson,
            T0.plusSeconds(61),
            5);
    tables.append(
        facts,
        FactsTable.SCHEMA,
        List.of(plan.toRow(T0.plusSeconds(62))),
        ChunkedSnapshotFacts.planAppId("app", s),
        0,
        Map.of());
    ChunkedSnapshotFacts.State state =
        ChunkedSnapshotFacts.read(tables, facts, "app", bronze).chunked().orElseThrow();
    return new ChunkedSnapshotSpec(
        bronze,
        facts,
        "app#events",
        state.open(),
        state.plan().orElseThrow(),
        List.of(SqlServerType.of("int")),
        "dbo_orders");
  }

  private static Pipeline pipeline() {
    return Pipeline.create(PipelineOptionsFactory.create());
  }

  private static void run(Pipeline pipeline) {
    assertEquals(PipelineResult.State.DONE, pipeline.run().waitUntilFinish());
  }

  /** Runs the pipeline, which must fail with the simulated crash at {@code point}. */
  private static void runToCrash(Pipeline pipeline, CrashPoint point, int chunk) {
    Throwable failure = assertThrows(Throwable.class, () -> pipeline.run().waitUntilFinish());
    String expected = new CrashPoint.SimulatedCrash(point, chunk).getMessage();
    for (Throwable t = failure; t != null; t = t.getCause()) {
      if (t instanceof CrashPoint.SimulatedCrash && expected.equals(t.getMessage())) {
        return;
      }
    }
    throw new AssertionError("Not the simulated crash " + expected, failure);
  }

  /** Bronze's (chunk, order id) pairs, sorted. */
  private List<List<Integer>> chunkIds() {
    return tables.scan(bronze).stream()
        .map(r -> List.of((Integer) r.get("_chunk"), (Integer) r.get("order_id")))
        .sorted(Comparator.<List<Integer>>comparingInt(p -> p.get(0)).thenComparing(p -> p.get(1)))
        .toList();
  }

  /** The facts rows of one event, by chunk (detail's "chunk") or in scan order. */
  private List<Map<String, Object>> factsRows(String event) {
    return tables.scan(facts).stream().filter(r -> event.equals(r.get(FactsTable.EVENT))).toList();
  }

  private Map<Integer, Map<String, Object>> chunkFacts() {
    Map<Integer, Map<String, Object>> byChunk = new TreeMap<>();
    for (Map<String, Object> row : factsRows(ChunkedSnapshotFacts.EVENT_SNAPSHOT_CHUNK)) {
      String detail = (String) row.get(FactsTable.DETAIL);
      int chunk = Integer.parseInt(detail.replaceAll(".*\"chunk\":(\\d+).*", "$1"));
      assertNull(byChunk.put(chunk, row), "one facts row per chunk: " + chunk);
    }
    return byChunk;
  }

  private Map<Integer, Long> chunkRows() {
    Map<Integer, Long> rows = new TreeMap<>();
    chunkFacts().forEach((c, row) -> rows.put(c, (Long) row.get(FactsTable.ROWS)));
    return rows;
  }

  /** The txn versions of bronze's chunk commits, in table-version order. */
  private List<Long> bronzeChunkCommits() {
    String app = ChunkedSnapshotFacts.bronzeAppId("app", s);
    return tables.history(bronze).stream()
        .filter(c -> app.equals(c.txnAppId()))
        .sorted(Comparator.comparingLong(CommitSummary::version))
        .map(c -> c.txnVersion().getAsLong())
        .toList();
  }

  private String detail(int wave, int chunk, String lo, String hi, boolean last) {
    return "{\"snapshot\":\""
        + s
        + "\",\"wave\":"
        + wave
        + ",\"chunk\":"
        + chunk
        + ",\"lo\":"
        + lo
        + ",\"hi\":"
        + hi
        + ",\"last\":"
        + last
        + "}";
  }

  private static LocalDateTime utc(Instant t) {
    return LocalDateTime.ofInstant(t, ZoneOffset.UTC);
  }

  @Test
  void c097EachChunkIsStampedOnTheWorkerAndCommittedOnceInOrderThenTheSnapshotCompletes() {
    orders();
    ChunkedSnapshotSpec spec = open(2);
    Path src = dir.resolve("src");
    Instant t1 = T0.plusSeconds(3600);
    Lsn[] during = new Lsn[1];
    HookedClientFactory factory =
        new HookedClientFactory(
            db.clientFactory(),
            "c097-" + dir,
            () ->
                during[0] =
                    FakeSqlServer.open(src)
                        .transaction(t1)
                        .delete("dbo.orders", List.of(3))
                        .insert("dbo.orders", Map.of("order_id", 9, "status", "s9"))
                        .commit());

    Pipeline p = pipeline();
    PCollection<CommittedChunk> out = p.apply(WriteChunksToDelta.of(read(factory), spec));
    PAssert.that(out)
        .satisfies(
            chunks -> {
              List<Integer> completed = new ArrayList<>();
              List<Integer> all = new ArrayList<>();
              for (CommittedChunk c : chunks) {
                all.add(c.chunk());
                assertFalse(c.skipped());
                assertTrue(c.bronzeVersion() > 0);
                if (c.completed()) {
                  completed.add(c.chunk());
                }
              }
              assertEquals(List.of(0, 1, 2), all.stream().sorted().toList());
              assertEquals(List.of(2), completed);
              return null;
            });
    run(p);

    assertTrue(factory.ran());
    Lsn h = during[0];
    // A fresh read per chunk: 3 deleted before chunk 1 was read, 9 above the plan's end.
    assertEquals(
        List.of(List.of(0, 0), List.of(0, 1), List.of(1, 2), List.of(2, 4), List.of(2, 5)),
        chunkIds());
    Map<Integer, Map<String, Object>> byChunk = chunkFacts();
    assertEquals(Set.of(0, 1, 2), byChunk.keySet());
    Map<Integer, Lsn> stamps = new TreeMap<>();
    byChunk.forEach((c, row) -> stamps.put(c, Lsn.parse((String) row.get(FactsTable.MIN_LSN))));
    // The chunk whose read ran the commit was stamped before it (S); chunks stamped after, H.
    assertTrue(stamps.containsValue(s), "a chunk stamped before the commit: " + stamps);
    assertTrue(Set.of(s, h).containsAll(stamps.values()), stamps.toString());
    for (Map<String, Object> row : tables.scan(bronze)) {
      Lsn stamp = stamps.get((Integer) row.get("_chunk"));
      assertEquals(stamp.toString(), row.get("_start_lsn"));
      assertFalse(stamp.isBefore(s));
      assertEquals(utc(commitTime(stamp)), row.get("_commit_ts"));
      assertEquals(0, row.get("_operation"));
      assertEquals(s.toString(), row.get("_snapshot"));
      assertNull(row.get("_seqval"));
      assertNull(row.get("_command_id"));
      assertNull(row.get("_batch_id"));
      assertEquals("s" + row.get("order_id"), row.get("status"));
    }
    String[][] bounds = {{"null", "2"}, {"2", "4"}, {"4", "6"}};
    long[] rows = {2, 1, 2};
    for (int c = 0; c < 3; c++) {
      Map<String, Object> row = byChunk.get(c);
      assertEquals("app", row.get(FactsTable.APP_ID));
      assertEquals(bronze, row.get(FactsTable.TARGET));
      assertEquals(rows[c], row.get(FactsTable.ROWS));
      assertEquals(stamps.get(c).toString(), row.get(FactsTable.MIN_LSN));
      assertEquals(h.toString(), row.get(FactsTable.MAX_LSN), "max_lsn read after the read");
      assertEquals(utc(commitTime(stamps.get(c))), row.get(FactsTable.MIN_COMMIT_TS));
      assertEquals(utc(t1), row.get(FactsTable.MAX_COMMIT_TS));
      assertEquals(0L, row.get(FactsTable.INSERTS));
      assertEquals(0L, row.get(FactsTable.UPDATES));
      assertEquals(0L, row.get(FactsTable.DELETES));
      assertEquals(
          detail(c / 2, c, bounds[c][0], bounds[c][1], c == 2), row.get(FactsTable.DETAIL));
    }
    List<Map<String, Object>> completion = factsRows(FactsTable.EVENT_BOOTSTRAP);
    assertEquals(1, completion.size());
    Map<String, Object> done = completion.get(0);
    Lsn last = stamps.values().stream().max(Lsn::compareTo).orElseThrow();
    assertEquals("app", done.get(FactsTable.APP_ID));
    assertEquals(5L, done.get(FactsTable.ROWS));
    assertEquals(s.toString(), done.get(FactsTable.MIN_LSN));
    assertEquals(s.toString(), done.get(FactsTable.MAX_LSN));
    assertEquals(s.toString(), done.get(FactsTable.END_LSN));
    assertEquals(utc(T0.plusSeconds(60)), done.get(FactsTable.STARTED_AT));
    assertEquals(
        "{\"snapshot\":\"" + s + "\",\"chunks\":3,\"rows\":5,\"last_lsn\":\"" + last + "\"}",
        done.get(FactsTable.DETAIL));
    assertEquals(OptionalLong.of(0), tables.latestTransactionVersion(facts, "app#events"));
    assertEquals(List.of(0L, 1L, 2L), bronzeChunkCommits());
    ChunkedSnapshotFacts.State state =
        ChunkedSnapshotFacts.read(tables, facts, "app", bronze).chunked().orElseThrow();
    assertTrue(state.complete());
    assertEquals(1, state.lastCompleteWave());
    // A wave's progress line counts the chunks up to its last one, not those committed after it.
    assertEquals(1, state.through(0).chunksDone());
    assertEquals(2, state.through(1).chunksDone());
    assertEquals(3, state.through(1).rowsDone());
    assertEquals(3, state.through(2).chunksDone());
    assertEquals(5, state.through(2).rowsDone());
    assertEquals(
        "{\"app_id\":\"app\",\"target\":\""
            + bronze
            + "\",\"snapshot\":\""
            + s
            + "\",\"chunk\":2,\"wave\":1,\"lo\":4,\"hi\":6,\"last\":true,\"rows\":2,",
        tables
            .domainMetadata(bronze, ChunkedSnapshotFacts.BRONZE_DOMAIN)
            .orElseThrow()
            .replaceAll("\"stamp\".*", ""));
  }

  @Test
  void aRerunOfACompleteSnapshotSkipsEveryChunkAndAppendsNothing() {
    orders();
    ChunkedSnapshotSpec spec = open(2);
    Pipeline first = pipeline();
    first.apply(WriteChunksToDelta.of(read(db.clientFactory()), spec));
    run(first);
    long bronzeVersion = tables.version(bronze);
    long factsVersion = tables.version(facts);
    Map<Integer, Map<String, Object>> recorded = chunkFacts();

    Pipeline again = pipeline();
    PCollection<CommittedChunk> out =
        again.apply(WriteChunksToDelta.of(read(db.clientFactory()), spec));
    List<CommittedChunk> expected = new ArrayList<>();
    for (int c = 0; c < 3; c++) {
      Map<String, Object> row = recorded.get(c);
      expected.add(
          new CommittedChunk(
              "app",
              s.toString(),
              c,
              c / 2,
              (Long) row.get(FactsTable.ROWS),
              (String) row.get(FactsTable.MIN_LSN),
              -1,
              true,
              false));
    }
    PAssert.that(out).containsInAnyOrder(expected);
    run(again);

    assertEquals(bronzeVersion, tables.version(bronze));
    assertEquals(factsVersion, tables.version(facts));
    assertEquals(6, tables.scan(bronze).size());
    assertEquals(1, factsRows(FactsTable.EVENT_BOOTSTRAP).size());
    assertEquals(0, WriteChunksToDelta.repair(tables, spec));
  }

  @Test
  void c099ACrashAfterAChunksFilesCommitsItOnceOnTheRerunAndLeavesItsFilesUnreferenced() {
    orders();
    ChunkedSnapshotSpec spec = open(2);
    Pipeline crashing = pipeline();
    crashing.apply(
        WriteChunksToDelta.of(read(db.clientFactory()), spec)
            .withCrash(CrashPlan.chunk(CrashPoint.AFTER_DATA_FILES, 1)));
    runToCrash(crashing, CrashPoint.AFTER_DATA_FILES, 1);
    assertEquals(Map.of(0, 2L), chunkRows());
    assertEquals(List.of(0L), bronzeChunkCommits());
    assertEquals(List.of(List.of(0, 0), List.of(0, 1)), chunkIds());

    Pipeline rerun = pipeline();
    rerun.apply(WriteChunksToDelta.of(read(db.clientFactory()), spec));
    run(rerun);

    assertEveryOrderCommittedOnceInChunkOrder();
    Set<String> referenced =
        tables.dataFileDetails(bronze).stream()
            .map(d -> Path.of(d.path()).getFileName().toString())
            .collect(Collectors.toSet());
    Set<String> onDisk = parquetFiles(Path.of(bronze));
    assertTrue(onDisk.containsAll(referenced), "every committed file exists");
    assertTrue(
        onDisk.size() > referenced.size(),
        "the crashed run's files stay on disk, unreferenced: " + onDisk + " vs " + referenced);
    assertEquals(1, factsRows(FactsTable.EVENT_BOOTSTRAP).size());
  }

  private static Set<String> parquetFiles(Path root) {
    try (Stream<Path> files = Files.walk(root)) {
      return files
          .filter(f -> f.getFileName().toString().endsWith(".parquet"))
          .filter(f -> !f.toString().contains("_delta_log"))
          .map(f -> f.getFileName().toString())
          .collect(Collectors.toSet());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Test
  void c099ACrashAfterABronzeCommitIsRepairedFromTheBronzeDomain() {
    orders();
    ChunkedSnapshotSpec spec = open(2);
    Pipeline crashing = pipeline();
    crashing.apply(
        WriteChunksToDelta.of(read(db.clientFactory()), spec)
            .withCrash(CrashPlan.chunk(CrashPoint.AFTER_BRONZE_COMMIT, 1)));
    runToCrash(crashing, CrashPoint.AFTER_BRONZE_COMMIT, 1);
    assertEquals(Map.of(0, 2L), chunkRows());
    assertEquals(List.of(0L, 1L), bronzeChunkCommits());
    long bronzeRows = tables.scan(bronze).size();
    assertEquals(4, bronzeRows);

    assertEquals(1, WriteChunksToDelta.repair(tables, spec));

    assertEquals(Map.of(0, 2L, 1, 2L), chunkRows());
    assertEquals(bronzeRows, tables.scan(bronze).size());
    Map<String, Object> repaired = chunkFacts().get(1);
    ChunkedSnapshotFacts.ChunkFact inBronze =
        ChunkedSnapshotFacts.ChunkFact.fromJson(
            tables.domainMetadata(bronze, ChunkedSnapshotFacts.BRONZE_DOMAIN).orElseThrow());
    assertEquals(inBronze.stamp().toString(), repaired.get(FactsTable.MIN_LSN));
    assertEquals(detail(0, 1, "2", "4", false), repaired.get(FactsTable.DETAIL));
    assertEquals(0, WriteChunksToDelta.repair(tables, spec), "repair is idempotent");
    assertEquals(
        0,
        ChunkedSnapshotFacts.read(tables, facts, "app", bronze)
            .chunked()
            .orElseThrow()
            .lastCompleteWave());
    assertTrue(factsRows(FactsTable.EVENT_BOOTSTRAP).isEmpty());
  }

  @Test
  void c099ARerunAfterABronzeCommitWritesTheMissingFactsRowFromBronzeAndAppendsNothingTwice() {
    orders();
    ChunkedSnapshotSpec spec = open(2);
    Pipeline crashing = pipeline();
    crashing.apply(
        WriteChunksToDelta.of(read(db.clientFactory()), spec)
            .withCrash(CrashPlan.chunk(CrashPoint.AFTER_BRONZE_COMMIT, 1)));
    runToCrash(crashing, CrashPoint.AFTER_BRONZE_COMMIT, 1);
    String stampInBronze =
        ChunkedSnapshotFacts.ChunkFact.fromJson(
                tables.domainMetadata(bronze, ChunkedSnapshotFacts.BRONZE_DOMAIN).orElseThrow())
            .stamp()
            .toString();
    // A commit after the crash: the rerun's reads are stamped later.
    FakeSqlServer.open(dir.resolve("src"))
        .transaction(T0.plusSeconds(7200))
        .update("dbo.orders", List.of(5), Map.of("status", "x"))
        .commit();

    Pipeline rerun = pipeline();
    rerun.apply(WriteChunksToDelta.of(read(db.clientFactory()), spec));
    run(rerun);

    assertEquals(Map.of(0, 2L, 1, 2L, 2, 2L), chunkRows());
    assertEquals(stampInBronze, chunkFacts().get(1).get(FactsTable.MIN_LSN));
    assertEquals(List.of(0L, 1L, 2L), bronzeChunkCommits());
    assertEquals(6, tables.scan(bronze).size());
    assertEquals(1, factsRows(FactsTable.EVENT_BOOTSTRAP).size());
  }

  @Test
  void c099ACrashBetweenWavesLeavesTheFirstWaveCompleteAndTheRerunCompletesTheSnapshot() {
    orders();
    ChunkedSnapshotSpec spec = open(2);
    Pipeline crashing = pipeline();
    crashing.apply(
        WriteChunksToDelta.of(read(db.clientFactory()), spec)
            .withCrash(CrashPlan.chunk(CrashPoint.AFTER_FACTS_COMMIT, 1)));
    runToCrash(crashing, CrashPoint.AFTER_FACTS_COMMIT, 1);
    ChunkedSnapshotFacts.State between =
        ChunkedSnapshotFacts.read(tables, facts, "app", bronze).chunked().orElseThrow();
    assertEquals(0, between.lastCompleteWave());
    assertEquals(2, between.nextChunk());
    assertFalse(between.complete());
    assertEquals(0, WriteChunksToDelta.repair(tables, spec), "nothing to repair");

    Pipeline rerun = pipeline();
    rerun.apply(
        WriteChunksToDelta.of(read(db.clientFactory()).withChunks(List.of(CHUNKS.get(2))), spec));
    run(rerun);

    assertEquals(Map.of(0, 2L, 1, 2L, 2, 2L), chunkRows());
    assertEquals(List.of(0L, 1L, 2L), bronzeChunkCommits());
    assertEquals(6, tables.scan(bronze).size());
    List<Map<String, Object>> completion = factsRows(FactsTable.EVENT_BOOTSTRAP);
    assertEquals(1, completion.size());
    assertEquals(6L, completion.get(0).get(FactsTable.ROWS));
  }

  @Test
  void aChunkWithNoRowsStillCommitsWithNoFile() {
    orders();
    ChunkedSnapshotSpec spec = open(4);
    // Orders 2 and 3 deleted after the plan: chunk 1 reads nothing.
    FakeSqlServer.open(dir.resolve("src"))
        .transaction(T0.plusSeconds(3600))
        .delete("dbo.orders", List.of(2))
        .delete("dbo.orders", List.of(3))
        .commit();

    Pipeline p = pipeline();
    p.apply(WriteChunksToDelta.of(read(db.clientFactory()), spec));
    run(p);

    assertEquals(Map.of(0, 2L, 1, 0L, 2, 2L), chunkRows());
    assertEquals(List.of(0L, 1L, 2L), bronzeChunkCommits());
    String app = ChunkedSnapshotFacts.bronzeAppId("app", s);
    CommitSummary empty =
        tables.history(bronze).stream()
            .filter(c -> app.equals(c.txnAppId()) && c.txnVersion().getAsLong() == 1)
            .findFirst()
            .orElseThrow();
    assertEquals(0, empty.filesAdded());
    assertEquals(List.of(ChunkedSnapshotFacts.BRONZE_DOMAIN), empty.domains());
    assertEquals(List.of(List.of(0, 0), List.of(0, 1), List.of(2, 4), List.of(2, 5)), chunkIds());
    assertEquals(4L, factsRows(FactsTable.EVENT_BOOTSTRAP).get(0).get(FactsTable.ROWS));
  }

  /** What a held read waits for; serializable with its client factory. */
  interface Condition extends java.io.Serializable {
    boolean met();
  }

  /** What a held read does once its condition holds, before it reads. */
  interface Action extends java.io.Serializable {
    void run();
  }

  /**
   * A client whose SELECT of the chunk whose range starts at {@code lower} (null: the first chunk,
   * no lower bound) waits until {@code until} holds (two minutes at most), then runs {@code then}
   * and reads.
   */
  static final class HeldRead implements CdcClientFactory {
    private static final long serialVersionUID = 1L;
    private final CdcClientFactory delegate;
    private final @Nullable Integer lower;
    private final Condition until;
    private final Action then;

    HeldRead(CdcClientFactory delegate, @Nullable Integer lower, Condition until, Action then) {
      this.delegate = delegate;
      this.lower = lower;
      this.until = until;
      this.then = then;
    }

    @Override
    public CdcClient open() {
      CdcClient client = delegate.open();
      String held = lower == null ? null : List.of(lower).toString();
      return (CdcClient)
          java.lang.reflect.Proxy.newProxyInstance(
              CdcClient.class.getClassLoader(),
              new Class<?>[] {CdcClient.class},
              (proxy, method, args) -> {
                if (method.getName().equals("readTable")
                    && Objects.equals(
                        held,
                        ((TableQuery) args[0])
                            .lowerInclusive()
                            .map(Object::toString)
                            .orElse(null))) {
                  long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
                  while (!until.met() && System.nanoTime() < deadline) {
                    Thread.sleep(50);
                  }
                  then.run();
                }
                try {
                  return method.invoke(client, args);
                } catch (java.lang.reflect.InvocationTargetException e) {
                  throw e.getCause();
                }
              });
    }
  }

  /**
   * Chunk 1's reader waits for chunk 0 at most its bound (2 s here), then hands its files to the
   * ordered committer, and chunk 2's reader hands its over at once (its predecessor was handed
   * over); chunk 0's reader commits chunk 0, and the committer then commits 1 and 2: each once, in
   * order, none skipped.
   */
  @Test
  void chunksWhosePredecessorIsNotCommittedInTimeAreCommittedInOrderByTheOrderedCommitter() {
    orders();
    ChunkedSnapshotSpec spec = open(2);
    WriteChunksToDelta.CommitAfterRead.forgetHandOversInThisJvm();
    Pipeline p = pipeline();
    PCollection<CommittedChunk> out =
        p.apply(
            WriteChunksToDelta.of(
                read(
                    new HeldRead(
                        db.clientFactory(),
                        null,
                        () -> WriteChunksToDelta.CommitAfterRead.handedOver(1),
                        () -> {})),
                spec));
    assertChunksCommittedOnceTheLastCompleting(out);
    run(p);

    assertTrue(WriteChunksToDelta.CommitAfterRead.handedOver(1));
    assertEquals(List.of(0L, 1L, 2L), bronzeChunkCommits());
    assertEquals(Map.of(0, 2L, 1, 2L, 2, 2L), chunkRows());
    assertEquals(1, factsRows(FactsTable.EVENT_BOOTSTRAP).size());
  }

  /** Chunks 0, 1 and 2 come out once each, none skipped, chunk 2 completing the snapshot. */
  private static void assertChunksCommittedOnceTheLastCompleting(PCollection<CommittedChunk> out) {
    PAssert.that(out)
        .satisfies(
            chunks -> {
              List<String> got = new ArrayList<>();
              chunks.forEach(c -> got.add(c.chunk() + ":" + c.skipped() + ":" + c.completed()));
              got.sort(null);
              assertEquals(List.of("0:false:false", "1:false:false", "2:false:true"), got);
              return null;
            });
  }

  /** The only run of this JVM's hand-over record other than {@code except}: its hand-overs. */
  private static Map<Integer, String> handOversOfRunOtherThan(@Nullable String except) {
    Map<String, Map<Integer, String>> runs = WriteChunksToDelta.CommitAfterRead.handOvers();
    runs.remove(except);
    assertEquals(1, runs.size(), "one run: " + runs);
    return runs.values().iterator().next();
  }

  /**
   * The simulator's client with chunk 2's read held until chunk 1 is handed over (then {@code
   * beforeChunkTwo} runs) and chunk 0's until chunk 2 is: chunk 1's reader waits its bound for
   * chunk 0 and hands over, then chunk 2's reader decides.
   */
  private CdcClientFactory chunkOneThenTwoHandedOver(Action beforeChunkTwo) {
    return new HeldRead(
        new HeldRead(
            db.clientFactory(),
            null,
            () -> WriteChunksToDelta.CommitAfterRead.handedOver(2),
            () -> {}),
        4,
        () -> WriteChunksToDelta.CommitAfterRead.handedOver(1),
        beforeChunkTwo);
  }

  /** Orders 0..5 in bronze once each, in chunks 0..2 committed in order, and their facts rows. */
  private void assertEveryOrderCommittedOnceInChunkOrder() {
    assertEquals(List.of(0L, 1L, 2L), bronzeChunkCommits());
    assertEquals(Map.of(0, 2L, 1, 2L, 2, 2L), chunkRows());
    assertEquals(
        List.of(
            List.of(0, 0),
            List.of(0, 1),
            List.of(1, 2),
            List.of(1, 3),
            List.of(2, 4),
            List.of(2, 5)),
        chunkIds());
    assertEquals(1, factsRows(FactsTable.EVENT_BOOTSTRAP).size());
  }

  /** Whether a run other than {@code except} handed chunk {@code chunk} over, in this JVM. */
  private static boolean handedOverInRunOtherThan(@Nullable String except, int chunk) {
    return WriteChunksToDelta.CommitAfterRead.handOvers().entrySet().stream()
        .anyMatch(e -> !e.getKey().equals(except) && e.getValue().containsKey(chunk));
  }

  /**
   * Chunk 1's reader hands chunk 1 over (chunk 0 is held); chunk 2's reader then runs as on another
   * worker JVM (this JVM's record of hand-overs forgotten, so only the run's marker in bronze tells
   * it) and hands chunk 2 over at once because of chunk 1, not after its bound. Chunk 0's reader
   * commits chunk 0, the ordered committer 1 and 2: each once, in order; the completion deletes the
   * markers.
   */
  @Test
  void aChunkHandedOverOnAnotherWorkerMakesTheNextChunksReaderHandItsChunkOverAtOnce() {
    orders();
    ChunkedSnapshotSpec spec = open(2);
    WriteChunksToDelta.CommitAfterRead.forgetHandOversInThisJvm();
    CdcClientFactory held =
        chunkOneThenTwoHandedOver(WriteChunksToDelta.CommitAfterRead::forgetHandOversInThisJvm);
    Pipeline p = pipeline();
    PCollection<CommittedChunk> out = p.apply(WriteChunksToDelta.of(read(held), spec));
    assertChunksCommittedOnceTheLastCompleting(out);
    run(p);

    assertEquals(
        Map.of(2, "chunk 1 was handed to the ordered committer by another worker"),
        handOversOfRunOtherThan(null));
    assertEveryOrderCommittedOnceInChunkOrder();
    assertFalse(
        Files.exists(Path.of(bronze, WriteChunksToDelta.CommitAfterRead.HAND_OVERS)),
        "the completion deletes the hand-over markers");
  }

  /**
   * A run crashes with chunks 1 and 2 handed over: their markers stay in bronze. The rerun (a new
   * run id) is not misled by them: chunk 2's reader waits its bound for chunk 1 (held until then)
   * instead of handing over at once, chunk 1's reader commits chunk 1 itself, and the snapshot is
   * committed exactly once; its completion deletes the crashed run's markers too.
   */
  @Test
  void aRerunAfterACrashCommitsItsChunksItselfWhateverMarkersTheCrashedRunLeft()
      throws IOException {
    orders();
    ChunkedSnapshotSpec spec = open(2);
    WriteChunksToDelta.CommitAfterRead.forgetHandOversInThisJvm();
    CdcClientFactory crashingReads = chunkOneThenTwoHandedOver(() -> {});
    Pipeline crashing = pipeline();
    crashing.apply(
        WriteChunksToDelta.of(read(crashingReads), spec)
            .withCrash(CrashPlan.chunk(CrashPoint.AFTER_DATA_FILES, 1)));
    runToCrash(crashing, CrashPoint.AFTER_DATA_FILES, 1);

    assertEquals(Map.of(0, 2L), chunkRows());
    assertEquals(List.of(0L), bronzeChunkCommits());
    String crashedRun = WriteChunksToDelta.CommitAfterRead.handOvers().keySet().iterator().next();
    TableMarkers left = WriteChunksToDelta.CommitAfterRead.runMarkers(tables, spec, crashedRun);
    assertEquals(Set.of("1", "2"), left.names());
    assertTrue(
        left.read("1").orElseThrow().matches("chunk 0 is not committed after \\d+ ms"),
        left.read("1").orElseThrow());
    assertEquals(Optional.of("chunk 1 was handed to the ordered committer"), left.read("2"));

    CdcClientFactory rerunReads =
        new HeldRead(
            db.clientFactory(), 2, () -> handedOverInRunOtherThan(crashedRun, 2), () -> {});
    Pipeline rerun = pipeline();
    rerun.apply(WriteChunksToDelta.of(read(rerunReads), spec));
    run(rerun);

    Map<Integer, String> rerunHandOvers = handOversOfRunOtherThan(crashedRun);
    assertEquals(Set.of(2), rerunHandOvers.keySet(), "chunk 1's reader committed it");
    assertTrue(
        rerunHandOvers.get(2).matches("chunk 1 is not committed after \\d+ ms"),
        rerunHandOvers.get(2));
    assertEveryOrderCommittedOnceInChunkOrder();
    assertFalse(Files.exists(Path.of(bronze, WriteChunksToDelta.CommitAfterRead.HAND_OVERS)));
  }

  /**
   * A retried read of chunk 1 whose first attempt was handed over (its marker is there) commits
   * chunk 1 itself once chunk 0 is recorded, and chunk 2's reader is not held back by the marker of
   * chunk 1, which the facts table now records.
   */
  @Test
  void aChunksOwnMarkerAndMarkersOfRecordedChunksHoldNoReaderBack() throws IOException {
    orders();
    ChunkedSnapshotSpec spec = open(2);
    Instant time = commitTime(s);
    WriteChunksToDelta.Committer committer =
        new WriteChunksToDelta.Committer(spec, tables, null, false, null);
    committer.commit(emptyRead(0, time));
    TableMarkers markers = WriteChunksToDelta.CommitAfterRead.runMarkers(tables, spec, "retried");
    markers.put("1", "chunk 0 is not committed after 2000 ms");
    WriteChunksToDelta.CommitAfterRead reader =
        new WriteChunksToDelta.CommitAfterRead(spec, HadoopConf.empty(), null, "retried");
    reader.setup();

    WriteChunksToDelta.ReadChunk one = reader.afterRead(emptyRead(1, time));
    WriteChunksToDelta.ReadChunk two = reader.afterRead(emptyRead(2, time));

    assertEquals(1, one.committed().chunk());
    assertEquals(2, two.committed().chunk());
    assertEquals(List.of(0L, 1L, 2L), bronzeChunkCommits());
    assertEquals(Map.of(0, 0L, 1, 0L, 2, 0L), chunkRows());
    assertEquals(Set.of("1"), markers.names());
  }

  /** A read of chunk {@code c} with no rows, stamped S. */
  private ChunkRead<SnapshotFiles> emptyRead(int c, Instant time) {
    return new ChunkRead<>(
        c, s, time, CHUNKS.get(c).hi(), s, time, T0.plusSeconds(100), 0.5, 0, SnapshotFiles.NONE);
  }

  @Test
  void chunksArrivingOutOfOrderInAStreamingPipelineCommitInIndexOrder() {
    orders();
    ChunkedSnapshotSpec spec = open(2);
    Instant time = commitTime(s);
    List<KV<String, ChunkRead<WriteChunksToDelta.ReadChunk>>> reads = new ArrayList<>();
    for (int c = 0; c < 3; c++) {
      reads.add(
          KV.of(
              "app",
              new ChunkRead<>(
                  c,
                  s,
                  time,
                  CHUNKS.get(c).hi(),
                  s,
                  time,
                  T0.plusSeconds(100),
                  0.5,
                  0,
                  new WriteChunksToDelta.ReadChunk(SnapshotFiles.NONE, null))));
    }
    TestStream<KV<String, ChunkRead<WriteChunksToDelta.ReadChunk>>> arrivals =
        TestStream.create(
                KvCoder.of(
                    StringUtf8Coder.of(), ChunkRead.coder(WriteChunksToDelta.ReadChunk.coder())))
            .addElements(reads.get(2))
            .addElements(reads.get(0))
            .addElements(reads.get(1))
            .advanceWatermarkToInfinity();
    PipelineOptions options = PipelineOptionsFactory.create();
    options.as(StreamingOptions.class).setStreaming(true);
    Pipeline p = Pipeline.create(options);
    PCollection<CommittedChunk> out =
        p.apply(arrivals)
            .apply(
                ParDo.of(
                    new WriteChunksToDelta.CommitInOrder(
                        spec, HadoopConf.empty(), null, 0, "arrivals")));
    PAssert.that(out)
        .satisfies(
            chunks -> {
              int n = 0;
              for (CommittedChunk c : chunks) {
                n++;
                assertEquals(c.chunk() == 2, c.completed());
              }
              assertEquals(3, n);
              return null;
            });
    run(p);

    assertEquals(List.of(0L, 1L, 2L), bronzeChunkCommits());
    List<Long> factsOrder =
        tables.history(facts).stream()
            .filter(c -> ChunkedSnapshotFacts.chunkFactsAppId("app", s).equals(c.txnAppId()))
            .sorted(Comparator.comparingLong(CommitSummary::version))
            .map(c -> c.txnVersion().getAsLong())
            .toList();
    assertEquals(List.of(0L, 1L, 2L), factsOrder);
    assertEquals(Map.of(0, 0L, 1, 0L, 2, 0L), chunkRows());
    assertEquals(1, factsRows(FactsTable.EVENT_BOOTSTRAP).size());
  }

  @Test
  void aReadOfAnotherSnapshotOrOfChunksOutsideThePlanIsRefused() {
    orders();
    ChunkedSnapshotSpec spec = open(2);
    assertEquals(
        "Chunk 3 is not in the plan of snapshot " + s + ", which has chunks 0 to 2",
        assertThrows(
                IllegalArgumentException.class,
                () ->
                    WriteChunksToDelta.of(
                        read(db.clientFactory()).withChunks(List.of(new Chunk(3, null, null))),
                        spec))
            .getMessage());
    Lsn other = Lsn.parse("0x00000001000000010001");
    assertEquals(
        "The chunk read's snapshotLsn " + other + " is not the open snapshot's S " + s,
        assertThrows(
                IllegalArgumentException.class,
                () -> WriteChunksToDelta.of(read(db.clientFactory()).withSnapshotLsn(other), spec))
            .getMessage());
  }

  /**
   * A keyset plan's open last chunk reads up to the first key after MAX sought right before its
   * read (rows inserted above MAX stay the stream's), and that end is its facts row's {@code hi}.
   */
  @Test
  void anOpenLastChunksReSoughtEndIsItsFactsRowsHi() {
    orders();
    ChunkedSnapshotSpec spec = openWithPlan(2, "[[0,null,3],[1,3,null]]");
    FakeSqlServer.open(dir.resolve("src"))
        .transaction(T0.plusSeconds(3600))
        .insert("dbo.orders", Map.of("order_id", 7, "status", "s7"))
        .insert("dbo.orders", Map.of("order_id", 8, "status", "s8"))
        .commit();

    Pipeline p = pipeline();
    p.apply(
        WriteChunksToDelta.of(
            read(db.clientFactory())
                .withChunks(List.of(new Chunk(0, null, List.of(3)), new Chunk(1, List.of(3), null)))
                .withOpenEndAfter(List.of(5)),
            spec));
    run(p);

    assertEquals(
        List.of(
            List.of(0, 0),
            List.of(0, 1),
            List.of(0, 2),
            List.of(1, 3),
            List.of(1, 4),
            List.of(1, 5)),
        chunkIds());
    assertEquals(detail(0, 1, "3", "7", true), chunkFacts().get(1).get(FactsTable.DETAIL));
    assertEquals(6L, factsRows(FactsTable.EVENT_BOOTSTRAP).get(0).get(FactsTable.ROWS));
  }

  @Test
  void aCrashPointWithoutAChunkStopsAtTheFirstChunkTheRunCommits() {
    orders();
    ChunkedSnapshotSpec spec = open(2);
    Pipeline crashing = pipeline();
    crashing.apply(
        WriteChunksToDelta.of(read(db.clientFactory()), spec)
            .withCrash(CrashPlan.firstChunk(CrashPoint.AFTER_BRONZE_COMMIT)));
    runToCrash(crashing, CrashPoint.AFTER_BRONZE_COMMIT, 0);
    assertEquals(List.of(0L), bronzeChunkCommits());
    assertTrue(chunkRows().isEmpty());

    assertEquals(1, WriteChunksToDelta.repair(tables, spec));

    assertEquals(Map.of(0, 2L), chunkRows());
    assertEquals(
        1,
        ChunkedSnapshotFacts.read(tables, facts, "app", bronze)
            .chunked()
            .orElseThrow()
            .nextChunk());
  }
}
