package org.lakecdc.deltaspark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.delta.DeltaLog;
import org.apache.spark.sql.delta.actions.Action;
import org.apache.spark.sql.delta.actions.AddFile;
import org.apache.spark.sql.delta.actions.DeletionVectorDescriptor;
import org.apache.spark.sql.delta.actions.RemoveFile;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import scala.Tuple2;
import scala.collection.JavaConverters;

/**
 * delta-spark 3.3 checks silver against bronze independently, after the main job's runs and after a
 * crash mid-wave: the pipelines module's {@code SilverCrashJob} (in its own JVM) runs the main job
 * with {@code --silver} on the DirectRunner over a source with updates, deletes, re-inserts and key
 * updates (run 1, bootstrap then changes), commits more changes, crashes run 2 in silver's second
 * wave after the wave's Parquet file and deletion vector file are written and before its commit,
 * then converges in run 3; it records the versions and silver's files (its Javadoc).
 *
 * <p>Here Spark SQL ranks the latest image per key from bronze alone: the rows that count (the
 * newest snapshot's operation-0 rows and the change rows after it), {@code ROW_NUMBER() OVER
 * (PARTITION BY order_id ORDER BY _start_lsn DESC, _command_id DESC NULLS LAST, _seqval DESC NULLS
 * LAST, _operation DESC) = 1}, dropping operations 1 and 3; silver (time travel to each recorded
 * version) must equal it both ways with {@code EXCEPT ALL}, one row per key.
 */
@ExtendWith(SharedSpark.class)
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class SilverCrashTest {
  /** Silver's columns: the captured ones, then the image's position. */
  private static final String COLUMNS =
      "order_id, status, amount, updated_at, _start_lsn, _commit_ts";

  @TempDir static Path dir;

  private static SparkSession spark;
  private static List<String[]> record;

  @BeforeAll
  static void runTheJob(SharedSpark.Holder shared) throws IOException, InterruptedException {
    WriterJvm writer =
        WriterJvm.start("lakecdc.pipelines.dir", "org.lakecdc.pipelines.SilverCrashJob", dir);
    spark = shared.session();
    writer.await();
    record = new ArrayList<>();
    for (String line :
        Files.readAllLines(dir.resolve("silver-crash.tsv"), StandardCharsets.UTF_8)) {
      record.add(line.split("\t", -1));
    }
  }

  private static String bronze() {
    return dir.resolve("delta/dbo_orders").toString();
  }

  private static String silver() {
    return dir.resolve("delta/silver/dbo_orders").toString();
  }

  private static String reference() {
    return dir.resolve("delta/silver/reference").toString();
  }

  /** The recorded line of {@code tag} (run1, crash, final): its fields after the tag. */
  private static String[] recorded(String tag) {
    return record.stream()
        .filter(f -> f[0].equals(tag))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no " + tag + " line in the record"));
  }

  /** The recorded files of {@code tag} (before_crash, after_crash). */
  private static Set<String> recordedFiles(String tag) {
    Set<String> files = new TreeSet<>();
    record.stream().filter(f -> f[0].equals(tag)).forEach(f -> files.add(f[1]));
    return files;
  }

  /** Silver's rows at {@code version}, as a query. */
  private static String silverAt(long version) {
    return "SELECT " + COLUMNS + " FROM delta.`" + silver() + "` VERSION AS OF " + version;
  }

  /** The latest image per key of bronze at {@code version}, by delta-spark SQL alone. */
  private static String latestFromBronze(long version) {
    return "WITH b AS (SELECT * FROM delta.`"
        + bronze()
        + "` VERSION AS OF "
        + version
        + "), s AS (SELECT max(_snapshot) AS snap FROM b),"
        + " counted AS (SELECT b.* FROM b CROSS JOIN s WHERE (b._snapshot IS NOT NULL AND"
        + " b._snapshot = s.snap AND b._operation = 0) OR (b._snapshot IS NULL AND (s.snap IS NULL"
        + " OR b._start_lsn > s.snap))),"
        + " ranked AS (SELECT *, ROW_NUMBER() OVER (PARTITION BY order_id ORDER BY _start_lsn DESC,"
        + " _command_id DESC NULLS LAST, _seqval DESC NULLS LAST, _operation DESC) AS rn FROM"
        + " counted)"
        + " SELECT "
        + COLUMNS
        + " FROM ranked WHERE rn = 1 AND _operation NOT IN (1, 3)";
  }

  private static List<String> rows(String query) {
    List<String> out = new ArrayList<>();
    for (Row r : spark.sql(query).collectAsList()) {
      out.add(r.mkString(" | "));
    }
    out.sort(null);
    return out;
  }

  private static int views;

  /**
   * Both {@code EXCEPT ALL} differences are empty, and {@code actual} has one row per key. Each
   * side is read from Delta once (checkpointed in memory), then compared.
   *
   * @return the view name of {@code actual}'s checkpointed rows
   */
  private static String assertSameRows(String actual, String expected, String what) {
    String a = "actual_" + ++views;
    String e = "expected_" + views;
    spark.sql(actual).localCheckpoint().createOrReplaceTempView(a);
    spark.sql(expected).localCheckpoint().createOrReplaceTempView(e);
    List<String> missing = rows("SELECT * FROM " + e + " EXCEPT ALL SELECT * FROM " + a);
    List<String> extra = rows("SELECT * FROM " + a + " EXCEPT ALL SELECT * FROM " + e);
    assertTrue(
        missing.isEmpty() && extra.isEmpty(),
        what
            + ": missing "
            + missing
            + ", unexpected "
            + extra
            + "; got "
            + rows("SELECT * FROM " + a));
    Row counts = spark.sql("SELECT count(*), count(DISTINCT order_id) FROM " + a).first();
    assertEquals(counts.getLong(0), counts.getLong(1), what + ": one row per key");
    return a;
  }

  /** "order_id status amount" of each row of a view, in key order. */
  private static List<String> keysAndValues(String view) {
    List<String> out = new ArrayList<>();
    for (Row r :
        spark
            .sql("SELECT order_id, status, amount FROM " + view + " ORDER BY order_id")
            .collectAsList()) {
      out.add(r.get(0) + " " + r.get(1) + " " + r.get(2));
    }
    return out;
  }

  @Test
  void afterTheFirstRunSilverEqualsTheLatestImagePerKeyOfBronze() {
    String[] run1 = recorded("run1");
    String silver =
        assertSameRows(
            silverAt(Long.parseLong(run1[2])),
            latestFromBronze(Long.parseLong(run1[1])),
            "silver after run 1");
    // Snapshot {1, 2, 4, 5, 6}; then 7 and 8 inserted and 1 updated; 4 deleted and 5 moved to 50;
    // 3 re-inserted and 6 updated twice in one transaction; 7 deleted and inserted again.
    assertEquals(
        List.of(
            "1 shipped 10.00",
            "2 paid 20.00",
            "3 again 33.00",
            "6 new 62.00",
            "7 reinserted 77.00",
            "8 new 80.00",
            "50 new 50.00"),
        keysAndValues(silver));
  }

  @Test
  void afterTheCrashAndTheRerunSilverEqualsTheLatestImagePerKeyOfBronze() {
    String[] last = recorded("final");
    String silver =
        assertSameRows(
            silverAt(Long.parseLong(last[2])),
            latestFromBronze(Long.parseLong(last[1])),
            "silver after run 3");
    assertEquals(
        Long.parseLong(last[2]),
        spark.sql("DESCRIBE HISTORY delta.`" + silver() + "` LIMIT 1").first().getLong(0),
        "the recorded version is silver's latest");
    // Then 1 and 8 updated; 50 deleted and 4 inserted again; 6 moved to 60; 7 updated and 2
    // deleted; 3 updated.
    assertEquals(
        List.of(
            "1 shipped 11.00",
            "3 paid 33.00",
            "4 back 44.00",
            "7 paid 77.00",
            "8 paid 80.00",
            "60 new 62.00"),
        keysAndValues(silver));
    // Run 2 committed its first wave (commit 10) before the crash, run 3 the three waves left.
    assertEquals(
        Long.parseLong(recorded("run1")[2]) + 1, Long.parseLong(recorded("crash")[1]), "crash");
    assertEquals(Long.parseLong(recorded("crash")[1]) + 3, Long.parseLong(last[2]), "final");
  }

  @Test
  void theCrashedWavesFilesAreNeverReferencedAndSilverReadsAsIfItNeverHappened() {
    long crash = Long.parseLong(recorded("crash")[1]);
    Set<String> orphans = new TreeSet<>(recordedFiles("after_crash"));
    orphans.removeAll(referenced(crash));
    // The crashed wave wrote one Parquet file of its new images and one deletion vector file.
    assertEquals(2, orphans.size(), orphans.toString());
    assertEquals(
        1, orphans.stream().filter(f -> f.startsWith("deletion_vector_")).count(), "" + orphans);
    assertEquals(1, orphans.stream().filter(f -> f.endsWith(".parquet")).count(), "" + orphans);
    for (String file : orphans) {
      assertTrue(Files.exists(Path.of(silver(), file)), file + " is still on disk");
    }
    Set<String> everReferenced = referenced(Long.MAX_VALUE);
    for (String file : orphans) {
      assertTrue(!everReferenced.contains(file), file + " is referenced by silver's log");
    }
    // The files before the crash are all referenced at the crash's version (nothing else orphan).
    Set<String> before = new TreeSet<>(recordedFiles("before_crash"));
    before.removeAll(referenced(crash));
    assertEquals(Set.of(), before);

    // Silver equals a silver applied once from the final bronze by a fresh applier.
    String current = "SELECT " + COLUMNS + " FROM delta.`" + silver() + "`";
    String never = "SELECT " + COLUMNS + " FROM delta.`" + reference() + "`";
    assertSameRows(current, never, "silver against the silver of no crash");
  }

  @Test
  void deltaSparkReadsSilversDeletionVectors() {
    Row detail =
        spark
            .sql("DESCRIBE DETAIL delta.`" + silver() + "`")
            .select("minReaderVersion", "minWriterVersion", "tableFeatures")
            .first();
    assertEquals(3, detail.getInt(0));
    assertEquals(7, detail.getInt(1));
    List<String> features = JavaConverters.seqAsJavaList(detail.getSeq(2));
    assertTrue(features.contains("deletionVectors"), features.toString());
    List<AddFile> live = liveFiles();
    long vectors = live.stream().filter(a -> a.deletionVector() != null).count();
    assertTrue(vectors > 0, "a live file carries a deletion vector: " + live);
    long physical =
        live.stream().mapToLong(a -> ((Number) a.numPhysicalRecords().get()).longValue()).sum();
    long deleted =
        live.stream()
            .filter(a -> a.deletionVector() != null)
            .mapToLong(a -> a.deletionVector().cardinality())
            .sum();
    long rows = spark.sql("SELECT count(*) FROM delta.`" + silver() + "`").first().getLong(0);
    assertEquals(6, rows);
    assertEquals(physical - deleted, rows, "delta-spark honours the deletion vectors");
    assertTrue(physical > rows, "some rows are deleted by vectors only");
  }

  /** Silver's live files: the log replayed (an add replaces, a remove drops its path's add). */
  private static List<AddFile> liveFiles() {
    java.util.Map<String, AddFile> live = new java.util.TreeMap<>();
    scala.collection.Iterator<Tuple2<Object, scala.collection.Seq<Action>>> log =
        DeltaLog.forTable(spark, silver()).getChanges(0L, true);
    while (log.hasNext()) {
      for (Action action : JavaConverters.seqAsJavaList(log.next()._2())) {
        if (action instanceof RemoveFile remove) {
          live.remove(remove.path());
        } else if (action instanceof AddFile add) {
          live.put(add.path(), add);
        }
      }
    }
    return new ArrayList<>(live.values());
  }

  /**
   * The data and deletion vector files (relative to silver) referenced by versions up to {@code
   * upTo}.
   */
  private static Set<String> referenced(long upTo) {
    Set<String> files = new TreeSet<>();
    org.apache.hadoop.fs.Path table = new org.apache.hadoop.fs.Path(silver());
    scala.collection.Iterator<Tuple2<Object, scala.collection.Seq<Action>>> log =
        DeltaLog.forTable(spark, silver()).getChanges(0L, true);
    while (log.hasNext()) {
      Tuple2<Object, scala.collection.Seq<Action>> version = log.next();
      if ((Long) version._1() > upTo) {
        break;
      }
      for (Action action : JavaConverters.seqAsJavaList(version._2())) {
        if (action instanceof AddFile add) {
          files.add(add.path());
          DeletionVectorDescriptor dv = add.deletionVector();
          if (dv != null) {
            files.add(dv.absolutePath(table).getName());
          }
        }
      }
    }
    return files;
  }
}
