package org.lakecdc.io.mssqlcdc;

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
import org.lakecdc.io.mssqlcdc.client.CdcClient;
import org.lakecdc.io.mssqlcdc.client.ChangeQuery;
import org.lakecdc.io.mssqlcdc.client.ChangeRow;
import org.lakecdc.io.mssqlcdc.client.CloseableIterator;
import org.lakecdc.io.mssqlcdc.fake.FakeCdcClientFactory;
import org.lakecdc.io.mssqlcdc.fake.FakeScenarios;
import org.lakecdc.io.mssqlcdc.fake.FakeSqlServer;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;

/**
 * A manual benchmark, not a test: builds a simulator database of {@code rows} inserted rows in
 * transactions of {@code rowsPerTransaction} (once, in {@code directory} when it holds none yet),
 * then reads it whole with {@code MssqlCdcIO.read()} on the DirectRunner, alternating {@code
 * maxCommitsPerBatch=100} and {@code 0} (unset: one batch), {@code repeats} times each, and prints
 * each read's wall-clock seconds and the medians. With {@code -Dbench.clientOnly=true} it makes
 * only the client calls a read makes per batch, in the reader's order, without Beam.
 *
 * <p>Run: {@code java -cp <test classpath> org.lakecdc.io.mssqlcdc.SimulatorReadBench <directory>
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
    if (!Files.exists(dir.resolve("server.json"))) {
      long t0 = System.nanoTime();
      FakeSqlServer db = FakeScenarios.orders(dir);
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
    }
    FakeCdcClientFactory db = FakeCdcClientFactory.of(dir);
    boolean clientOnly = Boolean.getBoolean("bench.clientOnly");
    Map<String, List<Double>> times = new HashMap<>();
    for (int r = 0; r < repeats; r++) {
      for (String size : sizes) {
        int n = Integer.parseInt(size.trim());
        if (clientOnly) {
          long t0 = System.nanoTime();
          long read = readWithClient(db, n);
          double s = (System.nanoTime() - t0) / 1e9;
          times.computeIfAbsent(size, k -> new ArrayList<>()).add(s);
          System.out.printf("client calls, maxCommitsPerBatch=%d: %d rows, %.2f s%n", n, read, s);
          continue;
        }
        Pipeline p = Pipeline.create(PipelineOptionsFactory.create());
        MssqlCdcIO.Read read =
            MssqlCdcIO.read()
                .withSourceConfiguration(
                    SourceConfiguration.create(FakeScenarios.CI).withClientFactory(db));
        p.apply(n > 0 ? read.withMaxCommitsPerBatch(n) : read)
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

  /**
   * The client calls a read makes per batch, in its order, with a new client per batch as the
   * reader opens them today: the rows read.
   */
  private static long readWithClient(FakeCdcClientFactory db, int maxCommitsPerBatch) {
    long rows = 0;
    Lsn last;
    Lsn upper;
    try (CdcClient client = db.open()) {
      upper = client.maxLsn().orElseThrow();
      last = client.minLsn(FakeScenarios.CI).decrement();
    }
    while (last.isBefore(upper)) {
      try (CdcClient client = db.open()) {
        client.maxLsn();
        Lsn end =
            (maxCommitsPerBatch > 0
                    ? client.nthCommitAfter(last, maxCommitsPerBatch)
                    : client.lastCommitAtOrBefore(upper))
                .orElseThrow()
                .lsn();
        if (end.isAfter(upper)) {
          end = client.lastCommitAtOrBefore(upper).orElseThrow().lsn();
        }
        client.captureInstances(FakeScenarios.CI);
        client.ddlHistory(FakeScenarios.CI, last, end);
        client.minLsn(FakeScenarios.CI);
        List<String> columns =
            client.capturedColumns(FakeScenarios.CI).stream()
                .map(org.lakecdc.io.mssqlcdc.schema.CapturedColumn::name)
                .toList();
        try (CloseableIterator<ChangeRow> it =
            client.readChanges(
                new ChangeQuery(FakeScenarios.CI, last.increment(), end, columns, false))) {
          while (it.hasNext()) {
            it.next();
            rows++;
          }
        }
        client.minLsn(FakeScenarios.CI);
        client.commit(end);
        client.currentTime();
        last = end;
      }
    }
    return rows;
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
