package org.lakecdc.pipelines;

import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.apache.beam.runners.direct.DirectOptions;
import org.lakecdc.pipelines.cdc.CdcToDeltaJob;
import org.lakecdc.pipelines.cdc.JobSummary;
import org.lakecdc.pipelines.cli.CommandLine;
import org.lakecdc.pipelines.targets.JobConfig;
import org.lakecdc.transforms.facts.FactsTable;

/**
 * The fixed cost of a batch of the main job on the DirectRunner (docs/performance.md "What each
 * figure measures"): a simulator database of {@code commits} commits of one inserted row each (one
 * minute apart, {@link JobFixture}'s {@code dbo.orders}), read once with {@code
 * maxCommitsPerBatch=1} ({@code commits} batches) and once with {@code maxCommitsPerBatch=0} (one
 * batch), each into new Delta tables. The fixed cost per batch is {@code (t(commits batches) - t(1
 * batch)) / (commits - 1)}, so the rows' own cost and the run's fixed cost (tables, pipeline start)
 * cancel out. Each pair is run {@code repeats} times; the median is printed last as {@code FIGURE
 * batch_overhead_ms <ms>}.
 *
 * <p>Usage: {@code BatchOverheadBench <directory> [commits=300] [repeats=3] [checks=off]} with the
 * pipelines test classpath ({@code target/test-classpath.txt} plus {@code target/classes} and
 * {@code target/test-classes}). The directory must not exist. {@code checks} is {@code off} for the
 * DirectRunner options the job's command line gives ({@link CommandLine#parse}: enforcement checks
 * off) or {@code on} for Beam's defaults (both checks on). Not a test: times are measured, never
 * asserted.
 */
final class BatchOverheadBench {
  private BatchOverheadBench() {}

  public static void main(String[] args) throws IOException {
    if (args.length < 1 || args.length > 4) {
      System.err.println("usage: BatchOverheadBench <directory> [commits] [repeats] [checks]");
      System.exit(2);
    }
    Path dir = Path.of(args[0]);
    int commits = args.length > 1 ? Integer.parseInt(args[1]) : 300;
    int repeats = args.length > 2 ? Integer.parseInt(args[2]) : 3;
    boolean checks = args.length > 3 && args[3].equals("on");
    if (Files.exists(dir)) {
      System.err.println(dir + " exists; give a new directory");
      System.exit(2);
    }
    List<Double> perBatch = new ArrayList<>();
    for (int r = 0; r < repeats; r++) {
      double many = runOnce(dir.resolve("many-" + r), commits, 1, checks);
      double one = runOnce(dir.resolve("one-" + r), commits, 0, checks);
      double ms = (many - one) * 1000 / (commits - 1);
      perBatch.add(ms);
      System.out.printf(
          "run %d: %d batches %.1f s, 1 batch %.1f s: %.1f ms per batch%n",
          r + 1, commits, many, one, ms);
    }
    Collections.sort(perBatch);
    System.out.printf("FIGURE batch_overhead_ms %.1f%n", perBatch.get(perBatch.size() / 2));
    System.exit(0);
  }

  /** Seconds of one run of the job over a new database of {@code commits} one-row commits. */
  private static double runOnce(Path dir, int commits, int maxCommitsPerBatch, boolean checks) {
    JobFixture fixture = new JobFixture(dir);
    fixture.db.enableCdc(JobFixture.ORDERS);
    try (var bulk = fixture.db.bulk()) {
      for (int t = 0; t < commits; t++) {
        fixture.insertCommit(t, 1);
      }
    }
    JobConfig config = fixture.config().toBuilder().maxCommitsPerBatch(maxCommitsPerBatch).build();
    long began = System.nanoTime();
    JobSummary summary;
    try (PrintStream quiet = new PrintStream(OutputStream.nullOutputStream())) {
      DirectOptions options = JobFixture.direct().as(DirectOptions.class);
      options.setEnforceImmutability(checks);
      options.setEnforceEncodability(checks);
      summary = CdcToDeltaJob.run(config, options, quiet);
    }
    double seconds = (System.nanoTime() - began) / 1e9;
    long expectedBatches = maxCommitsPerBatch == 0 ? 1 : commits;
    long factsBatches =
        fixture.tables.scan(fixture.facts).stream()
            .filter(r -> r.get(FactsTable.EVENT) == null)
            .count();
    if (summary.batches() != expectedBatches
        || summary.rows() != commits
        || factsBatches != expectedBatches) {
      throw new IllegalStateException(
          "expected "
              + expectedBatches
              + " batches of "
              + commits
              + " rows, got "
              + summary.batches()
              + " batches ("
              + factsBatches
              + " facts rows) of "
              + summary.rows()
              + " rows");
    }
    return seconds;
  }
}
