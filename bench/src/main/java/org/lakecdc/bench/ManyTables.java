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
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import org.lakecdc.io.mssqlcdc.fake.FakeSqlServer;

/**
 * The many-tables measurements: T source tables of the orders shape ({@code dbo.t000}, {@code
 * dbo.t001}, …, capture instances {@code dbo_t000}, …) streamed by one pipeline ({@code --tables}),
 * each into its own bronze table ({@code --targetTemplate}), sharing the facts and control tables.
 *
 * <ul>
 *   <li>Throughput: a database of {@value #TRANSACTIONS} transactions, each inserting one row into
 *       every table (so each table has {@value #TRANSACTIONS} one-row commits, and every commit is
 *       one of every table's), built once per T in the work directory ({@code manytables-<T>x40}),
 *       read with {@code --maxCommitsPerBatch=}{@value #COMMITS_PER_BATCH}: {@value
 *       #TRANSACTIONS}/{@value #COMMITS_PER_BATCH} batches per table. Every bronze table must then
 *       hold exactly {@value #TRANSACTIONS} rows.
 *   <li>Latency: a new database with one row in every table, followed by the job in continuous mode
 *       ({@code --pollIntervalSeconds=1}); once every table's row is in its bronze, {@value
 *       #LATENCY_ROUNDS} rounds, each after a pause of 0.2–1.2 s, commit one transaction inserting
 *       a row into every table, and the time from that commit to each table's row counting in its
 *       bronze is taken: T × {@value #LATENCY_ROUNDS} latencies.
 * </ul>
 */
final class ManyTables {
  /** Transactions of the throughput database, each one row into every table. */
  static final int TRANSACTIONS = 40;

  /** {@code --maxCommitsPerBatch} of the throughput run. */
  static final int COMMITS_PER_BATCH = 4;

  /** Rounds of the latency measurement: each commits one transaction, a row into every table. */
  static final int LATENCY_ROUNDS = 5;

  private ManyTables() {}

  /** {@code dbo.t007} for table 7. */
  static String table(int t) {
    return String.format(Locale.ROOT, "dbo.t%03d", t);
  }

  /** {@code dbo_t007} for table 7: the simulator's default capture instance name. */
  static String captureInstance(int t) {
    return table(t).replace('.', '_');
  }

  /** The {@code --tables} value for T tables. */
  static String tablesOption(int tables) {
    List<String> names = new ArrayList<>();
    for (int t = 0; t < tables; t++) {
      names.add(captureInstance(t));
    }
    return "--tables=" + String.join(",", names);
  }

  /**
   * Batches the throughput run commits: {@code tables × ceil(TRANSACTIONS / COMMITS_PER_BATCH)}.
   */
  static long batches(int tables) {
    return (long) tables * ((TRANSACTIONS + COMMITS_PER_BATCH - 1) / COMMITS_PER_BATCH);
  }

  /**
   * The throughput database of {@code tables} tables, built when absent (in a hidden sibling,
   * renamed into place).
   *
   * @throws UncheckedIOException when it cannot be written
   */
  static Path ensure(Path workDir, int tables) {
    Path dir = workDir.resolve("manytables-" + tables + "x" + TRANSACTIONS);
    if (Files.exists(dir.resolve("server.json"))) {
      return dir;
    }
    Path staging = workDir.resolve(".manytables-" + tables + "x" + TRANSACTIONS + ".building");
    SourceDatabase.delete(staging);
    FakeSqlServer db = create(staging, tables);
    Iterator<Order> orders = Orders.first((long) TRANSACTIONS * tables);
    Instant at = SourceDatabase.START;
    try (FakeSqlServer.Bulk bulk = db.bulk()) {
      for (int k = 0; k < TRANSACTIONS; k++) {
        FakeSqlServer.Transaction tx = db.transaction(at);
        for (int t = 0; t < tables; t++) {
          tx.insert(table(t), Orders.row(orders.next()));
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

  /** A new database with {@code tables} empty tables of the orders shape, CDC enabled on each. */
  static FakeSqlServer create(Path dir, int tables) {
    SourceDatabase.delete(dir);
    FakeSqlServer db = FakeSqlServer.open(dir).timeZone(ZoneOffset.UTC);
    for (int t = 0; t < tables; t++) {
      db.createTable(table(t), Orders.COLUMNS, Orders.KEY);
      db.enableCdc(table(t));
    }
    return db;
  }

  /**
   * The job's command line for {@code tables} tables of {@code db}, its tables under {@code run}.
   */
  static List<String> jobArgs(Path db, Path run, int tables, int maxCommitsPerBatch) {
    return new ArrayList<>(
        List.of(
            "--fakePath=" + db,
            tablesOption(tables),
            "--targetTemplate=" + run.resolve("bronze") + "/{ci}",
            "--factsTable=" + run.resolve("facts"),
            "--controlTable=" + run.resolve("control"),
            "--bootstrap=false",
            "--maxCommitsPerBatch=" + maxCommitsPerBatch,
            "--logFile=" + run.resolve("job.log"),
            "--runner=DirectRunner"));
  }

  /** Table t's bronze under a run directory ({@code --targetTemplate} lower-cases the name). */
  static Path bronze(Path run, int t) {
    return run.resolve("bronze").resolve(captureInstance(t).toLowerCase(Locale.ROOT));
  }
}
