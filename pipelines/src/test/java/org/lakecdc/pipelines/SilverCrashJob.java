package org.lakecdc.pipelines;

import static org.lakecdc.pipelines.JobFixture.CI;
import static org.lakecdc.pipelines.JobFixture.ORDERS;
import static org.lakecdc.pipelines.JobFixture.at;
import static org.lakecdc.pipelines.JobFixture.order;

import java.io.IOException;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.lakecdc.pipelines.targets.JobConfig;
import org.lakecdc.transforms.bronze.CrashPlan;
import org.lakecdc.transforms.finalization.Granularity;
import org.lakecdc.transforms.silver.SilverApplier;
import org.lakecdc.transforms.silver.SilverSpec;
import org.lakecdc.transforms.silver.SilverTarget;

/**
 * Runs the main job with silver three times on a small source, crashing the second run mid-wave,
 * for delta-spark to check silver against bronze independently (the {@code delta-spark-check}
 * module runs this in its own JVM). Usage: {@code SilverCrashJob <directory>}; the directory must
 * not hold a database yet.
 *
 * <p>The source is {@link JobFixture}'s {@code dbo.orders} (key {@code order_id}); each commit is
 * at T0 + the minutes shown:
 *
 * <ol>
 *   <li>Before the bootstrap: 0: insert 1..6; 1: update 2, delete 3. The snapshot S holds 1, 2, 4,
 *       5, 6.
 *   <li>Run 1 ({@code bootstrap}, 2 commits a batch, {@value #WAVE_ROWS} bronze rows a silver
 *       wave), with these commits after S: 5: insert 7, 8, update 1; 6: delete 4, update key 5 to
 *       50; 7: re-insert 3, update 6 twice; 8: delete 7 and insert 7 again. Silver is rebuilt from
 *       S, then merged.
 *   <li>Then, before run 2: 10: update 1, 8; 11: delete 50, insert 4 again; 12: update key 6 to 60;
 *       13: update 7, delete 2; 14: update 3.
 *   <li>Run 2 (every commit in one batch) crashes in the silver apply after that batch, in its
 *       second wave (11 and 12: deletion vectors on the rebuilt file), after the wave's Parquet
 *       file and deletion vector file are written and before its commit ({@link CrashPlan#silver});
 *       its first wave (10) is committed.
 *   <li>Run 3, without the crash, converges.
 *   <li>A reference silver, {@code delta/silver/reference}, applied in one call from the final
 *       bronze by a fresh {@link SilverApplier}: what silver would hold had the crash never
 *       happened.
 * </ol>
 *
 * <p>Under the directory: {@code delta/dbo_orders} (bronze), {@code delta/facts}, {@code
 * delta/table_finalization}, {@code delta/silver/dbo_orders}, {@code delta/silver/reference}, and
 * {@value #RECORD}, tab-separated lines:
 *
 * <ul>
 *   <li>{@code run1 <bronze version> <silver version>} after run 1;
 *   <li>{@code crash <silver version>} right after the crash;
 *   <li>{@code before_crash <file>} each data or deletion vector file of silver (path relative to
 *       the table, {@code _delta_log} excluded) before run 2, and {@code after_crash <file>} each
 *       one right after the crash;
 *   <li>{@code final <bronze version> <silver version>} after run 3.
 * </ul>
 */
public final class SilverCrashJob {
  /** Bronze rows per silver wave. */
  public static final int WAVE_ROWS = 4;

  /** The record file under the directory. */
  public static final String RECORD = "silver-crash.tsv";

  private SilverCrashJob() {}

  /**
   * Builds the source, runs the job three times and writes {@value #RECORD}.
   *
   * @param args the output directory
   */
  public static void main(String[] args) {
    WriterMain.run("SilverCrashJob", args, SilverCrashJob::write);
  }

  private static void write(Path dir) throws IOException {
    JobFixture f = new JobFixture(dir);
    String silver = dir.resolve("delta/silver/dbo_orders").toString();
    f.db.enableCdc(ORDERS);
    FakeSqlServerSteps.beforeSnapshot(f);
    JobConfig config =
        f.config().toBuilder()
            .bootstrap(true)
            .maxCommitsPerBatch(2)
            .silverPath(silver)
            .silverWaveRows(WAVE_ROWS)
            .build();
    List<String> record = new ArrayList<>();

    System.out.println(
        "SilverCrashJob run 1: "
            + f.run(config, JobFixture.direct(), () -> FakeSqlServerSteps.afterSnapshot(f)));
    record.add("run1\t" + f.tables.version(f.bronze) + "\t" + f.tables.version(silver));

    FakeSqlServerSteps.betweenRuns(f);
    files(silver).forEach(p -> record.add("before_crash\t" + p));
    long batch = f.tables.latestTransactionVersion(f.bronze, CI).orElseThrow() + 1;
    JobConfig crashing =
        config.toBuilder().maxCommitsPerBatch(100).crash(CrashPlan.silver(batch)).build();
    try {
      f.run(crashing);
      throw new IllegalStateException("Run 2 did not crash in the silver apply of batch " + batch);
    } catch (RuntimeException e) {
      if (!causedBySilverCrash(e)) {
        throw e;
      }
      System.out.println("SilverCrashJob run 2 crashed as planned: " + e);
    }
    record.add("crash\t" + f.tables.version(silver));
    files(silver).forEach(p -> record.add("after_crash\t" + p));

    System.out.println(
        "SilverCrashJob run 3: " + f.run(config.toBuilder().maxCommitsPerBatch(100).build()));
    record.add("final\t" + f.tables.version(f.bronze) + "\t" + f.tables.version(silver));

    System.out.println(
        "SilverCrashJob reference: "
            + new SilverApplier(f.tables, Clock.systemUTC())
                .apply(
                    new SilverSpec(
                        f.bronze,
                        dir.resolve("delta/silver/reference").toString(),
                        f.control,
                        f.facts,
                        Set.of(CI),
                        List.of("order_id"),
                        Granularity.HOUR,
                        JobConfig.DEFAULT_SILVER_WAVE_ROWS)));
    Files.write(dir.resolve(RECORD), record, StandardCharsets.UTF_8);
  }

  private static boolean causedBySilverCrash(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof SilverTarget.SimulatedSilverCrash) {
        return true;
      }
    }
    return false;
  }

  /** The table's data and deletion vector files, relative to it, sorted. */
  private static List<String> files(String table) throws IOException {
    Path root = Path.of(table);
    try (Stream<Path> all = Files.walk(root)) {
      return all.filter(Files::isRegularFile)
          .map(p -> root.relativize(p).toString())
          .filter(p -> !p.startsWith("_delta_log"))
          .filter(p -> p.endsWith(".parquet") || p.endsWith(".bin"))
          .sorted()
          .toList();
    }
  }

  /** The source's history, in three parts. */
  static final class FakeSqlServerSteps {
    static void beforeSnapshot(JobFixture f) {
      var insert = f.db.transaction(at(0));
      for (int id = 1; id <= 6; id++) {
        insert.insert(ORDERS, order(id, "new", id + "0.00"));
      }
      insert.commit();
      f.db
          .transaction(at(1))
          .update(ORDERS, List.of(2), Map.of("status", "paid"))
          .delete(ORDERS, List.of(3))
          .commit();
    }

    static void afterSnapshot(JobFixture f) {
      f.db
          .transaction(at(5))
          .insert(ORDERS, order(7, "new", "70.00"))
          .insert(ORDERS, order(8, "new", "80.00"))
          .update(ORDERS, List.of(1), Map.of("status", "shipped"))
          .commit();
      f.db
          .transaction(at(6))
          .delete(ORDERS, List.of(4))
          .update(ORDERS, List.of(5), Map.of("order_id", 50))
          .commit();
      f.db
          .transaction(at(7))
          .insert(ORDERS, order(3, "again", "33.00"))
          .update(ORDERS, List.of(6), Map.of("amount", new BigDecimal("61.00")))
          .update(ORDERS, List.of(6), Map.of("amount", new BigDecimal("62.00")))
          .commit();
      f.db
          .transaction(at(8))
          .delete(ORDERS, List.of(7))
          .insert(ORDERS, order(7, "reinserted", "77.00"))
          .commit();
    }

    static void betweenRuns(JobFixture f) {
      f.db
          .transaction(at(10))
          .update(ORDERS, List.of(1), Map.of("amount", new BigDecimal("11.00")))
          .update(ORDERS, List.of(8), Map.of("status", "paid"))
          .commit();
      f.db
          .transaction(at(11))
          .delete(ORDERS, List.of(50))
          .insert(ORDERS, order(4, "back", "44.00"))
          .commit();
      f.db.transaction(at(12)).update(ORDERS, List.of(6), Map.of("order_id", 60)).commit();
      f.db
          .transaction(at(13))
          .update(ORDERS, List.of(7), Map.of("status", "paid"))
          .delete(ORDERS, List.of(2))
          .commit();
      f.db.transaction(at(14)).update(ORDERS, List.of(3), Map.of("status", "paid")).commit();
    }
  }
}
