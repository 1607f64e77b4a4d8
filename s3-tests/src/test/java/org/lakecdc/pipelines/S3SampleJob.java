package org.lakecdc.pipelines;

import static org.lakecdc.pipelines.JobFixture.ORDERS;
import static org.lakecdc.pipelines.JobFixture.at;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
import org.lakecdc.transforms.delta.DeltaTables;

/**
 * The writer of delta-spark-check's S3 test, in a JVM of its own on this module's test class path:
 * {@code S3SampleJob <dir> <table root> k=v...} builds {@link JobFixture#history}'s source in
 * {@code dir}, runs the main job with {@code --silver} on the tables under the {@code s3a://} root
 * with the S3A settings given, then updates order 0 to {@code paid} and deletes order 1 and runs it
 * again (a silver wave with a deletion vector). Silver is then: orders {@code t*100+i} (t 0..7, i
 * 0..2) and 900, less 1 and 200; 0 and 100 {@code paid}, the rest {@code new}; bronze holds 31
 * change rows. Exits with the job's code.
 */
final class S3SampleJob {
  private S3SampleJob() {}

  public static void main(String[] args) {
    Path dir = Path.of(args[0]);
    String root = args[1];
    Map<String, String> conf = new LinkedHashMap<>();
    List<String> entries = new ArrayList<>();
    for (int i = 2; i < args.length; i++) {
      int eq = args[i].indexOf('=');
      conf.put(args[i].substring(0, eq), args[i].substring(eq + 1));
      entries.add(args[i]);
    }
    JobFixture f = JobFixture.history(dir, root, DeltaTables.create(conf));
    List<String> job =
        new ArrayList<>(
            List.of(
                "--fakePath=" + dir.resolve("source"),
                "--captureInstance=" + JobFixture.CI,
                "--target=" + f.bronze,
                "--factsTable=" + f.facts,
                "--controlTable=" + f.control,
                "--silver=" + root + "/silver/dbo_orders",
                "--bootstrap=false",
                "--logFile=" + dir.resolve("run.log"),
                "--hadoopConf=" + String.join(",", entries)));
    int code = CdcToDelta.run(job.toArray(String[]::new), System.err, UnaryOperator.identity());
    if (code == 0) {
      f.db.transaction(at(130)).update(ORDERS, List.of(0), Map.of("status", "paid")).commit();
      f.db.transaction(at(131)).delete(ORDERS, List.of(1)).commit();
      code = CdcToDelta.run(job.toArray(String[]::new), System.err, UnaryOperator.identity());
    }
    System.exit(code);
  }
}
