package org.lakecdc.io.mssqlcdc.fake;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.CI;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.ORDERS;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.minutes;
import static org.lakecdc.io.mssqlcdc.fake.FakeScenarios.order;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lakecdc.io.mssqlcdc.client.CdcClient;
import org.lakecdc.io.mssqlcdc.client.ChangeRow;
import org.lakecdc.io.mssqlcdc.lsn.Lsn;

/**
 * A reader in another thread never sees part of a transaction: the writer writes change tables
 * before {@code cdc.lsn_time_mapping}, and the reader keeps only rows with a mapping row.
 */
class ConcurrencyTest {
  private static final int TRANSACTIONS = 150;
  private static final int ROWS_PER_TRANSACTION = 3;

  @TempDir Path dir;

  @Test
  void aConcurrentReaderSeesWholeTransactionsOnly() throws Exception {
    FakeSqlServer db = FakeScenarios.orders(dir);
    ExecutorService writer = Executors.newSingleThreadExecutor();
    try {
      Future<?> writing =
          writer.submit(
              () -> {
                for (int t = 0; t < TRANSACTIONS; t++) {
                  FakeSqlServer.Transaction tx = db.transaction(minutes(t));
                  for (int r = 0; r < ROWS_PER_TRANSACTION; r++) {
                    tx.insert(ORDERS, order(t * ROWS_PER_TRANSACTION + r, "new", "1.00"));
                  }
                  tx.commit();
                }
              });
      int reads = 0;
      try (CdcClient client = db.openClient()) {
        boolean done;
        do {
          done = writing.isDone();
          Optional<Lsn> max = client.maxLsn();
          if (max.isPresent()) {
            List<ChangeRow> rows =
                FakeScenarios.readAll(client, CI, List.of("order_id"), Lsn.ZERO, max.get());
            Map<Lsn, Integer> perCommit = new TreeMap<>();
            for (ChangeRow row : rows) {
              assertTrue(!row.startLsn().isAfter(max.get()));
              perCommit.merge(row.startLsn(), 1, Integer::sum);
            }
            for (Map.Entry<Lsn, Integer> e : perCommit.entrySet()) {
              assertEquals(ROWS_PER_TRANSACTION, e.getValue(), "rows of commit " + e.getKey());
            }
            reads++;
          }
        } while (!done);
        writing.get(60, TimeUnit.SECONDS);
        assertEquals(
            TRANSACTIONS * ROWS_PER_TRANSACTION,
            FakeScenarios.readAll(client, CI, List.of("order_id"), Lsn.ZERO, Lsn.MAX).size());
      }
      assertTrue(reads > 0);
    } finally {
      writer.shutdownNow();
    }
  }
}
