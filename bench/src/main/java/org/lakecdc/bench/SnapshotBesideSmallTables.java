package org.lakecdc.bench;

import io.trino.tpch.Order;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.lakecdc.io.mssqlcdc.fake.FakeSqlServer;
import org.lakecdc.transforms.delta.DeltaTables;
import org.lakecdc.transforms.facts.FactsTable;

/**
 * A large table's chunked snapshot beside {@value #SMALL_TABLES} small new tables: one run of the
 * main job (DirectRunner) over a {@code --tablesFile} whose first line is the bench's {@code
 * dbo_orders} ({@code --rows} orders) with {@code --snapshot=chunked} ({@link
 * SnapshotMeasures#CHUNKS} chunks, as many a wave), followed by {@value #SMALL_TABLES} tables of
 * the orders shape ({@code dbo_t000}, …) of {@value #SMALL_ROWS} rows each, snapshotted whole. All
 * are new targets, so every table starts with its bootstrap snapshot.
 *
 * <p>From the facts table, each time from the first {@code snapshot_open} row the launcher wrote:
 * {@code small_tables_streaming_s}, until the last small table's {@code bootstrap} row (its
 * snapshot committed, its stream started); {@code large_snapshot_s}, until the large table's {@code
 * bootstrap} row (its last chunk committed); and their ratio {@code small_tables_vs_large_snapshot}
 * (below 1: the small tables streamed before the large snapshot ended). Every bronze table must
 * hold its rows and the facts table one {@code bootstrap} row per table, or the run fails before
 * any figure is printed.
 *
 * <p>The database is a copy of the bronze measurement's with the small tables added, built once in
 * the work directory ({@code beside-<rows>}).
 */
final class SnapshotBesideSmallTables {
  /** The small new tables. */
  static final int SMALL_TABLES = 20;

  /** Rows of each small table. */
  static final int SMALL_ROWS = 1_000;

  private final BenchRun context;

  /** Measures with the options, output and figures of {@code context}. */
  SnapshotBesideSmallTables(BenchRun context) {
    this.context = context;
  }

  /** Takes the figures on a copy of {@code db} (the bronze measurement's database). */
  void measure(Path db) throws InterruptedException {
    long rows = context.options.getRows();
    Path source = ensure(db, rows);
    Path run = context.newRunDir("snapshot-beside-small-tables");
    Path tablesFile = run.resolve("tables.options");
    List<String> lines = new ArrayList<>();
    lines.add(Orders.CAPTURE_INSTANCE + " --snapshot=chunked");
    for (int t = 0; t < SMALL_TABLES; t++) {
      lines.add(ManyTables.captureInstance(t));
    }
    try {
      Files.write(tablesFile, lines, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot write " + tablesFile, e);
    }
    Path probe = run.resolve("probe.properties");
    List<String> args =
        new ArrayList<>(
            List.of(
                probe.toString(),
                "--fakePath=" + source,
                "--tablesFile=" + tablesFile,
                "--targetTemplate=" + run.resolve("bronze") + "/{ci}",
                "--factsTable=" + run.resolve("facts"),
                "--controlTable=" + run.resolve("control"),
                "--bootstrap=true",
                "--snapshotChunkRows=" + SnapshotMeasures.chunkRows(rows),
                "--chunksPerWave=" + SnapshotMeasures.CHUNKS,
                "--maxCommitsPerBatch=0",
                "--logFile=" + run.resolve("job.log"),
                "--runner=DirectRunner"));
    ChildJvm jvm = context.runJob("DirectRunner", args, run);
    checkBronze(run.resolve("bronze").resolve(Orders.CAPTURE_INSTANCE), rows, jvm);
    for (int t = 0; t < SMALL_TABLES; t++) {
      checkBronze(ManyTables.bronze(run, t), SMALL_ROWS, jvm);
    }
    Instant opened = null;
    Instant large = null;
    Instant lastSmall = null;
    int small = 0;
    for (Map<String, Object> row : DeltaTables.create().scan(run.resolve("facts").toString())) {
      Object event = row.get(FactsTable.EVENT);
      Instant at = ((LocalDateTime) row.get(FactsTable.WRITTEN_AT)).toInstant(ZoneOffset.UTC);
      if ("snapshot_open".equals(event)) {
        opened = opened == null || at.isBefore(opened) ? at : opened;
      } else if (FactsTable.EVENT_BOOTSTRAP.equals(event)) {
        String target = String.valueOf(row.get(FactsTable.TARGET));
        if (target.endsWith(Orders.CAPTURE_INSTANCE)) {
          large = at;
        } else {
          small++;
          lastSmall = lastSmall == null || at.isAfter(lastSmall) ? at : lastSmall;
        }
      }
    }
    if (opened == null || large == null || lastSmall == null || small != SMALL_TABLES) {
      throw new IllegalStateException(
          "the facts table "
              + run.resolve("facts")
              + " records no snapshot_open row, no bootstrap row of "
              + Orders.CAPTURE_INSTANCE
              + ", or "
              + small
              + " bootstrap rows of small tables, not "
              + SMALL_TABLES);
    }
    double smallSeconds = Duration.between(opened, lastSmall).toMillis() / 1000.0;
    double largeSeconds = Duration.between(opened, large).toMillis() / 1000.0;
    context.out.printf(
        Locale.ROOT,
        "  %-24s %d small tables streaming after %.1f s, the large snapshot done after %.1f s%n",
        "beside-small-tables",
        SMALL_TABLES,
        smallSeconds,
        largeSeconds);
    context.figures.put("small_tables_streaming_s", smallSeconds);
    context.figures.put("large_snapshot_s", largeSeconds);
    context.figures.put("small_tables_vs_large_snapshot", smallSeconds / largeSeconds);
    context.row(
        "job, last of "
            + SMALL_TABLES
            + " small tables streaming beside a chunked snapshot, DirectRunner",
        smallSeconds,
        "s",
        smallSeconds / largeSeconds,
        "of the large snapshot's time");
  }

  private static void checkBronze(Path bronze, long rows, ChildJvm jvm) {
    long held = new BronzeTable(bronze).rows();
    if (held != rows) {
      throw new IllegalStateException(
          "the bronze table "
              + bronze
              + " holds "
              + held
              + " rows, not "
              + rows
              + "; see "
              + jvm.log());
    }
  }

  /**
   * The database: a copy of {@code db} with the small tables added after its rows, built when
   * absent (in a hidden sibling, renamed into place).
   */
  private Path ensure(Path db, long rows) {
    Path dir = context.work.resolve("beside-" + rows);
    if (Files.exists(dir.resolve("server.json"))) {
      return dir;
    }
    Path staging = context.work.resolve(".beside-" + rows + ".building");
    SilverBench.copyTable(db, staging);
    FakeSqlServer server = FakeSqlServer.open(staging).timeZone(ZoneOffset.UTC);
    Iterator<Order> orders = Orders.first((long) SMALL_TABLES * SMALL_ROWS);
    Instant at = Instant.now();
    for (int t = 0; t < SMALL_TABLES; t++) {
      server.createTable(ManyTables.table(t), Orders.COLUMNS, Orders.KEY);
      server.enableCdc(ManyTables.table(t));
      FakeSqlServer.Transaction tx = server.transaction(at);
      for (int i = 0; i < SMALL_ROWS; i++) {
        tx.insert(ManyTables.table(t), Orders.row(orders.next()));
      }
      tx.commit();
      at = at.plusSeconds(1);
    }
    try {
      Files.move(staging, dir, StandardCopyOption.ATOMIC_MOVE);
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot move the built database to " + dir, e);
    }
    return dir;
  }
}
