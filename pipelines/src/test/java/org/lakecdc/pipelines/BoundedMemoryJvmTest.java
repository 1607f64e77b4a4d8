package org.lakecdc.pipelines;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.io.mssqlcdc.fake.FakeSqlServer;
import org.lakecdc.transforms.bronze.BatchStats;
import org.lakecdc.transforms.delta.CommitSummary;

/**
 * Memory is bounded by a data file, not by a batch (docs/behaviour.md §7.1): one transaction, which
 * is never split across batches, of {@value #ROWS} inserts is read and written by the main job
 * ({@link CdcToDelta}) in a JVM of its own with a {@value #HEAP} heap — a fraction of what the
 * transaction's rows take as Java objects — and lands whole in one bronze commit. The full-size
 * proof (2,000,000 inserts at {@code -Xmx512m}) is in the benchmark harness and
 * docs/performance.md.
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class BoundedMemoryJvmTest {
  static final int ROWS = 250_000;
  static final String HEAP = "-Xmx96m";

  @TempDir Path dir;

  @Test
  void oneLargeTransactionIsWrittenInOneBronzeCommitWithASmallHeap()
      throws IOException, InterruptedException {
    JobFixture f = new JobFixture(dir);
    f.db.enableCdc(JobFixture.ORDERS);
    try (FakeSqlServer.Bulk bulk = f.db.bulk()) {
      FakeSqlServer.Transaction tx = f.db.transaction(JobFixture.at(0));
      for (int i = 0; i < ROWS; i++) {
        Map<String, Object> row = new HashMap<>();
        row.put("order_id", i);
        row.put("status", i % 3 == 0 ? "shipped" : "new");
        row.put("amount", BigDecimal.valueOf(i, 2));
        tx.insert(JobFixture.ORDERS, row);
      }
      tx.commit();
    }

    List<String> command =
        ForkedJvm.javaCommand(List.of(HEAP, "-XX:+UseSerialGC", "-XX:+ExitOnOutOfMemoryError"));
    command.addAll(
        List.of(
            CdcToDelta.class.getName(),
            "--fakePath=" + f.dir.resolve("source"),
            "--captureInstance=" + JobFixture.CI,
            "--target=" + f.bronze,
            "--factsTable=" + f.facts,
            "--controlTable=" + f.control,
            "--bootstrap=false"));
    Path log = f.dir.resolve("job.log");
    Process process =
        new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    if (!process.waitFor(300, TimeUnit.SECONDS)) {
      process.destroyForcibly().waitFor();
      throw new AssertionError(
          "the job did not exit within 300 s:\n" + Files.readString(log, StandardCharsets.UTF_8));
    }
    String output = Files.readString(log, StandardCharsets.UTF_8);
    assertEquals(0, process.exitValue(), output);

    List<CommitSummary> writes =
        f.tables.history(f.bronze).stream().filter(c -> c.operation().equals("WRITE")).toList();
    assertEquals(1, writes.size(), "one bronze commit: " + writes);
    BatchStats stats =
        BatchStats.fromJson(
            f.tables.domainMetadata(f.bronze, BatchStats.BRONZE_DOMAIN).orElseThrow());
    assertEquals(ROWS, stats.rows());
    assertEquals(ROWS, stats.inserts());
    assertEquals(List.of("0:" + ROWS + ":" + stats.maxLsn()), f.factBatches());
  }
}
