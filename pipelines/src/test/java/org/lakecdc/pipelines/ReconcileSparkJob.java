package org.lakecdc.pipelines;

import static org.lakecdc.pipelines.JobFixture.CI;
import static org.lakecdc.pipelines.JobFixture.ORDERS;
import static org.lakecdc.pipelines.JobFixture.at;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
import org.lakecdc.pipelines.cli.JobExit;

/**
 * The writer side of delta-spark-check's {@code ReconcileSparkTest} (its own JVM: Delta Kernel
 * needs Parquet 1.16, Spark 3.5 ships 1.13). Usage: {@code ReconcileSparkJob <directory>
 * setup|reconcile}.
 *
 * <ul>
 *   <li>{@code setup}: {@link JobFixture}'s {@code dbo.orders} (order_id, status, amount,
 *       updated_at) with orders 0..49 (T0) and 100..149 (T0 + 1 min) inserted, then order 10 paid
 *       and order 120 deleted (T0 + 2 min); the main job streams them and applies silver ({@code
 *       --silver}); a first reconcile must match.
 *   <li>{@code reconcile}: the reconcile again (after delta-spark changed silver).
 * </ul>
 *
 * Each reconcile runs {@code --bucketRows=10 --sample=1 --json} and appends {@code <step> <exit
 * code> <JSON>} (tab-separated) to {@value #RECORD} under the directory. Tables: {@code
 * delta/dbo_orders} (bronze), {@code delta/facts}, {@code delta/table_finalization}, {@code
 * delta/silver/dbo_orders}, {@code delta/reconcile} (the report).
 */
public final class ReconcileSparkJob {
  /** The record file's name. */
  public static final String RECORD = "reconcile.tsv";

  private ReconcileSparkJob() {}

  public static void main(String[] args) throws IOException {
    Path dir = Path.of(args[0]);
    if (args[1].equals("setup")) {
      JobFixture f = new JobFixture(dir);
      f.db.enableCdc(ORDERS);
      f.insertCommit(0, 50);
      f.insertCommit(1, 50);
      f.db
          .transaction(at(2))
          .update(ORDERS, List.of(10), Map.of("status", "paid"))
          .delete(ORDERS, List.of(120))
          .commit();
      PrintStream out = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
      int code =
          CdcToDelta.run(
              new String[] {
                "--fakePath=" + dir.resolve("source"),
                "--captureInstance=" + CI,
                "--target=" + f.bronze,
                "--factsTable=" + f.facts,
                "--controlTable=" + f.control,
                "--silver=" + dir.resolve("delta/silver/dbo_orders"),
                "--bootstrap=false",
                "--logFile=" + dir.resolve("run.log")
              },
              out,
              UnaryOperator.identity());
      if (code != 0) {
        throw new IllegalStateException("The main job ended with exit code " + code);
      }
    }
    ByteArrayOutputStream json = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int code =
        Reconcile.run(
            new String[] {
              "--fakePath=" + dir.resolve("source"),
              "--captureInstance=" + CI,
              "--bronze=" + dir.resolve("delta/dbo_orders"),
              "--silver=" + dir.resolve("delta/silver/dbo_orders"),
              "--report=" + dir.resolve("delta/reconcile"),
              "--factsTable=" + dir.resolve("delta/facts"),
              "--bucketRows=10",
              "--sample=1",
              "--json",
              "--logFile=" + dir.resolve("run.log")
            },
            new PrintStream(json, true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8));
    if (code != JobExit.OK && code != JobExit.MISMATCH) {
      throw new IllegalStateException(
          "Reconcile ended with exit code " + code + ": " + err.toString(StandardCharsets.UTF_8));
    }
    Files.writeString(
        dir.resolve(RECORD),
        args[1] + "\t" + code + "\t" + json.toString(StandardCharsets.UTF_8).strip() + "\n",
        StandardCharsets.UTF_8,
        StandardOpenOption.CREATE,
        StandardOpenOption.APPEND);
  }
}
