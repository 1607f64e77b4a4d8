package org.lakecdc.deltaspark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Silver's engine checked by an independent reader: the transforms module's {@code
 * SilverModelWriter} (its own JVM: Kernel needs Parquet 1.16) drives {@code SilverMerge} and {@code
 * SilverMaintenance} through waves of updates, deletes, a re-insert of a deleted key, a key update,
 * a stale image, the NULL key, a compaction and a vacuum; this test keeps the model (one row per
 * key: the newest image by {@code _start_lsn}, deletes removing the key) and, after every wave,
 * reads silver with delta-spark 3.3 at that version ({@code VERSION AS OF}): the row count equals
 * the distinct keys and the model both ways ({@code EXCEPT ALL}). delta-spark {@code DELETE}s write
 * their own deletion vectors in between; the engine's later waves OR their positions into those
 * vectors. The log passes version 10 (a Kernel checkpoint); after the vacuum the versions from the
 * compaction on still read, older ones no longer do.
 */
@ExtendWith(SharedSpark.class)
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class SilverModelTest {
  @TempDir static Path dir;

  private static SparkSession spark;

  /** The model: key (null allowed) to "name|lsn". */
  private static final Map<Integer, String> model = new HashMap<>();

  /** The model after each version checked, by version. */
  private static final Map<Long, Map<Integer, String>> byVersion = new LinkedHashMap<>();

  private static String silver() {
    return dir.resolve("silver").toString();
  }

  private static String lsn(long lsn) {
    return String.format("0x%020X", lsn);
  }

  /** Applies one wave to the model: every image at this LSN. */
  private static void modelWave(long lsn, String images) {
    for (String image : images.split(";")) {
      String[] f = image.split(":", 3);
      Integer id = f[1].equals("null") ? null : Integer.valueOf(f[1]);
      String current = model.get(id);
      if (current != null && current.substring(current.indexOf('|') + 1).compareTo(lsn(lsn)) >= 0) {
        continue; // the row is as new as the image or newer
      }
      if (f[0].equals("D")) {
        model.remove(id);
      } else {
        model.put(id, f[2] + "|" + lsn(lsn));
      }
    }
  }

  /**
   * Writes the phase's operations, runs the writer, and records the model after each operation
   * under the version the writer reports.
   */
  private static List<String[]> runPhase(String phase, List<String> ops)
      throws IOException, InterruptedException {
    Files.createDirectories(dir);
    Files.write(dir.resolve("ops-" + phase + ".txt"), ops, StandardCharsets.UTF_8);
    WriterJvm writer =
        WriterJvm.start(
            "lakecdc.transforms.dir",
            "org.lakecdc.transforms.silver.SilverModelWriter",
            dir,
            phase);
    if (spark == null) {
      spark = holder.session();
    }
    writer.await();
    List<String> lines =
        Files.readAllLines(dir.resolve("results-" + phase + ".txt"), StandardCharsets.UTF_8);
    assertEquals(ops.size(), lines.size(), String.join("\n", lines));
    List<String[]> results = new ArrayList<>();
    for (int i = 0; i < ops.size(); i++) {
      String[] op = ops.get(i).split(" ");
      String[] result = lines.get(i).split(" ");
      if (op[0].equals("merge")) {
        modelWave(Long.parseLong(op[1]), op[2]);
      }
      byVersion.put(Long.parseLong(result[0]), new HashMap<>(model));
      results.add(result);
    }
    return results;
  }

  private static void sparkDelete(int id) {
    spark.sql("DELETE FROM delta.`" + silver() + "` WHERE id = " + id);
    model.remove(id);
    long version =
        spark.sql("DESCRIBE HISTORY delta.`" + silver() + "` LIMIT 1").first().getLong(0);
    byVersion.put(version, new HashMap<>(model));
  }

  private static SharedSpark.Holder holder;

  @BeforeAll
  static void session(SharedSpark.Holder shared) {
    holder = shared;
  }

  private static final StructType MODEL_SCHEMA =
      new StructType()
          .add("id", DataTypes.IntegerType)
          .add("name", DataTypes.StringType)
          .add("_start_lsn", DataTypes.StringType);

  private static Dataset<Row> modelFrame(Map<Integer, String> rows) {
    List<Row> list = new ArrayList<>();
    rows.forEach(
        (id, value) -> {
          String[] v = value.split("\\|");
          list.add(RowFactory.create(id, v[0], v[1]));
        });
    return spark.createDataFrame(list, MODEL_SCHEMA);
  }

  private static Dataset<Row> silverAt(long version) {
    return spark
        .read()
        .format("delta")
        .option("versionAsOf", version)
        .load(silver())
        .select("id", "name", "_start_lsn");
  }

  /**
   * Silver at each of these versions is that version's model: as many rows as distinct keys (NULL
   * one of them), as many as the model, and silver EXCEPT ALL model and model EXCEPT ALL silver
   * both empty. The versions are read together, each row tagged with its version, so a check is two
   * queries however many versions it covers (one for the counts, one for both differences, whose
   * rows a failure shows).
   */
  private static void assertVersionsAreModels(List<Long> versions) {
    Dataset<Row> actual = null;
    Dataset<Row> model = null;
    for (long version : versions) {
      Dataset<Row> a = silverAt(version).withColumn("version", functions.lit(version));
      Dataset<Row> m =
          modelFrame(byVersion.get(version)).withColumn("version", functions.lit(version));
      actual = actual == null ? a : actual.unionByName(a);
      model = model == null ? m : model.unionByName(m);
    }
    Map<Long, long[]> counts = new TreeMap<>();
    for (Row r : actual.groupBy("version", "id").count().collectAsList()) {
      long[] c = counts.computeIfAbsent(r.getLong(0), v -> new long[2]);
      c[0] += r.getLong(2);
      c[1]++;
    }
    for (long version : versions) {
      long[] c = counts.getOrDefault(version, new long[2]);
      int expected = byVersion.get(version).size();
      assertEquals(expected, c[0], "rows at version " + version);
      assertEquals(expected, c[1], "distinct keys at version " + version);
    }
    List<Row> differences =
        actual
            .exceptAll(model)
            .withColumn("only_in", functions.lit("silver"))
            .unionByName(model.exceptAll(actual).withColumn("only_in", functions.lit("model")))
            .collectAsList();
    assertEquals(List.of(), differences, "silver and model EXCEPT ALL at versions " + versions);
  }

  /** Checks every version recorded since the last check (the versions after the last waves). */
  private static List<Long> checkNewVersions(List<Long> checked) {
    List<Long> versions = new ArrayList<>();
    byVersion.forEach(
        (version, expected) -> {
          if (!checked.contains(version)) {
            checked.add(version);
            versions.add(version);
          }
        });
    assertVersionsAreModels(versions);
    return versions;
  }

  private static long filesAt(long version) {
    return spark
        .read()
        .format("delta")
        .option("versionAsOf", version)
        .load(silver())
        .inputFiles()
        .length;
  }

  @Test
  void silverIsTheModelAfterEveryWave() throws IOException, InterruptedException {
    List<Long> checked = new ArrayList<>();
    StringBuilder twenty = new StringBuilder();
    for (int i = 1; i <= 20; i++) {
      twenty.append(i == 1 ? "" : ";").append("U:").append(i).append(":a").append(i);
    }
    List<String[]> waves =
        runPhase(
            "waves",
            List.of(
                "merge 1 " + twenty,
                "merge 2 U:21:a21;U:null:n1;U:3:b3;D:5",
                "merge 3 D:21;U:5:b5;U:1:b1", // 5, deleted by wave 2, is inserted again
                "merge 4 D:2;U:102:b102", // a key update: row 2 moved to key 102
                "merge 3 U:102:stale;U:30:a30;D:4;D:999")); // 102 is newer; 999 is absent
    // Versions 0 and 1 create the table; each wave is one version.
    assertEquals(List.of(2L, 3L, 4L, 5L, 6L), checkNewVersions(checked));
    assertEquals(List.of("6", "1", "0", "1"), List.of(waves.get(4)));

    // delta-spark deletes key 7 with a deletion vector of its own on the first wave's file.
    sparkDelete(7);
    assertEquals(List.of(7L), checkNewVersions(checked));
    Row added =
        spark
            .read()
            .json(dir.resolve("silver/_delta_log/00000000000000000007.json").toString())
            .where("add IS NOT NULL")
            .select("add.deletionVector.cardinality")
            .first();
    // Rows 1, 2, 3, 4, 5 (the engine's) and 7 (delta-spark's) of the first file are deleted.
    assertEquals(6L, added.getLong(0));

    long filesBeforeCompaction;
    List<String[]> second =
        runPhase(
            "after-delete",
            List.of(
                "merge 6 U:8:c8;U:7:c7;U:null:n2", // 8 is in the file with delta-spark's vector
                "merge 7 D:null;U:9:c9",
                "compact",
                "merge 8 U:10:d10;D:11",
                "merge 9 U:null:n3;U:12:d12")); // the NULL key inserted again
    assertEquals(List.of(8L, 9L, 10L, 11L, 12L), checkNewVersions(checked));
    filesBeforeCompaction = filesAt(9);
    assertEquals(List.of("10", String.valueOf(filesBeforeCompaction), "1"), List.of(second.get(2)));
    assertEquals(1, filesAt(10));
    assertTrue(
        Files.exists(dir.resolve("silver/_delta_log/00000000000000000010.checkpoint.parquet")));

    sparkDelete(13); // a vector of delta-spark's on the compacted file
    assertEquals(List.of(13L), checkNewVersions(checked));

    long vacuumedFiles;
    List<String[]> last =
        runPhase("vacuum", List.of("vacuum 10", "merge 10 U:13:e13;U:14:e14;D:15"));
    vacuumedFiles = Long.parseLong(last.get(0)[1]);
    assertEquals(List.of(14L), checkNewVersions(new ArrayList<>(checked)));
    assertTrue(vacuumedFiles >= filesBeforeCompaction, "vacuumed " + vacuumedFiles);

    // After the vacuum, the versions from the compaction on still read as their models (14 was
    // checked above)...
    assertVersionsAreModels(List.of(10L, 11L, 12L, 13L));
    // ...and the versions before it, whose files the vacuum deleted, no longer do (collected:
    // delta-spark answers a count from the log's statistics alone).
    assertThrows(Exception.class, () -> silverAt(9).collectAsList());

    Map<Integer, String> expected = new HashMap<>();
    for (String row :
        List.of(
            "1|b1|3",
            "3|b3|2",
            "5|b5|3",
            "6|a6|1",
            "7|c7|6",
            "8|c8|6",
            "9|c9|7",
            "10|d10|8",
            "12|d12|9",
            "13|e13|10",
            "14|e14|10",
            "16|a16|1",
            "17|a17|1",
            "18|a18|1",
            "19|a19|1",
            "20|a20|1",
            "30|a30|3",
            "102|b102|4",
            "null|n3|9")) {
      String[] f = row.split("\\|");
      expected.put(
          f[0].equals("null") ? null : Integer.valueOf(f[0]),
          f[1] + "|" + lsn(Long.parseLong(f[2])));
    }
    // The model itself, spelled out: the latest version was checked against it above.
    assertEquals(expected, model);
    assertEquals(expected, byVersion.get(14L));
  }
}
