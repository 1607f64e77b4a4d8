package org.lakecdc.mssqlcdc.io;

import java.io.IOException;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.transforms.Count;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.ParDo;
import org.lakecdc.mssqlcdc.fake.FakeScenarios;
import org.lakecdc.mssqlcdc.fake.FakeSqlServer;

/**
 * A manual benchmark, not a test: builds a simulator database of {@code rows} inserted rows in
 * transactions of {@code rowsPerTransaction} (once, in {@code directory} when it holds none yet),
 * then reads it whole with {@code MssqlCdcIO.read()} on the DirectRunner, alternating {@code
 * maxCommitsPerBatch=100} and {@code 0} (one batch), {@code repeats} times each, and prints each
 * read's wall-clock seconds and the medians.
 *
 * <p>Run: {@code java -cp <test classpath> org.lakecdc.mssqlcdc.io.SimulatorReadBench <directory>
 * <rows> <rowsPerTransaction> <repeats> [batchSizes, comma-separated]}.
 */
public final class SimulatorReadBench {
  private SimulatorReadBench() {}

  /** Entry point; arguments as the class comment says. */
  public static void main(String[] args) throws IOException {
    Path dir = Path.of(args[0]);
    int rows = Integer.parseInt(args[1]);
    int perTx = Integer.parseInt(args[2]);
    int repeats = Integer.parseInt(args[3]);
    String[] sizes = (args.length > 4 ? args[4] : "100,0").split(",");
    FakeSqlServer db;
    if (!Files.exists(dir.resolve("server.json"))) {
      long t0 = System.nanoTime();
      db = FakeScenarios.orders(dir);
      Instant at = Instant.parse("2026-01-01T00:00:00Z");
      try (FakeSqlServer.Bulk bulk = db.bulk()) {
        for (int id = 0; id < rows; ) {
          FakeSqlServer.Transaction tx = db.transaction(at);
          for (int i = 0; i < perTx && id < rows; i++, id++) {
            Map<String, Object> row = new HashMap<>();
            row.put("order_id", id);
            row.put("status", "new");
            row.put("amount", new BigDecimal(id % 1000 + ".25"));
            tx.insert(FakeScenarios.ORDERS, row);
          }
          tx.commit();
          at = at.plusSeconds(1);
        }
      }
      System.out.printf("built %d rows in %.1f s%n", rows, (System.nanoTime() - t0) / 1e9);
    } else {
      db = FakeSqlServer.open(dir);
    }
    Map<String, List<Double>> times = new HashMap<>();
    for (int r = 0; r < repeats; r++) {
      for (String size : sizes) {
        int n = Integer.parseInt(size.trim());
        Pipeline p = Pipeline.create(PipelineOptionsFactory.create());
        p.apply(
                MssqlCdcIO.read()
                    .withCaptureInstance(FakeScenarios.CI)
                    .withClientFactory(db.clientFactory())
                    .withMaxCommitsPerBatch(n))
            .apply(Count.globally())
            .apply(ParDo.of(new Print(n)));
        long t0 = System.nanoTime();
        p.run().waitUntilFinish();
        double s = (System.nanoTime() - t0) / 1e9;
        times.computeIfAbsent(size, k -> new ArrayList<>()).add(s);
        System.out.printf("maxCommitsPerBatch=%d: %.2f s%n", n, s);
      }
    }
    for (String size : sizes) {
      List<Double> t = new ArrayList<>(times.get(size));
      t.sort(null);
      System.out.printf("MEDIAN maxCommitsPerBatch=%s %.2f s%n", size, t.get(t.size() / 2));
    }
  }

  private static final class Print extends DoFn<Long, Void> {
    private final int n;

    Print(int n) {
      this.n = n;
    }

    @ProcessElement
    public void process(@Element Long count) {
      System.out.printf("maxCommitsPerBatch=%d read %d rows%n", n, count);
    }
  }
}
