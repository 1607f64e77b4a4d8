package org.lakecdc.bench;

import io.trino.tpch.Order;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Comparator;
import java.util.Iterator;
import java.util.stream.Stream;
import org.lakecdc.io.mssqlcdc.fake.FakeSqlServer;

/**
 * The simulator databases the benchmark reads: {@code dbo.orders} with CDC enabled while it is
 * empty, then rows inserted in transactions, so that every row reaches the job as a change row (the
 * job runs with {@code --bootstrap=false}). A database is built once per shape in the work
 * directory ({@code db-<rows>-<rowsPerTransaction>}) and reused by later runs; it is built in a
 * hidden sibling and renamed into place, so an interrupted build leaves nothing that looks done.
 * Commit times are one second apart from {@link #START} (UTC, the server's zone).
 */
final class SourceDatabase {
  /** Commit time of the first transaction of a built database. */
  static final Instant START = Instant.parse("2026-01-01T00:00:00Z");

  private SourceDatabase() {}

  /**
   * The database of {@code rows} orders inserted {@code rowsPerTransaction} per transaction (0: all
   * in one transaction), built when absent.
   *
   * @param workDir the benchmark's work directory
   * @param rows orders, at least 1
   * @param rowsPerTransaction inserts per transaction, or 0 for one transaction
   * @return the simulator's directory (a {@code --fakePath})
   * @throws UncheckedIOException when it cannot be written
   */
  static Path ensure(Path workDir, long rows, int rowsPerTransaction) {
    Path dir = workDir.resolve("db-" + rows + "-" + rowsPerTransaction);
    if (Files.exists(dir.resolve("server.json"))) {
      return dir;
    }
    Path staging = workDir.resolve(".db-" + rows + "-" + rowsPerTransaction + ".building");
    delete(staging);
    FakeSqlServer db = FakeSqlServer.open(staging).timeZone(ZoneOffset.UTC);
    db.createTable(Orders.TABLE, Orders.COLUMNS, Orders.KEY);
    db.enableCdc(Orders.TABLE);
    long perTransaction = rowsPerTransaction == 0 ? rows : rowsPerTransaction;
    Iterator<Order> orders = Orders.first(rows);
    Instant at = START;
    try (FakeSqlServer.Bulk bulk = db.bulk()) {
      while (orders.hasNext()) {
        FakeSqlServer.Transaction tx = db.transaction(at);
        for (long i = 0; i < perTransaction && orders.hasNext(); i++) {
          tx.insert(Orders.TABLE, Orders.row(orders.next()));
        }
        tx.commit();
        at = at.plus(Duration.ofSeconds(1));
      }
    }
    try {
      Files.move(staging, dir, StandardCopyOption.ATOMIC_MOVE);
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot move the built database to " + dir, e);
    }
    return dir;
  }

  /**
   * A database for continuous mode, new each time: {@code dbo.orders} with CDC enabled and no row
   * yet; the latency measurement commits its transactions through the returned writer.
   *
   * @param dir a directory that does not exist yet or is deleted first
   * @return the open simulator, for the transactions the latency measurement commits
   */
  static FakeSqlServer live(Path dir) {
    delete(dir);
    FakeSqlServer db = FakeSqlServer.open(dir).timeZone(ZoneOffset.UTC);
    db.createTable(Orders.TABLE, Orders.COLUMNS, Orders.KEY);
    db.enableCdc(Orders.TABLE);
    return db;
  }

  /** Deletes a directory tree when it exists. */
  static void delete(Path dir) {
    if (!Files.exists(dir)) {
      return;
    }
    try (Stream<Path> walk = Files.walk(dir)) {
      for (Path p : (Iterable<Path>) walk.sorted(Comparator.reverseOrder())::iterator) {
        Files.delete(p);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot delete " + dir, e);
    }
  }
}
