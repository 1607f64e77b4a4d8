package org.lakecdc.pipelines;

import static org.lakecdc.pipelines.JobFixture.CI;
import static org.lakecdc.pipelines.JobFixture.ORDERS;

import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import java.util.Set;
import org.lakecdc.pipelines.targets.JobConfig;
import org.lakecdc.transforms.history.HistoryApplier;
import org.lakecdc.transforms.history.HistorySpec;

/**
 * Builds a history table for delta-spark to check against bronze at every instant (the {@code
 * delta-spark-check} module runs this in its own JVM). Usage: {@code HistorySparkJob <directory>};
 * the directory must not hold a database yet.
 *
 * <p>The source and runs are {@link SilverCrashJob}'s without silver or crash: the bootstrap
 * snapshot S (a run of its own), then inserts, updates, deletes, re-inserts, key moves and a key
 * updated twice in one transaction, streamed 2 commits a batch; the history ({@code
 * delta/history/dbo_orders}) applied in waves of {@value #WAVE_ROWS} bronze rows; then more
 * changes, streamed in one batch, and the history applied again (its waves close versions the table
 * holds with deletion vectors).
 */
public final class HistorySparkJob {
  /** Bronze rows per history wave. */
  public static final int WAVE_ROWS = 3;

  private HistorySparkJob() {}

  /**
   * Builds the source, runs the job three times and applies the history after each run.
   *
   * @param args the output directory
   */
  public static void main(String[] args) {
    WriterMain.run("HistorySparkJob", args, HistorySparkJob::write);
  }

  private static void write(Path dir) {
    JobFixture f = new JobFixture(dir);
    String history = dir.resolve("delta/history/dbo_orders").toString();
    f.db.enableCdc(ORDERS);
    SilverCrashJob.FakeSqlServerSteps.beforeSnapshot(f);
    JobConfig config = f.config().toBuilder().bootstrap(true).maxCommitsPerBatch(2).build();
    // The snapshot in a run of its own, so that the changes after S are not also in it (a commit
    // made while a snapshot is being read can be in both); they are streamed by the next run.
    System.out.println("HistorySparkJob snapshot: " + f.run(config));
    SilverCrashJob.FakeSqlServerSteps.afterSnapshot(f);
    System.out.println("HistorySparkJob run 1: " + f.run(config));
    HistorySpec spec =
        new HistorySpec(
            f.bronze,
            history,
            f.control,
            f.facts,
            Set.of(CI),
            List.of("order_id"),
            List.of(),
            config.granularity(),
            WAVE_ROWS);
    System.out.println(
        "HistorySparkJob history 1: "
            + new HistoryApplier(f.tables, Clock.systemUTC()).apply(spec));
    SilverCrashJob.FakeSqlServerSteps.betweenRuns(f);
    System.out.println(
        "HistorySparkJob run 2: " + f.run(config.toBuilder().maxCommitsPerBatch(100).build()));
    System.out.println(
        "HistorySparkJob history 2: "
            + new HistoryApplier(f.tables, Clock.systemUTC()).apply(spec));
  }
}
