package org.lakecdc.deltaspark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * delta-spark 3.3 checks the history table against bronze at every instant: the pipelines module's
 * {@code HistorySparkJob} (in its own JVM) streams a source with updates, deletes, re-inserts and
 * key moves after a bootstrap snapshot and applies the history twice (small waves, the second
 * closing versions with deletion vectors). Here, for every commit time T of bronze and T + 0.5 s,
 * the history rows with {@code _valid_from_ts <= T < _valid_to_ts} (or open) must equal, both ways
 * with {@code EXCEPT ALL}, the latest image per key that Spark SQL ranks from bronze's rows
 * committed at or before T (the newest snapshot's rows and the changes after it).
 */
@ExtendWith(SharedSpark.class)
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class HistorySparkTest {
  @TempDir static Path dir;

  private static SparkSession spark;

  @BeforeAll
  static void runTheJob(SharedSpark.Holder shared) throws IOException, InterruptedException {
    WriterJvm writer =
        WriterJvm.start("lakecdc.pipelines.dir", "org.lakecdc.pipelines.HistorySparkJob", dir);
    spark = shared.session();
    writer.await();
  }

  private static String table(String name) {
    return "delta.`" + dir.resolve("delta").resolve(name) + "`";
  }

  private static List<String> rows(String query) {
    List<String> out = new ArrayList<>();
    for (Row r : spark.sql(query).collectAsList()) {
      out.add(r.mkString(" | "));
    }
    out.sort(null);
    return out;
  }

  @Test
  void theHistoryAtEveryInstantIsTheLatestImageFromBronze() {
    String bronze = table("dbo_orders");
    String history = table("history/dbo_orders");
    spark
        .sql(
            "SELECT DISTINCT _commit_ts AS t FROM "
                + bronze
                + " UNION SELECT DISTINCT _commit_ts + INTERVAL 500 MILLISECONDS AS t FROM "
                + bronze)
        .localCheckpoint()
        .createOrReplaceTempView("instants");
    spark
        .sql(
            "WITH b AS (SELECT i.t, x.* FROM instants i JOIN "
                + bronze
                + " x ON x._commit_ts <= i.t),"
                + " s AS (SELECT t, max(_snapshot) AS snap FROM b GROUP BY t),"
                + " counted AS (SELECT b.* FROM b JOIN s ON b.t = s.t WHERE (b._snapshot IS NOT"
                + " NULL AND b._snapshot = s.snap AND b._operation = 0) OR (b._snapshot IS NULL"
                + " AND (s.snap IS NULL OR b._start_lsn > s.snap))),"
                + " ranked AS (SELECT *, ROW_NUMBER() OVER (PARTITION BY t, order_id ORDER BY"
                + " _start_lsn DESC, _command_id DESC NULLS LAST, _seqval DESC NULLS LAST,"
                + " _operation DESC) AS rn FROM counted)"
                + " SELECT t, order_id, status, amount, updated_at FROM ranked"
                + " WHERE rn = 1 AND _operation NOT IN (1, 3)")
        .localCheckpoint()
        .createOrReplaceTempView("expected");
    spark
        .sql(
            "SELECT i.t, h.order_id, h.status, h.amount, h.updated_at FROM instants i JOIN "
                + history
                + " h ON h._valid_from_ts <= i.t AND (h._valid_to_ts IS NULL OR i.t <"
                + " h._valid_to_ts)")
        .localCheckpoint()
        .createOrReplaceTempView("actual");

    List<String> missing = rows("SELECT * FROM expected EXCEPT ALL SELECT * FROM actual");
    List<String> extra = rows("SELECT * FROM actual EXCEPT ALL SELECT * FROM expected");
    assertTrue(
        missing.isEmpty() && extra.isEmpty(), "missing " + missing + ", unexpected " + extra);
    Row counts =
        spark
            .sql("SELECT count(*), count(DISTINCT t, order_id), count(DISTINCT t) FROM actual")
            .first();
    assertEquals(counts.getLong(0), counts.getLong(1), "one version per key and instant");
    assertEquals(List.of("130 | 130 | 20"), List.of(counts.mkString(" | ")));
    Row versions =
        spark
            .sql("SELECT count(*), count(_valid_to_lsn), count_if(_deleted) FROM " + history)
            .first();
    assertEquals("19 | 13 | 6", versions.mkString(" | "), "versions, closed, deleted");
  }
}
