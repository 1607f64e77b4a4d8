package org.lakecdc.deltaspark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * delta-spark 3.3 checks a chunked snapshot independently: the transforms module's {@code
 * ChunkedSnapshotSparkWriter} (its own JVM: Kernel needs Parquet 1.16) plans the simulator's {@code
 * dbo.orders} (the even keys 2..90 at S) with {@code ChunkPlanner}, writes the {@code
 * snapshot_open}/{@code snapshot_plan} facts rows, writes wave 0 then the rest with {@code
 * WriteChunksToDelta} on the DirectRunner, writes the changes committed around the waves with the
 * ordinary change write ({@code WriteChangesToDelta}) and applies silver ({@code SilverApplier})
 * after each change write, recording the versions (its Javadoc).
 *
 * <p>Here Spark SQL reads bronze, facts and silver: every chunk's operation-0 rows match its facts
 * row and the simulator's table at S per key range (counted here in plain Java from the recorded
 * rows at S); silver while the snapshot is open (deletion vectors on) is the latest image per key
 * of the applied waves' chunk rows and the changes after S, and after completion it is bronze's
 * latest image per key as {@code ROW_NUMBER()} ranks it and the simulator's table; the facts
 * table's chunk rows tile the plan.
 */
@ExtendWith(SharedSpark.class)
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class ChunkedSnapshotSparkTest {
  /** Silver's columns: the captured ones, then the image's position. */
  private static final String COLUMNS = "order_id, status, _start_lsn, _commit_ts";

  @TempDir static Path dir;

  private static SparkSession spark;
  private static String s;
  private static int perWave;
  private static final Map<Integer, String> atS = new TreeMap<>();
  private static final Map<Integer, String> tableAtEnd = new TreeMap<>();

  /** Each apply while open: silver version, bronze version, chunks applied. */
  private static final List<long[]> opens = new ArrayList<>();

  private static long[] last;

  @BeforeAll
  static void runTheWriter(SharedSpark.Holder shared) throws IOException, InterruptedException {
    WriterJvm writer =
        WriterJvm.start(
            "lakecdc.transforms.dir",
            "org.lakecdc.transforms.snapshot.ChunkedSnapshotSparkWriter",
            dir);
    spark = shared.session();
    writer.await();
    for (String line : Files.readAllLines(dir.resolve("chunked.tsv"), StandardCharsets.UTF_8)) {
      String[] f = line.split("\t", -1);
      switch (f[0]) {
        case "s" -> s = f[1];
        case "k" -> perWave = Integer.parseInt(f[1]);
        case "at_s" -> atS.put(Integer.valueOf(f[1]), f[2]);
        case "table" -> tableAtEnd.put(Integer.valueOf(f[1]), f[2]);
        case "open" ->
            opens.add(
                new long[] {Long.parseLong(f[1]), Long.parseLong(f[2]), Long.parseLong(f[3])});
        case "final" -> last = new long[] {Long.parseLong(f[1]), Long.parseLong(f[2])};
        default -> throw new AssertionError("Unknown record line " + line);
      }
    }
  }

  private static String bronze() {
    return dir.resolve("bronze").toString();
  }

  private static String silver() {
    return dir.resolve("silver").toString();
  }

  private static String facts() {
    return dir.resolve("facts").toString();
  }

  private static String table(String path) {
    return "delta.`" + path + "`";
  }

  private static List<Row> sql(String query) {
    return spark.sql(query).collectAsList();
  }

  private static long count(String query) {
    return sql(query).get(0).getLong(0);
  }

  /** One {@code snapshot_chunk} facts row as Spark reads its detail JSON. */
  record ChunkRow(int chunk, int wave, Long lo, Long hi, boolean last, long rows, String stamp) {}

  /** The facts table's chunk rows, by chunk. */
  private static List<ChunkRow> chunkRows() {
    List<ChunkRow> out = new ArrayList<>();
    for (Row r :
        sql(
            "SELECT CAST(get_json_object(detail, '$.chunk') AS INT),"
                + " CAST(get_json_object(detail, '$.wave') AS INT),"
                + " CAST(get_json_object(detail, '$.lo') AS BIGINT),"
                + " CAST(get_json_object(detail, '$.hi') AS BIGINT),"
                + " CAST(get_json_object(detail, '$.last') AS BOOLEAN), rows, min_lsn FROM "
                + table(facts())
                + " WHERE event = 'snapshot_chunk' AND target = '"
                + bronze()
                + "' AND get_json_object(detail, '$.snapshot') = '"
                + s
                + "' ORDER BY 1")) {
      out.add(
          new ChunkRow(
              r.getInt(0),
              r.getInt(1),
              r.isNullAt(2) ? null : r.getLong(2),
              r.isNullAt(3) ? null : r.getLong(3),
              r.getBoolean(4),
              r.getLong(5),
              r.getString(6)));
    }
    return out;
  }

  private static String range(ChunkRow c) {
    return (c.lo() == null ? "TRUE" : "order_id >= " + c.lo())
        + " AND "
        + (c.hi() == null ? "TRUE" : "order_id < " + c.hi());
  }

  @Test
  void eachChunksOperationZeroRowsAreItsFactsRowAndTheTableAtSInItsRange() {
    List<ChunkRow> chunks = chunkRows();
    assertEquals(8, chunks.size(), chunks.toString());
    // Per _chunk: rows, distinct keys, distinct stamps, the stamp, rows in the chunk's own range;
    // then, per range of the plan, every op-0 row in it whatever its _chunk.
    StringBuilder query =
        new StringBuilder(
            "SELECT _chunk, count(*), count(DISTINCT order_id), count(DISTINCT _start_lsn),"
                + " min(_start_lsn), sum(CASE");
    for (ChunkRow c : chunks) {
      query.append(" WHEN _chunk = ").append(c.chunk()).append(" AND ").append(range(c));
      query.append(" THEN 1");
    }
    query.append(" ELSE 0 END)");
    for (ChunkRow c : chunks) {
      query.append(", sum(sum(CASE WHEN ").append(range(c)).append(" THEN 1 ELSE 0 END)) OVER ()");
    }
    query
        .append(" FROM ")
        .append(table(bronze()))
        .append(" WHERE _operation = 0 GROUP BY _chunk ORDER BY _chunk");
    List<Row> byChunk = sql(query.toString());
    assertEquals(chunks.size(), byChunk.size(), "op-0 rows of every chunk, none without one");
    for (int i = 0; i < chunks.size(); i++) {
      ChunkRow c = chunks.get(i);
      Row r = byChunk.get(i);
      String what = "chunk " + c.chunk() + " [" + c.lo() + ", " + c.hi() + ")";
      assertEquals(c.chunk(), r.getInt(0));
      assertEquals(c.rows(), r.getLong(1), what + ": op-0 rows = the facts row's rows");
      assertEquals(c.rows(), r.getLong(2), what + ": distinct keys");
      assertEquals(1, r.getLong(3), what + ": one stamp");
      assertEquals(c.stamp(), r.getString(4), what + ": the facts row's stamp");
      assertTrue(c.stamp().compareTo(s) >= 0, what + ": stamp " + c.stamp() + " below S " + s);
      assertEquals(c.rows(), r.getLong(5), what + ": its rows lie in its range");
      long expected =
          atS.keySet().stream()
              .filter(k -> (c.lo() == null || k >= c.lo()) && (c.hi() == null || k < c.hi()))
              .count();
      assertTrue(expected > 0, what + " holds rows at S");
      assertEquals(expected, r.getLong(6 + i), what + ": op-0 rows in it = the table at S");
    }

    // Every op-0 row is of S, stamped at or after S; no change row is of a snapshot.
    Row checks =
        sql("SELECT count(*), count(DISTINCT order_id),"
                + " count_if(_snapshot IS NULL OR _snapshot <> '"
                + s
                + "' OR _start_lsn < '"
                + s
                + "' OR _seqval IS NOT NULL OR _command_id IS NOT NULL),"
                + " (SELECT count_if(_snapshot IS NOT NULL OR _chunk IS NOT NULL) FROM "
                + table(bronze())
                + " WHERE _operation <> 0),"
                + " (SELECT count(*) FROM "
                + table(bronze())
                + " WHERE _operation <> 0) FROM "
                + table(bronze())
                + " WHERE _operation = 0")
            .get(0);
    assertEquals(atS.size(), checks.getLong(0));
    assertEquals(atS.size(), checks.getLong(1), "keys unique among op-0 rows");
    assertEquals(0, checks.getLong(2), "op-0 rows not of S or below it");
    assertEquals(0, checks.getLong(3), "change rows marked as snapshot rows");
    assertTrue(checks.getLong(4) > 0, "bronze holds change rows");
  }

  @Test
  void theFactsChunkRowsTileThePlanContiguously() {
    List<ChunkRow> chunks = chunkRows();
    List<Row> plan =
        sql(
            "SELECT get_json_object(detail, '$.chunks'),"
                + " CAST(get_json_object(detail, '$.chunks_per_wave') AS INT) FROM "
                + table(facts())
                + " WHERE event = 'snapshot_plan' AND min_lsn = '"
                + s
                + "'");
    assertEquals(1, plan.size());
    assertEquals(perWave, plan.get(0).getInt(1));
    StringBuilder tiles = new StringBuilder("[");
    for (int i = 0; i < chunks.size(); i++) {
      ChunkRow c = chunks.get(i);
      assertEquals(i, c.chunk());
      assertEquals(i / perWave, c.wave());
      assertEquals(i == chunks.size() - 1, c.last(), "last of chunk " + i);
      if (i == 0) {
        assertNull(c.lo(), "the first chunk is open below");
      } else {
        assertEquals(chunks.get(i - 1).hi(), c.lo(), "chunk " + i + " starts where " + (i - 1));
      }
      tiles.append(i == 0 ? "" : ",").append('[').append(i).append(',').append(c.lo());
      tiles.append(',').append(c.hi()).append(']');
    }
    // The chunk rows are the plan's chunks, in order.
    assertEquals(tiles.append(']').toString(), plan.get(0).getString(0));
    // An int plan ends at MAX + 1 (MAX = the largest key at S).
    long max = ((TreeMap<Integer, String>) atS).lastKey();
    assertEquals(max + 1, chunks.get(chunks.size() - 1).hi());
    Row done =
        sql("SELECT rows, get_json_object(detail, '$.chunks') FROM "
                + table(facts())
                + " WHERE event = 'bootstrap' AND min_lsn = '"
                + s
                + "'")
            .get(0);
    assertEquals(chunks.stream().mapToLong(ChunkRow::rows).sum(), done.getLong(0));
    assertEquals(String.valueOf(chunks.size()), done.getString(1));
  }

  /** The rows that count at bronze {@code version}: chunk rows below {@code chunks}, changes. */
  private static String latestFromBronze(long version, long chunks) {
    return "WITH b AS (SELECT * FROM "
        + table(bronze())
        + " VERSION AS OF "
        + version
        + "), counted AS (SELECT * FROM b WHERE (_operation = 0 AND _snapshot = '"
        + s
        + "' AND _chunk < "
        + chunks
        + ") OR (_snapshot IS NULL AND _start_lsn > '"
        + s
        + "')),"
        + " ranked AS (SELECT *, ROW_NUMBER() OVER (PARTITION BY order_id ORDER BY _start_lsn DESC,"
        + " _command_id DESC NULLS LAST, _seqval DESC NULLS LAST, _operation DESC) AS rn FROM"
        + " counted)"
        + " SELECT "
        + COLUMNS
        + " FROM ranked WHERE rn = 1 AND _operation NOT IN (1, 3)";
  }

  private static String silverAt(long version) {
    return "SELECT " + COLUMNS + " FROM " + table(silver()) + " VERSION AS OF " + version;
  }

  private static List<String> rows(String query) {
    List<String> out = new ArrayList<>();
    for (Row r : sql(query)) {
      out.add(r.mkString(" | "));
    }
    out.sort(null);
    return out;
  }

  private static int views;

  /**
   * Both EXCEPT ALL differences are empty and {@code actual} has one row per key, its rows more
   * than none. Each side is read from Delta once (checkpointed in memory), then two queries: the
   * differences (whose rows a failure shows) and the counts.
   */
  private static void assertSameRows(String actual, String expected, String what) {
    String a = "chunked_actual_" + ++views;
    String e = "chunked_expected_" + views;
    spark.sql(actual).localCheckpoint().createOrReplaceTempView(a);
    spark.sql(expected).localCheckpoint().createOrReplaceTempView(e);
    List<String> differences =
        rows(
            "SELECT 'missing', * FROM (SELECT * FROM "
                + e
                + " EXCEPT ALL SELECT * FROM "
                + a
                + ") UNION ALL SELECT 'unexpected', * FROM (SELECT * FROM "
                + a
                + " EXCEPT ALL SELECT * FROM "
                + e
                + ")");
    assertEquals(List.of(), differences, what + ": silver EXCEPT ALL expected, both ways");
    Row keys = sql("SELECT count(*), count(DISTINCT order_id) FROM " + a).get(0);
    assertEquals(keys.getLong(0), keys.getLong(1), what + ": one row per key");
    assertTrue(keys.getLong(0) > 0, what + ": rows");
  }

  @Test
  void silverWhileOpenIsTheLatestImageOfTheAppliedWavesAndTheChanges() {
    assertEquals(3, opens.size());
    assertEquals(
        List.of(0L, (long) perWave, (long) perWave), opens.stream().map(o -> o[2]).toList());
    assertEquals(
        "true",
        sql("SHOW TBLPROPERTIES " + table(silver()) + " ('delta.enableDeletionVectors')")
            .get(0)
            .getString(1));
    for (long[] open : opens) {
      assertSameRows(
          silverAt(open[0]),
          latestFromBronze(open[1], open[2]),
          "silver version " + open[0] + " (" + open[2] + " chunks applied)");
    }
    // The applied wave's keys: exactly the keys at S in wave 0's ranges, less the deleted one,
    // plus the inserted one, whatever changed after S; the rest's keys only where changed.
    List<ChunkRow> chunks = chunkRows();
    long[] applied = opens.get(2);
    String inWave0 =
        "("
            + String.join(
                " OR ", chunks.subList(0, perWave).stream().map(c -> "(" + range(c) + ")").toList())
            + ")";
    long wave0Keys = count("SELECT count(*) FROM (" + silverAt(applied[0]) + ") WHERE " + inWave0);
    long atSInWave0 =
        count(
            "SELECT count(*) FROM "
                + table(bronze())
                + " VERSION AS OF "
                + applied[1]
                + " WHERE _operation = 0 AND _chunk < "
                + perWave);
    assertEquals(atSInWave0, wave0Keys, "one deleted, one inserted in wave 0's ranges");
    // Deletion vectors: silver's updates while open marked rows of its files deleted.
    List<String> logs = new ArrayList<>();
    for (long v = 0; v <= applied[0]; v++) {
      logs.add(dir.resolve(String.format("silver/_delta_log/%020d.json", v)).toString());
    }
    long withVectors =
        spark
            .read()
            .json(logs.toArray(String[]::new))
            .where("add IS NOT NULL AND add.deletionVector IS NOT NULL")
            .count();
    assertTrue(withVectors > 0, "silver wrote deletion vectors while open");
  }

  @Test
  void silverAfterCompletionIsBronzesLatestImagePerKeyAndTheSimulatorsTable() {
    // The ranking over the newest snapshot's rows and every change after it, as SilverCrashTest
    // counts them, with no knowledge of chunks.
    assertSameRows(
        silverAt(last[0]),
        "WITH b AS (SELECT * FROM "
            + table(bronze())
            + " VERSION AS OF "
            + last[1]
            + "), s AS (SELECT max(_snapshot) AS snap FROM b),"
            + " counted AS (SELECT b.* FROM b CROSS JOIN s WHERE (b._snapshot = s.snap AND"
            + " b._operation = 0) OR (b._snapshot IS NULL AND b._start_lsn > s.snap)),"
            + " ranked AS (SELECT *, ROW_NUMBER() OVER (PARTITION BY order_id ORDER BY"
            + " _start_lsn DESC, _command_id DESC NULLS LAST, _seqval DESC NULLS LAST,"
            + " _operation DESC) AS rn FROM counted)"
            + " SELECT "
            + COLUMNS
            + " FROM ranked WHERE rn = 1 AND _operation NOT IN (1, 3)",
        "silver after completion vs bronze ranked");
    List<String> expected = new ArrayList<>();
    tableAtEnd.forEach((k, v) -> expected.add(k + " | " + v));
    expected.sort(null);
    assertEquals(
        expected,
        rows("SELECT order_id, status FROM " + table(silver()) + " VERSION AS OF " + last[0]),
        "silver = the simulator's table");
    assertEquals(
        last[0], sql("DESCRIBE HISTORY " + table(silver()) + " LIMIT 1").get(0).getLong(0));
  }
}
